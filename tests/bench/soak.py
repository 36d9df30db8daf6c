"""Soak test of the embedded default: a steady mix of stores and searches for a long stretch,
with latency percentiles, errors and each process's memory over time.

    .venv/bin/python tests/bench/soak.py [--minutes 30] [--rate 10] [--data-dir DIR]
        [--report docs/benchmarks/soak.md]

Starts its own stack (as `exo up` does) in a fresh data directory and drives it through REST
with locust, used as a library: `--rate` requests per second in all, 30% stores of varied text
and 70% searches, spread over simulated users that each keep a constant pace. Every 30 s it
records the resident memory (RSS) of each process of the stack: the gateway, the MCP adapter,
each service, Postgres (postmaster and backends) and nats-server, and the backlog of events the
workers have yet to handle. When the load stops it waits for that backlog to drain (10 minutes
at most), reads back every memory a store acknowledged, by id, then writes the report and a plot
beside it (same name, `.png`).

The machine may be shared and noisy: latencies are also given as a ratio to the same run's
first minutes, and GET /health is timed throughout as a baseline of what the machine gives.
"""

# isort: off
# locust patches the standard library for gevent when it is imported: it comes before anything
# that may open sockets or start threads (httpx, the stack), so they get the patched versions.
from locust import FastHttpUser, constant_throughput, task
from locust.env import Environment

# isort: on
import argparse
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import matplotlib
import numpy as np
import psutil

matplotlib.use("Agg")  # files only; no display
import matplotlib.pyplot as plt  # after use(): the backend is chosen before pyplot loads

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import OBJECTS, REASONS, TAGS, VERBS, pct

import exocortex.core.config
from exocortex.core.runtime.stack import SERVICES, Stack, StackConfig

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "benchmarks" / "soak.md"
NAMESPACE = "soak"
STORE_SHARE = 0.3
# Each simulated user waits this long between its requests on average, so a slow answer delays
# only its own user and the total rate stays near --rate (locust users are closed loops).
USER_PERIOD_SECONDS = 2.0
HEALTH_PER_SECOND = 0.5
SAMPLE_SECONDS = 30.0
DRAIN_LIMIT_SECONDS = 600.0
PARTS = (*SERVICES, "gateway", "mcp-adapter")
TITLE = "# Soak test (embedded default)"
BEGIN_MARK = "<!-- bench:latest:start (written by tests/bench/soak.py) -->"
END_MARK = "<!-- bench:latest:end -->"

PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
TOOLS = ["Postgres", "NATS", "Redis", "Terraform", "Kubernetes", "Grafana", "Sentry", "nginx"]
FILES = [
    "src/billing/invoice.py",
    "api/routes/users.ts",
    "cmd/server/main.go",
    "lib/cache.rs",
    "web/components/Chart.tsx",
    "migrations/0042_add_index.sql",
    "infra/vpc.tf",
    "scripts/backfill.py",
]
BUGS = [
    "a deadlock in the connection pool",
    "an off-by-one in pagination",
    "a race between two cron jobs",
    "a missing index on user_id",
    "timezone handling in monthly reports",
    "memory growth in the PDF worker",
    "a stale cache after deploys",
    "retries without backoff",
    "a crash on empty shopping carts",
    "unicode in uploaded file names",
]
SYMPTOMS = [
    "timeouts at checkout",
    "duplicate emails",
    "blank charts on the dashboard",
    "slow logins on Monday mornings",
    "wrong totals on invoices",
    "a full disk on the build server",
]
HABITS = [
    "prefers tabs over spaces",
    "wants short imperative commit messages",
    "reviews pull requests only in the morning",
    "dislikes ORMs for reporting queries",
    "writes a failing test before every fix",
    "uses vim keybindings everywhere",
    "avoids meetings on Fridays",
    "asks for type hints in new Python code",
]
FEATURES = [
    "CSV export",
    "single sign-on",
    "usage-based billing",
    "offline mode",
    "webhooks",
    "bulk editing",
    "two-factor login",
    "PDF reports",
]
CUSTOMERS = ["Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Hooli"]
METRICS = ["p95 latency", "error rate", "cloud bill", "signup conversion", "build time"]
TOPICS = [
    ("CRDTs", "merging offline edits without a central lock"),
    ("Raft", "leader leases that make reads cheaper"),
    ("bloom filters", "skipping disk reads for keys that are absent"),
    ("zero-downtime migrations", "adding a column first and backfilling in batches"),
    ("rate limiting", "a token bucket per API key"),
    ("postmortems", "writing them blameless and within two days"),
]
MONTHS = ["January", "March", "May", "July", "September", "November"]
KEYWORDS = ["rollback", "latency", "migration", "outage", "cost", "owner", "flag", "alert"]


