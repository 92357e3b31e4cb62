"""csum/types.py: the NewType kinds, checked by mypy (the independent source: the type checker itself).

mypy runs on a small typed snippet that mixes the kinds (each wrong line must be reported, each
right one must not) and on the whole package ``csum``, which must be clean (no error, no unused
``type: ignore``).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = '''\
import csum
from csum.types import Be16, Sum16, WireSum, Wsum


def wants_wire(value: WireSum) -> None: ...


def wants_sum16(value: Sum16) -> None: ...


wants_wire(csum.internet_checksum(b"ab"))                 # right: the wire value read big-endian
wants_wire(csum.Checksum(b"ab").value)                    # right
wants_sum16(csum.csum_fold(csum.csum_partial(b"ab")))     # right: __wsum folds to __sum16
wants_sum16(csum.csum_replace2(csum.ip_compute_csum(b"ab"), Be16(0x5000), Be16(0x5100)))  # right
field: bytes = csum.csum_fold_bytes(Wsum(0x1234abcd))     # right: the twins give bytes
wants_wire(csum.ip_compute_csum(b"ab"))                   # WRONG: a Sum16 where a WireSum is expected
wants_sum16(csum.internet_checksum(b"ab"))                # WRONG: a WireSum where a Sum16 is expected
csum.csum_fold(csum.internet_checksum(b"ab"))             # WRONG: a WireSum is not a __wsum
csum.csum_replace2(csum.ip_compute_csum(b"ab"), 0x5000, Be16(0x5100))  # WRONG: a plain int is not a __be16
'''


def _mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           "--warn-unused-ignores", "--python-version", "3.11", "--cache-dir", os.devnull, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_mypy_tells_the_byte_order_kinds_apart(tmp_path):
    """Each WRONG line of the snippet is an arg-type error naming both kinds; no right line is."""
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    run = _mypy(str(path))
    lines = SNIPPET.splitlines()
    wrong = {i + 1 for i, line in enumerate(lines) if "# WRONG" in line}
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    reported = {int(line.split(":")[1]) for line in errors}
    assert reported == wrong, run.stdout
    assert any('"Sum16"' in e and '"WireSum"' in e for e in errors if e.split(":")[1] == str(min(wrong))), run.stdout
    assert all("[arg-type]" in e for e in errors), run.stdout


def test_mypy_package_is_clean():
    """``mypy csum`` reports no error (and no unused ``type: ignore``) in any module of the package."""
    run = _mypy("csum")
    assert run.returncode == 0 and "Success:" in run.stdout, run.stdout + run.stderr


def test_kinds_are_ints_at_run_time():
    """NewType kinds cost nothing at run time: results are plain ints and a kind's call is the identity."""
    import csum
    from csum.types import Sum16, WireSum

    assert type(csum.ip_compute_csum(b"ab")) is int and type(csum.internet_checksum(b"ab")) is int
    assert Sum16(0x1C46) == 0x1C46 and type(WireSum(7)) is int
