"""Decoding a consumer's messages into their protobuf events, written once for every consumer.

A message that is not the event its subject promises (a bug in a publisher, bytes written by
hand) would fail the same way on every delivery, so retrying it only delays the events behind
it. ``decode_all`` raises ``Malformed`` for it; the durable consumer then handles the batch
event by event, and parks the malformed one in the dead-letter stream at once (see
``DurableConsumer``), where it can be looked at, while the good events of its batch go through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from google.protobuf.message import Message
from nats.aio.msg import Msg

E = TypeVar("E", bound=Message)


class Malformed(ValueError):
    """A message whose bytes do not decode as the event its subject carries."""


def decode(event_type: type[E], msg: Msg) -> E:
    try:
        return event_type.FromString(msg.data)
    except Exception as exc:
        raise Malformed(
            f"{msg.subject}: not a {event_type.DESCRIPTOR.full_name} ({len(msg.data)} bytes): {exc}"
        ) from exc


def decode_all(event_type: type[E], msgs: Sequence[Msg]) -> list[E]:
    """The events of a batch, in order; ``Malformed`` names the first message that is not one."""
    return [decode(event_type, msg) for msg in msgs]


def decoding(
    event_type: type[E], handle: Callable[[list[E]], Awaitable[None]]
) -> Callable[[Sequence[Msg]], Awaitable[None]]:
    """A durable consumer's batch handler for ``handle``, which takes decoded events."""

    async def on_batch(msgs: Sequence[Msg]) -> None:
        await handle(decode_all(event_type, msgs))

    return on_batch
