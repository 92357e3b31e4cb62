"""csum/bpf/helpers.py: bpf_csum_diff (homogenized, legacy) and the l3/l4 csum replace helpers.

Independent sources: the kernel selftest tools/testing/selftests/bpf/prog_tests/test_csum_diff.c
(tests/vectors/test_csum_diff_selftest.txt: its 16 vectors with little- and
big-endian expectations), scapy (checksums recomputed from scratch), and the
numbers quoted in the upstream patch "bpf: bpf_csum_diff: optimize and
homogenize for all archs".
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from oracle import ones_add32, ones_sum16
from scapy.layers.inet import IP, TCP, UDP
from scapy.packet import Raw
from vectors import selftest_cases

import csum
from csum.bpf.helpers import BPF_F_MARK_ENFORCE, BPF_F_MARK_MANGLED_0, BPF_F_PSEUDO_HDR, CHECKSUM_PARTIAL
from csum.testing import buffers, seeds

LE_PROFILES = [n for n in csum.profile_names() if csum.profile(n).endian == "little"]
BE_PROFILES = [n for n in csum.profile_names() if csum.profile(n).endian == "big"]


@pytest.mark.parametrize("name", LE_PROFILES + BE_PROFILES)
@pytest.mark.parametrize("case", selftest_cases("little"), ids=lambda c: c.name)
def test_selftest_vectors_every_profile(name, case):
    """test_csum_diff.c: the homogenized helper returns the file's expectation on every architecture.

    Buffers are native u64 arrays, so big-endian profiles get the big-endian layout and expectation.
    """
    prof = csum.profile(name)
    cases = {c.name: c for c in selftest_cases(prof.endian)}
    c = cases[case.name]
    assert prof.bpf_csum_diff(c.frm, c.to, c.seed) == c.result


def test_module_level_helpers_are_generic():
    """csum.bpf_csum_diff / _legacy are the generic profile's (design.md public API)."""
    g = csum.profile("generic")
    assert csum.bpf_csum_diff(b"\1\2\3\4", b"\5\6\7\x08", 7) == g.bpf_csum_diff(b"\1\2\3\4", b"\5\6\7\x08", 7)
    assert csum.bpf_csum_diff_legacy(b"\1\2\3", b"") == -22


def test_patch_quoted_legacy_values():
    """The homogenize patch's example: legacy helper on x86 gives 0xffffffe3, generic 0xffe3.

    The quoted program pushes ``to = {~28}`` (one u32 word) onto seed 0: x86_64
    returns the unfolded u32, lib/checksum.c its 16-bit fold.
    """
    to = ((~28) & 0xFFFFFFFF).to_bytes(4, "little")
    assert csum.profile("x86_64").bpf_csum_diff_legacy(b"", to) == 0xFFFFFFE3
    assert csum.profile("generic").bpf_csum_diff_legacy(b"", to) == 0xFFE3
    assert csum.profile("x86_64").bpf_csum_diff(b"", to) == csum.profile("generic").bpf_csum_diff(b"", to) == 0xFFE3


@pytest.mark.parametrize("frm,to", [(b"\0" * 3, b""), (b"", b"\0" * 5), (b"\0" * 256, b"\0" * 260)])
def test_legacy_einval(frm, to):
    """Legacy helper: sizes not multiple of 4, or over the 512-byte scratch buffer, return -EINVAL."""
    assert csum.bpf_csum_diff_legacy(frm, to) == -22


def _zero_condition(prof, frm: bytes, to: bytes, seed: int) -> bool:
    """When the homogenized helper returns 0x0000 on ``prof`` (derived in docs/kernel-facts.md, "The +-0 finding").

    ret is folded with csum_from32to16, which gives 0 only for ret == 0:
    push: csum_partial(to, seed) == 0; pull: csum_partial(from, ~seed) == 0xffffffff;
    diff: csum_partial(to, seed) == 0 and csum_partial(from, 0) == 0xffffffff.
    """
    if frm and to:
        return prof.csum_partial(to, seed) == 0 and prof.csum_partial(frm, 0) == 0xFFFFFFFF
    if to:
        return prof.csum_partial(to, seed) == 0
    if frm:
        return prof.csum_partial(frm, seed ^ 0xFFFFFFFF) == 0xFFFFFFFF
    return seed == 0


