"""IPv4 header fields changed without updating the header checksum (RFC 791 3.1; RFC 1624 says how to update it).

A header checksum that is the checksum of the same header with one field as it was before the change names that
field. The value before is one the packet fixes: the TTL one higher (a forwarder decremented it, net/ipv4/ip_forward.c
``ip_decrease_ttl`` updates the checksum, a hand-written forwarder may not), an ECN codepoint before a CE mark
(RFC 3168 5: ECT(0) or ECT(1) turned into CE), or, where the packet from before the change is known, that packet's
value of every field that differs. A free value (any old TOS, any old id) is never tried: with 16-bit checksums one
of them would always fit.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from functools import partial

from ..core.partial import csum_partial
from ..core.arith import fold
from ..layers import table as T
from ..layers.walk import IPLayer
from .sums import Guess

#: The cause id for a field of :data:`csum.layers.table.IPV4_FIELDS` changed without an update.
_CAUSE = {"ttl": "ttl-not-updated", "tos": "tos-not-updated", "id": "id-not-updated",
          "total length": "tot-len-not-updated"}
#: Every cause id of a header field changed without an update.
NOT_UPDATED = frozenset({*_CAUSE.values(), "ip-field-not-updated"})
_ECN_CE = 3
_ECN = {1: "ECT(1)", 2: "ECT(0)", 3: "CE", 0: "Not-ECT"}


def header_checksum(header: bytes | bytearray, at: int) -> int:
    """The IPv4 header checksum of ``header`` (its checksum at ``at`` taken as 0), as a big-endian value."""
    h = bytearray(header)
    h[at:at + 2] = b"\0\0"
    return int.from_bytes(fold(csum_partial(bytes(h))).to_bytes(2, "little"), "big")


def cause_of(name: str) -> str:
    """The cause id for header field ``name`` changed without an update."""
    return _CAUSE.get(name, "ip-field-not-updated")  # the one id of NOT_UPDATED not in _CAUSE


def show(name: str, value: bytes) -> str:
    """A field's value as the detail text writes it."""
    if name.endswith("address"):
        return str(ipaddress.ip_address(value))
    n = int.from_bytes(value, "big")
    if name == "tos":
        return f"{n:#04x} (DSCP {n >> 2}, ECN {_ECN[n & 3]})"
    return f"{n:#06x}" if name in ("id", "fragment field") else str(n)


def _with(header: bytes, at: int, value: bytes) -> bytes:
    h = bytearray(header)
    h[at:at + len(value)] = value
    return bytes(h)


def ttl_guess(value: int, ttl: int) -> Guess:
    """ttl-not-updated: ``value``, the header checksum of TTL ``ttl`` + 1 (the packet has ``ttl``)."""
    return Guess("ttl-not-updated", value, partial("the header checksum of TTL {}; the packet has {} (decremented by 1 "
                                                   "without an update)".format, ttl + 1, ttl))


def tos_guess(value: int, old: int, tos: int) -> Guess:
    """tos-not-updated: ``value``, the header checksum of TOS ``old`` (the packet has ``tos``, ECN marked CE)."""
    return Guess("tos-not-updated", value, partial("the header checksum of TOS {}; the packet has {} (ECN marked CE "
                                                   "without an update)".format, show("tos", bytes([old])),
                                                   show("tos", bytes([tos]))))


def guesses(buf: bytes, ip: IPLayer) -> Iterator[Guess]:
    """The header checksums of the header at ``ip`` with the TTL one higher, or the ECN before a CE mark."""
    assert ip.ip_csum is not None
    header = bytes(buf[ip.l3:ip.l3_header_end])
    at = ip.ip_csum - ip.l3
    ttl = header[T.IPV4_TTL]
    if ttl < 0xFF:
        yield ttl_guess(header_checksum(_with(header, T.IPV4_TTL, bytes([ttl + 1])), at), ttl)
    tos = header[T.IPV4_TOS]
    if tos & 3 == _ECN_CE:
        for ecn in (1, 2):
            old = (tos & ~3) | ecn
            yield tos_guess(header_checksum(_with(header, T.IPV4_TOS, bytes([old])), at), old, tos)


def before_guesses(buf: bytes, ip: IPLayer, before: IPLayer, before_buf: bytes) -> Iterator[Guess]:
    """The header checksums of the header at ``ip`` with one field as the packet before the change has it."""
    assert ip.ip_csum is not None
    if before.version != 4 or before.header_len != ip.header_len:
        return
    header = bytes(buf[ip.l3:ip.l3_header_end])
    at = ip.ip_csum - ip.l3
    old_header = bytes(before_buf[before.l3:before.l3_header_end])
    for name, start, size in T.IPV4_FIELDS:
        was, now = old_header[start:start + size], header[start:start + size]
        if was != now:
            yield Guess(cause_of(name), header_checksum(_with(header, start, was), at),
                        partial("the header checksum of {} {} (the packet before the change); the packet has {}".format,
                                name, show(name, was), show(name, now)), sure=True)
