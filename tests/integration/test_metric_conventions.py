"""Every part of the running stack exports metrics that follow Prometheus' conventions, read live
from each part's ``/metrics`` after a load of many distinct namespaces, memories, queries, paths
and HTTP methods:

- a counter's samples are ``<name>_total`` (and ``_created``); a gauge's name has no ``_total``;
- names are in base units: no ``_ms``, ``_kb``... (durations in seconds, sizes in bytes), and every
  histogram is in seconds or bytes unless it counts things (`COUNT_HISTOGRAMS`, with the reason);
- every label's values are bounded: the load adds few new values to any label however many
  distinct inputs it sends, no label has more values than `MAX_LABEL_VALUES`, and no value is a
  memory id, a namespace, a query, a request path or method the load sent, nor free text.

The MCP adapter serves no metrics of its own (its calls are the gateway's requests), so the parts
scraped are the gateway and the five services. tests/deploy/test_metric_names.py checks, without a
stack, that the dashboards and alert rules query only metrics the code exports.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from ulid import ULID

from exocortex.core.runtime.stack import SERVICES, Stack

# Distinct values of each kind the load sends: more than `MAX_NEW_VALUES`, so a label that took
# any of them as its value would grow past it.
DISTINCT = 30
# New values one label may gain from the load: routes, status codes, stages, gRPC methods.
MAX_NEW_VALUES = 15
# The most values one label may have at all: the gateway's route templates (77) are the largest
# bounded set, and a session's other tests may have hit all of them.
MAX_LABEL_VALUES = 100
# Labels whose values come from prometheus_client itself (bucket bounds, quantiles).
STRUCTURAL_LABELS = frozenset({"le", "quantile"})
# Histograms of a count, not of a time or a size, with why a count is the right unit.
COUNT_HISTOGRAMS = {
    "exo_embedding_batch_size": "texts per model call after micro-batching",
    "exo_ingest_store_group_size": "single stores committed together in one transaction",
}
NON_BASE_UNITS = frozenset(
    {
        "ms", "msec", "millis", "milliseconds", "us", "usec", "microseconds", "ns",
        "nanoseconds", "minutes", "hours", "days", "kb", "mb", "gb", "kib", "mib", "gib",
        "kilobytes", "megabytes", "gigabytes", "percent",
    }
)  # fmt: skip
TIME_WORDS = frozenset({"duration", "latency", "time", "wait", "elapsed", "age"})
ULID_LIKE = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}", re.IGNORECASE)
UUID_LIKE = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
LONG_HEX = re.compile(r"[0-9a-f]{16,}", re.IGNORECASE)
# Methods a client may send that no route serves; the parser accepts each one (RFC 4918, 3253,
# 3744, 5789, 5323 and others), so a label that took the raw method would gain one value each.
ODD_METHODS = (
    "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "MKACTIVITY",
    "CHECKOUT", "MERGE", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "PURGE", "MKCALENDAR", "LINK",
    "UNLINK", "SEARCH", "BIND", "REBIND", "UNBIND", "ACL", "SOURCE", "QUERY",
)  # fmt: skip

Labels = dict[tuple[str, str, str], set[str]]  # (part, family, label) -> values


@dataclass(frozen=True)
class Family:
    part: str
    name: str
    type: str
    sample_names: frozenset[str]


@dataclass
class Scrape:
    families: list[Family]
    labels: Labels


@dataclass
class Load:
    """Everything the load sent that must never become a label value."""

    namespaces: list[str]
    memory_ids: list[str]
    queries: list[str]
    paths: list[str]
    methods: list[str]

    def forbidden(self) -> set[str]:
        return {*self.namespaces, *self.memory_ids, *self.queries, *self.paths, *self.methods}


def parse(texts: dict[str, str]) -> Scrape:
    """Each part's exposition (part -> /metrics text) as families and label values."""
    families: list[Family] = []
    labels: Labels = {}
    for part, text in texts.items():
        for family in text_string_to_metric_families(text):
            names = frozenset(s.name for s in family.samples)
            families.append(Family(part, family.name, family.type, names))
            for sample in family.samples:
                for label, value in sample.labels.items():
                    if label not in STRUCTURAL_LABELS:
                        labels.setdefault((part, family.name, label), set()).add(value)
    return Scrape(families, labels)


async def scrape(stack: Stack) -> Scrape:
    texts: dict[str, str] = {}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for part, url in stack.metrics_urls.items():
            reply = await client.get(url)
            assert reply.status_code == 200, f"{part} {url}: {reply.status_code}"
            texts[part] = reply.text
    return parse(texts)