@given(buffers(max_size=64), buffers(max_size=64), seeds(), st.sampled_from(LE_PROFILES + BE_PROFILES))
@example(b"\xff\xff\xff\xff", b"", 0xFFFFFFFF, "x86_64")
@example(b"\xff\xff\xff\xff", b"\0\0\0\0", 0, "x86_64")
def test_homogenized_agrees_across_profiles_except_at_zero(frm, to, seed, name):
    """Homogenized results agree with generic of the same byte order bit for bit, except 0x0000 vs 0xffff.

    They may differ only when the one's-complement result is zero (both 0x0000 and
    0xffff encode it); which one an arch returns is exactly ``_zero_condition``.
    Pinned examples: x86_64 pull of ff ff ff ff with seed 0xffffffff gives 0x0000 (generic
    0xffff); x86_64 diff of ff ff ff ff -> 00 00 00 00 gives 0x0000 (generic 0xffff).
    """
    prof = csum.profile(name)
    gen = csum.profile("generic" if prof.endian == "little" else "generic-be")
    got, ref = prof.bpf_csum_diff(frm, to, seed), gen.bpf_csum_diff(frm, to, seed)
    if got != ref:
        assert {got, ref} == {0, 0xFFFF}
    assert (got == 0) == _zero_condition(prof, frm, to, seed)


def test_x86_64_and_generic_disagree_on_pull_of_minus_zero():
    """Pinned: pull ff ff ff ff with seed 0xffffffff: x86_64 0x0000, generic 0xffff (also in the x86_64 vectors)."""
    frm = b"\xff" * 4
    assert csum.profile("x86_64").bpf_csum_diff(frm, b"", 0xFFFFFFFF) == 0x0000
    assert csum.profile("generic").bpf_csum_diff(frm, b"", 0xFFFFFFFF) == 0xFFFF


@given(st.binary(min_size=4, max_size=64).filter(lambda b: len(b) % 4 == 0), seeds())
@example(b"\xff\xff\xff\xff", 0)
@example(b"\0\0\0\0", 0x10000)  # hypothesis: a seed above 16 bits makes generic's value wide too
def test_legacy_differs_between_x86_64_and_generic(to, seed):
    """The legacy helper returned the arch's csum_partial: unfolded on x86_64, folded on generic.

    Expected values from tests/oracle.py, not from csum: generic's is the folded 16-bit sum of the
    little-endian words plus the seed (lib/checksum.c), x86_64's the 32-bit end-around sum of the
    little-endian u32 words plus the seed (csum-partial_64.c on an aligned buffer, as the vectors in
    tests/vectors/bpf_csum_diff/x86_64-legacy.txt show). They agree after folding; e.g. ff ff ff ff
    with seed 0 gives 0xffffffff on x86_64 and 0xffff on generic.
    """
    x86 = csum.profile("x86_64").bpf_csum_diff_legacy(b"", to, seed)
    gen = csum.profile("generic").bpf_csum_diff_legacy(b"", to, seed)
    words = 0
    for i in range(0, len(to), 4):
        words = ones_add32(words, int.from_bytes(to[i : i + 4], "little"))
    assert x86 == ones_add32(words, seed)
    assert gen == ones_add32(ones_sum16(to, "little"), seed)
    assert csum.from32to16(x86) % 0xFFFF == csum.from32to16(gen) % 0xFFFF
    if to == b"\xff" * 4 and seed == 0:
        assert (x86, gen) == (0xFFFFFFFF, 0xFFFF)


def _ipv4_udp(payload: bytes, chksum: int | None = None) -> bytearray:
    pkt = IP(src="192.0.2.1", dst="198.51.100.2") / UDP(sport=1000, dport=2000, chksum=chksum) / Raw(payload)
    return bytearray(bytes(pkt))


@given(st.binary(max_size=200), st.integers(0, 0xFFFFFFFF))
def test_l3_and_l4_replace4_equal_scapy_recompute(payload, new_dst):
    """Rewriting the IPv4 destination with l3 (size 4) and l4 (size 4 | PSEUDO_HDR) == scapy's recomputed bytes."""
    pkt = bytearray(bytes(IP(src="192.0.2.1", dst="198.51.100.2") / TCP(sport=1, dport=2) / Raw(payload)))
    old = bytes(pkt[16:20])
    new = new_dst.to_bytes(4, "big")
    pkt[16:20] = new
    assert csum.bpf_l3_csum_replace(pkt, 10, old, new, 4) == 0
    assert csum.bpf_l4_csum_replace(pkt, 36, old, new, 4 | BPF_F_PSEUDO_HDR) == 0
    expect = IP(bytes(pkt))
    del expect.chksum
    del expect[TCP].chksum
    assert bytes(pkt) == bytes(expect)


