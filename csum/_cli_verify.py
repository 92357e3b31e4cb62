"""Check (and correct) every checksum in a capture: the engine behind ``csum verify`` and ``csum fix``.

Every packet is walked by :func:`csum.layers.walk` on its capture link type, and each checksum
field judged by :func:`csum.layers.evaluate`, exactly as :func:`csum.inet.verify` does. A fast
path sits in front: the C walker csum/_cwalk.c where it is built (common link types, VLAN tags,
IPv4 options, IPv6 extension headers, VXLAN, IPv4 and IPv6 fragments reassembled where the Reassembler
would complete them the same way; see its header comment), which counts the packets whose every
checksum passes and hands over the :class:`Result` of every field of a packet with a failing one
(fragments aside); else numpy over csum.batch sums, which only says "every checksum
passes", for the plainest packets (Ethernet with at most one VLAN tag, SLL/SLL2, IPoIB, Cisco HDLC or raw IP; IPv4
without options, IPv6 without extension headers; TCP, UDP off the tunnel ports, ICMP/ICMPv6
other than errors). Both read offsets and minimum lengths from :mod:`csum.layers.table`; every
other packet goes through the walker (tests/test_pcap.py checks that the report is the same with
and without the fast path). Packet by packet (``--format jsonl``, and what the fast path leaves),
a whole packet the C walker walks gets its Results from csum/_cwalk.c too, unless it is a
fragment.

IP fragments are reassembled within the capture (:mod:`csum.layers.reassembly`) and the whole
datagram's checksums reported on the fragment carrying each field. A :class:`Checker` lives for
the whole capture and carries the pending datagrams from one chunk to the next (their fragments go
in front of the next chunk's packets, a :class:`Batch`); :func:`check_part` checks a chunk on its
own for csum/_stitch.py to join. Counts are kept per protocol
and depth: ``"tcp"`` is TCP over the outer IP layer, ``"tcp@1"`` TCP one tunnel (or ICMP quote)
deeper.
"""

from __future__ import annotations

import functools
import heapq
import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from . import batch
from .layers import Reason, Result, Status, accel, corrections, evaluate, reassembly, table as T, walk
from .layers.reassembly import Done, Reassembler
from .pcap import Capture

#: The counters of every ``Report.counts`` entry, in the order the outputs show them.
STATUSES = tuple(s.value for s in Status)
#: Protocols always present in ``Report.counts`` (others appear once seen).
LAYERS = ("ipv4", "tcp", "udp", "icmp", "icmpv6")
U64 = np.uint64

#: (packet index, every Result of that packet) for each packet, in order: the ``sink`` of :func:`check`.
Sink = Callable[[int, list[Result]], None]


def _zero_counts() -> dict[str, int]:
    return dict.fromkeys(STATUSES, 0)


def count_key(r: Result) -> str:
    """The ``Report.counts`` key of a result: the protocol, with ``@depth`` below the outer IP layer."""
    return r.layer if not r.depth else f"{r.layer}@{r.depth}"


#: The per-item lists of a :class:`Report` (bounded by ``Report.keep``), each in packet order.
KEPT = ("bad", "offload", "malformed", "cut")


def _number(item: int | tuple[int, object]) -> int:
    """The packet number of an item of a KEPT list."""
    return item if isinstance(item, int) else item[0]