class Writer:
    """Memories of the kinds an agent keeps: decisions, bug fixes, preferences, customer
    requests, measurements, reading notes, how-tos and to-dos, from one sentence to a
    paragraph of meeting notes. Each kind draws from its own
    vocabulary so the texts differ in meaning, not only in names: templated text that differs
    in a word or two is what semantic dedup is there to fold together."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _line(self, kind: str) -> str:
        r = self.rng
        obj, person, tool = r.choice(OBJECTS), r.choice(PEOPLE), r.choice(TOOLS)
        if kind == "decision":
            return (
                f"We decided that {obj} moves to {tool} {r.choice(REASONS)}; "
                f"{person} will own the switch."
            )
        if kind == "bug":
            return (
                f"Fixed {r.choice(BUGS)} in {r.choice(FILES)}: users saw "
                f"{r.choice(SYMPTOMS)}, reported by {r.choice(CUSTOMERS)}."
            )
        if kind == "habit":
            return f"{person} {r.choice(HABITS)}."
        if kind == "request":
            return (
                f"{r.choice(CUSTOMERS)} asked for {r.choice(FEATURES)} on the "
                f"{r.choice(MONTHS)} call and would sign for {r.randrange(2, 40) * 10} seats."
            )
        if kind == "metric":
            a = r.randrange(20, 900)
            return (
                f"The {r.choice(METRICS)} of {obj} went from {a} to {a * r.randrange(2, 9) // 10} "
                f"after {person} {r.choice(VERBS)} it."
            )
        if kind == "reading":
            topic, idea = r.choice(TOPICS)
            return f"Reading notes on {topic}: {idea}. Might apply to {obj}."
        if kind == "howto":
            return (
                f"To recover {obj}, run `{r.choice(['make', 'kubectl', 'psql', 'git'])} "
                f"{r.choice(KEYWORDS)}` and then check the {tool} dashboard."
            )
        return (
            f"TODO for {person}: {r.choice(VERBS).removesuffix('ed')} {obj} before "
            f"{r.choice(MONTHS)}, blocked on {r.choice(FEATURES)}."
        )

    def memory(self) -> dict[str, Any]:
        r = self.rng
        kinds = ["decision", "bug", "habit", "request", "metric", "reading", "howto", "todo"]
        # Mostly a few lines of different kinds, as an agent's session summary reads; one line
        # alone often repeats an earlier one in meaning, and dedup skips it, as it should.
        lines = [r.choice(kinds) for _ in range(r.choice([1, 2, 2, 3, 3, 4, 6, 8]))]
        text = " ".join(self._line(kind) for kind in lines)
        if len(lines) > 4:
            text = f"Notes from the {r.choice(MONTHS)} sync with {r.choice(PEOPLE)}: {text}"
        return {
            "content": f"{text} (ticket {r.randrange(100_000)})",
            "namespace": NAMESPACE,
            "tags": r.sample(TAGS, k=r.randrange(1, 4)),
            "content_type": "decision" if lines[0] == "decision" else "note",
            "importance": round(r.uniform(0.2, 0.9), 2),
        }

    def query(self) -> dict[str, Any]:
        r = self.rng
        obj = r.choice(OBJECTS)
        text = r.choice(
            [
                f"why did we change {obj}?",
                f"what does {r.choice(PEOPLE)} prefer",
                f"which customer wants {r.choice(FEATURES)}",
                f"{obj} {r.choice(KEYWORDS)}",
                f"how do I recover {obj}",
                f"bug causing {r.choice(SYMPTOMS)}",
                f"notes about {r.choice(TOPICS)[0]}",
            ]
        )
        return {"query": text, "namespace": NAMESPACE, "limit": r.choice([5, 10])}


@dataclass
class Request:
    at: float  # seconds since the load started
    kind: str  # store, search or health
    ms: float
    ok: bool


@dataclass
class Recorder:
    """Every request as locust reports it, and what each acknowledged store returned."""

    t0: float = 0.0
    requests: list[Request] = field(default_factory=list)
    stored: dict[str, str | None] = field(default_factory=dict)  # id -> content sent
    dedup: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)

    def on_request(
        self,
        name: str,
        response_time: float,
        exception: BaseException | None,
        start_time: float,
        **_: Any,
    ) -> None:
        ok = exception is None
        self.requests.append(Request(start_time - self.t0, name, response_time, ok))
        if not ok:
            self.errors[f"{name}: {str(exception)[:120]}"] += 1


RECORDER = Recorder()


class SoakUser(FastHttpUser):
    """One agent at a steady pace: 30% stores, 70% searches."""

    wait_time = constant_throughput(1 / USER_PERIOD_SECONDS)

    def on_start(self) -> None:
        self.writer = Writer(seed=random.randrange(2**32))

    @task(round(STORE_SHARE * 10))
    def store(self) -> None:
        body = self.writer.memory()
        with self.client.post(
            "/api/memories", json=body, name="store", catch_response=True
        ) as reply:
            if reply.status_code not in (200, 201):
                reply.failure(f"HTTP {reply.status_code}: {(reply.text or '')[:200]}")
                return
            data = reply.json()
            action = data.get("dedup_action", "created")
            RECORDER.dedup[action] += 1
            if not data.get("indexed", True):
                RECORDER.dedup["not indexed"] += 1
            # A store that dedup skipped answers with the memory it matched: that one must be
            # there, but with its own text.
            if action == "skipped":
                RECORDER.stored.setdefault(data["id"], None)
            else:
                RECORDER.stored[data["id"]] = body["content"]

    @task(10 - round(STORE_SHARE * 10))
    def search(self) -> None:
        with self.client.post(
            "/api/memories/search", json=self.writer.query(), name="search", catch_response=True
        ) as reply:
            if reply.status_code != 200:
                reply.failure(f"HTTP {reply.status_code}: {(reply.text or '')[:200]}")


class HealthProbe(FastHttpUser):
    """The baseline: a trivial request timed beside the load."""

    fixed_count = 1
    wait_time = constant_throughput(HEALTH_PER_SECOND)

    @task
    def health(self) -> None:
        self.client.get("/health", name="health")


@dataclass
class Sample:
    at: float  # seconds since the load started
    rss_mb: dict[str, float]
    postgres_pss_mb: float
    postgres_processes: int
    stack_cpu_s: float
    client_cpu_s: float  # this process: the supervisor and the load generator
    machine_cpu_pct: float
    load_avg: float
    pids: dict[str, int]
    backlog: dict[str, int]  # JetStream consumer -> events not yet handled


class Watch:
    """The stack's processes by part, read again at every sample so a restarted part is
    followed (its pid changes, and the report says so)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        psutil.cpu_percent()  # starts the machine-wide counter

    def _groups(self) -> dict[str, list[psutil.Process]]:
        groups = {name: [psutil.Process(self.stack.process(name).pid)] for name in PARTS}
        nats = self.stack.embedded_nats
        if nats is not None and nats.pid is not None:
            groups["nats-server"] = [psutil.Process(nats.pid)]
        pid_file = self.stack.config.data_dir / "postgres" / "postmaster.pid"
        if pid_file.is_file():
            postmaster = psutil.Process(int(pid_file.read_text().split("\n", 1)[0]))
            groups["postgres"] = [postmaster, *postmaster.children(recursive=True)]
        return groups

    def sample(self, at: float) -> Sample:
        rss: dict[str, float] = {}
        pss = cpu = 0.0
        groups = self._groups()
        for name, procs in groups.items():
            total = 0
            for proc in procs:
                try:
                    total += proc.memory_info().rss
                    times = proc.cpu_times()
                    cpu += times.user + times.system
                    if name == "postgres":
                        pss += proc.memory_full_info().pss
                except (psutil.NoSuchProcess, psutil.AccessDenied):  # a backend that just left
                    continue
            rss[name] = total / 2**20
        return Sample(
            at=at,
            rss_mb=rss,
            postgres_pss_mb=pss / 2**20,
            postgres_processes=len(groups.get("postgres", [])),
            stack_cpu_s=cpu,
            client_cpu_s=sum(psutil.Process().cpu_times()[:2]),
            machine_cpu_pct=psutil.cpu_percent(),
            load_avg=os.getloadavg()[0],
            pids={name: procs[0].pid for name, procs in groups.items()},
            backlog=self.backlog(),
        )

    def backlog(self) -> dict[str, int]:
        """Events each JetStream consumer has yet to handle (pending plus unacknowledged), from
        NATS monitoring: a worker that cannot keep up with the rate shows here first."""
        nats = self.stack.embedded_nats
        if nats is None:
            return {}
        try:
            reply = httpx.get(f"{nats.monitor_url}/jsz", params={"consumers": "true"}, timeout=5)
            accounts = reply.json().get("account_details", [])
        except (httpx.HTTPError, ValueError):
            return {}
        return {
            consumer["name"]: consumer.get("num_pending", 0) + consumer.get("num_ack_pending", 0)
            for account in accounts
            for stream in account.get("stream_detail", [])
            for consumer in stream.get("consumer_detail", [])
        }


