"""``exo import`` and ``exo export``: files on this computer in, backups and vaults out, with a
progress bar (count, rate, ETA) on both."""

from __future__ import annotations

import functools
import io
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from exocortex.cli import exporters, importers, output, reference_import
from exocortex.cli.client import ApiError, Client
from exocortex.cli.commands import backups
from exocortex.cli.context import client, csv
from exocortex.core.domain.safe_paths import UnsafeName
from exocortex.core.reference_env import reference_database

# The gateway takes at most 1,000 memories and 5 MB per request; stay below both.
MAX_BATCH = 1_000
DEFAULT_BATCH = 100
PANEL = "Import, export and backups"
# A batch is embedded and made searchable before the reply: on a busy CPU that takes minutes.
BATCH_TIMEOUT_SECONDS = 900.0
RETRIES = 4
RETRY_PAUSE_SECONDS = 2.0
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_DOCUMENTS = 200
# Requests in flight at once: the server embeds one batch while it writes another and receives
# the next.
DEFAULT_IN_FLIGHT = 3
MAX_IN_FLIGHT = 16


def register(app: typer.Typer) -> None:
    app.command("import", rich_help_panel=PANEL)(import_)
    app.command("export", rich_help_panel=PANEL)(export)


def import_(
    ctx: typer.Context,
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="files, folders or globs (quote globs: 'notes/**/*.md'); none: the reference "
            "product's database (EXOCORTEX_DB_PATH, else ~/.exocortex/exocortex.db)",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="auto (by extension), json, markdown or chat")
    ] = "auto",
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="store everything here")
    ] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t", help="added to every memory")] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, max=MAX_BATCH, help="memories per request")
    ] = DEFAULT_BATCH,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="show what would be imported (for the reference product's files: what would "
            "be created, merged or skipped, asked of the server); change nothing"
        ),
    ] = False,
    decrypt: Annotated[
        bool,
        typer.Option(
            "--decrypt",
            "-d",
            help="the JSON files are the reference product's encrypted exports (as .enc files "
            "always are)",
        ),
    ] = False,
    passphrase: Annotated[
        str | None,
        typer.Option(
            envvar="EXO_IMPORT_PASSPHRASE", help="of an encrypted export (asked when needed)"
        ),
    ] = None,
    with_api_key: Annotated[
        bool,
        typer.Option(
            "--with-api-key",
            help="also apply the reference's ai.* settings, its LLM API key included",
        ),
    ] = False,
    in_flight: Annotated[
        int, typer.Option(min=1, max=MAX_IN_FLIGHT, help="requests sent at once")
    ] = DEFAULT_IN_FLIGHT,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
) -> None:
    """Import memories from your files (JSON, Markdown, chat transcripts) or from the
    reference product (its database, JSON or encrypted export).

    A JSON export is restored exactly; a JSON list gives one memory per item; Markdown files and
    folders are split at `##` headers (importing a file again replaces its sections); chat
    exports (Claude Code `.jsonl` transcripts, ChatGPT `conversations.json`, plain text with
    `--format chat`) give one memory per exchange. The reference product's SQLite database
    (`~/.exocortex/exocortex.db` or a backup of it, read and never changed), its JSON export
    and its `.enc` export come across whole, with their ids and times; running the same import
    again changes nothing, and resumes one that was interrupted (docs/migrating.md)."""
    if fmt not in importers.FORMATS:
        raise typer.BadParameter(
            f"use one of {', '.join(importers.FORMATS)}", param_hint="--format"
        )
    asked: dict[str, str] = {}

    def ask(path: Path) -> str:
        if passphrase is not None:
            return passphrase
        if "value" not in asked:
            asked["value"] = typer.prompt(f"Passphrase for {path.name}", hide_input=True)
        return asked["value"]

    if not paths:
        database = reference_database()
        if not database.is_file():
            raise typer.BadParameter(
                f"give the files to import (no reference database at {database}; "
                "EXOCORTEX_DB_PATH names another)",
                param_hint="PATHS",
            )
        output.note(f"importing the reference product's database {database}")
        paths = [str(database)]
    try:
        found = importers.expand(paths)
        plan = importers.plan(
            found, fmt, namespace=namespace, tags=csv(tags), passphrase=ask, decrypt=decrypt
        )
    except importers.WrongPassphrase as exc:
        output.error(str(exc), "nothing was imported; check the passphrase")
        raise typer.Exit(1) from None
    except importers.ImportFileError as exc:
        raise typer.BadParameter(str(exc), param_hint="PATHS") from None
    for reason in plan.left_out:
        output.note(f"left out: {reason}")
    if plan.references:
        _import_references(ctx, plan, batch_size, in_flight, dry_run, with_api_key, as_json)
        if not (plan.memories or plan.documents or plan.restores):
            return
    if dry_run:
        _show_plan(plan, as_json)
        return
    if not plan.memories and not plan.documents and not plan.restores:
        output.error("nothing to import", "check the paths and --format (try --dry-run)")
        raise typer.Exit(1)
    started = time.monotonic()
    with client(ctx) as api:
        restored = _send_restores(api, plan.restores)
        counts, errors = _send_memories(api, plan.memories, batch_size, in_flight)
        documents = _send_documents(api, plan.documents, namespace, csv(tags))
    summary = {
        "memories": dict(counts),
        "documents": documents,
        "restored": restored,
        "errors": errors[:20],
        "seconds": round(time.monotonic() - started, 2),
    }
    if as_json:
        output.emit_json(summary)
    else:
        _show_summary(summary, len(errors))
    if errors:
        raise typer.Exit(1)


