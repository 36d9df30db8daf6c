"""TCP port helpers for the embedded servers."""

from __future__ import annotations

import random
import socket
import time

# Ports handed out by this process, so two callers never get the same one.
_HANDED_OUT: set[int] = set()
# Below the kernel's ephemeral range (32768+ on Linux): a port the kernel picks for bind(0) is
# also what it picks for the next outgoing connection, so a server started a moment later could
# find its port taken by some client's socket. Ports down here are only taken on purpose.
_LOW, _HIGH = 20000, 32000


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free right now on `host` and not handed out before.

    Another process could still take it before the caller binds; picking outside the ephemeral
    range makes that a matter of a deliberate listener, not of any passing client connection.
    """
    for _ in range(200):
        port = random.randint(_LOW, _HIGH)
        if port in _HANDED_OUT:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    # A crowded low range: fall back to a kernel-chosen port.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        chosen: int = sock.getsockname()[1]
    _HANDED_OUT.add(chosen)
    return chosen


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
