"""Every single-mistake hypothesis for one wrong field, each with the value it would store (a :class:`Guess`).

From the field alone (:mod:`.sums`: the arithmetic slips, odd byte, padding, pseudo-header lengths; :mod:`.header`:
IPv4 header fields changed without an update; UDP's 0), from a first fragment (the checksum over it alone), and
from what is known besides: the packet before the change, the right packets of the capture with the same segment
(the packet before a NAT). :mod:`csum.explain` compares the values with the stored one; :class:`.flow.Context`
records which hypotheses fit each wrong field of a flow.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from ..layers import Reason, Result, Stack, Status
from ..layers.check import judge
from ..layers.walk import Field, IPLayer
from . import header, quick, sums
from .sums import Guess
from ..layers.table import ADDR_SIZES

if TYPE_CHECKING:
    from .flow import Context

def alone(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer | None) -> Iterator[Guess]:
    """The hypotheses for field ``f`` (its Result ``r``) of the walked packet ``buf``, carried by ``ip``, that need
    nothing but the packet (the arithmetic slips and pseudo-header lengths tried: only those that store
    ``r.stored``)."""
    if r.reason is Reason.UDP6_ZERO and r.computed == 0xFFFF:
        yield Guess("udp0-not-mangled", 0,
                    lambda: "the UDP checksum computes to 0 and was stored as 0 (no checksum), not 0xffff")
    m = sums.message(buf, f, ip) if f.na is None else None
    if m is None:
        return
    yield from sums.arithmetic(f, m, r.stored)
    yield from sums.odd_byte(f, m)
    if m.pseudo and ip is not None and not header_ok(buf, stack, ip):
        return  # a wrong IPv4 header: its length may be what changed; no length of it is tried
    if ip is not None and ip.depth == 0 and f.covers[-1][1] == ip.end:
        yield from sums.padding(f, m, buf[ip.end:])
    yield from sums.lengths(f, m, sums.named_lengths(f, ip, m), r.stored)
    if f.entry.name == "ipv4" and ip is not None and ip.ip_csum == f.at:
        yield from header.guesses(buf, ip)


def extra(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer | None, before: tuple[bytes, Stack] | None,
          context: Context | None) -> Iterator[Guess]:
    """The hypotheses that need what is known besides: the first fragment's datagram, the packet before the change,
    the right packets of the capture."""
    if f.na is Reason.NEEDS_REASSEMBLY and ip is not None:
        yield from _fragment(buf, f, ip, context)
    if ip is None or f.na is not None:
        return
    if before is not None and f.entry.name == "ipv4" and ip.ip_csum == f.at:
        old_ip = next((i for i in before[1].ips if i.depth == ip.depth and i.version == 4), None)
        if old_ip is not None:
            yield from header.before_guesses(buf, ip, old_ip, before[0])
    if f.pseudo is not None and (before is not None or _paired(buf, f, context)) and header_ok(buf, stack, ip):
        m = sums.message(buf, f, ip)
        if m is not None:
            yield from _stale_pseudo(buf, f, m, before, context)


def header_ok(buf: bytes, stack: Stack, ip: IPLayer) -> bool:
    """Whether ``ip``'s header checksum is right (IPv6 has none): a NAT updates it, a flipped address bit breaks it."""
    if ip.ip_csum is None:
        return True
    g = next((g for g in stack.fields if g.at == ip.ip_csum), None)
    return g is not None and judge(memoryview(buf), g).status is Status.OK


def _paired(buf: bytes, f: Field, context: Context | None) -> bool:
    """Whether the context holds a right packet with this field's segment (a candidate packet before a NAT)."""
    key = None if context is None or not context.segments else segment_key(buf, f)
    return context is not None and key is not None and key in context.segments


