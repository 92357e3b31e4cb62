"""csum/arch/i386.py: the two csum_partial bodies of arch/x86/lib/checksum_32.S.

Independent sources: tests/vectors/csum_partial/i386.txt and i386-nonppro.txt
(the kernel's assembly assembled with i686-linux-gnu-gcc and run under
qemu-i386; see each file's header), cited by file and line; tests/oracle.py (a
naive word-by-word end-around-carry loop); and, for congruence mod 0xffff, the
generic little-endian profile (lib/checksum.c, checked against its own vectors).
"""

import os

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from oracle import ones_add32
from vectors import ROOT, PartialCase, partial_cases, partial_line

import csum
from csum.testing import aligns, buffers, seeds

PPRO = csum.profile("i386")
NONPPRO = csum.profile("i386-nonppro")
GENERIC = csum.profile("generic")


def _emulate(prof: csum.Profile, case: PartialCase) -> int:
    return prof.csum_partial(case.data, case.seed, align=case.align)


def _carry_lost(data: bytes, seed: int, align: int) -> bool:
    """The non-PPro body's bug condition: odd address, 1+ bytes, seed + first byte > 0xffffffff."""
    return bool(align & 1) and len(data) > 0 and seed + data[0] > 0xFFFFFFFF


def test_aliases():
    """design.md: the plain i386 name and its aliases select the PPro body."""
    assert {csum.profile(n).name for n in ("i686", "x86", "x86_32", "I386")} == {"i386"}


@pytest.mark.parametrize("prof, name, lineno, text", [
    (PPRO, "i386", 9, "1 00000001 00000001 -"),
    (NONPPRO, "i386-nonppro", 10, "1 00000001 00000001 -"),
])
def test_empty_buffer_at_odd_address_returns_seed_unrotated(prof, name, lineno, text):
    """Zero length at an odd address exits before either rotation: the seed comes back as is (file:line)."""
    case = partial_line(name, lineno, text)
    assert _emulate(prof, case) == case.result == case.seed


@pytest.mark.parametrize("prof, name, lineno, text", [
    (PPRO, "i386", 17, "1 0000ffff ffff0000 00"),
    (NONPPRO, "i386-nonppro", 18, "1 0000ffff ffff0000 00"),
])
def test_odd_address_rotates_seed_by_16(prof, name, lineno, text):
    """A zero byte at an odd address: the two ``roll $8`` leave the seed rotated by 16 bits (file:line)."""
    case = partial_line(name, lineno, text)
    assert _emulate(prof, case) == case.result == 0xFFFF0000


def test_all_ones_at_odd_address_is_not_the_32bit_all_ones():
    """i386.txt:691: four 0xff bytes at address 3 give 0x00feff01 (-0 mod 0xffff, yet not 0xffffffff).

    The odd-address rotation makes the result non-canonical as a 32-bit sum.
    """
    case = partial_line("i386", 691, "3 00000000 00feff01 ffffffff")
    assert _emulate(PPRO, case) == case.result
    assert case.result % 0xFFFF == 0


def test_all_ones_aligned_stays_minus_zero():
    """i386.txt:3329 / i386-nonppro.txt:3330: 1024 bytes of 0xff at address 0 sum to 0xffffffff, never 0."""
    text = "0 00000000 ffffffff " + "ff" * 1024
    for prof, name, lineno in ((PPRO, "i386", 3329), (NONPPRO, "i386-nonppro", 3330)):
        case = partial_line(name, lineno, text)
        assert _emulate(prof, case) == case.result == 0xFFFFFFFF


def test_halfword_head_then_three_byte_tail():
    """i386.txt:698 and i386-nonppro.txt:699: five 0xff at address 2, an ``addw`` step then a 3-byte tail.

    0 + 0xffff stays in the low half; PPro then adds 0x00ffffff (0x0100fffe),
    the other body 0xffff00ff (0x000000ff after the end-around carry). A plain
    32-bit end-around sum of little-endian words would give 0xffffffff.
    """
    case = partial_line("i386", 698, "2 00000000 0100fffe ffffffffff")
    assert _emulate(PPRO, case) == case.result
    case = partial_line("i386-nonppro", 699, "2 00000000 000000ff ffffffffff")
    assert _emulate(NONPPRO, case) == case.result


def test_three_byte_tail_placement_differs_between_bodies():
    """i386.txt:680 vs i386-nonppro.txt:681, and i386.txt:691 vs i386-nonppro.txt:692.

    PPro masks the tail out of a little-endian word (bytes at the low end); the
    other body adds ``(u16 << 16) | byte``.
    """
    pairs = [
        (partial_line("i386", 680, "0 fffe0001 00fe0001 ffffff"),
         partial_line("i386-nonppro", 681, "0 fffe0001 fffd0101 ffffff")),
        (partial_line("i386", 691, "3 00000000 00feff01 ffffffff"),
         partial_line("i386-nonppro", 692, "3 00000000 ffffffff ffffffff")),
    ]
    for ppro, nonppro in pairs:
        assert _emulate(PPRO, ppro) == ppro.result
        assert _emulate(NONPPRO, nonppro) == nonppro.result
        assert ppro.result != nonppro.result