def run_load(stack: Stack, minutes: int, rate: float) -> list[Sample]:
    """Drive the stack for `minutes` at `rate` requests/s; the samples of its processes."""
    users = max(1, round(rate * USER_PERIOD_SECONDS))
    env = Environment(user_classes=[SoakUser, HealthProbe], host=stack.gateway_url)
    env.events.request.add_listener(RECORDER.on_request)
    runner = env.create_local_runner()
    watch = Watch(stack)
    samples = [watch.sample(0.0)]
    RECORDER.t0 = time.time()
    # Users start over one period, not at once, so their requests do not come in bursts.
    runner.start(users + 1, spawn_rate=(users + 1) / USER_PERIOD_SECONDS)
    ticks = int(minutes * 60 / SAMPLE_SECONDS)
    try:
        for tick in range(1, ticks + 1):
            time.sleep(max(0.0, RECORDER.t0 + tick * SAMPLE_SECONDS - time.time()))
            stack.check_children()  # what `exo up` does while it runs: restart a part that died
            samples.append(watch.sample(tick * SAMPLE_SECONDS))
            if tick % 2 == 0:
                done = [r for r in RECORDER.requests if r.kind != "health"]
                print(
                    f"minute {tick // 2}/{minutes}: {len(done)} requests, "
                    f"{sum(not r.ok for r in done)} errors, "
                    f"RSS {sum(samples[-1].rss_mb.values()):.0f} MiB, "
                    f"load {samples[-1].load_avg:.1f}",
                    flush=True,
                )
    finally:
        runner.quit()
    return samples


