"""csum/engine/__init__.py, csum/engine/native.py and csum/engine/_speedups.c: every engine object, and the one bound at import.

Independent sources: tests/oracle.py (naive RFC 1071 16-bit loop), a naive
word-by-word end-around-carry loop of any width written here, scapy.utils.checksum
and dpkt.in_cksum. Engine tests take the ``engine`` fixture (tests/engines.py: one
Engine object per engine, called directly); tests marked ``every_engine`` across
the suite run again in a subprocess under each other ``CSUM_ENGINE``.
"""

import os
import subprocess
import sys
from pathlib import Path

import dpkt
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from oracle import ones_sum16
from scapy.utils import checksum as scapy_checksum

import csum
from csum import engine as _engine
from csum.engine import native
from csum.errors import CsumTypeError, CsumValueError
from csum.testing import buffers

FIXTURE_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
HAS_C = "c" in _engine.ENGINES
#: Sizes around the engines' switch points and the C loop's 8-byte words.
SIZES = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 20, 40, 63, 64, 65, 1499, 1500, _engine.NUMPY_MIN_BYTES - 1,
         _engine.NUMPY_MIN_BYTES, _engine.NUMPY_MIN_BYTES + 1, 65535, 65536, 100003]
ROOT = Path(__file__).resolve().parents[2]


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
    assert engine.ones_sum(data, width, byteorder) == naive_ones_sum(data, width, byteorder)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("fill", ["random", "ones", "zeros"])
def test_ones_sum16_edges_equal_oracle(engine, size, fill):
    """Empty, 1 byte, odd lengths, all 0xff (sums to 0xffff, never 0), all zero: == tests/oracle.py."""
    data = {"random": os.urandom(size), "ones": b"\xff" * size, "zeros": bytes(size)}[fill]
    for order in ("little", "big"):
        assert engine.ones_sum(data, 16, order) == ones_sum16(data, order)
        assert engine.ones_sum(bytearray(data), 16, order) == ones_sum16(data, order)


@pytest.mark.every_engine
@given(buffers(max_size=3000))
def test_internet_checksum_equals_scapy_and_dpkt(data):
    """csum.internet_checksum == scapy.utils.checksum == dpkt.in_cksum (on every engine: every_engine)."""
    assert csum.internet_checksum(data) == scapy_checksum(data) == dpkt.in_cksum(data)


def test_engines_refuse_what_they_do_not_sum(engine):
    """Every engine returns NotImplemented (no error, no message) for what it does not sum: widths other
    than 8/16/32/64, byte orders other than little/big, non-buffers, non-contiguous buffers; the checked
    ``_engine.ones_sum`` then words the error."""
    for width in (0, 24, 128, 16.0, True):
        assert engine.ones_sum(b"ab", width, "little") is NotImplemented
    assert engine.ones_sum(b"ab", 16, "middle") is NotImplemented
    for bad in ("abc", 12, [1, 2]):
        assert engine.ones_sum(bad, 16, "little") is NotImplemented
    for view in (memoryview(bytes(100))[::3], np.zeros((10, 10), np.uint8).T):
        assert engine.ones_sum(view, 16, "little") is NotImplemented
    assert engine.ones_sum(b"\x01\x02", 16, "big", "buf") == 0x0102  # the name argument is accepted


@given(buffers(max_size=300), st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=20),
       st.sampled_from([8, 16, 32, 64]), st.sampled_from(["little", "big"]))
