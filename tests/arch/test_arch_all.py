"""Every profile against generic of its byte order: congruent mod 0xffff, folded results equal but for +-0.

Oracle: the generic profiles (lib/checksum.c semantics, themselves checked against
tests/oracle.py and the compiled kernel vectors). The only allowed exception is the
i386 non-PPRO carry-loss bug, whose exact condition is excluded (tests/arch/test_arch_i386.py pins it).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vectors import ROOT, diff_cases

import csum
from csum.testing import aligns, buffers, seeds

VECTORS = ROOT / "bpf_csum_diff"

NAMES = csum.profile_names()


def _reference(prof: csum.Profile) -> csum.Profile:
    return csum.profile("generic" if prof.endian == "little" else "generic-be")


def _nonppro_bug(name: str, data: bytes, seed: int, align: int) -> bool:
    return name == "i386-nonppro" and align & 1 and len(data) > 0 and seed + data[0] > 0xFFFFFFFF


@given(st.sampled_from(NAMES), buffers(max_size=300), seeds(), aligns())
def test_every_profile_is_congruent_to_generic(name, data, seed, align):
    """Invariant: every arch's csum_partial is the same one's-complement value as generic's (mod 0xffff)."""
    prof = csum.profile(name)
    got = prof.csum_partial(data, seed, align=align)
    want = _reference(prof).csum_partial(data, seed, align=align)
    if not _nonppro_bug(name, data, seed, align):
        assert got % 0xFFFF == want % 0xFFFF


@given(st.sampled_from(NAMES), buffers(max_size=300), seeds(), aligns())
def test_folded_results_agree_except_plus_minus_zero(name, data, seed, align):
    """Folded with csum_from32to16, every arch gives generic's 16 bits, or the other zero (0x0000 vs 0xffff)."""
    prof = csum.profile(name)
    if _nonppro_bug(name, data, seed, align):
        return
    got = csum.from32to16(prof.csum_partial(data, seed, align=align))
    want = csum.from32to16(_reference(prof).csum_partial(data, seed, align=align))
    assert got == want or {got, want} == {0, 0xFFFF}


@given(st.sampled_from(NAMES), st.binary(min_size=0, max_size=128).map(lambda b: b[: len(b) // 4 * 4]), seeds())
def test_legacy_helper_is_congruent_to_generic(name, to, seed):
    """The legacy helper is each arch's csum_partial of an aligned buffer: congruent to generic's (mod 0xffff)."""
    prof = csum.profile(name)
    got = prof.bpf_csum_diff_legacy(b"", to, seed)
    want = _reference(prof).bpf_csum_diff_legacy(b"", to, seed)
    assert got % 0xFFFF == want % 0xFFFF


def _legacy_vectors(name: str) -> dict[tuple[int, bytes, bytes], int]:
    return {(c.seed, c.frm, c.to): c.result for c in diff_cases(VECTORS / f"{name}-legacy.txt")}


#: Profiles whose legacy bpf_csum_diff the kernel's own code (tests/vectors/bpf_csum_diff/) shows to differ
#: from generic's (of the same byte order) on the same inputs: the arches whose csum_partial returns an
#: unfolded 32-bit sum. The others (EQUAL) build lib/checksum.c's folded result, bit for bit generic's.
UNEQUAL = ["x86_64", "x86_64@5.16", "x86_64@6.6", "i386", "i386-nonppro", "s390x", "powerpc64", "powerpc64le",
           "arm", "mips", "mipsel", "parisc", "riscv64-zbb", "riscv64-zbb-fast-unaligned"]
EQUAL = ["alpha", "arm64", "loongarch64", "riscv64"]


@pytest.mark.parametrize("name", UNEQUAL)
def test_legacy_helper_is_not_equal_to_generic_where_the_kernel_differs(name):
    """Not equal, as well as congruent: on the inputs where the kernel's legacy helper for ``name`` and the
    kernel's generic one (both compiled outside the repository; same input list in both files) return
    different values, the emulations return those two different values."""
    base, _, kernel = name.partition("@")
    prof = csum.profile(base, kernel=kernel or None)
    arch, ref = _legacy_vectors(name), _legacy_vectors(f"generic{'-be' if prof.endian == 'big' else ''}")
    shared = arch.keys() & ref.keys()
    assert len(shared) > 50
    differ = [key for key in sorted(shared) if arch[key] != ref[key] and arch[key] >= 0]
    assert differ, f"the kernel vectors show no input where {name} and generic differ"
    for seed, frm, to in differ[:200]:
        got = prof.bpf_csum_diff_legacy(frm, to, seed)
        want = _reference(prof).bpf_csum_diff_legacy(frm, to, seed)
        assert (got, want) == (arch[(seed, frm, to)], ref[(seed, frm, to)]) and got != want


@pytest.mark.parametrize("name", EQUAL)
def test_legacy_helper_equals_generic_where_the_kernel_agrees(name):
    """The folded-result arches: the kernel's legacy helper equals generic's on every shared input
    (tests/vectors/bpf_csum_diff/), and so do the emulations."""
    prof = csum.profile(name)
    arch, ref = _legacy_vectors(name), _legacy_vectors("generic")
    shared = sorted(arch.keys() & ref.keys())
    assert len(shared) > 1000 and all(arch[key] == ref[key] for key in shared)
    for seed, frm, to in shared[:300]:
        assert prof.bpf_csum_diff_legacy(frm, to, seed) == csum.bpf_csum_diff_legacy(frm, to, seed) == arch[(seed, frm, to)]