@dataclass
class Report:
    """What checking a capture (or a chunk of one) found; packet numbers are global (``first_index`` + i).

    ``counts[key]`` = {"ok", "bad", "offload", "none", "n/a"} with ``key`` from :func:`count_key`;
    ``bad``: (packet index, Result) of every wrong checksum, in packet order; ``offload``: the same
    for fields holding transmit offload's pseudo-header sum (not in ``bad``); ``malformed``:
    (index, reason) of packets whose outer headers are inconsistent; ``cut``: packets captured
    only in part (their captured headers are still checked); ``not_ip``: packets carrying neither
    IPv4 nor IPv6; ``unsupported``: link type -> packets; ``fast``: packets counted by the
    vectorized path; ``patches``: (file offset, new field bytes) that correct every bad and
    offload checksum (and the outer checksums covering a corrected inner one).

    ``keep``: when set, :meth:`update` keeps at most that many items in each of ``bad``,
    ``offload``, ``malformed`` and ``cut`` and counts the rest in ``dropped`` (the CLI keeps what
    it prints, so a capture with millions of bad checksums checks in bounded memory);
    :meth:`total` is the whole number either way.
    """

    packets: int
    counts: dict[str, dict[str, int]] = field(default_factory=lambda: {k: _zero_counts() for k in LAYERS})
    bad: list[tuple[int, Result]] = field(default_factory=list)
    offload: list[tuple[int, Result]] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)
    not_ip: int = 0
    unsupported: dict[int, int] = field(default_factory=dict)
    fast: int = 0
    patches: list[tuple[int, bytes]] = field(default_factory=list)
    keep: int | None = None
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEPT, 0))

    def total(self, name: str) -> int:
        """How many ``name`` ("bad", "offload", "malformed", "cut") items there are, kept or dropped."""
        return len(getattr(self, name)) + self.dropped[name]

    def merge(self, other: Report) -> Report:
        """This report followed by ``other``'s (the next chunk of the same capture): counts added, lists joined."""
        out = Report(self.packets, {k: dict(v) for k, v in self.counts.items()}, list(self.bad), list(self.offload),
                     list(self.malformed), list(self.cut), self.not_ip, dict(self.unsupported), self.fast,
                     list(self.patches), self.keep, dict(self.dropped))
        out.update(other)
        return out

    def update(self, other: Report) -> None:
        """:meth:`merge` in place: ``other`` (the next chunk) added to this report."""
        self.packets += other.packets
        for key, row in other.counts.items():
            mine = self.counts.setdefault(key, _zero_counts())
            for status, n in row.items():
                mine[status] = mine.get(status, 0) + n
        for link, n in other.unsupported.items():
            self.unsupported[link] = self.unsupported.get(link, 0) + n
        for name in KEPT:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine and theirs and _number(theirs[0]) < _number(mine[-1]):  # a datagram settled a chunk late
                both = list(heapq.merge(mine, theirs, key=_number))
                room = len(both) if self.keep is None else min(len(both), self.keep)
                mine[:] = both[:room]
                self.dropped[name] += other.dropped[name] + len(both) - room
                continue
            room = len(theirs) if self.keep is None else max(0, min(len(theirs), self.keep - len(mine)))
            mine += theirs[:room]
            self.dropped[name] += other.dropped[name] + len(theirs) - room
        if self.patches and other.patches and other.patches[0] < self.patches[-1]:
            self.patches[:] = heapq.merge(self.patches, other.patches)
        else:
            self.patches += other.patches
        self.not_ip += other.not_ip
        self.fast += other.fast

    def sort(self) -> None:
        """Put the lists in packet order (and the patches in file order)."""
        for name in ("bad", "offload", "malformed"):
            getattr(self, name).sort(key=_number)
        self.patches.sort()

    def tally(self, index: int, results: list[Result]) -> None:
        for r in results:
            row = self.counts.get(count_key(r))
            if row is None:
                row = self.counts[count_key(r)] = _zero_counts()
            s = r.status
            row[s.value] += 1
            if s is Status.BAD:
                self.bad.append((index, r))
            elif s is Status.OFFLOAD:
                self.offload.append((index, r))


# --- the vectorized accelerator ---------------------------------------------------------------

