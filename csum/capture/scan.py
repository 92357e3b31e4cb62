"""One capture file through the checker: open, read in chunks, check (in parallel), merge, and copy patched.

:func:`scan` is what ``csum verify`` and ``csum fix`` run for each input and
what :mod:`csum.dask` runs on each worker; how, one :class:`ScanOptions` says (its fields are also taken as keyword
arguments: ``scan(name, jobs=4)``). It opens the capture
(:func:`csum.capture.source.open_source`: a path, ``-``, compressed or not), reads it
with :class:`csum.pcap.Reader` (an uncompressed regular file checked in this process with nothing copied out is
mapped instead of read, :meth:`csum.pcap.Reader.mapped`: no copy of its bytes), checks the chunks (:func:`csum.capture.parallel.checked`; for ``verify``
of an uncompressed regular file with ``jobs`` > 1, :func:`csum.capture.parallel.check_spans`, where every
process reads its own chunks) and stitches them in order (:class:`csum.capture.stitch.Stitcher`: IP
fragments are reassembled across chunks). Given a ``sink`` (a writable such as
:class:`csum.capture.output.AtomicFile`), it writes each chunk with its bad checksums
corrected once no datagram still pending can change it, then the bytes after a truncated or
damaged record unchanged: the copy differs from the input in checksum bytes only. Given a ``table``, it hands
over every checksum field as a row (:mod:`csum.capture.rows`); :func:`to_arrow` and :func:`to_pandas`
(:mod:`csum.capture.arrow`) collect them as an Arrow table or a pandas DataFrame.
"""

from __future__ import annotations

import mmap
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.inputs import check_instance, check_list, check_path, check_str
from . import pcap
from .checker import Checker
from .options import ScanOptions, scan_options
from .report import Report
from .source import Source, open_source
from .stitch import Stitcher

__all__ = ["Scan", "ScanOptions", "merged", "scan", "to_arrow", "to_pandas"]

@dataclass
class Scan:
    """The outcome for one capture: its report and how reading it went.

    ``stop``: where reading stopped before the end (a truncated or damaged
    record, compressed data cut, corrupt or followed by garbage), else None;
    ``patched``/``patched_packets``: checksum fields a sink received new bytes for, and the packets they
    are in; ``offload_filled``: how many of those fields held transmit offload's pseudo-header sum.
    """

    name: str
    format: str
    compression: str | None
    report: Report
    stop: pcap.Stop | None
    patched: int = 0
    patched_packets: int = 0
    offload_filled: int = 0
    #: ``csum verify --explain``: why each wrong field is wrong (a csum.explain.capture.Explained, from a wing above
    #: this one), else None.
    explained: Any = None


def scan(name: str | os.PathLike[str], options: ScanOptions | None = None, **changes: Any) -> Scan:
    """Check the capture ``name`` (a path or ``-``) as ``options`` say (a :class:`ScanOptions`; None: the
    defaults), with ``changes`` (its fields as keyword arguments: ``scan(name, jobs=4, hosts=True)``) applied;
    see the module docstring and :class:`ScanOptions`.

    Raises OSError (unreadable), CsumValueError (not a capture, a directory, corrupt compression) and, for an option
    of the wrong kind, CsumTypeError or CsumValueError naming it (``jobs``: 1 to :func:`csum.core.inputs.max_jobs`).
    """
    name = check_path(name, "name")
    o = scan_options(options, changes)
    with open_source(name) as source:
        # the timestamps only for the summary and the rows
        reader = pcap.Reader(source.stream, o.chunk_bytes, times=o.hosts or o.table is not None)
        # a file of one chunk or less is checked here: no worker would get a span of it
        fd = source.fileno() if o.jobs > 1 and (source.size or 0) > o.chunk_bytes and not o.copies else None
        if fd is not None:  # nothing to copy out: each process reads its own chunks from the file
            from .parallel import check_spans

            report = check_spans(reader.spans(), lambda at, n: os.pread(fd, n, at), o, source.size)
            return Scan(source.name, reader.format, source.compression, report, reader.stop)
        here = source.fileno() if o.serial and o.mappable else None
        if here is not None:  # counted here, nothing copied out: the file mapped, not read (chunks are views of it)
            mapped = mmap.mmap(here, 0, access=mmap.ACCESS_READ)  # read-only: the file is never written
            try:
                chunks = reader.mapped(memoryview(mapped), _dropper(mapped))
                return _scan_chunks(source, reader, o, chunks, reader.consumed)
            finally:
                try:
                    mapped.close()
                except BufferError:  # a view of it still held (by an exception's traceback): unmapped with the last
                    pass
        return _scan_chunks(source, reader, o)


