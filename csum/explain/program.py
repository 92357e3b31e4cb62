"""Why a program's output checksum is wrong, where :mod:`csum.rewrite.mistakes` cannot re-make the program's change.

``csum prog`` (:func:`csum.kernel.prog.judge_run`) first re-makes a same-length change with csum.rewrite and each
helper or hand-written update mistake injected. What that leaves unnamed comes here: checksums a program computed
from scratch (a hand-written loop), headers it added, packets it resized or translated between IPv4 and IPv6.

:func:`align` infers the change across a resize: a header added in front of the packet (an outer IPv4/IPv6 header,
a UDP tunnel, a VLAN tag: the input's datagram found whole at the end of the output), a header removed (the output's
datagram found inside the input), or IPv4 <-> IPv6 translation (``bpf_skb_change_proto``, as NAT64 does: the same
TCP/UDP segment under the other IP version). Where a datagram is found, the input is re-laid in the output's layout
(the output's added headers, the input's datagram) and the explainer's hypotheses that take the packet before the
change (:func:`csum.explain.hypotheses.extra`: a stale pseudo-header, an IPv4 header field changed without an
update) are tried on it, as is :func:`csum.rewrite.mistakes.reproduce`. Where none is found but the outer IPv4
header stays where it was (an option inserted, payload added), :func:`resized_header` tries its checksum as the
input's header had it.

Every field is also tried with the hypotheses from the field alone (:func:`csum.explain.hypotheses.alone`), with
:func:`scratch`'s sums as a loop computes them (the pseudo-header left out, words loaded in the host's little-endian
order and folded once or summed without the carry), and for a translated segment with :func:`translated`'s (the
checksum left with the other version's pseudo-header, or updated with a ``bpf_csum_diff`` of the wrong size). Each
hypothesis is an exact simulation; a cause is named only when the hypotheses that give the stored bytes all have the
same id. No hypothesis is held back as weak, as :func:`csum.explain.explain` holds back one that a flipped bit
would also make: a test run flips no bit, the input's field was right (csum prog judges only fields the program
broke), and the program computes the same bytes every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

from ..core.arith import M16, M32, canonical, swab16
from ..errors import CsumValueError
from ..layers import Stack, Status, walk
from ..layers.check import judge
from ..layers.walk import Field, IPLayer
from . import changes, header, hypotheses, sums
from .flow import carrier
from .sums import Guess, Message
from ..layers import table as T
from ..layers.table import ADDR_SIZES

__all__ = ["Alignment", "align", "explain_program", "length_late", "resized_header", "scratch", "translated"]

#: The statuses explained (as :data:`csum.explain.WRONG`).
_WRONG = (Status.BAD, Status.OFFLOAD)


@dataclass(frozen=True)
class Alignment:
    """The change across a program's run: ``kind`` "same" (same length and layers), "pushed" (headers added in front
    of the input's datagram), "popped" (headers removed: the output's datagram was inside the input), "translated"
    (IPv4 <-> IPv6, the same TCP/UDP segment) or "unknown"; ``like``: the input in the output's layout (same length
    and layers; None when there is none); ``before``: the input's datagram layer (translated: its IP header);
    ``text``: the change in words."""

    kind: str
    like: bytes | None
    before: IPLayer | None
    text: str


def _walk(frame: bytes) -> Stack | None:
    try:
        return walk(memoryview(frame), "ethernet")
    except CsumValueError:
        return None


def _shape(stack: Stack) -> list[tuple[int, int, int, int]]:
    return [(ip.l3, ip.version, ip.depth, ip.l4_start) for ip in stack.ips]


def _same_layout(a: bytes, b: bytes) -> bool:
    sa, sb = _walk(a), _walk(b)
    return sa is not None and sb is not None and len(a) == len(b) and _shape(sa) == _shape(sb) and \
        [f.at for f in sa.fields] == [f.at for f in sb.fields]


def align(before: bytes, after: bytes) -> Alignment:
    """The change a program made from Ethernet frame ``before`` to ``after`` (see :class:`Alignment`)."""
    sb, sa = _walk(before), _walk(after)
    if sb is None or sa is None or not sb.ips or not sa.ips:
        return Alignment("unknown", None, None, "the input or the output is not IPv4/IPv6 csum can walk")
    if _same_layout(before, after):
        return Alignment("same", before, sb.ips[0], "the same layout")
    ob, oa = sb.ips[0], sa.ips[0]
    size_b = ob.end - ob.l3
    for ip in sa.ips:  # headers added (a tunnel's, a VLAN tag): the input's datagram is one the output carries
        if ip.l3 > ob.l3 and ip.version == ob.version and ip.end - ip.l3 == size_b and ip.proto == ob.proto:
            like = after[:ip.l3] + before[ob.l3:ob.end] + after[ip.end:]
            if _same_layout(like, after):
                return Alignment("pushed", like, ob, f"{ip.l3 - ob.l3} bytes of headers added in front of the "
                                 f"IPv{ob.version} datagram")
    for ip in sb.ips:  # headers removed: the output's datagram was one the input carried
        if ip.l3 > oa.l3 and ip.version == oa.version and ip.end - ip.l3 == oa.end - oa.l3 and ip.proto == oa.proto:
            like = after[:oa.l3] + before[ip.l3:ip.end] + after[oa.end:]
            if _same_layout(like, after):
                return Alignment("popped", like, ip, f"{ip.l3 - oa.l3} bytes of headers removed in front of the "
                                 f"IPv{oa.version} datagram")
    if ob.version != oa.version and _same_proto(ob.proto, oa.proto) and ob.l4 is not None and oa.l4 is not None and \
            ob.end - ob.l4_start == oa.end - oa.l4_start:
        return Alignment("translated", None, ob, f"IPv{ob.version} translated to IPv{oa.version}")
    return Alignment("unknown", None, None, "no datagram of the input found in the output")


def _same_proto(a: int | None, b: int | None) -> bool:
    """Whether a translation keeps the transport: the same protocol, or ICMP <-> ICMPv6 (RFC 7915 4.2, 5.2)."""
    return a == b or {a, b} == {T.ICMP, T.ICMPV6}


def explain_program(before: bytes, after: bytes, fields: set[int] | None = None
                    ) -> dict[int, tuple[tuple[str, str], ...]]:
    """Per wrong checksum field of Ethernet frame ``after`` (a program's output from ``before``; ``fields``: only
    these offsets), every cause id whose simulation gives the stored bytes, each with the detail of one such
    simulation (): none does; more than one: this packet cannot tell them apart)."""
    stack = _walk(after)
    if stack is None:
        return {}
    aligned = align(before, after)
    sb = _walk(before)
    like = None if aligned.like is None else (aligned.like, _walk(aligned.like))
    found = _reproduced(after, aligned)
    change = "" if aligned.kind == "same" else f" ({aligned.text})"
    view = memoryview(after)
    out: dict[int, tuple[tuple[str, str], ...]] = {}
    for f in stack.fields:
        if f.at is None or (fields is not None and f.at not in fields):
            continue
        r = judge(view, f)
        if r.status not in _WRONG or r.stored is None or r.computed is None:
            continue
        ip = carrier(stack, f)
        hits = hypotheses.fitting(after, stack, f, r, ip)
        m = sums.message(after, f, ip) if f.na is None else None
        if m is not None:
            hits += [g for g in scratch(f, m) if g.value == r.stored]
        if like is not None and like[1] is not None:
            hits += hypotheses.fitting_extra(after, stack, f, r, ip, (like[0], like[1]), None)
        if sb is not None:
            hits += [g for g in _with_input(before, sb, after, aligned, f, ip, m) if g.value == r.stored]
        hits += [g for g in _short(after, f, ip, m) if g.value == r.stored]
        hits += list(changes.udp6_zero(f, ip, r.stored, r.computed))
        named: dict[str, str] = {}
        for g in hits:
            named.setdefault(g.cause, g.detail + change)
        for cause, detail in found.get(f.at, ()):
            named.setdefault(cause, detail + change)
        out[f.at] = tuple(named.items())
    return out


def _with_input(before: bytes, sb: Stack, after: bytes, aligned: Alignment, f: Field, ip: IPLayer | None,
                m: Message | None) -> Iterator[Guess]:
    """The simulations of field ``f`` of ``after`` that take the input ``before`` (walked: ``sb``): a same-layout
    change's update slips, an added header's length set late, a resized IPv4 header's checksum as the input had it,
    a translated segment's old pseudo-header; the caller keeps those that give the stored value."""
    if m is not None and aligned.kind == "same":
        yield from changes.changed(before, sb, f, m)
    if m is not None and _added(before, sb, after, f):
        yield from length_late(f, m)
    if aligned.like is None and ip is not None and f.at == ip.ip_csum and sb.ips:
        yield from resized_header(before, sb.ips[0], after, ip)
    if aligned.kind == "translated" and aligned.before is not None and m is not None and f.depth == 0:
        yield from translated(before, aligned.before, f, m)


