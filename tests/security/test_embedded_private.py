"""The embedded default is private to its user: another account on the same machine, or a web
page the user opens, cannot reach the data.

* Postgres demands the generated password (SCRAM), kept in a 0600 file; a data directory from a
  version that trusted loopback is switched to passwords on start, keeping its data.
* NATS demands the generated token and listens on loopback only.
* Every metrics endpoint listens on loopback only.
* Without API keys the gateway answers only requests addressed to a loopback name.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import psycopg
import pytest
from nats.errors import Error as NatsError

from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack
from exocortex.core.secrets import read_or_create_secret, redact_url
from exocortex.gateway.host_guard import host_name
from exocortex.testing.gateway import serve_gateway


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A directory outside pytest's per-user tree: as root the server runs as its own account,
    which needs the search bit on every ancestor, and a concurrent pytest session resets that
    tree's root to 0700."""
    with tempfile.TemporaryDirectory(prefix="exo-private-") as path:
        yield Path(path)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _without_password(pg: EmbeddedPostgres) -> str:
    return f"postgresql://postgres@{pg.host}:{pg.port}/postgres"


def _refuses(dsn: str) -> bool:
    try:
        psycopg.connect(dsn, connect_timeout=5).close()
    except psycopg.OperationalError:
        return True
    return False


def _make_trusting(pg: EmbeddedPostgres) -> None:
    """Put a running server back into the state an earlier version left it in: no password,
    `trust` for every local connection, no secret file."""
    with psycopg.connect(pg.admin_dsn, autocommit=True) as conn:
        conn.execute("ALTER ROLE postgres PASSWORD NULL")
        hba = pg.data_dir / "pg_hba.conf"
        hba.write_text(hba.read_text().replace("scram-sha-256", "trust"))
        conn.execute("SELECT pg_reload_conf()")
    pg.secret_file.unlink()
    assert not _refuses(_without_password(pg)), "the trusting state was not reproduced"