def _stale_pseudo(buf: bytes, f: Field, m: sums.Message, before: tuple[bytes, Stack] | None,
                  context: Context | None) -> Iterator[Guess]:
    """l4-not-patched: the segment's checksum over the pseudo-header of the packet before a NAT (the ``before``
    packet's, or a right packet of the capture with the same segment past the ports)."""
    pairs: list[tuple[bytes, bytes, str]] = []
    if before is not None:
        obuf, ostack = before
        of = next((g for g in ostack.fields if g.entry.name == f.entry.name and g.depth == f.depth
                   and g.pseudo is not None), None)
        if of is not None and of.pseudo is not None:
            s, d, size = of.pseudo[0], of.pseudo[1], of.pseudo[2]
            pairs.append((obuf[s:s + size], obuf[d:d + size], "the packet before the change"))
    key = segment_key(buf, f) if context is not None else None
    if context is not None and key is not None:
        for seg in context.segments.get(key, ()):
            where = "the capture's packet before the NAT" + (f" (frame {seg.frame})" if seg.frame >= 0 else "")
            pairs.append((seg.src, seg.dst, where))
    for src, dst, where in pairs:
        if len(src) != len(m.src) or (src, dst) == (m.src, m.dst):
            continue
        if bin(int.from_bytes(src + dst, "big") ^ int.from_bytes(m.src + m.dst, "big")).count("1") <= 2:
            continue  # addresses one or two bits apart: what flipped bits make, not a NAT
        value = sums.stored_as(f, sums.checksum(m.moved(src, dst).total()))
        changed = [f"{name} {header.show(name, a)} (now {header.show(name, b)})"
                   for name, a, b in (("source address", src, m.src), ("destination address", dst, m.dst)) if a != b]
        text = partial("a stale pseudo-header for {}, as in {}: the {} checksum was not updated for the address "
                       "change".format, " and ".join(changed), where, f.entry.name.upper())
        yield Guess("l4-not-patched", value, text, sure=True)


def _fragment(buf: bytes, f: Field, ip: IPLayer, context: Context | None) -> Iterator[Guess]:
    """fragment-only: the checksum over the first fragment's bytes, with its length or the whole datagram's."""
    if f.at is None or ip.fragment != "first":
        return
    data = bytearray(buf[ip.l4_start:ip.end])
    at = f.at - ip.l4_start
    if not 0 <= at <= len(data) - 2:
        return
    data[at:at + 2] = b"\0\0"
    size = ADDR_SIZES[ip.version]
    src = buf[ip.pseudo_saddr:ip.pseudo_saddr + size]
    dst = buf[ip.pseudo_daddr:ip.pseudo_daddr + size] if ip.pseudo_daddr is not None else buf[ip.daddr:ip.daddr + size]
    m = sums.Message.of(src, dst, ip.proto, len(data), bytes(data))
    yield Guess("fragment-only", sums.stored_as(f, sums.checksum(m.total())),
                lambda: f"the checksum over the first fragment's {len(data)} bytes (length {len(data)}), not the "
                "datagram")
    whole = None if context is None else context.datagram_length(ip.version, buf[ip.saddr:ip.saddr + size],
                                                                  buf[ip.daddr:ip.daddr + size], ip.frag_id)
    if whole is not None:
        length = whole - (ip.l4_start - ip.frag_data)
        if length != len(data):
            yield Guess("fragment-only", sums.stored_as(f, sums.checksum(m.total(length))),
                        lambda: f"the checksum over the first fragment's {len(data)} bytes, with the datagram's length "
                        f"{length}")


def one_bit(res: int) -> bool:
    """Whether residual ``res`` (:func:`.flow.residual`) is one bit's: +-2**k, what one flipped bit makes. A
    hypothesis from the field alone whose value is that far from the right one (a single fold is always 1 off, a TTL
    decrement 0x100) cannot be told from a bit flipped on the way: it is named only when the flow pins it."""
    neg = 0xFFFF - res
    return (res & (res - 1)) == 0 or (neg > 0 and neg & (neg - 1) == 0)


def fitting(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer | None,
            ok: bool | None = None) -> list[Guess]:
    """The hypotheses from the packet alone whose value is exactly the stored one (and not the right one); from C
    where csum/explain/quick.py covers the field (``ok``: whether ``ip``'s header checksum is right, when known)."""
    if ok is None:
        ok = f.pseudo is None or ip is None or header_ok(buf, stack, ip)
    fast = quick.fitting(buf, f, r, ip, ok)
    if fast is not None:
        return fast
    return [g for g in alone(buf, stack, f, r, ip) if g.value == r.stored and g.value != r.computed]


def fitting_extra(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer | None,
                  before: tuple[bytes, Stack] | None, context: Context | None) -> list[Guess]:
    """The hypotheses from what is known besides whose value is exactly the stored one (and not the right one)."""
    return [g for g in extra(buf, stack, f, r, ip, before, context) if g.value == r.stored and g.value != r.computed]


def segment_key(buf: bytes, f: Field) -> bytes | None:
    """A TCP/UDP field's segment past its ports with the checksum left out (None: not one, or not whole here)."""
    if f.entry.name not in ("tcp", "udp") or f.at is None or not f.covers or f.na is not None:
        return None
    start, end = f.covers[0]
    if len(f.covers) != 1 or not start + 4 <= f.at < end:
        return None
    return segment_of(buf, start, f.at, end)


def segment_of(buf: bytes, start: int, at: int, end: int) -> bytes:
    """:func:`segment_key` of a TCP/UDP segment covering ``buf[start:end]``, its checksum at ``at``."""
    return bytes(buf[start + 4:at]) + bytes(buf[at + 2:end])
