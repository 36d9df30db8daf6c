"""Write-path benchmark through the public REST API.

    .venv/bin/python tests/bench/bulk_import.py [--url http://127.0.0.1:3210] [--runs 3]
        [--memories 2000] [--batch 500]

Measures, on the embedded default (or the stack at --url):

* bulk import rate: memories/s accepted by ``POST /api/memories/import`` (each run a fresh
  namespace, requests of --batch memories), and the rate until the last one is searchable;
* single store latency through REST (p50/p95, including the read-your-writes wait);
* time from a store's reply to ``enrichment_status: done``.

Without --url it starts its own stack (as `exo up` does) in a temporary directory. Writes
docs/benchmarks/bulk-import.md with the median over the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "benchmarks" / "bulk-import.md"
_MODULES = (
    "os", "os.path", "re", "json", "collections", "itertools", "functools", "asyncio", "pathlib",
    "email", "http.client", "urllib.request", "urllib.parse", "xml.etree.ElementTree", "sqlite3",
    "decimal", "fractions", "statistics", "random", "string", "textwrap", "datetime", "calendar",
    "zipfile", "tarfile", "csv", "argparse", "logging", "unittest", "typing", "inspect", "ast",
    "socket", "ssl", "hashlib", "hmac", "secrets", "shutil", "glob", "tempfile", "threading",
    "multiprocessing", "subprocess", "sched", "queue", "heapq", "bisect", "array", "struct",
    "codecs", "locale", "gettext", "pprint", "reprlib", "enum", "math", "cmath", "operator",
    "contextlib", "abc", "copy", "pickle", "shelve", "gzip", "bz2", "lzma", "configparser",
    "tomllib", "plistlib", "uuid", "ipaddress", "mimetypes", "base64", "binascii", "html",
    "smtplib", "imaplib", "ftplib", "xmlrpc.client", "difflib", "io", "time", "signal",
    "selectors", "mmap", "weakref", "types", "dataclasses", "graphlib", "zoneinfo", "traceback",
    "warnings", "tokenize", "doctest", "pdb", "timeit", "trace", "sysconfig", "platform",
)  # fmt: skip


MAX_CHARS = 320


def corpus() -> list[str]:
    """Varied real text (first paragraphs of standard-library docstrings, at most 320
    characters), so the benchmark measures inserts rather than the dedup skip path."""
    import importlib
    import inspect

    seen: dict[str, None] = {}
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in dir(module):
            obj = getattr(module, attr, None)
            doc = inspect.getdoc(obj) if obj is not None else None
            if not doc:
                continue
            text = " ".join(doc.split("\n\n")[0].split())
            if len(text) > MAX_CHARS:
                # Typical agent memories are a few sentences; cut long ones at a word.
                text = text[:MAX_CHARS].rsplit(" ", 1)[0]
            if len(text) >= 60:
                seen.setdefault(f"{name}.{attr}: {text}", None)
    return list(seen)


CORPUS = corpus()


def sentence(_rng: random.Random, i: int) -> str:
    return CORPUS[i % len(CORPUS)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def import_run(client: httpx.AsyncClient, n: int, batch: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    items = [{"content": sentence(rng, i), "namespace": namespace} for i in range(n)]
    started = time.perf_counter()
    last_id = ""
    imported = 0
    for start in range(0, n, batch):
        reply = await client.post(
            "/api/memories/import", json={"memories": items[start : start + batch]}
        )
        reply.raise_for_status()
        body = reply.json()
        imported += body["imported"]
        last_id = body["results"][-1]["id"] or last_id
    accepted = time.perf_counter() - started
    # Searchable: the last memory's text finds it (the projector works in id order).
    probe = items[-1]["content"]
    while True:
        found = await client.post(
            "/api/memories/search",
            json={"query": probe, "namespace": namespace, "limit": 3, "compact": True},
        )
        if any(r["id"] == last_id for r in found.json()["results"]):
            break
        await asyncio.sleep(0.05)
    searchable = time.perf_counter() - started
    return {
        "imported": imported,
        "rate": imported / accepted,
        "rate_searchable": imported / searchable,
        "seconds": accepted,
    }


async def store_latency(client: httpx.AsyncClient, n: int) -> tuple[list[float], list[float]]:
    rng = random.Random(7)
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    latencies: list[float] = []
    pending: list[tuple[str, float]] = []
    for i in range(n):
        started = time.perf_counter()
        reply = await client.post(
            "/api/memories", json={"content": sentence(rng, i), "namespace": namespace}
        )
        reply.raise_for_status()
        done = time.perf_counter()
        latencies.append(done - started)
        pending.append((reply.json()["id"], done))
    enrich: list[float] = []
    for memory_id, replied in pending[-50:]:
        while True:
            memory = (await client.get(f"/api/memories/{memory_id}")).json()
            if memory["enrichment_status"] == "done":
                # Measured from the reply; an upper bound (includes the polling interval).
                enrich.append(time.perf_counter() - replied)
                break
            await asyncio.sleep(0.01)
    return latencies, enrich


async def enrichment_latency(client: httpx.AsyncClient, n: int) -> list[float]:
    """Store one memory, then poll until it is enriched; one at a time so queues are empty."""
    rng = random.Random(11)
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    out = []
    for i in range(n):
        reply = await client.post(
            "/api/memories", json={"content": sentence(rng, i), "namespace": namespace}
        )
        replied = time.perf_counter()
        memory_id = reply.json()["id"]
        while True:
            memory = (await client.get(f"/api/memories/{memory_id}")).json()
            if memory["enrichment_status"] == "done":
                out.append(time.perf_counter() - replied)
                break
            await asyncio.sleep(0.01)
    return out


def scrape(metrics_url: str | None, names: tuple[str, ...]) -> dict[str, float]:
    """Sums of the given Prometheus samples (own stack only; empty otherwise)."""
    if metrics_url is None:
        return {}
    text = httpx.get(metrics_url, timeout=10).text
    out = dict.fromkeys(names, 0.0)
    for line in text.splitlines():
        for name in names:
            if line.startswith(name + " ") or line.startswith(name + "{"):
                out[name] += float(line.rsplit(" ", 1)[1])
    return out


EMBED_METRICS = ("exo_embedding_texts_total", "exo_embedding_duration_seconds_sum")


@contextmanager
def running_stack(url: str | None) -> Iterator[tuple[str, str | None]]:
    if url:
        yield url.rstrip("/"), None
        return
    import tempfile

    from exocortex.core.runtime.stack import Stack, StackConfig

    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(StackConfig.with_free_ports(Path(tmp), postgres_fsync=False))
        stack.start(timeout=300)
        try:
            port = stack.config.metrics_ports["embedding"]
            yield stack.gateway_url, f"http://127.0.0.1:{port}/metrics"
        finally:
            stack.stop()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    with running_stack(args.url) as (url, embed_metrics):
        async with httpx.AsyncClient(base_url=url, timeout=600.0) as client:
            # Warm-up: model, pools, index segments.
            await import_run(client, 200, 200, seed=99)
            runs = []
            for run in range(args.runs):
                before = scrape(embed_metrics, EMBED_METRICS)
                result = await import_run(client, args.memories, args.batch, seed=run)
                after = scrape(embed_metrics, EMBED_METRICS)
                if before:
                    texts = after[EMBED_METRICS[0]] - before[EMBED_METRICS[0]]
                    seconds = after[EMBED_METRICS[1]] - before[EMBED_METRICS[1]]
                    result["embed_rate"] = texts / seconds if seconds else 0.0
                    result["embed_share"] = seconds / result["seconds"]
                runs.append(result)
            latencies, _ = await store_latency(client, args.stores)
            enrich = await enrichment_latency(client, 30)
    return {"runs": runs, "latencies": latencies, "enrich": enrich}


def without_model(run: dict[str, float]) -> float:
    rest = run["seconds"] * (1 - run.get("embed_share", 0.0))
    return run["imported"] / rest if rest > 0 else 0.0


def report(args: argparse.Namespace, result: dict[str, Any]) -> str:
    runs = result["runs"]
    lat = [x * 1000 for x in result["latencies"]]
    enrich = [x * 1000 for x in result["enrich"]]
    rate = statistics.median(r["rate"] for r in runs)
    rate_searchable = statistics.median(r["rate_searchable"] for r in runs)
    lines = [
        "# Bulk import and write latency",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} by `tests/bench/bulk_import.py` on the embedded "
        f"default ({os.cpu_count()} CPUs, {platform.python_implementation()} "
        f"{platform.python_version()}, fsync off). Every process of the stack shares the CPUs; "
        f"1-minute load average at the end of the run: {os.getloadavg()[0]:.1f}.",
        "",
        f"## Bulk import ({args.memories} memories per run, {args.batch} per request, "
        f"{args.runs} runs, median)",
        "",
        f"* accepted: **{rate:.0f} memories/s** (committed with their events; the call returns)",
        f"* until the last one is searchable: **{rate_searchable:.0f} memories/s**",
        "",
        "| run | memories | seconds | accepted/s | searchable/s | model texts/s | model share "
        "| accepted/s without model time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"| {i} | {r['imported']:.0f} | {r['seconds']:.2f} | {r['rate']:.0f} | "
            f"{r['rate_searchable']:.0f} | {r.get('embed_rate', 0):.0f} | "
            f"{100 * r.get('embed_share', 0):.0f}% | {without_model(r):.0f} |"
        )
    lines += [
        "",
        "*model texts/s*: texts the embedding service embedded per second of model time during "
        "the run; *model share*: model time / import wall time; the last column is what the "
        "write path does around the model (validation, dedup, inserts, events).",
        "",
        "When the model share is near 100%, the import rate is the embedding model's "
        "throughput on this CPU (one call per batch of 128 texts); the write path around it "
        "is not the limit.",
    ]
    lines += [
        "",
        f"## Single store through REST ({len(lat)} sequential stores)",
        "",
        "Includes validation, dedup lookups (hash and nearest neighbours), embedding, the commit "
        "and the read-your-writes wait until the memory is searchable.",
        "",
        f"* p50 **{percentile(lat, 0.5):.1f} ms**, p95 **{percentile(lat, 0.95):.1f} ms**, "
        f"max {max(lat):.1f} ms",
        "",
        f"## Store → enrichment done ({len(enrich)} memories, one at a time)",
        "",
        "From the store's reply until `enrichment_status` is `done` (polled every 10 ms).",
        "",
        f"* p50 **{percentile(enrich, 0.5):.0f} ms**, p95 **{percentile(enrich, 0.95):.0f} ms**",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--stores", type=int, default=200)
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    text = report(args, result)
    print(text)
    if not args.no_report:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(text)


if __name__ == "__main__":
    main()
