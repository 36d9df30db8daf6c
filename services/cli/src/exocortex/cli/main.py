"""The ``exo`` command: the stack on this computer (``up``, ``down``, ``status``, ``doctor``,
``mcp``) and everything a person does with their memories, through the gateway's REST API."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from exocortex.cli import pidfile
from exocortex.cli.commands import (
    analytics,
    backups,
    goals,
    hooks,
    insights,
    lifecycle,
    maintenance,
    memories,
    observe,
    settings,
    transfer,
)
from exocortex.cli.commands.search import search
from exocortex.cli.context import ExoGroup, State
from exocortex.core.runtime.stack import Stack, StackConfig, StackError

app = typer.Typer(
    cls=ExoGroup,
    help="Exocortex: persistent memory for AI agents. `exo up` starts it; the other commands "
    "talk to its REST API (--url / EXO_URL, --api-key / EXO_API_KEY, or "
    "~/.config/exocortex/config.toml).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console(stderr=True)


@app.callback()
def root(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", envvar="EXO_URL", help="the gateway [default: http://127.0.0.1:3210]"
        ),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", envvar="EXO_API_KEY", help="an API key")
    ] = None,
) -> None:
    ctx.obj = State(url=url, api_key=api_key)


memories.register(app)
app.command(rich_help_panel="Memories")(search)
transfer.register(app)
insights.register(app)
app.add_typer(analytics.app, name="analytics", rich_help_panel="Views")
app.add_typer(goals.app, name="goals", rich_help_panel="Goals and settings")
app.add_typer(settings.app, name="settings", rich_help_panel="Goals and settings")
maintenance.register(app)
backups.register(app)
lifecycle.register(app)
observe.register(app)
hooks.register(app)


def _data_dir() -> Path:
    return pidfile.data_dir()


@app.command(rich_help_panel="The stack on this computer")
def up(
    port: Annotated[
        int, typer.Option("--port", "-p", envvar="EXO_GATEWAY_PORT", help="REST API port")
    ] = 3210,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            "-H",
            envvar=["EXO_GATEWAY_HOST", "EXOCORTEX_HOST"],
            help="address the REST API binds",
        ),
    ] = "127.0.0.1",
    database_url: Annotated[
        str | None, typer.Option(envvar="EXO_DATABASE_URL", help="use this Postgres")
    ] = None,
    nats_url: Annotated[
        str | None, typer.Option(envvar="EXO_NATS_URL", help="use this NATS server")
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for health")] = 300.0,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="run in the background (`exo down` stops it)")
    ] = False,
    free_ports: Annotated[
        bool,
        typer.Option(
            "--free-ports",
            help="pick free ports for every inner part (Postgres, NATS, gRPC, metrics, MCP), "
            "so this stack runs beside another; the REST API keeps --port",
        ),
    ] = False,
) -> None:
    """Start the whole stack on this machine and keep it running until Ctrl-C (or `exo down`)."""
    data_dir = _data_dir()
    running = pidfile.read(data_dir)
    if running is not None:
        console.print(
            f"[red]Exocortex already runs[/red] (pid {running.pid}, {running.url}); "
            "`exo status` shows it, `exo down` stops it"
        )
        raise typer.Exit(1)
    if detach:
        args = ["up", "--port", str(port), "--host", host, "--timeout", str(timeout)]
        for flag, value in (("--database-url", database_url), ("--nats-url", nats_url)):
            if value:
                args += [flag, value]
        if free_ports:
            args.append("--free-ports")
        _start_detached(data_dir, args, timeout)
        return
    options: dict[str, object] = {
        "host": host,
        "database_url": database_url,
        "nats_url": nats_url,
    }
    config = (
        StackConfig.with_free_ports(data_dir, **options)
        if free_ports
        else StackConfig(data_dir=data_dir, **options)  # type: ignore[arg-type]
    )
    config.gateway_port = port
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

    pidfile.write(
        pidfile.Running(
            pid=os.getpid(),
            url=stack.gateway_url,
            mcp_url=stack.mcp_url,
            log_dir=str(stack.log_dir),
            started_at=datetime.now(UTC).isoformat(),
            metrics=stack.metrics_urls,
        ),
        data_dir,
    )
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
        pidfile.remove(data_dir, os.getpid())
        console.print("stopped; your data is kept in " + str(config.data_dir))
    raise typer.Exit(code)


def _start_detached(data_dir: Path, args: list[str], timeout: float) -> None:
    """Runs ``exo up`` (same options, without --detach) in its own session, its output in
    ``<data>/logs/exo-up.log``, and returns once it reports itself up in the pid file."""
    log_path = data_dir / "logs" / "exo-up.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "exocortex.cli", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout + 30
    with console.status(f"starting Exocortex in the background (pid {child.pid})…"):
        while time.monotonic() < deadline:
            running = pidfile.read(data_dir)
            if running is not None and running.pid == child.pid:
                console.print(
                    f"[green]Exocortex is up[/green] in the background (pid {child.pid})\n"
                    f"  REST API   {running.url}/api\n"
                    f"  MCP        {running.mcp_url}\n"
                    f"  Logs       {log_path}\n"
                    "`exo status` shows it, `exo down` stops it."
                )
                return
            if child.poll() is not None:
                tail = log_path.read_text(errors="replace").splitlines()[-15:]
                console.print("[red]Exocortex failed to start:[/red]\n" + "\n".join(tail))
                raise typer.Exit(1)
            time.sleep(0.5)
    child.terminate()
    console.print(f"[red]Exocortex did not come up within {timeout:.0f}s[/red]; see {log_path}")
    raise typer.Exit(1)


@app.command(rich_help_panel="The stack on this computer")
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