def _added(before: bytes, sb: Stack, after: bytes, f: Field) -> bool:
    """Whether field ``f`` of ``after`` is in headers the program pushed in front of the input's datagram (found
    whole, byte for byte, after the field): a tunnel's, even on a port csum does not walk into."""
    if not sb.ips or f.at is None or len(after) <= len(before):
        return False
    ob = sb.ips[0]
    return after.find(before[ob.l3:ob.end], f.at) > f.at


def length_late(f: Field, m: Message) -> Iterator[Guess]:
    """header-field-late: the checksum of a header the program added (a UDP tunnel's) summed before its length field
    was set (0 then), the pseudo-header's length right: the same sum as a pseudo-header length of 0."""
    at = f.entry.length_at
    if f.entry.cover is not T.Cover.LENGTH_FIELD or not m.pseudo or not any(m.data[at:at + 2]):
        return
    data = m.data[:at] + b"\0\0" + m.data[at + 2:]
    value = sums.stored_as(f, sums.checksum(m.total(data16=sums.sum16(data))))
    yield Guess("header-field-late", value, lambda: f"the added {f.entry.name.upper()} header's checksum computed "
                f"before its length ({int.from_bytes(m.data[at:at + 2], 'big')}) was set: summed as 0 (the same sum "
                "as a pseudo-header length of 0)", sure=True)


