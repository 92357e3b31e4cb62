"""Pseudo-header sums for TCP/UDP/ICMPv6 checksums, with the kernel's byte orders.

Models lib/checksum.c (``csum_tcpudp_nofold``, little-endian branch),
include/asm-generic/checksum.h (``csum_tcpudp_magic``) and
net/ipv6/ip6_checksum.c (``csum_ipv6_magic``). Addresses are given as their
4 or 16 network-order bytes (or ``ipaddress`` objects / strings); lengths and
protocol numbers are host-order ints, as the kernel's callers pass them.
"""

from __future__ import annotations

import ipaddress

from ._check import check_field, check_uint
from .errors import Code, CsumTypeError
from .ones import M32, _add32, _fold
from .types import Sum16, Wsum

Address = bytes | bytearray | memoryview | str | ipaddress.IPv4Address | ipaddress.IPv6Address


def _addr(value: Address, size: int, name: str) -> bytes:
    if isinstance(value, (str, ipaddress.IPv4Address, ipaddress.IPv6Address)):
        try:
            packed = ipaddress.ip_address(value).packed
        except ValueError as exc:
            raise CsumTypeError(f"{name}: {exc}", code=Code.BAD_ADDRESS) from None
        return check_field(packed, (size,), name)
    return check_field(value, (size,), name)


def csum_tcpudp_nofold(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Wsum:
    """lib/checksum.c ``csum_tcpudp_nofold``: the IPv4 pseudo-header added to ``wsum``, unfolded (u32)."""
    s = check_uint(wsum, 32, "wsum")
    s += int.from_bytes(_addr(saddr, 4, "saddr"), "little")
    s += int.from_bytes(_addr(daddr, 4, "daddr"), "little")
    s += (check_uint(proto, 8, "proto") + check_uint(length, 32, "length")) << 8
    s = (s & M32) + (s >> 32)
    return ((s & M32) + (s >> 32)) & M32


def csum_tcpudp_magic(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Sum16:
    """include/asm-generic/checksum.h ``csum_tcpudp_magic``: fold of :func:`csum_tcpudp_nofold`."""
    return _fold(csum_tcpudp_nofold(saddr, daddr, length, proto, wsum))


def csum_ipv6_magic(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Sum16:
    """net/ipv6/ip6_checksum.c ``csum_ipv6_magic``: IPv6 pseudo-header (RFC 8200 section 8.1) + ``wsum``, folded.

    ``length`` is the 32-bit upper-layer length (jumbograms included).
    """
    s = check_uint(wsum, 32, "wsum")
    words = _addr(saddr, 16, "saddr") + _addr(daddr, 16, "daddr")
    words += check_uint(length, 32, "length").to_bytes(4, "big") + check_uint(proto, 8, "proto").to_bytes(4, "big")
    for i in range(0, 40, 4):
        s = _add32(s, int.from_bytes(words[i : i + 4], "little"))
    return _fold(s)
