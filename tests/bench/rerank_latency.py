"""Search latency and CPU with late-interaction re-scoring on and off, through REST, on one stack.

    nice -n 19 .venv/bin/python tests/bench/rerank_latency.py [--size 10000] [--rounds 6]
        [--queries 100] [--clients 1] [--encoded]

Starts its own stack in a temporary directory, imports the synthetic corpus of
`search_latency.py`, deletes the token vectors the import kept (as an upgraded store's older
memories have none), runs the `repair` job to make them again for all of them (its time is the
backfill's), stops the enrichment service (a settled store), and then times sequential searches
in alternating rounds: `search.rerank_candidates` 0 and 20, the order of the two swapped every
round, each round with queries new to the service (each search pays for its query embedding).
Reports the medians over rounds of each mode's p50/p95 and the stack's CPU per search (every
process, the client included). `--clients N` sends each round's queries from N clients at once
instead. With `--encoded` a second phase deletes the stored token vectors and restarts retrieval
(its cache emptied), then alternates off with on again: re-scoring as it was before token
vectors were kept (the head encoded at search time).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import SETTINGS_TTL_SECONDS, CpuTimes, Timed, corpus, load, pct, queries

from exocortex.core.runtime.stack import Stack, StackConfig


async def _set(client: httpx.AsyncClient, candidates: int) -> None:
    reply = await client.patch("/api/settings", json={"search.rerank_candidates": str(candidates)})
    reply.raise_for_status()
    await asyncio.sleep(SETTINGS_TTL_SECONDS)


async def _backfill(client: httpx.AsyncClient) -> dict[str, Any]:
    began = time.perf_counter()
    reply = await client.post(
        "/api/maintenance/jobs/repair/run",
        json={
            "wait_seconds": 5,
            "params": {"reembed": False, "prune_outbox_days": 0, "limit": 1_000_000},
        },
    )
    reply.raise_for_status()
    run = reply.json()
    while run["status"] in ("queued", "running"):
        await asyncio.sleep(2)
        run = (await client.get(f"/api/maintenance/jobs/runs/{run['id']}")).json()
    if run["status"] != "succeeded":
        raise RuntimeError(run.get("error"))
    return {**run["report"]["tokens"], "seconds": time.perf_counter() - began}


async def _rounds(
    stack: Stack,
    client: httpx.AsyncClient,
    modes: dict[str, int],
    rounds: int,
    n: int,
    seed: int,
    clients: int = 1,
) -> dict[str, dict[str, float]]:
    timed = Timed(stack.gateway_url)
    p50: dict[str, list[float]] = {m: [] for m in modes}
    p95: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    names = list(modes)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            await _set(client, modes[name])
            await timed.sequential(queries(5, seed=seed + 7_000 + r))  # warm-up, not measured
            times = CpuTimes(stack)
            times.start()
            asked = queries(n, seed=seed + 100 * r + len(name))
            values = await (
                timed.concurrent(asked, clients) if clients > 1 else timed.sequential(asked)
            )
            times.stop(len(values))
            p50[name].append(pct(values, 50))
            p95[name].append(pct(values, 95))
            cpu[name].append(sum(times.ms_per_search().values()))
            print(
                f"round {r} {name}: p50 {p50[name][-1]:.1f} p95 {p95[name][-1]:.1f} ms, "
                f"cpu {cpu[name][-1]:.1f} ms/search",
                flush=True,
            )
    return {
        m: {
            "p50": statistics.median(p50[m]),
            "p95": statistics.median(p95[m]),
            "cpu": statistics.median(cpu[m]),
        }
        for m in modes
    }


async def run(
    stack: Stack, size: int, rounds: int, n: int, encoded: bool, clients: int = 1
) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=600) as client:
        began = time.perf_counter()
        await load(client, corpus(size))
        print(f"imported {size:,} in {time.perf_counter() - began:.0f} s", flush=True)
        with psycopg.connect(stack.database_url, autocommit=True) as conn:
            conn.execute("DELETE FROM memory_tokens")
        backfill = await _backfill(client)
        print(f"token vectors kept by the repair job: {backfill}", flush=True)
        stack.stop_part("enrichment")
        await asyncio.sleep(20)  # the vector engine's idle optimizer indexes the new points
        result = await _rounds(
            stack, client, {"off": 0, "on": 20}, rounds, n, seed=size, clients=clients
        )
        if encoded:
            with psycopg.connect(stack.database_url, autocommit=True) as conn:
                conn.execute("DELETE FROM memory_tokens")
            stack.stop_part("retrieval")
            stack.start_part("retrieval")
            await _wait_ready(client)
            await asyncio.sleep(20)
            again = await _rounds(
                stack, client, {"off ": 0, "on, encoded": 20}, rounds, n, seed=size + 50_000
            )
            result |= again
        await _set(client, 0)
    print(
        f"\n{size:,} memories, {rounds} alternating rounds of {n} new queries, "
        f"{clients} client(s) (medians)"
    )
    print("| re-scoring | p50 ms | p95 ms | CPU ms/search |")
    print("|---|---|---|---|")
    for name, row in result.items():
        print(f"| {name} | {row['p50']:.1f} | {row['p95']:.1f} | {row['cpu']:.1f} |")


async def _wait_ready(client: httpx.AsyncClient, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reply = await client.post(
            "/api/memories/search", json={"query": "ready?", "namespace": "bench"}
        )
        if reply.status_code == 200:
            return
        await asyncio.sleep(1)
    raise RuntimeError("retrieval did not come back")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--encoded", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(StackConfig.with_free_ports(Path(tmp), postgres_fsync=False))
        stack.start(timeout=300)
        try:
            asyncio.run(
                run(stack, args.size, args.rounds, args.queries, args.encoded, args.clients)
            )
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
