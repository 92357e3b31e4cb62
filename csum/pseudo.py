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
from .arch.primitives import TCPUDP_NOFOLD, ipv6_magic
from .errors import CsumTypeError
from .ones import _fold
from .types import Sum16, Wsum

Address = bytes | bytearray | memoryview | str | ipaddress.IPv4Address | ipaddress.IPv6Address


def _addr(value: Address, size: int, name: str) -> bytes:
    if isinstance(value, (str, ipaddress.IPv4Address, ipaddress.IPv6Address)):
        try:
            packed = ipaddress.ip_address(value).packed
        except ValueError as exc:
            raise CsumTypeError(f"{name}: {exc}", code="bad-address") from None
        return check_field(packed, (size,), name)
    return check_field(value, (size,), name)


def csum_tcpudp_nofold(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Wsum:
    """lib/checksum.c ``csum_tcpudp_nofold``: the IPv4 pseudo-header added to ``wsum``, unfolded (u32).

    Like the kernel, ``(proto + length) << 8`` is computed in 32 bits (lengths of 2**24
    and more lose their top byte); per-arch forms: :meth:`csum.Profile.csum_tcpudp_nofold`.
    """
    return TCPUDP_NOFOLD["lib/checksum.c"](
        int.from_bytes(_addr(saddr, 4, "saddr"), "little"), int.from_bytes(_addr(daddr, 4, "daddr"), "little"),
        check_uint(length, 32, "length"), check_uint(proto, 8, "proto"), check_uint(wsum, 32, "wsum"), "little")


def csum_tcpudp_magic(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Sum16:
    """include/asm-generic/checksum.h ``csum_tcpudp_magic``: fold of :func:`csum_tcpudp_nofold`."""
    return _fold(csum_tcpudp_nofold(saddr, daddr, length, proto, wsum))


def csum_ipv6_magic(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = 0) -> Sum16:
    """net/ipv6/ip6_checksum.c ``csum_ipv6_magic``: IPv6 pseudo-header (RFC 8200 section 8.1) + ``wsum``, folded.

    ``length`` is the 32-bit upper-layer length (jumbograms included).
    """
    return ipv6_magic(_addr(saddr, 16, "saddr"), _addr(daddr, 16, "daddr"), check_uint(length, 32, "length"),
                      check_uint(proto, 8, "proto"), check_uint(wsum, 32, "wsum"), "little")
