"""Check capture chunks in worker processes, in order, with a bounded number in flight.

:func:`checked` pairs each :class:`csum.pcap.Capture` chunk with its
:func:`csum.capture.checker.check_part` part (the chunk checked on its own, the datagrams pending at its
end handed over for :class:`csum.capture.stitch.Stitcher` to join), computed in ``jobs`` forked processes
while the caller reads the next chunks. At most ``4 * jobs`` chunks are held
(``DEPTH`` queued per worker, the rest checked and waiting for their turn), so
memory stays bounded whatever the capture's size, and parts come back in
chunk order, so stitching them gives the serial report.

Chunks travel through shared anonymous memory (one slot per chunk in flight,
mapped before the fork; a chunk too big for a slot is checked by the caller)
and the pipes carry only small messages, all from the main thread: a pool
with feeder threads (concurrent.futures, multiprocessing.Pool) makes the reading thread fight them for the GIL and ran slower than one process.
Workers end with their parent: they ignore SIGINT and SIGHUP (a terminal sends those to the whole process
group; the parent alone handles them), the parent kills them (SIGKILL) on any exception, Ctrl-C and the
CLI's SIGTERM/SIGHUP included, and the kernel kills them when the parent dies, however it dies
(``PR_SET_PDEATHSIG``, Linux). A worker that vanishes (killed from outside) is one :class:`CsumValueError`
(code ``worker-lost``) in the parent, never a wait on its pipe.

:func:`check_spans` is the path for an uncompressed regular file: the parent only finds where
each chunk's records are (:meth:`csum.pcap.Reader.spans`, the C record walk for pcap) and queues
those few numbers; every process, the parent included, reads the chunks it takes with
``os.pread`` and checks them, so no chunk's bytes go through the parent or a pipe; the parent
stitches the parts in chunk order.
"""

from __future__ import annotations

import functools
import mmap
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.inputs import usable_cores
from ..errors import Code, CsumValueError
from .checker import Part, check_part
from .options import ScanOptions
from .pcap import NO_TIME, Capture, Span
from .report import Report
from .stitch import Stitcher

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["become_worker", "check_spans", "checked", "default_jobs", "each_item", "mapped"]

_COLUMNS = ("offsets", "caplens", "origlens", "linktypes", "times")
T = TypeVar("T")
R = TypeVar("R")
#: ``read(file offset, size)``: a capture's bytes there.
Read = Callable[[int, int], bytes]
#: Chunks queued per worker; the reading process checks a chunk itself when every worker has this many.
DEPTH = 3


def default_jobs() -> int:
    """Every core this process may run on."""
    return usable_cores()


