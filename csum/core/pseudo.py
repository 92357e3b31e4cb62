"""Pseudo-header sums for TCP/UDP/ICMPv6 checksums, with the kernel's byte orders.

Models lib/checksum.c (``csum_tcpudp_nofold``, little-endian branch),
include/asm-generic/checksum.h (``csum_tcpudp_magic``) and
net/ipv6/ip6_checksum.c (``csum_ipv6_magic``). An address is its 4 or 16
network-order bytes, an ``ipaddress`` object or a string (``"192.0.2.1"``,
``"2001:db8::1"``); the IPv4 functions also take the kernel's own form, an int
``__be32`` as a little-endian CPU holds it (the 4 address bytes loaded as a
little-endian u32: 192.0.2.1 is ``0x010200c0``). Lengths and protocol numbers
are host-order ints, as the kernel's callers pass them.
"""

from __future__ import annotations

import ipaddress

from ..errors import Code, CsumTypeError, CsumValueError
from ..types import Be32, Sum16, Wsum
from .arith import fold
from .inputs import check_address, check_uint
from .primitives import TCPUDP_NOFOLD, ipv6_magic

Address = bytes | bytearray | memoryview | str | ipaddress.IPv4Address | ipaddress.IPv6Address
#: An IPv4 address for csum_tcpudp_*: an :data:`Address`, or a ``__be32`` int as a little-endian CPU holds it.
Address4 = Address | Be32

def _addr(value: Address4, size: int, name: str) -> bytes:
    """An address argument of the pseudo-header functions: :func:`csum.core.inputs.check_address`, __be32 ints too."""
    return check_address(value, size, name, be32=True)


def csum_tcpudp_nofold(saddr: Address4, daddr: Address4, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Wsum:
    """lib/checksum.c ``csum_tcpudp_nofold``: the IPv4 pseudo-header added to ``wsum``, unfolded (u32).

    ``saddr``/``daddr``: strings, ``ipaddress.IPv4Address``, 4 network-order bytes, or the
    kernel's ``__be32`` ints as a little-endian CPU holds them. Like the kernel,
    ``(proto + length) << 8`` is computed in 32 bits (lengths of 2**24 and more lose their top
    byte); per-arch forms: :meth:`csum.Profile.csum_tcpudp_nofold`.
    """
    return TCPUDP_NOFOLD["lib/checksum.c"](  # type: ignore[return-value]
        int.from_bytes(_addr(saddr, 4, "saddr"), "little"), int.from_bytes(_addr(daddr, 4, "daddr"), "little"),
        check_uint(length, 32, "length"), check_uint(proto, 8, "proto"), check_uint(wsum, 32, "wsum"), "little")


def csum_tcpudp_magic(saddr: Address4, daddr: Address4, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Sum16:
    """include/asm-generic/checksum.h ``csum_tcpudp_magic``: fold of :func:`csum_tcpudp_nofold`."""
    return fold(csum_tcpudp_nofold(saddr, daddr, length, proto, wsum))  # type: ignore[return-value]


def csum_tcpudp_magic_bytes(saddr: Address4, daddr: Address4, length: int, proto: int,
                            wsum: Wsum = Wsum(0)) -> bytes:
    """The two checksum-field bytes of :func:`csum_tcpudp_magic` (a little-endian CPU stores its ``__sum16`` as is)."""
    return csum_tcpudp_magic(saddr, daddr, length, proto, wsum).to_bytes(2, "little")


def csum_ipv6_magic(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Sum16:
    """net/ipv6/ip6_checksum.c ``csum_ipv6_magic``: IPv6 pseudo-header (RFC 8200 section 8.1) + ``wsum``, folded.

    ``length`` is the 32-bit upper-layer length (jumbograms included).
    """
    return ipv6_magic(_addr(saddr, 16, "saddr"), _addr(daddr, 16, "daddr"), check_uint(length, 32, "length"),  # type: ignore[return-value]
                      check_uint(proto, 8, "proto"), check_uint(wsum, 32, "wsum"), "little")


def csum_ipv6_magic_bytes(saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = Wsum(0)) -> bytes:
    """The two checksum-field bytes of :func:`csum_ipv6_magic` (a little-endian CPU stores its ``__sum16`` as is)."""
    return csum_ipv6_magic(saddr, daddr, length, proto, wsum).to_bytes(2, "little")
