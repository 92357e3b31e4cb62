"""csum/arch/mips.py: arch/mips/lib/csum_partial.S on 32-bit big- and little-endian MIPS.

Independent sources: tests/vectors/csum_partial/mips.txt and mipsel.txt (the
kernel's assembly built with mips(el)-linux-gnu-gcc -march=mips32r2 and run
under qemu-mips(el); see each file's header), cited by file and line;
tests/oracle.py (a naive word-by-word end-around-carry loop); and, for
congruence mod 0xffff, the generic profiles of the same byte order
(lib/checksum.c, checked against their own vectors).
"""

import os

import pytest
from hypothesis import given
from oracle import ones_add32
from vectors import ROOT, PartialCase, partial_cases, partial_line

import csum
from csum.testing import aligns, buffers, seeds

MIPS = csum.profile("mips")
MIPSEL = csum.profile("mipsel")
#: each profile with the generic (lib/checksum.c) profile of its byte order
PAIRS = [(MIPS, csum.profile("generic-be")), (MIPSEL, csum.profile("generic"))]


def _check(prof: csum.Profile, case: PartialCase) -> None:
    assert prof.csum_partial(case.data, case.seed, align=case.align) == case.result


def _wsbh(x: int) -> int:
    """The MIPS ``wsbh`` instruction: swap the bytes of each halfword (written out again, independently)."""
    return (x & 0xFF00FF) << 8 | (x >> 8) & 0xFF00FF


def test_aliases():
    """Aliases mips32/mipseb select the big-endian ``mips``; ``mipsel`` is little-endian."""
    assert {csum.profile(n).name for n in ("mips32", "mipseb", "MIPS")} == {"mips"}
    assert (MIPS.endian, MIPSEL.endian) == ("big", "little")


@pytest.mark.parametrize("prof", [MIPS, MIPSEL], ids=["mips", "mipsel"])
def test_odd_address_short_buffer_is_not_swapped(prof):
    """mips(el).txt:17 and :1317: under 8 bytes the odd-address flag is never set, so nothing is swapped.

    A zero byte at address 1 leaves the seed 0xffff where it is (x86 rotates it),
    and one 0x33 byte at address 5 sits where an even address would put it.
    """
    name = prof.name
    _check(prof, partial_line(name, 17, "1 0000ffff 0000ffff 00"))
    want = {"mips": "5 00000000 00003300 33", "mipsel": "5 00000000 00000033 33"}[name]
    case = partial_line(name, 1317, want)
    _check(prof, case)
    assert prof.csum_partial(case.data, 0, align=0) == case.result


@pytest.mark.parametrize("prof, text", [
    (MIPS, "5 00000000 c622746c 1ab19d1e2cbabd0499"),
    (MIPSEL, "5 00000000 be56d0e3 1ab19d1e2cbabd0499"),
], ids=["mips", "mipsel"])
def test_odd_address_long_buffer_swaps_halfword_bytes(prof, text):
    """mips(el).txt:1381: nine bytes at address 5: the sum's bytes are swapped within each halfword (wsbh).

    The same bytes at address 0 give other bits but the same value mod 0xffff;
    the unswapped sum (the line's result swapped back) would not be congruent.
    """
    case = partial_line(prof.name, 1381, text)
    _check(prof, case)
    even = prof.csum_partial(case.data, 0, align=0)
    unswapped = _wsbh(case.result)
    assert even != case.result
    assert (even - case.result) % 0xFFFF == 0
    assert (even - unswapped) % 0xFFFF != 0


@pytest.mark.parametrize("prof, text", [
    (MIPS, "1 00010000 35b05847 a08f0faf3483a934"),
    (MIPSEL, "1 00010000 83aa72e4 a08f0faf3483a934"),
], ids=["mips", "mipsel"])
def test_seed_added_after_the_swap(prof, text):
    """mips(el).txt:1369: at an odd address the seed is added after ``wsbh``, unswapped.

    The kernel's value is the seedless sum plus the seed (tests/oracle.py's
    end-around add), and differs from adding the seed before the swap.
    """
    case = partial_line(prof.name, 1369, text)
    _check(prof, case)
    unseeded = prof.csum_partial(case.data, 0, align=case.align)
    assert case.result == ones_add32(unseeded, case.seed)
    assert case.result != _wsbh(ones_add32(_wsbh(unseeded), case.seed))


