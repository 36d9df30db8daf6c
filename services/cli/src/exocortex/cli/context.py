"""What every command shares: the gateway settings from the root options, and one place that
turns an API or config failure into a message and exit code 1."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperGroup

from exocortex.cli import output
from exocortex.cli.client import ApiError, Client
from exocortex.cli.config import ConfigError, resolve


@dataclass
class State:
    url: str | None = None
    api_key: str | None = None

    def client(self) -> Client:
        return Client(resolve(self.url, self.api_key))


def client(ctx: typer.Context) -> Client:
    state = ctx.find_object(State) or State()
    return state.client()


class ExoGroup(TyperGroup):
    """Shows an API or config failure as ``error: <server's detail>`` plus ``fix: <hint>`` and
    exits 1; usage errors keep click's exit code 2."""

    # typer carries its own copy of click, whose Context is not public: hence Any.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as exc:
            output.error(exc.detail, exc.hint)
            raise typer.Exit(1) from None
        except ConfigError as exc:
            output.error(str(exc))
            raise typer.Exit(1) from None


def read_text_argument(value: str | None, what: str) -> str:
    """The argument, or standard input when it is ``-`` or missing and input is piped."""
    if value is not None and value != "-":
        return value
    if value is None and sys.stdin.isatty():
        raise typer.BadParameter(f"give the {what} as an argument, or pipe it in")
    text = sys.stdin.read()
    if not text.strip():
        raise typer.BadParameter(f"the {what} read from standard input is empty")
    return text


def csv(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]
