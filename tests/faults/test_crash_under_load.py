"""Every part of the stack is killed (SIGKILL) in turn while several clients store memories, as
agents would, retrying what fails. Afterwards nothing acknowledged is lost: every memory answered
with 201 is readable by its id and found by its own unique words, none was written twice, and
the stack is healthy. The time each crash took to heal is printed."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.core.runtime.stack import Stack

pytestmark = pytest.mark.e2e

Supervise = Callable[[Stack], AbstractContextManager[Any]]

# Killed in this order, one per stretch of the load.
PARTS = ("retrieval", "enrichment", "embedding", "ingest", "gateway", "nats", "postgres")
# 40 stores a part: each kill lands with all six clients mid-request, which is the property.
# The full-size run (1,000) is tests/bench/full_size_faults.py.
MEMORIES = int(os.environ.get("EXO_TEST_CRASH_MEMORIES", "280"))
CLIENTS = 6
CONVERGE_SECONDS = 60.0
# Tokens per search when checking findability: each token is a rare keyword, so a handful of
# them rank first in the keyword list, well inside the 100 results a search may return
# whatever the vector list puts beside them.
TOKENS_PER_SEARCH = 20
RETRY_PAUSE_SECONDS = 0.25

# Words for the memories' text: varied enough that two memories are rarely near duplicates.
_WORDS = (
    "boiler valve ledger invoice harbour glacier orchard violin tractor satellite cathedral "
    "pharmacy compiler mortgage lantern meadow thunder quartz bicycle kitchen volcano "
    "passport spreadsheet telescope bakery canyon antenna furnace garden ferry tunnel piano "
    "carpet battery river museum printer helmet saddle compass chimney vineyard laboratory"
)
_VERBS = (
    "inspected repaired ordered cancelled measured painted delivered audited borrowed "
    "replaced cleaned tuned booked shipped rewired insured"
)


@dataclass
class Ack:
    """A store the API acknowledged with 201."""

    memory_id: str
    token: str
    attempts: int


@dataclass
class Load:
    """Clients storing memories, each with a unique token, retrying until acknowledged."""

    base_url: str
    acks: list[Ack] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)
    unexpected: list[str] = field(default_factory=list)
    _allowed: int = 0
    _next: int = 0
    _stopped: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _more: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self._more = threading.Condition(self._lock)

    def allow(self, upto: int) -> None:
        """Let the clients store memories up to number ``upto``."""
        with self._more:
            self._allowed = upto
            self._more.notify_all()

    def stop(self) -> None:
        """No more new stores: the clients finish the one they are at and return (a test that
        fails part-way must not leave them waiting for work that never comes)."""
        with self._more:
            self._stopped = True
            self._more.notify_all()

    @property
    def acknowledged(self) -> int:
        with self._lock:
            return len(self.acks)

    def snapshot(self) -> list[Ack]:
        with self._lock:
            return list(self.acks)

    def _take(self) -> int | None:
        with self._more:
            while self._next >= self._allowed or self._stopped:
                if self._allowed >= MEMORIES or self._stopped:
                    return None
                self._more.wait(0.5)
            number = self._next
            self._next += 1
            return number

    def run_client(self) -> None:
        rng = random.Random()
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            while (number := self._take()) is not None:
                token = f"tok-{uuid.uuid4().hex[:12]}"
                words = rng.sample(_WORDS.split(), 4)
                content = (
                    f"Note {number}: the {words[0]} and the {words[1]} were "
                    f"{rng.choice(_VERBS.split())} next to the {words[2]} by the {words[3]} team; "
                    f"reference {token}."
                )
                self._store(client, content, token)

    def _store(self, client: httpx.Client, content: str, token: str) -> None:
        attempts = 0
        while not self._stopped:
            attempts += 1
            try:
                reply = client.post("/api/memories", json={"content": content})
            except httpx.TransportError as exc:
                self._refused(type(exc).__name__)
                time.sleep(RETRY_PAUSE_SECONDS)
                continue
            if reply.status_code == 201:
                with self._lock:
                    self.acks.append(Ack(reply.json()["id"], token, attempts))
                return
            if reply.status_code < 500:
                # A refusal the client cannot fix by trying again: a bug, not an outage.
                with self._lock:
                    self.unexpected.append(f"{reply.status_code} {reply.text[:300]}")
                return
            self._refused(str(reply.status_code))
            time.sleep(RETRY_PAUSE_SECONDS)

    def _refused(self, why: str) -> None:
        with self._lock:
            self.refusals[why] = self.refusals.get(why, 0) + 1


def _found(client: httpx.Client, tokens: list[str]) -> set[str]:
    """Ids of the memories a keyword search for ``tokens`` finds through an index (a hit with
    no rank was only served from Postgres, which proves nothing about the projection)."""
    try:
        reply = client.post("/api/memories/search", json={"query": " ".join(tokens), "limit": 100})
    except httpx.TransportError:
        return set()
    if reply.status_code != 200:
        return set()
    return {
        r["memory"]["id"] for r in reply.json()["results"] if r["score_breakdown"]["keyword_rank"]
    }


def _unfindable(client: httpx.Client, acks: Iterable[Ack]) -> list[Ack]:
    """The acknowledged memories a search by their token does not find."""
    acks = list(acks)
    missing: list[Ack] = []
    for start in range(0, len(acks), TOKENS_PER_SEARCH):
        batch = acks[start : start + TOKENS_PER_SEARCH]
        found = _found(client, [a.token for a in batch])
        missing.extend(a for a in batch if a.memory_id not in found)
    return missing


def _postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])


def _kill(stack: Stack, part: str) -> None:
    """SIGKILL, as a crash: the supervisor must notice and start the part again."""
    if part == "nats":
        assert stack.embedded_nats is not None
        assert stack.embedded_nats.pid is not None
        os.kill(stack.embedded_nats.pid, signal.SIGKILL)
    elif part == "postgres":
        assert stack.embedded_postgres is not None
        os.kill(_postmaster_pid(stack.embedded_postgres.data_dir), signal.SIGKILL)
    else:
        os.kill(stack.process(part).pid, signal.SIGKILL)


def _probe(client: httpx.Client, deadline: float) -> Ack:
    """Store a memory and find it by its token, retrying both until they work."""
    token = f"tok-{uuid.uuid4().hex[:12]}"
    content = f"Probe after a crash, checked by its reference {token}."
    attempts = 0
    memory_id: str | None = None
    last: object = None  # the last store's answer or transport error, for the failure message
    while time.monotonic() < deadline:
        if memory_id is None:
            attempts += 1
            try:
                reply = client.post("/api/memories", json={"content": content})
                last = f"{reply.status_code} {reply.text[:200]}"
                if reply.status_code == 201:
                    memory_id = reply.json()["id"]
            except httpx.TransportError as exc:
                last = exc
        if memory_id is not None and memory_id in _found(client, [token]):
            return Ack(memory_id, token, attempts)
        time.sleep(RETRY_PAUSE_SECONDS)
    pytest.fail(
        f"no store and search succeeded {CONVERGE_SECONDS:.0f}s after the crash "
        f"(stored: {memory_id}; last store answer: {last!r})"
    )


def _converge(client: httpx.Client, acks: list[Ack], deadline: float) -> None:
    """Wait until every one of ``acks`` is found by its token."""
    pending = acks
    started = time.monotonic()
    while pending:
        pending = _unfindable(client, pending)
        if not pending:
            return
        if time.monotonic() > deadline:
            shown = ", ".join(f"{a.memory_id} ({a.token})" for a in pending[:5])
            pytest.fail(f"{len(pending)} acknowledged memories not findable, e.g. {shown}")
        print(f"  {time.monotonic() - started:5.1f}s: {len(pending)} not findable yet")
        time.sleep(0.5)


@dataclass
class Healed:
    part: str
    probe_seconds: float
    all_seconds: float
    acknowledged: int


def test_every_part_killed_under_load_loses_nothing_acknowledged(
    fault_stack: Stack, supervise: Supervise
) -> None:
    # The shared fault stack commits durably, as `exo up` runs it. Without that (the test-only
    # mode also turns off synchronous_commit) a store acknowledged just before the kill is lost
    # with Postgres.
    stack = fault_stack
    healed: list[Healed] = []
    with (
        supervise(stack),
        httpx.Client(base_url=stack.gateway_url, timeout=30) as client,
    ):
        load = Load(stack.gateway_url)
        probes: list[Ack] = []
        stretch = MEMORIES // len(PARTS)
        # load.acks[:checked] were all found after the previous crash.
        checked = 0
        with ThreadPoolExecutor(CLIENTS) as clients:
            running = [clients.submit(load.run_client) for _ in range(CLIENTS)]
            try:
                for n, part in enumerate(PARTS):
                    load.allow(MEMORIES if n == len(PARTS) - 1 else (n + 1) * stretch)
                    # Killed half-way through its stretch: clients are mid-request.
                    kill_at = n * stretch + stretch // 2
                    while load.acknowledged < kill_at:
                        assert all(not c.done() for c in running), [c.result() for c in running]
                        time.sleep(0.05)
                    _kill(stack, part)
                    killed = time.monotonic()
                    deadline = killed + CONVERGE_SECONDS
                    probe = _probe(client, deadline)
                    probes.append(probe)
                    probe_seconds = time.monotonic() - killed
                    acked = load.snapshot()
                    # Retrieval's crash could lose what its indexes held, so everything is searched
                    # again; another part's crash can only delay what was in flight (the end checks
                    # all of it once more).
                    since = 0 if part == "retrieval" else checked
                    _converge(client, [*acked[since:], probe], deadline)
                    checked = len(acked)
                    healed.append(
                        Healed(part, probe_seconds, time.monotonic() - killed, len(acked))
                    )
                    print(
                        f"\n{part} SIGKILL: store + search again after {probe_seconds:.1f}s, "
                        f"every acknowledged memory findable after {healed[-1].all_seconds:.1f}s "
                        f"({healed[-1].acknowledged} acknowledged so far)"
                    )
            except BaseException:
                # Stop the clients, or leaving the pool would wait for them forever.
                load.stop()
                raise
            for done in running:
                done.result()

        assert not load.unexpected, load.unexpected[:5]
        acks = load.acks + probes
        assert len(load.acks) == MEMORIES
        print(f"refused and retried meanwhile: {load.refusals}")
        # An outage is a 503 (or no answer); a 500 would say the service itself failed.
        assert "500" not in load.refusals, load.refusals

        # Within a minute of the last kill, all of it is readable and findable.
        _converge(client, acks, killed + CONVERGE_SECONDS)
        print(f"all {len(acks)} found {time.monotonic() - killed:.1f}s after the last kill")
        with ThreadPoolExecutor(CLIENTS) as readers:
            codes = list(
                readers.map(lambda a: client.get(f"/api/memories/{a.memory_id}").status_code, acks)
            )
        lost = [a.memory_id for a, code in zip(acks, codes, strict=True) if code != 200]
        assert not lost, f"acknowledged but not readable: {lost[:5]}"

        _assert_applied_once(stack.database_url, acks)

        deadline = time.monotonic() + 30
        while (health := client.get("/health")).status_code != 200:
            assert time.monotonic() < deadline, health.text
            time.sleep(0.5)
        assert health.json()["status"] == "ok"

    print("\npart killed | store + search back | every acknowledged memory findable")
    for h in healed:
        print(f"{h.part:11} | {h.probe_seconds:6.1f}s | {h.all_seconds:6.1f}s")


def _assert_applied_once(database_url: str, acks: list[Ack]) -> None:
    """Each token is in exactly one active row (a memory, or a variant kept for its wording),
    and no memory was written more often than its stores explain: one write per attempt that may
    have reached the database (a retry after a lost reply is reused, which counts as a write)
    plus enrichment's one."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT substring(content FROM 'tok-[0-9a-f]{12}') AS token, count(*) "
            "FROM memories WHERE is_active AND content LIKE '%tok-%' GROUP BY 1"
        ).fetchall()
        copies: dict[str, int] = dict(rows)
        versions: dict[str, int] = dict(
            conn.execute(
                "SELECT id, version FROM memories WHERE id = ANY(%s)",
                ([a.memory_id for a in acks],),
            ).fetchall()
        )
    twice = {token: n for token, n in copies.items() if n != 1}
    assert not twice, f"tokens stored more than once: {list(twice.items())[:5]}"
    absent = [a.token for a in acks if a.token not in copies]
    assert not absent, f"acknowledged tokens in no active row: {absent[:5]}"
    writes: dict[str, int] = {}
    for a in acks:
        writes[a.memory_id] = writes.get(a.memory_id, 0) + a.attempts
    over = {
        memory_id: (versions.get(memory_id), n + 1)
        for memory_id, n in writes.items()
        if versions.get(memory_id, 0) > n + 1
    }
    assert not over, f"memories written more often than stored (version, bound): {over}"
