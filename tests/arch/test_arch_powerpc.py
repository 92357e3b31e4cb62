"""csum/arch/powerpc.py: arch/powerpc/lib/checksum_64.S ``__csum_partial`` (profiles "powerpc64", "powerpc64le").

Independent sources: tests/vectors/csum_partial/powerpc64.txt and
powerpc64le.txt (the kernel's checksum_64.S assembled for each byte order and
run under qemu-ppc64 / qemu-ppc64le outside this repository; see their
headers), and, for the property, lib/checksum.c on a CPU of the same byte
order (profiles "generic-be" and "generic", checked against their own vectors).
"""

import pytest
from hypothesis import given

import csum
from csum.testing import aligns, buffers, seeds

BE = csum.profile("powerpc64")
LE = csum.profile("powerpc64le")
FF = b"\xff"


@pytest.mark.parametrize("alias, name, endian", [
    ("ppc64", "powerpc64", "big"), ("powerpc64", "powerpc64", "big"),
    ("ppc64le", "powerpc64le", "little"), ("ppc64el", "powerpc64le", "little"),
])
def test_aliases_and_byte_order(alias, name, endian):
    """Profile facts: big- and little-endian ppc64, unfolded 32-bit, alignment-sensitive."""
    prof = csum.profile(alias)
    assert (prof.name, prof.endian, prof.word_size) == (name, endian, 64)
    assert prof.implementation.result == "unfolded32" and prof.implementation.alignment_sensitive


@pytest.mark.parametrize("prof, want", [(BE, 0x0001FEFF), (LE, 0x000100FE)], ids=["be", "le"])
def test_three_ones_bytes_tail_at_the_low_end(prof, want):
    """3 bytes of ff, seed 0: halfword plus a low-end tail byte (<<8 on BE) (powerpc64{,le}.txt line 685)."""
    assert prof.csum_partial(FF * 3, 0, align=4) == want


@pytest.mark.parametrize("prof", [BE, LE], ids=["be", "le"])
def test_halfword_alignment_steps_keep_their_carries(prof):
    """12 ff bytes at align 3: three lhz steps, then lwz and lhz: 0x3fffc (powerpc64{,le}.txt line 756)."""
    assert prof.csum_partial(FF * 12, 0, align=3) == 0x0003FFFC


@pytest.mark.parametrize("prof", [BE, LE], ids=["be", "le"])
def test_odd_address_takes_no_alignment_step(prof):
    """12 ff bytes at align 1: one unaligned ld plus lwz fold to all-ones (powerpc64{,le}.txt line 754)."""
    assert prof.csum_partial(FF * 12, 0xFFFFFFFF, align=1) == 0xFFFFFFFF


@pytest.mark.parametrize("prof", [BE, LE], ids=["be", "le"])
def test_four_ones_bytes_are_one_all_ones_word(prof):
    """4 ff bytes, seed 0: a single lwz, 0xffffffff, not folded (powerpc64{,le}.txt line 692)."""
    assert prof.csum_partial(FF * 4, 0, align=3) == 0xFFFFFFFF


@pytest.mark.parametrize("prof", [BE, LE], ids=["be", "le"])
def test_empty_buffer_returns_seed(prof):
    """len 0: the seed comes back unchanged, 0xffffffff included (powerpc64{,le}.txt line 662)."""
    assert prof.csum_partial(b"", 0xFFFFFFFF, align=5) == 0xFFFFFFFF


@pytest.mark.parametrize("prof", [BE, LE], ids=["be", "le"])
@given(data=buffers(), seed=seeds(), align=aligns())
def test_odd_address_is_not_special(prof, data, seed, align):
    """checksum_64.S looks at address bits 1..2 only: align 2k and 2k+1 give the same u32."""
    assert prof.csum_partial(data, seed, align=align | 1) == prof.csum_partial(data, seed, align=align & 6)


@pytest.mark.parametrize("prof, generic", [(BE, "generic-be"), (LE, "generic")], ids=["be", "le"])
@given(data=buffers(), seed=seeds(), align=aligns())
def test_congruent_to_generic_of_same_byte_order_mod_0xffff(prof, generic, data, seed, align):
    """__csum_partial agrees with lib/checksum.c built for the same byte order, modulo 0xffff."""
    got = prof.csum_partial(data, seed, align=align)
    want = csum.profile(generic).csum_partial(data, seed, align=align)
    assert (got - want) % 0xFFFF == 0
