"""LoCoMo retrieval benchmark through the public REST API.

    .venv/bin/python tests/bench/locomo.py [--url http://127.0.0.1:3210] [--data PATH]

Stores every dialogue turn of each conversation as one memory (one namespace per conversation,
content `<speaker> said, "<text>"` plus ` and shared <blip_caption>`), asks every question
through REST search in that namespace and reports recall@5/10/25 overall and per category, plus
store and search latency. The metric is the one in the data set's README: the share of a
question's evidence turns found among the top k results (a question without evidence counts 1).

Without --url it starts its own stack (as `exo up` does) in a temporary directory. Searches use
compact mode so the run does not feed access counts back into its own later rankings (each
question is answered as if it were the first). The data file is evaluation data: it is read from
outside the product and never stored with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
# The LoCoMo conversations (locomo10.json from the LoCoMo repository, or a subset of it). The data
# set is for evaluation only and is never shipped with the product: point at your copy.
DATA_ENV = "EXO_LOCOMO_DATA"
REPORT = ROOT / "docs" / "benchmarks" / "locomo.md"
KS = (5, 10, 25)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
REFERENCE = {"dense (DRAGON)": (56.7, 66.2, 76.7), "BM25": (52.3, 59.3, 67.5)}
_NO_BOOSTS = {
    "scoring.recency_weight": "0",
    "scoring.frequency_weight": "0",
    "scoring.usefulness_weight": "0",
    "scoring.valence_weight": "0",
    "scoring.tag_boost": "0",
    "scoring.graph_weight": "0",
    "scoring.neighbour_weight": "0",
}
# Same-run baselines: each index alone, through the same REST search (settings patched live).
BASELINES = {
    "hybrid without arrival neighbours": {"scoring.neighbour_weight": "0"},
    "vector index alone (all-MiniLM-L6-v2)": {
        **_NO_BOOSTS,
        "scoring.vector_weight": "1",
        "scoring.fts_weight": "0",
    },
    "keyword index alone (tantivy BM25)": {
        **_NO_BOOSTS,
        "scoring.vector_weight": "0",
        "scoring.fts_weight": "1",
    },
}
SETTINGS_TTL_SECONDS = 6.0


@dataclass
class Stats:
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, k: int, value: float) -> None:
        self.recalls[k].append(value)

    def mean(self, k: int) -> float:
        values = self.recalls[k]
        return 100.0 * sum(values) / len(values) if values else 0.0

    def count(self) -> int:
        return len(self.recalls[KS[0]])


def turn_content(turn: dict[str, Any]) -> str:
    text = f'{turn["speaker"]} said, "{turn["text"]}"'
    if turn.get("blip_caption"):
        text += f" and shared {turn['blip_caption']}"
    return text


def turns(conversation: dict[str, Any]) -> Iterator[dict[str, Any]]:
    sessions = sorted(
        (k for k in conversation if re.fullmatch(r"session_\d+", k)),
        key=lambda k: int(k.split("_")[1]),
    )
    for key in sessions:
        yield from conversation[key]


def evidence_ids(qa: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for item in qa.get("evidence") or []:
        for part in re.split(r"[;,]", str(item)):
            part = part.strip()
            if part:
                ids.add(part)
    return ids


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


async def store_conversation(
    client: httpx.AsyncClient,
    sample: dict[str, Any],
    namespace: str,
    concurrency: int,
    store_ms: list[float],
    shuffle: bool = False,
) -> dict[str, set[str]]:
    """Memory id → the dia_ids it stands for (identical turns are deduplicated into one).
    ``shuffle`` stores the turns in a random (seeded) order instead of the conversation's."""
    by_id: dict[str, set[str]] = defaultdict(set)
    gate = asyncio.Semaphore(concurrency)

    async def one(turn: dict[str, Any]) -> None:
        async with gate:
            start = time.perf_counter()
            reply = await client.post(
                "/api/memories",
                json={
                    "content": turn_content(turn),
                    "namespace": namespace,
                    "content_type": "conversation",
                },
            )
            store_ms.append((time.perf_counter() - start) * 1000)
            reply.raise_for_status()
            by_id[reply.json()["id"]].add(turn["dia_id"])

    ordered = list(turns(sample["conversation"]))
    if shuffle:
        random.Random(sample["sample_id"]).shuffle(ordered)
    await asyncio.gather(*(one(t) for t in ordered))
    return by_id


