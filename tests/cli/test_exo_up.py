"""``exo up`` itself, as a person runs it: in the foreground on a Postgres and a NATS named by
EXO_DATABASE_URL / EXO_NATS_URL (servers the test started), stopped by Ctrl-C (SIGINT); and in
the background (``--detach``, with its pid file and log) on the embedded default, stopped by
``exo down``.

Both run with ``--free-ports``, as a person does who runs a second stack beside their own: every
inner part (Postgres, NATS, gRPC, metrics, MCP) takes a free port, and the test checks that
each port the stack reported is free again once it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg

from exocortex.core.config import DEFAULT_METRICS_PORTS
from exocortex.core.runtime.ports import free_port, port_is_open
from exocortex.core.runtime.processes import process_alive

START_SECONDS = 300.0
STOP_SECONDS = 120.0


def _taken(port: int) -> bool:
    """Something listens on the port (a closed listener's lingering connections do not
    count: the next ``exo up`` binds it again all the same)."""
    return port_is_open("127.0.0.1", port)


def _reported_ports(record: dict[str, Any]) -> list[int]:
    """The ports of the parts the stack reported in its pid file: gateway, MCP, metrics."""
    urls = [record["url"], record["mcp_url"], *record["metrics"].values()]
    ports = [urlsplit(u).port for u in urls if u]
    assert all(ports), urls
    return [p for p in ports if p is not None]


def _env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXO_")}
    # The test's config file (none), and the session's encoder cache, so the model is not
    # exported again.
    for kept in ("EXO_CONFIG", "EXO_EMBEDDING_CACHE_DIR"):
        if kept in os.environ:
            env[kept] = os.environ[kept]
    return env | {"EXO_DATA_DIR": str(data), **extra}


def _exo(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "exocortex.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_SECONDS + 60,
        check=False,
    )


def _pid_record(data: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] = json.loads((data / "exo.pid").read_text())
    except (OSError, ValueError):
        return None
    return record


def _wait_for(
    what: str, ready: Callable[[], bool], seconds: float, log: Path | None = None
) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
        assert time.monotonic() < deadline, f"{what}\n{tail}"
        time.sleep(0.2)


def test_up_on_external_servers_and_ctrl_c_stops_it_cleanly(
    tmp_path: Path, database_url: str, nats_url: str
) -> None:
    data, log = tmp_path / "data", tmp_path / "exo-up.log"
    port = free_port()
    env = _env(data, EXO_DATABASE_URL=database_url, EXO_NATS_URL=nats_url)
    with log.open("wb") as out:
        up = subprocess.Popen(
            [sys.executable, "-m", "exocortex.cli", "up", "--port", str(port), "--free-ports"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for(
            "exo up never said it was up",
            lambda: (r := _pid_record(data)) is not None and r["pid"] == up.pid,
            START_SECONDS,
            log,
        )
        record = _pid_record(data)
        assert record is not None
        ports = _reported_ports(record)
        # Beside any other stack: no part took a fixed default port.
        assert not set(ports) & {3211, *DEFAULT_METRICS_PORTS.values()}, ports
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
        stored = httpx.post(
            f"{url}/api/memories",
            json={"content": "exo up ran on the servers it was given", "namespace": "exo-up"},
            timeout=60,
        )
        assert stored.status_code == 201, stored.text
        # The memory is in the Postgres named by EXO_DATABASE_URL; nothing embedded was made.
        with psycopg.connect(database_url) as conn:
            row = conn.execute(
                "SELECT namespace FROM memories WHERE id = %s", (stored.json()["id"],)
            ).fetchone()
        assert row == ("exo-up",)
        assert not (data / "postgres").exists()
        assert not (data / "nats").exists()

        up.send_signal(signal.SIGINT)  # Ctrl-C
        assert up.wait(timeout=STOP_SECONDS) == 0, log.read_text()[-3000:]
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert "stopped; your data is kept" in log.read_text()
    assert not (data / "exo.pid").exists()
    # Every part went with it: the gateway's and the services' ports are free again.
    assert not _taken(port)
    assert not [p for p in ports if _taken(p)]


def test_up_detached_keeps_a_pid_file_and_a_log_and_down_stops_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = free_port()
    env = _env(data)
    started = _exo(env, "up", "--detach", "--port", str(port), "--free-ports")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        record = _pid_record(data)
        assert record is not None
        ports = _reported_ports(record)
        pid = int(record["pid"])
        assert process_alive(pid)
        assert record["url"] == f"http://127.0.0.1:{port}"
        log = data / "logs" / "exo-up.log"
        assert "Exocortex is up" in log.read_text()
        assert httpx.get(f"{record['url']}/health", timeout=10).status_code == 200
        # The embedded default: its Postgres and NATS live in the data folder.
        assert (data / "postgres").is_dir()
        assert (data / "nats").is_dir()

        status = _exo(env, "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert str(pid) in status.stdout + status.stderr
        # Every part's metrics, as `exo observe --config` scrapes them, answer where reported.
        metrics = json.loads(_exo(env, "status", "--json").stdout)["metrics"]
        assert set(metrics) == {*DEFAULT_METRICS_PORTS, "gateway"}, metrics
        for part, url in metrics.items():
            scraped = httpx.get(url, timeout=10)
            assert scraped.status_code == 200, f"{part} {url}: {scraped.status_code}"
            assert "# TYPE " in scraped.text, f"{part} {url}: not Prometheus metrics"
    finally:
        stopped = _exo(env, "down", "--timeout", str(STOP_SECONDS), "--force")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "stopped" in stopped.stdout
    assert not process_alive(pid)
    assert not (data / "exo.pid").exists()
    assert "stopped; your data is kept" in log.read_text()
    assert not [p for p in [port, *ports] if _taken(p)]
