"""csum/arch/arm.py: arch/arm/lib/csumpartial.S emulated (profile "arm").

Independent sources: tests/vectors/csum_partial/arm.txt (the kernel's
csumpartial.S assembled for ARMv7 and run under qemu-arm outside this
repository; see its header), the number quoted by the patch "bpf:
bpf_csum_diff: optimize and homogenize for all archs" for arm's legacy
bpf_csum_diff, and, for the property, lib/checksum.c (profile "generic",
itself checked against tests/vectors/csum_partial/generic.txt).
"""

import pytest
from hypothesis import given

import csum
from csum.testing import aligns, buffers, seeds

ARM = csum.profile("arm")
HEX = bytes.fromhex


@pytest.mark.parametrize("alias", ["arm", "armv7", "arm32", "ARMv7"])
def test_aliases_select_little_endian_arm(alias):
    """Profile facts from arch/arm/lib/csumpartial.S: little-endian, 32-bit, unfolded, alignment-sensitive."""
    prof = csum.profile(alias)
    assert (prof.name, prof.endian, prof.word_size) == ("arm", "little", 32)
    assert prof.implementation.result == "unfolded32" and prof.implementation.alignment_sensitive


@pytest.mark.parametrize("line, align, seed, want", [(9, 1, 0x1, 0x1), (15, 7, 0x9837071D, 0x9837071D)])
def test_empty_buffer_returns_seed_untouched_at_odd_address(line, align, seed, want):
    """len 0 returns the seed before any odd-address rotation (arm.txt lines 9 and 15)."""
    assert ARM.csum_partial(b"", seed, align=align) == want


def test_odd_address_rotates_seed_and_result():
    """Odd address: seed 0x0000ffff with one zero byte comes back as 0xffff0000 (arm.txt line 17)."""
    assert ARM.csum_partial(b"\x00", 0x0000FFFF, align=1) == 0xFFFF0000


def test_odd_address_with_carry_through_rotation():
    """Odd address, seed 0xfffe0001 and a zero byte gives 0x0001fffe (arm.txt line 19)."""
    assert ARM.csum_partial(b"\x00", 0xFFFE0001, align=3) == 0x0001FFFE


@pytest.mark.parametrize("line, data, align, want", [
    (684, "ffffff", 4, 0x000100FE),         # short path: halfword ffff + low-end byte ff
    (712, "ff" * 7, 0, 0x000300FC),         # short path: three halfwords + low-end byte
    (776, "ff" * 15, 0, 0x000100FE),        # long path: three ffffffff words fold away
])
def test_all_ones_short_and_long_paths(line, data, align, want):
    """All-ones buffers, seed 0: the <8-byte path keeps halfword carries, the word path folds them (arm.txt)."""
    assert ARM.csum_partial(HEX(data), 0, align=align) == want


def test_all_ones_seed_all_ones():
    """Seed 0xffffffff plus one ff byte wraps to 0xff: end-around carry on the seed (arm.txt line 668)."""
    assert ARM.csum_partial(b"\xff", 0xFFFFFFFF, align=4) == 0xFF


def test_legacy_bpf_csum_diff_of_not_28():
    """The homogenize patch quotes arm's legacy bpf_csum_diff for from = int 28, no to, seed 0: 0x1ffe2.

    The same patch folds the new helper's result with from32to16, giving every arch generic's 0xffe3.
    """
    assert ARM.bpf_csum_diff_legacy((28).to_bytes(4, "little"), b"", 0) == 0x1FFE2
    assert ARM.bpf_csum_diff((28).to_bytes(4, "little"), b"", 0) == 0xFFE3


@given(buffers(), seeds(), aligns())
def test_only_the_low_two_address_bits_matter(data, seed, align):
    """csumpartial.S tests address bits 0 and 1 only: align and align ^ 4 give the same u32."""
    assert ARM.csum_partial(data, seed, align=align) == ARM.csum_partial(data, seed, align=align ^ 4)


@given(buffers(), seeds(), aligns())
def test_congruent_to_generic_mod_0xffff(data, seed, align):
    """Every arch csum_partial agrees with little-endian lib/checksum.c modulo 0xffff."""
    got = ARM.csum_partial(data, seed, align=align)
    want = csum.profile("generic").csum_partial(data, seed, align=align)
    assert (got - want) % 0xFFFF == 0