BUG_LINES = [  # (i386-nonppro.txt line, its text, i386.txt line, its text): same inputs, both bodies
    (668, "3 fffffffe 00fd0000 ff", 667, "3 fffffffe 00fe0000 ff"),
    (676, "3 ffffffff 00feff00 ffff", 675, "3 ffffffff 00ffff00 ffff"),
    (1316, "3 ffffffff 00a30000 a4", 1315, "3 ffffffff 00a40000 a4"),
    (1322, "1 fffffffe 006dbc00 6fbc", 1321, "1 fffffffe 006ebc00 6fbc"),
]


@pytest.mark.parametrize("bug_line, bug_text, ppro_line, ppro_text", BUG_LINES, ids=[str(b[0]) for b in BUG_LINES])
def test_nonppro_loses_carry_of_seed_plus_first_byte(bug_line, bug_text, ppro_line, ppro_text):
    """Kernel bug, pinned on i386-nonppro.txt (PPro counterpart in i386.txt): ``adcl`` then ``roll $8``.

    Condition: odd address, length >= 1, seed + first byte > 0xffffffff. The
    non-PPro result is then exactly 1 less, mod 0xffff, than the true sum
    (generic), while the PPro body (``addl; adcl $0; roll $8``) is congruent.
    """
    bug = partial_line("i386-nonppro", bug_line, bug_text)
    ppro = partial_line("i386", ppro_line, ppro_text)
    assert (bug.align, bug.seed, bug.data) == (ppro.align, ppro.seed, ppro.data)
    assert _carry_lost(bug.data, bug.seed, bug.align)
    assert _emulate(NONPPRO, bug) == bug.result
    assert _emulate(PPRO, ppro) == ppro.result
    true_sum = GENERIC.csum_partial(bug.data, bug.seed)
    assert (true_sum - bug.result) % 0xFFFF == 1
    assert (true_sum - ppro.result) % 0xFFFF == 0


def test_nonppro_carry_loss_count_in_vectors():
    """i386-nonppro.txt's header: 259 vectors are incongruent mod 0xffff; they are exactly the bug condition."""
    cases = partial_cases(ROOT / "csum_partial" / "i386-nonppro.txt")
    hit = [c for c in cases if _carry_lost(c.data, c.seed, c.align)]
    incongruent = [c for c in cases if (GENERIC.csum_partial(c.data, c.seed) - c.result) % 0xFFFF]
    assert len(hit) == 259
    assert incongruent == hit


@given(buffers(), seeds(), aligns())
def test_ppro_congruent_to_generic(data, seed, align):
    """The PPro body is congruent mod 0xffff to lib/checksum.c (LE) for every input, bug condition included."""
    assert (PPRO.csum_partial(data, seed, align=align) - GENERIC.csum_partial(data, seed)) % 0xFFFF == 0


@given(buffers(), seeds(), aligns())
def test_nonppro_congruent_to_generic_outside_bug(data, seed, align):
    """The non-PPro body is congruent mod 0xffff to lib/checksum.c (LE) for every input outside the bug condition.

    Excluded exactly: odd address, length >= 1, seed + first byte > 0xffffffff.
    """
    assume(not _carry_lost(data, seed, align))
    assert (NONPPRO.csum_partial(data, seed, align=align) - GENERIC.csum_partial(data, seed)) % 0xFFFF == 0


_BUG_TAILS = buffers(max_size=599)  # built once: a strategy built at each draw is validated at each draw


@st.composite
def _bug_inputs(draw):
    data = bytes([draw(st.integers(1, 255))]) + draw(_BUG_TAILS)
    seed = draw(st.integers(0x1_0000_0000 - data[0], 0xFFFFFFFF))
    return data, seed, draw(st.sampled_from((1, 3, 5, 7)))


@given(_bug_inputs())
def test_nonppro_bug_condition_always_hit(inputs):
    """Inside the bug condition the non-PPro result is always true sum - 1 mod 0xffff; PPro stays exact."""
    data, seed, align = inputs
    true_sum = GENERIC.csum_partial(data, seed)
    assert (true_sum - NONPPRO.csum_partial(data, seed, align=align)) % 0xFFFF == 1
    assert (true_sum - PPRO.csum_partial(data, seed, align=align)) % 0xFFFF == 0


def test_large_aligned_buffer_matches_word_loop():
    """tests/oracle.py's end-around add, word by word, on 1 MiB + 3 bytes at address 0 (PPro tail at the low end)."""
    data = os.urandom((1 << 20) + 3)
    seed = 0xFFFFFFFF
    total = seed
    for i in range(0, len(data), 4):
        total = ones_add32(total, int.from_bytes(data[i : i + 4], "little"))
    assert PPRO.csum_partial(data, seed) == total


@pytest.mark.parametrize("align", range(8))
def test_large_buffer_congruent_at_every_alignment(align):
    """1 MiB + 5 bytes at every alignment: both bodies congruent mod 0xffff to generic (seed 0x12345678)."""
    data = os.urandom((1 << 20) + 5)
    want = GENERIC.csum_partial(data, 0x12345678) % 0xFFFF
    for prof in (PPRO, NONPPRO):
        assert prof.csum_partial(data, 0x12345678, align=align) % 0xFFFF == want