def _store(pg: EmbeddedPostgres, value: str) -> None:
    with psycopg.connect(pg.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS kept (v text)")
        conn.execute("INSERT INTO kept VALUES (%s)", (value,))


def _stored(pg: EmbeddedPostgres) -> list[str]:
    with psycopg.connect(pg.dsn) as conn:
        return [row[0] for row in conn.execute("SELECT v FROM kept ORDER BY v").fetchall()]


def test_fresh_embedded_postgres_demands_its_generated_password(tmp_path: Path) -> None:
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        assert pg.secret_file == tmp_path / "postgres.secret"
        assert _mode(pg.secret_file) == 0o600
        assert pg.secret_file.read_text().strip() == pg.password
        assert _refuses(_without_password(pg)), "a connection without a password got in"
        wrong = f"postgresql://postgres:not-the-secret@{pg.host}:{pg.port}/postgres"
        assert _refuses(wrong), "a wrong password got in"
        with psycopg.connect(pg.dsn) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        hba = (pg.data_dir / "pg_hba.conf").read_text()
        assert " trust" not in hba


def test_postgres_password_survives_a_restart(tmp_path: Path) -> None:
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        first = pg.password
        _store(pg, "before")
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        assert pg.password == first
        assert _stored(pg) == ["before"]


def test_trusting_data_dir_is_switched_to_passwords_on_start_and_keeps_its_data(
    tmp_path: Path,
) -> None:
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        _store(pg, "old data")
        _make_trusting(pg)
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        assert _mode(pg.secret_file) == 0o600
        assert _refuses(_without_password(pg)), "the old trust rules still let anyone in"
        assert _stored(pg) == ["old data"]


def test_running_trusting_server_is_switched_to_passwords_when_adopted(tmp_path: Path) -> None:
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        _store(pg, "old data")
        _make_trusting(pg)
        with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as adopted:
            assert adopted.port == pg.port
            assert _refuses(_without_password(adopted)), "the running server still trusts"
            assert _stored(adopted) == ["old data"]


def test_a_lost_postgres_secret_is_replaced_on_start(tmp_path: Path) -> None:
    """Whoever can read the data directory owns the data anyway; the stack must not be locked
    out of its own database because the secret file was deleted."""
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        _store(pg, "kept")
        old = pg.password
    pg.secret_file.unlink()
    with EmbeddedPostgres(tmp_path / "postgres", fsync=False) as pg:
        assert pg.password != old
        assert _stored(pg) == ["kept"]


def test_secret_files_are_created_private_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        secret = read_or_create_secret(tmp_path / "new.secret")
    finally:
        os.umask(previous)
    assert _mode(tmp_path / "new.secret") == 0o600
    assert read_or_create_secret(tmp_path / "new.secret") == secret
    loose = tmp_path / "restored.secret"
    loose.write_text("from-a-backup\n")
    loose.chmod(0o644)
    assert read_or_create_secret(loose) == "from-a-backup"
    assert _mode(loose) == 0o600


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://postgres:s3cret@127.0.0.1:5433/db",
            "postgresql://postgres:***@127.0.0.1:5433/db",
        ),
        ("postgresql://postgres@127.0.0.1:5433/db", "postgresql://postgres@127.0.0.1:5433/db"),
        ("nats://tok3n@127.0.0.1:4223", "nats://***@127.0.0.1:4223"),
        ("nats://exo:pw@nats:4222", "nats://exo:***@nats:4222"),
        ("nats://127.0.0.1:4223", "nats://127.0.0.1:4223"),
    ],
)
def test_urls_are_logged_without_their_secrets(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_stack_logs_never_show_the_postgres_password_or_nats_token(exo_stack: Stack) -> None:
    postgres = exo_stack.database_url.split("@", 1)[0].rsplit(":", 1)[1]
    nats_token = exo_stack.nats_url.removeprefix("nats://").split("@", 1)[0]
    assert postgres
    assert nats_token
    logs = sorted(exo_stack.log_dir.glob("*.log"))
    assert logs, f"no logs in {exo_stack.log_dir}: nothing was checked"
    for log in logs:
        text = log.read_text(errors="replace")
        assert postgres not in text, f"{log.name} shows the Postgres password"
        assert nats_token not in text, f"{log.name} shows the NATS token"


async def test_embedded_nats_demands_its_token(tmp_path: Path) -> None:
    with EmbeddedNats(tmp_path / "nats") as server:
        assert _mode(server.token_file) == 0o600
        assert _mode(server.store_dir / "auth.conf") == 0o600
        nc = await nats.connect(server.url)
        assert nc.is_connected
        await nc.close()
        with pytest.raises(NatsError):
            await nats.connect(
                f"nats://{server.host}:{server.port}", allow_reconnect=False, connect_timeout=2
            )
        assert _listen_addresses(server.port) == {"127.0.0.1"}
        assert _listen_addresses(server.http_port) == {"127.0.0.1"}


def _listen_addresses(port: int) -> set[str]:
    """The local addresses of every socket listening on TCP ``port`` (from /proc/net/tcp*)."""
    found: set[str] = set()
    for table, size in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        with open(table, encoding="ascii") as fh:
            next(fh)
            for line in fh:
                fields = line.split()
                address, _, hex_port = fields[1].partition(":")
                if fields[3] != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                    continue
                raw = bytes.fromhex(address)
                # The kernel writes each 32-bit word in host (little-endian) order.
                words = [raw[i : i + 4][::-1] for i in range(0, size, 4)]
                packed = b"".join(words)
                found.add(
                    ".".join(str(b) for b in packed)
                    if size == 4
                    else ":".join(packed[i : i + 2].hex() for i in range(0, 16, 2))
                )
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads Linux's socket table")
def test_every_metrics_endpoint_of_the_stack_listens_on_loopback_only(exo_stack: Stack) -> None:
    for name, port in exo_stack.config.metrics_ports.items():
        assert _listen_addresses(port) == {"127.0.0.1"}, f"{name} metrics on {port}"
    nats_server = exo_stack.embedded_nats
    if nats_server is not None:
        assert _listen_addresses(nats_server.port) == {"127.0.0.1"}


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:3210", "127.0.0.1"),
        ("localhost", "localhost"),
        ("LOCALHOST:80", "localhost"),
        ("[::1]:3210", "::1"),
        ("[::1]", "::1"),
        ("evil.example:3210", "evil.example"),
    ],
)
def test_host_names_are_read_without_their_port(header: str, name: str) -> None:
    assert host_name(header) == name


async def test_keyless_gateway_answers_only_loopback_host_names(exo_stack: Stack) -> None:
    async with serve_gateway(exo_stack, EXO_API_KEYS="") as url:
        port = url.rsplit(":", 1)[1]
        async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "127.0.0.1"):
                reply = await client.get("/health", headers={"Host": host})
                assert reply.status_code == 200, (host, reply.text)
            for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
                for path in ("/health", "/api/memories", "/metrics"):
                    reply = await client.get(path, headers={"Host": host})
                    assert reply.status_code == 421, (host, path, reply.status_code)
                    assert reply.headers["content-type"] == "application/problem+json"
                    assert "EXO_API_KEYS" in reply.json()["detail"]


async def test_gateway_with_keys_answers_any_host_name(exo_stack: Stack) -> None:
    key = "host-guard-key-0123456789"
    async with (
        serve_gateway(exo_stack, EXO_API_KEYS=key) as url,
        httpx.AsyncClient(base_url=url, timeout=30.0) as client,
    ):
        reply = await client.get("/health", headers={"Host": "memory.example"})
        assert reply.status_code == 200, reply.text