def test_l4_mangled0_keeps_udp_zero_checksum():
    """BPF_F_MARK_MANGLED_0: a stored UDP checksum of 0 means "none" and is left alone (RFC 768)."""
    pkt = _ipv4_udp(b"abc", chksum=0)
    before = bytes(pkt)
    assert csum.bpf_l4_csum_replace(pkt, 26, 1000, 1001, 2 | BPF_F_MARK_MANGLED_0) == 0
    assert bytes(pkt) == before


def test_l4_mangled0_turns_computed_zero_into_ffff():
    """BPF_F_MARK_MANGLED_0: an update whose result is 0 stores 0xffff (CSUM_MANGLED_0) instead.

    Crafted by hand: the field's bytes are 00 01 and a 2-byte field goes from 0x0000 to the
    bytes 00 01, so the one's-complement sum becomes -0 and csum_fold gives 0x0000; without
    the flag 0x0000 is stored (RFC 768 sends a computed 0 as 0xffff, hence the flag).
    """
    pkt = bytearray(8)
    pkt[0:2] = b"\x00\x01"
    assert csum.bpf_l4_csum_replace(pkt, 0, 0, 0x0100, 2 | BPF_F_MARK_MANGLED_0) == 0
    assert bytes(pkt[0:2]) == b"\xff\xff"
    plain = bytearray(b"\x00\x01")
    csum.bpf_l4_csum_replace(plain, 0, 0, 0x0100, 2)
    assert bytes(plain) == b"\x00\x00"


def test_l4_enforce_updates_a_zero_field():
    """BPF_F_MARK_ENFORCE with MARK_MANGLED_0: a stored 0 is updated like any other value."""
    pkt = bytearray(2)
    assert csum.bpf_l4_csum_replace(pkt, 0, 0, 1, 2 | BPF_F_MARK_MANGLED_0 | BPF_F_MARK_ENFORCE) == 0
    assert bytes(pkt) != b"\0\0"


@pytest.mark.filterwarnings("ignore::csum.bpf.BpfMisuse")  # generated calls misuse flags on purpose
@pytest.mark.parametrize("helper", [csum.bpf_l3_csum_replace, csum.bpf_l4_csum_replace])
@pytest.mark.parametrize("offset,flags,frm,rc", [
    (1, 2, 0, -14), (0x10000, 2, 0, -14), (20, 2, 0, -14), (0, 3, 0, -22), (0, 0, 1, -22), (0, 1 << 9, 0, -22),
])
def test_error_codes_leave_packet_untouched(helper, offset, flags, frm, rc):
    """Odd/too-large/out-of-packet offset -> -EFAULT; bad size, bad flag, size 0 with from != 0 -> -EINVAL.

    Same codes as the running kernel (tests/kernel/test_kernel.py checks them live).
    """
    pkt = bytearray(range(20))
    assert helper(pkt, offset, frm, 5, flags) == rc
    assert pkt == bytearray(range(20))


def test_l3_rejects_l4_only_flags():
    """bpf_l3_csum_replace accepts only the field-size bits: PSEUDO_HDR returns -EINVAL."""
    assert csum.bpf_l3_csum_replace(bytearray(4), 0, 0, 1, 2 | BPF_F_PSEUDO_HDR) == -22


def test_l4_partial_only_changes_pseudo_header_fields():
    """CHECKSUM_PARTIAL: the field holds the pseudo-header seed; non-pseudo changes leave it alone."""
    pkt = bytearray(b"\x12\x34")
    assert csum.bpf_l4_csum_replace(pkt, 0, 1, 2, 2, ip_summed=CHECKSUM_PARTIAL) == 0
    assert pkt == bytearray(b"\x12\x34")
    assert csum.bpf_l4_csum_replace(pkt, 0, 1, 2, 2 | BPF_F_PSEUDO_HDR, ip_summed=CHECKSUM_PARTIAL) == 0
    assert pkt != bytearray(b"\x12\x34")


def test_read_only_packet_is_a_type_error():
    """Helpers that patch in place need a writable buffer: bytes raise a TypeError naming pkt."""
    with pytest.raises(TypeError, match="pkt"):
        csum.bpf_l3_csum_replace(b"\0\0", 0, 0, 1, 2)