def _import_references(
    ctx: typer.Context,
    plan: importers.Plan,
    batch_size: int,
    in_flight: int,
    dry_run: bool,
    with_api_key: bool,
    as_json: bool,
) -> None:
    """The reference product's files: each converted document sent in phases, several
    requests in flight, with a progress bar; the outcome per kind."""
    tally = reference_import.Tally(dry_run=dry_run)
    size = min(batch_size, reference_import.PART_MAX)
    started = time.monotonic()
    applied: list[str] = []
    kept_back: list[dict[str, Any]] = []
    with client(ctx) as api:

        def post(part: dict[str, Any]) -> dict[str, Any]:
            params = {"dry_run": "true"} if dry_run else None
            reply: dict[str, Any] = _post_batch(api, "/api/memories/import", part, params)
            return reply

        for name, conversion in plan.references:
            stages = reference_import.phases(conversion.document, size, MAX_REQUEST_BYTES)
            total = sum(part.items for stage in stages for part in stage)
            with output.progress("items") as bar:
                label = "checking (dry run)" if dry_run else "importing"
                task = bar.add_task(f"{label} {Path(name).name}", total=total)
                reference_import.send(
                    post,
                    stages,
                    tally,
                    in_flight=in_flight,
                    advance=functools.partial(bar.advance, task),
                )
            if conversion.ai_settings and with_api_key and not dry_run:
                api.patch("/api/settings", conversion.ai_settings)
                applied += sorted(conversion.ai_settings)
            elif conversion.ai_settings:
                keys = ", ".join(sorted(conversion.ai_settings))
                reason = f"{keys}: the LLM provider and key, applied only with --with-api-key"
                kept_back.append({"file": name, "kind": "settings", "count": 1, "reason": reason})
                output.note(f"left out: {name}: {reason}")
    seconds = time.monotonic() - started
    memories = sum(tally.counts.get("memories", Counter()).values())
    summary = {
        "dry_run": dry_run,
        "sections": {k: dict(v) for k, v in tally.counts.items()},
        "reasons": [
            {"kind": k, "reason": r, "count": n} for (k, r), n in tally.reasons.most_common()
        ],
        "left_out": [
            {"file": name, "kind": x.kind, "count": x.count, "reason": x.reason}
            for name, conversion in plan.references
            for x in conversion.left_out
        ]
        + kept_back,
        "ai_settings_applied": applied,
        "seconds": round(seconds, 2),
        "memories_per_second": round(memories / seconds, 1) if seconds else None,
    }
    if as_json:
        output.emit_json(summary)
        return
    # Only the outcomes that happened (and always the first), so the table stays narrow.
    outcomes = tuple(
        o
        for o in ("created", "already here", "merged", "updated", "skipped", "conflict")
        if o == "created" or tally.total(o)
    )
    output.table(
        ["kind", *("would create" if o == "created" and dry_run else o for o in outcomes)],
        ((kind, *(counts.get(o, 0) for o in outcomes)) for kind, counts in tally.counts.items()),
        title="reference import (dry run: nothing was changed)" if dry_run else "reference import",
    )
    for (kind, reason), n in tally.reasons.most_common(10):
        output.note(f"{kind}: {n} × {reason}")
    output.note("merged: the same content is here already under another id, which is kept")
    output.stdout.print(f"done in {seconds:.1f}s")


