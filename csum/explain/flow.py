"""What the rest of a capture says about a wrong field: its flow's other wrong fields, the packet from before a NAT.

A mistake with a free value (a NAT's old address, a TTL lowered by several hops, a remarked DSCP) cannot be named
from one packet: some value always fits 16 bits. Across a flow it is pinned: every packet of a flow rewritten the
same way without the update is off by the same amount, its **residual** (the stored checksum's sum minus the right
one's, in one's complement: the sum of the old field values minus the new). Corruption is off by a different amount
each time. :class:`Context` collects the residuals of the wrong fields per flow and layer, the fragments' datagram
lengths, and the TCP/UDP segments of the packets whose checksum is right (the packet before a NAT, when the capture
holds both sides: ``-i any``, a mirror of both links), keyed by the segment's bytes past the ports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.arith import M16, canonical
from .. import engine
from ..errors import CsumValueError
from ..layers import Result, Status, table as T, walk
from ..layers.check import judge
from ..layers.walk import Field, IPLayer, Link, Stack
from .hypotheses import fitting, segment_key
from .sums import Guess
from ..layers.table import ADDR_SIZES

__all__ = ["Context", "FlowKey", "Segment", "carrier", "flow_key", "residual"]

#: (IP version, source, destination, protocol, source port, destination port, layer, depth); ports -1 when none.
FlowKey = tuple[int, bytes, bytes, int, int, int, str, int]


def _judged(buf: bytes, link: Link, stack: Stack) -> list[Result] | None:
    """Every field's Result from the C walker (csum/engine/_cwalk.c, the Python walker's twin: tests/capture), where
    it walks this packet to the same fields as ``stack``; else None (each field is then judged here)."""
    cwalk = engine.cwalk
    number = T.LINK_NAMES.get(link) if isinstance(link, str) else link
    if cwalk is None or number is None:
        return None
    results = cwalk.verify(buf, number)
    fields = stack.fields
    if results is None or len(results) != len(fields):
        return None
    for r, f in zip(results, fields):
        if r.field != f.at or r.layer != f.entry.name:
            return None
    return results


def residual(stored: int, computed: int) -> int:
    """The one's-complement difference between the sum a stored checksum stands for and the right one."""
    return canonical((stored ^ M16) + computed, 16)


def carrier(stack: Stack, f: Field) -> IPLayer | None:
    """The IP header that carries field ``f``: the last one of its depth starting at or before its header."""
    best = None
    for ip in stack.ips:
        if ip.depth == f.depth and ip.l3 <= f.header:
            best = ip
    return best


def flow_key(buf: bytes, ip: IPLayer, f: Field) -> FlowKey:
    """The flow of field ``f`` carried by ``ip``."""
    size = ADDR_SIZES[ip.version]
    ported = ip.proto in T.PORTED and ip.fragment in ("none", "first", "atomic") and ip.l4_start + 4 <= len(buf)
    at = ip.l4_start
    return (ip.version, bytes(buf[ip.saddr:ip.saddr + size]), bytes(buf[ip.daddr:ip.daddr + size]), ip.proto,
            int.from_bytes(buf[at:at + 2], "big") if ported else -1,
            int.from_bytes(buf[at + 2:at + 4], "big") if ported else -1, f.entry.name, f.depth)


@dataclass(frozen=True)
class Segment:
    """A right TCP/UDP checksum's packet: its frame number (or -1), pseudo-header addresses, protocol."""

    frame: int
    src: bytes
    dst: bytes


