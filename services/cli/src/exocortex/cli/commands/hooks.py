"""``exo hooks``: the SessionStart hook that orients an agent from Exocortex, installed into the
config of Claude Code, Codex or Gemini CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from exocortex.cli import output
from exocortex.cli.context import ExoGroup
from exocortex.cli.hooks import install as installer

app = typer.Typer(
    cls=ExoGroup,
    help="Agent hooks: orient an agent at the start of each session (exo hooks install CLIENT).",
    no_args_is_help=True,
)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="hooks", rich_help_panel="Agents")


@app.command()
def install(
    client: Annotated[str, typer.Argument(help="claude-code, codex or gemini")],
    config: Annotated[
        Path | None,
        typer.Option(help="the config file to change (default: the client's, in your home)"),
    ] = None,
) -> None:
    """Add the SessionStart hook to the client's config (a backup of it is kept first)."""
    if client not in installer.CLIENTS:
        raise typer.BadParameter(f"one of {', '.join(installer.CLIENTS)}", param_hint="CLIENT")
    path = config or installer.default_path(client, Path.home())
    try:
        done = installer.install(client, path)
    except installer.HookConfigError as err:
        output.error(str(err))
        raise typer.Exit(1) from None
    if done.added:
        output.stdout.print(f"SessionStart hook added to {done.path}")
        if done.backup:
            output.stdout.print(f"what was there is kept in {done.backup}")
    else:
        output.stdout.print(f"{done.path} has the hook already; nothing changed")
    for note in done.notes:
        output.note(note)


@app.command()
def command() -> None:
    """Print the hook's command, to add it by hand."""
    typer.echo(installer.hook_command())
