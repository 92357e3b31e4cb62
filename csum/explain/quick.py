"""The hypotheses of one wrong field from the packet alone, computed in C (csum/engine/_explain.c): the fast twin of
:func:`csum.explain.hypotheses.fitting`, which stays the reference.

The C takes the field's covered bytes, pseudo-header, padding and IPv4 header by their offsets, sums the covered
bytes once and gives every hypothesis of :func:`.hypotheses.alone` (the arithmetic slips, the odd byte, the padding,
the pseudo-header lengths, the IPv4 header's TTL and ECN) as (variant, value, the numbers its text names), in the
reference's order; here each hit is named through the reference's own texts (:data:`.sums.TEXTS`,
:func:`.header.ttl_guess`, :func:`.header.tos_guess`). :func:`fitting` declines (None: the caller runs the Python)
where the C is not built or the engine is not ``c``, and on every field it does not cover: a field of several
spans, one without its bytes (n/a), an odd-tail one, UDP over IPv6 stored as 0. tests/explain/test_quick.py
compares the two on every hypothesis, hit or not.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import engine
from ..layers import Reason, Result
from ..layers import table as T
from ..layers.walk import Field, IPLayer
from . import header, sums
from .sums import Guess

__all__ = ["VARIANTS", "fitting", "guess", "hypotheses", "named"]

#: The C's variants after the message's (:data:`.sums.TEXTS`): the IPv4 header's TTL, its ECN.
TTL, TOS = len(sums.TEXTS), len(sums.TEXTS) + 1
VARIANTS = TOS + 1
# flags (csum/engine/_explain.c)
_UDP, _MORE, _TCP, _IPV4, _IP, _V6, _L4, _PSEUDO = 1, 2, 4, 8, 16, 32, 64, 128


def hypotheses(buf: bytes, f: Field, ip: IPLayer | None, header_ok: bool, stored: int,
               computed: int) -> list[Guess] | None:
    """:func:`.hypotheses.alone` of field ``f`` (without udp0-not-mangled) from C: those storing ``stored`` and
    not ``computed`` (``stored`` -1: every one); ``header_ok``: whether ``ip``'s header checksum is right. None
    where the C does not cover the field."""
    c = engine.cexplain
    covers = f.covers
    if c is None or f.na is not None or f.at is None or len(covers) != 1 or f.entry.odd_tail:
        return None
    start, end = covers[0]
    flags = 0 if f.entry.zero is T.ZERO.VALUE else _UDP
    pseudo = f.pseudo
    if pseudo is not None:
        flags |= _PSEUDO
        src, dst, size, length, proto = pseudo
    else:
        src = dst = size = length = proto = 0
    if pseudo is None or ip is None or header_ok:
        flags |= _MORE
    name = f.entry.name
    if name == "tcp":
        flags |= _TCP
    pad = -1
    ip_total = after = l3 = l3_end = 0
    if ip is not None:
        flags |= _IP
        ip_total = ip.end - ip.l3
        if ip.version == 6:
            flags |= _V6
        if ip.l4 is not None:
            flags |= _L4
            after = ip.end - ip.l4
        if ip.depth == 0 and end == ip.end:
            pad = ip.end
        if name == "ipv4" and ip.ip_csum == f.at:
            flags |= _IPV4
            l3, l3_end = ip.l3, ip.l3_header_end
    found = c.alone(buf, start, end, f.at, src, dst, size, length, proto, stored, computed, flags, pad, ip_total,
                    after, f.entry.minimum, l3, l3_end)
    if found is None:
        return None
    return named(found, lambda header: sums.lengths_named(f, ip, length, header), length)


def named(found: list[tuple[int, int, int, int, int]], lengths: Callable[[int], list[tuple[int, str]]],
          length: int) -> list[Guess]:
    """The C's hypotheses ``found`` ((variant, value, the numbers its text names)) as Guesses, named through the
    reference's texts (``lengths``: :func:`.sums.lengths_named` for a header length; ``length``: the pseudo-header's
    length)."""
    return [guess(one, lengths, length) for one in found]


def guess(found: tuple[int, int, int, int, int], lengths: Callable[[int], list[tuple[int, str]]],
          length: int) -> Guess:
    """One of :func:`named`'s hypotheses."""
    variant, value, a, b, k = found
    if variant < sums.LENGTH_FULL:
        return sums.guess(variant, value, a, b, k)
    if variant < TTL:  # a: the length tried, b: its place in the lengths named, k: the header's length
        return sums.guess(variant, value, a, lengths(k)[b][1], length)
    if variant == TTL:
        return header.ttl_guess(value, b)
    return header.tos_guess(value, a, b)


def fitting(buf: bytes, f: Field, r: Result, ip: IPLayer | None, header_ok: bool) -> list[Guess] | None:
    """:func:`.hypotheses.fitting` from C, or None (the caller runs the Python)."""
    if r.stored is None or r.computed is None or r.reason is Reason.UDP6_ZERO:
        return None
    return hypotheses(buf, f, ip, header_ok, r.stored, r.computed)
