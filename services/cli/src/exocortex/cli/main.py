"""The ``exo`` command."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from exocortex.cli.stack import Stack, StackConfig, StackError
from exocortex.core.config import DEFAULT_DATA_DIR

app = typer.Typer(help="Exocortex: persistent memory for AI agents.", no_args_is_help=True)
console = Console(stderr=True)


def _data_dir() -> Path:
    return Path(os.environ.get("EXO_DATA_DIR") or DEFAULT_DATA_DIR).expanduser()


@app.command()
def up(
    port: Annotated[int, typer.Option(envvar="EXO_GATEWAY_PORT", help="REST API port")] = 3210,
    host: Annotated[
        str, typer.Option(envvar="EXO_GATEWAY_HOST", help="address the REST API binds")
    ] = "127.0.0.1",
    database_url: Annotated[
        str | None, typer.Option(envvar="EXO_DATABASE_URL", help="use this Postgres")
    ] = None,
    nats_url: Annotated[
        str | None, typer.Option(envvar="EXO_NATS_URL", help="use this NATS server")
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for health")] = 300.0,
) -> None:
    """Start the whole stack on this machine and keep it running until Ctrl-C."""
    config = StackConfig(
        data_dir=_data_dir(),
        host=host,
        gateway_port=port,
        database_url=database_url,
        nats_url=nats_url,
    )
    stack = Stack(config, on_event=lambda msg: console.print(f"[dim]•[/dim] {msg}"))
    started = time.monotonic()
    stop_requested = False

    def _request_stop(*_args: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, _request_stop)
    try:
        with console.status("starting Exocortex…"):
            stack.start(timeout=timeout)
    except (StackError, OSError, RuntimeError) as exc:
        console.print(f"[red]Exocortex failed to start:[/red] {exc}")
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        console.print("interrupted; stopping")
        raise typer.Exit(130) from None

    console.print(
        f"[green]Exocortex is up[/green] in {time.monotonic() - started:.1f}s\n"
        f"  REST API   {stack.gateway_url}/api\n"
        f"  API docs   {stack.gateway_url}/docs\n"
        f"  MCP        {stack.mcp_url} (stdio: exo mcp)\n"
        f"  Health     {stack.gateway_url}/health\n"
        f"  Data       {config.data_dir}\n"
        f"  Logs       {stack.log_dir}\n"
        "Press Ctrl-C to stop."
    )
    # From here on Ctrl-C and SIGTERM both mean "stop cleanly" (also when SIGINT was ignored,
    # as it is for a backgrounded job).
    signal.signal(signal.SIGINT, _request_stop)
    code = 0
    try:
        while not stop_requested:
            time.sleep(0.5)
            stack.check_children()
    except KeyboardInterrupt:
        pass
    except StackError as exc:
        console.print(f"[red]{exc}[/red]; stopping the rest")
        code = 1
    finally:
        with console.status("stopping…"):
            stack.stop()
        console.print("stopped; your data is kept in " + str(config.data_dir))
    raise typer.Exit(code)


@app.command()
def mcp(
    transport: Annotated[
        str, typer.Option(help="stdio (for a local agent) or http (streamable HTTP at /mcp)")
    ] = "stdio",
    host: Annotated[str | None, typer.Option(help="HTTP bind address [EXO_MCP_HOST]")] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port [EXO_MCP_PORT, 3211]")] = None,
) -> None:
    """Serve the agent tools over MCP, talking to the gateway at EXO_MCP_GATEWAY_URL."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("use stdio or http", param_hint="--transport")
    try:
        from exocortex.mcp.run import serve
    except ImportError as exc:
        console.print("[red]the MCP adapter is not installed:[/red] pip install exocortex-mcp")
        raise typer.Exit(1) from exc
    serve("stdio" if transport == "stdio" else "http", host=host, port=port)


@app.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as dist_version

    typer.echo(dist_version("exocortex-cli"))