@example(b"\xff" * 64, [(0, 32), (32, 32)], 64, "big")  # equal back-to-back rows: numpy's reshape path
@example(b"\x01\x02\x03", [(1, 2), (1, 2)], 16, "little")  # equal rows that overlap: not the reshape path
def test_ones_sum_many_equals_naive_loop_per_row(data, spans, width, byteorder):
    """Every engine's row sums == the naive loop on each slice (odd offsets, overlapping and empty rows)."""
    spans = [(min(o, len(data)), min(n, len(data) - min(o, len(data)))) for o, n in spans]
    offsets = np.array([o for o, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    want = [naive_ones_sum(data[o : o + n], width, byteorder) for o, n in spans]
    for engine in _engine.ENGINES.values():
        out = np.zeros(len(spans), dtype=np.uint64)
        engine.ones_sum_many(data, offsets, lengths, out, width, byteorder)
        assert out.tolist() == want, engine.name


def test_ones_sum_many_refuses_rows_outside_the_buffer(engine):
    """A row past the end or a negative offset is ValueError on every engine (csum.batch checks first)."""
    out = np.zeros(1, dtype=np.uint64)
    for offs, lens in (([2], [3]), ([-1], [1]), ([0], [-1])):
        with pytest.raises(ValueError):
            engine.ones_sum_many(b"abcd", np.array(offs, np.int64), np.array(lens, np.int64), out, 16, "big")


def test_numpy_slices_and_other_dtypes(engine):
    """A contiguous numpy slice sums as its bytes; a uint16 or 2-D contiguous array as its raw bytes."""
    arr = np.frombuffer(os.urandom(4099), dtype=np.uint8)
    part = arr[3:4000]
    assert engine.ones_sum(part, 16, "big") == ones_sum16(part.tobytes(), "big")
    wide = np.frombuffer(os.urandom(4000), dtype=np.uint16).reshape(40, 50)
    assert engine.ones_sum(wide, 16, "little") == ones_sum16(wide.tobytes(), "little")


def test_non_contiguous_views_are_rejected():
    """Non-contiguous views are not copied: CsumValueError (code not-contiguous) naming the argument."""
    arr = np.zeros(100, dtype=np.uint8)
    for view in (arr[::2], memoryview(bytes(100))[::3], np.zeros((10, 10), np.uint8).T):
        with pytest.raises(CsumValueError, match="^buf must be C-contiguous") as err:
            _engine.ones_sum(view, 16, "big", "buf")
        assert err.value.code == "not-contiguous"
        with pytest.raises(CsumValueError, match="C-contiguous"):
            csum.internet_checksum(view)


def test_non_buffers_are_rejected():
    """str and non-buffer objects: CsumTypeError naming the argument; bad words CsumValueError."""
    with pytest.raises(CsumTypeError, match="^buf must be bytes-like, not str"):
        _engine.ones_sum("abc", 16, "little", "buf")
    with pytest.raises(CsumTypeError, match="^view must be a bytes-like object"):
        _engine.ones_sum(12, 16, "little")
    with pytest.raises(CsumValueError, match="^width must be 8, 16, 32 or 64, got 24") as err:
        _engine.ones_sum(b"ab", 24, "little")
    assert err.value.code == "bad-width"
    with pytest.raises(CsumValueError, match="^byteorder must be 'little' or 'big'") as err:
        _engine.ones_sum(b"ab", 16, "native")
    assert err.value.code == "bad-byteorder"


@pytest.mark.skipif(not HAS_C, reason="csum.engine._speedups not built")
@settings(max_examples=300)  # each example sums at every block size: 300 keep it under a second
@given(buffers(max_size=2000), st.sampled_from([8, 16, 32, 64]), st.sampled_from(["little", "big"]))
def test_c_block_combining(data, width, byteorder):
    """The C loop's per-block sums, combined end-around, give the one-block answer at every block size."""
    from csum.engine import _speedups

    want = naive_ones_sum(data, width, byteorder)
    for block in (8, 16, 24, 64, 1 << 12):
        assert _speedups.ones_sum_blocked(data, width, byteorder, block) == want


@pytest.mark.skipif(not HAS_C, reason="csum.engine._speedups not built")
def test_c_block_bound_with_all_ones():
    """All-0xff words make every accumulator as large as it can be: a 2**20-word block of them stays exact.

    Per block each 32-bit lane accumulator ends at words * (2**32 - 1); the C comment proves the
    2**31-word block bound; here all-ones input, block sizes from 1 word up, == the naive loop's 0xff..ff.
    """
    from csum.engine import _speedups

    data = b"\xff" * (8 << 20)
    for block in (8, 8 << 10, 8 << 20):
        for width in (16, 32, 64):
            assert _speedups.ones_sum_blocked(data, width, "little", block) == (1 << width) - 1


def test_numpy_chunk_combining(monkeypatch):
    """The numpy engine's chunked reductions (tiny chunks here) give the naive loop's answer."""
    monkeypatch.setattr(native, "_NUMPY_CHUNK", 64)
    data = os.urandom(10_007)
    for width in (8, 16, 32, 64):
        for order in ("little", "big"):
            assert native._numpy_sum(memoryview(data), width, order) == naive_ones_sum(data, width, order)


def test_sparse_buffer_over_4_gib(engine):
    """A 4 GiB + 7 byte buffer (numpy zeros: untouched pages cost no memory) with 5 non-zero bytes.

    Expected value by hand (independent of any engine): little-endian words 0x3412 at 0, 0xff00 at
    2**32 - 2, 0x00ee at 2**32 and 0x007f at 2**32 + 6; 0x3412 + 0xff00 + 0xee + 0x7f folds to 0x3480.
    The python engine would build a 4 GiB integer: skipped there.
    """
    if engine.name == "python":
        pytest.skip("pure-Python engine: a 4 GiB int.from_bytes is not a test")
    size = (1 << 32) + 7
    arr = np.zeros(size, dtype=np.uint8)
    arr[0:2] = (0x12, 0x34)
    arr[(1 << 32) - 1] = 0xFF
    arr[1 << 32] = 0xEE
    arr[size - 1] = 0x7F
    assert engine.ones_sum(arr, 16, "little") == 0x3480
    assert engine.ones_sum(arr, 16, "big") == 0x8034


def test_nothing_switches_the_bound_engine():
    """The binding is made once: no use_engine/set_fallback, and the checked ones_sum wraps the bound engine."""
    assert not hasattr(_engine, "use_engine")
    if HAS_C:
        from csum.engine import _speedups

        assert not hasattr(_speedups, "set_fallback")
    assert _engine._sum is _engine.ENGINES[_engine.ENGINE].ones_sum
    assert _engine.ones_sum_many is _engine.ENGINES[_engine.ENGINE].ones_sum_many
    assert getattr(_engine.ones_sum, "fast", _engine._sum) is _engine._sum  # the C fast path, when C is bound


def _run(args: list[str], engine: str, cmd: list[str] | None = None, **extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CSUM_ENGINE": engine, **extra}
    return subprocess.run((cmd or [sys.executable]) + args, capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)


def test_csum_engine_variable_selects_and_version_reports():
    """CSUM_ENGINE=python forces the pure-Python engine and ``csum --version`` says so; auto takes the best."""
    out = _run(["-m", "csum", "--version"], "python")
    assert out.returncode == 0 and out.stdout.strip().endswith("(engine: python)")
    best = _run(["-m", "csum", "--version"], "auto")
    assert best.stdout.strip().endswith(f"(engine: {next(iter(_engine.ENGINES))})")


@pytest.mark.parametrize("value", ["fortran", "C++"])
def test_bad_csum_engine_is_one_line_from_import_and_cli(value):
    """A bogus CSUM_ENGINE: ``import csum`` raises CsumEngineError (a CsumValueError and an ImportError)
    naming the allowed values; ``csum`` and ``python -m csum`` print one line, no traceback."""
    allowed = "CSUM_ENGINE must be one of auto, c, numpy, python; got"
    imp = _run(["-c", "import csum"], value)
    assert imp.returncode == 1 and "CsumEngineError" in imp.stderr and allowed in imp.stderr
    script = Path(sys.executable).with_name("csum")
    runs = [_run(["-m", "csum", "--version"], value)]
    if script.exists():
        runs.append(_run(["--version"], value, [str(script)]))
    for run in runs:
        assert run.returncode in (1, 2) and run.stdout == ""
        assert run.stderr.count("\n") == 1 and allowed in run.stderr and "Traceback" not in run.stderr
    if script.exists():
        assert runs[1].returncode == 2 and runs[1].stderr.startswith("csum: CSUM_ENGINE must be")


def test_csum_engine_c_without_the_extension_names_the_alternatives(tmp_path):
    """CSUM_ENGINE=c where csum.engine._speedups cannot be imported: one line naming the other values.

    The extension is hidden by a meta-path finder that refuses it (a copy of the package without it
    would do the same).
    """
    hide = ("import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'csum.engine._speedups':\n"
            "            raise ImportError('hidden')\n"
            "sys.meta_path.insert(0, Hide())\n"
            "import csum\n")
    out = _run(["-c", hide], "c")
    assert out.returncode == 1
    assert "CSUM_ENGINE=c but the C extension csum.engine._speedups is not built" in out.stderr
    assert "auto, numpy, python" in out.stderr
    assert _run(["-c", hide + "print(csum.engine.ENGINE)"], "auto").stdout.strip() == "numpy"


@pytest.mark.skipif(os.environ.get("CSUM_EVERY_ENGINE_CHILD") == "1", reason="already inside such a run")
@pytest.mark.parametrize("name", [n for n in _engine.ENGINES if n != _engine.ENGINE])
def test_every_engine_tests_under_each_other_engine(name):
    """The tests marked ``every_engine`` (public functions whose result runs through the engine: stream,
    batch, capture check, internet_checksum) pass with csum imported under CSUM_ENGINE=name too."""
    out = _run(["-m", "pytest", "-x", "-m", "every_engine", "-p", "no:cacheprovider", "tests"], name,
               CSUM_EVERY_ENGINE_CHILD="1",
               CSUM_HYPOTHESIS_PROFILE=os.environ.get("CSUM_HYPOTHESIS_PROFILE", "engines"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert f"csum engine: {name}" in out.stdout and " passed" in out.stdout
