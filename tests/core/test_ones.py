"""csum/core/ones.py: the include/net/checksum.h arithmetic.

Oracle: tests/oracle.py (naive RFC 1071 loops); known answers from RFC 1624.
"""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracle import fold16, ones_add32, rfc1071_checksum

import csum
from csum.testing import buffers, field_changes, u32s

M32 = 0xFFFFFFFF


def congruent(a: int, b: int, modulus: int = 0xFFFF) -> bool:
    return a % modulus == b % modulus


@given(u32s(), u32s())
def test_csum_add_commutative(a, b):
    """Invariant: csum_add(a, b) == csum_add(b, a), bit for bit."""
    assert csum.csum_add(a, b) == csum.csum_add(b, a)


@given(u32s(), u32s(), u32s())
def test_csum_add_associative(a, b, c):
    """Invariant: end-around addition is associative bit for bit (every chain is canonical)."""
    assert csum.csum_add(csum.csum_add(a, b), c) == csum.csum_add(a, csum.csum_add(b, c))


@given(u32s(), u32s())
def test_csum_add_matches_oracle(a, b):
    """csum_add equals a step-by-step end-around 32-bit add (tests/oracle.py)."""
    assert csum.csum_add(a, b) == ones_add32(a, b)


@given(u32s(), u32s())
def test_csum_sub_undoes_csum_add(a, b):
    """Invariant: csum_sub(csum_add(a, b), b) is a in one's complement (congruent mod 2**32-1)."""
    assert congruent(csum.csum_sub(csum.csum_add(a, b), b), a, M32)


@given(u32s())
def test_csum_neg_is_additive_inverse(a):
    """Invariant: a + (-a) is negative zero (0xffffffff) in 32-bit one's complement."""
    assert csum.csum_add(a, csum.csum_neg(a)) == M32


@given(u32s())
def test_from32to16_is_idempotent_and_matches_oracle(x):
    """Invariant: folding a folded value changes nothing; the fold equals repeated end-around folds."""
    once = csum.from32to16(x)
    assert csum.from32to16(once) == once
    assert once == fold16(x)


@given(u32s())
def test_csum_fold_is_complemented_fold(x):
    """csum_fold(x) == ~from32to16(x) & 0xffff, and folding its unfold round-trips."""
    folded = csum.csum_fold(x)
    assert folded == ~fold16(x) & 0xFFFF
    assert csum.csum_fold(csum.csum_unfold(folded ^ 0xFFFF)) == folded


@given(st.integers(0, 2**64 - 1))
def test_from64to32_congruent_and_in_range(x):
    """from64to32 keeps the value mod 2**32-1 and returns a u32 (0 only for 0)."""
    r = csum.from64to32(x)
    assert 0 <= r <= M32 and congruent(r, x, M32) and (r == 0) == (x == 0)


def test_fold_of_zero_is_all_ones():
    """Corner: csum_fold(0) == 0xffff. A sum of zero (all-zero data) has checksum 0xffff, never 0."""
    assert csum.csum_fold(0) == 0xFFFF


def test_fold_of_negative_zero_is_zero():
    """Corner: 0xffff and 0xffffffff are one's-complement -0; their checksum is 0x0000."""
    assert csum.csum_fold(0xFFFF) == 0
    assert csum.csum_fold(0xFFFFFFFF) == 0


def test_from32to16_keeps_plus_zero_and_minus_zero_apart():
    """Corner: from32to16 maps +0 to 0 and -0 (0xffff0000, 0xffffffff) to 0xffff: it never merges them."""
    assert csum.from32to16(0) == 0
    assert csum.from32to16(0xFFFF0000) == 0xFFFF
    assert csum.from32to16(0xFFFFFFFF) == 0xFFFF


def test_noop_update_turns_checksum_ffff_into_0000():
    """Corner: the checksum 0xffff (data summing to +0) becomes 0x0000 after any no-op update.

    csum_replace_by_diff computes ~(~HC + diff); ~0xffff unfolds to 0xffff0000, which
    folds to -0 (0xffff), so the result is 0x0000: the other zero (RFC 1624 section 3).
    """
    assert csum.csum_replace_by_diff(0xFFFF, 0) == 0x0000
    assert csum.csum_replace4(0xFFFF, 0x01020304, 0x01020304) == 0x0000


def test_csum_replace2_rfc1624_section4():
    """RFC 1624 section 4: HC=0xdd2f, m 0x5555 -> 0x3285 gives 0x0000 by eqn. 3 (eqn. 2 would give -0)."""
    assert csum.csum_replace2(0xDD2F, 0x5555, 0x3285) == 0x0000


def test_csum_replace4_rfc1624_section4_as_32bit_field():
    """RFC 1624 section 4 with the field widened to 32 bits (high half 0): csum_replace4 also gives 0x0000."""
    assert csum.csum_replace4(0xDD2F, 0x5555, 0x3285) == 0x0000


def _update_vs_recompute(data: bytes, offset: int, new_field: bytes, replace) -> None:
    """Checksum over ``data`` (field at 0 zero), change bytes at ``offset``, update incrementally."""
    old_sum = rfc1071_checksum(data)
    changed = data[:offset] + new_field + data[offset + len(new_field):]
    new_sum = rfc1071_checksum(changed)
    got = replace(old_sum, data[offset:offset + len(new_field)], new_field)
    if any(changed):
        assert got == new_sum
    else:
        # all-zero data: recomputation gives 0xffff (+0 summed), the update -0's complement 0x0000
        assert {got, new_sum} <= {0x0000, 0xFFFF}


def _be(sum16: int) -> int:
    return ((sum16 & 0xFF) << 8) | (sum16 >> 8)


