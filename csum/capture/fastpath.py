"""The fast paths in front of the walker in ``csum verify`` and ``csum fix``: the C walker, else numpy.

The C walker csum/engine/_cwalk.c where it is built (common link types, VLAN tags, IPv4 options, IPv6
extension headers, IP-in-IP, GRE, ERSPAN, VXLAN, IPv4 and IPv6 fragments reassembled where the Reassembler would complete
them the same way; see its header comment) counts the packets whose every checksum passes and hands
over the :class:`~csum.layers.Result` of every field of a packet with a failing one (fragments
aside); else numpy over csum.batch sums, which only says "every checksum passes", for the plainest
packets (Ethernet with at most one VLAN tag, SLL/SLL2, IPoIB, Cisco HDLC or raw IP; IPv4 without
options, IPv6 without extension headers; TCP, UDP off the tunnel ports, ICMP/ICMPv6 other than
errors). Both read offsets and minimum lengths from :mod:`csum.layers.table`; every other packet
goes through the walker in :mod:`csum.capture.checker` (tests/capture/test_pcap.py checks that the report is the
same with and without the fast path). Packet by packet (``--format jsonl``, and what the fast path
leaves), a whole packet the C walker walks gets its Results from csum/engine/_cwalk.c too, unless it is a
fragment.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import batch, engine
from ..layers import Reason, Result, Status, accel, corrections, reassembly, walk
from ..layers import table as T
from .pcap import Capture
from .report import Report, zero_counts

U64 = np.uint64


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
        return cls(b"".join([*(p.data for p in carried), cap.data]),
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


# --- the C fast walker (csum/engine/_cwalk.c), driven by the same table -------------------------------

#: csum/engine/_cwalk.c's protocol codes (code + 8 * depth in its output).
_C_CODES = {code: name for code, name in enumerate(accel.CODES) if name is not None}
_C_SLOTS = 6
_C_NA = 64  # a code counted "n/a" (the transport layer of a later fragment), else "ok"


def c_fast(cap: Batch, todo: np.ndarray, report: Report) -> tuple[np.ndarray, np.ndarray, bytes, int]:
    """(packets among ``todo`` whose every checksum the C walker found passing, the other packets it judged, the keys
    of the datagrams it reassembled, their peak: see csum/engine/_cwalk.c datagrams()), all counted in ``report``: the
    second are packets (not fragments) with a failing field, every field's :class:`Result` from C."""
    cwalk = engine.cwalk
    if cwalk is None:
        raise RuntimeError("c_fast: csum.engine._cwalk is not built")
    out = np.zeros((len(cap), _C_SLOTS), dtype=np.int8)
    reported, closed, peak = cwalk.fast_check(
        cap.data, cap.offsets, cap.caplens, cap.linktypes, accel.LINKS, accel.FACTS, out, todo.astype(np.int8),
        cap.indices, reassembly.MAX_DATAGRAMS, reassembly.WINDOW)
    done = todo & (out[:, 0] > 0)
    codes = out[done].ravel()
    for code, n in enumerate(np.bincount(codes[codes > 0], minlength=128).tolist()):
        if n:
            name, depth = _C_CODES[code % 8], (code & ~_C_NA) // 8
            key = name if not depth else f"{name}@{depth}"
            report.counts.setdefault(key, zero_counts())["n/a" if code & _C_NA else "ok"] += n
    for i, results in reported:
        report.tally(int(cap.indices[i]), results)
        report.patches += patches(results, int(cap.bases[i]), functools.partial(cap.packet, i))
    return done, todo & (out[:, 0] == -2), closed, peak


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