@pytest.mark.parametrize("prof, one_byte, three_bytes", [
    (MIPS, "6 00000000 0000ff00 ff", "4 00000000 ffffff00 ffffff"),
    (MIPSEL, "6 00000000 000000ff ff", "4 00000000 ffff00ff ffffff"),
], ids=["mips", "mipsel"])
def test_tail_placement(prof, one_byte, three_bytes):
    """mips(el).txt:670 and :684: the tail is ``(halfword << 16) | byte``, the byte ``<< 8`` on big-endian.

    Big-endian: a lone byte lands at 0x0000ff00, not at 0xff000000 where a
    zero-padded word would put it; little-endian: three bytes give 0xffff00ff.
    """
    _check(prof, partial_line(prof.name, 670, one_byte))
    _check(prof, partial_line(prof.name, 684, three_bytes))


@pytest.mark.parametrize("prof", [MIPS, MIPSEL], ids=["mips", "mipsel"])
def test_all_ones(prof):
    """mips(el).txt:3329: 1024 bytes of 0xff at address 0 give 0xffffffff (-0, never 0); :3251: 127 at address 1.

    127 0xff bytes at an odd address: 0x0100fe00 (BE) / 0x0100fffe (LE), not a
    canonical 32-bit sum, yet congruent mod 0xffff to generic of the same byte order.
    """
    _check(prof, partial_line(prof.name, 3329, "0 00000000 ffffffff " + "ff" * 1024))
    odd = {"mips": "0100fe00", "mipsel": "0100fffe"}[prof.name]
    case = partial_line(prof.name, 3251, f"1 00000000 {odd} " + "ff" * 127)
    _check(prof, case)
    generic = dict(PAIRS)[prof]
    assert (case.result - generic.csum_partial(case.data)) % 0xFFFF == 0


@pytest.mark.parametrize("prof", [MIPS, MIPSEL], ids=["mips", "mipsel"])
def test_zero_buffer_with_zero_seed_is_plus_zero(prof):
    """mips(el).txt:72: eight zero bytes, seed 0 give 0; a sum that starts at 0 and adds only zeros stays +0.

    Checked at every alignment and across the <8 / >=8 byte paths.
    """
    _check(prof, partial_line(prof.name, 72, "0 00000000 00000000 0000000000000000"))
    for align in range(8):
        for n in (0, 1, 7, 8, 9, 64, 200):
            assert prof.csum_partial(bytes(n), 0, align=align) == 0


@pytest.mark.parametrize("prof, generic", PAIRS, ids=["mips", "mipsel"])
@given(data=buffers(), seed=seeds(), align=aligns())
def test_congruent_to_generic_of_same_byte_order(prof, generic, data, seed, align):
    """mips ≡ generic-be and mipsel ≡ generic (lib/checksum.c) mod 0xffff, for every input."""
    assert (prof.csum_partial(data, seed, align=align) - generic.csum_partial(data, seed)) % 0xFFFF == 0


@pytest.mark.parametrize("prof, order", [(MIPS, "big"), (MIPSEL, "little")], ids=["mips", "mipsel"])
def test_large_aligned_buffer_matches_word_loop(prof, order):
    """tests/oracle.py's end-around add over 1 MiB of native words from 0, then the seed (address 0)."""
    data = os.urandom(1 << 20)
    total = 0
    for i in range(0, len(data), 4):
        total = ones_add32(total, int.from_bytes(data[i : i + 4], order))
    assert prof.csum_partial(data, 0xFFFFFFFE) == ones_add32(total, 0xFFFFFFFE)


@pytest.mark.parametrize("prof, generic", PAIRS, ids=["mips", "mipsel"])
def test_large_buffer_congruent_at_every_alignment(prof, generic):
    """1 MiB + 3 bytes at every alignment: congruent mod 0xffff to generic of the same byte order."""
    data = os.urandom((1 << 20) + 3)
    want = generic.csum_partial(data, 0x89ABCDEF) % 0xFFFF
    for align in range(8):
        assert prof.csum_partial(data, 0x89ABCDEF, align=align) % 0xFFFF == want


def test_the_64_bit_build_gives_the_32_bit_builds_bits():
    """csum_partial/mips64el.txt (csum_partial.S built n64, CONFIG_64BIT, run under qemu-mips64el) and mipsel.txt
    (built o32, under qemu-mipsel) hold the same 3,370 lines past their headers: every length 0..80 at every
    alignment, odd addresses and odd tails included, as csum/arch/mips.py argues; the mips64el profile gives them."""
    def cases(name: str) -> list[str]:
        return [line for line in (ROOT / "csum_partial" / f"{name}.txt").read_text().splitlines()
                if not line.startswith("#")]
    assert cases("mips64el") == cases("mipsel") and len(cases("mips64el")) == 3370
    odd = [c for c in partial_cases(ROOT / "csum_partial" / "mips64el.txt") if c.align % 2 and len(c.data) >= 8]
    assert len(odd) > 1000
    for case in odd:
        _check(csum.profile("mips64el"), case)
