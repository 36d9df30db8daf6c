"""TCP port helpers for the embedded servers."""

from __future__ import annotations

import errno
import os
import random
import socket
import tempfile
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on this platform: ports are then kept apart within a process only
    fcntl = None  # type: ignore[assignment]

# Ports handed out by this process, so two callers never get the same one.
_HANDED_OUT: set[int] = set()
# One file every process on the machine shares: a process that hands a port out holds a lock
# on the byte at that offset for as long as it lives. A server it started and that is killed
# frees the port, but no other process hands it out meanwhile, so the server can come back on
# it (two test suites side by side used to take each other's freed ports).
REGISTRY = Path(tempfile.gettempdir()) / "exocortex-ports.lock"
_registry_fd: int | None = None
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
        if not _claim(port):
            continue
        _HANDED_OUT.add(port)
        return port
    # A crowded low range: fall back to a kernel-chosen port.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        chosen: int = sock.getsockname()[1]
    _HANDED_OUT.add(chosen)
    return chosen


def _claim(port: int) -> bool:
    """Hold ``port`` in the machine-wide registry for this process's lifetime; False when
    another live process holds it. Where the registry cannot be used (no ``fcntl``, a file
    another user made), the port is kept apart within this process only."""
    global _registry_fd
    if fcntl is None:
        return True
    try:
        if _registry_fd is None:
            _registry_fd = os.open(REGISTRY, os.O_RDWR | os.O_CREAT, 0o666)
        # A record lock, not flock: one descriptor holds any number of ports.
        fcntl.lockf(_registry_fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, port, os.SEEK_SET)
    except OSError as exc:
        return exc.errno not in (errno.EACCES, errno.EAGAIN) or _registry_fd is None
    return True


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
