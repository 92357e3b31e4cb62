"""A whole capture through :class:`csum.rewrite.rules.Rules`: what ``csum rewrite IN OUT`` runs.

The capture is read in bounded chunks by :class:`csum.pcap.Reader` (pcap or pcapng, compressed or not, ``-`` for
standard input), each chunk's packets are rewritten (:func:`csum.rewrite.fast.rewrite_chunk`: csum/engine/_rewrite.c for the
common stacks where it is built, :func:`csum.rewrite.apply.apply` for the rest; packets keep their length, so every
other byte of the file, pcapng blocks, options and comments included, is copied as it was; with ``truncate`` every
packet goes through :func:`csum.rewrite.truncate.truncate_chunk` and its record or block is resized), and the chunks are
written in order to OUT (:class:`csum.capture.output.AtomicFile`: a regular file replaced atomically, never an
input; ``-``: standard output). ``fix=True`` passes the rewritten chunks through ``csum fix``'s checker
(:func:`csum.capture.scan.scan` with a transform), which corrects what was wrong. ``jobs`` > 1 rewrites chunks in
that many processes, in order.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from ..capture import pcap
from ..errors import CsumValueError
from ..core.inputs import check_bool, check_callable, check_choice, check_instance, check_int, check_jobs, check_path
from ..capture.output import BY_NAME, AtomicFile, target
from ..capture.source import COMPRESSIONS, open_source
from .fast import TRUNCATING, rewrite_chunk
from .outcome import Outcome
from .rules import Rules

if TYPE_CHECKING:
    from ..capture.scan import Scan

__all__ = ["RewriteResult", "rewrite_capture"]

#: Called now and then: (bytes read so far, input size or None).
Progress = Callable[[int, "int | None"], None]


@dataclass
class RewriteResult:
    """What :func:`rewrite_capture` did: the packets' :class:`~csum.rewrite.outcome.Outcome`, the capture's format and
    compression, where reading stopped early (a truncated or damaged record: the rest is copied unchanged), and with
    ``fix`` the check of the rewritten capture (:class:`csum.scan.Scan`). ``written``: whether ``out`` was written
    (not for a damaged capture without ``keep_going``)."""

    name: str
    out: str
    format: str
    compression: str | None
    outcome: Outcome
    stop: pcap.Stop | None
    fast: int = 0
    check: Scan | None = None
    #: With ``explain``: why each field ``fix`` corrected was wrong (csum.explain.capture.Explained), else None.
    explained: Any = None
    written: bool = True

    def as_json(self, show: int = 10) -> dict[str, object]:
        doc: dict[str, object] = {"file": self.name, "out": self.out if self.written else None, "format": self.format,
                                  "compression": self.compression, **self.outcome.as_json(), "fast_path": self.fast,
                                  "python_path": dict(sorted(self.outcome.declined.items()))}
        doc["stopped"] = None if self.stop is None else {
            "offset": self.stop.offset, "packet": self.stop.index, "truncated": self.stop.truncated,
            "reason": self.stop.reason}
        if self.check is not None:
            counts = self.check.report.counts.values()
            doc["after"] = {k: sum(c[k] for c in counts) for k in ("ok", "bad", "offload", "none", "n/a")}
        if self.explained is not None:
            doc["explain"] = self.explained.as_json(show)
        return doc


def _rewritten_chunk(chunk: pcap.Capture, rules: Rules) -> tuple[pcap.Capture, Outcome, int]:
    """``chunk`` with every packet rewritten (:func:`csum.rewrite.fast.rewrite_chunk`), what happened, and how many
    packets the C engine answered."""
    if rules.truncate is not None:  # frames change length: the Python engine and resized records
        from .truncate import truncate_chunk

        cut, out = truncate_chunk(chunk, rules)
        out.declined[TRUNCATING] += len(chunk)
        return cut, out, 0
    data, out, fast = rewrite_chunk(chunk, rules)
    return chunk.with_data(data), out, fast


def _rewritten(chunks: Iterator[pcap.Capture], rules: Rules,
               jobs: int) -> Iterator[tuple[pcap.Capture, tuple[pcap.Capture, Outcome, int]]]:
    """Each chunk as read and rewritten, in order; with ``jobs`` > 1 in forked workers
    (:func:`csum.capture.parallel.mapped`, whose workers end with their parent, quietly: multiprocessing.Pool's printed
    a traceback each on a SIGTERM or Ctrl-C to ``rewrite --jobs`` and deadlocked the parent on a SIGTERM to the whole
    process group)."""
    if jobs <= 1:  # in this process: the process machinery is not even imported (csum rewrite's start-up)
        for chunk in chunks:
            yield chunk, _rewritten_chunk(chunk, rules)
        return
    from ..capture.parallel import mapped

    yield from mapped(chunks, functools.partial(_rewritten_chunk, rules=rules), jobs)


class _Stdout:
    """Standard output as OUT: written as it comes (nothing to replace atomically)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def __enter__(self) -> _Stdout:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.flush()

    def write(self, data: bytes) -> None:
        self._stream.write(data)

    def commit(self) -> None:
        self._stream.flush()


