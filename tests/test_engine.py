"""csum/_engine.py (and csum/_speedups.c): ones_sum and canonical on every engine.

Independent sources: tests/oracle.py (naive RFC 1071 16-bit loop), a naive
word-by-word end-around-carry loop of any width written here, scapy.utils.checksum
and dpkt.in_cksum. Every engine-dependent test runs once per available engine
(the ``engine`` fixture of tests/engines.py).
"""

import os
import subprocess
import sys

import dpkt
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scapy.utils import checksum as scapy_checksum

import csum
from csum import _engine
from csum.errors import CsumTypeError, CsumValueError
from csum.testing import buffers
from oracle import ones_sum16

FIXTURE_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
HAS_C = "c" in _engine.available_engines()
BUILT_C = _engine._speedups is not None
#: Sizes around the engines' switch points and the C loop's 8-byte words.
SIZES = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 20, 40, 63, 64, 65, 1499, 1500, _engine.NUMPY_MIN_BYTES - 1,
         _engine.NUMPY_MIN_BYTES, _engine.NUMPY_MIN_BYTES + 1, 65535, 65536, 100003]


def naive_ones_sum(data: bytes, width: int, byteorder: str) -> int:
    """Word by word with an explicit end-around carry (RFC 1071 section 4.1, generalised to ``width``)."""
    k = width // 8
    data = data + bytes(-len(data) % k)
    top, total = 1 << width, 0
    for i in range(0, len(data), k):
        total += int.from_bytes(data[i : i + k], byteorder)
        if total >= top:
            total -= top - 1
    return total


@FIXTURE_OK
@given(buffers(max_size=3000), st.sampled_from([8, 16, 32, 64]), st.sampled_from(["little", "big"]))
@example(b"", 16, "big")
@example(b"\xff" * 3000, 64, "big")
def test_ones_sum_equals_naive_loop(engine, data, width, byteorder):
    """ones_sum == a naive end-around-carry loop, every width the C part takes, both byte orders."""
    assert _engine.ones_sum(data, width, byteorder) == naive_ones_sum(data, width, byteorder)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("fill", ["random", "ones", "zeros"])
def test_ones_sum16_edges_equal_oracle(engine, size, fill):
    """Empty, 1 byte, odd lengths, all 0xff (sums to 0xffff, never 0), all zero: == tests/oracle.py."""
    data = {"random": os.urandom(size), "ones": b"\xff" * size, "zeros": bytes(size)}[fill]
    for order in ("little", "big"):
        assert _engine.ones_sum(data, 16, order) == ones_sum16(data, order)
        assert _engine.ones_sum(bytearray(data), 16, order) == ones_sum16(data, order)


@FIXTURE_OK
@given(buffers(max_size=3000))
def test_internet_checksum_equals_scapy_and_dpkt(engine, data):
    """csum.internet_checksum == scapy.utils.checksum == dpkt.in_cksum on every engine."""
    assert csum.internet_checksum(data) == scapy_checksum(data) == dpkt.in_cksum(data)


def test_other_widths_go_to_python(engine):
    """A width the C part does not take (24, 128) is handed to the Python engine: == the naive loop."""
    data = os.urandom(1001)
    for width in (24, 128):
        assert _engine.ones_sum(data, width, "little") == naive_ones_sum(data, width, "little")


def test_numpy_slices_and_other_dtypes(engine):
    """A contiguous numpy slice sums as its bytes; a uint16 or 2-D contiguous array as its raw bytes."""
    arr = np.frombuffer(os.urandom(4099), dtype=np.uint8)
    part = arr[3:4000]
    assert _engine.ones_sum(part, 16, "big") == ones_sum16(part.tobytes(), "big")
    wide = np.frombuffer(os.urandom(4000), dtype=np.uint16).reshape(40, 50)
    assert _engine.ones_sum(wide, 16, "little") == ones_sum16(wide.tobytes(), "little")


def test_non_contiguous_views_are_rejected(engine):
    """Non-contiguous views are not copied: CsumValueError (code not-contiguous) naming the argument."""
    arr = np.zeros(100, dtype=np.uint8)
    for view in (arr[::2], memoryview(bytes(100))[::3], np.zeros((10, 10), np.uint8).T):
        with pytest.raises(CsumValueError, match="^buf must be C-contiguous") as err:
            _engine.ones_sum(view, 16, "big", "buf")
        assert err.value.code == "not-contiguous"
        with pytest.raises(CsumValueError, match="C-contiguous"):
            csum.internet_checksum(view)


