"""Search latency through REST at 10k and 100k stored memories, on the embedded default.

    .venv/bin/python tests/bench/search_latency.py [--sizes 10000 100000] [--repeats 3]
        [--data-dir DIR [--load-only]]

Starts its own stack (as `exo up` does) in a temporary directory, loads a seeded synthetic corpus
through `POST /api/memories/import`, and at each size measures search p50/p95/p99 sequentially
and with 8 concurrent clients. Every query is new to the service, so each search pays for its
query embedding. The machine may be noisy: each figure is the median over repeats, and a trivial
request (GET /health) is measured in the same run as a baseline. Also reports the stack's RSS at
each size, and search latency sampled *while* the corpus is being loaded (the vector engine's
optimizer must not stall searches).

The whole stack runs while searches are timed, enrichment included: the bulk load leaves it a
backlog (about 40 minutes at 100k on two cores when nothing else runs), and its work inside
retrieval waits for searches to pause, as users get it after an import. `--stop-enrichment`
stops the enrichment service while searches are timed (a settled store; nothing is lost, its
work waits in the stream) and starts it again afterwards.

Writes its tables into docs/benchmarks/search-latency.md between the `bench:latest` markers and
keeps the rest of the file (the history of earlier runs, written by hand).

With --data-dir the stack keeps its data in DIR and the load resumes where it stopped (progress
is kept in DIR/bench-progress.json), so a large corpus can be loaded once (--load-only) and
measured later, e.g. when the machine is quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stack_baseline import stack_processes, stack_pss_mb, stack_rss_mb

from exocortex.core.runtime.stack import Stack, StackConfig

REPORT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "search-latency.md"
BUDGET_P95_MS = 30.0
IMPORT_BATCH = 500
SETTINGS_TTL_SECONDS = 6.0  # the services cache settings for 5 s
NAMESPACE = "bench"

SUBJECTS = [
    "the team",
    "Alice",
    "Bob",
    "our service",
    "the client",
    "ops",
    "the nightly job",
    "the mobile app",
    "the billing system",
    "the data pipeline",
    "the on-call engineer",
]
VERBS = [
    "moved",
    "rewrote",
    "benchmarked",
    "deprecated",
    "documented",
    "migrated",
    "tuned",
    "split",
    "cached",
    "retried",
    "monitored",
    "rolled back",
    "reviewed",
    "shipped",
]
OBJECTS = [
    "the payment queue",
    "the search index",
    "the login flow",
    "the export job",
    "the invoice renderer",
    "the GraphQL gateway",
    "the backup policy",
    "feature flags",
    "the image resizer",
    "the email digests",
    "rate limits",
    "the audit log",
    "the warehouse schema",
    "TLS certificates",
    "the staging cluster",
    "the test suite",
]
REASONS = [
    "because latency doubled",
    "after the outage on Tuesday",
    "to cut cloud costs",
    "since customers asked for it",
    "to unblock the release",
    "for the compliance audit",
    "because the old library is unmaintained",
    "to simplify on-call",
    "after a code review",
]
TAGS = ["infra", "backend", "frontend", "decision", "incident", "cost", "security", "data"]
QUESTIONS = [
    "why did we {v} {o}?",
    "who {v} {o}",
    "what happened to {o}",
    "{o} {r}",
    "when was {o} {v}",
    "decision about {o}",
]


def corpus(n: int, seed: int = 42) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = []
    for i in range(n):
        text = (
            f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(REASONS)}; ticket {rng.randrange(10_000)} (note {i})."
        )
        items.append({"content": text, "namespace": NAMESPACE, "tags": rng.sample(TAGS, k=2)})
    return items


def queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        rng.choice(QUESTIONS).format(
            v=rng.choice(VERBS), o=rng.choice(OBJECTS), r=rng.choice(REASONS)
        )
        + f" #{seed}-{i}"
        for i in range(n)
    ]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


class Progress:
    """How much of the corpus is loaded, and how long each size took, kept across runs."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        state = json.loads(path.read_text()) if path and path.is_file() else {}
        self.loaded: int = state.get("loaded", 0)
        self.seconds: dict[str, float] = state.get("seconds", {})

    def save(self) -> None:
        if self.path:
            self.path.write_text(json.dumps({"loaded": self.loaded, "seconds": self.seconds}))


async def stored_memories(client: httpx.AsyncClient) -> int:
    reply = await client.get("/api/stats", params={"namespace": NAMESPACE})
    reply.raise_for_status()
    return int(reply.json()["total_memories"])


