"""Per-architecture checksum primitives beyond ``csum_partial``: the pseudo-header sum, folds, IP headers.

A profile's TOML names its ``csum_tcpudp_nofold`` model (key ``csum_tcpudp_nofold``,
default ``lib/checksum.c``). Each model returns the unfolded ``__wsum`` as the CPU
holds it: where the arch code adds other integers than lib/checksum.c, the u32 differs
(it stays congruent mod 0xffff, so ``csum_tcpudp_magic`` agrees everywhere).

* ``lib/checksum.c``: ``sum + saddr + daddr + lenprot`` in 64 bits, folded by
  ``from64to32``; ``lenprot`` is ``(proto + len) << 8`` on little-endian CPUs
  and ``proto + len`` on big-endian ones, both computed in 32 bits (so on
  little-endian the top 8 bits of ``proto + len`` are shifted out). x86_64
  (an ``adcl`` chain in arch/x86/include/asm/checksum_64.h) and ppc64
  (arch/powerpc/include/asm/checksum.h) add the same integers: same bits.
* ``arm`` (arch/arm/include/asm/checksum.h): an ``adds``/``adcs``/``adc``
  chain whose little-endian ``lenprot`` operand is ``len + proto`` rotated
  *right* by 8 (``ror #8``), not shifted left: e.g. ``0x1a000000`` where
  lib/checksum.c adds ``0x1a00``.
* ``s390`` (arch/s390/include/asm/checksum.h): ``len`` and ``proto`` are added
  separately to a 64-bit sum (no 32-bit wrap of ``len + proto``), folded with a
  64-bit rotate.
* ``mips64`` (arch/mips/include/asm/checksum.h, CONFIG_64BIT): ``proto + len``
  is cast to ``__s32``, sign-extended to 64 bits and only then shifted left by 8
  (little-endian), so no bit of it is lost, and the 64-bit total (wrapping at
  2**64) is folded to 32 bits end-around; e.g. ``len`` 0x1000000 adds
  0x100000000 (folding to 1) where lib/checksum.c adds 0. Below 2**24 (every IP
  length) it is lib/checksum.c's sum. The 32-bit build is lib/checksum.c's.

Every end-around chain and both 64-to-32 folds are canonical (0 only when
every addend is 0; otherwise the unique value in 1..2**32-1 of its residue),
so each model is :func:`csum.core.arith.canonical` of its integer total.
``csum_fold`` (every arch's form gives the bits of include/asm-generic/checksum.h)
and ``ip_fast_csum`` (an end-around sum of the header's native words, folded and
complemented) need no per-arch model beyond byte order (see csum.profiles.Profile). Known answers:
tests/vectors/primitives/ (the kernel's code compiled and run outside the repository).
"""

from __future__ import annotations

from typing import Callable, Literal

from .arith import M32, canonical, fold, ror32

Endian = Literal["little", "big"]
#: (saddr, daddr as the CPU loads the __be32 fields, len u32, proto u8, sum u32, byte order) -> __wsum.
TcpudpFn = Callable[[int, int, int, int, int, Endian], int]
_M64 = (1 << 64) - 1


def _lib_checksum_c(saddr: int, daddr: int, length: int, proto: int, wsum: int, endian: Endian) -> int:
    """lib/checksum.c ``csum_tcpudp_nofold``."""
    lenprot = (proto + length) & M32
    return canonical(wsum + saddr + daddr + (lenprot if endian == "big" else (lenprot << 8) & M32), 32)


def _arm(saddr: int, daddr: int, length: int, proto: int, wsum: int, endian: Endian) -> int:
    """arch/arm/include/asm/checksum.h ``csum_tcpudp_nofold``: ``lenprot, ror #8`` on little-endian."""
    lenprot = (proto + length) & M32
    return canonical(wsum + daddr + saddr + (lenprot if endian == "big" else ror32(lenprot, 8)), 32)


def _s390(saddr: int, daddr: int, length: int, proto: int, wsum: int, endian: Endian) -> int:
    """arch/s390/include/asm/checksum.h ``csum_tcpudp_nofold``: len and proto added to the 64-bit sum."""
    return canonical(wsum + saddr + daddr + length + proto, 32)


def _mips64(saddr: int, daddr: int, length: int, proto: int, wsum: int, endian: Endian) -> int:
    """arch/mips/include/asm/checksum.h ``csum_tcpudp_nofold`` on a 64-bit kernel: ``(__s32)(proto + len)`` in 64 bits."""
    lenprot = (proto + length) & M32
    wide = (lenprot - (lenprot >> 31 << 32)) << (8 if endian == "little" else 0)
    return canonical((wsum + saddr + daddr + wide) & _M64, 32)


TCPUDP_NOFOLD: dict[str, TcpudpFn] = {"lib/checksum.c": _lib_checksum_c, "arm": _arm, "s390": _s390,
                                      "mips64": _mips64}



def ipv6_magic(saddr: bytes, daddr: bytes, length: int, proto: int, wsum: int, endian: Endian) -> int:
    """``csum_ipv6_magic``: ``csum_fold`` of ``wsum`` + the pseudo-header's native u32 words (RFC 8200 8.1).

    net/ipv6/ip6_checksum.c (32-bit end-around adds), x86_64's arch/x86/lib/csum-wrappers_64.c
    (``adcq`` chain; it adds ``htons(proto)`` where the others add ``htonl(proto)``, the same
    one's-complement value) and s390's checksum.h (64-bit sum) are all canonical sums: same bits.
    """
    words = saddr + daddr + length.to_bytes(4, "big") + proto.to_bytes(4, "big")
    total = wsum + sum(int.from_bytes(words[i:i + 4], endian) for i in range(0, 40, 4))
    return fold(canonical(total, 32))