def test_non_buffers_are_rejected(engine):
    """str and non-buffer objects: CsumTypeError naming the argument, whatever the engine."""
    with pytest.raises(CsumTypeError, match="^buf must be bytes-like, not str"):
        _engine.ones_sum("abc", 16, "little", "buf")
    with pytest.raises(CsumTypeError, match="^view must be a bytes-like object"):
        _engine.ones_sum(12, 16, "little")


@pytest.mark.skipif(not HAS_C, reason="csum._speedups not built")
@settings(max_examples=300)  # each example sums at every block size: 300 keep it under a second
@given(buffers(max_size=2000), st.sampled_from([8, 16, 32, 64]), st.sampled_from(["little", "big"]))
def test_c_block_combining(data, width, byteorder):
    """The C loop's per-block sums, combined end-around, give the one-block answer at every block size."""
    from csum import _speedups

    want = naive_ones_sum(data, width, byteorder)
    for block in (8, 16, 24, 64, 1 << 12):
        assert _speedups.ones_sum_blocked(data, width, byteorder, block) == want


@pytest.mark.skipif(not HAS_C, reason="csum._speedups not built")
def test_c_block_bound_with_all_ones():
    """All-0xff words make every accumulator as large as it can be: a 2**20-word block of them stays exact.

    Per block each 32-bit lane accumulator ends at words * (2**32 - 1); the C comment proves the
    2**31-word block bound; here all-ones input, block sizes from 1 word up, == the naive loop's 0xff..ff.
    """
    from csum import _speedups

    data = b"\xff" * (8 << 20)
    for block in (8, 8 << 10, 8 << 20):
        for width in (16, 32, 64):
            assert _speedups.ones_sum_blocked(data, width, "little", block) == (1 << width) - 1


def test_numpy_chunk_combining(monkeypatch):
    """The numpy engine's chunked reductions (tiny chunks here) give the naive loop's answer."""
    monkeypatch.setattr(_engine, "_NUMPY_CHUNK", 64)
    data = os.urandom(10_007)
    for width in (8, 16, 32, 64):
        for order in ("little", "big"):
            assert _engine._numpy_sum(memoryview(data), width, order) == naive_ones_sum(data, width, order)


def test_sparse_buffer_over_4_gib(engine):
    """A 4 GiB + 7 byte buffer (numpy zeros: untouched pages cost no memory) with 5 non-zero bytes.

    Expected value by hand (independent of any engine): little-endian words 0x3412 at 0, 0xff00 at
    2**32 - 2, 0x00ee at 2**32 and 0x007f at 2**32 + 6; 0x3412 + 0xff00 + 0xee + 0x7f folds to 0x3480.
    The python engine would build a 4 GiB integer: skipped there.
    """
    if engine == "python":
        pytest.skip("pure-Python engine: a 4 GiB int.from_bytes is not a test")
    size = (1 << 32) + 7
    arr = np.zeros(size, dtype=np.uint8)
    arr[0:2] = (0x12, 0x34)
    arr[(1 << 32) - 1] = 0xFF
    arr[1 << 32] = 0xEE
    arr[size - 1] = 0x7F
    assert _engine.ones_sum(arr, 16, "little") == 0x3480
    assert _engine.ones_sum(arr, 16, "big") == 0x8034


@given(st.builds(lambda raw, shift: int.from_bytes(raw, "little") << shift, st.binary(max_size=4000),
                 st.integers(0, 40000)), st.sampled_from([8, 16, 32, 64]))
@example(1 << 69999, 16)
@example((1 << 65536) - 1, 32)
def test_canonical_folding_of_large_ints(n, width):
    """canonical's fold of large ints == the plain (n - 1) % (2**w - 1) + 1 definition (0 stays 0)."""
    want = 0 if n == 0 else (n - 1) % ((1 << width) - 1) + 1
    assert _engine.canonical(n, width) == want


def test_use_engine_rejects_unknown_names():
    """use_engine names the accepted engines when given another."""
    with pytest.raises(CsumValueError, match="engine must be one of"):
        _engine.use_engine("fortran")


def _version(env_value: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CSUM_ENGINE": env_value}
    return subprocess.run([sys.executable, "-m", "csum", "--version"], capture_output=True, text=True, env=env,
                          timeout=60)


def test_csum_engine_variable_selects_and_version_reports():
    """CSUM_ENGINE=python forces the pure-Python engine and ``csum --version`` says so; a bad value fails."""
    out = _version("python")
    assert out.returncode == 0 and out.stdout.strip().endswith("(engine: python)")
    best = _version("auto")
    assert best.stdout.strip().endswith(f"(engine: {'c' if BUILT_C else 'numpy'})")
    bad = _version("fortran")
    assert bad.returncode != 0 and "CSUM_ENGINE must be auto, c, numpy or python" in bad.stderr
