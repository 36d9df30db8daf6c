"""What each maintenance job does on a 10k-memory store, and how long it takes.

    .venv/bin/python tests/bench/maintenance_jobs.py [--memories 10000] [--out PATH]

Starts its own stack (as `exo up` does, with the maintenance schedule off) in a temporary
directory and imports a synthetic store through `POST /api/memories/import`: the search
benchmark's work notes (many alike, so consolidation finds clusters), a few tags spelled two ways
(tag cleanup), pairs of notes that give one setting two values (contradictions). It waits for
enrichment to finish, then lets time pass the only way a benchmark can: it moves some memories'
creation time back in Postgres (months for stale ones, over a year for abandoned ones, a day
past their expiry for expired ones) so importance decay and archival have work. Repeated searches
give accesses and co-retrievals (importance boost, graph links), and the settings get golden
queries (retrieval regression).

Then each job runs through REST as an operator would run it: a dry run, then the real run (the
reindex has no dry run; importance runs a second time to show it changes nothing). Each row gives
the job's own time (its report's `seconds`), the wall time of the request, and what the run did.
Writes its table into docs/benchmarks/maintenance-jobs.md between the `bench:latest` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import nats
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import NAMESPACE, corpus, load, queries

from exocortex.core.bus import subjects
from exocortex.core.runtime.stack import Stack, StackConfig

REPORT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "maintenance-jobs.md"
BEGIN, END = "<!-- bench:latest:begin -->", "<!-- bench:latest:end -->"
SETTINGS_TTL_SECONDS = 6.0  # the services cache settings for 5 s
JOB_WAIT_SECONDS = 300

# Tags spelled two ways, as agents do: near duplicates (tag cleanup suggests them) and
# near-certain ones (a plural; auto-merged).
TAG_SPELLINGS = [
    ("infrastructure", "infrastucture"),
    ("deployment", "deployments"),
    ("kubernetes-operator", "kubernetes-operators"),
    ("postgres", "postgresql"),
]
SYSTEMS = [
    "checkout service", "billing API", "search gateway", "login service", "report builder",
    "media uploader", "event router", "inventory sync", "pricing engine", "mail relay",
    "audit exporter", "session store", "feature service", "ledger job", "webhook sender",
    "thumbnail worker", "geo lookup", "fraud scorer", "quota service", "backup agent",
]  # fmt: skip


def store_items(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """n memories: work notes, some with a second spelling of a tag, and contradicting pairs."""
    rng = random.Random(seed)
    pairs = [
        (
            f"The {system} request timeout is {a} seconds.",
            f"The {system} request timeout is {b} seconds.",
        )
        for system, (a, b) in zip(SYSTEMS, [(30, 60), (10, 20), (5, 15), (45, 90)] * 5, strict=True)
    ]
    items = corpus(n - 2 * len(pairs), seed=seed)
    for item in items:
        if rng.random() < 0.04:
            main, variant = rng.choice(TAG_SPELLINGS)
            item["tags"] = [*item["tags"], variant if rng.random() < 0.3 else main]
    for first, second in pairs:
        items.append({"content": first, "namespace": NAMESPACE, "tags": ["config"]})
        items.append({"content": second, "namespace": NAMESPACE, "tags": ["config"]})
    rng.shuffle(items)
    return items


async def _unpublished(stack: Stack) -> int:
    """Events still in the outbox, not yet in the stream."""
    async with await psycopg.AsyncConnection.connect(stack.database_url, autocommit=True) as conn:
        row = await (
            await conn.execute("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        ).fetchone()
    return int(row[0]) if row else 0


async def enrichment_drained(stack: Stack, bound_seconds: float) -> float:
    """Seconds until every event is in the stream and enrichment has none waiting or in
    flight (at most bound_seconds)."""
    start = time.monotonic()
    nc = await nats.connect(stack.nats_url)
    try:
        js = nc.jetstream()
        while time.monotonic() - start < bound_seconds:
            info = await js.consumer_info(subjects.STREAM, subjects.ENRICHMENT_WORKER)
            if (
                info.num_pending == 0
                and info.num_ack_pending == 0
                and not await _unpublished(stack)
            ):
                break
            if time.monotonic() - start > 5:
                print(f"  enrichment: {info.num_pending:,} events waiting", flush=True)
            await asyncio.sleep(1 if time.monotonic() - start < 30 else 15)
    finally:
        await nc.close()
    return time.monotonic() - start


def age_store(database_url: str, n: int) -> dict[str, int]:
    """Move creation times back so decay and archival have something to do."""
    shares = {
        # stale: low importance, four months old, (almost) never used
        "stale": ("now() - interval '120 days'", 0.2, 0.10),
        # abandoned: over a year old, never used
        "abandoned": ("now() - interval '400 days'", None, 0.04),
        # decayed: a month and a half old, never used
        "unused": ("now() - interval '45 days'", None, 0.15),
    }
    counts: dict[str, int] = {}
    with psycopg.connect(database_url, autocommit=True) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM memories WHERE namespace = %s AND parent_id IS NULL "
                "AND is_active ORDER BY md5(id)",
                (NAMESPACE,),
            )
        ]
        start = 0
        for name, (created, importance, share) in shares.items():
            chosen = ids[start : start + int(share * n)]
            start += len(chosen)
            conn.execute(
                f"UPDATE memories SET created_at = {created}, updated_at = {created}"
                + (", importance = %s" if importance is not None else "")
                + " WHERE id = ANY(%s)",
                (importance, chosen) if importance is not None else (chosen,),
            )
            counts[name] = len(chosen)
        expired = ids[start : start + int(0.01 * n)]
        conn.execute(
            "UPDATE memories SET expires_at = now() - interval '1 day' WHERE id = ANY(%s)",
            (expired,),
        )
        counts["expired"] = len(expired)
    return counts


async def use_store(client: httpx.AsyncClient, n_queries: int, repeats: int) -> int:
    """The same questions asked several times: accesses (boost) and co-retrievals (links)."""
    asked = queries(n_queries, seed=11)
    for _ in range(repeats):
        for q in asked:
            reply = await client.post(
                "/api/memories/search", json={"query": q, "namespace": NAMESPACE, "limit": 10}
            )
            reply.raise_for_status()
    return n_queries * repeats


async def run_job(
    client: httpx.AsyncClient, job: str, dry_run: bool, params: dict[str, Any] | None = None
) -> tuple[dict[str, Any], float]:
    body: dict[str, Any] = {
        "dry_run": dry_run,
        "params": params or {},
        "wait_seconds": JOB_WAIT_SECONDS,
    }
    start = time.perf_counter()
    reply = await client.post(f"/api/maintenance/jobs/{job}/run", json=body)
    if reply.status_code not in (200, 202):
        raise RuntimeError(f"{job}: {reply.status_code} {reply.text}")
    run = reply.json()
    while run["status"] == "running":
        await asyncio.sleep(5)
        run = (await client.get(f"/api/maintenance/jobs/runs/{run['id']}")).json()
    wall = time.perf_counter() - start
    if run["status"] != "succeeded":
        raise RuntimeError(f"{job}: {run['status']}: {run.get('error')}")
    return dict(run["report"] or {}), wall


def summary(report: dict[str, Any]) -> str:
    """What a run did: its changes, or for a dry run its counts."""
    changes = report.get("repaired") or report.get("changes")
    if changes:
        return ", ".join(f"{k} {v:,}" for k, v in sorted(changes.items()))
    counts = {
        k: v
        for k, v in report.items()
        if isinstance(v, int) and not isinstance(v, bool) and k not in ("seconds",)
    }
    for k, v in report.items():
        if isinstance(v, dict) and all(isinstance(x, int) for x in v.values()) and v:
            counts.update({f"{k}.{kk}": vv for kk, vv in v.items()})
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())) or "nothing to do"


# (job, dry run first, params): the order an operator would take them after a long while.
PLAN: list[tuple[str, bool, dict[str, Any]]] = [
    ("repair", True, {}),
    ("reindex", False, {}),
    ("tags", True, {"auto_merge": 10}),
    ("graph", True, {}),
    ("contradictions", True, {}),
    ("importance", True, {}),
    ("archival", True, {}),
    ("consolidation", True, {}),
    ("auto-consolidation", True, {}),
    ("retrieval-regression", True, {}),
    ("weights", True, {}),
]


async def measure(stack: Stack, n: int, enrichment_timeout: float) -> tuple[list[str], str]:
    notes: list[str] = []
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=600.0) as client:
        items = store_items(n)
        start = time.monotonic()
        await load(client, items)
        notes.append(f"import of {n:,} memories: {time.monotonic() - start:.0f} s")
        print(notes[-1], flush=True)
        waited = await enrichment_drained(stack, enrichment_timeout)
        notes.append(f"enrichment finished {waited:.0f} s after the import")
        print(notes[-1], flush=True)
        aged = await asyncio.to_thread(age_store, stack.database_url, n)
        notes.append("aged: " + ", ".join(f"{k} {v:,}" for k, v in aged.items()))
        searches = await use_store(client, n_queries=60, repeats=6)
        notes.append(f"searches before the jobs: {searches} (60 questions, 6 times each)")
        golden = queries(20, seed=23)
        reply = await client.patch(
            "/api/settings",
            json={"retrieval_regression.queries": json.dumps(golden)},
        )
        reply.raise_for_status()
        await asyncio.sleep(SETTINGS_TTL_SECONDS)
        known = await client.get(
            "/api/contradictions", params={"status": "all", "namespace": NAMESPACE, "limit": 500}
        )
        known.raise_for_status()
        notes.append(
            f"contradictions enrichment recorded as memories were stored: {len(known.json())}"
        )
        rows: list[tuple[str, str, float, float, str]] = []
        for job, dry_first, params in PLAN:
            runs = [True, False] if dry_first else [False]
            if job == "importance":
                runs.append(False)  # a second run changes nothing
            if job == "retrieval-regression":
                runs.append(False)  # the first run sets the baselines, the second compares
            for dry in runs:
                # A store at rest: the previous job's events (archivals, merged tags) were
                # enriched and projected, so no run skips a memory that moved meanwhile.
                await enrichment_drained(stack, enrichment_timeout)
                report, wall = await run_job(client, job, dry, params)
                kind = "dry run" if dry else "run"
                rows.append((job, kind, float(report.get("seconds", 0.0)), wall, summary(report)))
                print(f"{job:22} {kind:8} {rows[-1][2]:8.1f} s  {rows[-1][4]}", flush=True)
        stats = (await client.get("/api/stats", params={"namespace": NAMESPACE})).json()
    notes.append(
        f"after the jobs: {stats['active_memories']:,} active and "
        f"{stats['archived_memories']:,} archived memories in the namespace"
    )
    table = [
        "| job | kind | job time (s) | request wall (s) | what it did |",
        "|---|---|---:|---:|---|",
        *(f"| `{j}` | {k} | {s:.1f} | {w:.1f} | {d} |" for j, k, s, w, d in rows),
    ]
    return notes, "\n".join(table)


def write_report(path: Path, section: str, title: str = "Maintenance jobs at 10k") -> None:
    """``section`` between the report's `bench:latest` markers; what is around them is kept
    (notes written by hand). A missing report is made with ``title``."""
    text = path.read_text() if path.is_file() else f"# {title}\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{section}\n{END}{tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--enrichment-timeout", type=float, default=1800.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(
            StackConfig.with_free_ports(
                Path(tmp),
                postgres_fsync=False,
                extra_env={"EXO_MAINTENANCE_SCHEDULER": "false"},
            )
        )
        stack.start(timeout=300)
        try:
            notes, table = asyncio.run(measure(stack, args.memories, args.enrichment_timeout))
        finally:
            stack.stop()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    section = "\n".join(
        [
            f"Run of {when} ({args.memories:,} memories; load average at the end {load_avg}).",
            "",
            *(f"- {note}" for note in notes),
            "",
            table,
        ]
    )
    write_report(args.out, section)
    print(section)


if __name__ == "__main__":
    main()
