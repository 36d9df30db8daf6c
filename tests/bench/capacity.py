"""What a store costs per memory, measured, for the capacity figures of docs/scaling.md.

    .venv/bin/python tests/bench/capacity.py [--sizes 10000 100000]

Starts its own stack (as `exo up` does, maintenance schedule off), imports the search
benchmark's synthetic notes through REST up to each size, waits for enrichment to finish (or
for --enrichment-timeout), and measures on disk and in memory: the Postgres database and its
largest tables, the vector index (Qdrant Edge) and the keyword index (tantivy) directories, the
event stream, and the retrieval process (RSS and PSS). Then, in this process, the embedding
model's throughput on ONNX Runtime with one and two threads (texts a second, the store path's
batch size), the figure behind "embedding throughput per core".

Writes its table into docs/benchmarks/capacity.md between the `bench:latest` markers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from maintenance_jobs import enrichment_drained, write_report
from search_latency import corpus, load, stored_memories

from exocortex.core.runtime.stack import Stack, StackConfig

REPORT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "capacity.md"
MiB = 2**20


@dataclass
class Sizes:
    memories: int
    enrichment_done: bool
    postgres: int
    tables: list[tuple[str, int]]
    vector_index: int
    keyword_index: int
    stream: int
    retrieval_rss: int
    retrieval_pss: int


def tree_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                # Blocks in use, not the apparent size: the vector engine sizes its files
                # ahead (sparse) and grows into them.
                total += (Path(root) / name).stat().st_blocks * 512
            except FileNotFoundError:  # a segment merged away meanwhile
                continue
    return total


def postgres_sizes(database_url: str) -> tuple[int, list[tuple[str, int]]]:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        db = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        tables = conn.execute(
            "SELECT relname, pg_total_relation_size(relid) FROM pg_statio_user_tables "
            "ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
    return (int(db[0]) if db else 0), [(str(r[0]), int(r[1])) for r in tables]


def measure_sizes(stack: Stack, memories: int, enrichment_done: bool) -> Sizes:
    db, tables = postgres_sizes(stack.database_url)
    indexes = stack.config.data_dir / "indexes"
    proc = psutil.Process(stack.process("retrieval").pid)
    try:
        pss = int(proc.memory_full_info().pss)
    except (psutil.AccessDenied, AttributeError):
        pss = int(proc.memory_info().rss)
    return Sizes(
        memories=memories,
        enrichment_done=enrichment_done,
        postgres=db,
        tables=tables,
        vector_index=tree_bytes(indexes / "qdrant"),
        keyword_index=tree_bytes(indexes / "tantivy"),
        stream=tree_bytes(stack.config.data_dir / "nats"),
        retrieval_rss=int(proc.memory_info().rss),
        retrieval_pss=pss,
    )


async def grow(stack: Stack, sizes: list[int], enrichment_timeout: float) -> list[Sizes]:
    out: list[Sizes] = []
    items = corpus(max(sizes), seed=5)
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=600.0) as client:
        loaded = 0
        for size in sizes:
            start = time.monotonic()
            await load(client, items[loaded:size])
            loaded = size
            print(f"{size:,} imported in {time.monotonic() - start:.0f} s", flush=True)
            waited = await enrichment_drained(stack, enrichment_timeout)
            done = waited < enrichment_timeout
            print(f"enrichment {'finished' if done else 'still working'} ({waited:.0f} s)")
            stored = await stored_memories(client)
            out.append(await asyncio.to_thread(measure_sizes, stack, stored, done))
    return out


def embedding_throughput(texts: list[str], threads: int, repeats: int = 3) -> float:
    """Texts a second through the embedding model on ONNX Runtime (full precision, as the
    embedding service runs it), in batches of 64; the median over repeats."""
    from exocortex.encoders import OnnxEncoder, bundled_model_path, read_pipeline

    path = bundled_model_path()
    pipeline = read_pipeline(path)
    assert pipeline is not None
    cache = Path(tempfile.gettempdir()) / "exo-bench-onnx"
    encoder = OnnxEncoder(path, pipeline, threads=threads, cache_dir=cache)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(0, len(texts), 64):
            encoder.encode(texts[i : i + 64])
        rates.append(len(texts) / (time.perf_counter() - start))
    return statistics.median(rates)


def per_memory(value: int, memories: int) -> str:
    return f"{value / memories:,.0f}"


def report(rows: list[Sizes], rates: dict[int, float]) -> str:
    lines = [
        "| memories | enrichment | Postgres MiB (B/memory) | vector index MiB (B/memory) "
        "| keyword index MiB (B/memory) | event stream MiB | retrieval RSS / PSS MiB |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.memories:,} | {'finished' if r.enrichment_done else 'still working'} "
            f"| {r.postgres / MiB:,.0f} ({per_memory(r.postgres, r.memories)}) "
            f"| {r.vector_index / MiB:,.0f} ({per_memory(r.vector_index, r.memories)}) "
            f"| {r.keyword_index / MiB:,.0f} ({per_memory(r.keyword_index, r.memories)}) "
            f"| {r.stream / MiB:,.1f} "
            f"| {r.retrieval_rss / MiB:,.0f} / {r.retrieval_pss / MiB:,.0f} |"
        )
    last = rows[-1]
    lines += [
        "",
        f"Largest Postgres tables at {last.memories:,} memories (with their indexes):",
        "",
        "| table | MiB | bytes a memory |",
        "|---|---:|---:|",
        *(
            f"| `{name}` | {size / MiB:,.1f} | {per_memory(size, last.memories)} |"
            for name, size in last.tables
        ),
        "",
        "Embedding model (all-MiniLM-L6-v2 on ONNX Runtime, full precision, batches of 64, "
        "the synthetic notes of about 20 words), texts a second, median of 3:",
        "",
        "| threads | texts/s |",
        "|---:|---:|",
        *(f"| {threads} | {rate:,.0f} |" for threads, rate in sorted(rates.items())),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--enrichment-timeout", type=float, default=3600.0)
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(
            StackConfig.with_free_ports(
                Path(tmp), postgres_fsync=False, extra_env={"EXO_MAINTENANCE_SCHEDULER": "false"}
            )
        )
        stack.start(timeout=300)
        try:
            rows = asyncio.run(grow(stack, sorted(args.sizes), args.enrichment_timeout))
        finally:
            stack.stop()
    texts = [item["content"] for item in corpus(2_000, seed=9)]
    rates = {threads: embedding_throughput(texts, threads) for threads in (1, 2)}
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    section = f"Run of {when} (load average at the end {load_avg}).\n\n{report(rows, rates)}"
    write_report(args.out, section, title="Capacity")
    print(section)


if __name__ == "__main__":
    main()