def _be16(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    idx = np.clip(idx, 0, len(d) - 2)
    return (d[idx].astype(np.int64) << 8) | d[idx + 1]


def _byte(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return d[np.clip(idx, 0, len(d) - 1)].astype(np.int64)


def _l3_offsets(cap: Capture | Batch, d: np.ndarray) -> np.ndarray:
    """Per packet, the IP header's offset when the link header is fixed and names IPv4/IPv6 directly, else -1."""
    l3 = np.full(len(cap), -1, dtype=np.int64)
    for linktype, entry in T.LINKTYPES.items():
        mine = cap.linktypes == linktype
        if not mine.any():
            continue
        if entry.kind == "ip":
            l3[mine] = 0
        elif entry.kind in ("ethernet", "ethertype"):
            at, size = (12, 14) if entry.kind == "ethernet" else (entry.at, entry.header)
            proto = np.where(cap.caplens >= size, _be16(d, cap.offsets + at), -1)
            l3[mine & np.isin(proto, (T.ETH_IPV4, T.ETH_IPV6))] = size
            if entry.kind == "ethernet":  # one VLAN tag: the EtherType 4 bytes on
                tagged = mine & np.isin(proto, list(T.VLAN_TPIDS)) & (cap.caplens >= size + 4)
                inner = _be16(d, cap.offsets + at + 4)
                l3[tagged & np.isin(inner, (T.ETH_IPV4, T.ETH_IPV6))] = size + 4
    return l3


def _words(d: np.ndarray, start: np.ndarray, count: int) -> np.ndarray:
    """Sum of ``count`` big-endian 16-bit words at each start offset (uint64)."""
    idx = start[:, None] + 2 * np.arange(count)
    return ((d[idx].astype(U64) << U64(8)) | d[idx + 1]).sum(axis=1, dtype=U64)


def _passes(r: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Receiver test: canonical sum ``r`` without the field, plus the stored field, is all ones."""
    x = r + stored
    return ((x & 0xFFFF) + (x >> 16)) == 0xFFFF


def _canonical(total: np.ndarray) -> np.ndarray:
    r = total % U64(0xFFFF)
    return np.where((r == 0) & (total != 0), U64(0xFFFF), r)


def fast_ok(cap: Capture | Batch, d: np.ndarray, todo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(packet indices, IPv4?, L4 protocol) of the plain packets among ``todo`` whose every checksum passes."""
    l3 = _l3_offsets(cap, d)
    cand = np.flatnonzero(todo & (l3 >= 0) & (cap.caplens == cap.origlens))
    base = cap.offsets[cand] + l3[cand]
    room = cap.caplens[cand] - l3[cand]
    first = _byte(d, base)
    v4 = (first == 0x45) & (room >= 20)
    v6 = (first >> 4 == 6) & (room >= 40)
    total4 = _be16(d, base + 2)
    proto = np.where(v4, _byte(d, base + 9), _byte(d, base + 6))
    l4_len = np.where(v4, total4 - 20, _be16(d, base + 4))
    fits = np.where(v4, (total4 >= 20) & (total4 <= room), 40 + l4_len <= room)
    known = np.where(v4, np.isin(proto, (T.ICMP, T.TCP, T.UDP)), np.isin(proto, (T.TCP, T.UDP, T.ICMPV6)))
    l4 = base + np.where(v4, 20, 40)
    minimum = np.select([proto == T.TCP, proto == T.UDP], [T.TCP_ENTRY.minimum, T.UDP_ENTRY.minimum],
                        T.ICMP_ENTRY.minimum)
    minimum = np.where(proto == T.TCP, np.maximum(minimum, (_byte(d, l4 + 12) >> 4) * 4), minimum)
    udp = proto == T.UDP
    icmp = (proto == T.ICMP) | (proto == T.ICMPV6)
    errors = np.where(proto == T.ICMP, np.isin(_byte(d, l4), list(T.ICMP_ERRORS)),
                      np.isin(_byte(d, l4), list(T.ICMPV6_ERRORS)))
    field_off = np.select([proto == T.TCP, udp], [T.TCP_ENTRY.field, T.UDP_ENTRY.field], T.ICMP_ENTRY.field)
    plain_udp = ~udp | ((_be16(d, l4 + T.UDP_ENTRY.length_at) == l4_len) & ~np.isin(_be16(d, l4 + 2), list(
        T.UDP_TUNNELS)) & (_be16(d, l4 + field_off) != 0))
    keep = ((v4 & ((_be16(d, base + 6) & 0x3FFF) == 0) & (total4 > 0)) | (v6 & (l4_len > 0))) & known & fits & \
        (l4_len >= minimum) & plain_udp & ~(icmp & errors)
    cand, base, v4, proto, l4_len, l4 = cand[keep], base[keep], v4[keep], proto[keep], l4_len[keep], l4[keep]
    fld = l4 + field_off[keep]
    z = d.copy()
    z[fld] = 0
    z[fld + 1] = 0
    ok = np.ones(len(cand), dtype=bool)
    b4 = base[v4]
    ip_r = batch.ones_sums_ragged(d, b4, np.full(len(b4), 20), 16, "big")
    ok[v4] = ip_r == 0xFFFF
    total = batch.ones_sums_ragged(z, l4, l4_len, 16, "big")
    pseudo = proto != T.ICMP
    lens = l4_len.astype(U64)
    extra = proto.astype(U64) + (lens >> U64(16)) + (lens & U64(0xFFFF))
    total[v4 & pseudo] += _words(d, base[v4 & pseudo] + 12, 4) + extra[v4 & pseudo]
    total[~v4] += _words(d, base[~v4] + 8, 16) + extra[~v4]
    ok &= _passes(_canonical(total), _be16(d, fld).astype(U64))
    return cand[ok], v4[ok], proto[ok]


# --- the C fast walker (csum/_cwalk.c), driven by the same table -------------------------------

_cwalk = accel.cwalk
#: csum/_cwalk.c's protocol codes (code + 8 * depth in its output).
_C_CODES = dict(enumerate(accel.CODES))
_C_SLOTS = 6
_C_NA = 64  # a code counted "n/a" (the transport layer of a later fragment), else "ok"


def c_fast(cap: Batch, todo: np.ndarray, report: Report) -> tuple[np.ndarray, np.ndarray, bytes, int]:
    """(packets among ``todo`` whose every checksum the C walker found passing, the other packets it judged, the keys
    of the datagrams it reassembled, their peak: see csum/_cwalk.c datagrams()), all counted in ``report``: the
    second are packets (not fragments) with a failing field, every field's :class:`Result` from C."""
    out = np.zeros((len(cap), _C_SLOTS), dtype=np.int8)
    reported, closed, peak = _cwalk.fast_check(
        cap.data, cap.offsets, cap.caplens, cap.linktypes, accel.LINKS, accel.FACTS, out, todo.astype(np.int8),
        cap.indices, reassembly.MAX_DATAGRAMS, reassembly.WINDOW)
    done = todo & (out[:, 0] > 0)
    codes = out[done].ravel()
    for code, n in enumerate(np.bincount(codes[codes > 0], minlength=128).tolist()):
        if n:
            name, depth = _C_CODES[code % 8], (code & ~_C_NA) // 8
            key = name if not depth else f"{name}@{depth}"
            report.counts.setdefault(key, _zero_counts())["n/a" if code & _C_NA else "ok"] += n
    for i, results in reported:
        p = cap.packet(i)
        report.tally(p.number, results)
        report.patches += _patches(p, results)
    return done, todo & (out[:, 0] == -2), closed, peak


_FIX = (Status.BAD, Status.OFFLOAD)


def _patches(p: Packet, results: list[Result]) -> list[tuple[int, bytes]]:
    """csum.layers.corrections of packet ``p`` from C's results: each bad/offload field set to its computed value,
    inner levels first, the outer ones judged again after (a tunnel's UDP covers the inner packet). Fields of one
    level C walks are independent (no checksum covers another one of its level)."""
    if not any(r.depth and r.status in _FIX for r in results):
        return [(p.base + r.field, r.computed.to_bytes(2, "big")) for r in results if r.status in _FIX]
    work = bytearray(p.data)
    for depth in range(max(r.depth for r in results), -1, -1):
        now = _cwalk.verify(work, p.linktype)
        if now is None:  # cannot happen (only checksum fields change), but the walker is the reference
            view = memoryview(p.data)
            stack = walk(view, p.linktype, wire_len=p.wire)
            return [(p.base + at, new) for at, new in corrections(view, stack.fields)]
        for r in now:
            if r.depth == depth and r.status in _FIX:
                work[r.field : r.field + 2] = r.computed.to_bytes(2, "big")
    return [(p.base + r.field, bytes(work[r.field : r.field + 2])) for r in results
            if work[r.field : r.field + 2] != p.data[r.field : r.field + 2]]


_PARTIAL = frozenset({Reason.NEEDS_REASSEMBLY, Reason.NON_FIRST_FRAGMENT})


def _from_c(p: Packet) -> list[Result] | None:
    """The C walker's results for one whole packet, unless it is a fragment (the Reassembler needs the walk)."""
    if _cwalk is None or p.wire != len(p.data):
        return None
    results = _cwalk.verify(p.data, p.linktype)
    if results is None or any(r.reason in _PARTIAL for r in results):
        return None
    return results


# --- the walk ----------------------------------------------------------------------------------

class Packet(NamedTuple):
    """One packet as the checker needs it: its number in the capture, file offset, link type, length on the wire,
    bytes (a copy once handed over between processes)."""

    number: int
    base: int
    linktype: int
    wire: int
    data: memoryview | bytes


@dataclass(frozen=True, eq=False)
class Batch:
    """Packets checked at once: a chunk of a capture, after the fragments still pending from before it (their
    datagrams are rebuilt from them, so the C walker can complete them). The columns of :class:`Capture` (int64,
    contiguous), plus each packet's global number and file offset."""

    data: bytes
    offsets: np.ndarray
    caplens: np.ndarray
    origlens: np.ndarray
    linktypes: np.ndarray
    indices: np.ndarray
    bases: np.ndarray

    @classmethod
    def of(cls, cap: Capture, carried: list[Packet]) -> Batch:
        def col(a: object) -> np.ndarray:
            return np.ascontiguousarray(a, dtype=np.int64)

        index = np.arange(cap.first_index, cap.first_index + len(cap), dtype=np.int64)
        if not carried:
            return cls(cap.data, col(cap.offsets), col(cap.caplens), col(cap.origlens), col(cap.linktypes), index,
                       cap.base + col(cap.offsets))
        lens = [len(p.data) for p in carried]
        front = sum(lens)
        starts = np.cumsum([0] + lens[:-1])
        return cls(b"".join(bytes(p.data) for p in carried) + bytes(cap.data),
                   col(np.concatenate([starts, cap.offsets + front])), col(np.concatenate([lens, cap.caplens])),
                   col(np.concatenate([[p.wire for p in carried], cap.origlens])),
                   col(np.concatenate([[p.linktype for p in carried], cap.linktypes])),
                   col(np.concatenate([[p.number for p in carried], index])),
                   col(np.concatenate([[p.base for p in carried], cap.base + cap.offsets])))

    def __len__(self) -> int:
        return len(self.offsets)

    def packet(self, i: int) -> Packet:
        start = int(self.offsets[i])
        return Packet(int(self.indices[i]), int(self.bases[i]), int(self.linktypes[i]), int(self.origlens[i]),
                      memoryview(self.data)[start : start + int(self.caplens[i])])


@dataclass
class _Row:
    """A walked packet's findings, kept until no pending datagram can amend them."""

    index: int
    results: list[Result]
    patches: list[tuple[int, bytes]]
    malformed: str | None = None


@dataclass
class Part:
    """One chunk checked on its own (:meth:`Checker.detach`), for csum/_stitch.py to join to the chunks before it.

    ``report``: everything the chunk settled; ``open``: the packets of the datagrams still pending at its end, their
    findings left out of ``report``; ``closed``: the keys of the datagrams completed or given up in the chunk
    (:func:`csum.layers.accel.key_bytes` each, end to end); ``crowd``: the most datagrams pending at once (an
    upper bound).
    """

    report: Report
    open: list[Packet]
    closed: bytes
    crowd: int

    def conflicts(self, pending: Iterable[reassembly.Key]) -> bool:
        """Whether a datagram of this chunk was completed or given up under one of the keys ``pending``."""
        return any(accel.holds(self.closed, accel.key_bytes(key)) for key in pending)


class Checker:
    """Checks the chunks of one capture in order, IP fragments reassembled across them.

    :meth:`check` returns a chunk's :class:`Report`: its fast-path counts and the findings of every walked
    packet that no pending datagram may still amend (some from earlier chunks); :meth:`close` the rest.
    ``sink(index, results)``, when given, receives every packet's results in packet order (the fast path is
    then off, so every field is seen); a pending datagram holds back the rows after its first fragment, at
    most :data:`~csum.layers.reassembly.WINDOW` packets.
    """

    def __init__(self, sink: Sink | None = None) -> None:
        self.sink = sink
        self.frags = Reassembler()
        self.rows: deque[_Row] = deque()
        self.by_index: dict[int, _Row] = {}
        self.held: dict[int, Packet] = {}  # packets of pending datagrams: their rows may still change
        self.report = Report(0)
        self.c_closed: list[bytes] = []
        self.c_peak = 0

    def check(self, cap: Capture, progress: Callable[[int, int], None] | None = None) -> Report:
        report = self.report = Report(len(cap))
        carried = self._reopen() if self.sink is None and self.frags.pending else []
        cut = cap.caplens < cap.origlens
        report.cut = (np.flatnonzero(cut) + cap.first_index).tolist()
        batch = Batch.of(cap, carried)
        if not len(batch):
            return report
        cut = batch.caplens < batch.origlens
        walk_all = np.ones(len(batch), dtype=bool)
        if self.sink is None and _cwalk is not None:
            done, judged, closed, peak = c_fast(batch, ~cut, report)
            self.c_closed.append(closed)
            self.c_peak = max(self.c_peak, peak)
            report.fast = int(np.count_nonzero(done))
            walk_all[done | judged] = False
        elif self.sink is None:
            d = np.frombuffer(batch.data, dtype=np.uint8)
            index, v4, proto = fast_ok(batch, d, ~cut)
            report.fast = len(index)
            report.counts["ipv4"]["ok"] += int(np.count_nonzero(v4))
            for number, entry in ((T.TCP, T.TCP_ENTRY), (T.UDP, T.UDP_ENTRY), (T.ICMP, T.ICMP_ENTRY),
                                  (T.ICMPV6, T.ICMPV6_ENTRY)):
                report.counts[entry.name]["ok"] += int(np.count_nonzero(proto == number))
            walk_all[index] = False
        rest = np.flatnonzero(walk_all).tolist()
        for n, i in enumerate(rest):
            self.packet(batch.packet(i))
            if progress is not None and not n & 0xFFF:
                progress(n, len(rest))
        for given_up in self.frags.expire(int(batch.indices[-1])):
            self.finish(given_up)
        self.flush()
        report.sort()
        return report

    def _reopen(self) -> list[Packet]:
        """The packets of the pending datagrams, taken back (their rows dropped, the datagrams forgotten) to be
        checked again in front of the next chunk; every other row is emitted now."""
        carried = sorted(self.held.values(), key=lambda p: p.number)
        for row in self.rows:
            if row.index not in self.held:
                self._emit(row)
        self.rows.clear()
        self.by_index.clear()
        self.held.clear()
        self.frags.pending.clear()
        return carried

    def packet(self, p: Packet) -> None:
        """Walk one packet (or take C's results for it), reassembling it if it is a fragment."""
        results = _from_c(p)
        if results is not None:  # the jsonl path's common packets, or what fast_check left to this one
            self._row(_Row(p.number, results, _patches(p, results)))
            return
        view = memoryview(p.data)
        stack = walk(view, p.linktype, wire_len=p.wire)
        report = self.report
        if stack.unsupported is not None:
            report.unsupported[stack.unsupported] = report.unsupported.get(stack.unsupported, 0) + 1
        elif stack.not_ip:
            report.not_ip += 1
        results = [evaluate(view, f) for f in stack.fields]
        fixes = [(p.base + at, new) for at, new in corrections(view, stack.fields)] \
            if any(r.status in _FIX for r in results) else []
        row = _Row(p.number, results, fixes, None if stack.malformed is None else stack.malformed[1])
        outer = stack.ips[0] if stack.ips else None
        if outer is None or outer.depth or outer.fragment not in ("first", "later"):
            self._row(row)
            return
        self.rows.append(row)
        self.by_index[p.number] = row
        self.held[p.number] = p
        name = f"ipv{outer.version}"
        path = next((f.path for f in stack.fields if f.depth == 0 and name in f.path), "")
        prefix = path[: path.index(name)] if path else ""
        for done in self.frags.add(p.number, view, outer, p.wire > len(view), prefix):
            self.finish(done)
        self.flush()

    def _row(self, row: _Row) -> None:
        if self.rows:
            self.rows.append(row)
            self.by_index[row.index] = row
            self.flush()
        else:
            self._emit(row)

    def finish(self, done: Done) -> None:
        """Put a reassembled datagram's results in place of the first fragment's "needs reassembly"; the rows of
        its fragments are final now."""
        pieces = {index: self.held.pop(index) for index in done.pieces if index in self.held}
        head = self.by_index.get(done.first)
        if head is None:
            return
        if done.failed is not None:
            head.results[:] = [Result(r.layer, r.offset, r.stored, None, None, done.failed, r.field, r.path, r.depth)
                               if r.reason == Reason.NEEDS_REASSEMBLY else r for r in head.results]
            return
        if done.results:
            head.results[:] = [r for r in head.results if r.reason != Reason.NEEDS_REASSEMBLY]
        for index, found in done.results.items():
            row = self.by_index.get(index)
            if row is None:
                continue
            row.results.extend(found)
            row.results.sort(key=lambda r: r.offset if r.field is None else r.field)
            row.patches += [(pieces[index].base + r.field, r.computed.to_bytes(2, "big")) for r in found
                            if r.status in _FIX and r.computed is not None and r.field is not None]

    def flush(self) -> None:
        """Emit the rows in order up to the first one a pending datagram may still amend."""
        while self.rows and self.rows[0].index not in self.held:
            row = self.rows.popleft()
            del self.by_index[row.index]
            self._emit(row)

    def _emit(self, row: _Row) -> None:
        report = self.report
        report.tally(row.index, row.results)
        report.patches += row.patches
        if row.malformed is not None:
            report.malformed.append((row.index, row.malformed))
        if self.sink is not None:
            self.sink(row.index, row.results)

    def unsettled(self) -> int | None:
        """The first packet whose findings are not yet in a report (None: every packet's are)."""
        return self.rows[0].index if self.rows else None

    def detach(self) -> Part:
        """End here without waiting for the datagrams still pending: every other row goes into the last chunk's
        report, and those datagrams' packets are handed over (copied)."""
        report = self.report
        for row in self.rows:
            if row.index not in self.held:
                self._emit(row)
        report.sort()
        packets = [Packet(p.number, p.base, p.linktype, p.wire, bytes(p.data)) for p in self.held.values()]
        closed = b"".join(self.c_closed + [accel.key_bytes(key) for key in self.frags.closed])
        crowd = max(self.frags.peak, self.c_peak)
        self.rows.clear()
        self.by_index.clear()
        self.held.clear()
        self.frags = Reassembler()
        return Part(report, sorted(packets, key=lambda p: p.number), closed, crowd)

    def close(self) -> Report:
        """The capture ended: every pending datagram given up, every row emitted; the report of those rows."""
        report = self.report = Report(0)
        for done in self.frags.flush():
            self.finish(done)
        self.flush()
        report.sort()
        return report


def check(cap: Capture, progress: Callable[[int, int], None] | None = None, sink: Sink | None = None) -> Report:
    """Check every packet of ``cap``, a whole capture; see :class:`Report` and :class:`Checker`."""
    checker = Checker(sink)
    report = checker.check(cap, progress)
    report.update(checker.close())
    return report


def check_part(cap: Capture) -> Part:
    """Check the chunk ``cap`` on its own, leaving its datagrams still pending at its end to csum/_stitch.py."""
    checker = Checker()
    checker.check(cap)
    return checker.detach()


# --- the two commands' output ----------------------------------------------------------------

def _bad_row(index: int, r: Result) -> dict[str, object]:
    return {"packet": index, "layer": r.layer, "offset": r.offset, "stored": r.stored, "computed": r.computed,
            "reason": str(r.reason)}


def _hex16(value: int | None) -> str | None:
    return None if value is None else f"{value:#06x}"


@functools.lru_cache(maxsize=4096)
def _js(text: str) -> str:
    return json.dumps(text)


def _js_hex16(value: int | None) -> str:
    return "null" if value is None else f'"{value:#06x}"'


def jsonl_line(index: int, r: Result) -> str:
    """One ``--format jsonl`` line: the JSON object {frame (1-based), protocol, path, field offset, stored, computed,
    status, reason}, as ``json.dumps`` writes it, and a newline (written out directly: a million packets' rows)."""
    return (f'{{"frame": {index + 1}, "protocol": {_js(r.layer)}, "path": {_js(r.path)}, '
            f'"offset": {"null" if r.field is None else r.field}, "stored": {_js_hex16(r.stored)}, '
            f'"computed": {_js_hex16(r.computed)}, "status": {_js(str(r.status))}, "reason": {_js(str(r.reason))}}}\n')


def as_json(report: Report, cap: Capture, name: str, show: int) -> dict[str, object]:
    """The report as a JSON-ready dict (lists cut to their first ``show`` items, counts complete)."""
    return {
        "file": name, "format": cap.format, "packets": report.packets, "vectorized": report.fast,
        "not_ip": report.not_ip, "unsupported_linktypes": {str(k): v for k, v in report.unsupported.items()},
        "counts": report.counts,
        "bad_count": report.total("bad"), "bad": [_bad_row(i, r) for i, r in report.bad[:show]],
        "offload_count": report.total("offload"), "offload": [_bad_row(i, r) for i, r in report.offload[:show]],
        "malformed_count": report.total("malformed"),
        "malformed": [{"packet": i, "reason": why} for i, why in report.malformed[:show]],
        "cut_count": report.total("cut"), "cut": report.cut[:show],
    }


def _rows(title: str, items: list[tuple[int, Result]], total: int, show: int) -> list[str]:
    if not total:
        return []
    lines = ["", f"{title}: {total}" + (f" (first {show})" if total > show else "")]
    if show > 0:
        lines.append(f"{'packet':>8}  {'layer':<10} {'offset':>6}  {'stored':<7} {'computed':<8}  reason")
    return lines + [f"{i:>8}  {count_key(r):<10} {r.offset:>6}  {_hex16(r.stored) or '-':<7} "
                    f"{_hex16(r.computed) or '-':<8}  {r.reason}" for i, r in items[:show]]


def as_text(report: Report, cap: Capture, name: str, show: int) -> str:
    """The report as tables: counts per protocol and depth, then the first ``show`` bad, offload, malformed, cut."""
    walked = report.packets - report.fast
    lines = [f"{name}: {cap.format}, {report.packets} packets ({report.fast} on the fast path, {walked} walked "
             f"layer by layer; {report.not_ip} not IP; {report.total('cut')} cut by the snap length, their captured "
             "headers checked)"]
    lines += [f"link type {k} not supported: {v} packets not checked" for k, v in sorted(report.unsupported.items())]
    lines += ["", f"{'layer':<10} " + " ".join(f"{s:>9}" for s in STATUSES)]
    lines += [f"{key:<10} " + " ".join(f"{c.get(s, 0):>9}" for s in STATUSES) for key, c in report.counts.items()]
    lines += _rows("bad checksums", report.bad, report.total("bad"), show)
    lines += _rows("transmit offload (the field holds the pseudo-header sum; the NIC fills it in)", report.offload,
                   report.total("offload"), show)
    if report.total("malformed"):
        lines += ["", f"malformed packets: {report.total('malformed')}"]
        lines += [f"{i:>8}  {why}" for i, why in report.malformed[:show]]
    if report.total("cut"):
        first = f" (first: {', '.join(map(str, report.cut[:show]))})" if show else ""
        lines += ["", f"cut by the snap length: {report.total('cut')}{first}"]
    return "\n".join(lines)
