"""Each profile TOML fact checked against the profile's behaviour, for every implementation it lists.

Facts (arch_profiles/*.toml, csum/arch/profiles.py SCHEMA): ``endian``, ``result`` (csum.profiles.RESULTS),
``alignment_sensitive`` and ``uname``. Expected values come from tests/oracle.py (RFC 1071 section
4.1, word by word) and from the definitions of the facts, never from the profile code under test.
``word_size`` has no behaviour to check here: every modelled accumulator yields the canonical sum
whatever its width, so it stays a documented fact (BITS_PER_LONG of the arch) read by nothing.
"""

import dataclasses
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracle import ones_add32, ones_sum16

import csum
from csum.arch.profiles import RESULTS, profile_for_machine

IMPLEMENTATIONS = [pytest.param(dataclasses.replace(csum.profile(name), implementation=impl),
                                id=f"{name}-{impl.algorithm}")
                   for name in csum.profile_names() for impl in csum.profile(name).implementations]
ALIGNS = st.integers(0, 7)
U32 = st.integers(0, 0xFFFFFFFF)


@pytest.mark.parametrize("prof", IMPLEMENTATIONS)
@settings(max_examples=40)
@given(st.binary(max_size=80), ALIGNS)
@example(b"\xff" * 33, 1)
@example(b"", 3)
def test_endian_is_the_byte_order_words_are_read_in(prof, data, align):
    """Fact ``endian``: with seed 0, csum_partial is congruent mod 0xffff to the oracle's sum of the
    bytes as ``endian`` 16-bit words, and 0 only when that sum is 0 (all-zero bytes)."""
    got = prof.csum_partial(data, 0, align=align)
    want = ones_sum16(data, prof.endian)
    assert got % 0xFFFF == want % 0xFFFF
    assert (got == 0) == (want == 0)


@pytest.mark.parametrize("prof", IMPLEMENTATIONS)
@settings(max_examples=40)
@given(st.binary(max_size=80), ALIGNS, U32)
@example(b"\x01\x02", 0, 0x10000)
@example(b"\xff" * 8, 0, 0xFFFFFFFF)
def test_result_width_is_as_the_toml_says(prof, data, align, seed):
    """Fact ``result``: folded16 -> at most 0xffff with seed 0 and, seeded, the unseeded result plus
    the seed end-around (oracle ones_add32); folded16-seeded -> at most 0xffff for every seed.
    Pinned: generic of 01 02 with seed 0x10000 is 0x10201 (0x0201 + 0x10000), a u32, not 16 bits."""
    result = prof.implementation.result
    assert result in RESULTS
    got = prof.csum_partial(data, seed, align=align)
    assert 0 <= got <= 0xFFFFFFFF
    if result == "folded16":
        assert prof.csum_partial(data, 0, align=align) <= 0xFFFF
        assert got == ones_add32(prof.csum_partial(data, 0, align=align), seed)
    elif result == "folded16-seeded":
        assert got <= 0xFFFF


def _witness_inputs():
    rng = random.Random(14)
    fixed = [b"\xff" * n for n in (2, 3, 8, 9, 64)] + [bytes([0x80]) * 5, b"\x01\x02\x03"]
    return fixed + [rng.randbytes(rng.randrange(1, 80)) for _ in range(300)]


@pytest.mark.parametrize("prof", IMPLEMENTATIONS)
def test_unfolded32_results_exceed_16_bits_somewhere(prof):
    """Fact ``result = "unfolded32"``: some input with seed 0 gives a u32 above 0xffff (and folded16 never)."""
    wide = any(prof.csum_partial(d, 0, align=a) > 0xFFFF for d in _witness_inputs()[:60] for a in (0, 1))
    assert wide == (prof.implementation.result == "unfolded32")


@pytest.mark.parametrize("prof", IMPLEMENTATIONS)
def test_alignment_sensitive_iff_some_address_changes_the_bits(prof):
    """Fact ``alignment_sensitive``: true iff some buffer and seed give different u32s at two of the
    eight addresses mod 8 (false: the same bits at every address for all inputs tried)."""
    seeds = (0, 1, 0xFFFF, 0xFFFFFFFF)
    differs = any(len({prof.csum_partial(d, s, align=a) for a in range(8)}) > 1
                  for d in _witness_inputs() for s in seeds)
    assert differs == prof.implementation.alignment_sensitive


@pytest.mark.parametrize("prof", IMPLEMENTATIONS)
@settings(max_examples=30)
@given(st.binary(max_size=64), U32)
def test_alignment_insensitive_profiles_ignore_the_address(prof, data, seed):
    """Fact ``alignment_sensitive = false``, property form: every address gives the bits of address 0."""
    if prof.implementation.alignment_sensitive:
        return
    first = prof.csum_partial(data, seed, align=0)
    assert all(prof.csum_partial(data, seed, align=a) == first for a in range(1, 8))


@pytest.mark.parametrize("name", csum.profile_names())
def test_uname_maps_back_to_the_profile(name):
    """Fact ``uname``: each listed ``uname -m`` maps to this profile on a CPU of its byte order."""
    prof = csum.profile(name)
    for machine in prof.uname:
        assert profile_for_machine(machine, prof.endian) == name


def test_uname_corners():
    """uname strings from real kernels (arch/*/Makefile UTS_MACHINE): mips is reported by both MIPS
    byte orders; mips64 has no 64-bit profile (it used to map to the 32-bit mips one); i486/i586 are i386."""
    assert profile_for_machine("mips", "big") == "mips"
    assert profile_for_machine("mips", "little") == "mipsel"
    assert profile_for_machine("mips64", "big") is None
    assert profile_for_machine("i586") == "i386" and profile_for_machine("aarch64") == "arm64"
