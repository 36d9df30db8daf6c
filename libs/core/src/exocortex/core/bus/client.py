"""Connecting to NATS, declaring the stream, and running durable pull consumers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy, StorageType, StreamConfig
from nats.js.errors import FetchTimeoutError, NotFoundError

from exocortex.core.bus import subjects
from exocortex.core.bus.dead_letter import (
    DEAD_LETTERED,
    MAX_DELIVERIES,
    dead_letter,
    deliveries,
)
from exocortex.core.bus.decode import Malformed
from exocortex.core.bus.redelivery import RedeliveryPolicy
from exocortex.core.logging import get_logger
from exocortex.core.secrets import redact_url

log = get_logger(__name__)

# How long a message may stay unacked before JetStream redelivers it. This is also how long the
# events a consumer had taken wait after it crashes, before its restarted self (or another) gets
# them: with a minute, a memory stored just before retrieval was killed stayed unsearchable for a
# minute. A handler that takes longer keeps its batch by reporting progress (see _working).
ACK_WAIT_SECONDS = 10.0
PROGRESS_SECONDS = ACK_WAIT_SECONDS / 3


class BusClient(NatsClient):
    """A NATS client whose first connection is made in the background (see ``connect``).

    Until it is connected, publishes are buffered (up to the client's pending limit) and
    requests time out, as while it reconnects: callers already treat NATS as sometimes away.
    """

    _connecting: asyncio.Task[None] | None = None

    async def _stop_connecting(self) -> bool:
        """Stop a first connection still under way; True when there was one (the client is
        then closed, and has nothing to drain)."""
        task = self._connecting
        if task is None or task.done():
            return False
        task.cancel()
        with suppress(asyncio.CancelledError, Exception):
            await task
        with suppress(Exception):
            await super().close()
        return True

    async def drain(self) -> None:
        if await self._stop_connecting():
            return
        await super().drain()

    async def close(self) -> None:
        if await self._stop_connecting():
            return
        await super().close()


async def connect(url: str, *, name: str) -> BusClient:
    """A client that connects in the background and reconnects endlessly.

    It is returned at once, before it is connected: a process starts and serves what it can
    while NATS is away (the gateway its reads, ingest its stores into the outbox), and its
    publishers and consumers work once the connection is made (``is_connected``). Waiting here
    instead would keep a process that starts during an outage from ever serving.
    """

    async def _disconnected() -> None:
        log.warning("nats disconnected")

    # Attempts fail with the same error until NATS is back: log it once per outage.
    last_error: list[str] = [""]

    async def _reconnected() -> None:
        last_error[0] = ""
        log.info("nats reconnected")

    async def _error(exc: Exception) -> None:
        message = str(exc) or type(exc).__name__
        if message != last_error[0]:
            log.warning("nats error", url=redact_url(url), error=message)
            last_error[0] = message

    client = BusClient()

    async def _connect() -> None:
        # With endless attempts the client's own connect keeps trying every
        # reconnect_time_wait until a server answers.
        await client.connect(
            url,
            name=name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,  # type: ignore[arg-type]  # typed int; a float works
            connect_timeout=2,
            # Draining on shutdown waits for every subscription's pending messages. Right
            # after a reconnect that wait could outlast the 20 s a supervisor gives a stopping
            # process (seen on uvloop); past 5 s the client logs it and closes anyway, and
            # JetStream redelivers whatever was not acknowledged.
            drain_timeout=5,
            allow_reconnect=True,
            disconnected_cb=_disconnected,
            reconnected_cb=_reconnected,
            error_cb=_error,
        )
        # What was published or subscribed while connecting waits in the client's buffer.
        with suppress(Exception):  # lost again at once: the reconnect sends it
            await client.flush()
        last_error[0] = ""
        log.info("nats connected", url=redact_url(url))

    client._connecting = asyncio.create_task(_connect(), name=f"nats-connect-{name}")
    # Let the connect set the client up (its buffers) before anyone publishes through it.
    await asyncio.sleep(0)
    return client


async def ensure_stream(js: JetStreamContext) -> None:
    """Create the event stream if missing (idempotent; every process may call it)."""
    config = StreamConfig(
        name=subjects.STREAM,
        subjects=subjects.STREAM_SUBJECTS,
        storage=StorageType.FILE,
        # Deduplicate re-published outbox rows (same Nats-Msg-Id) over this window.
        duplicate_window=120.0,
        max_age=14 * 24 * 3600.0,
    )
    try:
        await js.stream_info(subjects.STREAM)
    except NotFoundError:
        await js.add_stream(config)


Handler = Callable[[Sequence[Msg]], Awaitable[None]]


@asynccontextmanager
async def _working(msgs: Sequence[Msg]) -> AsyncIterator[None]:
    """While the block runs, tell JetStream every ``PROGRESS_SECONDS`` that ``msgs`` are still
    being handled, so a slow batch is not redelivered under the consumer's feet."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(PROGRESS_SECONDS)
            for msg in msgs:
                # One already acked (handled one by one) ignores it.
                with suppress(Exception):
                    await msg.in_progress()

    task = asyncio.create_task(beat(), name="jetstream-progress")
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


@dataclass
class DurableConsumer:
    """A durable pull consumer that hands batches to ``handler`` and acks them only after the
    handler returns (so effects are committed before the ack). When a batch fails, each of its
    events is handled on its own, so good events go through; an event that still fails is
    nak'ed with a delay and redelivered, and after ``max_deliveries`` deliveries it is parked
    in the dead-letter stream (see ``dead_letter``) and the consumer moves on. A failure that
    says a dependency is away (``redelivery.is_transient``) is retried with a growing delay for
    much longer, so an outage does not park the events that arrived during it."""

    js: JetStreamContext
    durable: str
    filter_subject: str
    handler: Handler
    batch_size: int = 128
    fetch_timeout: float = 1.0
    # After a batch that did not fill, wait this long and take what arrived meanwhile too: a
    # consumer whose effects may lag a little then handles a steady trickle in a few larger
    # batches instead of one message at a time (0: handle each batch at once).
    linger: float = 0.0
    # While each linger brings more, keep lingering, up to this long in all (0: one linger).
    # A lone event waits one linger; a steady stream is handled in batches of about this many
    # seconds' worth, so what each batch costs whatever its size (a transaction, a
    # nearest-neighbour call, the events it publishes) is paid once a second, not ten times.
    max_linger: float = 0.0
    max_deliveries: int = MAX_DELIVERIES
    retry_delay: float = 2.0
    # An outage's retries: delays double from retry_delay up to this.
    max_retry_delay: float = 30.0
    # Batches handled at once. Above 1 the next batch is fetched and handed over while earlier
    # ones are still being handled (each acked when its own handler returns): for a handler
    # whose last step waits on something shared, e.g. the projector waiting for a keyword
    # commit that several batches join. The handler must then cope with overlapping calls.
    max_in_flight: int = 1

    def __post_init__(self) -> None:
        # The series exists at 0 from the start, so the first parked event is an increase the
        # alert can see (a series born at 1 shows no increase).
        DEAD_LETTERED.labels(self.durable)

    async def pending(self) -> int:
        info = await self.js.consumer_info(subjects.STREAM, self.durable)
        return int(info.num_pending or 0) + int(info.num_ack_pending or 0)

    async def _more(self, sub: JetStreamContext.PullSubscription, wanted: int) -> list[Msg]:
        """What arrives while the stream keeps flowing: a linger that brings nothing ends the
        batch, and so do ``wanted`` messages or ``max_linger`` seconds in all."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(self.max_linger, self.linger)
        more: list[Msg] = []
        while len(more) < wanted:
            await asyncio.sleep(self.linger)
            try:
                more += await sub.fetch(wanted - len(more), timeout=0.05)
            except (NatsTimeoutError, FetchTimeoutError, TimeoutError):
                break
            if loop.time() + self.linger > deadline:
                break
        return more

    async def _one_by_one(self, msgs: Sequence[Msg]) -> None:
        for msg in msgs:
            try:
                await self.handler([msg])
            except Exception as exc:
                await self._failed(msg, exc)
            else:
                await msg.ack()

    async def _failed(self, msg: Msg, exc: Exception) -> None:
        """Retry later, or, past the bound, park the event and move on. A malformed event is
        parked at once: every delivery would fail the same way."""
        error = f"{type(exc).__name__}: {exc}"
        delivered = deliveries(msg)
        policy = RedeliveryPolicy(
            self.max_deliveries, self.retry_delay, max_retry_delay=self.max_retry_delay
        )
        delay = None if isinstance(exc, Malformed) else policy.delay(delivered, exc)
        if delay is not None:
            log.warning(
                "event failed; will be redelivered",
                consumer=self.durable,
                subject=msg.subject,
                deliveries=delivered,
                retry_in_seconds=delay,
                error=error,
            )
            with suppress(Exception):
                await msg.nak(delay=delay)
            return
        log.error(
            "event malformed or failed on every delivery; parked in the dead-letter stream",
            consumer=self.durable,
            subject=msg.subject,
            deliveries=delivered,
            error=error,
        )
        try:
            await dead_letter(self.js, self.durable, msg, error)
        except Exception as publish_error:
            # Not parked: leave it to be delivered again rather than lose it.
            log.warning("dead-lettering failed", error=str(publish_error), consumer=self.durable)
            with suppress(Exception):
                await msg.nak(delay=self.retry_delay)

    async def _handle(self, msgs: list[Msg]) -> None:
        """Hand ``msgs`` to the handler and ack them once it returns; a failed batch is handled
        event by event (see the class)."""
        async with _working(msgs):
            try:
                await self.handler(msgs)
            except Exception as exc:
                if len(msgs) == 1:
                    await self._failed(msgs[0], exc)
                else:
                    log.warning(
                        "event batch failed; handling its events one by one",
                        consumer=self.durable,
                        error=str(exc) or type(exc).__name__,
                    )
                    await self._one_by_one(msgs)
                return
        for msg in msgs:
            await msg.ack()

    async def _handle_apart(self, msgs: list[Msg]) -> None:
        """``_handle`` as a task of its own: what the loop would have logged is logged here (an
        event not acked is delivered again)."""
        try:
            await self._handle(msgs)
        except Exception as exc:
            log.warning(
                "event batch not acked; it will be delivered again",
                consumer=self.durable,
                error=str(exc) or type(exc).__name__,
            )

    async def run(self, stop: asyncio.Event) -> None:
        sub = None
        slots = asyncio.Semaphore(max(1, self.max_in_flight))
        in_flight: set[asyncio.Task[None]] = set()
        try:
            while not stop.is_set():
                try:
                    if sub is None:
                        await ensure_stream(self.js)
                        config = ConsumerConfig(
                            durable_name=self.durable,
                            ack_policy=AckPolicy.EXPLICIT,
                            deliver_policy=DeliverPolicy.ALL,
                            ack_wait=ACK_WAIT_SECONDS,
                            max_ack_pending=10_000,
                            filter_subject=self.filter_subject,
                        )
                        # Created, or updated: binding to an existing durable would keep the
                        # settings it was made with (an older, longer ack wait).
                        await self.js.add_consumer(subjects.STREAM, config)
                        sub = await self.js.pull_subscribe(
                            self.filter_subject,
                            durable=self.durable,
                            stream=subjects.STREAM,
                            config=config,
                        )
                    try:
                        msgs = await sub.fetch(self.batch_size, timeout=self.fetch_timeout)
                    except (NatsTimeoutError, FetchTimeoutError, TimeoutError):
                        # Nothing to do within the fetch window: the normal idle case.
                        continue
                    if self.linger > 0 and len(msgs) < self.batch_size:
                        msgs += await self._more(sub, self.batch_size - len(msgs))
                    if self.max_in_flight <= 1:
                        await self._handle(msgs)
                        continue
                    await slots.acquire()
                    task = asyncio.create_task(self._handle_apart(msgs), name="consumer-batch")
                    in_flight.add(task)
                    task.add_done_callback(in_flight.discard)
                    task.add_done_callback(lambda _: slots.release())
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    # NATS away, stream not there yet, ...: keep trying; nothing is lost because the
                    # outbox keeps unpublished events and JetStream keeps unacked ones.
                    log.warning(
                        "consumer loop error; retrying",
                        consumer=self.durable,
                        error=str(exc) or type(exc).__name__,
                    )
                    sub = None
                    with suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(stop.wait(), timeout=1.0)
        finally:
            if in_flight:
                # Batches being handled finish and are acked; one cut short is redelivered.
                await asyncio.gather(*in_flight, return_exceptions=True)
            if sub is not None:
                # Left subscribed, the pull subscription held the connection's drain at
                # shutdown until the service was killed (20 s later).
                with suppress(Exception):
                    await sub.unsubscribe()
