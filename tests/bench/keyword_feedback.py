"""Query-side pseudo-relevance feedback on the keyword leg, measured on LoCoMo before any of it
goes into the product.

    .venv/bin/python tests/bench/keyword_feedback.py --data PATH [--tune-samples conv-26 conv-30]

Runs the product's keyword engine (`TantivyKeywordIndex`, the embedded default: the same schema,
stemming and stop words) in-process over each conversation's turns, stored as `make
bench-locomo` stores them, and asks every question with the keyword leg alone:

* *plain*: the query as the product sends it;
* *re-query*: the query plus the `terms` most distinctive words (tf·idf, stop words and the
  query's own words left out) of its top `docs` hits, searched again (RM3-style feedback);
* *fused*: the plain and re-queried lists fused by reciprocal rank (k 5, the feedback list at half
  weight), so feedback can only add candidates behind strong direct hits.

Reports recall@5/10/25 on the tuned-on and the held-out conversations (the split of
tests/bench/locomo.py). Nothing in it reads LoCoMo's structure beyond what the harness stores: the
feedback words come from the stored text only. The numbers are in docs/benchmarks/locomo.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from exocortex.indexes._text import ENGLISH_STOPWORDS
from exocortex.indexes.base import IndexDocument, IndexFilter
from exocortex.indexes.tantivy_index import TantivyKeywordIndex

sys.path.insert(0, str(Path(__file__).parent))
from locomo import (  # type: ignore[import-not-found]
    KS,
    TUNE_SAMPLES,
    evidence_ids,
    turn_content,
    turns,
)

NAMESPACE = "bench"
RRF_K = 5
FEEDBACK_WEIGHT = 0.5
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Variant:
    name: str
    docs: int = 0
    terms: int = 0
    fused: bool = False


VARIANTS = (
    Variant("plain"),
    Variant("re-query, 3 docs, 5 terms", 3, 5),
    Variant("re-query, 3 docs, 10 terms", 3, 10),
    Variant("re-query, 5 docs, 10 terms", 5, 10),
    Variant("fused, 3 docs, 5 terms", 3, 5, fused=True),
    Variant("fused, 3 docs, 10 terms", 3, 10, fused=True),
)


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in ENGLISH_STOPWORDS]


def feedback_terms(
    query: str, top_texts: list[str], document_frequency: Counter[str], total: int, limit: int
) -> list[str]:
    asked = set(content_words(query))
    weight: dict[str, float] = defaultdict(float)
    for text in top_texts:
        for word, tf in Counter(content_words(text)).items():
            if word not in asked:
                weight[word] += tf * math.log(total / (1 + document_frequency[word]))
    return sorted(weight, key=lambda word: -weight[word])[:limit]


def fuse(first: list[str], second: list[str]) -> list[str]:
    score: dict[str, float] = defaultdict(float)
    for rank, memory_id in enumerate(first):
        score[memory_id] += 1 / (RRF_K + rank + 1)
    for rank, memory_id in enumerate(second):
        score[memory_id] += FEEDBACK_WEIGHT / (RRF_K + rank + 1)
    return sorted(score, key=lambda memory_id: -score[memory_id])


async def recall_per_question(sample: dict[str, Any], variant: Variant) -> dict[int, list[float]]:
    texts = {t["dia_id"]: turn_content(t) for t in turns(sample["conversation"])}
    document_frequency: Counter[str] = Counter()
    for text in texts.values():
        document_frequency.update(set(content_words(text)))
    now = datetime.now(UTC)
    flt = IndexFilter(namespace=NAMESPACE)
    out: dict[int, list[float]] = {k: [] for k in KS}
    with tempfile.TemporaryDirectory(prefix="exo-kw-") as directory:
        index = TantivyKeywordIndex(Path(directory))
        await index.upsert(
            [
                IndexDocument(i, 1, NAMESPACE, "conversation", "api", (), now, 0.5, False, None, c)
                for i, c in texts.items()
            ]
        )
        await index.flush()
        for qa in sample["qa"]:
            question = qa["question"]
            ranked = [h.memory_id for h in await index.search(question, max(KS), flt)]
            if variant.docs:
                extra = feedback_terms(
                    question,
                    [texts[i] for i in ranked[: variant.docs]],
                    document_frequency,
                    len(texts),
                    variant.terms,
                )
                again = await index.search(f"{question} {' '.join(extra)}", max(KS), flt)
                requeried = [h.memory_id for h in again]
                ranked = fuse(ranked, requeried) if variant.fused else requeried
            wanted = evidence_ids(qa)
            for k in KS:
                found = len(wanted & set(ranked[:k])) / len(wanted) if wanted else 1.0
                out[k].append(found)
    return out


def cells(per_sample: dict[str, dict[int, list[float]]], samples: list[str]) -> str:
    values = {k: [v for s in samples for v in per_sample[s][k]] for k in KS}
    return " | ".join(f"{100 * sum(v) / len(v):.1f}" for v in values.values())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the LoCoMo JSON file")
    parser.add_argument("--tune-samples", nargs="*", default=list(TUNE_SAMPLES))
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    tuned = [d["sample_id"] for d in data if d["sample_id"] in set(args.tune_samples)]
    held = [d["sample_id"] for d in data if d["sample_id"] not in set(args.tune_samples)]
    head = " | ".join(f"r@{k}" for k in KS)
    print(f"| keyword leg alone | {head} (tuned-on) | {head} (held out) |")
    for variant in VARIANTS:
        per_sample = {d["sample_id"]: await recall_per_question(d, variant) for d in data}
        print(f"| {variant.name} | {cells(per_sample, tuned)} | {cells(per_sample, held)} |")


if __name__ == "__main__":
    asyncio.run(main())
