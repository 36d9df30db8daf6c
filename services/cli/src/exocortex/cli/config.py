"""Where the CLI finds the gateway and its key: a flag, then the environment (``EXO_URL``,
``EXO_API_KEY``; typer reads both into the flags), then the config file, then the default."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:3210"
DEFAULT_TIMEOUT_SECONDS = 120.0
CONFIG_KEYS = frozenset({"url", "api_key", "timeout"})


class ConfigError(Exception):
    """The config file cannot be used; the message names the file and what to fix."""


@dataclass(frozen=True)
class ClientConfig:
    url: str
    api_key: str | None
    timeout: float
    source: str  # where the URL came from, shown by `exo status` and `exo doctor`


def config_path() -> Path:
    """``EXO_CONFIG`` when set, else ``$XDG_CONFIG_HOME/exocortex/config.toml``."""
    explicit = os.environ.get("EXO_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "exocortex" / "config.toml"


def read_file(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix or remove it") from exc
    unknown = sorted(set(data) - CONFIG_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(CONFIG_KEYS))}"
        )
    return data


def base_url(url: str) -> str:
    """The gateway's root: `exo up` shows the REST API as `<root>/api`, and a person may well
    give that; every path the client asks for already starts with /api (or /health)."""
    root = url.rstrip("/")
    return root.removesuffix("/api") if root.endswith("/api") else root


def resolve(url: str | None, api_key: str | None, path: Path | None = None) -> ClientConfig:
    """The flags (already merged with the environment by typer) win over the file."""
    path = path or config_path()
    data = read_file(path)
    file_url, file_key, file_timeout = data.get("url"), data.get("api_key"), data.get("timeout")
    if file_url is not None and not isinstance(file_url, str):
        raise ConfigError(f'{path}: url must be a string such as "{DEFAULT_URL}"')
    if file_key is not None and not isinstance(file_key, str):
        raise ConfigError(f"{path}: api_key must be a string")
    if file_timeout is not None and not isinstance(file_timeout, int | float):
        raise ConfigError(f"{path}: timeout must be a number of seconds")
    if url:
        chosen, source = url, "--url or EXO_URL"
    elif file_url:
        chosen, source = file_url, str(path)
    else:
        chosen, source = DEFAULT_URL, "default"
    if not chosen.startswith(("http://", "https://")):
        raise ConfigError(f"the gateway URL {chosen!r} ({source}) must start with http(s)://")
    return ClientConfig(
        url=base_url(chosen),
        api_key=api_key or file_key or None,
        timeout=float(file_timeout or DEFAULT_TIMEOUT_SECONDS),
        source=source,
    )
