"""Latency of memory_store and memory_search through MCP, next to the same calls over REST.

    .venv/bin/python tests/bench/mcp_latency.py [--gateway-url URL] [--requests 30]

Uses the stack at --gateway-url, or starts its own on free ports (as `exo up` does). Measures,
in one run and on one stack: REST (httpx straight to the gateway), MCP over stdio (`exo mcp`
launched by the SDK's stdio client, as a desktop agent does) and MCP over streamable HTTP
(`exo mcp --transport http`). Medians and p95 in milliseconds; writes
docs/benchmarks/mcp-latency.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from mcp import Client, StdioServerParameters

from exocortex.cli.stack import Stack, StackConfig

REPORT = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "mcp-latency.md"
EXO = str(Path(sys.executable).with_name("exo"))
TOPICS = [
    "the deploy pipeline promotes builds after integration tests",
    "session digests are stored as summaries tagged with the project",
    "Postgres is the source of truth and the indexes are projections",
    "retrieval fuses keyword and vector rankings with reciprocal rank fusion",
    "the dashboard groups memories by day and shows their tags",
]
QUERIES = ["how are builds promoted?", "what is the source of truth?", "how is ranking fused?"]


def content(i: int) -> str:
    # Unique per call, so every store is a real insert, not a dedup hit.
    return f"Note {i} ({uuid.uuid4().hex[:8]}): {TOPICS[i % len(TOPICS)]}."


async def timed(call: Callable[[int], Awaitable[Any]], n: int) -> list[float]:
    await call(-1)  # warm-up: connections, first-call imports
    out = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


async def rest(url: str, namespace: str, n: int) -> dict[str, list[float]]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as api:

        async def store(i: int) -> None:
            body = {"content": content(i), "namespace": namespace, "source": "api"}
            (await api.post("/api/memories", json=body)).raise_for_status()

        async def search(i: int) -> None:
            body = {"query": QUERIES[i % 3], "namespace": namespace, "include_linked": True}
            (await api.post("/api/memories/search", json=body)).raise_for_status()

        return {"store": await timed(store, n), "search": await timed(search, n)}


async def through_mcp(target: Any, namespace: str, n: int) -> dict[str, list[float]]:
    async with Client(target) as client:

        async def call(tool: str, args: dict[str, Any]) -> None:
            result = await client.call_tool(tool, args)
            if getattr(result, "is_error", False):
                raise RuntimeError(f"{tool} failed: {result}")

        async def store(i: int) -> None:
            await call("memory_store", {"content": content(i), "namespace": namespace})

        async def search(i: int) -> None:
            await call("memory_search", {"query": QUERIES[i % 3], "namespace": namespace})

        return {"store": await timed(store, n), "search": await timed(search, n)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(url: str, n: int) -> dict[str, dict[str, list[float]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXO_")}
    env |= {"EXO_MCP_GATEWAY_URL": url, "EXO_LOG_LEVEL": "warning"}
    namespace = f"bench-mcp-{uuid.uuid4().hex[:8]}"
    results = {"REST": await rest(url, namespace, n)}
    stdio = StdioServerParameters(command=EXO, args=["mcp"], env=env)
    results["MCP stdio"] = await through_mcp(stdio, namespace, n)
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        EXO, "mcp", "--transport", "http", "--port", str(port), env=env
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        results["MCP streamable HTTP"] = await through_mcp(
            f"http://127.0.0.1:{port}/mcp", namespace, n
        )
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), timeout=10)
    return results


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def report(results: dict[str, dict[str, list[float]]], n: int) -> str:
    lines = [
        "# MCP latency",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `tests/bench/mcp_latency.py`, "
        f"{n} sequential calls each after one warm-up, on one embedded stack (2 cores, shared "
        "with the stack itself). Milliseconds, client side, end to end.",
        "",
        "| path | store p50 | store p95 | search p50 | search p95 |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {statistics.median(r['store']):.1f} | {p95(r['store']):.1f} | "
            f"{statistics.median(r['search']):.1f} | {p95(r['search']):.1f} |"
        )
    base = results["REST"]
    lines += [
        "",
        "MCP overhead over REST (median): "
        + "; ".join(
            f"{name}: store +{statistics.median(r['store']) - statistics.median(base['store']):.1f}"
            f" ms, search +{statistics.median(r['search']) - statistics.median(base['search']):.1f}"
            " ms"
            for name, r in results.items()
            if name != "REST"
        )
        + ".",
        "",
        "A store returns once the memory is searchable (read-your-writes), so it includes the "
        "embedding and the wait for the index. `memory_search` in plain mode asks for the 1-hop "
        "linked section; the REST search is timed with the same `include_linked: true`.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateway-url")
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    stack = None
    url = args.gateway_url
    if not url:
        data_dir = Path(tempfile.mkdtemp(prefix="exo-bench-mcp-"))
        stack = Stack(StackConfig.with_free_ports(data_dir))
        stack.start(timeout=300)
        url = stack.gateway_url
    try:
        results = asyncio.run(measure(url, args.requests))
    finally:
        if stack is not None:
            stack.stop()
    text = report(results, args.requests)
    REPORT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
