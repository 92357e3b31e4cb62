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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .. import engine
from ..layers import Reason, Result, Status, corrections, reassembly, walk
from .hosts import interesting, senders_of
from .pcap import NO_TIME, Capture
from .report import Report, zero_counts

if TYPE_CHECKING:  # a chunk's columns (Batch); the per-packet path needs no numpy (csum.capture.checker.ONE_BY_ONE)
    import numpy as np

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
    """Packets checked at once: a chunk of a capture, after the fragments still pending from before it (their
    datagrams are rebuilt from them, so the C walker can complete them). The columns of :class:`Capture` (int64,
    contiguous), plus each packet's global number, file offset and timestamp (NO_TIME where unknown)."""

    data: bytes
    offsets: np.ndarray
    caplens: np.ndarray
    origlens: np.ndarray
    linktypes: np.ndarray
    indices: np.ndarray
    bases: np.ndarray
    times: np.ndarray

    @classmethod
    def of(cls, cap: Capture, carried: list[Packet]) -> Batch:
        import numpy as np

        def col(a: object) -> np.ndarray:
            return np.ascontiguousarray(a, dtype=np.int64)

        index = np.arange(cap.first_index, cap.first_index + len(cap), dtype=np.int64)
        times = np.full(len(cap), NO_TIME, dtype=np.int64) if cap.times is None else col(cap.times)
        if not carried:
            return cls(cap.data, col(cap.offsets), col(cap.caplens), col(cap.origlens), col(cap.linktypes), index,
                       cap.base + col(cap.offsets), times)
        lens = [len(p.data) for p in carried]
        front = sum(lens)
        starts = np.cumsum([0] + lens[:-1])
        return cls(b"".join([*(p.data for p in carried), cap.data]),
                   col(np.concatenate([starts, cap.offsets + front])), col(np.concatenate([lens, cap.caplens])),
                   col(np.concatenate([[p.wire for p in carried], cap.origlens])),
                   col(np.concatenate([[p.linktype for p in carried], cap.linktypes])),
                   col(np.concatenate([[p.number for p in carried], index])),
                   col(np.concatenate([[p.base for p in carried], cap.base + cap.offsets])),
                   col(np.concatenate([[p.time for p in carried], times])))

    def __len__(self) -> int:
        return len(self.offsets)

    def packet(self, i: int) -> Packet:
        start = int(self.offsets[i])
        return Packet(int(self.indices[i]), int(self.bases[i]), int(self.linktypes[i]), int(self.origlens[i]),
                      memoryview(self.data)[start : start + int(self.caplens[i])], int(self.times[i]))


def c_fast(cap: Batch, todo: np.ndarray, report: Report) -> tuple[np.ndarray, bytes, int]:
    """(the packets the C walker left to the Python walker: not among ``todo`` or not walked here, the keys of the
    datagrams it reassembled, their peak: see csum/engine/_cwalk.c datagrams()), the rest counted in ``report``:
    ``report.fast`` the packets whose every checksum passes, the fields of those with a failing one (not fragments)
    tallied from their :class:`Result` from C."""
    import numpy as np

    cwalk = engine.cwalk
    if cwalk is None:
        raise RuntimeError("c_fast: csum.engine._cwalk is not built")
    out = np.zeros((len(cap), cwalk.SLOTS), dtype=np.int16)
    todo8 = todo.view(np.int8) if todo.dtype == np.bool_ else todo.astype(np.int8)
    reported, closed, peak = cwalk.fast_check(cap.data, cap.offsets, cap.caplens, cap.linktypes, out, todo8,
                                              cap.indices, reassembly.MAX_DATAGRAMS, reassembly.WINDOW)
    counts, report.fast, walk = cwalk.tally(out, todo8)
    for code, n in counts:  # code: layer code + DEPTH * depth, NA or NONE set for an n/a or none field
        name, depth = cwalk.LAYERS[code % cwalk.DEPTH], (code % cwalk.NA) // cwalk.DEPTH
        key = name if not depth else f"{name}@{depth}"
        status = "n/a" if code & cwalk.NA else "none" if code & cwalk.NONE else "ok"
        report.counts.setdefault(key, zero_counts())[status] += n
    for i, results in reported:
        if report.hosts is not None and interesting(results):
            p = cap.packet(i)
            report.tally(p.number, results, p.time, senders_of(p.data, p.linktype, p.wire))
        else:
            report.tally(int(cap.indices[i]), results)
        report.patches += patches(results, int(cap.bases[i]), functools.partial(cap.packet, i))
    return np.frombuffer(walk, dtype=np.int64), closed, peak


#: The statuses a fix corrects.
FIX = (Status.BAD, Status.OFFLOAD)


def patches(results: list[Result], base: int, packet: Callable[[], Packet]) -> list[tuple[int, bytes]]:
    """csum.layers.corrections of a packet at file offset ``base`` from C's results: each bad/offload field set to
    its computed value, inner levels first, the outer ones judged again after (a tunnel's UDP covers the inner
    packet; ``packet()`` gives the packet then). Fields of one level C walks are independent (no checksum covers
    another one of its level)."""
    wrong = [(r.field, r.computed) for r in results
             if r.status in FIX and r.field is not None and r.computed is not None]
    if not any(r.depth and r.status in FIX for r in results):
        return [(base + at, value.to_bytes(2, "big")) for at, value in wrong]
    p = packet()
    work = bytearray(p.data)
    for depth in range(max(r.depth for r in results), -1, -1):
        now = None if engine.cwalk is None else engine.cwalk.verify(work, p.linktype)
        if now is None:  # cannot happen (only checksum fields change), but the walker is the reference
            view = memoryview(p.data)
            stack = walk(view, p.linktype, wire_len=p.wire)
            return [(p.base + at, new) for at, new in corrections(view, stack.fields)]
        for r in now:
            if r.depth == depth and r.status in FIX and r.field is not None and r.computed is not None:
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