async def bounded(calls: list[Callable[[], Awaitable[None]]], at_once: int = 4) -> None:
    gate = asyncio.Semaphore(at_once)

    async def one(call: Callable[[], Awaitable[None]]) -> None:
        async with gate:
            await call()

    await asyncio.gather(*(one(c) for c in calls))


async def drive(api: httpx.AsyncClient) -> Load:
    """Stores, reads, searches, misses, unknown paths and odd methods, each with distinct
    values: every input a label could wrongly take varies `DISTINCT` times or more."""
    tag = uuid.uuid4().hex[:8]
    load = Load(
        namespaces=[f"metrics-{tag}-{i}" for i in range(DISTINCT)],
        memory_ids=[],
        queries=[f"where did crate {tag} number {i} go" for i in range(DISTINCT * 2)],
        paths=[f"/api/no-such-{tag}-{i}" for i in range(DISTINCT)],
        methods=list(ODD_METHODS),
    )

    async def store(namespace: str, i: int) -> None:
        reply = await api.post(
            "/api/memories",
            json={
                "content": f"Crate {tag} number {i} was shipped to dock {i * 7} on a Tuesday.",
                "namespace": namespace,
                "tags": [f"crate-{tag}-{i}"],
            },
        )
        assert reply.status_code == 201, reply.text
        load.memory_ids.append(reply.json()["id"])

    await bounded(
        [partial(store, ns, 2 * n + i) for n, ns in enumerate(load.namespaces) for i in range(2)]
    )

    async def read(memory_id: str) -> None:
        reply = await api.get(f"/api/memories/{memory_id}")
        assert reply.status_code == 200, reply.text

    async def search(namespace: str, query: str) -> None:
        reply = await api.post(
            "/api/memories/search", json={"query": query, "namespace": namespace, "limit": 3}
        )
        assert reply.status_code == 200, reply.text

    async def miss(path: str, expected: int) -> None:
        reply = await api.get(path)
        assert reply.status_code == expected, reply.text

    async def odd(method: str) -> None:
        reply = await api.request(method, "/api/memories")
        assert reply.status_code in (404, 405), f"{method}: {reply.status_code} {reply.text}"

    missing = [str(ULID()) for _ in range(DISTINCT)]
    load.memory_ids.extend(missing)
    await bounded(
        [
            *(partial(read, m) for m in load.memory_ids[: DISTINCT * 2]),
            *(
                partial(search, load.namespaces[i % DISTINCT], q)
                for i, q in enumerate(load.queries)
            ),
            *(partial(miss, f"/api/memories/{m}", 404) for m in missing),
            *(partial(miss, p, 404) for p in load.paths),
            *(partial(odd, m) for m in load.methods),
        ]
    )
    return load


@pytest.fixture(scope="module")
async def measured(exo_stack: Stack) -> tuple[Scrape, Scrape, Load]:
    """The stack's metrics before and after the load, and what the load sent."""
    before = await scrape(exo_stack)
    async with httpx.AsyncClient(base_url=exo_stack.gateway_url, timeout=60.0) as api:
        load = await drive(api)
    return before, await scrape(exo_stack), load


def name_tokens(name: str) -> set[str]:
    return set(name.split("_"))


async def test_every_part_serves_exo_metrics(measured: tuple[Scrape, Scrape, Load]) -> None:
    _, after, _ = measured
    parts = {f.part for f in after.families if f.name.startswith("exo_")}
    assert parts == {*SERVICES, "gateway"}, f"parts exporting exo_ metrics: {sorted(parts)}"


def name_problems(families: list[Family]) -> list[str]:
    problems: list[str] = []
    for f in families:
        where = f"{f.part}: {f.name} ({f.type})"
        if f.type == "counter":
            odd = sorted(s for s in f.sample_names if not s.endswith(("_total", "_created")))
            if odd:
                problems.append(f"{where}: counter samples without _total: {odd}")
        elif f.name.endswith("_total"):
            problems.append(f"{where}: only a counter's name ends in _total")
        if f.type == "unknown" and f.name.startswith("exo_"):
            problems.append(f"{where}: untyped")
        units = sorted(name_tokens(f.name) & NON_BASE_UNITS)
        if units:
            problems.append(f"{where}: not in base units ({', '.join(units)})")
        if f.type == "histogram" and not f.name.endswith(("_seconds", "_bytes")):
            if f.name not in COUNT_HISTOGRAMS:
                problems.append(f"{where}: a histogram is in seconds or bytes")
            elif name_tokens(f.name) & TIME_WORDS:
                problems.append(f"{where}: a time, yet not in seconds")
        timestamp = f.type == "gauge" and "timestamp" in name_tokens(f.name)
        if timestamp and not f.name.endswith("_timestamp_seconds"):
            problems.append(f"{where}: a timestamp is <name>_timestamp_seconds")
    return problems


