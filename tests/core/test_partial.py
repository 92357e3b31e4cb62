"""csum/core/partial.py: generic csum_partial, internet_checksum, ip_fast_csum, verify_checksum.

Independent sources: RFC 1071 section 3's worked example, scapy.utils.checksum,
tests/oracle.py (a naive RFC 1071 loop), and tests/vectors/helpers/generic.txt
(lib/checksum.c and include/net/checksum.h compiled outside the repository; see its header).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import ones_add32, ones_sum16
from scapy.utils import checksum as scapy_checksum
from vectors import ROOT, _rows

import csum
from csum.testing import aligns, buffers, seeds

RFC1071_EXAMPLE = bytes.fromhex("0001f203f4f5f6f7")


def test_rfc1071_section3_example():
    """RFC 1071 section 3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (BE), 0xf2dd (LE); checksum 0x220d."""
    assert csum.internet_checksum(RFC1071_EXAMPLE) == 0x220D
    assert csum.do_csum(RFC1071_EXAMPLE) == 0xF2DD


@given(buffers())
def test_byte_order_independence(data):
    """RFC 1071 section 2(B): the little-endian sum is the byte swap of the big-endian sum."""
    le = csum.do_csum(data)
    be = ones_sum16(data, "big")
    assert le == ((be & 0xFF) << 8 | be >> 8)


@given(buffers(max_size=2000))
def test_internet_checksum_equals_scapy(data):
    """internet_checksum == scapy.utils.checksum for every input, odd lengths and corners included."""
    assert csum.internet_checksum(data) == scapy_checksum(data)


@given(buffers(), seeds())
def test_csum_partial_matches_oracle(data, seed):
    """csum_partial == the oracle's end-around add of the seed to the folded LE sum (lib/checksum.c semantics)."""
    assert csum.csum_partial(data, seed) == ones_add32(ones_sum16(data, "little"), seed)


@given(buffers(), seeds(), aligns())
def test_generic_result_does_not_depend_on_align(data, seed, align):
    """lib/checksum.c reads odd addresses differently but swaps back: every align gives the same u32."""
    assert csum.csum_partial(data, seed, align=align) == csum.csum_partial(data, seed)


@given(buffers(max_size=200))
def test_verify_checksum_of_filled_in_buffer(data):
    """A buffer followed by its own checksum (even length) verifies; flipping one bit breaks it."""
    data = data + b"\0" * (len(data) % 2)
    filled = data + csum.internet_checksum(data).to_bytes(2, "big")
    assert csum.verify_checksum(filled)
    broken = bytes([filled[0] ^ 1]) + filled[1:]
    assert not csum.verify_checksum(broken)


def test_all_zero_data_has_checksum_ffff():
    """Corner: all-zero data sums to +0; its checksum is 0xffff (scapy agrees)."""
    assert csum.internet_checksum(b"\0" * 20) == 0xFFFF == scapy_checksum(b"\0" * 20)


def test_all_ones_data_has_checksum_0000():
    """Corner: all-0xff data sums to -0 (0xffff); its checksum is 0x0000 (scapy agrees)."""
    assert csum.internet_checksum(b"\xff" * 20) == 0x0000 == scapy_checksum(b"\xff" * 20)


def test_empty_buffer():
    """Corner: an empty buffer sums to 0; csum_partial returns the seed unchanged (lib/checksum.c len<=0)."""
    assert csum.csum_partial(b"", 0xFFFFFFFF) == 0xFFFFFFFF
    assert csum.internet_checksum(b"") == 0xFFFF


def test_seed_is_added_after_the_fold():
    """Corner: ff ff with seed 0xffffffff gives 0xffff: do_csum folds to 0xffff, then ea32(0xffff, 0xffffffff)."""
    assert csum.csum_partial(b"\xff\xff", 0xFFFFFFFF) == 0xFFFF


