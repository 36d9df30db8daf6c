"""The threads a batch's runs go on: every run once, results in order, a failure raised, and a
batch that shares its worker with another batch never waits for that worker. Pure unit tests of
the scheduling (the runs are plain functions, no model)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from exocortex.encoders.run_pool import RunPool

WAIT = 30.0  # seconds: a bound on a hang, never a timing


def test_every_run_once_in_order_across_threads() -> None:
    pool = RunPool(3)
    seen: list[int] = []
    lock = threading.Lock()

    def square(x: int) -> int:
        with lock:
            seen.append(x)
        return x * x

    try:
        assert pool.map(square, list(range(50))) == [x * x for x in range(50)]
        assert sorted(seen) == list(range(50))
        assert pool.map(square, [7]) == [49]
        assert pool.map(square, []) == []
    finally:
        pool.shutdown()


def test_one_thread_runs_everything_on_the_caller() -> None:
    pool = RunPool(1)
    names = pool.map(lambda _: threading.current_thread().name, [1, 2, 3])
    assert set(names) == {threading.current_thread().name}


def test_a_failed_run_is_raised_and_the_pool_still_works() -> None:
    pool = RunPool(2)

    def fails_on_three(x: int) -> int:
        if x == 3:
            raise ValueError("bad run")
        return x

    try:
        with pytest.raises(ValueError, match="bad run"):
            pool.map(fails_on_three, [1, 2, 3, 4, 5])
        assert pool.map(fails_on_three, [1, 2]) == [1, 2]
    finally:
        pool.shutdown()


def test_a_batch_never_waits_for_a_worker_busy_with_another_batch() -> None:
    """Batch A holds the one shared worker (and its own caller); batch B, started meanwhile,
    runs all its runs on its own caller and returns while A is still held."""
    pool = RunPool(2)
    started = threading.Semaphore(0)
    release = threading.Event()

    def held(x: int) -> int:
        started.release()
        assert release.wait(WAIT)
        return x

    with ThreadPoolExecutor(1) as other:
        first = other.submit(pool.map, held, [1, 2])
        try:
            # A's caller and the worker are both inside A's runs now.
            assert started.acquire(timeout=WAIT)
            assert started.acquire(timeout=WAIT)
            caller = threading.current_thread().name
            names = pool.map(lambda _: threading.current_thread().name, [1, 2, 3, 4])
            assert names == [caller] * 4
            assert not first.done()
        finally:
            release.set()
        assert first.result(timeout=WAIT) == [1, 2]
    pool.shutdown()


def test_an_idle_worker_takes_its_share() -> None:
    """With the worker free, both threads take runs of one batch."""
    pool = RunPool(2)
    both = threading.Barrier(2, timeout=WAIT)

    def meet(x: int) -> str:
        if x < 2:
            both.wait()  # passes only once two threads hold a run each
        return threading.current_thread().name

    try:
        names = pool.map(meet, [0, 1, 2, 3])
        assert len(set(names[:2])) == 2
    finally:
        pool.shutdown()
