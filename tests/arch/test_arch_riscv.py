"""csum/arch/riscv.py: rv64 Zbb ``do_csum`` (profiles "riscv64-zbb", "riscv64-zbb-fast-unaligned").

Independent sources: tests/vectors/csum_partial/riscv64-zbb.txt and
riscv64-zbb-fast-unaligned.txt (arch/riscv/lib/csum.c with lib/checksum.c
built for rv64gc, Zbb alternative patched in, run under qemu-riscv64 -cpu
rv64,zbb=true outside this repository; see their headers), and lib/checksum.c
(profile "generic", checked against its own vectors) for the properties.
"""

import pytest
from hypothesis import given
from vectors import ROOT, partial_cases

import csum
from csum.testing import aligns, buffers, seeds

ZBB = csum.profile("riscv64-zbb")
FAST = csum.profile("riscv64-zbb-fast-unaligned")
GENERIC = csum.profile("generic")


@pytest.mark.parametrize("name, sensitive", [("riscv64-zbb", True), ("riscv64-zbb-fast-unaligned", False)])
def test_profile_facts(name, sensitive):
    """Little-endian rv64, lib/checksum.c with the arch do_csum; only the slow-unaligned form depends on align."""
    prof = csum.profile(name)
    assert (prof.endian, prof.word_size) == ("little", 64)
    assert prof.implementation.csum_partial == "lib/checksum.c+arch do_csum"
    assert prof.implementation.alignment_sensitive is sensitive


def test_addw_sign_extension_quirk_on_ff_ff():
    """ff ff, seed 0, fast unaligned access: 0xffffffff, not generic's 0xffff (riscv64-zbb-fast-unaligned.txt line 678)."""
    assert FAST.csum_partial(b"\xff\xff", 0, align=5) == 0xFFFFFFFF
    assert GENERIC.csum_partial(b"\xff\xff", 0, align=5) == 0xFFFF


def test_odd_address_rev8_path_is_zero_extended():
    """The same ff ff at odd address 5 without fast unaligned access takes rev8: 0x0000ffff (riscv64-zbb.txt line 678)."""
    assert ZBB.csum_partial(b"\xff\xff", 0, align=5) == 0x0000FFFF


@pytest.mark.parametrize("line, align, data, want", [
    (1353, 0, "08bf510b6bb9", 0xFFFF83C5),       # 8-aligned: do_csum_no_alignment
    (1339, 2, "373b2270", 0xFFFFAB59),           # even misaligned: do_csum_with_alignment, no rev8
    (1375, 6, "bb509e753490d5a6", 0xFFFFFD63),
])
def test_quirk_on_aligned_and_even_misaligned_paths(line, align, data, want):
    """Sums >= 0x8000 come back as 0xffffXXXX on the non-odd paths (riscv64-zbb.txt, line in the test id)."""
    assert ZBB.csum_partial(bytes.fromhex(data), 0, align=align) == want


def test_quirk_residue_is_correct():
    """0xffffab59 (riscv64-zbb.txt line 1339) still folds to generic's 16-bit sum 0xab59."""
    assert csum.from32to16(ZBB.csum_partial(bytes.fromhex("373b2270"), 0, align=2)) == 0xAB59
    assert GENERIC.csum_partial(bytes.fromhex("373b2270"), 0) == 0xAB59


@given(buffers(), aligns())
def test_seed_zero_is_generic_sum_with_sign_extension(data, align):
    """Seed 0: generic's 16-bit sum, with 0xffff above it when it is >= 0x8000 unless the rev8 (odd) path ran."""
    g = GENERIC.csum_partial(data, 0)
    quirk = g >= 0x8000
    assert FAST.csum_partial(data, 0, align=align) == (0xFFFF0000 | g if quirk else g)
    assert ZBB.csum_partial(data, 0, align=align) == (0xFFFF0000 | g if quirk and not align & 1 else g)


def test_fast_unaligned_gives_the_kernels_result_at_every_address_from_an_aligned_start():
    """With fast unaligned access the kernel takes do_csum_no_alignment at every address: each result of
    riscv64-zbb-fast-unaligned.txt (kernel code under qemu-riscv64, any align) is what the emulation gives
    for the same bytes and seed at align 0, and at the vector's own align."""
    cases = partial_cases(ROOT / "csum_partial" / "riscv64-zbb-fast-unaligned.txt")
    odd = [c for c in cases if c.align]
    assert len(odd) > 1000 and {c.align for c in odd} == set(range(1, 8))
    for c in odd:
        assert FAST.csum_partial(c.data, c.seed, align=0) == FAST.csum_partial(c.data, c.seed, align=c.align) \
            == c.result, c


@pytest.mark.parametrize("prof", [ZBB, FAST], ids=["zbb", "zbb-fast-unaligned"])
@given(data=buffers(), seed=seeds(), align=aligns())
def test_congruent_to_generic_mod_0xffff(prof, data, seed, align):
    """The Zbb u32 agrees with little-endian lib/checksum.c modulo 0xffff."""
    got = prof.csum_partial(data, seed, align=align)
    assert (got - GENERIC.csum_partial(data, seed, align=align)) % 0xFFFF == 0
