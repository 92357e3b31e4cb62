"""Check capture chunks in worker processes, in order, with a bounded number in flight.

:func:`checked` pairs each :class:`csum.pcap.Capture` chunk with its
:func:`csum._cli_verify.check` report, computed in ``jobs`` processes (fork)
while the caller reads the next chunks; at most ``2 * jobs`` chunks are in
flight, so memory stays bounded whatever the capture's size. Reports come back
in chunk order, so merging them gives the serial report. Workers ignore SIGINT:
Ctrl-C reaches the parent alone, which cancels what is queued and re-raises.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import chain

from . import _cli_verify
from .pcap import Capture

__all__ = ["checked", "default_jobs"]


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def checked(chunks: Iterable[Capture], jobs: int = 1) -> Iterator[tuple[Capture, _cli_verify.Report]]:
    """(chunk, report) for each chunk, in order; in ``jobs`` processes when there are two chunks or more."""
    it = iter(chunks)
    head = [c for c in (next(it, None), next(it, None)) if c is not None]
    if jobs <= 1 or len(head) < 2:
        for chunk in chain(head, it):
            yield chunk, _cli_verify.check(chunk)
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_ignore_sigint)
    window: deque[tuple[Capture, Future[_cli_verify.Report]]] = deque()
    try:
        for chunk in chain(head, it):
            window.append((chunk, pool.submit(_cli_verify.check, chunk)))
            if len(window) >= 2 * jobs:
                done, future = window.popleft()
                yield done, future.result()
        while window:
            done, future = window.popleft()
            yield done, future.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