async def load(
    client: httpx.AsyncClient,
    items: list[dict[str, Any]],
    on_batch: Any = None,
) -> list[float]:
    """Import in batches while sampling one search every 0.5 s; returns the sampled latencies.

    The synthetic texts come from a few templates, so semantic dedup would fold most of them
    into each other: it is off during the load, so the namespace really holds N memories."""
    before = (await client.get("/api/settings")).json()["dedup.enabled"]
    (await client.patch("/api/settings", json={"dedup.enabled": "false"})).raise_for_status()
    await asyncio.sleep(SETTINGS_TTL_SECONDS)
    try:
        return await _load(client, items, on_batch)
    finally:
        await client.patch("/api/settings", json={"dedup.enabled": before})


async def _load(
    client: httpx.AsyncClient,
    items: list[dict[str, Any]],
    on_batch: Any = None,
) -> list[float]:
    sampled: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        i = 0
        while not done.is_set():
            start = time.perf_counter()
            reply = await client.post(
                "/api/memories/search",
                json={"query": f"probe while loading {i}", "namespace": NAMESPACE},
            )
            if reply.status_code == 200:
                sampled.append((time.perf_counter() - start) * 1000)
            i += 1
            await asyncio.sleep(0.5)

    prober = asyncio.create_task(probe())
    try:
        for start in range(0, len(items), IMPORT_BATCH):
            reply = await client.post(
                "/api/memories/import", json={"memories": items[start : start + IMPORT_BATCH]}
            )
            reply.raise_for_status()
            if reply.json()["failed"]:
                raise RuntimeError(reply.json()["errors"])
            if on_batch:
                on_batch(min(start + IMPORT_BATCH, len(items)))
    finally:
        done.set()
        await prober
    return sampled


