"""Secrets of the embedded default: generated once, kept in files only their owner can read, and
never shown in a log line."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SECRET_FILE_MODE = 0o600


def read_or_create_secret(path: Path) -> str:
    """The secret stored in ``path``, generating one on first use.

    The file is created with mode 0600 by ``open`` itself (``O_EXCL``), so there is no moment in
    which another local account could read it; a concurrent creator loses the race and reads the
    winner's secret instead of overwriting it.
    """
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # URL-safe characters: the secret travels inside connection URLs unescaped.
    secret = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SECRET_FILE_MODE)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secret + "\n")
    return secret


def _read(path: Path) -> str:
    # A copy restored from a backup may have lost its mode; tighten it rather than leak it.
    if path.stat().st_mode & 0o077:
        path.chmod(SECRET_FILE_MODE)
    secret = path.read_text(encoding="utf-8").strip()
    if not secret:
        raise ValueError(f"{path} is empty; delete it to have a new secret generated")
    return secret


def redact_url(url: str) -> str:
    """``url`` with any password or token replaced by ``***``, for logs and messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    if not parts.netloc or "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, has_password, _ = userinfo.partition(":")
    if has_password:
        hidden = f"{user}:***"
    elif parts.scheme.startswith(("nats", "tls")):
        hidden = "***"  # a lone user name in a NATS URL is a token, as secret as a password
    else:
        return url
    return urlunsplit(parts._replace(netloc=f"{hidden}@{hostport}"))
