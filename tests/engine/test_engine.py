"""csum/engine/__init__.py, csum/engine/native.py and csum/engine/_speedups.c: every engine object, and the one bound at import.

Independent sources: tests/oracle.py (naive RFC 1071 16-bit loop), a naive
word-by-word end-around-carry loop of any width written here, scapy.utils.checksum
and dpkt.in_cksum. Engine tests take the ``engine`` fixture (tests/engines.py: one
Engine object per engine, called directly); tests across the suite that use the
``every_engine`` fixture run once per engine in this process (csum.engine.use), and
``CSUM_ENGINE`` itself is checked at import in one small subprocess per value.
"""

import ast
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


@pytest.mark.usefixtures("every_engine")
@given(buffers(max_size=3000))
def test_internet_checksum_equals_scapy_and_dpkt(data):
    """csum.internet_checksum == scapy.utils.checksum == dpkt.in_cksum (on every engine: the every_engine fixture)."""
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


def test_use_switches_every_engine_dependent_binding_and_back():
    """csum.engine.use: inside the block ENGINE, the summing function, the row sums, the C walker and the C capture
    rewriter are the named engine's (the two C ones only for ``c``) and the public functions follow; after it, and after an error in it,
    the engine bound before is back. Expected checksums: tests/oracle.py."""
    before = (_engine.ENGINE, _engine._sum, _engine.ones_sum_many, _engine.cwalk, _engine.crewrite)
    data = os.urandom(999)
    for name, eng in _engine.ENGINES.items():
        with _engine.use(name) as bound:
            assert bound is eng and _engine.ENGINE == name
            assert _engine._sum is eng.ones_sum and _engine.ones_sum_many is eng.ones_sum_many
            assert _engine.cwalk is (_engine.CWALK if name == "c" else None)
            assert _engine.crewrite is (_engine.CREWRITE if name == "c" else None)
            assert csum.internet_checksum(data) == ones_sum16(data, "big") ^ 0xFFFF
        assert (_engine.ENGINE, _engine._sum, _engine.ones_sum_many, _engine.cwalk, _engine.crewrite) == before
    with pytest.raises(ZeroDivisionError), _engine.use("python"):
        1 / 0
    assert (_engine.ENGINE, _engine._sum, _engine.ones_sum_many, _engine.cwalk, _engine.crewrite) == before
    with pytest.raises(CsumValueError, match="CSUM_ENGINE must be one of"), _engine.use("fortran"):
        pass
    assert _engine.ENGINE == before[0]


def test_nothing_in_csum_switches_the_engine():
    """Only tests and benchmarks call csum.engine.use (and set_fast_paths is called by csum.engine alone)."""
    package = Path(csum.__file__).resolve().parent
    for path in package.rglob("*.py"):
        if path == package / "engine" / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            name = getattr(called, "attr", getattr(called, "id", None))
            imported = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            assert name not in ("use", "set_fast_paths") and "use" not in imported, f"{path}:{node.lineno}"


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


@pytest.mark.parametrize("value", ["c", "numpy", "python", "auto", ""])
def test_csum_engine_variable_binds_at_import(value):
    """CSUM_ENGINE at import binds everything the switch binds: ENGINE, the summing function, the C walker
    (c only), and whether the C fast paths run; RFC 1071 section 3's example checksums to 0x220d either way."""
    if value == "c" and not HAS_C:
        pytest.skip("csum.engine._speedups not built")
    code = ("import csum, csum.engine as e\n"
            "probe = e._speedups.FastPath(lambda: 'c', lambda: 'python') if e._speedups else None\n"
            "print(e.ENGINE, e._sum is e.ENGINES[e.ENGINE].ones_sum, e.cwalk is e.CWALK and e.cwalk is not None,\n"
            "      probe() if probe else 'python', hex(csum.internet_checksum(bytes.fromhex('0001f203f4f5f6f7'))))")
    out = _run(["-c", code], value)
    assert out.returncode == 0, out.stderr
    name = next(iter(_engine.ENGINES)) if value in ("auto", "") else value
    walker = name == "c" and _engine.CWALK is not None
    assert out.stdout.split() == [name, "True", str(walker), "c" if name == "c" else "python", "0x220d"]