def _show_plan(plan: importers.Plan, as_json: bool) -> None:
    if as_json:
        output.emit_json(
            {
                "files": [{"path": p, "format": f, "items": n} for p, f, n in plan.per_file],
                "memories": len(plan.memories),
                "documents": len(plan.documents),
                "left_out": plan.left_out,
            }
        )
        return
    output.table(["file", "format", "items"], plan.per_file, title="would import (dry run)")
    for item in plan.memories[:5]:
        output.note(f"  e.g. {output.preview(item['content'], 90)}")
    output.stdout.print(
        f"{len(plan.memories)} memories and {len(plan.documents)} markdown documents; "
        "nothing was sent"
    )


def _send_memories(
    api: Client, memories: list[dict[str, Any]], batch_size: int, in_flight: int
) -> tuple[Counter[str], list[str]]:
    """The memories in batches, up to ``in_flight`` requests at once: the server embeds one
    batch while it writes another and receives the next. A repeat of a text in a batch in
    flight at the same time comes back as a duplicate, as in one batch."""
    counts: Counter[str] = Counter()
    errors: list[tuple[int, str]] = []  # by item, in the order of the file once sorted
    if not memories:
        return counts, []
    with output.progress("memories") as bar:
        task = bar.add_task("importing", total=len(memories))

        def tally(offset: int, batch: list[dict[str, Any]], reply: dict[str, Any]) -> None:
            for result in reply["results"]:
                counts[result["dedup_action"]] += 1
                if result.get("error"):
                    source = batch[result["index"]].get("source_uri", "")
                    item = offset + result["index"]
                    errors.append((item, f"item {item} ({source}): {result['error']}"))
            bar.advance(task, len(batch))

        def post(batch: list[dict[str, Any]]) -> dict[str, Any]:
            reply: dict[str, Any] = _post_batch(api, "/api/memories/import", {"memories": batch})
            return reply

        pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="exo-import")
        sent: dict[Future[dict[str, Any]], tuple[int, list[dict[str, Any]]]] = {}
        try:
            offset = 0
            for batch in importers.batches(memories, batch_size, MAX_REQUEST_BYTES):
                if len(sent) >= in_flight:
                    _collect(sent, tally, FIRST_COMPLETED)
                sent[pool.submit(post, batch)] = (offset, batch)
                offset += len(batch)
            _collect(sent, tally, ALL_COMPLETED)
        except BaseException as exc:
            # A failure or Ctrl-C: no further batch is sent (those in flight finish on the
            # server; running the import again skips what is stored). After a failure the
            # batches in flight are waited for, so their connections are not closed under
            # them; Ctrl-C does not wait.
            pool.shutdown(wait=not isinstance(exc, KeyboardInterrupt), cancel_futures=True)
            raise
        pool.shutdown()
    return counts, [message for _, message in sorted(errors)]


def _collect(
    sent: dict[Future[dict[str, Any]], tuple[int, list[dict[str, Any]]]],
    tally: Callable[[int, list[dict[str, Any]], dict[str, Any]], None],
    until: str,
) -> None:
    """Wait for ``until`` (one or all of ``sent``), count what came back and forget it; the
    first failure is raised."""
    done, _ = wait(sent, return_when=until)
    for future in done:
        offset, batch = sent.pop(future)
        tally(offset, batch, future.result())


