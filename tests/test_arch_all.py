"""Every profile against generic of its byte order: congruent mod 0xffff, folded results equal but for +-0.

Oracle: the generic profiles (lib/checksum.c semantics, themselves checked against
tests/oracle.py and the compiled kernel vectors). The only allowed exception is the
i386 non-PPRO carry-loss bug, whose exact condition is excluded (tests/test_arch_i386.py pins it).
"""

from hypothesis import given
from hypothesis import strategies as st

import csum
from csum.testing import aligns, buffers, seeds

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
def test_legacy_helper_is_congruent_but_not_equal(name, to, seed):
    """The legacy helper is each arch's csum_partial of an aligned buffer: congruent to generic's, not equal.

    (The pinned disagreement: tests/test_bpf.py::test_patch_quoted_legacy_values.)
    """
    prof = csum.profile(name)
    got = prof.bpf_csum_diff_legacy(b"", to, seed)
    want = _reference(prof).bpf_csum_diff_legacy(b"", to, seed)
    assert got % 0xFFFF == want % 0xFFFF
