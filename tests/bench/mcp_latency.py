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

from exocortex.core.runtime.stack import Stack, StackConfig

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


Call = Callable[[str, int], Awaitable[Any]]


def rest_caller(api: httpx.AsyncClient, namespace: str) -> Call:
    async def call(tool: str, i: int) -> None:
        if tool == "store":
            body: dict[str, Any] = {"content": content(i), "namespace": namespace}
            (await api.post("/api/memories", json=body)).raise_for_status()
        else:
            body = {"query": QUERIES[i % 3], "namespace": namespace, "include_linked": True}
            (await api.post("/api/memories/search", json=body)).raise_for_status()

    return call


def mcp_caller(client: Client, namespace: str) -> Call:
    async def call(tool: str, i: int) -> None:
        args: dict[str, Any]
        if tool == "store":
            args = {"content": content(i), "namespace": namespace}
        else:
            args = {"query": QUERIES[i % 3], "namespace": namespace}
        result = await client.call_tool(f"memory_{tool}", args)
        if getattr(result, "is_error", False):
            raise RuntimeError(f"memory_{tool} failed: {result}")

    return call


async def interleaved(callers: dict[str, Call], n: int) -> dict[str, dict[str, list[float]]]:
    """Round-robin over the paths, call by call, so load drift on a shared machine hits every
    path alike."""
    out: dict[str, dict[str, list[float]]] = {name: {"store": [], "search": []} for name in callers}
    for tool in ("store", "search"):
        for call in callers.values():
            await call(tool, -1)  # warm-up: connections, first-call imports
        for i in range(n):
            for name, call in callers.items():
                start = time.perf_counter()
                await call(tool, i * len(callers) + len(out[name][tool]))
                out[name][tool].append((time.perf_counter() - start) * 1000)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def measure(url: str, n: int) -> dict[str, dict[str, list[float]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXO_")}
    env |= {"EXO_MCP_GATEWAY_URL": url, "EXO_LOG_LEVEL": "warning"}
    namespace = f"bench-mcp-{uuid.uuid4().hex[:8]}"
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        EXO, "mcp", "--transport", "http", "--port", str(port), env=env
    )
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        stdio = StdioServerParameters(command=EXO, args=["mcp"], env=env)
        async with (
            httpx.AsyncClient(base_url=url, timeout=60) as api,
            Client(stdio) as over_stdio,
            Client(f"http://127.0.0.1:{port}/mcp") as over_http,
        ):
            return await interleaved(
                {
                    "REST": rest_caller(api, namespace),
                    "MCP stdio": mcp_caller(over_stdio, namespace),
                    "MCP streamable HTTP": mcp_caller(over_http, namespace),
                },
                n,
            )
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), timeout=10)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def report(results: dict[str, dict[str, list[float]]], n: int) -> str:
    lines = [
        "# MCP latency",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `tests/bench/mcp_latency.py`, "
        f"{n} sequential calls per path after one warm-up, the paths interleaved call by call, "
        "on one embedded stack (2 cores, shared with the stack itself). Milliseconds, client "
        "side, end to end.",
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
            f"{name}: store {statistics.median(r['store']) - statistics.median(base['store']):+.1f}"
            f" ms, search {statistics.median(r['search']) - statistics.median(base['search']):+.1f}"
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