class Timed:
    """Times requests over plain keep-alive HTTP connections (``http.client``), one per client
    thread. The measuring side is on the same 2-core machine as the stack: httpx's async client
    costs about 3.7 ms of CPU a request, a plain connection about 0.6 ms, and every millisecond
    the client burns is one the stack under test does not get."""

    def __init__(self, base_url: str) -> None:
        url = urlsplit(base_url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80

    def _run(
        self, requests: list[tuple[str, str, bytes | None]], ok: frozenset[int] = frozenset({200})
    ) -> list[float]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        headers = {"content-type": "application/json"}
        out = []
        try:
            for method, path, body in requests:
                start = time.perf_counter()
                conn.request(method, path, body=body, headers=headers if body else {})
                reply = conn.getresponse()
                data = reply.read()
                if reply.status not in ok:
                    raise RuntimeError(f"{method} {path}: {reply.status} {data[:300]!r}")
                out.append((time.perf_counter() - start) * 1000)
        finally:
            conn.close()
        return out

    @staticmethod
    def _searches(qs: list[str]) -> list[tuple[str, str, bytes | None]]:
        return [
            (
                "POST",
                "/api/memories/search",
                json.dumps({"query": q, "namespace": NAMESPACE}).encode(),
            )
            for q in qs
        ]

    async def sequential(self, qs: list[str]) -> list[float]:
        return await asyncio.to_thread(self._run, self._searches(qs))

    async def concurrent(self, qs: list[str], clients: int) -> list[float]:
        chunks = [self._searches(qs[i::clients]) for i in range(clients)]

        def run_all() -> list[float]:
            with ThreadPoolExecutor(clients) as pool:
                return [x for r in pool.map(self._run, chunks) for x in r]

        return await asyncio.to_thread(run_all)

    async def health(self, n: int) -> list[float]:
        # 503 is /health's answer while a part is stopped on purpose (enrichment, see above):
        # the same probes, the same work.
        return await asyncio.to_thread(
            self._run, [("GET", "/health", None)] * n, frozenset({200, 503})
        )


# The stack's processes by part, the order the CPU table lists them in; "client" is this
# process, which generates the load on the same cores.
PARTS = (
    "gateway",
    "retrieval",
    "postgres",
    "maintenance",
    "nats",
    "embedding",
    "ingest",
    "enrichment",
    "mcp",
    "client",
)


def _part(proc: psutil.Process) -> str:
    name = proc.name()
    if name.startswith("postgres"):
        return "postgres"
    if "nats" in name:
        return "nats"
    cmd = proc.cmdline()  # python -m exocortex.<part>
    if "-m" in cmd and cmd.index("-m") + 1 < len(cmd):
        return cmd[cmd.index("-m") + 1].rsplit(".", 1)[-1]
    return name


class CpuTimes:
    """CPU seconds (user + system, every thread) spent by each part of the stack between
    `start()` and `stop()`, summed over the stretches measured."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack
        self._started: dict[int, tuple[str, float]] = {}
        self.seconds: dict[str, float] = dict.fromkeys(PARTS, 0.0)
        self.searches = 0

    def _read(self) -> dict[int, tuple[str, float]]:
        out = {}
        me = psutil.Process()
        for proc in [*stack_processes(self._stack), me]:
            try:
                times = proc.cpu_times()
                part = "client" if proc.pid == me.pid else _part(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            out[proc.pid] = (part, times.user + times.system)
        return out

    def start(self) -> None:
        self._started = self._read()

    def stop(self, searches: int) -> None:
        for pid, (part, seconds) in self._read().items():
            # A process started meanwhile (a Postgres backend) counts from zero.
            before = self._started.get(pid, (part, 0.0))[1]
            self.seconds[part] = self.seconds.get(part, 0.0) + seconds - before
        self.searches += searches

    def ms_per_search(self) -> dict[str, float]:
        n = max(1, self.searches)
        return {part: 1000 * s / n for part, s in self.seconds.items()}


async def settle(timed: Timed, seconds: float) -> None:
    """No searches for a while, so the vector engine's idle optimizer indexes the new points."""
    await asyncio.sleep(seconds)
    await timed.sequential(queries(20, seed=999))  # warm-up, not measured


STAGES = (
    "embed",
    "expand",
    "keyword",
    "vector",
    "hydrate",
    "graph",
    "neighbours",
    "neighbour_vectors",
    "context",
    "rerank_read",
    "rerank",
    "coverage",
    "total",
)
BEGIN_MARK = "<!-- bench:latest:start (written by tests/bench/search_latency.py) -->"
END_MARK = "<!-- bench:latest:end -->"


class StageTimes:
    """Time per search stage inside retrieval, from its Prometheus histograms: summed over the
    stretches between `start()` and `stop()` (the sequential runs), so searches made before or
    meanwhile by other clients do not count."""

    def __init__(self, stack: Stack) -> None:
        port = stack.config.metrics_ports["retrieval"]
        self._url = f"http://{stack.config.host}:{port}/metrics"
        self._started: dict[str, tuple[float, float]] = {}
        self._sums = dict.fromkeys(STAGES, 0.0)
        self._counts = dict.fromkeys(STAGES, 0.0)

    async def _read(self) -> dict[str, tuple[float, float]]:
        async with httpx.AsyncClient(timeout=30) as client:
            text = (await client.get(self._url)).text
        out = {}
        for stage in STAGES:
            total = re.search(rf'_search_duration_seconds_sum{{stage="{stage}"}} (\S+)', text)
            count = re.search(rf'_search_duration_seconds_count{{stage="{stage}"}} (\S+)', text)
            if total and count:
                out[stage] = (float(total.group(1)), float(count.group(1)))
        return out

    async def start(self) -> None:
        self._started = await self._read()

    async def stop(self) -> None:
        for stage, (total, count) in (await self._read()).items():
            before = self._started.get(stage, (0.0, 0.0))
            self._sums[stage] += total - before[0]
            self._counts[stage] += count - before[1]

    def means_ms(self) -> dict[str, float]:
        return {s: 1000 * self._sums[s] / self._counts[s] for s in STAGES if self._counts[s]}


async def time_searches(
    stack: Stack,
    size: int,
    repeats: int,
    n_queries: int,
    stages: StageTimes,
    cpu: dict[str, CpuTimes],
    repeat_queries: bool = False,
) -> dict[str, list[dict[str, float]]]:
    """Sequential, 8-client and /health timings (and with `repeat_queries` the sequential
    queries once more), one entry per repeat; CPU per part into `cpu` by mode."""
    timed = Timed(stack.gateway_url)
    await settle(timed, 20.0)
    runs: dict[str, list[dict[str, float]]] = {"seq": [], "c8": [], "health": []}
    if repeat_queries:
        runs["again"] = []
    for r in range(repeats):
        asked = queries(n_queries, seed=size + r)
        await stages.start()
        cpu["seq"].start()
        began = time.perf_counter()
        seq = await timed.sequential(asked)
        rates = {"seq": len(seq) / (time.perf_counter() - began)}
        cpu["seq"].stop(len(seq))
        await stages.stop()
        cpu["c8"].start()
        began = time.perf_counter()
        c8 = await timed.concurrent(queries(n_queries, seed=size + 100 + r), 8)
        rates["c8"] = len(c8) / (time.perf_counter() - began)
        cpu["c8"].stop(len(c8))
        base = await timed.health(n_queries)
        measured = [("seq", seq), ("c8", c8), ("health", base)]
        if repeat_queries:
            cpu["again"].start()
            again = await timed.sequential(asked)
            cpu["again"].stop(len(again))
            measured.append(("again", again))
        for name, values in measured:
            entry = {"p50": pct(values, 50), "p95": pct(values, 95), "p99": pct(values, 99)}
            if name in rates:
                entry["rate"] = rates[name]
            runs[name].append(entry)
    return runs


async def measure(
    stack: Stack,
    sizes: list[int],
    repeats: int,
    n_queries: int,
    progress: Progress,
    load_only: bool = False,
    stop_enrichment: bool = False,
    repeat_queries: bool = False,
) -> list[dict[str, Any]]:
    rows = []
    items = corpus(max(sizes))
    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=600, limits=limits) as client:
        for size in sizes:
            during: list[float] = []
            if progress.loaded < size:
                first = progress.loaded
                t0 = time.perf_counter() - progress.seconds.get(str(size), 0.0)

                def advance(
                    done: int, first: int = first, t0: float = t0, size: int = size
                ) -> None:
                    progress.loaded = first + done
                    progress.seconds[str(size)] = time.perf_counter() - t0
                    progress.save()
                    print(f"loaded {progress.loaded:,} / {size:,}", flush=True)

                during = await load(client, items[first:size], advance)
            stored = await stored_memories(client)
            if stored < size:
                raise RuntimeError(
                    f"the namespace holds {stored:,} memories, not {size:,}: was part of the "
                    "corpus loaded with dedup on? Load it again into an empty data dir."
                )
            if stored > size:
                print(f"skipping {size:,}: the data dir already holds {stored:,}", flush=True)
                continue
            if load_only:
                continue
            load_s = progress.seconds.get(str(size), 0.0)
            # Memory with every part running, before any is stopped.
            rss_mb, pss_mb = stack_rss_mb(stack), stack_pss_mb(stack)
            stages = StageTimes(stack)
            cpu = {mode: CpuTimes(stack) for mode in ("seq", "c8", "again")}
            if stop_enrichment:
                print("stopping the enrichment service while searches are timed", flush=True)
                stack.stop_part("enrichment")
            try:
                runs = await time_searches(
                    stack, size, repeats, n_queries, stages, cpu, repeat_queries
                )
            finally:
                if stop_enrichment:
                    stack.start_part("enrichment")
            row: dict[str, Any] = {
                "size": size,
                "enrichment": "stopped" if stop_enrichment else "running",
                "load_average": os.getloadavg()[0],
                "stages": stages.means_ms(),
                "cpu": {mode: c.ms_per_search() for mode, c in cpu.items() if c.searches},
                "load_seconds": load_s,
                "rss_mb": rss_mb,
                "pss_mb": pss_mb,
                "during_load_p95": pct(during, 95) if during else 0.0,
                "during_load_max": max(during) if during else 0.0,
                "during_load_n": len(during),
            }
            for name, per_run in runs.items():
                for p in ("p50", "p95", "p99", "rate"):
                    if p in per_run[0]:
                        row[f"{name}_{p}"] = statistics.median(x[p] for x in per_run)
            rows.append(row)
            print(row, flush=True)
    return rows


