"""Run the tests that touch csum's C under AddressSanitizer and UndefinedBehaviorSanitizer.

    python tools/sanitized.py [--cc gcc|clang] [--build DIR] [pytest arguments ...]

It builds a copy of the package with both C extensions sanitized (``CSUM_SANITIZE=address,undefined python
setup.py build``, into ``build/sanitized`` unless ``--build``: the working tree's own extensions are left alone),
then runs pytest on that copy with the sanitizer runtime of the compiler preloaded (``LD_PRELOAD``; Python
itself is not instrumented), ``PYTHONMALLOC=malloc`` (every Python object on the sanitizer's heap, so an
overread of a packet's bytes object or a use after free of an object is seen), every finding fatal
(``halt_on_error``, ``-fno-sanitize-recover=all``). Without test paths among the pytest arguments it runs
:data:`TESTS`, then a second run on :data:`LEAK_TESTS` where LeakSanitizer's check is run by
tests/leakcheck_plugin.py in the pytest process once its tests are done (never at exit, where the interpreter's
own finalization leaks). Properties run 200 examples each (``CSUM_HYPOTHESIS_PROFILE=engines`` unless set).
Reports go to files under the build directory, printed at the end; the run fails when pytest fails or any report
was written. fuzz/run.py builds the same way for the fuzz targets (``fuzzer-no-link`` added, clang).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The tests that reach csum's C: the summing engine (every checksum), the C walker, the capture reader and checker,
#: the C capture rewriter, the command line on captures, and the fuzz regressions. Not here: the kernel, QEMU, BPF compilation, benchmarks,
#: mypy and the layout checks, which add minutes and no C path.
TESTS = ["tests/engine", "tests/core", "tests/layers", "tests/capture", "tests/fuzz", "tests/test_batch.py",
         "tests/test_testing_assert.py", "tests/cli/test_cli_capture.py", "tests/arch/test_arch_all.py",
         "tests/bpf/test_bpf.py", "tests/rewrite/test_rewrite_fast.py", "tests/rewrite/test_rewrite_capture.py"]

#: ASAN_OPTIONS / UBSAN_OPTIONS of every run (``log_path`` is added).
ASAN = {"halt_on_error": "1", "abort_on_error": "1", "detect_leaks": "1", "leak_check_at_exit": "0",
        "detect_stack_use_after_return": "1", "strict_string_checks": "1", "check_initialization_order": "1",
        "allocator_may_return_null": "1", "print_summary": "1",
        # the fast unwinder on every malloc; the leak check's run uses the slow one (see LEAK_TESTS)
        "fast_unwind_on_malloc": "1", "malloc_context_size": "40"}
UBSAN = {"halt_on_error": "1", "abort_on_error": "1", "print_stacktrace": "1", "print_summary": "1"}
#: LeakSanitizer's suppressions: third-party modules only (see the file).
SUPPRESSIONS = ROOT / "tools" / "lsan.supp"
#: The tests the leak check runs on, after :data:`TESTS`: the fuzz targets' inputs, which call every C entry point.
#: LeakSanitizer names a leak by its allocation stack, and Python is built without frame pointers, so this run uses
#: the slow unwinder (``fast_unwind_on_malloc=0``): every allocation about 100 times slower, which the whole of
#: TESTS could not afford (hours), and without which the suppressions (tools/lsan.supp) match nothing. The seeds and
#: regressions only (``CSUM_FUZZ_REPLAY=seeds``; the first part replays the inputs merged from fuzz runs too): under
#: the slow unwinder the ``command`` target's 126 committed inputs alone took 125 s, every target's seeds and
#: regressions 133 s, on a loaded 2-core machine.
LEAK_TESTS = ["tests/fuzz", "-n0"]
#: The slow unwinder's depth for the leak check: its cost grows with the depth (importing csum, numpy, hypothesis,
#: scapy and pytest took 130 s at 40 frames, 48 s at 16 on a loaded 2-core machine). A shallower stack can only
#: make a suppression (tools/lsan.supp) miss, a false report, never hide a leak.
LEAK_CONTEXT = 16
#: Left out of :data:`TESTS`: yacryptopan's reference (pycryptodome dlopens its C with RTLD_DEEPBIND, which the
#: sanitizer runtime refuses; csum's own Crypto-PAn is pure Python, the C rewriter's other tests run).
DESELECT = ["tests/rewrite/test_rewrite_capture.py::test_cryptopan_equals_yacryptopan",
            # a local Dask cluster's worker processes run scan(), whose C tests/capture/test_scan.py runs here (44 s
            # under the sanitizers on a loaded 2-core machine)
            "tests/capture/test_dask.py",
            # the decompressors' memory on decompression bombs: no C of csum's (zstd's alone 24 s, bzip2's 9 s)
            "tests/capture/test_source.py::test_a_bomb_reads_in_bounded_memory"]
#: The ``every_engine`` tests run under the C engine only (tests/engines.py): the numpy and pure-Python engines run
#: no C, and under the sanitizers they would add ten minutes.
TEST_ENGINES = "c"


def runtime(cc: str) -> Path:
    """The AddressSanitizer runtime of compiler ``cc`` (gcc's libasan, clang's libclang_rt.asan): what to preload."""
    name = "libasan.so" if "clang" not in cc else f"libclang_rt.asan-{platform.machine()}.so"
    found = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()
    path = Path(found)
    if not path.is_absolute() or not path.exists():
        raise SystemExit(f"sanitized: {cc} has no {name} (Debian: libasan8 for gcc, libclang-rt-*-dev for clang)")
    return path.resolve()


def build(dest: Path, sanitize: str, cc: str, coverage: bool = False) -> Path:
    """Build the whole package with ``CSUM_SANITIZE=sanitize`` (and CSUM_COVERAGE) under ``dest``; the import root."""
    env = {**os.environ, "CC": cc, "CSUM_SANITIZE": sanitize, "CSUM_COVERAGE": "1" if coverage else ""}
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build", "--force", "--build-base", str(dest / "tmp"),
                    "--build-lib", str(dest / "lib")], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    lib = dest / "lib"
    if any(not list((lib / "csum" / "engine").glob(f"{name}*.so")) for name in ("_cwalk", "_speedups", "_rewrite")):
        raise SystemExit(f"sanitized: the C extensions did not build under {lib}")
    return lib


def environment(lib: Path, preload: Path, logs: Path | None, extra_path: list[Path] = ()) -> dict[str, str]:
    """The environment of a Python process that imports the sanitized csum from ``lib``; reports to files under
    ``logs`` (None: to stderr)."""
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)

    def opts(values: dict[str, str], name: str) -> str:
        where = {} if logs is None else {"log_path": str(logs / name)}
        return ":".join(f"{k}={v}" for k, v in {**values, **where}.items())

    path = [str(lib), *map(str, extra_path)]
    # PYTHONSAFEPATH: no working directory in front of sys.path (the tree's own csum, unsanitized, is there)
    return {**os.environ, "LD_PRELOAD": str(preload), "PYTHONMALLOC": "malloc", "CSUM_ENGINE": "c", "PYTHONSAFEPATH": "1",
            "ASAN_OPTIONS": opts(ASAN, "asan"), "UBSAN_OPTIONS": opts(UBSAN, "ubsan"),
            "LSAN_OPTIONS": f"suppressions={SUPPRESSIONS}:print_suppressions=0",
            "PYTHONPATH": os.pathsep.join(path + [os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else path)}


def reports(logs: Path) -> list[str]:
    """The sanitizer reports written under ``logs``."""
    return [f"{p.name}:\n{p.read_text(errors='replace')}" for p in sorted(logs.glob("*san*")) if p.stat().st_size]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cc", default=os.environ.get("CC", "gcc"), help="the compiler (default: $CC or gcc)")
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "sanitized", help="where to build")
    parser.add_argument("--shard", metavar="K/N", help="the first part runs the K-th of N parts of TESTS "
                        "(tests/shard_plugin.py; day/N: the UTC date picks K, as .ci/run does)")
    args, pytest_args = parser.parse_known_args(argv)
    lib = build(args.build, "address,undefined", args.cc)
    logs = args.build / "logs"
    env = environment(lib, runtime(args.cc), logs, [ROOT / "tests", ROOT])  # ROOT after lib: bench, never its csum
    env.setdefault("CSUM_HYPOTHESIS_PROFILE", "engines")  # 200 examples a property (tests/conftest.py), not 1,000
    env.setdefault("CSUM_TEST_ENGINES", TEST_ENGINES)
    where = subprocess.run([sys.executable, "-c", "import csum.engine._cwalk as c, csum.engine._speedups as s, "
                            "csum.engine._rewrite as r; print(c.__file__); print(s.__file__); print(r.__file__)"],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    if where.returncode or any(not Path(f).is_relative_to(lib) for f in where.stdout.split()):
        print(where.stdout + where.stderr, file=sys.stderr)
        raise SystemExit(f"sanitized: the sanitized extensions under {lib} are not the ones imported")
    chosen = any(not a.startswith("-") for a in pytest_args)
    default = [] if chosen else TESTS + [f"--deselect={d}" for d in DESELECT]
    if args.shard:
        default += ["-p", "shard_plugin", f"--shard={args.shard}"]
    rc = subprocess.run([sys.executable, "-m", "pytest", "-q", *default, *pytest_args], cwd=ROOT, env=env).returncode
    if not rc and not chosen:  # the leak check, on the tests that call every C entry point
        slow = {**env, "CSUM_FUZZ_REPLAY": "seeds",
                "ASAN_OPTIONS": env["ASAN_OPTIONS"].replace("fast_unwind_on_malloc=1", "fast_unwind_on_malloc=0")
                .replace(f"malloc_context_size={ASAN['malloc_context_size']}", f"malloc_context_size={LEAK_CONTEXT}")}
        rc = subprocess.run([sys.executable, "-m", "pytest", "-p", "leakcheck_plugin", "-q", *LEAK_TESTS, *pytest_args],
                            cwd=ROOT, env=slow).returncode
    found = reports(logs)
    for text in found:
        print(text, file=sys.stderr)
    print(f"sanitized: pytest exit {rc}, {len(found)} sanitizer report(s) ({logs})", file=sys.stderr)
    return rc or (1 if found else 0)

if __name__ == "__main__":
    sys.exit(main())
