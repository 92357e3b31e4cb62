"""The verdict on one checksum field the walker found: the receiver's test and the zero rules.

A stored checksum passes when the one's-complement sum over the covered bytes (and
pseudo-header) is all ones, the receiver's test (RFC 1071 section 1; Linux: csum_fold of the sum
is 0, net/ipv4/tcp_ipv4.c ``tcp_v4_checksum_init``, net/ipv4/udp.c ``udp4_csum_init``,
net/ipv6/ip6_checksum.c ``udp6_csum_init``). Zero rules come from the field's table entry
(:class:`csum.layers.table.Zero`). A TCP/UDP/UDP-Lite field that fails but holds exactly the
pseudo-header sum (with the segment's length, or 0 as some drivers' TSO setup writes it) is what
transmit checksum offload leaves for the NIC (CHECKSUM_PARTIAL, include/linux/skbuff.h;
net/ipv4/tcp_ipv4.c ``__tcp_v4_send_check``): status ``offload``, not ``bad``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..core.arith import canonical
from ..core.inputs import as_view, check_bool, check_instance, check_list
from ..engine import ones_sum
from ..errors import Code, CsumValueError
from . import table as T
from .reasons import R, Reason, Status, status
from .walk import Field


@dataclass(frozen=True, slots=True)
class Result:
    """One checksum of a packet.

    ``layer``: the protocol ("ipv4", "tcp", "udp", "udplite", "icmp", "icmpv6", "igmp", "pim",
    "gre", "vrrp", "carp", "eigrp", "ospf", "dccp", "icmp-ext", "pgm", "cdp", "esp"); ``offset``: where that
    header starts in the packet; ``stored``: the field as sent, read big-endian (None when the
    field is not in this packet); ``computed``: what a sender stores there (wire value, UDP's 0
    already sent as 0xffff; None when not computable); ``ok``: True/False, or None when not
    applicable or unverifiable; ``reason``: a :class:`Reason`. Not compared: ``field`` (the
    checksum's offset in the packet), ``path`` ("eth/ipv4/udp/vxlan/eth/ipv4/tcp") and ``depth``
    (0 for the outer IP layer and what it carries, +1 per tunnel or ICMP quote).
    """

    layer: str
    offset: int
    stored: int | None
    computed: int | None
    ok: bool | None
    reason: Reason
    field: int | None = dataclasses.field(default=None, compare=False)
    path: str = dataclasses.field(default="", compare=False)
    depth: int = dataclasses.field(default=0, compare=False)

    @property
    def status(self) -> Status:
        """ok, bad, offload, none or n/a."""
        return status(self.ok, self.reason)


def _covered(buf: memoryview, f: Field, at: int) -> int:
    """Canonical 16-bit sum of the covered bytes, the checksum field (at ``at``, which is ``f.at``) left out."""
    total = 0
    for start, end in f.covers:
        if f.entry.odd_tail and (end - start) & 1:
            last = buf[end - 1]
            total += last if last < 0x80 else 0xFF00 | (last - 1)
            end -= 1
        if start <= at < end:
            total += ones_sum(buf[start:at], 16, "big") + ones_sum(buf[at + 2 : end], 16, "big")
        else:
            total += ones_sum(buf[start:end], 16, "big")
    return total


def _pseudo(buf: memoryview, pseudo: tuple[int, int, int, int, int], length: int) -> int:
    src, dst, size, _, proto = pseudo
    return (ones_sum(buf[src : src + size], 16, "big") + ones_sum(buf[dst : dst + size], 16, "big")
            + (length >> 16) + (length & 0xFFFF) + proto)


def _absent(zero: T.Zero, v6: bool) -> Reason | None:
    """Why a stored 0 means "no checksum" under the zero rule ``zero`` (UDP over IPv4, RFC 768; PGM, RFC 3208 8), or
    None where it is a value."""
    if zero is T.ZERO.OPTIONAL:
        return R.NO_CHECKSUM
    return R.UDP_NO_CHECKSUM if zero is T.ZERO.UDP and not v6 else None



def _extent(f: Field) -> int:
    """How many bytes of the packet field ``f`` reads: its field, and where it is verifiable (``na`` None: all
    of it was captured) its coverage and its pseudo-header addresses."""
    stored = [] if f.at is None else [f.at + 2]
    if f.na is not None or f.at is None:
        return max(stored, default=0)
    ends = stored + [end for _, end in f.covers]
    if f.pseudo is not None:
        ends += (f.pseudo[0] + f.pseudo[2], f.pseudo[1] + f.pseudo[2])
    if f.alt_end is not None:
        ends.append(f.alt_end)
    return max(ends, default=0)


def _checked(buf: object, fields: object, name: str) -> tuple[memoryview, list[Field]]:
    """``buf`` as a view and ``fields`` (argument ``name``) as a list of :class:`Field` that ``buf`` holds."""
    view = buf if type(buf) is memoryview and buf.format == "B" and buf.c_contiguous else as_view(buf, "buf")
    items = check_list(fields, name)
    for i, f in enumerate(items):
        check_instance(f, Field, f"{name}[{i}]")
        if _extent(f) > len(view):
            raise CsumValueError(f"buf has {len(view)} bytes, {name}[{i}] ({f.entry.name} at {f.header}) reads "
                                 f"{_extent(f)}: the fields are another packet's", code=Code.TRUNCATED)
    return view, items


def evaluate(buf: memoryview, f: Field, udp6_zero_ok: bool = False) -> Result:
    """The :class:`Result` for field ``f`` of the packet in ``buf``."""
    view, _ = _checked(buf, [check_instance(f, Field, "f")], "f")
    return judge(view, f, check_bool(udp6_zero_ok, "udp6_zero_ok"))


def judge(buf: memoryview, f: Field, udp6_zero_ok: bool = False) -> Result:
    """:func:`evaluate` of a field the walker found in ``buf`` (unchecked: csum's own loops over walked packets)."""
    entry = f.entry
    at = f.at
    stored = None if at is None else (buf[at] << 8) | buf[at + 1]
    absent = _absent(entry.zero, f.v6) if stored == 0 else None
    if f.na is R.PARTIAL_QUOTE and absent is not None:
        # an ICMP error quoting the start of a datagram sent without a checksum (RFC 768): there is none to judge
        return Result(entry.name, f.header, 0, None, True, absent, at, f.path, f.depth)
    if f.na is not None or at is None:
        return Result(entry.name, f.header, stored, None, None, f.na or R.NOT_CAPTURED, at, f.path, f.depth)
    assert stored is not None
    rest = _covered(buf, f, at)
    pseudo = 0 if f.pseudo is None else _pseudo(buf, f.pseudo, f.pseudo[3])
    r = canonical(rest + pseudo, 16)
    computed = r ^ 0xFFFF
    zero = entry.zero
    if zero is not T.ZERO.VALUE and computed == 0:
        computed = 0xFFFF  # RFC 768, RFC 3828 3.1: a computed 0 is transmitted as all ones
    passes = canonical(r + stored, 16) == 0xFFFF
    if absent is not None:
        return Result(entry.name, f.header, 0, computed, True, absent, at, f.path, f.depth)
    if zero is T.ZERO.UDP and stored == 0:
        if f.tunnel:
            return Result(entry.name, f.header, 0, computed, True, R.UDP6_ZERO_TUNNEL, at, f.path, f.depth)
        reason = R.UDP6_ZERO_ALLOWED if udp6_zero_ok else R.UDP6_ZERO
        return Result(entry.name, f.header, 0, computed, udp6_zero_ok, reason, at, f.path, f.depth)
    if passes:
        reason = R.NEGATIVE_ZERO if stored == 0xFFFF and computed == 0 else \
            R.SUPER_PACKET if f.big else R.OK
        return Result(entry.name, f.header, stored, computed, True, reason, at, f.path, f.depth)
    if f.alt_end is not None:  # PIM Register checksummed over the whole message
        whole = dataclasses.replace(f, covers=((f.header, f.alt_end),), alt_end=None)
        if f.pseudo is not None:
            whole.pseudo = f.pseudo[:3] + (f.alt_end - f.header, f.pseudo[4])
        alt = judge(buf, whole, udp6_zero_ok)
        if alt.ok:
            return dataclasses.replace(alt, computed=computed, reason=R.WHOLE_REGISTER)
    if entry.offload and f.pseudo is not None and stored in (canonical(pseudo, 16), canonical(_pseudo(buf, f.pseudo, 0), 16)):
        return Result(entry.name, f.header, stored, computed, False, R.OFFLOAD, at, f.path, f.depth)
    return Result(entry.name, f.header, stored, computed, False, R.MISMATCH, at, f.path, f.depth)


def verify_stack(buf: memoryview, fields: list[Field], udp6_zero_ok: bool = False) -> list[Result]:
    """:func:`evaluate` for every field, in order."""
    view, items = _checked(buf, fields, "fields")
    udp6_zero_ok = check_bool(udp6_zero_ok, "udp6_zero_ok")
    return [judge(view, f, udp6_zero_ok) for f in items]


def corrections(buf: memoryview, fields: list[Field], *, every: bool = False,
                embedded: bool = False) -> list[tuple[int, bytes]]:
    """(offset, bytes) that set every bad/offload field to its computed value, inner fields first (an outer
    checksum covering an inner one, GRE's or a tunnel's UDP, is judged after the inner one is set).

    ``every``: set every verifiable field, UDP's absent (0) checksum included (building packets). ``embedded``: the
    fields of embedded packets too (copies another protocol carries: sFlow samples, OpenFlow packet-ins; left as
    they are by default, and the checksums covering them judged over them as they are).
    """
    buf, fields = _checked(buf, fields, "fields")
    every, embedded = check_bool(every, "every"), check_bool(embedded, "embedded")
    work = bytearray(buf)
    view = memoryview(work)
    touched = []
    for f in sorted(fields, key=lambda f: (-f.depth, -f.header)):
        if f.na is not None or f.at is None or (f.embedded and not embedded):
            continue
        r = judge(view, f)
        if (every or r.status in (Status.BAD, Status.OFFLOAD)) and r.computed is not None:
            work[f.at : f.at + 2] = r.computed.to_bytes(2, "big")
            touched.append(f.at)
    return [(at, bytes(work[at : at + 2])) for at in sorted(touched) if work[at : at + 2] != buf[at : at + 2]]
