"""Check (and correct) every checksum in a capture: the engine behind ``csum verify`` and ``csum fix``.

Each packet's checksums are those :func:`csum.inet.verify` reports. The common
case (Ethernet without VLAN tags, Linux cooked SLL/SLL2 or raw IP; IPv4 without
options or IPv6 without extension headers; TCP, UDP, ICMP or ICMPv6; not a
fragment; fully captured, lengths consistent) is done for all packets at once
with numpy over csum.batch sums, by the RFC 1071 receiver test: the
one's-complement sum over pseudo-header and segment, stored field included, is
all ones. Every other packet goes through :func:`csum.inet.verify` itself, so
both paths give the same :class:`~csum.inet.Result` (tests/test_pcap.py checks
that on generated packets).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import batch, inet
from .errors import CsumValueError
from .pcap import (LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2,
                   LINKTYPE_RAW, Capture)

LAYERS = ("ipv4", "tcp", "udp", "icmp", "icmpv6")
#: Where each layer's checksum field sits in its header.
FIELD = {"ipv4": 10, "tcp": 16, "udp": 6, "icmp": 2, "icmpv6": 2}
_L4 = {6: "tcp", 17: "udp", 1: "icmp", 58: "icmpv6"}
_L4_MIN = {6: 20, 17: 8, 1: 4, 58: 4}
_REASONS = (inet.OK, inet.MISMATCH, inet.NEGATIVE_ZERO, inet.UDP_NO_CHECKSUM, inet.UDP6_ZERO)
_VLAN_TPIDS = (0x8100, 0x88A8, 0x9100)
_IP_TYPES = (0x0800, 0x86DD)
_NOT_IP, _UNSUPPORTED, _WALK = -1, -2, -3  # l3 offset codes
U64 = np.uint64


@dataclass
class Report:
    """What checking a capture found.

    ``counts[layer]`` = {"ok", "bad", "n/a"}; ``bad``: (packet index, Result) of
    every wrong checksum, in packet order; ``malformed``: (index, reason) of
    packets whose headers are inconsistent; ``cut``: packets captured only in
    part (not checked); ``not_ip``: packets carrying neither IPv4 nor IPv6;
    ``unsupported``: link type -> packets; ``fast``: packets checked vectorized;
    ``patches``: (file offset, new field bytes) that correct every bad checksum.
    """

    packets: int
    counts: dict[str, dict[str, int]] = field(default_factory=lambda: {k: {"ok": 0, "bad": 0, "n/a": 0} for k in LAYERS})
    bad: list[tuple[int, inet.Result]] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)
    not_ip: int = 0
    unsupported: dict[int, int] = field(default_factory=dict)
    fast: int = 0
    patches: list[tuple[int, bytes]] = field(default_factory=list)


def _be16(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    top = len(d) - 2
    idx = np.clip(idx, 0, top)
    return (d[idx].astype(np.int64) << 8) | d[idx + 1]


def _byte(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return d[np.clip(idx, 0, len(d) - 1)].astype(np.int64)


def _l3_offsets(cap: Capture, d: np.ndarray) -> np.ndarray:
    """Per packet, the IP header's offset in the packet, or _NOT_IP / _UNSUPPORTED / _WALK (VLAN tags)."""
    off, cap_len, link = cap.offsets, cap.caplens, cap.linktypes
    l3 = np.full(len(off), _UNSUPPORTED, dtype=np.int64)
    l3[np.isin(link, (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6))] = 0
    for kind, at, size in ((LINKTYPE_ETHERNET, 12, 14), (LINKTYPE_LINUX_SLL, 14, 16), (LINKTYPE_LINUX_SLL2, 0, 20)):
        mine = link == kind
        proto = np.where(cap_len >= at + 2, _be16(d, off + at), -1)
        l3[mine] = np.where(np.isin(proto, _IP_TYPES), size, _NOT_IP)[mine]
        if kind == LINKTYPE_ETHERNET:
            l3[mine & np.isin(proto, _VLAN_TPIDS)] = _WALK
    return l3


def _walk_vlans(pkt: memoryview) -> int:
    at = 12
    while len(pkt) >= at + 2 and int.from_bytes(pkt[at : at + 2], "big") in _VLAN_TPIDS:
        at += 4
    if len(pkt) >= at + 2 and int.from_bytes(pkt[at : at + 2], "big") in _IP_TYPES:
        return at + 2
    return _NOT_IP


