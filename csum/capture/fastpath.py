"""The fast path in front of the walker in ``csum verify`` and ``csum fix``: the C walker.

The C walker csum/engine/_cwalk.c (``csum.engine.cwalk``, where it is built: common link types, VLAN tags, MPLS,
PPPoE, IPv4 options, IPv6 extension headers, AH, IP-in-IP, GRE, ERSPAN, VXLAN, Geneve, GTP, GRE-in-UDP, UDP with or
without its checksum, IPv4 and IPv6 fragments reassembled where the
Reassembler would complete them the same way; see its header comment) counts the packets whose every checksum
passes and hands over the :class:`~csum.layers.Result` of every field of a packet with a failing one (fragments
aside). Every other packet goes through the Python walker in :mod:`csum.capture.checker`, once
(tests/capture/test_pcap.py checks that the report is the same with and without the C walker). Packet by packet
(``--format jsonl``, where the chunk is not handed to C at once), a whole packet the C walker walks gets its
Results from csum/engine/_cwalk.c too, unless it is a fragment.
"""

from __future__ import annotations

import functools
from array import array
from itertools import accumulate
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import engine
from ..layers import Reason, Result, Status, corrections, reassembly, walk
from .hosts import interesting, senders_of
from .pcap import NO_TIME, Capture
from .report import Report, depth_key, zero_counts

if TYPE_CHECKING:
    from .pcap import Int64s

class Packet(NamedTuple):
    """One packet as the checker needs it: its number in the capture, file offset, link type, length on the wire,
    bytes (a copy once handed over between processes), timestamp (nanoseconds since the epoch, or NO_TIME)."""

    number: int
    base: int
    linktype: int
    wire: int
    data: memoryview | bytes
    time: int = NO_TIME


@dataclass(frozen=True, eq=False)
class Batch:
    """Packets checked at once: a chunk of a capture, after the fragments still pending from before it (``carried``:
    their datagrams are rebuilt from them, so the C walker can complete them). The columns of :class:`Capture` as
    int64 buffers (``array("q")`` or views: no numpy), the carried packets' values in front, and the chunk's first
    packet number (``first``) and file offset (``base``); each packet's global number, file offset, whether it was
    captured whole (``todo``, int8) and the numbers of the packets of the chunk the snap length cut (``cut``) are made
    from them when asked (:func:`c_fast` needs none of them: csum/engine/_cwalk.c check_chunk makes what it needs)."""

    data: bytes
    offsets: Int64s
    caplens: Int64s
    origlens: Int64s
    linktypes: Int64s
    times: Int64s
    carried: list[Packet]
    first: int
    base: int

    @classmethod
    def of(cls, cap: Capture, carried: list[Packet]) -> Batch:
        offsets, caplens, origlens, linktypes, times = cap.buffers()
        if not carried:
            return cls(cap.data, offsets, caplens, origlens, linktypes, times, carried, cap.first_index, cap.base)

        def front(values: Iterable[int], column: Int64s) -> array:
            joined = array("q", values)
            joined.frombytes(memoryview(column).cast("B"))  # type: ignore[arg-type]  # an ndarray is a buffer too
            return joined

        lens = [len(p.data) for p in carried]
        data = cap.data
        if all(_holds(data, p.base - cap.base, p.data) for p in carried):  # a mapped file's chunk holds them already
            starts = [p.base - cap.base for p in carried]
        else:  # their bytes go after the chunk's: its offsets stay as they are
            starts = list(accumulate(lens[:-1], initial=len(cap.data)))
            data = b"".join([cap.data, *(p.data for p in carried)])
        return cls(data, front(starts, offsets), front(lens, caplens), front((p.wire for p in carried), origlens),
                   front((p.linktype for p in carried), linktypes), front((p.time for p in carried), times), carried,
                   cap.first_index, cap.base)

    def __len__(self) -> int:
        return len(self.offsets)

    @functools.cached_property
    def _columns(self) -> tuple[Int64s, Int64s, bytes, list[int]]:
        """(indices, bases, todo, cut): see the class docstring."""
        carried, m = self.carried, len(self.carried)
        offsets, caplens, origlens = (memoryview(c).cast("B").cast("q")[m:]  # type: ignore[arg-type]
                                      for c in (self.offsets, self.caplens, self.origlens))
        if engine.cwalk is not None:  # csum/engine/_cwalk.c chunk_columns: the columns numpy would make
            made = engine.cwalk.chunk_columns(offsets, caplens, origlens, self.first, self.base)
            indices: Int64s = memoryview(made[0]).cast("q")
            bases: Int64s = memoryview(made[1]).cast("q")
            todo, cut = made[2], memoryview(made[3]).cast("q").tolist()
        else:
            caps, origs, offs = caplens.tolist(), origlens.tolist(), offsets.tolist()
            indices = array("q", range(self.first, self.first + len(offs)))
            bases = array("q", [self.base + o for o in offs])
            todo = bytes(c == o for c, o in zip(caps, origs))
            cut = [self.first + i for i, (c, o) in enumerate(zip(caps, origs)) if c < o]
        if not carried:
            return indices, bases, todo, cut
        return (array("q", [p.number for p in carried]) + array("q", indices),
                array("q", [p.base for p in carried]) + array("q", bases),
                bytes(len(p.data) == p.wire for p in carried) + todo, cut)

    @property
    def indices(self) -> Int64s:
        """Each packet's number in the capture (int64)."""
        return self._columns[0]

    @property
    def bases(self) -> Int64s:
        """Each packet's file offset (int64)."""
        return self._columns[1]

    @property
    def todo(self) -> bytes:
        """Whether each packet was captured whole (int8)."""
        return self._columns[2]

    @property
    def cut(self) -> list[int]:
        """The numbers of the chunk's packets the snap length cut."""
        return self._columns[3]

    def index(self, i: int) -> int:
        """Packet ``i``'s number in the capture."""
        m = len(self.carried)
        return self.carried[i].number if i < m else self.first + i - m

    def packet(self, i: int) -> Packet:
        m = len(self.carried)
        if i < m:
            return self.carried[i]
        start = int(self.offsets[i])
        return Packet(self.first + i - m, self.base + start, int(self.linktypes[i]), int(self.origlens[i]),
                      memoryview(self.data)[start : start + int(self.caplens[i])], int(self.times[i]))