def label_problems(before: Scrape, after: Scrape, forbidden: set[str]) -> list[str]:
    problems: list[str] = []
    for (part, family, label), values in sorted(after.labels.items()):
        where = f"{part}: {family}{{{label}}}"
        new = values - before.labels.get((part, family, label), set())
        if len(new) > MAX_NEW_VALUES:
            problems.append(f"{where}: {len(new)} new values from the load, e.g. {sorted(new)[:5]}")
        if len(values) > MAX_LABEL_VALUES:
            problems.append(f"{where}: {len(values)} values")
        for value in sorted(values):
            if value in forbidden:
                problems.append(f"{where}: a value the load sent: {value!r}")
            elif ULID_LIKE.search(value) or UUID_LIKE.search(value) or LONG_HEX.search(value):
                problems.append(f"{where}: an id as a value: {value!r}")
            elif re.search(r"\s", value):
                problems.append(f"{where}: free text as a value: {value!r}")
    return problems


async def test_names_follow_the_conventions(measured: tuple[Scrape, Scrape, Load]) -> None:
    _, after, _ = measured
    problems = name_problems(after.families)
    assert not problems, "\n".join(problems)


async def test_label_values_are_bounded(measured: tuple[Scrape, Scrape, Load]) -> None:
    before, after, load = measured
    problems = label_problems(before, after, load.forbidden())
    assert not problems, "\n".join(problems)


BROKEN = """\
# TYPE exo_lag_total gauge
exo_lag_total 3
# TYPE exo_store_duration_ms histogram
exo_store_duration_ms_bucket{le="+Inf"} 1
exo_store_duration_ms_sum 5
exo_store_duration_ms_count 1
# TYPE exo_cache_kb gauge
exo_cache_kb 12
# TYPE exo_last_run_timestamp gauge
exo_last_run_timestamp 1.7e9
# TYPE exo_searches_total counter
exo_searches_total{namespace="ns-7"} 1
exo_searches_total{memory_id="01JF8Z6M7Q9V0W3X4Y5Z6A7B8C"} 1
exo_searches_total{query="which broker did we pick"} 1
"""


def test_the_checks_catch_each_broken_convention() -> None:
    """Each rule fails on an exposition that breaks it, so a green run means something."""
    names = "\n".join(name_problems(parse({"part": BROKEN}).families))
    assert "exo_lag_total (gauge): only a counter's name ends in _total" in names
    assert "exo_store_duration_ms (histogram): not in base units (ms)" in names
    assert "exo_store_duration_ms (histogram): a histogram is in seconds or bytes" in names
    assert "exo_cache_kb (gauge): not in base units (kb)" in names
    assert "exo_last_run_timestamp (gauge): a timestamp is <name>_timestamp_seconds" in names
    many = "".join(f'exo_reads_total{{route="/r/{i}"}} 1\n' for i in range(MAX_NEW_VALUES + 1))
    after = parse({"part": BROKEN + "# TYPE exo_reads_total counter\n" + many})
    labels = "\n".join(label_problems(parse({}), after, forbidden={"ns-7"}))
    assert "exo_searches{namespace}: a value the load sent: 'ns-7'" in labels
    assert "exo_searches{memory_id}: an id as a value" in labels
    assert "exo_searches{query}: free text as a value" in labels
    assert f"exo_reads{{route}}: {MAX_NEW_VALUES + 1} new values from the load" in labels
    assert not name_problems(parse({"part": "# TYPE exo_ok_seconds histogram\n"}).families)


def test_the_load_would_show_an_unbounded_label() -> None:
    """Each varied input outnumbers the new values a label may gain, and the id pattern
    matches the ids the stack makes but not a route template."""
    assert min(DISTINCT, len(ODD_METHODS)) > MAX_NEW_VALUES
    assert ULID_LIKE.fullmatch(str(ULID()))
    assert not ULID_LIKE.search("/api/memories/{memory_id}")
