"""Runtime settings: read (secrets masked) and write (checked by the server)."""

from __future__ import annotations

from typing import Annotated

import typer

from exocortex.cli import output
from exocortex.cli.context import ExoGroup, client

app = typer.Typer(cls=ExoGroup, help="Runtime settings: get and set.", no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]


@app.command()
def get(
    ctx: typer.Context,
    key: Annotated[
        str | None, typer.Argument(help="one setting, or a prefix such as scoring.")
    ] = None,
    as_json: Json = False,
) -> None:
    """Show settings (all, one, or those under a prefix); secrets are masked."""
    with client(ctx) as api:
        values: dict[str, str] = api.get("/api/settings")
    if key is not None:
        chosen = {k: v for k, v in values.items() if k == key or k.startswith(key)}
        if not chosen:
            output.error(f"no setting {key!r}", "`exo settings get` lists them all")
            raise typer.Exit(1)
        values = chosen
    if as_json:
        output.emit_json(values)
        return
    output.table(["setting", "value"], sorted(values.items()))


@app.command("set")
def set_(
    ctx: typer.Context,
    pairs: Annotated[list[str], typer.Argument(help="KEY=VALUE, one or more")],
    as_json: Json = False,
) -> None:
    """Change settings, e.g. `exo settings set scoring.rrf_k=60 ai.provider=openai`."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="PAIRS")
        values[key.strip()] = value
    with client(ctx) as api:
        updated: dict[str, str] = api.patch("/api/settings", values)
    if as_json:
        output.emit_json({k: updated.get(k) for k in values})
        return
    output.table(["setting", "value"], sorted((k, updated.get(k, "")) for k in values))