@given(buffers(min_size=2, max_size=64), st.data())
def test_csum_replace2_equals_recompute(data, draw):
    """RFC 1624: a 16-bit field changed by csum_replace2 equals recomputing the checksum."""
    data = data + b"\0" * (len(data) % 2)
    offset = draw.draw(st.integers(0, len(data) // 2 - 1)) * 2
    _, new = draw.draw(field_changes(2))
    replace = lambda hc, old, new_: _be(csum.csum_replace2(_be(hc), int.from_bytes(old, "little"),
                                                           int.from_bytes(new_, "little")))
    _update_vs_recompute(data, offset, new.to_bytes(2, "big"), replace)


@given(buffers(min_size=4, max_size=64), st.data())
def test_csum_replace4_equals_recompute(data, draw):
    """RFC 1624 with a 32-bit field (an IPv4 address), via csum_replace4."""
    data = data + b"\0" * (-len(data) % 4)
    offset = draw.draw(st.integers(0, len(data) // 4 - 1)) * 4
    _, new = draw.draw(field_changes(4))
    replace = lambda hc, old, new_: _be(csum.csum_replace4(_be(hc), int.from_bytes(old, "little"),
                                                           int.from_bytes(new_, "little")))
    _update_vs_recompute(data, offset, new.to_bytes(4, "big"), replace)


@given(buffers(min_size=16, max_size=64), st.data())
def test_inet_proto_csum_replace16_equals_recompute(data, draw):
    """RFC 1624 with a 128-bit field (an IPv6 address), via inet_proto_csum_replace16: the update
    equals the checksum recomputed by the naive RFC 1071 oracle (tests/oracle.py)."""
    data = data + b"\0" * (-len(data) % 4)
    offset = draw.draw(st.integers(0, (len(data) - 16) // 4)) * 4
    new = draw.draw(st.binary(min_size=16, max_size=16) | st.sampled_from([b"\0" * 16, b"\xff" * 16]))
    replace = lambda hc, old, new_: _be(csum.inet_proto_csum_replace16(_be(hc), old, new_))
    _update_vs_recompute(data, offset, new, replace)


@pytest.mark.parametrize("name", csum.profile_names())
@settings(max_examples=30)
@given(buffers(min_size=16, max_size=48), st.data())
def test_profile_inet_proto_csum_replace16_equals_recompute(name, data, draw):
    """Every profile's inet_proto_csum_replace16 (its own csum_partial) equals recomputing with the
    naive RFC 1071 oracle, the field read as that CPU holds it (little- or big-endian)."""
    prof = csum.profile(name)
    swap = _be if prof.endian == "little" else (lambda v: v)
    data = data + b"\0" * (-len(data) % 4)
    offset = draw.draw(st.integers(0, (len(data) - 16) // 4)) * 4
    new = draw.draw(st.binary(min_size=16, max_size=16))
    replace = lambda hc, old, new_: swap(prof.inet_proto_csum_replace16(swap(hc), old, new_))
    _update_vs_recompute(data, offset, new, replace)


@given(buffers(min_size=2, max_size=64), u32s())
def test_csum_replace_by_diff_of_noop_is_identity(data, diff):
    """No-op update: a diff of +0 or -0 (0xffffffff) leaves any checksum but 0xffff unchanged."""
    hc = csum.ip_compute_csum(data)
    if hc != 0xFFFF:
        assert csum.csum_replace_by_diff(hc, 0) == hc
        assert csum.csum_replace_by_diff(hc, 0xFFFFFFFF) == hc


@given(buffers(max_size=300), st.data(), u32s())
@example(data=b"\xff" * 7, draw=None, seed=0xFFFFFFFF)
def test_block_add_at_any_split_equals_whole(data, draw, seed):
    """Splitting a buffer at any offset (odd ones too) and csum_block_add-ing the parts gives the whole sum."""
    split = draw.draw(st.integers(0, len(data))) if draw is not None else 3
    head, tail = data[:split], data[split:]
    combined = csum.csum_block_add(csum.csum_partial(head, seed), csum.csum_partial(tail), len(head))
    assert csum.from32to16(combined) == csum.from32to16(csum.csum_partial(data, seed))


@given(buffers(max_size=300), st.data())
def test_block_sub_removes_a_block(data, draw):
    """csum_block_sub undoes csum_block_add for a block at any offset (congruent)."""
    split = draw.draw(st.integers(0, len(data)))
    whole = csum.csum_partial(data)
    rest = csum.csum_block_sub(whole, csum.csum_partial(data[split:]), split)
    assert congruent(rest, csum.csum_partial(data[:split]))


@pytest.mark.parametrize("func,args", [
    (csum.csum_add, (1 << 32, 0)), (csum.csum_add, (0, -1)), (csum.csum_fold, (1 << 32,)),
    (csum.csum_unfold, (0x10000,)), (csum.csum_replace2, (0, 0x10000, 0)), (csum.from32to16, (-5,)),
])
def test_values_outside_their_width_raise(func, args):
    """Values outside their width raise ValueError (never silently masked)."""
    with pytest.raises(ValueError):
        func(*args)


def test_csum_fold_bytes_is_the_field():
    """csum_fold_bytes: include/asm-generic/checksum.h folds 0x1234abcd to ~(0x1234 + 0xabcd) = ~0xbe01 = 0x41fe
    (worked by hand); a little-endian CPU stores that __sum16 as the bytes fe 41, which read big-endian are
    the checksum scapy and Wireshark show for the same bytes (0xfe41)."""
    assert csum.csum_fold(0x1234ABCD) == 0x41FE
    assert csum.csum_fold_bytes(0x1234ABCD) == b"\xfe\x41"
    assert csum.csum_fold_bytes(0) == b"\xff\xff"
    with pytest.raises(csum.CsumValueError, match="wsum"):
        csum.csum_fold_bytes(1 << 32)
