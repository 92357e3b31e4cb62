"""Incremental checksum updates as BPF programs write them by hand (XDP has no replace helpers), slips included.

RFC 1624 eqn. 3, ``HC' = ~(~HC + ~m + m')``: the complement of the old checksum plus, for every word of the
changed bytes, the complement of the old word and the new word, folded to 16 bits and complemented. Programs
load the words as the CPU does (little-endian on x86_64 and arm64), so the byte order cancels out and the
16-bit values here are the field's two bytes read little-endian. What varies between hand-written updates
(xdp-tutorial's, Katran's, samples/bpf's, csum.rewrite's printed XDP program) is the arithmetic:

* ``word``: the change is summed as 16-bit or 32-bit words (a 2-byte field given to a 32-bit update is
  zero-extended: ``~old`` then has the high half set);
* ``acc``: a 64-bit accumulator loses nothing; a 32-bit one loses the carries out of bit 31; a 16-bit one
  adding without the end-around carry (``csum16_add`` without ``+ (sum < addend)``) loses every carry;
* ``folds``: ``(s & 0xffff) + (s >> 16)`` until no carry is left (None), or a fixed number of times before
  the sum is cut to 16 bits (one fold of a 64-bit sum can leave up to 2 bits above bit 15).

``~HC`` is a 16-bit value in each. With a 64-bit accumulator folded to the end every form gives the same 16
bits as the kernel's ``csum_replace4`` (include/net/checksum.h). :func:`update` also models the byte-order slips: the new value
summed byte-swapped (a host-order constant where the packet holds network order), both values swapped, or the
result stored swapped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.arith import M16, M32, swab16

__all__ = ["CORRECT", "FORMS", "Form", "update"]


@dataclass(frozen=True)
class Form:
    """How a hand-written update sums and folds (see the module docstring)."""

    word: int = 4
    acc: int = 64
    folds: int | None = None


#: A correct update (any form with a 64-bit accumulator folded to the end gives these bits).
CORRECT = Form()
#: The hand-written sums the fold and carry slips are tried in: ~HC as 16 bits plus 32-bit or 16-bit words.
FORMS = (Form(4), Form(2))


def _words(data: bytes, word: int) -> list[int]:
    """``data`` as little-endian words of ``word`` bytes (a shorter field: one zero-extended word)."""
    if len(data) < word:
        return [int.from_bytes(data, "little")]
    return [int.from_bytes(data[i:i + word], "little") for i in range(0, len(data), word)]


def _fold(total: int, folds: int | None) -> int:
    if folds is None:
        while total >> 16:
            total = (total & M16) + (total >> 16)
        return total
    for _ in range(folds):
        total = (total & M16) + (total >> 16)
    return total & M16


def update(check: int, old: bytes, new: bytes, form: Form = CORRECT, *, swap_new: bool = False,
           swap_both: bool = False, swap_result: bool = False) -> int:
    """The 16-bit checksum (as loaded little-endian) a hand-written update of ``check`` makes for bytes ``old`` ->
    ``new`` (an even number of bytes at an even offset in the coverage), summed and folded as ``form`` says."""
    if swap_new or swap_both:
        new = b"".join(new[i + 1:i + 2] + new[i:i + 1] for i in range(0, len(new), 2))
    if swap_both:
        old = b"".join(old[i + 1:i + 2] + old[i:i + 1] for i in range(0, len(old), 2))
    if form.acc == 16:  # 16-bit words added without the end-around carry
        total = ~check & M16
        for o, n in zip(_words(old, 2), _words(new, 2)):
            total = (total + (~o & M16)) & M16
            total = (total + n) & M16
        result = ~total & M16
    else:
        mask = M32 if form.word == 4 else M16
        terms = [~check & M16]
        for o, n in zip(_words(old, form.word), _words(new, form.word)):
            terms += [~o & mask, n]
        total = 0
        for term in terms:
            total += term
            if form.acc == 32:
                total &= M32
        result = ~_fold(total, form.folds) & M16
    return swab16(result) if swap_result else result
