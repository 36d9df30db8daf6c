"""Waiting for a condition, not for a guessed time.

A test that sleeps a fixed time and then checks fails on a slow machine and wastes time on a
fast one. These helpers poll a probe until it answers, with a generous timeout, and fail with a
message that says what did not happen and the probe's last answer or error.

Only the exceptions a caller names as "not yet" (``retry_on``) are retried; any other error is a
real failure and propagates at once, instead of being swallowed until the timeout hides it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_INTERVAL_SECONDS = 0.1


def _timed_out(what: str, seconds: float, last: object, error: BaseException | None) -> str:
    message = f"{what}: not so within {seconds:g} s"
    if error is not None:
        message += f"; last error: {error.__class__.__name__}: {error}"
    else:
        message += f"; last answer: {last!r}"
    return message


async def until_async(
    probe: Callable[[], Awaitable[T]],
    *,
    what: str,
    seconds: float = 60.0,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    retry_on: tuple[type[BaseException], ...] = (),
    accept: Callable[[T], bool] = bool,
) -> T:
    """Await ``probe()`` until ``accept`` takes its answer (by default: until it is truthy),
    and return that answer.

    ``what`` names the awaited condition for the failure message ("the event reached the
    dead-letter stream"), which also shows the last answer (so a probe may return what is
    still missing, with ``accept=lambda missing: not missing``). An exception of a type in
    ``retry_on`` means "not yet"; the last one is named in the message when time runs out.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    last: object = None
    error: BaseException | None = None
    while True:
        try:
            value = await probe()
        except retry_on as exc:
            error = exc
        else:
            if accept(value):
                return value
            last, error = value, None
        if loop.time() >= deadline:
            raise AssertionError(_timed_out(what, seconds, last, error))
        await asyncio.sleep(interval)


def until(
    probe: Callable[[], T],
    *,
    what: str,
    seconds: float = 60.0,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    retry_on: tuple[type[BaseException], ...] = (),
    accept: Callable[[T], bool] = bool,
) -> T:
    """The blocking form of ``until_async``, for synchronous tests."""
    deadline = time.monotonic() + seconds
    last: object = None
    error: BaseException | None = None
    while True:
        try:
            value = probe()
        except retry_on as exc:
            error = exc
        else:
            if accept(value):
                return value
            last, error = value, None
        if time.monotonic() >= deadline:
            raise AssertionError(_timed_out(what, seconds, last, error))
        time.sleep(interval)