def _dropper(mapped: mmap.mmap) -> Callable[[int], None] | None:
    """``done(end)`` for :meth:`csum.pcap.Reader.mapped`: the whole pages of ``mapped`` before ``end`` leave the
    process (``MADV_DONTNEED``; the file's pages stay in the page cache, and a view of them still held reads them
    again from there), so its memory does not grow with the file, as a read chunk by chunk does not. None where
    ``madvise`` is not available."""
    if not hasattr(mapped, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    gone = [0]

    def done(end: int) -> None:
        upto = end - end % mmap.PAGESIZE
        if upto > gone[0]:
            mapped.madvise(mmap.MADV_DONTNEED, gone[0], upto - gone[0])
            gone[0] = upto
    return done


def _scan_chunks(source: Source, reader: pcap.Reader, o: ScanOptions, read: Iterator[pcap.Capture] | None = None,
                 consumed: Callable[[], int] | None = None) -> Scan:
    """:func:`scan` with the chunks read here (``read``, else iterating ``reader``; ``consumed()``: the bytes of the
    file they took so far, else ``source.consumed``), checked here or in workers, stitched, and copied to
    ``o.sink``."""
    report = Report(0, keep=o.keep)
    counted = [0, 0, 0]  # checksums patched, packets they are in, offload fields among them
    held: deque[pcap.Capture] = deque()  # chunks not yet written: a pending datagram may still patch them
    fixes: list[tuple[int, bytes]] = []
    sink = o.sink

    def take(part: Report) -> None:
        if sink is not None:
            fixes.extend(part.patches)
            counted[0] += len(part.patches)
            counted[1] += len({i for i, r in part.bad + part.offload if r.computed is not None})
            counted[2] += sum(r.computed is not None and r.field is not None for _, r in part.offload)
        if not o.keep_patches:
            part.patches = []
        report.update(part)

    def write(settled: int | None) -> None:
        if sink is None:
            return
        while held and (settled is None or held[0].first_index + len(held[0]) <= settled):
            chunk = held.popleft()
            end = chunk.base + len(chunk.data)
            mine = sorted(p for p in fixes if p[0] < end)
            fixes[:] = [p for p in fixes if p[0] >= end]
            sink.write(pcap.patched(chunk, mine) if mine else chunk.data)

    chunks = iter(reader) if read is None else read
    if o.transform is not None:
        chunks = o.transform(chunks)
    consumed = source.consumed if consumed is None else consumed
    checker: Checker | Stitcher
    if o.serial:  # one Checker carries the pending datagrams along
        checker = Checker(o.each, fix_embedded=o.fix_embedded, hosts=o.hosts, table=o.table,
                          fixes=sink is not None or o.keep_patches,
                          keep=o.keep if sink is None and o.collect is None else None)  # each part read whole
        parts = ((c, checker.check(c)) for c in chunks)
    else:
        from .parallel import checked

        checker = stitcher = Stitcher(o.fix_embedded, o.hosts)
        parts = ((c, stitcher.add(part, again(c))) for c, part in checked(chunks, o))
    kept: deque[pcap.Capture] = deque()  # chunks a pending datagram's findings may still be about: collect's
    for chunk, part in parts:
        if o.collect is not None:
            kept.append(chunk)
            o.collect(kept, part)
            settled = checker.unsettled()
            while kept and (settled is None or kept[0].first_index + len(kept[0]) <= settled):
                kept.popleft()
        take(part)
        if sink is not None:
            held.append(chunk)
        write(checker.unsettled())
        if o.progress is not None:
            o.progress(consumed(), source.size)
    last = checker.close()
    if o.collect is not None:
        o.collect(kept, last)
    take(last)
    write(None)
    if sink is not None:
        for block in reader.rest():
            sink.write(block)
    return Scan(source.name, reader.format, source.compression, report, reader.stop, counted[0], counted[1],
                counted[2])


def to_arrow(name: str | os.PathLike[str], *, chunk_bytes: int | None = None) -> Any:
    """Every checksum field of the capture ``name`` (a path or ``-``) as a ``pyarrow.Table`` (the columns and types
    of :mod:`csum.capture.arrow`): ``csum verify --format parquet``'s rows. Raises what :func:`scan` raises, and
    CsumValueError (code ``missing-arrow``) without pyarrow. pyarrow and numpy are imported here, when first used:
    checking a small capture needs neither."""
    from .arrow import pyarrow, record_batch, schema

    pa = pyarrow("to_arrow")
    batches: list[Any] = []
    scan(name, ScanOptions(chunk_bytes=pcap.CHUNK_BYTES if chunk_bytes is None else chunk_bytes,
                           table=lambda rows: batches.append(record_batch(rows, pa))))
    return pa.Table.from_batches(batches, schema=schema(pa))


def to_pandas(name: str | os.PathLike[str], *, chunk_bytes: int | None = None) -> Any:
    """:func:`to_arrow` as a ``pandas.DataFrame`` (text columns as categoricals; nullable integers where a value may
    be missing)."""
    from .arrow import frame

    return frame(to_arrow(name, chunk_bytes=chunk_bytes))


def again(chunk: pcap.Capture) -> Callable[[], pcap.Capture]:
    """``chunk``, for a :class:`~csum.capture.stitch.Stitcher` that may need it again."""
    return lambda: chunk


def merged(scans: Sequence[Scan], name: str = "total") -> Scan:
    """All ``scans`` as one: reports merged in order (packet numbers stay those of each file)."""
    scans = check_list(scans, "scans")
    for i, s in enumerate(scans):
        check_instance(s, Scan, f"scans[{i}]")
    name = check_str(name, "name")
    report = Report(0)
    for s in scans:
        report = report.merge(s.report)
    formats = sorted({s.format for s in scans})
    return Scan(name, "+".join(formats), None, report, None, sum(s.patched for s in scans),
                sum(s.patched_packets for s in scans), sum(s.offload_filled for s in scans))