def _short(after: bytes, f: Field, ip: IPLayer | None, m: Message | None) -> Iterator[Guess]:
    """:mod:`.changes`' sums over part of the field's coverage: an IPv4 header's first bytes, a segment's header."""
    if ip is not None and f.at == ip.ip_csum:
        yield from changes.short(after, ip)
    elif m is not None:
        yield from changes.short_l4(f, m)


def _reproduced(after: bytes, aligned: Alignment) -> dict[int, list[tuple[str, str]]]:
    """csum.rewrite.mistakes' reproduction of the change from the input re-laid in the output's layout, with its
    hand-written updates (kind "xdp": the test run's skb->csum is not re-made across a resize)."""
    if aligned.like is None or aligned.kind == "same":
        return {}
    from ..rewrite.mistakes import reproduce

    finding = reproduce(aligned.like, after, kind="xdp")
    return {at: [(m.value, f"simulated on the input in the output's layout: {m.what}") for m in ms]
            for at, ms in finding.fields.items()}


def _le16(data: bytes) -> int:
    """The plain sum of ``data`` as 16-bit words loaded little-endian (an odd last byte as a byte load)."""
    data += b"\0" * (len(data) & 1)
    return sums.sum16(bytes(data[i ^ 1] for i in range(len(data))))


def _le32(data: bytes) -> int:
    """The plain sum of ``data`` as 32-bit words loaded little-endian (zero-padded to a multiple of 4)."""
    data += b"\0" * (-len(data) % 4)
    return sum(int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4))


