"""TCP port helpers for the embedded servers."""

from __future__ import annotations

import socket
import time


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free right now on `host`.

    The kernel picks it; another process could still take it before the caller binds, which is an
    accepted race for local servers that we start a moment later.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_is_open(host: str, port: int) -> bool:
    """True when something accepts TCP connections on (host, port)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout: float = 30.0) -> None:
    """Block until (host, port) accepts TCP connections.

    Raises:
        TimeoutError: nothing listened within `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        if port_is_open(host, port):
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(f"nothing is listening on {host}:{port} after {timeout:.0f}s")
        time.sleep(0.05)
