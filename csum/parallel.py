"""Check capture chunks in worker processes, in order, with a bounded number in flight.

:func:`checked` pairs each :class:`csum.pcap.Capture` chunk with its
:func:`csum._cli_verify.check` report, computed in ``jobs`` forked processes
while the caller reads the next chunks. At most ``4 * jobs`` chunks are held
(``DEPTH`` queued per worker, the rest checked and waiting for their turn), so
memory stays bounded whatever the capture's size, and reports come back in
chunk order, so merging them gives the serial report.

Chunks travel through shared anonymous memory (one slot per chunk in flight,
mapped before the fork; a chunk too big for a slot is checked by the caller)
and the pipes carry only small messages, all from the main thread: a pool
with feeder threads (concurrent.futures, multiprocessing.Pool) makes the reading thread fight them for the GIL and ran slower than one process.
Workers ignore SIGINT; Ctrl-C reaches the parent alone, which ends them and
re-raises.

:func:`check_index` is the path for a file that can be mapped (uncompressed, on a local
file system): the records were found in one pass over the mapping (:meth:`csum.pcap.Reader.index`,
the C record walk for pcap) before the fork, so no chunk is read or copied by the parent;
every process, the parent included, takes the next chunk number from a shared counter,
copies that chunk's bytes out of the mapping and checks it, and the reports come back once,
at the end, to be merged in chunk order.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from multiprocessing.connection import Connection

import numpy as np

from . import _cli_verify
from .pcap import Capture, Index

__all__ = ["check_index", "checked", "default_jobs"]

_COLUMNS = ("offsets", "caplens", "origlens", "linktypes")
#: ``read(file offset, size)``: a capture's bytes there.
Read = Callable[[int, int], bytes]
#: Chunks queued per worker; the reading process checks a chunk itself when every worker has this many.
DEPTH = 3


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _put(slot: mmap.mmap, chunk: Capture) -> tuple[object, ...] | None:
    """Copy ``chunk`` into ``slot``; the message describing it, or None when it does not fit."""
    n, size = len(chunk), len(chunk.data)
    start = -(-size // 8) * 8
    if start + 32 * n > len(slot):
        return None
    slot[:size] = chunk.data
    for k, name in enumerate(_COLUMNS):
        np.frombuffer(slot, dtype=np.int64, count=n, offset=start + 8 * n * k)[:] = getattr(chunk, name)
    return (size, n, chunk.format, chunk.first_index, chunk.base)


def _get(slot: mmap.mmap, size: int, n: int, fmt: str, first_index: int, base: int) -> Capture:
    start = -(-size // 8) * 8
    columns = [np.frombuffer(slot, dtype=np.int64, count=n, offset=start + 8 * n * k).copy() for k in range(4)]
    return Capture(slot[:size], fmt, *columns, first_index=first_index, base=base)


def _serve(conn: Connection, slots: list[mmap.mmap]) -> None:
    """A worker: (slot, message) in, ("ok", report) or ("error", exception) out, until None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while (job := conn.recv()) is not None:
        index, body = job
        try:
            chunk = _get(slots[index], *body)
            conn.send(("ok", _cli_verify.check(chunk)))
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            conn.send(("error", exc))


class _Pool:
    def __init__(self, jobs: int, slot_bytes: int) -> None:
        ctx = multiprocessing.get_context("fork")
        self.slots = [mmap.mmap(-1, slot_bytes) for _ in range(DEPTH * jobs)]
        self.conns: list[Connection] = []
        self.procs = []
        for _ in range(jobs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, self.slots), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def close(self, *, kill: bool) -> None:
        for conn, proc in zip(self.conns, self.procs):
            try:
                if kill:
                    proc.terminate()
                else:
                    conn.send(None)
            except OSError:
                pass
            proc.join()
            conn.close()
        for slot in self.slots:
            slot.close()


def _receive(conn: Connection) -> _cli_verify.Report:
    status, value = conn.recv()
    if status == "error":
        raise value
    return value