@dataclass
class Context:
    """The capture around the packets explained (see the module docstring). :meth:`add` every packet that may
    matter (all of a capture, or the wrong ones and their neighbours), then explain."""

    residuals: dict[FlowKey, Counter[int]] = field(default_factory=dict)
    #: Per flow: how many of its wrong fields each cause id fits (from the field alone).
    fits: dict[FlowKey, Counter[str]] = field(default_factory=dict)
    segments: dict[bytes, list[Segment]] = field(default_factory=dict)
    #: (version, source, destination, id) -> the datagram's fragmentable length, from its last fragment.
    datagrams: dict[tuple[int, bytes, bytes, int], int] = field(default_factory=dict)
    #: The packets added with a wrong field: their stack, and per field offset the hypotheses that fit it alone
    #: (computed once, for the flow's counts and the packet's own explanation).
    walked: dict[bytes, tuple[Stack, dict[int, list[Guess]]]] = field(default_factory=dict)
    #: The flow of each wrong field added, by (packet, field offset): found once.
    keys: dict[tuple[bytes, int], FlowKey] = field(default_factory=dict)
    #: Per flow, the causes its wrong fields pin (csum.explain's _pinned), found once while nothing is added.
    pins: dict[FlowKey, dict[str, int]] = field(default_factory=dict, compare=False, repr=False)

    def add(self, packet: bytes | bytearray | memoryview, link: Link = "ethernet", frame: int = -1) -> None:
        """Record one packet (``frame``: its number in the capture, for the details)."""
        buf = bytes(packet)
        self.pins.clear()
        try:
            stack = walk(memoryview(buf), link)
        except CsumValueError:
            return
        for layer in stack.ips:
            if layer.fragment == "later" and not layer.frag_more:
                size = ADDR_SIZES[layer.version]
                self.datagrams[(layer.version, buf[layer.saddr:layer.saddr + size], buf[layer.daddr:layer.daddr + size],
                                layer.frag_id)] = layer.frag_offset + layer.end - layer.frag_data
        view = memoryview(buf)
        judged = _judged(buf, link, stack)
        right = None if judged is None else {r.field for r in judged if r.status is Status.OK}
        for k, f in enumerate(stack.fields):
            if f.na is not None or f.at is None:
                continue
            r = judge(view, f) if judged is None else judged[k]
            ip = carrier(stack, f)
            if ip is None:
                continue
            status = r.status
            if status is Status.BAD and r.stored is not None and r.computed is not None:
                self._wrong(buf, stack, f, r, ip, None if right is None or f.pseudo is None
                            else ip.ip_csum is None or ip.ip_csum in right)
            elif status is Status.OK and f.pseudo is not None:
                seg = segment_key(buf, f)
                if seg is not None:
                    src, dst, size = f.pseudo[0], f.pseudo[1], f.pseudo[2]
                    self.segments.setdefault(seg, []).append(Segment(frame, buf[src:src + size],
                                                                     buf[dst:dst + size]))

    def _wrong(self, buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer, ok: bool | None) -> None:
        """Record wrong field ``f`` (its Result ``r``, carried by ``ip``; ``ok``: whether the IP header checksum is
        right, when known): its flow, its residual there, the hypotheses that fit it alone."""
        assert r.stored is not None and r.computed is not None and f.at is not None
        hits = fitting(buf, stack, f, r, ip, ok)
        walked = self.walked.get(buf)
        if walked is None:
            walked = self.walked[buf] = (stack, {})
        walked[1][f.at] = hits
        self.record(buf, f.at, flow_key(buf, ip, f), residual(r.stored, r.computed), hits)

    def record(self, buf: bytes, at: int, key: FlowKey, res: int, hits: list[Guess]) -> None:
        """Record the wrong field at ``at`` of packet ``buf``: its flow ``key``, its residual ``res`` there, the
        hypotheses ``hits`` that fit it alone (their causes counted once each)."""
        self.pins.clear()
        self.keys[(buf, at)] = key
        counts = self.residuals.get(key)
        if counts is None:
            counts = self.residuals[key] = Counter()
        counts[res] = counts.get(res, 0) + 1
        if hits:
            fits = self.fits.get(key)
            if fits is None:
                fits = self.fits[key] = Counter()
            for cause in {g.cause for g in hits}:
                fits[cause] = fits.get(cause, 0) + 1

    def refused(self, buf: bytes) -> bool:
        """Whether packet ``buf`` (added) has an IPv4 header checksum whose header the walker refused (not one of
        its IP layers: a length that does not fit)."""
        walked = self.walked.get(buf)
        if walked is None:
            return True
        stack = walked[0]
        return any(f.entry is T.IPV4_HEADER and not any(ip.l3 == f.header for ip in stack.ips) for f in stack.fields)

    def flow(self, buf: bytes, ip: IPLayer, f: Field) -> FlowKey:
        """:func:`flow_key` of field ``f`` of packet ``buf``, found once for the wrong fields added."""
        key = self.keys.get((buf, -1 if f.at is None else f.at))
        return flow_key(buf, ip, f) if key is None else key

    def datagram_length(self, version: int, src: bytes, dst: bytes, ident: int) -> int | None:
        """The fragmentable length of a datagram whose last fragment was added, else None."""
        return self.datagrams.get((version, src, dst, ident))