def drain(stack: Stack, limit_seconds: float = DRAIN_LIMIT_SECONDS) -> tuple[float, int]:
    """Once the load stops, wait until every consumer has handled every event, or the limit:
    the seconds waited and the events still waiting. A backlog left by a busy stretch must
    shrink back to nothing, or the workers fall further behind with every such stretch."""
    watch = Watch(stack)
    start = time.monotonic()
    left = sum(watch.backlog().values())
    while left and time.monotonic() - start < limit_seconds:
        time.sleep(5)
        stack.check_children()
        left = sum(watch.backlog().values())
    return time.monotonic() - start, left


def read_back(stack: Stack) -> dict[str, int]:
    """Read every acknowledged memory by id: each must be there, with the content sent unless
    dedup answered with the memory the text matched."""
    out: Counter[str] = Counter()
    with httpx.Client(base_url=stack.gateway_url, timeout=60) as client:
        for memory_id, content in RECORDER.stored.items():
            reply = client.get(f"/api/memories/{memory_id}")
            if reply.status_code != 200:
                out[f"HTTP {reply.status_code}"] += 1
            elif content is None:
                out["found (a dedup match)"] += 1
            elif reply.json().get("content") == content:
                out["found, same content"] += 1
            else:
                out["found, DIFFERENT content"] += 1
    return dict(out)


@dataclass
class Window:
    start: int  # minute
    stats: dict[str, dict[str, float]]  # kind -> n, errors, p50, p95, p99


