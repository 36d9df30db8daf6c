"""Encrypted backups kept by the server in its data folder: list, create (``exo export
--encrypt``), verify and restore."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from exocortex.cli import output, verify_local
from exocortex.cli.client import Client
from exocortex.cli.context import client

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
Passphrase = Annotated[
    str | None,
    typer.Option(
        envvar="EXO_BACKUP_PASSPHRASE",
        help="at least 8 characters; default: the one the server is configured with",
    ),
]
PANEL = "Import, export and backups"
# Encrypting or decrypting a whole store takes a while on a large one.
BACKUP_TIMEOUT_SECONDS = 3600.0


def register(app: typer.Typer) -> None:
    app.command(rich_help_panel=PANEL)(backups)
    app.command("verify-backup", rich_help_panel=PANEL)(verify_backup)


def _secret(passphrase: str | None) -> dict[str, Any] | None:
    return {"passphrase": passphrase} if passphrase else None


def create_encrypted(api: Client, passphrase: str | None) -> dict[str, Any]:
    """``exo export --encrypt``: the server writes the backup, encrypted, in its data folder."""
    with output.stderr.status("writing an encrypted backup on the server…"):
        made: dict[str, Any] = api.post(
            "/api/backups", _secret(passphrase), timeout=BACKUP_TIMEOUT_SECONDS
        )
    return made


def backups(
    ctx: typer.Context,
    restore: Annotated[
        str | None, typer.Option(help="restore this backup (exactly: ids, links, settings)")
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="with --restore: report, change nothing")] = False,
    passphrase: Passphrase = None,
    as_json: Json = False,
) -> None:
    """The encrypted backups on the server, newest first; --restore NAME brings one back."""
    with client(ctx) as api:
        if restore:
            body = {**(_secret(passphrase) or {}), "dry_run": dry_run}
            with output.stderr.status(f"restoring {restore}…"):
                report = api.post(
                    f"/api/backups/{restore}/restore", body, timeout=BACKUP_TIMEOUT_SECONDS
                )
            show_restore(report, as_json)
            return
        listed = api.get("/api/backups")
    if as_json:
        output.emit_json(listed)
        return
    output.table(
        ["created", "size", "kind", "name"],
        (
            (
                b["created_at"][:19],
                f"{b['size_bytes'] / 1_000_000:.1f} MB",
                "scheduled" if b["scheduled"] else "on request",
                b["name"],
            )
            for b in listed["backups"]
        ),
    )


def show_restore(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        output.emit_json(report)
        return
    output.table(
        ["section", "created", "skipped", "updated", "conflict"],
        (
            (name, s["created"], s["skipped"], s["updated"], s["conflict"])
            for name, s in report["sections"].items()
        ),
        title="dry run: nothing changed" if report["dry_run"] else None,
    )
    for item in report.get("items", [])[:10]:
        output.note(f"{item['section']} {item['key']}: {item['outcome']} ({item['reason']})")


def verify_backup(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            help="a backup's name on the server (`exo backups` lists them), or a local file: an "
            "encrypted backup or an export document (exo export -o)"
        ),
    ],
    deep: Annotated[
        bool,
        typer.Option(
            help="also restore it into a scratch database (dropped after) and compare the rows"
        ),
    ] = False,
    check_embeddings: Annotated[
        bool,
        typer.Option(
            "--check-embeddings", help="local file: check a sample of memories for text and vectors"
        ),
    ] = False,
    sample_size: Annotated[
        int, typer.Option(min=1, max=100_000, help="with --check-embeddings: memories sampled")
    ] = 10,
    passphrase: Passphrase = None,
    as_json: Json = False,
) -> None:
    """Check a backup: on the server (decrypt it there and check every chunk, count and
    checksum; with --deep, also restore it into a scratch database of the same Postgres and
    compare each section), or a local file, here, without a server.

    Exits 1 when it does not hold up."""
    local = Path(name).expanduser()
    if local.is_file():
        found = verify_local.verify(
            local, passphrase, check_embeddings=check_embeddings, sample_size=sample_size
        )
        _show_verify(found.as_json(), as_json)
        return
    if check_embeddings:
        raise typer.BadParameter(
            f"no local file {name!r}: --check-embeddings checks a local file", param_hint="NAME"
        )
    body = {**(_secret(passphrase) or {}), "deep": deep}
    with client(ctx) as api, output.stderr.status(f"verifying {name}…"):
        report = api.post(f"/api/backups/{name}/verify", body, timeout=BACKUP_TIMEOUT_SECONDS)
    _show_verify(report, as_json)


def _show_verify(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        output.emit_json(report)
    else:
        embeddings = report.get("embeddings")
        output.fields(
            [
                ("backup", report["name"]),
                ("kind", report.get("kind", "encrypted backup on the server")),
                ("verdict", "ok" if report["ok"] else "DAMAGED"),
                ("exported", report.get("exported_at")),
                ("format", report["format_version"]),
                ("counts", [f"{k} {v}" for k, v in report["counts"].items()]),
                (
                    "restored",
                    [f"{k} {v}" for k, v in (report.get("restored_counts") or {}).items()],
                ),
                (
                    "embeddings",
                    [f"{k} {v}" for k, v in embeddings.items()] if embeddings else None,
                ),
            ]
        )
        for problem in report["problems"]:
            output.error(problem)
    if not report["ok"]:
        raise typer.Exit(1)
