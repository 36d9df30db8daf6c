"""The threads a batch's runs of the model go on: the calling thread and a few shared workers,
each taking the next run not yet taken until none is left.

Why taken, not dealt: the embedding service runs more than one batch at once and its workers
are shared. Dealt out in advance (every second run to the worker), two batches at once left
their calling threads idle at the end, each waiting for the one worker to get through the runs
dealt to it from both batches: on a bulk import the model ran on one core for about a third of
each batch. Taken one at a time, a thread is idle only when no run is left, and a calling thread
never waits for a worker that has not started on its batch (that help is withdrawn).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


class RunPool:
    """``threads`` threads a call at most: the caller's and ``threads - 1`` shared workers."""

    def __init__(self, threads: int, *, name: str = "onnx-run") -> None:
        self.threads = max(1, threads)
        self._workers = (
            ThreadPoolExecutor(self.threads - 1, thread_name_prefix=name)
            if self.threads > 1
            else None
        )

    def map(self, fn: Callable[[T], R], runs: Sequence[T]) -> list[R]:
        """``fn`` over ``runs``, in order; the first exception raised by any run is raised."""
        if self._workers is None or len(runs) <= 1:
            return [fn(r) for r in runs]
        work = _Work(fn, runs)
        helpers: list[Future[None]] = [
            self._workers.submit(work.take_all) for _ in range(min(self.threads, len(runs)) - 1)
        ]
        try:
            work.take_all()
        finally:
            for helper in helpers:
                # A worker still busy with another batch never started on this one: nothing
                # of this batch is left for it to do, so it is not waited for.
                if not helper.cancel():
                    helper.result()
        return work.results()

    def shutdown(self) -> None:
        if self._workers is not None:
            self._workers.shutdown(wait=False, cancel_futures=True)


class _Work(Generic[T, R]):
    def __init__(self, fn: Callable[[T], R], runs: Sequence[T]) -> None:
        self._fn = fn
        self._runs = runs
        self._next = 0
        self._lock = threading.Lock()
        self._failed = False
        self._out: list[R | None] = [None] * len(runs)

    def _take(self) -> int | None:
        with self._lock:
            if self._failed or self._next >= len(self._runs):
                return None
            index = self._next
            self._next += 1
            return index

    def take_all(self) -> None:
        while (index := self._take()) is not None:
            try:
                self._out[index] = self._fn(self._runs[index])
            except BaseException:
                self._failed = True  # the others stop taking runs of a batch that failed
                raise

    def results(self) -> list[R]:
        """Once every thread that took a run has returned without raising: each run's."""
        return cast(list[R], self._out)