def window(requests: list[Request], start: float, end: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for kind in ("store", "search", "health"):
        mine = [r for r in requests if r.kind == kind and start <= r.at < end]
        ms = [r.ms for r in mine if r.ok]
        out[kind] = {
            "n": len(mine),
            "errors": sum(not r.ok for r in mine),
            **{f"p{p}": pct(ms, p) if ms else float("nan") for p in (50, 95, 99)},
        }
    return out


def slope_mib_per_hour(samples: list[Sample], series: str, since: float, until: float) -> float:
    """Least-squares slope of one process's memory over [since, until] seconds."""
    points = [(s.at, value(s, series)) for s in samples if since <= s.at <= until]
    if len(points) < 3:
        return float("nan")
    t, y = np.array(points).T
    return float(np.polyfit(t / 3600, y, 1)[0])


def value(sample: Sample, series: str) -> float:
    if series == "postgres (PSS)":
        return sample.postgres_pss_mb
    if series == "all":
        return sum(sample.rss_mb.values())
    return sample.rss_mb.get(series, float("nan"))


def source_state() -> str:
    """The commit the stack's code came from, and whether that tree had local changes to it."""
    src = Path(exocortex.core.config.__file__).resolve().parent
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=src, capture_output=True, text=True
        ).stdout.strip()
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=top, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "libs", "services", "gateway", "mcp-adapter"],
            cwd=top,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "source not under git"
    return f"commit `{commit}`" + (" with local changes to the services" if dirty else "")


def plot(path: Path, windows: list[Window], samples: list[Sample], warmup: int) -> None:
    fig, (lat, mem) = plt.subplots(2, 1, figsize=(12, 9), sharex=True)
    minutes = [w.start + 0.5 for w in windows]
    styles = {"p50": "-", "p95": "--", "p99": ":"}
    for kind, colour in (("store", "tab:red"), ("search", "tab:blue"), ("health", "tab:gray")):
        for p, style in styles.items():
            if kind == "health" and p != "p50":
                continue
            lat.plot(
                minutes,
                [w.stats[kind][p] for w in windows],
                style,
                color=colour,
                label=f"{kind} {p}" + (" (baseline)" if kind == "health" else ""),
            )
    lat.set_yscale("log")
    lat.set_ylabel("latency per minute, ms (log)")
    lat.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    lat.grid(True, which="both", alpha=0.3)
    at = [s.at / 60 for s in samples]
    for series in [*sorted(samples[-1].rss_mb), "postgres (PSS)"]:
        mem.plot(at, [value(s, series) for s in samples], label=series)
    mem.axvspan(0, warmup, color="0.9", label="warm-up")
    mem.set_ylabel("memory, MiB")
    mem.set_xlabel("minutes under load")
    mem.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    mem.grid(True, alpha=0.3)
    fig.suptitle("Exocortex soak: steady stores and searches on the embedded default")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fmt(x: float, digits: int = 0) -> str:
    return "–" if x != x else f"{x:.{digits}f}"  # NaN: nothing measured


