"""csum/core/stream.py: the running Checksum object and scatter/gather internet_checksum_iov.

Oracle: tests/oracle.py (naive RFC 1071 loops over the joined bytes); peers' behaviour
(dpkt, scapy, NuttX) is described in the docstrings of the tests that guard against it.
Tests using the ``every_engine`` fixture (tests/engines.py) run once per summing engine.
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from oracle import fold16, ones_add32, ones_sum16, rfc1071_checksum

import csum
from csum.core.stream import Checksum, internet_checksum_iov
from csum.errors import CsumTypeError, CsumValueError
from csum.testing import buffers, chunked, seeds


def oracle_value(data: bytes, seed: int = 0) -> int:
    """Wire checksum of ``data`` plus a little-endian-held u32 seed, from the naive model."""
    le = fold16(ones_add32(ones_sum16(data, "little"), seed))  # what csum_partial + csum_fold sum
    return int.from_bytes((~le & 0xFFFF).to_bytes(2, "little"), "big")


@given(chunked(max_chunks=20), seeds())
@example((b"\xaa\xbb\xcc\xdd\xee", [b"\xaa\xbb\xcc", b"", b"\xdd\xee"]), 0)
@example((b"\x01", [b"", b"\x01", b""]), 0xFFFFFFFF)
def test_every_split_gives_the_one_shot_value(split, seed):
    """Invariant: any split of the data into 1..20 chunks (empty ones included) gives the
    one-shot value. Expected: tests/oracle.py on the joined bytes; csum.csum_partial for ``partial``."""
    data, chunks = split
    c = Checksum(seed=seed)
    for chunk in chunks:
        c.update(chunk)
    assert c.length == len(data)
    assert c.value == oracle_value(data, seed)
    assert c.partial == csum.csum_partial(data, seed)
    if seed == 0:
        assert c.value == rfc1071_checksum(data) == csum.internet_checksum(data)


@pytest.mark.usefixtures("every_engine")
def test_empty_chunk_after_odd_chunk_nuttx_20010():
    """Regression, apache/nuttx#20010: NuttX's chained ``checksum()`` keeps an ``odd`` flag between
    fragments; a zero-length fragment after an odd-length one read ``data[0]`` of the empty buffer and
    cleared the flag, corrupting the sum (fixed by returning early for len == 0, nuttx PR #20058).
    The issue's case is AA BB CC | empty | DD EE; expected: the oracle on the contiguous bytes."""
    c = Checksum(b"\xaa\xbb\xcc")
    c.update(b"")
    c.update(bytearray())
    c.update(b"\xdd\xee")
    assert c.value == rfc1071_checksum(b"\xaa\xbb\xcc\xdd\xee")
    assert internet_checksum_iov([b"\xaa\xbb\xcc", b"", b"\xdd\xee"]) == c.value


def test_odd_chunk_then_more_data_dpkt_in_cksum_add():
    """Regression, dpkt ``in_cksum_add`` (dpkt 1.9.8): each call sums its buffer on its own, an odd
    last byte as a zero-padded word, so feeding b"\\x01" then b"\\x02\\x03" and finishing with
    ``in_cksum_done`` gives 0xfcfc, the checksum of 01 00 02 03, not of 01 02 03. csum keeps the
    pending byte; expected: oracle on 01 02 03 (0xfbfd)."""
    c = Checksum(b"\x01")
    c.update(b"\x02\x03")
    assert c.value == rfc1071_checksum(b"\x01\x02\x03") == 0xFBFD
    assert c.value != rfc1071_checksum(b"\x01\x00\x02\x03")  # what per-chunk padding computes


@pytest.mark.usefixtures("every_engine")
def test_split_at_every_point():
    """Invariant: a 61-byte buffer split at every single point, and at every pair of points, gives the
    one-shot value. Expected: oracle."""
    data = bytes((i * 37 + 11) & 0xFF for i in range(61))
    want = rfc1071_checksum(data)
    for i in range(len(data) + 1):
        c = Checksum(data[:i])
        c.update(data[i:])
        assert c.value == want, i
        for j in range(i, len(data) + 1, 7):
            assert internet_checksum_iov([data[:i], data[i:j], data[j:]]) == want, (i, j)


@pytest.mark.usefixtures("every_engine")
def test_more_than_two_folds_large_buffer_scapy_checksum():
    """Invariant: buffers whose word sum needs more than two folds. scapy.utils.checksum folds twice
    and masks (``s = (s >> 16) + (s & 0xffff); s += s >> 16``): 65538 words of 0xffff plus a word
    of 1 (131078 bytes) sum to 0x10000ffff, whose second fold leaves a carry that the mask drops, so
    scapy 2.8 returns 0xffff. Expected: the oracle (folds until no carry), 0xfeff; streamed in
    1500-byte chunks and one-shot."""
    from scapy.utils import checksum as scapy_checksum

    data = b"\xff" * 131076 + b"\x01\x00"
    want = rfc1071_checksum(data)
    assert want == 0xFEFF
    c = Checksum()
    for i in range(0, len(data), 1500):
        c.update(data[i : i + 1500])
    assert c.value == csum.internet_checksum(data) == want
    assert scapy_checksum(data) == 0xFFFF  # scapy's two-fold result for this input: the case shown


@pytest.mark.usefixtures("every_engine")
@pytest.mark.parametrize("size", [1 << 17, (1 << 20) + 1, 3 * (1 << 20) + 3])
def test_large_buffer_in_odd_chunks(size):
    """Invariant: large buffers (up to 3 MiB) streamed in 1499-byte chunks equal the oracle."""
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    c = Checksum()
    for i in range(0, size, 1499):
        c.update(data[i : i + 1499])
    assert c.value == rfc1071_checksum(data)


@given(chunked(max_chunks=6), chunked(max_chunks=6), seeds(), seeds())
def test_combine_is_concatenation(a, b, seed_a, seed_b):
    """Invariant: combine(other) is the checksum of self's bytes followed by other's, seeds added
    with csum_add. Expected: oracle on a + b; csum_partial for ``partial``. Operands stay unchanged."""
    (da, ca), (db, cb) = a, b
    left, right = Checksum(seed=seed_a), Checksum(seed=seed_b)
    for chunk in ca:
        left.update(chunk)
    for chunk in cb:
        right.update(chunk)
    before = (left.partial, right.partial)
    both = left.combine(right)
    seed = csum.csum_add(seed_a, seed_b)
    assert both.partial == csum.csum_partial(da + db, seed)
    assert both.value == oracle_value(da + db, seed)
    assert both.length == len(da) + len(db)
    assert (left.partial, right.partial) == before


@given(buffers(), buffers())
def test_copy_is_independent(a, b):
    """Invariant: a copy continues on its own; the original is unchanged. Expected: oracle."""
    c = Checksum(a)
    d = c.copy()
    d.update(b)
    assert c.value == rfc1071_checksum(a)
    assert d.value == rfc1071_checksum(a + b)


@given(buffers())
def test_digest_forms(data):
    """digest() is the value in wire (big-endian) order, hexdigest() its hex, sum16 the
    little-endian-held field (csum_fold of partial). Expected: oracle."""
    c = Checksum(data)
    want = rfc1071_checksum(data)
    assert c.digest() == want.to_bytes(2, "big")
    assert c.hexdigest() == f"{want:04x}"
    assert c.sum16 == int.from_bytes(want.to_bytes(2, "big"), "little") == csum.csum_fold(c.partial)
    assert c.digest_size == len(c.digest()) == 2


@given(st.lists(buffers(max_size=40), max_size=12))
def test_iov_matches_joined(parts):
    """internet_checksum_iov over a list equals the oracle on the joined bytes (Wireshark's vector
    in_cksum contract), for bytes, bytearray, memoryview and numpy buffers alike."""
    joined = b"".join(parts)
    assert internet_checksum_iov(parts) == rfc1071_checksum(joined)
    kinds = [bytearray, memoryview, lambda p: np.frombuffer(p, dtype=np.uint8)]
    mixed = [kinds[i % 3](p) for i, p in enumerate(parts)]
    assert internet_checksum_iov(iter(mixed)) == rfc1071_checksum(joined)


def test_update_copies_nothing_it_keeps():
    """A bytearray changed after update() does not change the running checksum. Expected: oracle."""
    buf = bytearray(b"\x12\x34\x56")
    c = Checksum(buf)
    buf[:] = b"\x00\x00\x00"
    assert c.value == rfc1071_checksum(b"\x12\x34\x56")


def test_bad_input_names_the_argument():
    """Bad arguments raise csum.errors types naming the argument."""
    with pytest.raises(CsumTypeError, match="chunk"):
        Checksum().update("text")
    with pytest.raises(CsumTypeError, match="data"):
        Checksum(3)
    with pytest.raises(CsumValueError, match="seed"):
        Checksum(seed=1 << 32)
    with pytest.raises(CsumTypeError, match=r"buffers\[1\]"):
        internet_checksum_iov([b"ok", "no"])
    with pytest.raises(CsumTypeError, match="buffers"):
        internet_checksum_iov(b"one buffer")
    with pytest.raises(CsumTypeError, match="other"):
        Checksum().combine(b"x")
