"""Write-path benchmark through the public REST API.

    .venv/bin/python tests/bench/bulk_import.py [--url http://127.0.0.1:3210]
        [--memories 3000] [--batch 500] [--stores 600] [--catchup 10000]

Measures, from one run on the embedded default (or the stack at --url):

* the **limit**: the embedding model's own throughput on the same texts, in this process with
  the stack stopped (the service's encoder, threads, batch size and precision);
* REST bulk import (``POST /api/memories/import``, --batch a request) and ``exo import`` of a
  JSON file, until the last memory is searchable;
* 1, 4 and 16 clients storing single memories (``POST /api/memories``, one memory a call,
  keep-alive connections), with store latency p50/p95;
  each rate also as a ratio to the limit;
* the time until enrichment has caught up after a --catchup import, and search latency while
  it drains (``--catchup 100000`` for the 100k run);
* CPU seconds per process of the stack for each phase.

For short notes (up to 160 characters) and docstring-length texts (up to 320), standard-library
docstrings the model finds distinct (see ``corpus`` and ``distinct``). Without --url it
starts its own stack (as `exo up` does) in a temporary directory. Writes
docs/benchmarks/bulk-import.md unless --no-report (--json PATH keeps the raw figures).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from reports import kept_by_hand  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "benchmarks" / "bulk-import.md"
_MODULES = (
    "os", "os.path", "re", "json", "collections", "itertools", "functools", "asyncio", "pathlib",
    "email", "http.client", "urllib.request", "urllib.parse", "xml.etree.ElementTree", "sqlite3",
    "decimal", "fractions", "statistics", "random", "string", "textwrap", "datetime", "calendar",
    "zipfile", "tarfile", "csv", "argparse", "logging", "unittest", "typing", "inspect", "ast",
    "socket", "ssl", "hashlib", "hmac", "secrets", "shutil", "glob", "tempfile", "threading",
    "multiprocessing", "subprocess", "sched", "queue", "heapq", "bisect", "array", "struct",
    "codecs", "locale", "gettext", "pprint", "reprlib", "enum", "math", "cmath", "operator",
    "contextlib", "abc", "copy", "pickle", "shelve", "gzip", "bz2", "lzma", "configparser",
    "tomllib", "plistlib", "uuid", "ipaddress", "mimetypes", "base64", "binascii", "html",
    "smtplib", "imaplib", "ftplib", "xmlrpc.client", "difflib", "io", "time", "signal",
    "selectors", "mmap", "weakref", "types", "dataclasses", "graphlib", "zoneinfo", "traceback",
    "warnings", "tokenize", "doctest", "pdb", "timeit", "trace", "sysconfig", "platform",
)  # fmt: skip

# Standard-library modules the corpus does not import: importing them does something (opens a
# browser, prints, starts a GUI) or belongs to another platform.
_NOT_IMPORTED = frozenset(
    {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "ensurepip",
     "pydoc_data", "lib2to3", "msilib", "winreg", "winsound", "nt", "msvcrt"}
)  # fmt: skip

SHAPES = {"short": 160, "docstring": 320}


def corpus(max_chars: int) -> list[str]:
    """Varied real text: the first paragraphs of standard-library docstrings (modules, their
    functions and classes, and the methods a class defines itself), cut at a word before
    ``max_chars``, each body once (an inherited or shared docstring is one text, not one per
    name that carries it)."""
    import importlib
    import inspect

    seen: dict[str, str] = {}

    def add(name: str, doc: object) -> None:
        if not isinstance(doc, str) or not doc:
            return
        body = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
        if len(body) < 60 or body.lower() in seen:
            return
        text = f"{name}: {body}"
        if len(text) > max_chars:
            text = text[:max_chars].rsplit(" ", 1)[0]
        seen[body.lower()] = text

    public = sorted(n for n in sys.stdlib_module_names if not n.startswith("_"))
    with warnings.catch_warnings():
        # Deprecated modules and names say so when imported or read.
        warnings.simplefilter("ignore")
        for module_name in dict.fromkeys(
            [*_MODULES, *(n for n in public if n not in _NOT_IMPORTED)]
        ):
            try:
                module = importlib.import_module(module_name)
            except Exception:  # not built here (a platform's own module), or broken
                continue
            for attr in dir(module):
                obj = getattr(module, attr, None)
                if obj is None:
                    continue
                add(f"{module_name}.{attr}", getattr(obj, "__doc__", None))
                if inspect.isclass(obj):
                    for method, member in vars(obj).items():
                        if callable(member) and not method.startswith("_"):
                            add(f"{module_name}.{attr}.{method}", getattr(member, "__doc__", None))
    out = list(seen.values())
    # A fixed order that mixes the modules, so any prefix is like the whole.
    random.Random(5).shuffle(out)
    return out


# Texts at least this close (cosine, the bundled model) count as one: the write path's semantic
# dedup (0.85 by default) would fold the second into the first, and the benchmark is of stores.
DISTINCT_BELOW = 0.8


def distinct(texts: list[str], cache_dir: Path) -> list[str]:
    """``texts`` without any that the model finds within ``DISTINCT_BELOW`` of an earlier one
    (order kept): otherwise dedup folds them, and a phase measures the skip path instead of
    stores. Kept in a file by the texts' digest: the model reads them once per machine."""
    import hashlib

    import numpy as np

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    kept_file = Path(tempfile.gettempdir()) / "exo-bench-corpus" / f"{digest}.json"
    if kept_file.exists():
        return list(json.loads(kept_file.read_text()))
    model, batch = _encoder(cache_dir)
    vectors = np.concatenate(
        [np.asarray(model.encode(texts[i : i + batch])) for i in range(0, len(texts), batch)]
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kept = np.empty_like(vectors)  # the vectors kept so far, in its first rows
    out: list[str] = []
    for text, vector in zip(texts, vectors, strict=True):
        if not out or float(np.max(kept[: len(out)] @ vector)) < DISTINCT_BELOW:
            kept[len(out)] = vector
            out.append(text)
    kept_file.parent.mkdir(parents=True, exist_ok=True)
    kept_file.write_text(json.dumps(out))
    return out


class Texts:
    """Distinct texts handed out in order, never twice in one run (a repeat would be a dedup
    skip, not a store). Past the corpus, each text is the first half of one corpus text and
    the second half of another, a different pair each time round."""

    def __init__(self, base: list[str]) -> None:
        self.base = base
        self.next = 0

    def take(self, n: int) -> list[str]:
        out = []
        size = len(self.base)
        for i in range(self.next, self.next + n):
            text = self.base[i % size]
            rounds = i // size
            if rounds:
                other = self.base[(i * 7919 + rounds * 104729) % size]
                text = f"{text[: len(text) // 2]} {other[len(other) // 2 :]}"
            out.append(text)
        self.next += n
        return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


# ---------------------------------------------------------------------------------------------
# The limit: the model alone


def _encoder(cache_dir: Path) -> tuple[Any, int]:
    """The embedding service's encoder in this process (its backend and threads), and its
    batch size."""
    from exocortex.embedding.encoder import load_encoder
    from exocortex.embedding.settings import EmbeddingSettings
    from exocortex.encoders import bundled_model_path

    settings = EmbeddingSettings()
    model = load_encoder(
        settings.model_path or bundled_model_path(),
        backend=settings.backend,
        threads=settings.threads,
        cache_dir=cache_dir,
        precision=settings.precision,
    )
    return model, settings.max_batch


def service_precision() -> str:
    """The weights the embedding service runs (EXO_EMBEDDING_PRECISION), as the limit uses."""
    from exocortex.embedding.settings import EmbeddingSettings

    return EmbeddingSettings().precision


def model_limit(texts: list[str], cache_dir: Path) -> float:
    """Texts/s of the embedding service's encoder on ``texts``, in this process, nothing else
    running: its backend, its precision, its threads, batches of its max_batch."""
    model, batch = _encoder(cache_dir)
    model.encode(texts[:64])  # warm-up
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        model.encode(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------
# CPU seconds per process


class Cpu:
    def __init__(self, processes: dict[str, int]) -> None:
        import psutil  # type: ignore[import-untyped]

        self._psutil = psutil
        self.pids = processes

    def sample(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, pid in self.pids.items():
            try:
                proc = self._psutil.Process(pid)
                t = proc.cpu_times()
                total = t.user + t.system + t.children_user + t.children_system
                for child in proc.children(recursive=True):
                    with_suppress = child.cpu_times()
                    total += with_suppress.user + with_suppress.system
            except self._psutil.Error:
                continue
            out[name] = total
        return out

    @staticmethod
    def diff(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        return {k: after[k] - before.get(k, 0.0) for k in after}


def stack_pids(stack: Any) -> dict[str, int]:
    pids = {child.name: child.process.pid for child in stack._children}
    pg = stack.embedded_postgres
    if pg is not None:
        first = (pg.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        pids["postgres"] = int(first)
    nats = stack.embedded_nats
    if nats is not None and getattr(nats, "_proc", None) is not None:
        pids["nats"] = nats._proc.pid
    return pids


# ---------------------------------------------------------------------------------------------
# Phases


async def wait_searchable(client: httpx.AsyncClient, namespace: str, text: str, mid: str) -> None:
    while True:
        found = await client.post(
            "/api/memories/search",
            json={"query": text, "namespace": namespace, "limit": 5, "compact": True},
        )
        if any(r["id"] == mid for r in found.json()["results"]):
            return
        await asyncio.sleep(0.05)


async def rest_import(
    client: httpx.AsyncClient, texts: list[str], batch: int, namespace: str | None = None
) -> dict[str, Any]:
    namespace = namespace or f"bench-{uuid.uuid4().hex[:8]}"
    items = [{"content": t, "namespace": namespace} for t in texts]
    started = time.perf_counter()
    imported = 0
    last_id = ""
    for start in range(0, len(items), batch):
        reply = await client.post(
            "/api/memories/import", json={"memories": items[start : start + batch]}
        )
        reply.raise_for_status()
        body = reply.json()
        imported += body["imported"]
        last_id = body["results"][-1]["id"] or last_id
    accepted = time.perf_counter() - started
    await wait_searchable(client, namespace, texts[-1], last_id)
    searchable = time.perf_counter() - started
    return {
        "n": imported,
        "seconds": searchable,
        "rate": imported / searchable,
        "rate_accepted": imported / accepted,
        "namespace": namespace,
    }


async def cli_import(client: httpx.AsyncClient, url: str, texts: list[str]) -> dict[str, float]:
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    exo = Path(sys.executable).with_name("exo")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "notes.json"
        path.write_text(json.dumps([{"content": t} for t in texts]))
        started = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            str(exo), "--url", url, "import", str(path), "--namespace", namespace, "--json",
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        _out, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"exo import failed: {err.decode()[-500:]}")
    # The last text must be searchable, as for REST.
    found = await client.get("/api/memories/recent", params={"namespace": namespace, "limit": 1})
    found.raise_for_status()
    last = next(iter(found.json()["results"]), None)
    if last is not None:
        await wait_searchable(client, namespace, last["content"], last["id"])
    seconds = time.perf_counter() - started
    return {"n": len(texts), "seconds": seconds, "rate": len(texts) / seconds}


def _store_each(url: str, namespace: str, texts: list[str]) -> tuple[list[float], int]:
    """One caller storing ``texts`` one memory per request over a keep-alive connection of its
    own: seconds per store, and how many answered not yet searchable. The standard library's
    client, as in search_latency.py: httpx's async client took about 3.4 ms of CPU a store, on
    the cores the stack under test runs on, where this one takes well under 1 ms."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=120)
    headers = {"content-type": "application/json"}
    latencies: list[float] = []
    not_indexed = 0
    try:
        for text in texts:
            body = json.dumps({"content": text, "namespace": namespace}).encode()
            t0 = time.perf_counter()
            conn.request("POST", "/api/memories", body=body, headers=headers)
            reply = conn.getresponse()
            data = reply.read()
            if reply.status >= 300:
                raise RuntimeError(f"POST /api/memories: {reply.status} {data[:300]!r}")
            latencies.append(time.perf_counter() - t0)
            if not json.loads(data).get("indexed", True):
                not_indexed += 1
    finally:
        conn.close()
    return latencies, not_indexed


async def single_stores(url: str, texts: list[str], clients: int) -> dict[str, Any]:
    """``clients`` callers, each storing its share of ``texts`` one memory per call, over a
    keep-alive connection of its own, into one namespace (agents sharing a store)."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    parts = [texts[i::clients] for i in range(clients)]

    def run_all() -> list[tuple[list[float], int]]:
        with ThreadPoolExecutor(clients) as pool:
            return list(pool.map(lambda part: _store_each(url, namespace, part), parts))

    started = time.perf_counter()
    results = await asyncio.to_thread(run_all)
    seconds = time.perf_counter() - started
    latencies = [x for lat, _ in results for x in lat]
    return {
        "n": len(texts),
        "clients": clients,
        "seconds": seconds,
        "rate": len(texts) / seconds,
        "p50": percentile(latencies, 0.5) * 1000,
        "p95": percentile(latencies, 0.95) * 1000,
        "not_indexed": sum(n for _, n in results),
    }


async def enrichment_latency(client: httpx.AsyncClient, texts: list[str]) -> list[float]:
    """Store one memory, then poll until it is enriched; one at a time so queues are empty."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    out = []
    for text in texts:
        reply = await client.post("/api/memories", json={"content": text, "namespace": namespace})
        replied = time.perf_counter()
        memory_id = reply.json()["id"]
        while True:
            memory = (await client.get(f"/api/memories/{memory_id}")).json()
            if memory["enrichment_status"] == "done":
                out.append(time.perf_counter() - replied)
                break
            await asyncio.sleep(0.01)
    return out


def pending(database_url: str, namespace: str | None) -> int:
    """Memories of ``namespace`` (None: of any) that wait for their enrichment (only live
    roots are enriched)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memories WHERE enrichment_status = 'pending' "
            "AND is_active AND parent_id IS NULL AND (%s::text IS NULL OR namespace = %s)",
            (namespace, namespace),
        ).fetchone()
    return int(row[0]) if row else 0


async def drained(database_url: str, limit_s: float = 120.0) -> float:
    """Seconds until no memory waits for its enrichment (polled every 50 ms, at most
    ``limit_s``)."""
    started = time.perf_counter()
    for _ in range(int(limit_s / 0.05)):
        if not await asyncio.to_thread(pending, database_url, None):
            break
        await asyncio.sleep(0.05)
    return time.perf_counter() - started


async def catch_up(
    client: httpx.AsyncClient, database_url: str | None, texts: list[str], batch: int,
    probes: list[str], limit_s: float,
) -> dict[str, Any]:  # fmt: skip
    """Import ``texts``, then: seconds from the end of the import until no memory of it is
    pending enrichment, and search latency (sequential) meanwhile."""
    result = await rest_import(client, texts, batch)
    if database_url is None:
        return {**result, "catchup": None}
    ended = time.perf_counter()
    searches: list[float] = []
    left = pending(database_url, result["namespace"])
    i = 0
    while left and time.perf_counter() - ended < limit_s:
        t0 = time.perf_counter()
        await client.post(
            "/api/memories/search",
            json={"query": probes[i % len(probes)], "namespace": result["namespace"], "limit": 10},
        )
        searches.append(time.perf_counter() - t0)
        i += 1
        if i % 10 == 0:
            left = await asyncio.to_thread(pending, database_url, result["namespace"])
        await asyncio.sleep(0.1)
    caught = time.perf_counter() - ended
    return {
        **result,
        "catchup": caught if not left else None,
        "left": left,
        "waited": caught,
        "search_p50": percentile(searches, 0.5) * 1000,
        "search_p95": percentile(searches, 0.95) * 1000,
        "searches": len(searches),
    }


@contextmanager
def running_stack(url: str | None) -> Iterator[tuple[str, Any, Path | None]]:
    if url:
        yield url.rstrip("/"), None, None
        return
    from exocortex.core.runtime.stack import Stack, StackConfig

    with tempfile.TemporaryDirectory(prefix="exo-bench-") as tmp:
        stack = Stack(StackConfig.with_free_ports(Path(tmp), postgres_fsync=False))
        yield "", stack, Path(tmp)


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"shapes": {}, "cpu": {}}
    with running_stack(args.url) as (url, stack, tmp):
        models = (tmp or Path(tempfile.gettempdir())) / "models"
        shapes = {
            name: Texts(await asyncio.to_thread(distinct, corpus(chars), models))
            for name, chars in SHAPES.items()
            if name in args.shapes
        }
        # 1. The limit, with the stack stopped (the export lands where the service finds it).
        for name, texts in shapes.items():
            sample = texts.base[: args.memories]
            out["shapes"][name] = {
                "limit": await asyncio.to_thread(model_limit, sample, models),
                "chars": statistics.mean(len(t) for t in sample),
                "distinct_texts": len(texts.base),
            }
        if stack is not None:
            stack.start(timeout=300)
            url = stack.gateway_url
        try:
            cpu = Cpu(stack_pids(stack)) if stack is not None else None
            async with httpx.AsyncClient(base_url=url, timeout=600.0) as client:
                # Warm-up: model, pools, index segments.
                await rest_import(client, Texts(corpus(200)).take(200), 200)

                async def phase(label: str, coro: Any) -> Any:
                    before = cpu.sample() if cpu else {}
                    result = await coro
                    result["load"] = os.getloadavg()[0]
                    if stack is not None:
                        # The phase is charged with the enrichment it caused: the CPU is read
                        # once every memory stored so far is enriched, not while the last
                        # batch is still lingering (it would land on the next phase).
                        result["enriched_after_s"] = await drained(stack.database_url)
                    if cpu:
                        out["cpu"][label] = Cpu.diff(before, cpu.sample())
                    print(f"{label}: {json.dumps(result, default=str)}", flush=True)
                    return result

                for name, texts in shapes.items():
                    res = out["shapes"][name]
                    res["import"] = await phase(
                        f"{name}/import", rest_import(client, texts.take(args.memories), args.batch)
                    )
                    if args.cli:
                        res["cli"] = await phase(
                            f"{name}/exo import", cli_import(client, url, texts.take(args.cli))
                        )
                    for k in args.clients:
                        n = max(k * 10, args.stores if k > 1 else args.stores // 3)
                        res[f"clients{k}"] = await phase(
                            f"{name}/{k} clients", single_stores(url, texts.take(n), k)
                        )
                enrich_texts = next(iter(shapes.values())).take(30)
                out["enrich"] = await enrichment_latency(client, enrich_texts)
                if args.catchup:
                    texts = next(iter(shapes.values()))
                    probes = texts.base[:50]
                    out["catchup"] = await phase(
                        "catch-up",
                        catch_up(
                            client, stack.database_url if stack else None,
                            texts.take(args.catchup), args.batch, probes, args.catchup_limit,
                        ),
                    )  # fmt: skip
        finally:
            if stack is not None:
                stack.stop()
        # The limit again, the stack stopped: the machine may be shared, so its mean is used.
        for name, texts in shapes.items():
            sample = texts.base[: args.memories]
            res = out["shapes"][name]
            res["limit_after"] = await asyncio.to_thread(
                model_limit, sample, (tmp or Path(tempfile.gettempdir())) / "models"
            )
            res["limit_before"] = res["limit"]
            res["limit"] = (res["limit_before"] + res["limit_after"]) / 2
    return out


def report(args: argparse.Namespace, result: dict[str, Any], before: dict[str, Any] | None) -> str:
    lines = [
        "# Write throughput: import, single stores, enrichment",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} by `tests/bench/bulk_import.py` on the embedded "
        f"default ({os.cpu_count()} CPUs, {platform.python_implementation()} "
        f"{platform.python_version()}, fsync off). Every process of the stack shares the CPUs.",
        "",
        "The **limit** is the embedding model's own throughput on the same texts, measured in "
        "the benchmark's process with the stack stopped (the service's encoder, threads and "
        f"batch size; weights: {service_precision()}). Every other rate is until the "
        "last memory is searchable, and is also given as a ratio to the limit.",
        "",
        "The texts are standard-library docstrings no two of which the model puts within "
        f"cosine {DISTINCT_BELOW} of each other ("
        + ", ".join(
            f"{res.get('distinct_texts', '?')} {name}" for name, res in result["shapes"].items()
        )
        + "), so dedup folds none of them; past that, each text is halves of two of them.",
        "",
    ]
    lines += table(result, before)
    lines += ["", "## CPU seconds per 1,000 memories, by process", ""]
    lines += cpu_table(result, before)
    lines += catchup_lines(result, before)
    enrich = [x * 1000 for x in result.get("enrich", [])]
    if enrich:
        lines += [
            "",
            f"## Store → enrichment done ({len(enrich)} memories, one at a time)",
            "",
            "From the store's reply until `enrichment_status` is `done` (polled every 10 ms): "
            f"p50 **{percentile(enrich, 0.5):.0f} ms**, p95 **{percentile(enrich, 0.95):.0f} ms**.",
        ]
    lines.append("")
    return "\n".join(lines)


def phase_sizes(result: dict[str, Any]) -> dict[str, float]:
    sizes: dict[str, float] = {}
    for name, res in result["shapes"].items():
        for key, label in (("import", "import"), ("cli", "exo import")):
            if key in res:
                sizes[f"{name}/{label}"] = res[key]["n"]
        for key in (k for k in res if k.startswith("clients")):
            sizes[f"{name}/{res[key]['clients']} clients"] = res[key]["n"]
    if result.get("catchup"):
        sizes["catch-up"] = result["catchup"]["n"]
    return sizes


def per_thousand(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    sizes = phase_sizes(result)
    return {
        label: {proc: 1000 * sec / sizes[label] for proc, sec in cpu.items()}
        for label, cpu in result.get("cpu", {}).items()
        if sizes.get(label)
    }


def cpu_table(result: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    now = per_thousand(result)
    if not now:
        return ["(not measured: the benchmark did not start the stack)"]
    old = per_thousand(before) if before else {}
    procs = [p for p in next(iter(now.values())) if p not in ("mcp-adapter", "maintenance")]
    head = "| phase | " + " | ".join(procs) + " | total |"
    if old:
        head += " total before |"
    lines = [head, "|---" * (len(procs) + (3 if old else 2)) + "|"]
    for label, cpu in now.items():
        cells = " | ".join(f"{cpu.get(p, 0):.1f}" for p in procs)
        row = f"| {label} | {cells} | {sum(cpu.values()):.1f} |"
        if old:
            row += f" {sum(old[label].values()):.1f} |" if label in old else " |"
        lines.append(row)
    note = "The phase *catch-up* includes the enrichment that drains after its import."
    if old:
        note += " *total before*: the same phase in the run given with --before."
    return [*lines, "", note]


def catchup_lines(result: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    def describe(c: dict[str, Any] | None) -> str:
        if not c or c.get("waited") is None:
            return "not measured"
        if c.get("catchup") is not None:
            caught = f"caught up **{c['catchup']:.0f} s** after the import ended"
        else:
            caught = f"**not** caught up after {c['waited']:.0f} s ({c['left']} still pending)"
        return (
            f"{c['n']} memories imported at {c['rate']:.0f}/s; enrichment {caught}; "
            f"{c['searches']} sequential searches meanwhile, p50 {c['search_p50']:.0f} ms, "
            f"p95 {c['search_p95']:.0f} ms"
        )

    if not result.get("catchup"):
        return []
    lines = ["", "## Enrichment after an import", ""]
    if before:
        lines.append(f"* before: {describe(before.get('catchup'))}")
        lines.append(f"* after: {describe(result.get('catchup'))}")
    else:
        lines.append(f"* {describe(result.get('catchup'))}")
    return lines


def model_share(result: dict[str, Any], label: str) -> str:
    """The embedding process's share of the CPU seconds all processes spent in a phase: the
    ratio to the model's limit this phase would reach on a machine of its own (where the
    CPU is the bottleneck), whatever else shares the machine meanwhile."""
    cpu = result.get("cpu", {}).get(label)
    if not cpu or not sum(cpu.values()):
        return ""
    return f"{cpu.get('embedding', 0.0) / sum(cpu.values()):.2f}"


Row5 = tuple[str, str, float, float, str, str]


def rows_for(result: dict[str, Any]) -> list[Row5]:
    rows: list[Row5] = []
    for name, res in result["shapes"].items():
        limit = res["limit"]
        rows.append((name, f"model alone ({res['chars']:.0f} chars avg)", limit, 1.0, "", "1.00"))
        for key, what, label in (("import", "REST import", "import"), ("cli", "`exo import`",
                                 "exo import")):  # fmt: skip
            if key in res:
                r = res[key]
                share = model_share(result, f"{name}/{label}")
                rows.append((name, what, r["rate"], r["rate"] / limit, "", share))
        for key in sorted((k for k in res if k.startswith("clients")), key=lambda k: int(k[7:])):
            r = res[key]
            rows.append(
                (name, f"{r['clients']} clients, single stores", r["rate"], r["rate"] / limit,
                 f"{r['p50']:.0f} / {r['p95']:.0f}",
                 model_share(result, f"{name}/{r['clients']} clients"))
            )  # fmt: skip
    return rows


def table(result: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    now = rows_for(result)
    if before is None:
        lines = [
            "| texts | what | /s | wall ratio | CPU ratio | store p50 / p95 ms |",
            "|---|---|---|---|---|---|",
        ]
        lines += [f"| {s} | {w} | {r:.0f} | {q:.2f} | {c} | {lat} |" for s, w, r, q, lat, c in now]
    else:
        old = {(s, w): (r, q, lat, c) for s, w, r, q, lat, c in rows_for(before)}
        lines = [
            "| texts | what | before /s | wall ratio | CPU ratio | p50 / p95 ms "
            "| after /s | wall ratio | CPU ratio | p50 / p95 ms |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s, w, r, q, lat, c in now:
            br, bq, blat, bc = old.get((s, w), (0.0, 0.0, "", ""))
            lines.append(
                f"| {s} | {w} | {br:.0f} | {bq:.2f} | {bc} | {blat} "
                f"| {r:.0f} | {q:.2f} | {c} | {lat} |"
            )
    lines += [
        "",
        "*wall ratio*: the rate over the limit measured in the same run. *CPU ratio*: the "
        "embedding process's share of the CPU seconds every process of the stack spent in "
        "that phase, i.e. the ratio the phase reaches where the CPUs are the bottleneck; it "
        "does not move with other load on the machine, where the wall ratio does.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url")
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--cli", type=int, default=1000, help="memories for `exo import` (0: skip)")
    parser.add_argument("--stores", type=int, default=600, help="single stores per client count")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES))
    parser.add_argument("--catchup", type=int, default=10000)
    parser.add_argument("--catchup-limit", type=float, default=900.0)
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    parser.add_argument("--before", type=Path, help="raw figures of a before run, to compare")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    before = json.loads(args.before.read_text()) if args.before else None
    text = report(args, result, before)
    print(text)
    print(json.dumps(result["cpu"], indent=1))
    if not args.no_report:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        # The sections below the marker (A/B runs, written by hand) survive a new run.
        REPORT.write_text(text + kept_by_hand(REPORT, "bulk_import.py"))


if __name__ == "__main__":
    main()
