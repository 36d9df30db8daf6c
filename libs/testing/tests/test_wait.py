"""The shared wait helpers: they return the probe's answer, retry only the named errors, and
fail naming the condition and the last answer or error."""

from __future__ import annotations

import pytest

from exocortex.testing.wait import until, until_async


def test_until_returns_the_first_truthy_answer() -> None:
    answers = iter([0, None, [], 7, 8])
    assert until(lambda: next(answers), what="a number", interval=0) == 7


def test_until_retries_only_the_named_errors_and_names_the_last() -> None:
    def missing() -> int:
        raise KeyError("not there yet")

    with pytest.raises(AssertionError, match=r"the key appeared: .*KeyError.*not there yet"):
        until(missing, what="the key appeared", seconds=0.05, interval=0.01, retry_on=(KeyError,))
    with pytest.raises(KeyError):
        until(missing, what="the key appeared", seconds=5, retry_on=(ValueError,))


def test_until_names_the_last_falsy_answer() -> None:
    with pytest.raises(AssertionError, match=r"the queue drained: .*last answer: \[\]"):
        until(list, what="the queue drained", seconds=0.05, interval=0.01)


async def test_until_async_polls_a_coroutine() -> None:
    calls: list[int] = []

    async def probe() -> int:
        calls.append(1)
        if len(calls) < 3:
            raise LookupError("no message yet")
        return len(calls)

    assert await until_async(probe, what="a message", interval=0, retry_on=(LookupError,)) == 3

    async def boom() -> int:
        raise RuntimeError("broken")

    with pytest.raises(RuntimeError, match="broken"):
        await until_async(boom, what="anything", retry_on=(LookupError,))


def test_until_can_wait_for_nothing_missing() -> None:
    missing = iter([[3, 4], [4], []])
    assert until(lambda: next(missing), what="all found", interval=0, accept=lambda m: not m) == []
    with pytest.raises(AssertionError, match=r"all found: .*last answer: \[7\]"):
        until(lambda: [7], what="all found", seconds=0.05, interval=0.01, accept=lambda m: not m)