def _holds(data: bytes, at: int, packet: memoryview | bytes) -> bool:
    """Whether ``data`` holds ``packet``'s bytes at ``at``: a chunk of a mapped file (csum.capture.pcap
    Reader.mapped) is the file from its start, so the fragments carried from earlier chunks are still in it."""
    return 0 <= at and at + len(packet) <= len(data) and memoryview(data)[at : at + len(packet)] == packet


def c_fast(cap: Batch, report: Report, fixes: bool = True, keep: int | None = None,
           listed: tuple[int, int] = (0, 0)) -> tuple[list[int], bytes, int]:
    """(the packets the C walker left to the Python walker: not captured whole or not walked here, the keys of the
    datagrams it reassembled, their peak: see csum/engine/_cwalk.c datagrams()), the rest counted in ``report``:
    ``report.fast`` the packets whose every checksum passes, every field of the packets C judged counted (in C),
    ``report.cut`` the chunk's packets the snap length cut, and the bad and offload ones of those with a failing field
    (not fragments) listed from their :class:`Result` from C, with their patches where ``fixes``. One C call
    (check_chunk) judges and counts the chunk. ``keep``: the report will keep only that many of each list
    (Report.keep): once this chunk's lists have that many, with the bad and offload items the reports of the chunks
    before listed (``listed``: every one of a lower packet number than this chunk's), the bad and offload fields of
    the packets after are counted in ``report.dropped`` and their Results never made (not with ``fixes`` or hosts:
    those need every packet's). No numpy."""
    cwalk = engine.cwalk
    if cwalk is None:
        raise RuntimeError("c_fast: csum.engine._cwalk is not built")
    front = array("q", [p.number for p in cap.carried])
    counts, report.fast, walk, reported, closed, peak, cut = cwalk.check_chunk(
        cap.data, cap.offsets, cap.caplens, cap.origlens, cap.linktypes, front, cap.first, reassembly.MAX_DATAGRAMS,
        reassembly.WINDOW)
    report.cut = memoryview(cut).cast("q").tolist()
    tallied = report.counts
    for code, k in counts:
        key, status = _COUNTED.get(code) or _counted(cwalk, code)
        row = tallied.get(key)
        if row is None:
            row = tallied[key] = zero_counts()
        row[status] += k
    hosts, bad, offload = report.hosts, report.bad, report.offload
    # the room left in the bad and offload lists, where their Results are not all needed
    room = None if keep is None or fixes or hosts is not None else (keep - listed[0], keep - listed[1])
    for i, kept, nbad, noffload in reported:  # counted above: listed here
        if room is not None and (not nbad or len(bad) >= room[0]) and (not noffload or len(offload) >= room[1]):
            report.dropped["bad"] += nbad
            report.dropped["offload"] += noffload
            continue
        index, results = cap.index(i), cwalk.results(kept)
        for r in results:
            if r.ok is False:
                (offload if r.reason is _OFFLOAD else bad).append((index, r))
        if hosts is not None and interesting(results):
            p = cap.packet(i)
            hosts.add(p.time, results, senders_of(p.data, p.linktype, p.wire))
        if fixes:
            report.patches += patches(results, cap.packet(i).base, functools.partial(cap.packet, i))
    return memoryview(walk).cast("q").tolist(), closed, peak