def checked(chunks: Iterable[Capture], jobs: int = 1, slot_bytes: int | None = None
            ) -> Iterator[tuple[Capture, _cli_verify.Report]]:
    """(chunk, report) for each chunk, in order, using ``jobs`` processes when there are two chunks or more.

    The calling process reads the chunks and is one of the ``jobs``: it hands
    a chunk to the ``jobs - 1`` workers when one has room and
    checks it itself when none has (``DEPTH`` chunks each). ``slot_bytes``: shared memory per chunk in
    flight (default: 3x the larger of the first two chunks, which holds its
    bytes and its four int64 columns); a larger chunk goes through the pipe.
    """
    it = iter(chunks)
    head = [c for c in (next(it, None), next(it, None)) if c is not None]
    if jobs <= 1 or len(head) < 2:
        for chunk in chain(head, it):
            yield chunk, _cli_verify.check(chunk)
        return
    workers = jobs - 1
    pool = _Pool(workers, slot_bytes or 3 * max(len(c.data) for c in head) + 4096)
    free = list(range(len(pool.slots)))
    busy = [0] * workers
    window: deque[list] = deque()  # [chunk, report or None, worker, slot], in chunk order

    def oldest() -> tuple[Capture, _cli_verify.Report]:
        entry = window.popleft()
        if entry[1] is None:
            entry[1] = _receive(pool.conns[entry[2]])
            busy[entry[2]] -= 1
            free.append(entry[3])
        return entry[0], entry[1]

    def ready(entry: list) -> bool:
        return entry[1] is not None or (window[0] is entry and pool.conns[entry[2]].poll())

    try:
        for chunk in chain(head, it):
            while window and ready(window[0]):
                yield oldest()
            while len(window) >= 4 * jobs:
                yield oldest()
            w = min(range(workers), key=busy.__getitem__)
            message = _put(pool.slots[free[-1]], chunk) if busy[w] < DEPTH and free else None
            if message is not None:
                slot = free.pop()
                pool.conns[w].send((slot, message))
                busy[w] += 1
                window.append([chunk, None, w, slot])
            else:
                window.append([chunk, _cli_verify.check(chunk), -1, -1])
        while window:
            yield oldest()
    except BaseException:
        pool.close(kill=True)
        raise
    pool.close(kill=False)


def _share(index: Index, read: Read, counter: object, keep_patches: bool,
           done: Callable[[int, _cli_verify.Report], None]) -> None:
    """Check chunks of ``index`` taken from ``counter`` (a shared int) until none is left, each handed to ``done``."""
    while True:
        with counter.get_lock():  # type: ignore[attr-defined]
            k = counter.value  # type: ignore[attr-defined]
            counter.value = k + 1  # type: ignore[attr-defined]
        if k >= len(index):
            return
        report = _cli_verify.check(index.chunk(k, read))
        if not keep_patches:
            report.patches = []
        done(k, report)


def _serve_share(conn: Connection, index: Index, read: Read, counter: object, keep_patches: bool) -> None:
    """A worker of :func:`check_index`: ("ok", (chunk number, report)) for each chunk it checks, then ("ok", None);
    ("error", exception) if one fails."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _share(index, read, counter, keep_patches, lambda k, report: conn.send(("ok", (k, report))))
        conn.send(("ok", None))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        conn.send(("error", exc))
    conn.close()


def check_index(index: Index, read: Read, jobs: int = 1, *, keep_patches: bool = False,
                progress: Callable[[int], None] | None = None) -> _cli_verify.Report:
    """The report of every chunk of ``index`` merged in order (the serial report), checked by ``jobs`` processes.

    ``read(file offset, size)`` gives the file's bytes there (``os.pread`` on it; each process calls it);
    ``keep_patches``: keep each chunk's ``patches`` (else dropped, as :func:`csum.scan.scan` does);
    ``progress(file offset)`` is called after each chunk the calling process checks. The workers send
    each chunk's report as they finish it and the calling process takes them in between its own
    chunks, so unpickling them overlaps the checking.
    """
    parts: list[tuple[int, _cli_verify.Report]] = []
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("q", 0)
    conns: list[Connection] = []  # of the workers still sending
    procs, pipes = [], []

    def drain(conn: Connection) -> bool:
        """Take what ``conn`` sent so far; False once its worker is done."""
        while conn.poll():
            part = _receive(conn)
            if part is None:
                return False
            parts.append(part)
        return True

    def mine(k: int, report: _cli_verify.Report) -> None:
        parts.append((k, report))
        conns[:] = [c for c in conns if drain(c)]
        if progress is not None:
            progress(int(index.offsets[index.bounds[k + 1] - 1]))

    try:
        for _ in range(min(jobs, len(index)) - 1):
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_serve_share, args=(child, index, read, counter, keep_patches), daemon=True)
            proc.start()
            child.close()
            conns.append(parent)
            pipes.append(parent)
            procs.append(proc)
        _share(index, read, counter, keep_patches, mine)
        for conn in conns:
            while (part := _receive(conn)) is not None:
                parts.append(part)
    except BaseException:
        for proc in procs:
            proc.terminate()
        raise
    finally:
        for proc, pipe in zip(procs, pipes):
            proc.join()
            pipe.close()
    parts.sort(key=lambda part: part[0])
    report = _cli_verify.Report(0)
    for _, part in parts:
        report.update(part)
    return report