def _fold_ok(r: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Receiver test: canonical sum ``r`` without the field, plus the stored field, is all ones."""
    x = r + stored
    return ((x & 0xFFFF) + (x >> 16)) == 0xFFFF


def _canonical(total: np.ndarray) -> np.ndarray:
    r = total % U64(0xFFFF)
    return np.where((r == 0) & (total != 0), U64(0xFFFF), r)


def _words(d: np.ndarray, start: np.ndarray, count: int) -> np.ndarray:
    """Sum of ``count`` big-endian 16-bit words at each start offset (uint64)."""
    idx = start[:, None] + 2 * np.arange(count)
    return ((d[idx].astype(U64) << U64(8)) | d[idx + 1]).sum(axis=1, dtype=U64)


@dataclass
class _Fast:
    index: np.ndarray      # packet indices
    l3: np.ndarray         # IP header offset in the packet
    v4: np.ndarray         # bool
    proto: np.ndarray
    l4_len: np.ndarray
    ip_stored: np.ndarray
    ip_computed: np.ndarray
    ip_reason: np.ndarray  # index into _REASONS
    stored: np.ndarray
    computed: np.ndarray
    reason: np.ndarray

    def results(self, k: int) -> list[inet.Result]:
        """The Results of fast packet number ``k``, as inet.verify gives them."""
        l3 = int(self.l3[k])
        out = []
        if self.v4[k]:
            r = int(self.ip_reason[k])
            out.append(inet.Result("ipv4", l3, int(self.ip_stored[k]), int(self.ip_computed[k]),
                                   r in (0, 2), _REASONS[r]))
        r = int(self.reason[k])
        ok = r not in (1, 4)
        out.append(inet.Result(_L4[int(self.proto[k])], l3 + (20 if self.v4[k] else 40), int(self.stored[k]),
                               int(self.computed[k]), ok, _REASONS[r]))
        return out


def _fast(cap: Capture, d: np.ndarray, l3: np.ndarray, todo: np.ndarray) -> _Fast:
    """Vectorized check of the packets of the common case among ``todo``; the others are left for inet."""
    cand = np.flatnonzero(todo & (l3 >= 0))
    base = cap.offsets[cand] + l3[cand]
    room = cap.caplens[cand] - l3[cand]
    first = _byte(d, base)
    version = first >> 4
    v4 = (version == 4) & (first == 0x45) & (room >= 20)
    v6 = (version == 6) & (room >= 40)
    total4 = _be16(d, base + 2)
    frag = _be16(d, base + 6) & 0x3FFF
    proto = np.where(v4, _byte(d, base + 9), _byte(d, base + 6))
    l4_len = np.where(v4, total4 - 20, _be16(d, base + 4))
    end_ok = np.where(v4, total4, 40 + l4_len) <= room
    known = np.where(v4, np.isin(proto, (1, 6, 17)), np.isin(proto, (6, 17, 58)))
    minimum = np.select([proto == 6, proto == 17], [20, 8], 4)
    l4 = base + np.where(v4, 20, 40)
    udp_len_ok = (proto != 17) | (_be16(d, l4 + 4) == l4_len)
    keep = (v4 & (frag == 0) | v6) & known & end_ok & (l4_len >= minimum) & udp_len_ok
    cand, base, v4, proto, l4_len, l4 = cand[keep], base[keep], v4[keep], proto[keep], l4_len[keep], l4[keep]
    fld = l4 + np.select([proto == 6, proto == 17], [16, 6], 2)

    z = d.copy()
    for at in (fld, fld + 1, base[v4] + 10, base[v4] + 11):
        z[at] = 0
    ip_stored = np.zeros(len(cand), dtype=U64)
    ip_computed = np.zeros(len(cand), dtype=U64)
    ip_reason = np.zeros(len(cand), dtype=np.int8)
    b4 = base[v4]
    ip_stored[v4] = _be16(d, b4 + 10).astype(U64)
    ip_computed[v4] = batch.internet_checksums_ragged(z, b4, np.full(len(b4), 20)).astype(U64)
    ip_ok = _fold_ok(ip_computed ^ U64(0xFFFF), ip_stored)
    ip_reason[~ip_ok] = 1
    ip_reason[ip_ok & (ip_stored == 0xFFFF) & (ip_computed == 0)] = 2

    total = batch.ones_sums_ragged(z, l4, l4_len, 16, "big")
    pseudo = (proto != 1)
    lens = l4_len.astype(U64)
    extra = proto.astype(U64) + (lens >> U64(16)) + (lens & U64(0xFFFF))
    src4, src6 = base[v4 & pseudo] + 12, base[~v4] + 8
    total[v4 & pseudo] += _words(d, src4, 4) + extra[v4 & pseudo]
    total[~v4] += _words(d, src6, 16) + extra[~v4]
    r = _canonical(total)
    computed = r ^ U64(0xFFFF)
    udp = proto == 17
    computed[udp & (computed == 0)] = 0xFFFF
    stored = _be16(d, fld).astype(U64)
    ok = _fold_ok(r, stored)
    reason = np.where(ok, 0, 1).astype(np.int8)
    reason[~udp & ok & (stored == 0xFFFF) & (computed == 0)] = 2
    reason[udp & (stored == 0)] = np.where(v4[udp & (stored == 0)], 3, 4)
    return _Fast(cand, l3[cand], v4, proto, l4_len, ip_stored, ip_computed, ip_reason, stored, computed, reason)


def _slow(cap: Capture, index: int, l3: int) -> list[inet.Result]:
    pkt = cap.packet(index)
    found = inet.verify(pkt[l3:], link="ip")
    return [dataclasses.replace(r, offset=r.offset + l3) for r in found]


def _tally(report: Report, index: int, results: list[inet.Result], file_offset: int) -> None:
    for r in results:
        report.counts[r.layer]["n/a" if r.ok is None else "ok" if r.ok else "bad"] += 1
        if r.ok is False:
            report.bad.append((index, r))
            if r.computed is not None:
                report.patches.append((file_offset + r.offset + FIELD[r.layer], r.computed.to_bytes(2, "big")))


def check(cap: Capture, progress: Callable[[int, int], None] | None = None) -> Report:
    """Check every packet of ``cap``; see :class:`Report`."""
    d = np.frombuffer(cap.data, dtype=np.uint8)
    report = Report(len(cap))
    if not len(cap):
        return report
    cut = cap.caplens < cap.origlens
    report.cut = np.flatnonzero(cut).tolist()
    l3 = _l3_offsets(cap, d)
    report.not_ip = int(np.count_nonzero(~cut & (l3 == _NOT_IP)))
    for link in np.unique(cap.linktypes[~cut & (l3 == _UNSUPPORTED)]):
        report.unsupported[int(link)] = int(np.count_nonzero(~cut & (cap.linktypes == link)))
    fast = _fast(cap, d, l3, ~cut)
    report.fast = len(fast.index)
    _tally_fast(report, cap, fast)
    done = np.zeros(len(cap), dtype=bool)
    done[fast.index] = True
    rest = np.flatnonzero(~cut & ~done & ((l3 >= 0) | (l3 == _WALK)))
    for n, i in enumerate(rest.tolist()):
        at = int(l3[i]) if l3[i] >= 0 else _walk_vlans(cap.packet(i))
        if at == _NOT_IP:
            report.not_ip += 1
            continue
        try:
            _tally(report, i, _slow(cap, i, at), int(cap.offsets[i]))
        except CsumValueError as exc:
            report.malformed.append((i, str(exc)))
        if progress is not None and not n & 0xFFF:
            progress(n, len(rest))
    report.bad.sort(key=lambda item: item[0])
    return report


def _tally_fast(report: Report, cap: Capture, fast: _Fast) -> None:
    layers = np.array([LAYERS.index(_L4[p]) for p in (1, 6, 17, 58)])
    proto_layer = layers[np.searchsorted((1, 6, 17, 58), fast.proto)] if len(fast.proto) else fast.proto
    ip_bad = fast.v4 & (fast.ip_reason == 1)
    l4_bad = (fast.reason == 1) | (fast.reason == 4)
    report.counts["ipv4"]["ok"] += int(np.count_nonzero(fast.v4 & ~ip_bad))
    report.counts["ipv4"]["bad"] += int(np.count_nonzero(ip_bad))
    for k, layer in enumerate(LAYERS[1:], start=1):
        mine = proto_layer == k
        report.counts[layer]["ok"] += int(np.count_nonzero(mine & ~l4_bad))
        report.counts[layer]["bad"] += int(np.count_nonzero(mine & l4_bad))
    for k in np.flatnonzero(ip_bad | l4_bad).tolist():
        i = int(fast.index[k])
        for r in fast.results(k):
            if r.ok is False:
                report.bad.append((i, r))
                report.patches.append((int(cap.offsets[i]) + r.offset + FIELD[r.layer], r.computed.to_bytes(2, "big")))


# --- the two commands' output ----------------------------------------------------------------

def _bad_row(index: int, r: inet.Result) -> dict[str, object]:
    return {"packet": index, "layer": r.layer, "offset": r.offset, "stored": r.stored, "computed": r.computed,
            "reason": r.reason}


def as_json(report: Report, cap: Capture, name: str, show: int) -> dict[str, object]:
    """The report as a JSON-ready dict (lists cut to their first ``show`` items, counts complete)."""
    return {
        "file": name, "format": cap.format, "packets": report.packets, "vectorized": report.fast,
        "not_ip": report.not_ip, "unsupported_linktypes": {str(k): v for k, v in report.unsupported.items()},
        "counts": report.counts,
        "bad_count": len(report.bad), "bad": [_bad_row(i, r) for i, r in report.bad[:show]],
        "malformed_count": len(report.malformed),
        "malformed": [{"packet": i, "reason": why} for i, why in report.malformed[:show]],
        "cut_count": len(report.cut), "cut": report.cut[:show],
    }


def _hex16(value: int | None) -> str:
    return "-" if value is None else f"{value:#06x}"


def as_text(report: Report, cap: Capture, name: str, show: int) -> str:
    """The report as tables: counts per layer, then the first ``show`` bad, malformed and cut packets."""
    slow = report.packets - report.fast - len(report.cut) - report.not_ip - sum(report.unsupported.values())
    lines = [f"{name}: {cap.format}, {report.packets} packets ({report.fast} checked vectorized, {slow} one by one "
             f"with csum.inet; {report.not_ip} not IP; {len(report.cut)} cut by the snap length, not checked)"]
    lines += [f"link type {k} not supported: {v} packets not checked" for k, v in sorted(report.unsupported.items())]
    lines += ["", f"{'layer':<7} {'ok':>9} {'bad':>9} {'n/a':>9}"]
    lines += [f"{layer:<7} {c['ok']:>9} {c['bad']:>9} {c['n/a']:>9}" for layer, c in report.counts.items()]
    if report.bad:
        lines += ["", f"bad checksums: {len(report.bad)}" + (f" (first {show})" if len(report.bad) > show else "")]
        lines += [f"{'packet':>8}  {'layer':<7} {'offset':>6}  {'stored':<7} {'computed':<8}  reason"] * (show > 0)
        lines += [f"{i:>8}  {r.layer:<7} {r.offset:>6}  {_hex16(r.stored):<7} {_hex16(r.computed):<8}  {r.reason}"
                  for i, r in report.bad[:show]]
    if report.malformed:
        lines += ["", f"malformed packets: {len(report.malformed)}"]
        lines += [f"{i:>8}  {why}" for i, why in report.malformed[:show]]
    if report.cut:
        first = f" (first: {', '.join(map(str, report.cut[:show]))})" if show else ""
        lines += ["", f"cut by the snap length: {len(report.cut)}{first}"]
    return "\n".join(lines)


# --- capture branch shim (issue 11), to be reconciled with proto's Report: chunk positions and merging ----

_check_whole = check


def check(cap: Capture, progress: Callable[[int, int], None] | None = None) -> Report:  # noqa: F811
    """Check every packet of ``cap``; packet numbers count from ``cap.first_index``, patch offsets from
    ``cap.base`` (the file offset of ``cap.data[0]``)."""
    report = _check_whole(cap, progress)
    first, base = cap.first_index, cap.base
    if first:
        report.bad = [(i + first, r) for i, r in report.bad]
        report.malformed = [(i + first, why) for i, why in report.malformed]
        report.cut = [i + first for i in report.cut]
    if base:
        report.patches = [(at + base, new) for at, new in report.patches]
    return report


def _merge(self: Report, other: Report) -> Report:
    """The report of this chunk followed by ``other`` (the next one)."""
    counts = {layer: {k: n + other.counts[layer][k] for k, n in c.items()} for layer, c in self.counts.items()}
    unsupported = dict(self.unsupported)
    for link, n in other.unsupported.items():
        unsupported[link] = unsupported.get(link, 0) + n
    return Report(self.packets + other.packets, counts, self.bad + other.bad, self.malformed + other.malformed,
                  self.cut + other.cut, self.not_ip + other.not_ip, unsupported, self.fast + other.fast,
                  self.patches + other.patches)


Report.merge = _merge  # type: ignore[attr-defined]
