"""LoCoMo retrieval benchmark through the public REST API.

    .venv/bin/python tests/bench/locomo.py [--url http://127.0.0.1:3210] [--data PATH]

Stores every dialogue turn of each conversation as one memory (one namespace per conversation,
content `<speaker> said, "<text>"` plus ` and shared <blip_caption>`), asks every question
through REST search in that namespace and reports recall@5/10/25 overall and per category, plus
store and search latency. The metric is the one in the data set's README: the share of a
question's evidence turns found among the top k results (a question without evidence counts 1).

Each conversation is stored twice by default: with its turns in order, as a conversation
happens, and in a random (seeded) order, where arrival order carries no meaning (`--order`).
Every configuration is reported on all conversations and on two splits: the conversations that
any default was tuned on (`--tune-samples`, conv-26 and conv-30) and the held-out rest.

Every row is reported by question type too (recall@10 of LoCoMo's five categories, tuned-on and
held-out, in each order). For quick runs, `--samples`, `--order` and `--rows` (and `--row` for a
setting not among the rows) narrow it; `--save-run FILE` records what was stored, and
`--stored FILE --url URL` searches it again on that stack without storing anything.

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
from reports import kept_by_hand  # type: ignore[import-not-found]

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
    "scoring.context_weight": "0",
    "scoring.quality_weight": "0",
    "scoring.goal_gated_weight": "0",
    "scoring.dated_weight": "0",
    "scoring.coverage_weight": "0",
    "scoring.expand_weight": "0",
    "scoring.feedback_weight": "0",
    "search.rerank_candidates": "0",
}
# Same-run baselines: each signal switched off, and each index alone, through the same REST
# search (settings patched live).
BASELINES = {
    # The first pass runs as each conversation is stored and enriched; every other row runs
    # after all of them, searching the same data again. This one shows the run-to-run spread.
    "defaults again, with the other rows": {},
    "without arrival neighbours": {"scoring.neighbour_weight": "0"},
    "with contextual vectors (weight 1)": {"scoring.context_weight": "1"},
    "with contextual vectors (weight 0.5)": {"scoring.context_weight": "0.5"},
    "without late-interaction re-scoring": {"search.rerank_candidates": "0"},
    "with coverage-aware ordering (weight 0.2, similarity 0.5)": {
        "scoring.coverage_weight": "0.2",
        "search.coverage_similarity": "0.5",
    },
    "without when-questions lifting dated memories": {"scoring.dated_weight": "0"},
    "with one-hop expansion (weight 0.05)": {"scoring.expand_weight": "0.05"},
    "with pseudo-relevance feedback (weight 0.05)": {"scoring.feedback_weight": "0.05"},
    "contextual vectors (weight 1) instead of arrival neighbours": {
        "scoring.neighbour_weight": "0",
        "scoring.context_weight": "1",
    },
    "neighbours without their coherence guard": {"search.neighbour_coherence_full": "0"},
    "without graph proximity": {"scoring.graph_weight": "0"},
    "without query expansion": {"search.query_expansion": "false"},
    "without boosts (recency, usage, valence, tags, quality, goals)": {
        "scoring.recency_weight": "0",
        "scoring.frequency_weight": "0",
        "scoring.usefulness_weight": "0",
        "scoring.valence_weight": "0",
        "scoring.tag_boost": "0",
        "scoring.quality_weight": "0",
        "scoring.goal_gated_weight": "0",
    },
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
DEFAULTS = "Exocortex (hybrid RRF, defaults)"
# The conversations the defaults were tuned on; the others are held out.
TUNE_SAMPLES = ("conv-26", "conv-30")
ORDERS = {"in-order": "turns in order", "shuffled": "turns shuffled"}
SETTINGS_TTL_SECONDS = 6.0


@dataclass
class Stats:
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    # The same values again under each question's type (LoCoMo's category).
    by_category: dict[int, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, k: int, value: float, category: int | None = None) -> None:
        self.recalls[k].append(value)
        if category is not None:
            self.by_category[category][k].append(value)

    def category(self, category: int) -> Stats:
        out = Stats()
        for k, values in self.by_category.get(category, {}).items():
            out.recalls[k].extend(values)
        return out

    def mean(self, k: int) -> float:
        values = self.recalls[k]
        return 100.0 * sum(values) / len(values) if values else 0.0

    def count(self) -> int:
        return len(self.recalls[KS[0]])

    @staticmethod
    def merged(parts: list[Stats]) -> Stats:
        out = Stats()
        for part in parts:
            for k, values in part.recalls.items():
                out.recalls[k].extend(values)
            for cat, by_k in part.by_category.items():
                for k, values in by_k.items():
                    out.by_category[cat][k].extend(values)
        return out


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


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


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


async def enriched(client: httpx.AsyncClient, memory_id: str, seconds: float = 600.0) -> None:
    """Wait until enrichment has finished with ``memory_id`` (it works in arrival order)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reply = await client.get(f"/api/memories/{memory_id}")
        if reply.status_code == 200 and reply.json().get("enrichment_status") == "done":
            return
        await asyncio.sleep(0.5)
    print(f"enrichment still busy with {memory_id} after {seconds:.0f} s; asking anyway")