def report(rows: list[dict[str, Any]], repeats: int, n_queries: int) -> str:
    enrichment = ", ".join(sorted({r["enrichment"] for r in rows}))
    lines = [
        BEGIN_MARK,
        "## Latest run of `make bench-search`",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench-search` "
        f"(`tests/bench/search_latency.py`) on the embedded default (Qdrant Edge + tantivy, "
        f"all processes on one machine with {os.cpu_count()} cores). Synthetic seeded corpus "
        f"loaded through `POST /api/memories/import`; {n_queries} distinct queries per "
        "measurement, each new to the service (so every search includes its query embedding); "
        f"medians of {repeats} repeats; enrichment service {enrichment} while searches were "
        f"timed. Budget: p95 ≤ {BUDGET_P95_MS:.0f} ms at 100k, sequential.",
        "",
        "| memories | mode | p50 ms | p95 ms | p99 ms | searches/s | GET /health p50 (baseline) |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | sequential | {r['seq_p50']:.1f} | {r['seq_p95']:.1f} | "
            f"{r['seq_p99']:.1f} | {r['seq_rate']:.1f} | "
            f"{r['health_p50']:.1f} |"
        )
        lines.append(
            f"| {r['size']:,} | 8 concurrent clients | {r['c8_p50']:.1f} | {r['c8_p95']:.1f} | "
            f"{r['c8_p99']:.1f} | {r['c8_rate']:.1f} | |"
        )
        if "again_p50" in r:
            lines.append(
                f"| {r['size']:,} | sequential, the same queries again | {r['again_p50']:.1f} | "
                f"{r['again_p95']:.1f} | {r['again_p99']:.1f} | | |"
            )
    lines += [
        "",
        "| memories | load time | stack memory (PSS) | stack RSS summed | "
        "search while loading: p95 / max (n) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        during = (
            f"{r['during_load_p95']:.0f} / {r['during_load_max']:.0f} ms ({r['during_load_n']})"
            if r["during_load_n"]
            else "not sampled (loaded in an earlier run, `--data-dir`)"
        )
        lines.append(
            f"| {r['size']:,} | {r['load_seconds']:.0f} s | {r['pss_mb']:.0f} MiB | "
            f"{r['rss_mb']:.0f} MiB | {during} |"
        )
    lines += [
        "",
        "Memory with every part running, summed over all the stack's processes (Postgres and "
        "NATS included). PSS counts a page shared by several processes once; the RSS sum counts "
        "it in each, so it overstates (every Postgres backend counts the shared buffers it has "
        "touched).",
    ]
    lines += [
        "",
        "Inside retrieval, mean ms per search stage over the sequential runs (expand runs "
        "beside embed; keyword and vector follow embed, side by side; hydrate, graph and "
        "neighbours run concurrently; neighbour_vectors follows neighbours on its connection, "
        "reading only the vectors retrieval does not keep yet; context reads the vector leg's "
        "contextual vectors beside the keyword search; rerank_read reads the head's stored token "
        "vectors beside the rows, rerank encodes those of memories that keep none; coverage "
        "is off by default), and the 1-minute load average:",
        "",
        "| memories | " + " | ".join(STAGES) + " | load avg |",
        "|---:|" + "---:|" * (len(STAGES) + 1),
    ]
    for r in rows:
        cells = " | ".join(f"{r['stages'].get(s, 0.0):.1f}" for s in STAGES)
        lines.append(f"| {r['size']:,} | {cells} | {r['load_average']:.1f} |")
    lines += [
        "",
        "CPU per search by process (ms, user + system over all its threads, from the kernel's "
        "counters; Postgres sums its backends; client is the load generator itself):",
        "",
        "| memories | mode | " + " | ".join(PARTS) + " | stack total |",
        "|---:|---|" + "---:|" * (len(PARTS) + 1),
    ]
    modes = {"seq": "sequential", "c8": "8 clients", "again": "same queries again"}
    for r in rows:
        for mode, per_part in r["cpu"].items():
            cells = " | ".join(f"{per_part.get(p, 0.0):.1f}" for p in PARTS)
            total = sum(v for p, v in per_part.items() if p != "client")
            lines.append(f"| {r['size']:,} | {modes[mode]} | {cells} | {total:.1f} |")
    lines.append(END_MARK)
    return "\n".join(lines)


def write_report(path: Path, section: str) -> None:
    """Put `section` between the markers in `path`, keeping the rest of the file; a file
    without them gets the section right under its title."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else "# Search latency\n"
    if BEGIN_MARK in old and END_MARK in old:
        head, rest = old.split(BEGIN_MARK, 1)
        tail = rest.split(END_MARK, 1)[1]
        text = head + section + tail
    else:
        title, _, body = old.partition("\n")
        text = f"{title}\n\n{section}\n{body}"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--data-dir", type=Path, help="keep the stack's data here; resume loads")
    parser.add_argument("--load-only", action="store_true", help="load the corpus, measure nothing")
    parser.add_argument(
        "--stop-enrichment",
        action="store_true",
        help="stop the enrichment service while searches are timed (a settled store)",
    )
    parser.add_argument(
        "--repeat-queries",
        action="store_true",
        help="also time the sequential queries a second time (their vectors cached)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        progress = Progress(data_dir / "bench-progress.json" if args.data_dir else None)
        stack = Stack(StackConfig.with_free_ports(data_dir, postgres_fsync=False))
        stack.start(timeout=300)
        try:
            rows = asyncio.run(
                measure(
                    stack,
                    sorted(args.sizes),
                    args.repeats,
                    args.queries,
                    progress,
                    args.load_only,
                    args.stop_enrichment,
                    args.repeat_queries,
                )
            )
        finally:
            stack.stop()
    if args.load_only:
        print(f"loaded {progress.loaded:,} memories into {args.data_dir}")
        return
    if not rows:
        raise SystemExit("nothing was measured (see the messages above)")
    text = report(rows, args.repeats, args.queries)
    write_report(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