def report(
    args: argparse.Namespace,
    windows: list[Window],
    samples: list[Sample],
    readback: dict[str, int],
    drained: tuple[float, int],
    up_seconds: float,
    source: str,
) -> str:
    reqs = RECORDER.requests
    end = args.minutes * 60
    overall = window(reqs, 0, end)
    base_n = min(3, args.minutes)
    edge = max(1, min(5, args.minutes // 2))
    base = window(reqs, 0, base_n * 60)
    first, last = window(reqs, 0, edge * 60), window(reqs, end - edge * 60, end)
    achieved = sum(overall[k]["n"] for k in ("store", "search")) / end
    stack_cpu = (samples[-1].stack_cpu_s - samples[0].stack_cpu_s) / end * 100
    client_cpu = (samples[-1].client_cpu_s - samples[0].client_cpu_s) / end * 100
    machine_cpu = float(np.median([s.machine_cpu_pct for s in samples[1:]]))
    load = float(np.median([s.load_avg for s in samples[1:]]))
    acknowledged = len(RECORDER.stored)
    missing = sum(n for k, n in readback.items() if k.startswith("HTTP"))

    lines = [
        BEGIN_MARK,
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench-soak` "
        f"(`tests/bench/soak.py --minutes {args.minutes} --rate {args.rate:g}`), {source}. "
        f"`exo up` in a fresh data directory became healthy in {up_seconds:.0f} s (the first "
        "start exports the model to ONNX, so the embedding process keeps the torch it loaded "
        "for that). Then locust, in the same process as the supervisor, sent "
        f"{args.rate:g} requests/s for {args.minutes} minutes "
        f"({round(args.rate * USER_PERIOD_SECONDS)} users, each one request every "
        f"{USER_PERIOD_SECONDS:g} s): {STORE_SHARE:.0%} stores of varied memories (one sentence "
        f"to a few paragraphs), {1 - STORE_SHARE:.0%} searches; plus GET /health every "
        f"{1 / HEALTH_PER_SECOND:g} s as a baseline. Latency is client side, end to end; a "
        "store returns once the memory is searchable.",
        "",
        f"Conditions: {os.cpu_count()} cores, shared with other work while it ran (median "
        f"1-minute load average {load:.1f}, median machine CPU {machine_cpu:.0f}%); the stack "
        f"itself used {stack_cpu:.0f}% of one core on average, the load generator "
        f"{client_cpu:.0f}%. On a shared machine compare "
        f"the ratios (to this run's first {base_n} minutes, and to GET /health) rather than "
        "the milliseconds.",
        "",
        "## Summary",
        "",
        f"Achieved rate {achieved:.2f} requests/s. Errors: "
        f"{int(overall['store']['errors'])} of {int(overall['store']['n'])} stores, "
        f"{int(overall['search']['errors'])} of {int(overall['search']['n'])} searches, "
        f"{int(overall['health']['errors'])} of {int(overall['health']['n'])} health probes."
        + (
            " Error messages: "
            + "; ".join(f"{n}× {msg}" for msg, n in RECORDER.errors.most_common(5))
            if RECORDER.errors
            else ""
        ),
        "",
        "| ms | p50 | p95 | p99 |",
        "|---|---:|---:|---:|",
    ]
    for label, stats in (
        ("store, whole run", overall["store"]),
        (f"store, first {edge} min", first["store"]),
        (f"store, last {edge} min", last["store"]),
        ("search, whole run", overall["search"]),
        (f"search, first {edge} min", first["search"]),
        (f"search, last {edge} min", last["search"]),
        ("GET /health (baseline), whole run", overall["health"]),
        (f"GET /health, first {edge} min", first["health"]),
        (f"GET /health, last {edge} min", last["health"]),
    ):
        lines.append(
            f"| {label} | {fmt(stats['p50'], 1)} | {fmt(stats['p95'], 1)} | "
            f"{fmt(stats['p99'], 1)} |"
        )
    lines += [
        "",
        f"Read back by id after the run: {acknowledged} acknowledged stores, "
        + ", ".join(f"{k}: {n}" for k, n in sorted(readback.items()))
        + f" — {'none missing' if not missing else f'{missing} NOT readable'}. "
        "Store outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(RECORDER.dedup.items())) + ".",
        "",
        "Event backlog (JetStream events a consumer has not yet handled; a worker that cannot "
        "keep up with the rate grows it): "
        + (
            "; ".join(
                f"{name} max {max(s.backlog.get(name, 0) for s in samples)}, "
                f"at end {samples[-1].backlog.get(name, 0)}"
                for name in sorted(samples[-1].backlog)
            )
            or "not read"
        )
        + (
            f". Once the load stopped, it drained to nothing in {drained[0]:.0f} s."
            if not drained[1]
            else f". Once the load stopped, {drained[1]} events were still waiting after "
            f"{drained[0]:.0f} s."
        ),
        "",
        "## Memory",
        "",
        f"Sampled every {SAMPLE_SECONDS:g} s. Slopes are least-squares fits after a "
        f"{args.warmup}-minute warm-up (caches and pools filling), over the whole rest and "
        "over each half of it: a leak keeps growing in both halves, a cache that is filling "
        "flattens in the second. Postgres is summed over the postmaster and its backends; "
        "its RSS counts the shared buffers each backend has touched, so its PSS (shared pages "
        "split between processes) is given too "
        f"({samples[0].postgres_processes} Postgres processes at start, "
        f"{samples[-1].postgres_processes} at end). Memory that swings from sample to sample "
        f"is given as medians over {edge} minute{'s' if edge > 1 else ''}.",
        "",
        f"| MiB | at start | {edge} min after warm-up (median) | last {edge} min (median) | "
        "slope after warm-up, MiB/hour | first half | second half |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    since = args.warmup * 60
    middle = (since + end) / 2

    def median(series: str, start: float, stop: float) -> float:
        picked = [value(s, series) for s in samples if start <= s.at <= stop]
        return float(np.median(picked)) if picked else float("nan")

    restarted = []
    for series in [*sorted(samples[-1].rss_mb), "postgres (PSS)"]:
        lines.append(
            f"| {series} | {fmt(value(samples[0], series))} | "
            f"{fmt(median(series, since, since + edge * 60))} | "
            f"{fmt(median(series, end - edge * 60, end))} | "
            f"{fmt(slope_mib_per_hour(samples, series, since, end), 1)} | "
            f"{fmt(slope_mib_per_hour(samples, series, since, middle), 1)} | "
            f"{fmt(slope_mib_per_hour(samples, series, middle, end), 1)} |"
        )
        if series in samples[0].pids and samples[0].pids[series] != samples[-1].pids[series]:
            restarted.append(series)
    lines += [
        f"| **all (RSS summed)** | {sum(samples[0].rss_mb.values()):.0f} | "
        f"{fmt(median('all', since, since + edge * 60))} | "
        f"{fmt(median('all', end - edge * 60, end))} | "
        f"{fmt(slope_mib_per_hour(samples, 'all', since, end), 1)} | | |",
        "",
        "Restarted during the run: " + (", ".join(restarted) if restarted else "none") + ".",
        "",
        f"![latency and memory over time]({args.report.with_suffix('.png').name})",
        "",
        "## Per minute",
        "",
        f"Latency in ms; × is the p50 as a multiple of the p50 over the first {base_n} "
        "minutes; RSS is the whole stack's, summed, and backlog the events not yet handled by "
        "any consumer, at the end of the minute.",
        "",
        "| min | stores | store p50 | p95 | p99 | × | searches | search p50 | p95 | p99 | × | "
        "errors | /health p50 | load avg | RSS MiB | backlog |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by_time = {s.at: s for s in samples}
    for w in windows:
        st, se, he = w.stats["store"], w.stats["search"], w.stats["health"]
        sample = by_time.get((w.start + 1) * 60.0, samples[-1])
        lines.append(
            f"| {w.start + 1} | {int(st['n'])} | {fmt(st['p50'], 1)} | {fmt(st['p95'])} | "
            f"{fmt(st['p99'])} | {fmt(st['p50'] / base['store']['p50'], 2)} | "
            f"{int(se['n'])} | {fmt(se['p50'], 1)} | {fmt(se['p95'])} | {fmt(se['p99'])} | "
            f"{fmt(se['p50'] / base['search']['p50'], 2)} | "
            f"{int(st['errors'] + se['errors'])} | {fmt(he['p50'], 1)} | "
            f"{sample.load_avg:.1f} | {sum(sample.rss_mb.values()):.0f} | "
            f"{sum(sample.backlog.values())} |"
        )
    lines.append(END_MARK)
    return "\n".join(lines)


def write_report(path: Path, section: str) -> None:
    """Put `section` between the markers in `path`, keeping the rest of the file (notes on
    earlier runs, written by hand); a new file gets a title and the section."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN_MARK in old and END_MARK in old:
        head, rest = old.split(BEGIN_MARK, 1)
        text = head + section + rest.split(END_MARK, 1)[1]
    else:
        text = f"{TITLE}\n\n{section}\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=int, default=30)
    parser.add_argument("--rate", type=float, default=10.0, help="requests/s, stores + searches")
    parser.add_argument("--data-dir", type=Path, help="an empty directory for the stack's data")
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument(
        "--warmup", type=int, help="minutes left out of the memory slopes (default: 1/6 of run)"
    )
    args = parser.parse_args()
    args.warmup = args.warmup if args.warmup is not None else max(1, min(5, args.minutes // 6))
    if args.data_dir and args.data_dir.exists() and any(args.data_dir.iterdir()):
        raise SystemExit(f"{args.data_dir} is not empty: the soak starts from a fresh store")
    logging.getLogger("locust").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="exo-soak-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        stack = Stack(StackConfig.with_free_ports(data_dir))
        start = time.perf_counter()
        stack.start(timeout=300)
        up_seconds = time.perf_counter() - start
        try:
            time.sleep(10)  # let start-up work settle before the first sample
            samples = run_load(stack, args.minutes, args.rate)
            print("waiting for the event backlog to drain", flush=True)
            drained = drain(stack)
            print(f"reading back {len(RECORDER.stored)} stored memories", flush=True)
            readback = read_back(stack)
        finally:
            stack.stop()
    windows = [
        Window(m, window(RECORDER.requests, m * 60, (m + 1) * 60)) for m in range(args.minutes)
    ]
    args.report.parent.mkdir(parents=True, exist_ok=True)
    plot(args.report.with_suffix(".png"), windows, samples, args.warmup)
    write_report(
        args.report, report(args, windows, samples, readback, drained, up_seconds, source_state())
    )
    print(args.report.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