def _send_restores(
    api: Client, restores: list[tuple[str, dict[str, Any]]]
) -> dict[str, dict[str, int]]:
    """Export documents restored exactly by the server, part by part (a part that is already
    there is skipped, so running the import again changes nothing)."""
    totals: dict[str, dict[str, int]] = {}
    if not restores:
        return totals
    total = sum(importers.item_count(document) for _, document in restores)
    with output.progress("items") as bar:
        task = bar.add_task("restoring", total=total)
        for _, document in restores:
            for part, items in importers.restore_parts(document, MAX_REQUEST_BYTES):
                report = _post_batch(api, "/api/memories/import", part)
                for section, outcome in report["sections"].items():
                    into = totals.setdefault(section, {})
                    for key, value in outcome.items():
                        into[key] = into.get(key, 0) + value
                bar.advance(task, items)
    return totals


def _send_documents(
    api: Client, documents: list[importers.Document], namespace: str | None, tags: list[str]
) -> dict[str, int]:
    totals = {"files": 0, "sections": 0, "stored": 0, "unchanged": 0, "replaced": 0}
    if not documents:
        return totals
    with output.progress("files") as bar:
        task = bar.add_task("ingesting markdown", total=len(documents))
        for batch in importers.document_batches(documents, MAX_DOCUMENTS, MAX_REQUEST_BYTES):
            body: dict[str, Any] = {
                "files": [{"name": d.name, "content": d.content} for d in batch],
                "tags": tags,
            }
            if namespace:
                body["namespace"] = namespace
            reply = _post_batch(api, "/api/memories/ingest", body)
            for f in reply["files"]:
                totals["files"] += 1
                for key in ("sections", "stored", "unchanged", "replaced"):
                    totals[key] += f[key]
            bar.advance(task, len(batch))
    return totals


def _post_batch(
    api: Client, path: str, body: dict[str, Any], params: dict[str, Any] | None = None
) -> Any:
    """One batch, sent again when the stack was briefly unavailable (503) or did not answer:
    a batch is safe to repeat, as content already stored comes back as a duplicate."""
    for attempt in range(1, RETRIES + 1):
        try:
            return api.request(
                "POST", path, json=body, params=params, timeout=BATCH_TIMEOUT_SECONDS
            )
        except ApiError as exc:
            if attempt == RETRIES or exc.status not in (None, 502, 503, 504):
                raise
            output.note(f"{exc.detail}; sending the batch again ({attempt}/{RETRIES - 1})")
            time.sleep(RETRY_PAUSE_SECONDS * attempt)
    raise AssertionError("unreachable")


def _show_summary(summary: dict[str, Any], failed: int) -> None:
    memories: dict[str, int] = summary["memories"]
    rows = [
        ("new memories", memories.get("created", 0) + memories.get("superseded", 0)),
        ("already stored (duplicates)", memories.get("skipped", 0)),
        ("merged into similar memories", memories.get("merged", 0)),
        ("failed", memories.get("failed", 0)),
    ]
    docs = summary["documents"]
    if docs["files"]:
        rows += [
            ("markdown files", docs["files"]),
            ("sections stored", docs["stored"]),
            ("sections unchanged", docs["unchanged"]),
        ]
    if summary["restored"]:
        output.table(
            ["restored section", "created", "skipped", "conflict"],
            (
                (name, c.get("created", 0), c.get("skipped", 0), c.get("conflict", 0))
                for name, c in summary["restored"].items()
            ),
        )
    if summary["memories"] or not summary["restored"]:
        output.table(["", "count"], [(k, v) for k, v in rows if v or k == "failed"])
    output.stdout.print(f"done in {summary['seconds']:.1f}s")
    for line in summary["errors"][:10]:
        output.error(line)
    if failed:
        output.error(f"{failed} items failed", "fix them in the file and import it again")