def _put(slot: mmap.mmap, chunk: Capture) -> tuple[object, ...] | None:
    """Copy ``chunk`` into ``slot``; the message describing it, or None when it does not fit."""
    import numpy as np  # only where workers take the chunks: a small capture is checked in the calling process

    n, size = len(chunk), len(chunk.data)
    start = -(-size // 8) * 8
    if start + 8 * len(_COLUMNS) * n > len(slot):
        return None
    slot[:size] = chunk.data
    for k, name in enumerate(_COLUMNS):
        column = getattr(chunk, name)
        np.frombuffer(slot, dtype=np.int64, count=n, offset=start + 8 * n * k)[:] = NO_TIME if column is None else column
    return (size, n, chunk.format, chunk.first_index, chunk.base)


def _get(slot: mmap.mmap, size: int, n: int, fmt: str, first_index: int, base: int) -> Capture:
    import numpy as np

    start = -(-size // 8) * 8
    offsets, caplens, origlens, linktypes, times = (
        np.frombuffer(slot, dtype=np.int64, count=n, offset=start + 8 * n * k).copy() for k in range(len(_COLUMNS)))
    return Capture(slot[:size], fmt, offsets, caplens, origlens, linktypes, first_index=first_index, base=base,
                   times=times)


#: prctl(2) option: the signal a process gets when its parent dies (include/uapi/linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def become_worker(parent: int) -> None:
    """Make this forked process a worker of ``parent`` that ends with it (see the module docstring)."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect: nobody would end this process
        os._exit(1)


def _serve(conn: Connection, slots: list[mmap.mmap], parent: int, part_of: Callable[[Capture], object]) -> None:
    """A worker: (slot, message) in, ("ok", part) or ("error", exception) out, until None."""
    become_worker(parent)
    while (job := conn.recv()) is not None:
        index, body = job
        try:
            chunk = _get(slots[index], *body)
            conn.send(("ok", part_of(chunk)))
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            conn.send(("error", exc))


class _Pool:
    def __init__(self, jobs: int, slot_bytes: int, part_of: Callable[[Capture], object]) -> None:
        import multiprocessing  # here: one process (a small capture, --jobs 1) never needs it (tests/test_startup.py)

        ctx = multiprocessing.get_context("fork")
        self.slots = [mmap.mmap(-1, slot_bytes) for _ in range(DEPTH * jobs)]
        self.conns: list[Connection] = []
        self.procs = []
        for _ in range(jobs):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, self.slots, os.getpid(), part_of), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    def close(self, *, kill: bool) -> None:
        for conn, proc in zip(self.conns, self.procs):
            try:
                if kill:
                    proc.kill()
                else:
                    conn.send(None)
            except OSError:
                pass
            proc.join()
            conn.close()
        for slot in self.slots:
            slot.close()


def _receive(conn: Connection) -> Any:
    try:
        status, value = conn.recv()
    except EOFError:
        raise CsumValueError("a worker process ended before sending its part (killed from outside?)",
                             code=Code.WORKER_LOST) from None
    if status == "error":
        raise value
    return value


def checked(chunks: Iterable[Capture], options: ScanOptions, slot_bytes: int | None = None
            ) -> Iterator[tuple[Capture, Part]]:
    """(chunk, part) for each chunk, in order, using ``options.jobs`` processes when there are two chunks or more
    (``options.fix_embedded``, ``hosts``: as :func:`csum.capture.checker.check_part` takes them); see
    :func:`mapped`."""
    part_of = functools.partial(check_part, fix_embedded=options.fix_embedded, hosts=options.hosts)
    return mapped(chunks, part_of, options.jobs, slot_bytes)


def mapped(chunks: Iterable[Capture], part_of: Callable[[Capture], T], jobs: int = 1,
           slot_bytes: int | None = None) -> Iterator[tuple[Capture, T]]:
    """(chunk, ``part_of(chunk)``) for each chunk, in order, using ``jobs`` processes when there are two chunks or
    more (``csum rewrite --jobs`` maps its rewrite over the chunks this way).

    The calling process reads the chunks and is one of the ``jobs``: it hands
    a chunk to the ``jobs - 1`` workers when one has room and
    does it itself when none has (``DEPTH`` chunks each). ``slot_bytes``: shared memory per chunk in
    flight (default: 3x the larger of the first two chunks, which holds its
    bytes and its five int64 columns); a larger chunk goes through the pipe.
    """
    it = iter(chunks)
    head = [c for c in (next(it, None), next(it, None)) if c is not None]
    if jobs <= 1 or len(head) < 2:
        for chunk in chain(head, it):
            yield chunk, part_of(chunk)
        return
    workers = jobs - 1
    pool = _Pool(workers, slot_bytes or 3 * max(len(c.data) for c in head) + 4096, part_of)
    free = list(range(len(pool.slots)))
    busy = [0] * workers
    window: deque[list] = deque()  # [chunk, part or None, worker, slot], in chunk order

    def oldest() -> tuple[Capture, T]:
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
                window.append([chunk, part_of(chunk), -1, -1])
        while window:
            yield oldest()
    except BaseException:
        pool.close(kill=True)
        raise
    pool.close(kill=False)


def _serve_spans(conn: Connection, spans: object, taken: object, read: Read, keep_patches: bool, parent: int,
                 hosts: bool) -> None:
    """A worker of :func:`check_spans`: takes spans from the shared queue until None (counting them in ``taken``);
    sends ("ok", (chunk number, part)) for each, then ("ok", None), or ("error", exception)."""
    become_worker(parent)
    try:
        while (item := spans.get()) is not None:  # type: ignore[attr-defined]
            with taken.get_lock():  # type: ignore[attr-defined]
                taken.value += 1  # type: ignore[attr-defined]
            conn.send(("ok", _check_span(item, read, keep_patches, hosts)))
        conn.send(("ok", None))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        conn.send(("error", exc))
    conn.close()


def _check_span(item: tuple[int, Span], read: Read, keep_patches: bool, hosts: bool) -> tuple[int, Part]:
    k, span = item
    part = check_part(span.capture(read, hosts), hosts=hosts)
    if not keep_patches:
        part.report.patches = []
    return k, part


def check_spans(spans: Iterable[Span], read: Read, options: ScanOptions, size: int | None = None) -> Report:
    """The parts of the chunks at ``spans`` (:meth:`csum.pcap.Reader.spans`) stitched in order: the serial report.

    ``read(file offset, size)`` gives the file's bytes there (``os.pread``; every process calls it).
    ``jobs - 1`` workers are forked once a second span is found; the calling process finds the spans and queues
    each (a ``SimpleQueue``: a locked pipe, no feeder thread) unless :data:`DEPTH` per worker are already
    waiting, in which case it checks that chunk itself; once the spans are all found it takes queued
    chunks like a worker. (It never calls ``get()`` while it is still the producer: a worker holding
    the queue's lock while waiting for data would then wait for it forever.)
    Workers send each chunk's part when done with it; the calling process takes them in between
    its own chunks and stitches them in chunk order as they come (a chunk that must be checked again,
    see csum/capture/stitch.py, is read again), so memory holds a bounded window.
    Of ``options`` (:class:`csum.capture.options.ScanOptions`), ``jobs``, ``keep``, ``keep_patches`` (keep each
    chunk's ``patches``, else dropped, as :func:`csum.scan.scan` does), ``progress(file offset, size)`` (called
    after each chunk the calling process checks) and ``hosts`` (the report collects who sent the bad and offload
    checksums, csum.capture.hosts) count here.
    """
    import multiprocessing  # as in _Pool

    jobs, keep_patches, hosts, progress = options.jobs, options.keep_patches, options.hosts, options.progress

    ctx = multiprocessing.get_context("fork")
    queue, taken = ctx.SimpleQueue(), ctx.Value("q", 0)
    report = Report(0, keep=options.keep)
    stitcher = Stitcher(hosts=hosts)
    waiting: dict[int, Part] = {}
    where: dict[int, Span] = {}  # the spans not yet stitched
    merged = [0]  # the next chunk number to stitch
    conns: list[Connection] = []  # of the workers still sending
    procs, pipes = [], []

    def merge(part: Report) -> None:
        if not keep_patches:
            part.patches = []
        report.update(part)

    def take(item: tuple[int, Part]) -> None:
        waiting[item[0]] = item[1]
        while merged[0] in waiting:
            span = where.pop(merged[0])
            merge(stitcher.add(waiting.pop(merged[0]), lambda: span.capture(read, hosts)))
            merged[0] += 1

    def drain() -> None:
        for conn in list(conns):
            while conn.poll():
                part = _receive(conn)
                if part is None:
                    conns.remove(conn)
                    break
                take(part)

    def mine(span_item: tuple[int, Span]) -> None:
        take(_check_span(span_item, read, keep_patches, hosts))
        drain()
        if progress is not None:
            progress(span_item[1].hi, size)

    try:
        queued = 0
        for k, span in enumerate(spans):
            where[k] = span
            if k == 1:  # a second chunk: worth the workers
                for _ in range(jobs - 1):
                    parent, child = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=_serve_spans, args=(child, queue, taken, read, keep_patches,
                                                                  os.getpid(), hosts), daemon=True)
                    proc.start()
                    child.close()
                    conns.append(parent)
                    pipes.append(parent)
                    procs.append(proc)
            if k and queued - taken.value >= DEPTH * len(procs):
                mine((k, span))  # the workers have enough queued: this one is the calling process's
            else:
                queue.put((k, span))
                queued += 1
        for _ in range(len(procs) + 1):  # one end mark per process, the last one this process's: its get() below
            queue.put(None)               # cannot wait forever, and never waits while it is the only producer
        while (item := queue.get()) is not None:
            mine(item)
        for conn in list(conns):
            while (part := _receive(conn)) is not None:
                take(part)
            conns.remove(conn)
        merge(stitcher.close())
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    finally:
        for proc, pipe in zip(procs, pipes):
            proc.join()
            pipe.close()
        queue.close()
    return report



def _serve_items(conn: Connection, items: list[Any], fn: Callable[[Any], object], parent: int) -> None:
    """A worker of :func:`each_item`: item numbers in, ("ok", ``fn(item)``) or ("error", exception) out, until None."""
    become_worker(parent)
    while (k := conn.recv()) is not None:
        try:
            conn.send(("ok", fn(items[k])))
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            conn.send(("error", exc))


def each_item(items: list[T], fn: Callable[[T], R], jobs: int = 1) -> list[R]:
    """``[fn(item) for item in items]`` in up to ``jobs`` forked processes (csum verify's small files, one per process
    at a time), in the items' order. Each worker holds one item at a time and gets the next as it sends a result
    (pickled back through its pipe, read here as soon as it is ready: no pipe ever waits on a full one); workers end
    as :func:`checked`'s do (killed on any exception here, with their parent whatever kills it); an exception ``fn``
    raises in a worker is raised here."""
    import multiprocessing  # as in _Pool
    from multiprocessing.connection import wait

    n = min(jobs, len(items))
    if n < 2:
        return [fn(item) for item in items]
    ctx = multiprocessing.get_context("fork")
    results: dict[int, R] = {}
    procs, conns = [], []
    doing: dict[Connection, int] = {}
    try:
        for _ in range(n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve_items, args=(child, items, fn, os.getpid()), daemon=True)
            proc.start()
            child.close()
            conns.append(parent)
            procs.append(proc)
        queued = iter(range(len(items)))
        for conn, k in zip(conns, queued):
            conn.send(k)
            doing[conn] = k
        while doing:
            for ready in wait(list(doing)):
                conn = ready  # type: ignore[assignment]
                results[doing.pop(conn)] = _receive(conn)
                following = next(queued, None)
                if following is not None:
                    conn.send(following)
                    doing[conn] = following
        for conn in conns:
            conn.send(None)
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    finally:
        for proc, conn in zip(procs, conns):
            proc.join()
            conn.close()
    return [results[k] for k in range(len(items))]
