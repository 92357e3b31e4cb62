"""What the command line imports to start (issue 22: start-up): each command loads what its path needs and nothing
more, so an import that creeps back into ``csum --version`` or ``csum verify SMALL.pcap`` fails here. The time it
costs is measured side by side with ``python -c pass`` by ``python -m bench.startup``, not here.

Each case runs in a fresh interpreter and lists the modules the command added to ``sys.modules`` (the ones the
interpreter's own start-up imported, site and the editable install's finder included, are not counted).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from scapy.all import IP, TCP, Ether, wrpcap

#: Never loaded by the commands below: numpy (its import alone costs more than all of csum's), the profiles' TOML
#: parser, the process machinery of --jobs and subprocesses, and the wings those commands do not use.
NOT_FOR_VERSION = {"numpy", "tomllib", "multiprocessing", "subprocess", "ctypes", "csum.layers", "csum.capture",
                   "csum.kernel", "csum.rewrite", "csum.batch", "csum.arch.crossarch", "csum.arch.profiles",
                   "dataclasses"}
NOT_FOR_SMALL_VERIFY = {"numpy", "tomllib", "multiprocessing", "subprocess", "csum.kernel", "csum.rewrite",
                        "csum.batch", "csum.kernel.libbpf", "csum.dask", "csum.arch.crossarch", "csum.arch.profiles",
                        "csum.capture.rows", "csum.capture.arrow", "datetime"}

_LIST = """
import contextlib, io, json, sys
before = set(sys.modules)
from csum.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "new": sorted(set(sys.modules) - before)}))
"""


def _imported(*args: str) -> tuple[int, set[str]]:
    run = subprocess.run([sys.executable, "-c", _LIST, *args], capture_output=True, text=True, check=True)
    doc = json.loads(run.stdout.splitlines()[-1])
    return doc["code"], set(doc["new"])


def test_version_imports_no_numpy_and_no_wing_it_does_not_use():
    code, new = _imported("--version")
    assert code == 0
    assert not new & NOT_FOR_VERSION, sorted(new & NOT_FOR_VERSION)
    assert "csum.engine" in new  # it names the engine


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_verify_of_a_small_capture_imports_no_process_machinery(tmp_path, jobs):
    """A capture of one chunk is checked in the calling process whatever ``--jobs`` says, a packet at a time: no
    numpy, no multiprocessing, no profile TOML, no kernel or rewrite wing. (Five scapy-built packets, checksums by
    scapy: exit code 0.)"""
    path = tmp_path / "small.pcap"
    wrpcap(str(path), [Ether() / IP(dst="192.0.2.1") / TCP() / b"x" * k for k in range(5)])
    code, new = _imported("verify", str(path), *jobs)
    assert code == 0
    assert not new & NOT_FOR_SMALL_VERIFY, sorted(new & NOT_FOR_SMALL_VERIFY)
    assert "csum.capture.checker" in new


#: Never loaded by ``csum rewrite IN OUT`` when the C engine rewrites every packet (one process, no --fix, no
#: --truncate, no rules file): the Python engine (the one-packet editor, the profiles' TOML), the checker and the
#: process machinery, the other commands' modules.
NOT_FOR_REWRITE = {"numpy", "tomllib", "multiprocessing", "subprocess", "csum.rewrite.apply", "csum.rewrite.packet",
                   "csum.rewrite.truncate", "csum.arch.profiles", "csum.capture.parallel", "csum.capture.checker",
                   "csum.capture.scan", "csum.kernel", "csum.explain", "csum.cli.verify", "csum.cli.fix",
                   "csum.cli.prog", "csum.cli.compare"}


def test_rewrite_taken_by_the_c_engine_imports_no_python_engine(tmp_path):
    """``csum rewrite`` of packets the C engine takes (five scapy-built IPv4/TCP frames, an address mapped) imports
    neither the Python engine nor the checker nor another command's module; what the C engine declines still
    imports the Python engine on its first packet (tests/rewrite/test_rewrite_fast.py compares the two)."""
    from csum import engine

    if engine.crewrite is None:
        pytest.skip("the C rewriter is not built")
    path = tmp_path / "small.pcap"
    wrpcap(str(path), [Ether() / IP(src="10.0.0.1", dst="192.0.2.1") / TCP() / b"x" * k for k in range(5)])
    code, new = _imported("rewrite", str(path), str(tmp_path / "out.pcap"), "--map-ip", "10.0.0.0/8=192.168.0.0/16")
    assert code == 0
    assert not new & NOT_FOR_REWRITE, sorted(new & NOT_FOR_REWRITE)
    assert {"csum.rewrite.fast", "csum.cli.rewrite"} <= new


def test_bench_startup_runs_side_by_side(tmp_path):
    """`python -m bench.startup --repeats 1 --out F` times every command in one run, ``python -c pass`` first (the
    floor the ratios divide by); no time is asserted (bench/results/startup.json holds the measured ones)."""
    from pathlib import Path

    out = tmp_path / "startup.json"
    run = subprocess.run([sys.executable, "-m", "bench.startup", "--repeats", "1", "--out", str(out)],
                         cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {r["command"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["python -c pass"]["x_python"] == 1.0
    assert {"csum --version", "csum verify SMALL.pcap (5 packets)", "python -c 'import numpy'"} <= set(rows)
    assert all(r["wall_ms"] > 0 for r in rows.values()) and "| `csum --version` |" in run.stdout


_BLAS = """
import os, sys
{pre}
from csum.cli import main
main(["--version"])
print(os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize("pre, preset, want", [("", None, "1"), ("", "3", "3"), ("import numpy", None, None)])
def test_cli_asks_openblas_for_one_thread_unless_chosen(pre, preset, want):
    """The CLI starts numpy's OpenBLAS with one thread (csum does no linear algebra; a thread per core costs the
    import tens of milliseconds, bench/startup.py), unless the user set OPENBLAS_NUM_THREADS or numpy is already
    imported by the caller (then nothing is changed)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    run = subprocess.run([sys.executable, "-c", _BLAS.format(pre=pre)], env=env, capture_output=True, text=True,
                         check=True)
    assert run.stdout.splitlines()[-1] == str(want)