def export(
    ctx: typer.Context,
    path: Annotated[
        str | None,
        typer.Argument(help="output file (json, markdown) or vault folder (obsidian); - is stdout"),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="json, markdown or obsidian")] = "json",
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="only this one")
    ] = None,
    output_file: Annotated[
        str | None,
        typer.Option("--output", "-o", help="output file or vault folder (as PATH)"),
    ] = None,
    encrypt: Annotated[
        bool,
        typer.Option(
            "--encrypt",
            help="write an encrypted backup of everything in the server's data folder instead",
        ),
    ] = False,
    passphrase: Annotated[
        str | None,
        typer.Option(envvar="EXO_BACKUP_PASSPHRASE", help="with --encrypt (default: the server's)"),
    ] = None,
) -> None:
    """Export your memories: JSON, Markdown, an Obsidian vault, or an encrypted backup.

    JSON (the default) is a full backup that `exo import` restores exactly; Markdown is one
    file with a section per memory; an Obsidian vault gets a note per memory, entity and goal
    (only changed notes are rewritten); --encrypt writes an encrypted backup on the server."""
    if output_file and path and output_file != path:
        raise typer.BadParameter("give the output once: PATH or -o", param_hint="--output")
    path = path or output_file
    if encrypt:
        if path or namespace:
            raise typer.BadParameter(
                "an encrypted backup holds every namespace and stays on the server; "
                "drop PATH and --namespace (`exo backups` lists them)",
                param_hint="--encrypt",
            )
        with client(ctx) as api:
            made = backups.create_encrypted(api, passphrase)
        counts = ", ".join(f"{v} {k}" for k, v in made["counts"].items() if v)
        output.stdout.print(f"encrypted backup [bold]{made['name']}[/bold] ({counts})")
        output.note("check it with `exo verify-backup NAME`; `exo backups` lists them")
        return
    if fmt not in ("json", "markdown", "obsidian"):
        raise typer.BadParameter("use json, markdown or obsidian", param_hint="--format")
    if fmt == "obsidian" and not path:
        raise typer.BadParameter("give the vault folder", param_hint="PATH")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    default = {"json": f"exocortex-backup-{stamp}.json", "markdown": f"exocortex-{stamp}.md"}
    target = path or default[fmt]
    with client(ctx) as api:
        raw = _download(api, namespace, to_stdout=target == "-" and fmt == "json")
    if target == "-" and fmt == "json":
        return
    if fmt == "json":
        Path(target).write_bytes(raw)
        output.stdout.print(f"wrote {target} ({len(raw) / 1_000_000:.1f} MB)")
        return
    backup = json.loads(raw)
    memories = exporters.live_memories(backup)
    with output.progress("notes") as bar:
        task = bar.add_task(f"writing {fmt}", total=len(memories))

        def tick(n: int) -> None:
            bar.advance(task, n)

        if fmt == "markdown":
            text = exporters.markdown(backup, tick)
        else:
            try:
                report = exporters.obsidian(backup, Path(target).expanduser(), tick)
            except UnsafeName as exc:
                raise typer.BadParameter(str(exc), param_hint="PATH") from None
    if fmt == "markdown":
        if target == "-":
            sys.stdout.write(text)
        else:
            Path(target).write_text(text, encoding="utf-8")
            output.stdout.print(f"wrote {target} ({len(memories)} memories)")
    else:
        output.stdout.print(
            f"vault {Path(target) / exporters.VAULT_FOLDER}: {report.written} notes written, "
            f"{report.unchanged} unchanged"
        )


def _download(api: Client, namespace: str | None, *, to_stdout: bool) -> bytes:
    """The backup document, streamed with a bytes progress bar (its size is not known ahead,
    so the bar shows the rate and what has arrived)."""
    buffer = io.BytesIO()
    with api.stream("/api/export", namespace=namespace) as response, output.progress("B") as bar:
        size = response.headers.get("content-length")
        task = bar.add_task("downloading backup", total=int(size) if size else None)
        for chunk in response.iter_bytes():
            if to_stdout:
                sys.stdout.buffer.write(chunk)
            else:
                buffer.write(chunk)
            bar.advance(task, len(chunk))
    return buffer.getvalue()