@pytest.mark.parametrize("make", [bytes, bytearray, memoryview, lambda b: np.frombuffer(b, dtype=np.uint8),
                                  lambda b: np.frombuffer(b + b"\0" * (len(b) % 2), dtype=np.uint16)[: len(b) // 2]])
def test_accepts_every_contiguous_buffer(make):
    """bytes, bytearray, memoryview and numpy arrays (any dtype, read as their bytes) give the same result."""
    data = bytes(range(40))
    assert csum.csum_partial(make(data)) == csum.csum_partial(data)


@given(buffers(max_size=64))
def test_ip_compute_csum_is_complement_of_do_csum(data):
    """lib/checksum.c ip_compute_csum: ~do_csum as a 16-bit value; equals the oracle's LE checksum."""
    assert csum.ip_compute_csum(data) == ~ones_sum16(data, "little") & 0xFFFF


HELPERS = [row for row in _rows(ROOT / "helpers" / "generic.txt")]


@pytest.mark.parametrize("row", [r for r in HELPERS if r[0] == "ip_fast_csum"], ids=lambda r: r[2])
def test_ip_fast_csum_matches_kernel(row):
    """ip_fast_csum on random/corner headers == lib/checksum.c compiled outside the repo (helpers/generic.txt)."""
    _, ihl, result, header = row
    assert csum.ip_fast_csum(bytes.fromhex(header), int(ihl)) == int(result, 16)


def test_fold_helpers_match_kernel():
    """csum_fold and from32to16 on 512 u32 values each == include/net/checksum.h, include/asm-generic/checksum.h compiled."""
    bad = []
    for name, value, result in (r for r in HELPERS if r[0] in ("csum_fold", "csum_from32to16")):
        func = csum.csum_fold if name == "csum_fold" else csum.from32to16
        if func(int(value, 16)) != int(result, 16):
            bad.append((name, value, result))
    assert not bad


def test_ip_fast_csum_of_scapy_header_is_zero():
    """An IPv4 header whose checksum scapy filled in gives ip_fast_csum == 0 (RFC 791 receiver check)."""
    from scapy.layers.inet import IP

    header = bytes(IP(src="192.0.2.1", dst="198.51.100.2", ttl=3, options=b"\x01\x01\x01\x00"))
    assert csum.ip_fast_csum(header, header[0] & 0xF) == 0


@given(st.binary(min_size=0, max_size=19))
def test_ip_fast_csum_rejects_short_header(header):
    """A header shorter than ihl*4 bytes is an error naming iph, not a sum of fewer bytes."""
    with pytest.raises(ValueError, match="iph"):
        csum.ip_fast_csum(header, 5)


def _kinds(data: bytes) -> list:
    """The same bytes as every buffer kind a caller passes: bytes, bytearray, memoryview, numpy uint8 and uint16."""
    kinds = [data, bytearray(data), memoryview(data), np.frombuffer(data, dtype=np.uint8)]
    if len(data) % 2 == 0:
        kinds.append(np.frombuffer(data, dtype=np.uint16))
    return kinds


@pytest.mark.usefixtures("every_engine")
@given(buffers(max_size=300), seeds(), aligns())
def test_csum_partial_fast_path_equals_oracle_for_every_buffer_kind(data, seed, align):
    """The C fast path (csum.engine.fast_path, taken when the C engine is bound) and the checked Python
    function both give the oracle's value, for every buffer kind and argument spelling."""
    want = ones_add32(ones_sum16(data, "little"), seed)
    checked = getattr(csum.csum_partial, "slow", csum.csum_partial)
    for buf in _kinds(data):
        assert csum.csum_partial(buf) == checked(buf) == ones_sum16(data, "little")
        assert csum.csum_partial(buf, seed) == csum.csum_partial(buf, seed, align=align) == want
        assert csum.csum_partial(buf, seed=seed, align=align) == checked(buf, seed, align=align) == want


@pytest.mark.usefixtures("every_engine")
@pytest.mark.parametrize("args, kwargs, error, message", [
    ((b"ab", -1), {}, csum.CsumValueError, "^seed must be an int in 0..0xffffffff, got -0x1"),
    ((b"ab", 1 << 32), {}, csum.CsumValueError, "^seed must be an int in 0..0xffffffff"),
    ((b"ab", 1.0), {}, csum.CsumTypeError, "^seed must be an int in 0..0xffffffff, not float"),
    ((b"ab", True), {}, csum.CsumTypeError, "^seed must be an int in 0..0xffffffff, not bool"),
    ((b"ab",), {"align": 8}, csum.CsumValueError, "^align must be in 0..7"),
    ((b"ab",), {"align": False}, csum.CsumTypeError, "^align must be an int in 0..7, not bool"),
    (("ab",), {}, csum.CsumTypeError, "^buf must be bytes-like, not str"),
    ((memoryview(b"abcd")[::2],), {}, csum.CsumValueError, "^buf must be C-contiguous"),
    ((b"ab", 0, 1), {}, TypeError, "positional argument"),
    ((b"ab",), {"salt": 1}, TypeError, "unexpected keyword argument 'salt'"),
])
def test_csum_partial_arguments_the_fast_path_declines_get_the_checked_errors(args, kwargs, error, message):
    """Whatever the C fast path does not take reaches the checked function: csum's error naming the argument."""
    with pytest.raises(error, match=message):
        csum.csum_partial(*args, **kwargs)


def test_csum_partial_looks_like_a_function():
    """Signature, name, docstring and pickling are the checked function's, with or without the fast path."""
    import inspect
    import pickle

    assert str(inspect.signature(csum.csum_partial)) == \
        "(buf: 'object', seed: 'Wsum' = 0, *, align: 'int' = 0) -> 'Wsum'"
    assert csum.csum_partial.__name__ == "csum_partial"
    assert csum.csum_partial.__doc__.startswith("lib/checksum.c ``csum_partial``")
    assert pickle.loads(pickle.dumps(csum.csum_partial)) is csum.csum_partial


def test_internet_checksum_bytes_is_the_field_as_transmitted():
    """The bytes twin of internet_checksum: RFC 1071 section 3's example (00 01 f2 03 f4 f5 f6 f7:
    sum ddf2, checksum 220d) gives the field bytes 22 0d, in network order."""
    assert csum.internet_checksum_bytes(bytes.fromhex("0001f203f4f5f6f7")) == b"\x22\x0d"