async def ask(
    client: httpx.AsyncClient,
    sample: dict[str, Any],
    namespace: str,
    by_id: dict[str, set[str]],
    overall: Stats,
    per_category: dict[int, Stats],
    search_ms: list[float],
    concurrency: int,
) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(qa: dict[str, Any]) -> None:
        async with gate:
            start = time.perf_counter()
            reply = await client.post(
                "/api/memories/search",
                json={
                    "query": qa["question"],
                    "namespace": namespace,
                    "limit": max(KS),
                    "compact": True,
                },
            )
            search_ms.append((time.perf_counter() - start) * 1000)
            reply.raise_for_status()
        # The top k *results*, as the data set's metric says: a memory that dedup folded several
        # turns into is one result and finds each of them.
        results = [by_id.get(r["id"], set()) for r in reply.json()["results"]]
        wanted = evidence_ids(qa)
        for k in KS:
            top = set().union(*results[:k])
            value = len(wanted & top) / len(wanted) if wanted else 1.0
            overall.add(k, value)
            per_category[int(qa["category"])].add(k, value)

    await asyncio.gather(*(one(qa) for qa in sample["qa"]))


async def baseline(
    client: httpx.AsyncClient,
    data: list[dict[str, Any]],
    run_id: str,
    memory_maps: dict[str, dict[str, set[str]]],
    patch: dict[str, str],
) -> Stats:
    """Ask every question again with `patch` applied to the live settings, then restore them."""
    before = (await client.get("/api/settings")).json()
    (await client.patch("/api/settings", json=patch)).raise_for_status()
    try:
        await asyncio.sleep(SETTINGS_TTL_SECONDS)
        stats: Stats = Stats()
        per_category: dict[int, Stats] = defaultdict(Stats)
        for sample in data:
            namespace = f"locomo-{run_id}-{sample['sample_id']}"
            await ask(
                client,
                sample,
                namespace,
                memory_maps[sample["sample_id"]],
                stats,
                per_category,
                [],
                4,
            )
        return stats
    finally:
        restore = {k: str(before[k]) for k in patch if k in before}
        (await client.patch("/api/settings", json=restore)).raise_for_status()
        await asyncio.sleep(SETTINGS_TTL_SECONDS)


@contextmanager
def running_stack(url: str | None) -> Iterator[str]:
    if url:
        yield url.rstrip("/")
        return
    import tempfile

    from exocortex.cli.stack import Stack, StackConfig

    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(StackConfig.with_free_ports(Path(tmp), postgres_fsync=False))
        stack.start(timeout=300)
        try:
            yield stack.gateway_url
        finally:
            stack.stop()


async def settings_snapshot(client: httpx.AsyncClient) -> dict[str, str]:
    reply = await client.get("/api/settings")
    if reply.status_code != 200:
        return {}
    body = reply.json()
    values = body.get("settings", body) if isinstance(body, dict) else {}
    return {k: str(v) for k, v in values.items() if k.startswith(("scoring.", "search."))}


