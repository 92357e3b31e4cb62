"""How one capture is scanned: :class:`ScanOptions`, the one object :func:`csum.scan.scan` and the stages under it
(:mod:`csum.capture.parallel`, the CLI's csum/cli/scans.py, :mod:`csum.dask`) take instead of a dozen arguments.

Each field is checked once, when the object is made (a CsumTypeError or CsumValueError naming the field, as the
keyword argument of the same name was named before), so the stages can trust it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.inputs import check_bool, check_callable, check_int, check_jobs
from ..errors import Code, CsumTypeError
from . import pcap
from .checker import Sink as ResultSink
from .checker import TableSink
from .report import Report

__all__ = ["Collect", "ScanOptions", "Sink", "Transform"]


class Sink(Protocol):
    def write(self, data: bytes) -> None: ...


#: ``ScanOptions.collect``: (the chunks a part's findings may be about, the part's findings).
Collect = Callable[[Sequence[pcap.Capture], Report], None]
#: ``ScanOptions.transform``: the chunks as read -> the chunks checked and written.
Transform = Callable[[Iterator[pcap.Capture]], Iterator[pcap.Capture]]
#: ``ScanOptions.progress``: (bytes read so far, the file's size or None).
Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class ScanOptions:
    """How :func:`csum.scan.scan` reads, checks and copies one capture (every field optional).

    ``jobs``: processes (1 to :func:`csum.core.inputs.max_jobs`); ``chunk_bytes``: bytes of records per chunk.
    ``sink``: a writable (``write(bytes)``) that receives the capture with its bad checksums corrected.
    ``keep_patches`` keeps ``report.patches`` (file offset, new bytes) in the result; otherwise they are dropped
    chunk by chunk, keeping memory bounded. ``progress(bytes read, file size or None)`` is called after each chunk.
    ``each(packet index, results)`` receives every packet's results in order (``verify --format jsonl``); chunks
    are then checked in this process, one after another. ``keep`` bounds the items the report keeps per list
    (:class:`~csum.capture.report.Report`; counts stay whole). ``transform`` turns the chunks as read into the
    chunks checked and written. ``fix_embedded``: the patches correct embedded packets' checksums too (sFlow
    samples, OpenFlow packet-ins). ``hosts``: ``report.hosts`` says who sent the bad and offload checksums, and
    when (:mod:`csum.capture.hosts`). ``table(rows)`` receives every checksum field as a row
    (:class:`csum.capture.rows.Rows`, a table per chunk, in packet order); chunks are then checked in this process.
    ``collect(chunks, part)`` receives each chunk's findings (a :class:`Report`) with the chunks they may be about
    (the last chunk and those a pending datagram still held; their packets valid during the call), before the
    findings are merged (``csum verify --explain``).
    """

    jobs: int = 1
    chunk_bytes: int = pcap.CHUNK_BYTES
    sink: Sink | None = None
    keep_patches: bool = False
    progress: Progress | None = None
    each: ResultSink | None = None
    keep: int | None = None
    transform: Transform | None = None
    fix_embedded: bool = False
    hosts: bool = False
    table: TableSink | None = None
    collect: Collect | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "jobs", check_jobs(self.jobs))
        put(self, "chunk_bytes", check_int(self.chunk_bytes, 1, pcap.MAX_CHUNK_BYTES, "chunk_bytes"))
        for flag in ("keep_patches", "fix_embedded", "hosts"):
            put(self, flag, check_bool(getattr(self, flag), flag))
        if self.keep is not None:
            put(self, "keep", check_int(self.keep, 0, (1 << 63) - 1, "keep"))
        for name in ("progress", "each", "transform", "table", "collect"):
            if getattr(self, name) is not None:
                check_callable(getattr(self, name), name)
        if self.sink is not None:
            check_callable(getattr(self.sink, "write", None), "sink.write")

    def but(self, **changes: Any) -> ScanOptions:
        """These options with ``changes`` (field name -> value; checked as the constructor checks them)."""
        return _replace(self, changes)

    @property
    def serial(self) -> bool:
        """Whether the chunks must be checked in this process, in order: one Checker carries the pending datagrams
        along and calls ``each``/``table`` in packet order."""
        return self.each is not None or self.table is not None or self.jobs <= 1

    @property
    def copies(self) -> bool:
        """Whether anything is done with the chunks besides counting: then they go through this process
        (else an uncompressed file's chunks may each be read by the process that checks it)."""
        return self.sink is not None or self.each is not None or self.table is not None or \
            self.transform is not None or self.collect is not None or self.fix_embedded

    @property
    def mappable(self) -> bool:
        """Whether a serial scan may check an uncompressed file mapped in memory (its chunks views of the map):
        nothing is done with the chunks but counting, and ``collect``, which copies the packets it keeps during
        its call."""
        return not (self.sink is not None or self.each is not None or self.table is not None
                    or self.transform is not None or self.fix_embedded)


_FIELDS = frozenset(f.name for f in dataclasses.fields(ScanOptions))


def _replace(options: ScanOptions, changes: dict[str, Any]) -> ScanOptions:
    unknown = sorted(set(changes) - _FIELDS)
    if unknown:
        raise CsumTypeError(f"{unknown[0]}: not an option of csum.scan.scan (those are: {', '.join(sorted(_FIELDS))})",
                            code=Code.BAD_TYPE)
    return dataclasses.replace(options, **changes) if changes else options


def scan_options(options: ScanOptions | None, changes: dict[str, Any]) -> ScanOptions:
    """``options`` (None: the defaults) with the keyword arguments ``changes`` (``scan(name, jobs=4)``) applied."""
    if options is None:
        return ScanOptions(**changes) if changes.keys() <= _FIELDS else _replace(ScanOptions(), changes)
    if not isinstance(options, ScanOptions):
        raise CsumTypeError(f"options must be a csum.scan.ScanOptions or None, not {type(options).__name__}",
                            code=Code.BAD_TYPE)
    return _replace(options, changes)