def scratch(f: Field, m: Message) -> Iterator[Guess]:
    """A checksum computed from scratch by a loop, with one mistake: the pseudo-header left out, its protocol added
    in the other byte order, or the words loaded in little-endian order (a BPF program on x86_64 or arm64) and
    folded once or summed without the carry (the big-endian forms are :func:`csum.explain.sums.arithmetic`'s)."""
    if m.pseudo:
        value = sums.stored_as(f, sums.checksum(m.data16))
        yield Guess("no-pseudo-header", value, lambda: f"the checksum over the {len(m.data)} covered bytes alone, "
                    "without the pseudo-header (addresses, protocol, length)")
        if m.proto:  # sum += ip->protocol: the byte counted as the low byte of its word, not the high one
            value = sums.stored_as(f, sums.checksum(m.total() - m.proto + (m.proto << 8)))
            yield Guess("byte-order", value, lambda: f"the pseudo-header's protocol ({m.proto}) added in host byte "
                        "order (without bpf_htons): counted as the high byte of its word")
    whole = sums.pseudo_bytes(m) + m.data
    t16, t32 = _le16(whole), _le32(whole)
    forms = [(t16, "16-bit words"), (t32, "32-bit words"), (canonical(t32, 32), "32-bit words, carries folded in,")]
    if m.pseudo:  # csum_tcpudp_nofold's way: the addresses as 32-bit words, the rest as 16-bit words
        addresses = len(m.src) + len(m.dst)
        forms.append((_le32(whole[:addresses]) + _le16(whole[addresses:]), "addresses as 32-bit words, the rest "
                      "as 16-bit words,"))
    for total, words in forms:
        once = (total & M16) + (total >> 16)
        if once > M16:
            value = sums.stored_as(f, swab16(~once & M16))
            yield Guess("single-fold", value, partial(
                "the {} loaded little-endian, summed to {:#x}, folded once (to {:#x}) and cut to 16 "
                "bits".format, words, total, once))
    if t16 > M16:
        yield Guess("carry-lost", sums.stored_as(f, swab16(~t16 & M16)),
                    lambda: f"the 16-bit words loaded little-endian added without the end-around carry: "
                    f"{t16 >> 16} carries lost")
    if t32 >> 32:
        kept = t32 & M32
        yield Guess("carry-lost", sums.stored_as(f, swab16(canonical(kept, 16) ^ M16)),
                    lambda: f"the 32-bit words loaded little-endian summed in a 32-bit accumulator: {t32 >> 32} "
                    "carries out of bit 31 lost")


def translated(before: bytes, old: IPLayer, f: Field, m: Message) -> Iterator[Guess]:
    """The TCP/UDP checksum of a segment translated from IP header ``old`` of ``before`` to the output's IP version:
    left with the old pseudo-header's addresses (not updated for the change), or updated with a ``bpf_csum_diff``
    of the old and new addresses given the wrong size (each address's 4 bytes, the IPv4 pair's 8, one IPv6
    address's 16: the rest of the addresses left out of the update)."""
    size = ADDR_SIZES[old.version]
    if not m.pseudo:  # ICMPv6 -> ICMP: ICMP has no pseudo-header
        yield from _pseudo_kept(before, old, f, m)
        return
    src = before[old.pseudo_saddr:old.pseudo_saddr + size]
    dst = before[old.pseudo_daddr:old.pseudo_daddr + size] if old.pseudo_daddr is not None else \
        before[old.daddr:old.daddr + size]
    was = f"{header.show('source address', src)} -> {header.show('destination address', dst)}"
    kept = sums.stored_as(f, sums.checksum(m.moved(src, dst).total()))
    yield Guess("l4-not-patched", kept, lambda: f"the {f.entry.name.upper()} checksum with the IPv{old.version} "
                f"pseudo-header ({was}) of the packet before the translation: not updated for the address change",
                sure=True)
    new_all, old_all = m.src + m.dst, src + dst
    for label, old_counted, new_counted in _diff_sizes(old_all, new_all, size):
        total = m.total() - sums.sum16(new_all) + sums.sum16(new_counted) + sums.sum16(old_all) \
            - sums.sum16(old_counted)
        yield Guess("diff-size-wrong", sums.stored_as(f, sums.checksum(total)),
                    partial("the {} checksum updated with bpf_csum_diff {}: part of the addresses left out".format,
                            f.entry.name.upper(), label), sure=True)