#: check_chunk's count codes met so far, each with its Report.counts key and status (:func:`_counted`).
_COUNTED: dict[int, tuple[str, str]] = {}


def _counted(cwalk: Any, code: int) -> tuple[str, str]:
    """The Report.counts key and status of a count code of csum/engine/_cwalk.c check_chunk (layer code + DEPTH *
    depth, + a flag: NA, NONE, BAD, OFFLOAD; else ok; ``cwalk``: csum.engine.cwalk), kept in _COUNTED."""
    name, depth = cwalk.LAYERS[code % cwalk.DEPTH], (code % cwalk.NA) // cwalk.DEPTH
    status = "bad" if code & cwalk.BAD else "offload" if code & cwalk.OFFLOAD else "n/a" if code & cwalk.NA \
        else "none" if code & cwalk.NONE else "ok"
    _COUNTED[code] = (depth_key(name, depth), status)
    return _COUNTED[code]


_OFFLOAD = Reason.OFFLOAD
#: The statuses a fix corrects.
FIX = (Status.BAD, Status.OFFLOAD)


def patches(results: list[Result], base: int, packet: Callable[[], Packet]) -> list[tuple[int, bytes]]:
    """csum.layers.corrections of a packet at file offset ``base`` from C's results: each bad/offload field set to
    its computed value in corrections' order, inner levels first and, within a level, the later header first, each
    judged again over the fields set before it (a tunnel's UDP covers the inner packet; GRE in UDP stands at UDP's
    depth, RFC 8086, its checksum covered by that UDP's: the one checksum C finds covering another of its level).
    ``packet()`` gives the packet then. Without those, the fields are independent and set at once."""
    fixing = [r for r in results if r.status in FIX]
    wrong = [(r.field, r.computed) for r in fixing if r.field is not None and r.computed is not None]
    if not any(r.depth for r in fixing) and not any(r.layer == "gre" for r in results):
        return [(base + at, value.to_bytes(2, "big")) for at, value in wrong]
    p = packet()
    work = bytearray(p.data)
    for depth, header in sorted({(r.depth, r.offset) for r in results}, reverse=True):
        now = None if engine.cwalk is None else engine.cwalk.verify(work, p.linktype)
        if now is None:  # cannot happen (only checksum fields change), but the walker is the reference
            view = memoryview(p.data)
            stack = walk(view, p.linktype, wire_len=p.wire)
            return [(p.base + at, new) for at, new in corrections(view, stack.fields)]
        for r in now:
            if (r.depth, r.offset) == (depth, header) and r.status in FIX and r.field is not None and \
                    r.computed is not None:
                work[r.field : r.field + 2] = r.computed.to_bytes(2, "big")
    fields = [r.field for r in results if r.field is not None]
    return [(p.base + at, bytes(work[at : at + 2])) for at in fields if work[at : at + 2] != p.data[at : at + 2]]


_PARTIAL = frozenset({Reason.NEEDS_REASSEMBLY, Reason.NON_FIRST_FRAGMENT})


def from_c(p: Packet) -> list[Result] | None:
    """The C walker's results for one whole packet, unless it is a fragment (the Reassembler needs the walk)."""
    cwalk = engine.cwalk
    if cwalk is None or p.wire != len(p.data):
        return None
    results = cwalk.verify(p.data, p.linktype)
    if results is None or any(r.reason in _PARTIAL for r in results):
        return None
    return results