#: ``rewrite_capture(explain=...)``: given how to find the chunk as read for each chunk rewritten, a csum.scan
#: ``collect`` with a ``limit`` (the wrong fields it keeps) and ``finish(report)`` (the explanation, once checked):
#: csum.explain.capture.Collector, which this wing cannot import.
Explainer = Callable[[Callable[[pcap.Capture], pcap.Capture]], Any]


def rewrite_capture(src: str | os.PathLike[str], dst: str | os.PathLike[str], rules: Rules, *, fix: bool = False,
                    jobs: int = 1, chunk_bytes: int = pcap.CHUNK_BYTES, follow_symlinks: bool = False,
                    progress: Progress | None = None, explain: Explainer | None = None,
                    compression: str | None = BY_NAME, keep_going: bool = False) -> RewriteResult:
    """Rewrite the capture ``src`` into ``dst`` (paths, or ``-``) by ``rules``; see the module docstring.

    ``dst`` is checked before anything is read (:func:`csum.capture.output.target`: CsumValueError ``unsafe-output``
    for a symbolic link unless ``follow_symlinks``, a device, a directory or an input) and replaced only when the
    whole capture has been written. ``explain`` (with ``fix``): an :data:`Explainer` (csum.explain.capture.Collector,
    from the wing above this one), to say why each field ``fix`` corrected was wrong, in the packet as read
    (``RewriteResult.explained``). Raises OSError (unreadable input, unwritable output) and CsumValueError (not a
    capture, corrupt compression); for an argument of the wrong kind, CsumTypeError or CsumValueError naming it.
    ``compression``: gzip, bzip2, xz, zstd or None for ``dst`` instead of the one its name says
    (:class:`csum.capture.output.AtomicFile`; ``csum rewrite DIR OUTDIR`` writes each copy in its input's).
    A capture that cannot be read whole (a damaged record, compressed data cut or corrupt: ``stop``, not a truncated
    last record) leaves ``dst`` as it was (``written`` False: its rest, copied unchanged, would hold what the rules
    did not touch, addresses ``anonymize`` was to hide among them), unless ``keep_going``; standard output has it all.
    """
    name, out_name = check_path(src, "src"), check_path(dst, "dst")
    check_instance(rules, Rules, "rules")
    fix, follow_symlinks = check_bool(fix, "fix"), check_bool(follow_symlinks, "follow_symlinks")
    keep_going = check_bool(keep_going, "keep_going")
    if explain is not None:
        check_callable(explain, "explain")
        if not fix:
            raise CsumValueError("explain: give fix=True too (the fields explained are those fix corrects)")
    jobs, chunk_bytes = check_jobs(jobs), check_int(chunk_bytes, 1, pcap.MAX_CHUNK_BYTES, "chunk_bytes")
    if progress is not None:
        check_callable(progress, "progress")
    if compression is not None:
        check_choice(compression, (BY_NAME, *sorted(set(COMPRESSIONS.values()))), "compression")
    to_stdout = out_name == "-"
    path = None if to_stdout else target(out_name, [] if name == "-" else [name], follow_symlinks=follow_symlinks)
    outcome, counts = Outcome(), [0]

    read: dict[int, pcap.Capture] = {}  # explain: each rewritten chunk's chunk as read, until the Collector takes it
    collected = None if explain is None else explain(lambda chunk: read.pop(chunk.first_index, chunk))

    def transform(chunks: Iterator[pcap.Capture]) -> Iterator[pcap.Capture]:
        for original, (chunk, part, fast) in _rewritten(chunks, rules, jobs):
            outcome.update(part)
            counts[0] += fast
            if collected is not None:
                read[chunk.first_index] = original
            yield chunk

    sink = _Stdout(sys.stdout.buffer) if to_stdout else AtomicFile(path, compression)  # type: ignore[arg-type]
    with sink as writer:
        if fix:
            from ..capture.scan import ScanOptions, scan  # the checker of csum fix: only with fix

            checked = scan(name, ScanOptions(chunk_bytes=chunk_bytes, sink=writer, progress=progress,
                                             keep=0 if collected is None else collected.limit, transform=transform,
                                             collect=collected))
            outcome.fixed = checked.patched
            result = RewriteResult(checked.name, out_name, checked.format, checked.compression, outcome, checked.stop,
                                   counts[0], checked)
            if collected is not None:
                result.explained = collected.finish(checked.report)
        else:
            with open_source(name) as source:
                reader = pcap.Reader(source.stream, chunk_bytes)
                for chunk in transform(iter(reader)):
                    writer.write(chunk.data)
                    if progress is not None:
                        progress(source.consumed(), source.size)
                for block in reader.rest():
                    writer.write(block)
                result = RewriteResult(source.name, out_name, reader.format, source.compression, outcome,
                                       reader.stop, counts[0])
        result.written = to_stdout or keep_going or result.stop is None or result.stop.truncated
        if result.written:
            writer.commit()
    return result
