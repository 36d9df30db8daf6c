"""Baseline of the embedded default: time for `exo up` to become healthy, resident memory of the
whole stack at rest, and the latency of one store and one search through REST.

    .venv/bin/python tests/bench/stack_baseline.py [--repeats 3] [--requests 50]

Starts its own stack on free ports in a temporary directory (exactly as `exo up` does) and
writes docs/benchmarks/stack-baseline.md. Timings are medians over repeats; the machine may be
noisy, so a trivial baseline (GET /health) is measured in the same run for comparison.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil

from exocortex.core.runtime.stack import Stack, StackConfig

REPORT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "stack-baseline.md"

SENTENCES = [
    "The deploy pipeline runs integration tests before promoting a build to staging.",
    "We store session digests as summaries tagged with the project name.",
    "Postgres is the source of truth; the indexes are projections.",
    "The dashboard groups memories by day and shows their tags.",
    "Retrieval fuses BM25 and vector rankings with reciprocal rank fusion.",
]
QUERIES = ["how are builds promoted?", "what is the source of truth?", "how is ranking fused?"]


def stack_processes(stack: Stack) -> list[psutil.Process]:
    """Every process of the stack: children, embedded Postgres (its backends too) and NATS."""
    me = psutil.Process()
    found = {proc.pid: proc for proc in me.children(recursive=True)}
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if proc.info["pid"] not in found and str(stack.config.data_dir) in cmd:
            found[proc.pid] = proc
            for child in proc.children(recursive=True):
                found.setdefault(child.pid, child)
    return list(found.values())


def _summed_mb(stack: Stack, measure: Callable[[psutil.Process], int]) -> float:
    total = 0
    for proc in stack_processes(stack):
        try:
            total += measure(proc)
        except psutil.NoSuchProcess:  # a Postgres backend that has just exited
            continue
    return total / 2**20


def stack_rss_mb(stack: Stack) -> float:
    """RSS summed over the stack's processes. Pages shared between processes count once per
    process: each Postgres backend counts the shared buffers it has touched."""
    return _summed_mb(stack, lambda proc: int(proc.memory_info().rss))


def _pss(proc: psutil.Process) -> int:
    try:
        return int(proc.memory_full_info().pss)
    except (psutil.AccessDenied, AttributeError):  # no readable memory map: its RSS
        return int(proc.memory_info().rss)


def stack_pss_mb(stack: Stack) -> float:
    """Proportional set size summed over the stack's processes: a shared page counts once in
    all, split between the processes sharing it, so this is what the stack takes from the
    machine."""
    return _summed_mb(stack, _pss)


def timed(fn: object, n: int) -> list[float]:
    out = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1000)
    return out


def run_once(requests: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(StackConfig.with_free_ports(Path(tmp)))
        start = time.perf_counter()
        stack.start()
        up_seconds = time.perf_counter() - start
        try:
            time.sleep(5)  # let start-up work settle before measuring "at rest"
            rss = stack_rss_mb(stack)
            with httpx.Client(base_url=stack.gateway_url, timeout=60) as client:
                health = timed(lambda _i: client.get("/health").raise_for_status(), requests)
                store = timed(
                    lambda i: client.post(
                        "/api/memories",
                        json={"content": f"{SENTENCES[i % len(SENTENCES)]} (note {i})"},
                    ).raise_for_status(),
                    requests,
                )
                search = timed(
                    lambda i: client.post(
                        "/api/memories/search", json={"query": QUERIES[i % len(QUERIES)]}
                    ).raise_for_status(),
                    requests,
                )
        finally:
            stack.stop()
    return {
        "up_s": up_seconds,
        "rss_mb": rss,
        "health_p50": statistics.median(health),
        "store_p50": statistics.median(store),
        "store_p95": statistics.quantiles(store, n=20)[18],
        "search_p50": statistics.median(search),
        "search_p95": statistics.quantiles(search, n=20)[18],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    runs = [run_once(args.requests) for _ in range(args.repeats)]
    med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    rows = [
        ("`exo up` until healthy", f"{med['up_s']:.1f} s"),
        ("RSS of the whole stack at rest", f"{med['rss_mb']:.0f} MiB"),
        ("GET /health p50 (baseline)", f"{med['health_p50']:.1f} ms"),
        (
            "store p50 / p95 (REST, incl. embedding and read-your-writes wait)",
            f"{med['store_p50']:.1f} / {med['store_p95']:.1f} ms",
        ),
        (
            "search p50 / p95 (REST, incl. query embedding)",
            f"{med['search_p50']:.1f} / {med['search_p95']:.1f} ms",
        ),
        ("store p50 / health p50", f"{med['store_p50'] / med['health_p50']:.1f}×"),
        ("search p50 / health p50", f"{med['search_p50'] / med['health_p50']:.1f}×"),
    ]
    table = "\n".join(f"| {name} | {value} |" for name, value in rows)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        f"""# Stack baseline (embedded default)

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `tests/bench/stack_baseline.py`:
{args.repeats} fresh stacks, {args.requests} sequential requests of each kind per stack, medians
over the stacks. Small store (empty namespace) — see the search-latency benchmark for 10k/100k.
{_export_note()}

| metric | value |
|---|---|
{table}
"""
    )
    print(REPORT.read_text())


def _export_note() -> str:
    """A fresh data directory exports the model to ONNX on its first start (torch is loaded
    for it once); later starts of the same installation reuse the export."""
    if os.environ.get("EXO_EMBEDDING_CACHE_DIR"):
        return (
            "The stacks shared one ONNX export (`EXO_EMBEDDING_CACHE_DIR`): start time and RSS "
            "are those of every start after a user's first."
        )
    return (
        "Each stack exported the model to ONNX on start (a user's first start): start time and "
        "RSS include that, and the torch it loads."
    )


if __name__ == "__main__":
    main()
