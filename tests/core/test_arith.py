"""csum/core/arith.py (unchecked primitives) against the naive oracle, and csum/core/arith_np.py against it.

Expected values: tests/oracle.py (RFC 1071 section 4.1, step by step) and the plain
``(n - 1) % (2**w - 1) + 1`` definition of the canonical sum; the numpy twin must give the
Python primitive's bits element by element (parity), including the 0 / 0xffff / 0xffffffff corners.
"""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from oracle import fold16, ones_add32

from csum.core import arith, arith_np

U32 = st.integers(0, 0xFFFFFFFF)
CORNERS32 = [0, 1, 0xFFFF, 0x10000, 0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF]


@given(U32, U32)
@example(0xFFFFFFFF, 0xFFFFFFFF)
@example(0xFFFFFFFF, 1)
def test_add32_and_sub32_match_the_oracle(a, b):
    """Invariant: add32 is the step-by-step end-around add; sub32(a, b) is add32(a, ~b)."""
    assert arith.add32(a, b) == ones_add32(a, b)
    assert arith.sub32(a, b) == ones_add32(a, b ^ 0xFFFFFFFF)


@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
@example(0xFFFF, 0xFFFF)
def test_add16_and_sub16_match_the_oracle(a, b):
    """Invariant: add16 is the 16-bit end-around add (oracle fold16 of the integer sum)."""
    assert arith.add16(a, b) == fold16(a + b)
    assert arith.sub16(a, b) == fold16(a + (b ^ 0xFFFF))


@given(U32)
@example(0)
@example(0xFFFF0000)
@example(0xFFFFFFFF)
def test_from32to16_and_fold_match_the_oracle(x):
    """Invariant: from32to16 is the oracle's fold (0 stays 0, 0xffff0000 gives 0xffff); fold complements it."""
    assert arith.from32to16(x) == fold16(x)
    assert arith.fold(x) == fold16(x) ^ 0xFFFF


@given(st.integers(0, (1 << 64) - 1))
@example((1 << 64) - 1)
def test_from64to32_is_the_canonical_residue(x):
    """Invariant: from64to32 is congruent to x mod 2**32 - 1 and 0 only for 0 (0xffffffff stays -0)."""
    r = arith.from64to32(x)
    assert r <= 0xFFFFFFFF and r % 0xFFFFFFFF == x % 0xFFFFFFFF and (r == 0) == (x == 0)


@given(st.integers(0, 0xFFFF), U32, st.integers(0, 31))
def test_swab16_and_ror32_by_bytes(x, y, n):
    """swab16 exchanges the bytes (int.from_bytes with the other order); ror32 by n is rol by 32 - n."""
    assert arith.swab16(x) == int.from_bytes(x.to_bytes(2, "big"), "little")
    assert arith.ror32(y, n) == ((y << (32 - n)) | (y >> n)) & 0xFFFFFFFF


@given(st.builds(lambda raw, shift: int.from_bytes(raw, "little") << shift, st.binary(max_size=4000),
                 st.integers(0, 40000)), st.sampled_from([8, 16, 32, 64]))
@example(1 << 69999, 16)
@example((1 << 65536) - 1, 32)
def test_canonical_folding_of_large_ints(n, width):
    """canonical's fold of large ints == the plain (n - 1) % (2**w - 1) + 1 definition (0 stays 0)."""
    want = 0 if n == 0 else (n - 1) % ((1 << width) - 1) + 1
    assert arith.canonical(n, width) == want


@given(st.lists(U32, min_size=1, max_size=50), st.lists(U32, min_size=1, max_size=50), st.integers(1, 31))
@example(CORNERS32, CORNERS32[::-1], 8)
def test_numpy_twin_gives_the_same_bits(xs, ys, n):
    """Parity: each csum/core/arith_np.py function equals its csum/core/arith.py namesake element by element."""
    k = min(len(xs), len(ys))
    xs, ys = xs[:k], ys[:k]
    a, b = np.array(xs, np.uint64), np.array(ys, np.uint64)
    assert arith_np.add32(a, b).tolist() == [arith.add32(x, y) for x, y in zip(xs, ys)]
    assert arith_np.from32to16(a).tolist() == [arith.from32to16(x) for x in xs]
    assert arith_np.fold(a).tolist() == [arith.fold(x) for x in xs]
    assert arith_np.ror32(a, n).tolist() == [arith.ror32(x, n) for x in xs]
    assert arith_np.swab16(a & np.uint64(0xFFFF)).tolist() == [arith.swab16(x & 0xFFFF) for x in xs]
    totals = [x + y for x, y in zip(xs, ys)]
    t = np.array(totals, np.uint64)
    for width in (16, 32):
        m = np.uint64((1 << width) - 1)
        got = arith_np.canonical(t % m, t != 0, width).tolist()
        assert got == [arith.canonical(v, width) for v in totals]


def test_numpy_canonical_keeps_zero_and_minus_zero_apart():
    """Corner: a zero total stays 0; a non-zero multiple of 0xffff is -0 (0xffff), never 0."""
    t = np.array([0, 0xFFFF, 2 * 0xFFFF], np.uint64)
    assert arith_np.canonical(t % np.uint64(0xFFFF), t != 0, 16).tolist() == [0, 0xFFFF, 0xFFFF]