def _pseudo_kept(before: bytes, old: IPLayer, f: Field, m: Message) -> Iterator[Guess]:
    """An ICMP checksum translated from ICMPv6 (header ``old`` of ``before``) with the ICMPv6 pseudo-header (the
    addresses, the length, next header 58) still in it: not taken out, as ICMP has none."""
    if old.version != 6 or old.proto != T.ICMPV6 or old.pseudo_daddr is None:
        return
    src, dst = (before[at:at + 16] for at in (old.pseudo_saddr, old.pseudo_daddr))
    kept = sums.Message.of(src, dst, T.ICMPV6, len(m.data), m.data)
    was = f"{header.show('source address', src)} -> {header.show('destination address', dst)}"
    yield Guess("l4-not-patched", sums.checksum(kept.total()), lambda: f"the ICMP checksum with the ICMPv6 "
                f"pseudo-header ({was}, length {len(m.data)}) of the packet before the translation still in it: not "
                "taken out (ICMP has none)", sure=True)


def resized_header(before: bytes, old: IPLayer, after: bytes, ip: IPLayer) -> Iterator[Guess]:
    """The outer IPv4 header of a resized packet (an option inserted, the total length changed) with its checksum as
    the input's header had it: each changed field reverted alone (:func:`csum.explain.header.before_guesses`, same
    header length), or, for another header length (the input's checksum right), the whole header's checksum kept or
    updated for all but one part of the change (:func:`csum.explain.changes.regrown`)."""
    if ip.version != 4 or old.version != 4 or ip.depth or old.l3 != ip.l3 or ip.ip_csum is None or \
            old.ip_csum is None:
        return
    if old.header_len == ip.header_len:
        yield from header.before_guesses(after, ip, old, before)
        return
    was = before[old.ip_csum:old.ip_csum + 2]
    old_header = before[old.l3:old.l3_header_end]
    if header.header_checksum(old_header, old.ip_csum - old.l3).to_bytes(2, "big") != was:
        return
    yield from changes.regrown(bytes(after[ip.l3:ip.l3_header_end]), bytes(old_header), ip.ip_csum - ip.l3)
    sizes = f"header length {old.header_len}, total length {old.end - old.l3}; now {ip.header_len} and " \
        f"{ip.end - ip.l3}"
    yield Guess("ip-field-not-updated", int.from_bytes(was, "big"),
                lambda: f"the header checksum of the input's header ({sizes}): not updated for the header's new "
                "length and options", sure=True)


def _diff_sizes(old: bytes, new: bytes, size: int) -> Iterator[tuple[str, bytes, bytes]]:
    """(what, the old bytes counted, the new bytes counted) for each wrong size a translation's address diff takes:
    the IPv4 sizes on the IPv6 side (4 per address, 8 for the pair) and one IPv6 address's 16 for the pair."""
    half_old, half_new = len(old) // 2, len(new) // 2
    if size == 4:  # IPv4 -> IPv6: the new (IPv6) addresses counted short
        yield "(old, 8, new, 8): the first 8 bytes of the IPv6 addresses counted", old, new[:8]
        yield "per address (old, 4, new, 4): the first 4 bytes of each IPv6 address counted", old, \
            new[:4] + new[half_new:half_new + 4]
        yield "(old, 8, new, 16): the IPv6 source address alone counted", old, new[:16]
    else:  # IPv6 -> IPv4: the old (IPv6) addresses taken out short
        yield "(old, 8, new, 8): the first 8 bytes of the IPv6 addresses taken out", old[:8], new
        yield "per address (old, 4, new, 4): the first 4 bytes of each IPv6 address taken out", \
            old[:4] + old[half_old:half_old + 4], new
        yield "(old, 16, new, 8): the IPv6 source address alone taken out", old[:16], new
