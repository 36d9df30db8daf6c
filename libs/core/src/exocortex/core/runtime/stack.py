"""Runs the whole system on the embedded default: embedded Postgres and NATS (unless URLs are
given), migrations, then every process as a child, until told to stop.

Used by ``exo up`` and by the tests, so the tests start the stack exactly as users do. Each part
is started as ``python -m exocortex.<part>`` and none is imported: this library knows the parts
by name only, so it depends on no application.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS
from exocortex.core.rpc.environment import with_grpc_environment
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.ports import free_port, port_is_open
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.processes import process_alive

# Start order: the model loads slowest, so it starts first; everyone else retries until it is up.
SERVICES = ("embedding", "ingest", "retrieval", "enrichment", "maintenance")
# A part that exits on its own is started again, unless it did so this often in this window: then
# it is broken, not unlucky, and the stack stops with its log.
MAX_RESTARTS = 3
RESTART_WINDOW_SECONDS = 120.0
# A part that exited is started again after a pause that doubles with each recent restart
# (0.5, 1, 2, 4 s...): a dependency that is briefly away is not hammered, a crash costs little.
RESTART_BACKOFF_SECONDS = 0.5
MAX_RESTART_BACKOFF_SECONDS = 8.0
# Background workers run at a lower CPU priority: on a small machine a bulk import's enrichment
# would otherwise take the cores that stores and searches are waiting for.
NICENESS = {"enrichment": 10, "maintenance": 10}
_PR_SET_PDEATHSIG = 1


class StackError(RuntimeError):
    """The stack could not start; the message says which part and where its log is."""


@dataclass
class StackConfig:
    data_dir: Path
    host: str = "127.0.0.1"
    gateway_port: int = 3210
    # The MCP adapter over streamable HTTP (0: do not start it).
    mcp_port: int = 3211
    postgres_port: int = 5433
    nats_port: int = 4223
    grpc_ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_GRPC_PORTS))
    metrics_ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_METRICS_PORTS))
    # Existing servers to use instead of the embedded ones.
    database_url: str | None = None
    nats_url: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    postgres_fsync: bool = True

    @classmethod
    def with_free_ports(cls, data_dir: Path, **kwargs: object) -> StackConfig:
        """Every port picked free: for tests and for running beside another stack."""
        return cls(
            data_dir=data_dir,
            gateway_port=free_port(),
            mcp_port=free_port(),
            postgres_port=free_port(),
            nats_port=free_port(),
            grpc_ports={name: free_port() for name in SERVICES},
            metrics_ports={name: free_port() for name in SERVICES},
            **kwargs,  # type: ignore[arg-type]
        )


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    argv: list[str] = field(default_factory=list)
    # When it was restarted after exiting on its own (monotonic seconds).
    restarts: list[float] = field(default_factory=list)
    # When it is due to be started again, once it has been seen to exit.
    due: float | None = None


@dataclass
class Backing:
    """An embedded backing server (Postgres, NATS) as the supervisor sees it."""

    name: str
    restarts: list[float] = field(default_factory=list)
    due: float | None = None


class Stack:
    def __init__(self, config: StackConfig, *, on_event: Callable[[str], None] | None = None):
        self.config = config
        self._say = on_event or (lambda _msg: None)
        self._postgres: EmbeddedPostgres | None = None
        self._nats: EmbeddedNats | None = None
        self._children: list[Child] = []
        self._backing = {"postgres": Backing("postgres"), "nats": Backing("nats")}
        self.database_url = ""
        self.nats_url = ""

    @property
    def gateway_url(self) -> str:
        return f"http://{self.config.host}:{self.config.gateway_port}"

    @property
    def mcp_url(self) -> str:
        return f"http://{self.config.host}:{self.config.mcp_port}/mcp"

    @property
    def metrics_urls(self) -> dict[str, str]:
        """Where Prometheus scrapes each part: the services on their own metrics port (on
        loopback, EXO_METRICS_HOST's default), the gateway at ``/metrics`` on its API port.
        The MCP adapter has no metrics of its own: its calls are the gateway's requests."""
        urls = {
            name: f"http://127.0.0.1:{self.config.metrics_ports[name]}/metrics" for name in SERVICES
        }
        urls["gateway"] = f"{self.gateway_url}/metrics"
        return urls

    @property
    def embedded_nats(self) -> EmbeddedNats | None:
        """The NATS server this stack started (None when using an external one)."""
        return self._nats

    @property
    def embedded_postgres(self) -> EmbeddedPostgres | None:
        """The Postgres server this stack started (None when using an external one)."""
        return self._postgres

    @property
    def log_dir(self) -> Path:
        return self.config.data_dir / "logs"

    def start(self, timeout: float = 300.0) -> None:
        cfg = self.config
        cfg.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(exist_ok=True)
        try:
            self._start_backing_stores()
            self._say("applying database migrations")
            # Imported here: alembic takes a fifth of a second to import, which every `exo`
            # command (session hooks included) paid though few start a stack.
            from exocortex.core.db import migrate

            migrate.upgrade(self.database_url)
            for name in SERVICES:
                self._spawn(name, [sys.executable, "-m", f"exocortex.{name}"])
            self._spawn("gateway", [sys.executable, "-m", "exocortex.gateway"])
            if self.config.mcp_port:
                self._spawn(
                    "mcp-adapter", [sys.executable, "-m", "exocortex.mcp", "--transport", "http"]
                )
            self._wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise

    def _start_backing_stores(self) -> None:
        cfg = self.config
        if cfg.database_url:
            self.database_url = cfg.database_url
        else:
            self._say(f"starting Postgres on 127.0.0.1:{cfg.postgres_port}")
            self._postgres = EmbeddedPostgres(
                cfg.data_dir / "postgres", port=cfg.postgres_port, fsync=cfg.postgres_fsync
            ).start()
            self.database_url = self._postgres.dsn
        if cfg.nats_url:
            self.nats_url = cfg.nats_url
        else:
            self._say(f"starting NATS JetStream on 127.0.0.1:{cfg.nats_port}")
            self._nats = EmbeddedNats(cfg.data_dir / "nats", port=cfg.nats_port).start()
            self.nats_url = self._nats.url

    def env(self) -> dict[str, str]:
        cfg = self.config
        env = with_grpc_environment(os.environ)
        env.update(
            {
                "EXO_DATABASE_URL": self.database_url,
                "EXO_NATS_URL": self.nats_url,
                "EXO_DATA_DIR": str(cfg.data_dir),
                "EXO_GATEWAY_HOST": cfg.host,
                "EXO_GATEWAY_PORT": str(cfg.gateway_port),
                "EXO_MCP_HOST": cfg.host,
                "EXO_MCP_PORT": str(cfg.mcp_port),
                "EXO_MCP_GATEWAY_URL": self.gateway_url,
                "EXO_LOG_FORMAT": env.get("EXO_LOG_FORMAT", "json"),
                # Model weights ship with the package; never reach for a hub.
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
            }
        )
        for name in SERVICES:
            upper = name.upper()
            env[f"EXO_{upper}_LISTEN"] = f"127.0.0.1:{cfg.grpc_ports[name]}"
            env[f"EXO_{upper}_ADDR"] = f"127.0.0.1:{cfg.grpc_ports[name]}"
            env[f"EXO_{upper}_METRICS_PORT"] = str(cfg.metrics_ports[name])
        env.update(cfg.extra_env)
        return env

    def _spawn(self, name: str, argv: list[str]) -> None:
        log_path = self.log_dir / f"{name}.log"
        process = self._launch(name, argv, log_path)
        self._children.append(Child(name, process, log_path, argv))
        self._say(f"started {name} (pid {process.pid}, log {log_path})")

    def _launch(
        self, name: str, argv: list[str], log_path: Path, note: str = ""
    ) -> subprocess.Popen[bytes]:
        with log_path.open("ab") as handle:
            if note:
                handle.write(f"\n--- {note} ---\n".encode())
                handle.flush()
            return subprocess.Popen(
                argv,
                env=self.env(),
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_child_setup(NICENESS.get(name, 0)),  # before any thread starts
            )

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last: dict[str, object] = {}
        with httpx.Client(timeout=3.0) as client:
            while time.monotonic() < deadline:
                self.check_children()
                try:
                    reply = client.get(f"{self.gateway_url}/health")
                    last = reply.json().get("dependencies", {})
                    if reply.status_code == 200 and self._mcp_listening():
                        return
                except (httpx.HTTPError, ValueError):
                    pass
                time.sleep(0.5)
        down = [
            name
            for name, state in last.items()
            if isinstance(state, dict) and state.get("status") != "ok"
        ]
        raise StackError(
            f"the stack did not become healthy within {timeout:.0f}s "
            f"(still down: {', '.join(down) or 'gateway'}); logs are in {self.log_dir}"
        )

    def _mcp_listening(self) -> bool:
        return not self.config.mcp_port or port_is_open(self.config.host, self.config.mcp_port)

    def check_children(self) -> None:
        """Start again any part that exited on its own (a crash, a dependency that was away too
        long), embedded Postgres and NATS included, on the same port and data, after a short
        backoff; raise if one keeps exiting, since a stack with a dead part is not running.

        Each exited child is reaped here (``poll``), so none is left a zombie."""
        now = time.monotonic()
        self._check_backing(now)
        for index, child in enumerate(self._children):
            code = child.process.poll()
            if code is None:
                continue
            recent = [t for t in child.restarts if now - t < RESTART_WINDOW_SECONDS]
            if len(recent) >= MAX_RESTARTS:
                raise StackError(
                    f"{child.name} exited with code {code} ({len(recent) + 1} times within "
                    f"{RESTART_WINDOW_SECONDS:.0f}s); see {child.log_path}. "
                    f"Its last lines:\n{_tail(child.log_path)}"
                )
            if child.due is None:
                child.due = now + _backoff(len(recent))
                self._say(
                    f"{child.name} exited with code {code}; starting it again in "
                    f"{child.due - now:.1f}s"
                )
            if now < child.due:
                continue
            process = self._launch(
                child.name, child.argv, child.log_path, f"exited with code {code}; restarted"
            )
            self._children[index] = Child(
                child.name, process, child.log_path, child.argv, [*recent, now]
            )

    def _check_backing(self, now: float) -> None:
        """Embedded Postgres and NATS are supervised like the services: while one is away,
        writes wait in Postgres (NATS) or fail fast (Postgres) and nothing becomes searchable,
        so each is started again on its own port and data directory."""
        for name in ("postgres", "nats"):
            record = self._backing[name]
            if record.due is None:
                cause = self._backing_exit(name)
                if cause is None:
                    continue
                self._schedule_backing(record, now, cause)
            assert record.due is not None
            if now < record.due:
                continue
            record.restarts.append(now)
            record.due = None
            try:
                self._restart_backing(name)
            except Exception as exc:
                # Counted like another exit: retried after a longer pause, or given up.
                self._schedule_backing(record, time.monotonic(), f"did not start again ({exc})")
                continue
            self._say(f"{name} started again on the same port and data")

    def _schedule_backing(self, record: Backing, now: float, cause: str) -> None:
        recent = [t for t in record.restarts if now - t < RESTART_WINDOW_SECONDS]
        record.restarts = recent
        if len(recent) >= MAX_RESTARTS:
            log = self._backing_log(record.name)
            raise StackError(
                f"{record.name} {cause} ({len(recent) + 1} times within "
                f"{RESTART_WINDOW_SECONDS:.0f}s); see {log}. Its last lines:\n{_tail(log)}"
            )
        record.due = now + _backoff(len(recent))
        self._say(f"{record.name} {cause}; starting it again in {record.due - now:.1f}s")

    def _backing_exit(self, name: str) -> str | None:
        """How an embedded server ended, or None while it runs (or is not embedded)."""
        if name == "nats":
            if self._nats is None:
                return None
            code = self._nats.exit_code()
            return None if code is None else f"exited with code {code}"
        if self._postgres is None or not self._postgres.running:
            return None
        pid = _postmaster_pid(self._postgres.data_dir)
        if pid is not None and process_alive(pid):
            return None
        return "is gone" if pid is None else f"(pid {pid}) died"

    def _restart_backing(self, name: str) -> None:
        if name == "nats":
            assert self._nats is not None
            self._nats.stop()  # reaps the process and closes its log
            self._nats.start()
            return
        assert self._postgres is not None
        # pg_ctl cannot stop a server that is gone; stopping only marks it down here.
        with suppress(RuntimeError, subprocess.SubprocessError):
            self._postgres.stop()
        self._postgres.start()

    def _backing_log(self, name: str) -> Path:
        if name == "nats" and self._nats is not None:
            return self._nats.log_file
        if name == "postgres" and self._postgres is not None:
            return self._postgres.log_file
        return self.log_dir

    def process(self, name: str) -> subprocess.Popen[bytes]:
        """The running process of a service, the gateway or the MCP adapter."""
        return next(c.process for c in self._children if c.name == name)

    def stop_part(self, name: str, timeout: float = 20.0) -> int:
        """Stop one process (a service, the gateway, or the embedded ``nats``), e.g. to show
        that the rest keeps working and catches up once it is back (see ``start_part``).
        Returns its exit code: 0 when it stopped on its own, -9 when it had to be killed."""
        if name == "nats":
            assert self._nats is not None, "NATS is not embedded in this stack"
            self._nats.stop()
            return 0
        child = next(c for c in self._children if c.name == name)
        child.process.send_signal(signal.SIGTERM)
        try:
            child.process.wait(timeout)
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()
        self._children.remove(child)
        return child.process.returncode

    def kill_part(self, name: str) -> None:
        """Kill one service or the gateway with SIGKILL (a crash: no clean-up at all), e.g. to
        show that nothing it acknowledged is lost; ``start_part`` starts it again."""
        child = next(c for c in self._children if c.name == name)
        child.process.kill()
        child.process.wait()
        self._children.remove(child)

    def start_part(self, name: str) -> None:
        """Start a part stopped with ``stop_part`` again, on the same ports and data."""
        if name == "nats":
            assert self._nats is not None, "NATS is not embedded in this stack"
            self._nats.start()
            return
        module = "exocortex.gateway" if name == "gateway" else f"exocortex.{name}"
        self._spawn(name, [sys.executable, "-m", module])

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the gateway first (no new requests), then the services, then NATS and Postgres."""
        for child in reversed(self._children):
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for child in reversed(self._children):
            remaining = max(0.1, deadline - time.monotonic())
            try:
                child.process.wait(remaining)
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
        self._children.clear()
        if self._nats is not None:
            self._nats.stop()
            self._nats = None
        if self._postgres is not None:
            self._postgres.stop()
            self._postgres = None

    def __enter__(self) -> Stack:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _backoff(recent_restarts: int) -> float:
    return min(RESTART_BACKOFF_SECONDS * (1 << recent_restarts), MAX_RESTART_BACKOFF_SECONDS)


def _postmaster_pid(data_dir: Path) -> int | None:
    """The server's pid from its lock file, None when the file is missing or unreadable."""
    try:
        first = (data_dir / "postmaster.pid").read_text(errors="replace").split("\n", 1)[0]
        return int(first)
    except (OSError, ValueError):
        return None


def _tail(path: Path, lines: int = 25) -> str:
    """The end of a child's log, so an error shown far away (CI) still says why it died."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(log unreadable: {exc})"
    return "\n".join(text.splitlines()[-lines:])


def _child_setup(niceness: int) -> Callable[[], None]:
    """Runs in the child before it starts: lower its priority, and on Linux have the kernel
    stop it if the supervisor dies without a chance to clean up (killed, crashed), so no
    orphaned process keeps ports and data directories busy."""

    def setup() -> None:
        if niceness:
            os.nice(niceness)
        if sys.platform == "linux":
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return setup
