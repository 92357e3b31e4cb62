"""Why a checksum is wrong: single-mistake hypotheses, each simulated, named only when it gives the stored bytes.

:func:`explain` takes a packet (and, where known, the packet before a program or a rewrite changed it, and a
:class:`Context` of the capture around it); for every wrong checksum field it computes what each known mistake
(:data:`csum.explain.causes.CAUSES`) would have stored there, and names the one whose value is exactly the stored
one. Each value tried is fixed by the packet (the checksum over a length the packet holds, the TTL one higher, the
before-packet's field) or pinned by its flow (every wrong field of the flow off by the same amount); a mistake with
a free value is never tried alone, since with 16-bit checksums some value would always fit. Where no mistake gives
the stored value, or mistakes with different ids do, the answer is ``unexplained``; where the flow's wrong fields
are each off by a different amount, ``corruption``; where the packet does not parse, ``cannot-judge``. An
explanation never changes a verdict: it is computed from the verdict, for wrong (bad or transmit offload) fields.

``csum verify --explain``, the HTML report and the row outputs call this module (docs/explain.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..core.inputs import as_view
from ..errors import CsumValueError
from ..layers import Reason, Result, Stack, Status, walk
from ..layers import table as T
from ..layers.check import judge
from ..layers.walk import Field, IPLayer, Link
from . import header, sums
from .causes import CANNOT_JUDGE, CAUSES, CORRUPTION, NOT_CAUSES, UNEXPLAINED, Cause, what
from .flow import Context, carrier, flow_key, residual, segment_key
from .sums import Guess

__all__ = ["CANNOT_JUDGE", "CAUSES", "CORRUPTION", "NOT_CAUSES", "UNEXPLAINED", "Cause", "Context", "Explanation",
           "explain", "explain_result", "what"]

#: The statuses explained: what csum fix corrects.
WRONG = (Status.BAD, Status.OFFLOAD)


@dataclass(frozen=True)
class Explanation:
    """Why one field is wrong: ``cause`` (a cause id of :data:`CAUSES`, or unexplained / corruption /
    cannot-judge) and ``detail``, one line naming the values (the field, the old address, the length ...)."""

    cause: str
    detail: str

    @property
    def named(self) -> bool:
        """Whether a cause was found (not unexplained, corruption or cannot-judge)."""
        return self.cause not in (UNEXPLAINED, CORRUPTION, CANNOT_JUDGE)


def _walk(packet: object, link: Link) -> tuple[bytes, Stack]:
    buf = bytes(as_view(packet, "packet"))
    return buf, walk(memoryview(buf), link)


def explain(packet: object, *, link: Link = "ethernet", before: object = None,
            context: Context | None = None) -> list[tuple[Result, Explanation]]:
    """Every wrong checksum field of ``packet`` (a bytes-like frame of link type ``link``) with its explanation.

    ``before``: the same packet before a program or rewrite changed it (same link type); ``context``: the capture
    around it (:class:`Context`, the packet itself added too). Right fields are left out; a packet that does not
    parse gives one (None-field) result explained ``cannot-judge``.
    """
    buf, stack = _walk(packet, link)
    if stack.malformed is not None and not stack.fields:
        code, message = stack.malformed
        r = Result("packet", 0, None, None, None, Reason.BAD_LENGTH)
        return [(r, Explanation(CANNOT_JUDGE, f"the packet does not parse: {message} ({code})"))]
    view = memoryview(buf)
    out = []
    for f in stack.fields:
        r = judge(view, f)
        if r.status in WRONG:
            out.append((r, _explain(buf, stack, f, r, link, before, context)))
    return out


def explain_result(packet: object, result: Result, *, link: Link = "ethernet", before: object = None,
                   context: Context | None = None) -> Explanation:
    """The explanation of one wrong field ``result`` of ``packet`` (a :class:`Result` csum gave for it, as
    ``csum verify`` reports it: a reassembled datagram's field on its first fragment included)."""
    if not isinstance(result, Result):
        raise CsumValueError("result must be a csum.layers.Result")
    buf, stack = _walk(packet, link)
    f = next((f for f in stack.fields if f.at is not None and f.at == result.field), None)
    if f is None:
        why = stack.malformed[1] if stack.malformed else f"no checksum field at offset {result.field}"
        return Explanation(CANNOT_JUDGE, f"the packet does not parse that far: {why}")
    return _explain(buf, stack, f, result, link, before, context)


def _explain(buf: bytes, stack: Stack, f: Field, r: Result, link: Link, before: object,
             context: Context | None) -> Explanation:
    stored, computed = r.stored, r.computed
    if stored is None or computed is None:
        return Explanation(CANNOT_JUDGE, f"the {r.layer} checksum is not verifiable here ({r.reason})")
    ip = carrier(stack, f)
    m = sums.message(buf, f, ip) if f.na is None else None
    if r.status is Status.OFFLOAD and m is not None:
        detail = sums.offload(f, m, stored)
        if detail is not None:
            return Explanation("offload", detail)
    guesses = list(_guesses(buf, stack, f, r, ip, m, link, before, context))
    hits = [g for g in guesses if g.value == stored and g.value != computed]
    causes = list(dict.fromkeys(g.cause for g in hits))
    if len(causes) == 1:
        return Explanation(causes[0], hits[0].detail)
    if len(causes) > 1:
        return Explanation(UNEXPLAINED, "several simulated mistakes give these bytes: " + ", ".join(causes))
    if before is not None and link == "ethernet":
        found = _program(before, buf, f)
        if found is not None:
            return found
    if context is not None and ip is not None:
        found = _by_flow(buf, stack, f, r, ip, context)
        if found is not None:
            return found
    return Explanation(UNEXPLAINED, f"no simulated mistake gives {stored:#06x} (the checksum is {computed:#06x})")


def _guesses(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer | None, m: sums.Message | None, link: Link,
             before: object, context: Context | None) -> Iterator[Guess]:
    if r.reason is Reason.UDP6_ZERO and r.computed == 0xFFFF:
        yield Guess("udp0-not-mangled", 0, "the UDP checksum computes to 0 and was stored as 0 (no checksum), not "
                    "0xffff")
    if f.na is Reason.NEEDS_REASSEMBLY and ip is not None:
        yield from _fragment(buf, f, ip, context)
    if m is None:
        return
    yield from sums.arithmetic(f, m)
    yield from sums.odd_byte(f, m)
    if ip is not None and ip.depth == 0 and f.covers[-1][1] == ip.end:
        yield from sums.padding(f, m, buf[ip.end:])
    yield from sums.lengths(f, m, sums.named_lengths(f, ip, m))
    old = _before(before, link)
    if f.entry.name == "ipv4" and ip is not None and ip.ip_csum == f.at:
        old_ip = None if old is None else next((i for i in old[1].ips if i.depth == ip.depth and i.version == 4), None)
        yield from header.guesses(buf, ip, old_ip, b"" if old is None else old[0])
    if m.pseudo:
        yield from _stale_pseudo(buf, f, m, old, context)


def _before(before: object, link: Link) -> tuple[bytes, Stack] | None:
    if before is None:
        return None
    try:
        return _walk(before, link)
    except CsumValueError:
        return None


def _stale_pseudo(buf: bytes, f: Field, m: sums.Message, old: tuple[bytes, Stack] | None,
                  context: Context | None) -> Iterator[Guess]:
    """l4-not-patched: the segment's checksum over the pseudo-header of the packet before a NAT (the ``before``
    packet's, or a right packet of the capture with the same segment past the ports)."""
    pairs: list[tuple[bytes, bytes, str]] = []
    if old is not None:
        obuf, ostack = old
        of = next((g for g in ostack.fields if g.entry.name == f.entry.name and g.depth == f.depth
                   and g.pseudo is not None), None)
        if of is not None and of.pseudo is not None:
            s, d, size = of.pseudo[0], of.pseudo[1], of.pseudo[2]
            pairs.append((obuf[s:s + size], obuf[d:d + size], "the packet before the change"))
    key = segment_key(buf, f) if context is not None else None
    if context is not None and key is not None:
        for seg in context.segments.get(key, ()):
            where = "the capture's packet before the NAT" + (f", frame {seg.frame}" if seg.frame >= 0 else "")
            pairs.append((seg.src, seg.dst, where))
    for src, dst, where in pairs:
        if len(src) != len(m.src) or (src, dst) == (m.src, m.dst):
            continue
        value = sums.stored_as(f, sums.checksum(sums.Message(src, dst, m.proto, m.length, m.data, True).words()))
        changed = [f"{name} {header.show(name, a)} (now {header.show(name, b)})"
                   for name, a, b in (("source address", src, m.src), ("destination address", dst, m.dst)) if a != b]
        yield Guess("l4-not-patched", value, f"a stale pseudo-header for {' and '.join(changed)}: {where}; the "
                    f"{f.entry.name.upper()} checksum was not updated for the address change")


def _fragment(buf: bytes, f: Field, ip: IPLayer, context: Context | None) -> Iterator[Guess]:
    """fragment-only: the checksum over the first fragment's bytes, with its length or the whole datagram's."""
    if f.at is None or ip.fragment != "first":
        return
    data = bytearray(buf[ip.l4_start:ip.end])
    at = f.at - ip.l4_start
    if not 0 <= at <= len(data) - 2:
        return
    data[at:at + 2] = b"\0\0"
    size = 4 if ip.version == 4 else 16
    src, dst = buf[ip.pseudo_saddr:ip.pseudo_saddr + size], buf[ip.daddr:ip.daddr + size]
    if ip.pseudo_daddr is not None:
        dst = buf[ip.pseudo_daddr:ip.pseudo_daddr + size]
    m = sums.Message(src, dst, ip.proto, len(data), bytes(data), True)
    yield Guess("fragment-only", sums.stored_as(f, sums.checksum(m.words())),
                f"the checksum over the first fragment's {len(data)} bytes (length {len(data)}), not the datagram")
    whole = None if context is None else context.datagram_length(ip.version, buf[ip.saddr:ip.saddr + size],
                                                                  buf[ip.daddr:ip.daddr + size], ip.frag_id)
    if whole is not None:
        length = whole - (ip.l4_start - ip.frag_data)
        if length != len(data):
            yield Guess("fragment-only", sums.stored_as(f, sums.checksum(m.words(length))),
                        f"the checksum over the first fragment's {len(data)} bytes, with the datagram's length "
                        f"{length}")


def _program(before: object, buf: bytes, f: Field) -> Explanation | None:
    """The program mistakes of :mod:`csum.rewrite.mistakes` (bytes only: an XDP-style hand-written update or
    the helpers), when one alone accounts for this field."""
    from ..rewrite.mistakes import reproduce

    try:
        finding = reproduce(bytes(as_view(before, "before")), buf, kind="xdp")
    except CsumValueError:
        return None
    named = finding.fields.get(f.at or -1, ())
    if len(named) == 1:
        m = named[0]
        return Explanation(m.value, f"simulated on the packet before the change: {m.what}")
    if len(named) > 1:
        return Explanation(UNEXPLAINED, "several simulated mistakes give these bytes: "
                           + ", ".join(m.value for m in named))
    return None


def _signed(n: int) -> int:
    return n if n <= 0x7FFF else n - 0xFFFF


def _by_flow(buf: bytes, stack: Stack, f: Field, r: Result, ip: IPLayer, context: Context) -> Explanation | None:
    """A residual the flow's other wrong fields share (a rewrite), or that none does (corruption)."""
    assert r.stored is not None and r.computed is not None
    key = flow_key(buf, ip, f)
    counts = context.residuals.get(key)
    if not counts:
        return None
    total = sum(counts.values())
    res = residual(r.stored, r.computed)
    same = counts.get(res, 0)
    layer = f.entry.name.upper() if f.entry.name in ("tcp", "udp") else f.entry.name
    if same >= 2:
        shared = f"every one of {same} wrong {layer} checksums of this flow" + (f" (of {total})" if total > same else "") \
            + f" is off by the same amount ({res:#06x})"
        if f.pseudo is not None and _header_ok(buf, stack, ip):
            return Explanation("l4-not-patched", f"{shared}: a stale pseudo-header (an address rewritten, the {layer} "
                               "checksum not updated); a rewrite, not corruption")
        if f.entry.name == "ipv4" and ip.ip_csum == f.at:
            ttl, tos = buf[ip.l3 + T.IPV4_TTL], buf[ip.l3 + T.IPV4_TOS]
            if res & 0xFF == 0 and 1 <= res >> 8 <= 0xFF - ttl:
                return Explanation("ttl-not-updated", f"{shared}: the TTL decremented by {res >> 8} without an "
                                   "update")
            old = tos + _signed(res)
            if 0 <= old <= 0xFF and old != tos:
                return Explanation("tos-not-updated", f"{shared}: the TOS was {header.show('tos', bytes([old]))}, "
                                   f"now {header.show('tos', bytes([tos]))}, without an update")
            return Explanation("ip-field-not-updated", f"{shared}: a header field rewritten without an update")
        return Explanation(UNEXPLAINED, f"{shared}: a consistent rewrite, not corruption")
    if same == 1 and total >= 2:
        return Explanation(CORRUPTION, f"{total} wrong {layer} checksums in this flow, off by {len(counts)} different "
                           "amounts: scattered, not a rewrite")
    return None


def _header_ok(buf: bytes, stack: Stack, ip: IPLayer) -> bool:
    """Whether ``ip``'s header checksum (IPv4) is right; IPv6 has none."""
    if ip.ip_csum is None:
        return True
    f = next((g for g in stack.fields if g.at == ip.ip_csum), None)
    return f is not None and judge(memoryview(buf), f).status is Status.OK
