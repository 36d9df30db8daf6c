"""Parking events a consumer cannot process (poison events) in the dead-letter stream.

A durable consumer retries a failing event a bounded number of times (``MAX_DELIVERIES``
deliveries in all); then the event is published to ``dlq.<consumer>`` in the ``EXO_DLQ``
stream, with headers saying where it came from and why it failed, the original is acked and
``exo_events_dead_lettered_total{consumer}`` goes up (an alert fires on it). The consumer then
moves on: one bad event no longer holds up every event behind it.
"""

from __future__ import annotations

from contextlib import suppress

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import NotFoundError
from prometheus_client import Counter

from exocortex.core.bus import subjects

MAX_DELIVERIES = 5
# Kept for a month: long enough to notice the alert, look, fix and replay.
DLQ_MAX_AGE_SECONDS = 30 * 24 * 3600.0
MAX_ERROR_CHARS = 500

CONSUMER_HEADER = "Exo-Dlq-Consumer"
SUBJECT_HEADER = "Exo-Dlq-Subject"
SEQUENCE_HEADER = "Exo-Dlq-Stream-Sequence"
DELIVERIES_HEADER = "Exo-Dlq-Deliveries"
ERROR_HEADER = "Exo-Dlq-Error"

DEAD_LETTERED = Counter(
    "exo_events_dead_lettered_total",
    "Events a consumer gave up on after its bounded retries, parked in the EXO_DLQ stream",
    ["consumer"],
)


async def ensure_dlq_stream(js: JetStreamContext) -> None:
    try:
        await js.stream_info(subjects.DLQ_STREAM)
    except NotFoundError:
        await js.add_stream(
            StreamConfig(
                name=subjects.DLQ_STREAM,
                subjects=subjects.DLQ_SUBJECTS,
                storage=StorageType.FILE,
                max_age=DLQ_MAX_AGE_SECONDS,
            )
        )


def deliveries(msg: Msg) -> int:
    """How many times JetStream has delivered this message (1 the first time)."""
    try:
        return int(msg.metadata.num_delivered or 1)
    except Exception:  # not a JetStream message (no ack subject): treat as a first delivery
        return 1


async def dead_letter(js: JetStreamContext, consumer: str, msg: Msg, error: str) -> None:
    """Park ``msg`` in the dead-letter stream, then ack the original. Raises when the publish
    fails; the original then stays unacked and is delivered again."""
    await ensure_dlq_stream(js)
    headers = {
        CONSUMER_HEADER: consumer,
        SUBJECT_HEADER: msg.subject,
        DELIVERIES_HEADER: str(deliveries(msg)),
        # One line: a header value cannot hold a line break.
        ERROR_HEADER: " ".join(error.split())[:MAX_ERROR_CHARS] or "unknown error",
    }
    with suppress(Exception):  # not a JetStream message: no sequence to name
        headers[SEQUENCE_HEADER] = str(msg.metadata.sequence.stream)
    correlation = (msg.headers or {}).get(subjects.CORRELATION_HEADER)
    if correlation:
        headers[subjects.CORRELATION_HEADER] = correlation
    await js.publish(
        subjects.dead_letter_subject(consumer),
        msg.data,
        stream=subjects.DLQ_STREAM,
        headers=headers,
    )
    await msg.ack()
    DEAD_LETTERED.labels(consumer).inc()