def report(
    baselines: dict[str, Stats],
    overall: Stats,
    per_category: dict[int, Stats],
    store_ms: list[float],
    search_ms: list[float],
    settings: dict[str, str],
    samples: list[str],
    elapsed: float,
    store_mode: str,
) -> str:
    lines = [
        "# LoCoMo retrieval benchmark",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench-locomo` "
        f"(`tests/bench/locomo.py`), {elapsed:.0f} s. Conversations: {', '.join(samples)} "
        f"({overall.count()} questions). Every turn stored and every question searched through "
        "the REST API, one namespace per conversation; the metric is the data set's (evidence "
        "turns among the top k; a question without evidence counts 1).",
        "",
        "| | recall@5 | recall@10 | recall@25 | questions |",
        "|---|---:|---:|---:|---:|",
        "| **Exocortex (hybrid RRF, defaults)** | "
        + " | ".join(f"**{overall.mean(k):.1f}**" for k in KS)
        + f" | {overall.count()} |",
    ]
    for name, stats in baselines.items():
        lines.append(
            f"| {name}, same run | "
            + " | ".join(f"{stats.mean(k):.1f}" for k in KS)
            + f" | {stats.count()} |"
        )
    for name, refs in REFERENCE.items():
        lines.append(
            f"| {name}, LoCoMo paper (all 10 conversations) | "
            + " | ".join(f"{v:.1f}" for v in refs)
            + " | 1986 |"
        )
    lines += [
        "",
        "Per category:",
        "",
        "| category | recall@5 | recall@10 | recall@25 | questions |",
    ]
    lines.append("|---|---:|---:|---:|---:|")
    for cat in sorted(per_category):
        s = per_category[cat]
        lines.append(
            f"| {cat} {CATEGORIES.get(cat, '')} | "
            + " | ".join(f"{s.mean(k):.1f}" for k in KS)
            + f" | {s.count()} |"
        )
    lines += [
        "",
        "Latency through REST on this machine (2 cores, whole stack embedded):",
        "",
        "| | p50 ms | p95 ms | n |",
        "|---|---:|---:|---:|",
        f"| store ({store_mode}) | "
        f"{statistics.median(store_ms):.1f} | "
        f"{percentile(store_ms, 95):.1f} | {len(store_ms)} |",
        f"| search, limit 25 (4 concurrent) | {statistics.median(search_ms):.1f} | "
        f"{percentile(search_ms, 95):.1f} | {len(search_ms)} |",
        "",
        "Settings in effect (the product defaults; nothing is tuned per data set):",
        "",
        "```",
        *(f"{k} = {v}" for k, v in sorted(settings.items())),
        "```",
        "",
    ]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running gateway (default: start a stack)")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ[DATA_ENV]) if os.environ.get(DATA_ENV) else None,
        help=f"the LoCoMo JSON file (default: ${DATA_ENV})",
    )
    parser.add_argument("--samples", nargs="*", help="only these sample_ids")
    # Turns are stored one after another, as a conversation happens; more at once interleaves
    # them (arrival order is a search signal, see docs/retrieval.md).
    parser.add_argument("--concurrency", type=int, default=1, help="stores at once")
    parser.add_argument(
        "--shuffle",
        action="store_true",
        help="store each conversation's turns in a random order (arrival order without meaning)",
    )
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--json", type=Path, help="also write raw numbers here")
    parser.add_argument("--reuse", help="namespace prefix of an earlier run to search again")
    parser.add_argument("--no-baselines", action="store_true", help="skip the same-run baselines")
    args = parser.parse_args()

    if args.data is None or not args.data.is_file():
        parser.error(f"give the LoCoMo JSON file with --data PATH or ${DATA_ENV}")
    data = json.loads(args.data.read_text())
    if args.samples:
        data = [d for d in data if d["sample_id"] in set(args.samples)]
    run_id = args.reuse or uuid.uuid4().hex[:8]
    overall: Stats = Stats()
    per_category: dict[int, Stats] = defaultdict(Stats)
    store_ms: list[float] = []
    search_ms: list[float] = []
    memory_maps: dict[str, dict[str, set[str]]] = {}
    started = time.perf_counter()
    with running_stack(args.url) as url:
        async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
            for sample in data:
                namespace = f"locomo-{run_id}-{sample['sample_id']}"
                by_id = await store_conversation(
                    client, sample, namespace, args.concurrency, store_ms, args.shuffle
                )
                memory_maps[sample["sample_id"]] = by_id
                await ask(client, sample, namespace, by_id, overall, per_category, search_ms, 4)
                print(
                    f"{sample['sample_id']}: {len(by_id)} memories, recall@10 so far "
                    f"{overall.mean(10):.1f}",
                    flush=True,
                )
            settings = await settings_snapshot(client)
            baselines: dict[str, Stats] = {}
            if not args.no_baselines:
                for name, patch in BASELINES.items():
                    baselines[name] = await baseline(client, data, run_id, memory_maps, patch)
    elapsed = time.perf_counter() - started
    text = report(
        baselines,
        overall,
        per_category,
        store_ms,
        search_ms,
        settings,
        [d["sample_id"] for d in data],
        elapsed,
        f"{args.concurrency} at a time, turns {'shuffled' if args.shuffle else 'in order'}",
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "overall": {k: overall.mean(k) for k in KS},
                    "per_category": {
                        c: {k: s.mean(k) for k in KS} for c, s in per_category.items()
                    },
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