async def ask(
    client: httpx.AsyncClient,
    sample: dict[str, Any],
    namespace: str,
    by_id: dict[str, set[str]],
    overall: Stats,
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
            overall.add(k, value, int(qa["category"]))

    await asyncio.gather(*(one(qa) for qa in sample["qa"]))


# Per conversation: a configuration's recall on each sample_id.
PerSample = dict[str, Stats]
# Order → (conversation → namespace, conversation → memory id → the dia_ids it stands for).
Runs = dict[str, tuple[dict[str, str], dict[str, dict[str, set[str]]]]]


async def ask_all(
    client: httpx.AsyncClient,
    data: list[dict[str, Any]],
    namespaces: dict[str, str],
    memory_maps: dict[str, dict[str, set[str]]],
    search_ms: list[float],
) -> PerSample:
    """Ask every question of every conversation once more, as the settings now stand."""
    out: PerSample = {}
    for sample in data:
        sid = sample["sample_id"]
        out[sid] = Stats()
        await ask(
            client,
            sample,
            namespaces[sid],
            memory_maps[sid],
            out[sid],
            search_ms,
            4,
        )
    return out


async def baseline(
    client: httpx.AsyncClient,
    data: list[dict[str, Any]],
    runs: Runs,
    patch: dict[str, str],
) -> dict[str, PerSample]:
    """Ask every question of every run (order → namespaces, memory maps) again with `patch`
    applied to the live settings, then restore them."""
    before = (await client.get("/api/settings")).json()
    if patch:
        (await client.patch("/api/settings", json=patch)).raise_for_status()
    try:
        await asyncio.sleep(SETTINGS_TTL_SECONDS)
        search_ms: list[float] = []
        results = {
            order: await ask_all(client, data, namespaces, maps, search_ms)
            for order, (namespaces, maps) in runs.items()
        }
        print(
            f"  search p50/p95 ms with {patch or 'the defaults'}: "
            f"{median(search_ms):.1f}/{percentile(search_ms, 95):.1f}",
            flush=True,
        )
        return results
    finally:
        # A key the settings table does not hold yet (a store migrated before the setting was
        # added) goes back to the default the schema gives for it.
        missing = [k for k in patch if k not in before]
        schema = (await client.get("/api/settings/schema")).json() if missing else {}
        restore = {k: str(before[k]) for k in patch if k in before} | {
            k: str(schema[k]["default"]) for k in missing if schema.get(k, {}).get("default")
        }
        if restore:
            (await client.patch("/api/settings", json=restore)).raise_for_status()
            await asyncio.sleep(SETTINGS_TTL_SECONDS)


@contextmanager
def running_stack(url: str | None) -> Iterator[str]:
    if url:
        yield url.rstrip("/")
        return
    import tempfile

    from exocortex.core.runtime.stack import Stack, StackConfig

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


def _cells(stats: Stats, bold: bool = False) -> list[str]:
    mark = "**" if bold else ""
    return [f"{mark}{stats.mean(k):.1f}{mark}" for k in KS]


def split_table(results: dict[str, PerSample], tune: set[str]) -> list[str]:
    """One row per configuration: recall on every conversation, on the tuning ones and on the
    held-out ones."""
    head = " | ".join(f"r@{k}" for k in KS)
    lines = [
        f"| | {head} | {head} | {head} | questions |",
        "|---|" + "---:|" * (3 * len(KS) + 1),
    ]
    for name, per_sample in results.items():
        every = Stats.merged(list(per_sample.values()))
        tuned = Stats.merged([v for k, v in per_sample.items() if k in tune])
        held = Stats.merged([v for k, v in per_sample.items() if k not in tune])
        bold = name == DEFAULTS
        cells = _cells(every, bold) + _cells(tuned) + _cells(held)
        label = f"**{name}**" if bold else name
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {every.count()} |")
    return lines


def type_table(results: dict[str, PerSample], tune: set[str], k: int = 10) -> list[str]:
    """One row per configuration: recall@k of each question type, on the tuning conversations
    and on the held-out ones (the number of questions of each type in the header)."""
    defaults = next(iter(results.values()))
    tuned_n = Stats.merged([v for s, v in defaults.items() if s in tune])
    held_n = Stats.merged([v for s, v in defaults.items() if s not in tune])
    head = [
        f"{CATEGORIES[c]} ({split.category(c).count()})"
        for split in (tuned_n, held_n)
        for c in CATEGORIES
    ]
    lines = [
        "| | " + " | ".join(head) + " |",
        "|---|" + "---:|" * len(head),
    ]
    for name, per_sample in results.items():
        tuned = Stats.merged([v for s, v in per_sample.items() if s in tune])
        held = Stats.merged([v for s, v in per_sample.items() if s not in tune])
        cells = [f"{split.category(c).mean(k):.1f}" for split in (tuned, held) for c in CATEGORIES]
        label = f"**{name}**" if name == DEFAULTS else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def report(
    results: dict[str, dict[str, PerSample]],
    store_ms: list[float],
    search_ms: list[float],
    settings: dict[str, str],
    samples: list[str],
    tune: set[str],
    elapsed: float,
    concurrency: int,
) -> str:
    """``results``: order → configuration → per-conversation recall."""
    held = [s for s in samples if s not in tune]
    lines = [
        "# LoCoMo retrieval benchmark",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench-locomo` "
        f"(`tests/bench/locomo.py`), {elapsed:.0f} s. Conversations: {', '.join(samples)}. "
        "Every turn stored and every question searched through the REST API, one namespace "
        "per conversation and order; the metric is the data set's (evidence turns among the "
        "top k; a question without evidence counts 1). Each row is the same stored data "
        "searched again with one thing changed (settings patched live).",
        "",
        f"Splits: *tuned on* {', '.join(sorted(tune & set(samples))) or 'none of these'} (the "
        "only conversations any default was chosen on); *held out* "
        f"{', '.join(held) or 'none'}.",
        "",
        "*Turns shuffled* stores each conversation's turns in a random order (seeded by its "
        "sample_id): arrival order then carries no meaning, and the arrival-neighbour signal "
        "must not cost anything there (its row against *without arrival neighbours*).",
    ]
    for order, configs in results.items():
        lines += [
            "",
            f"## {ORDERS[order].capitalize()}",
            "",
            "Columns: all conversations, tuned-on, held-out (recall@5/10/25 each).",
            "",
            *split_table(configs, tune),
            "",
            "Recall@10 by question type: tuned-on (first five columns), held-out (last five); "
            "the number of questions in brackets.",
            "",
            *type_table(configs, tune),
        ]
    lines += [
        "",
        "Reference (LoCoMo paper, all 10 conversations, 1986 questions):",
        "",
        "| | r@5 | r@10 | r@25 |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | " + " | ".join(f"{v:.1f}" for v in refs) + " |"
            for name, refs in REFERENCE.items()
        ),
    ]
    for order, configs in results.items():
        every = Stats.merged(list(configs[next(iter(configs))].values()))
        lines += [
            "",
            f"Per category ({ORDERS[order]}, defaults, all conversations):",
            "",
            "| category | recall@5 | recall@10 | recall@25 | questions |",
            "|---|---:|---:|---:|---:|",
        ]
        for cat in CATEGORIES:
            stats = every.category(cat)
            if stats.count():
                lines.append(
                    f"| {cat} {CATEGORIES[cat]} | "
                    + " | ".join(f"{stats.mean(k):.1f}" for k in KS)
                    + f" | {stats.count()} |"
                )
    lines += [
        "",
        "Latency through REST on this machine (2 cores, whole stack embedded):",
        "",
        "| | p50 ms | p95 ms | n |",
        "|---|---:|---:|---:|",
        *(
            [
                f"| store ({concurrency} at a time) | {median(store_ms):.1f} | "
                f"{percentile(store_ms, 95):.1f} | {len(store_ms)} |"
            ]
            if store_ms
            else []
        ),
        f"| search, limit 25 (4 concurrent) | {median(search_ms):.1f} | "
        f"{percentile(search_ms, 95):.1f} | {len(search_ms)} |",
        "",
        "Settings in effect (the product defaults; those chosen on LoCoMo were chosen on the "
        "tuned-on conversations only):",
        "",
        "```",
        *(f"{k} = {v}" for k, v in sorted(settings.items())),
        "```",
        "",
    ]
    return "\n".join(lines)


def chosen_rows(
    words: list[str] | None, extra: list[str], parser: argparse.ArgumentParser
) -> dict[str, dict[str, str]]:
    """The same-run rows to measure: the standard ones (those whose name contains one of
    ``words``, when given) and the ``NAME=KEY=VALUE,...`` rows given on the command line."""
    rows = {
        name: patch
        for name, patch in BASELINES.items()
        if words is None or any(w.lower() in name.lower() for w in words)
    }
    for spec in extra:
        name, _, settings = spec.partition("=")
        patch: dict[str, str] = {}
        for item in filter(None, settings.split(",")):
            key, sep, value = item.partition("=")
            if not sep:
                parser.error(f"--row {spec!r}: write NAME=KEY=VALUE[,KEY=VALUE]")
            patch[key.strip()] = value.strip()
        rows[name.strip()] = patch
    return rows


def save_run(path: Path, runs: Runs) -> None:
    """Order → conversation → its namespace and memory id → dia_ids, to search again later."""
    path.write_text(
        json.dumps(
            {
                order: {
                    sid: {
                        "namespace": namespaces[sid],
                        "memories": {m: sorted(d) for m, d in maps[sid].items()},
                    }
                    for sid in namespaces
                }
                for order, (namespaces, maps) in runs.items()
            }
        )
    )


def load_run(path: Path, orders: list[str], samples: list[str]) -> Runs:
    saved = json.loads(path.read_text())
    runs: Runs = {}
    for order in orders:
        if order not in saved:
            raise SystemExit(f"{path} holds no conversations stored {ORDERS[order]}")
        missing = [sid for sid in samples if sid not in saved[order]]
        if missing:
            raise SystemExit(f"{path} does not hold {', '.join(missing)} ({ORDERS[order]})")
        runs[order] = (
            {sid: saved[order][sid]["namespace"] for sid in samples},
            {sid: {m: set(d) for m, d in saved[order][sid]["memories"].items()} for sid in samples},
        )
    return runs


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
    parser.add_argument(
        "--tune-samples",
        nargs="*",
        default=list(TUNE_SAMPLES),
        help="the sample_ids defaults may be tuned on; the rest are reported as held out",
    )
    # Turns are stored one after another, as a conversation happens; more at once interleaves
    # them (arrival order is a search signal, see docs/retrieval.md).
    parser.add_argument("--concurrency", type=int, default=1, help="stores at once")
    parser.add_argument(
        "--order",
        choices=("in-order", "shuffled", "both"),
        default="both",
        help="store each conversation's turns in order, in a random (seeded) order, or both",
    )
    parser.add_argument(
        "--shuffle",
        action="store_true",
        help="the same as --order shuffled (arrival order without meaning)",
    )
    parser.add_argument("--out", type=Path, default=REPORT)
    parser.add_argument("--json", type=Path, help="also write raw numbers here")
    parser.add_argument("--reuse", help="namespace prefix of an earlier run to search again")
    parser.add_argument("--no-baselines", action="store_true", help="skip the same-run baselines")
    parser.add_argument(
        "--rows",
        nargs="*",
        help="only the same-run rows whose name contains one of these words (quick iterations)",
    )
    parser.add_argument(
        "--row",
        action="append",
        default=[],
        metavar="NAME=KEY=VALUE[,KEY=VALUE]",
        help="one more row: the stored data searched again with these settings patched",
    )
    parser.add_argument(
        "--save-run", type=Path, help="write the stored conversations' namespaces and ids here"
    )
    parser.add_argument(
        "--stored",
        type=Path,
        help="search the conversations an earlier run stored (its --save-run file) on the "
        "stack at --url again instead of storing them: every row, the defaults included, is "
        "the same stored data searched again",
    )
    args = parser.parse_args()
    if args.stored and not args.url:
        parser.error("--stored searches a running stack: give its --url")
    rows = chosen_rows(args.rows, args.row, parser)

    if args.data is None or not args.data.is_file():
        parser.error(f"give the LoCoMo JSON file with --data PATH or ${DATA_ENV}")
    data = json.loads(args.data.read_text())
    if args.samples:
        data = [d for d in data if d["sample_id"] in set(args.samples)]
    order_arg = "shuffled" if args.shuffle else args.order
    orders = list(ORDERS) if order_arg == "both" else [order_arg]
    tune = set(args.tune_samples)
    run_id = args.reuse or uuid.uuid4().hex[:8]
    store_ms: list[float] = []
    search_ms: list[float] = []
    results: dict[str, dict[str, PerSample]] = {order: {} for order in orders}
    runs: Runs = {}
    started = time.perf_counter()
    with running_stack(args.url) as url:
        async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
            if args.stored:
                runs = load_run(args.stored, orders, [d["sample_id"] for d in data])
                for order, (stored_namespaces, stored_maps) in runs.items():
                    results[order][DEFAULTS] = await ask_all(
                        client, data, stored_namespaces, stored_maps, search_ms
                    )
            # Contextual vectors are off by default; they are made here (search does not use
            # them unless a row says so) so the rows below can measure them on the same data.
            (
                await client.patch("/api/settings", json={"enrichment.context_vectors": "true"})
            ).raise_for_status()
            await asyncio.sleep(SETTINGS_TTL_SECONDS)
            for order in [] if args.stored else orders:
                namespaces: dict[str, str] = {}
                maps: dict[str, dict[str, set[str]]] = {}
                defaults: PerSample = {}
                first = order == orders[0]
                for sample in data:
                    sid = sample["sample_id"]
                    namespaces[sid] = f"locomo-{run_id}-{order}-{sid}"
                    maps[sid] = await store_conversation(
                        client,
                        sample,
                        namespaces[sid],
                        args.concurrency,
                        store_ms if first else [],
                        shuffle=order == "shuffled",
                    )
                    # Asked once enrichment is through with the conversation (its last turn
                    # enriched), as an agent asks later in its work: the contextual vectors and
                    # links it makes are in place.
                    await enriched(client, max(maps[sid]))
                    defaults[sid] = Stats()
                    await ask(
                        client,
                        sample,
                        namespaces[sid],
                        maps[sid],
                        defaults[sid],
                        search_ms if first else [],
                        4,
                    )
                    print(
                        f"{order} {sid}: {len(maps[sid])} memories, recall@10 "
                        f"{defaults[sid].mean(10):.1f}",
                        flush=True,
                    )
                results[order][DEFAULTS] = defaults
                runs[order] = (namespaces, maps)
            if args.save_run:
                save_run(args.save_run, runs)
            settings = await settings_snapshot(client)
            if not args.no_baselines:
                for name, patch in rows.items():
                    for order, per_sample in (await baseline(client, data, runs, patch)).items():
                        results[order][name] = per_sample
                    print(f"baseline done: {name}", flush=True)
    elapsed = time.perf_counter() - started
    text = report(
        results,
        store_ms,
        search_ms,
        settings,
        [d["sample_id"] for d in data],
        tune,
        elapsed,
        args.concurrency,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + kept_by_hand(args.out, "locomo.py"))
    print(text)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    order: {
                        name: {
                            sid: {
                                "all": {k: st.mean(k) for k in KS},
                                **{
                                    CATEGORIES[c]: {k: st.category(c).mean(k) for k in KS}
                                    for c in CATEGORIES
                                },
                            }
                            for sid, st in per_sample.items()
                        }
                        for name, per_sample in configs.items()
                    }
                    for order, configs in results.items()
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
