"""Run a fuzz target under atheris (libFuzzer) with csum's C built for coverage guidance, ASan and UBSan.

    python fuzz/run.py TARGET [--time SECONDS] [--no-build] [--merge] [libFuzzer arguments or input files ...]

TARGET is walker, chunks, records, fix, sums, rewrite, rowtext, command or explain (fuzz/fuzz_TARGET.py). The C extensions
are built into build/fuzz with clang (``CC=clang CSUM_SANITIZE=address,undefined,fuzzer-no-link``, tools/sanitized.py's
build, in build/fuzz/ext; ``--no-build`` reuses the last one), then the target runs in a Python with atheris'
libFuzzer + ASan runtime preloaded, the C's branches its coverage (``--python``: csum's Python code's too, a branch
of the Python reference counting as new). The corpus it grows is build/fuzz/corpus/TARGET, started from the committed
corpus (fuzz/corpus/TARGET: the seeds and the inputs earlier merges kept) and regressions (fuzz/regressions/TARGET);
a crash or a divergence (an AssertionError: C and the Python reference disagree) is written to build/fuzz/artifacts/
and ends the run with a non-zero exit. Input files given instead of a time are run once each (a replay). The
summary, executions included, goes to build/fuzz/TARGET.json.

``--merge`` then keeps what the run found: libFuzzer's ``-merge=1`` picks the inputs of build/fuzz/corpus/TARGET that
add coverage to the committed ones (fuzz/corpus/TARGET and fuzz/regressions/TARGET), smallest first, and they are
copied into fuzz/corpus/TARGET under their SHA-1 names (libFuzzer's), up to :data:`MERGE_CAP` bytes of merged inputs
per target and :data:`MERGE_MAX_INPUT` bytes an input (the rest are left out: the repository does not grow without
bound). ``--merge --time 0`` merges the corpus of an earlier run without fuzzing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))

import sanitized  # noqa: E402  (tools/sanitized.py: the build and the environment)

TARGETS = ("walker", "chunks", "records", "fix", "sums", "rewrite", "rowtext", "command", "explain")
BUILD = ROOT / "build" / "fuzz"
#: The largest input libFuzzer makes: 256 KiB, Wireshark's largest packet, so records as long as a capture holds are
#: fuzzed (at 2,048 bytes none over 2 KB ever was).
MAX_LEN = 256 << 10
#: At most this many bytes of merged inputs (SHA-1-named files) in fuzz/corpus/TARGET, and this many an input.
MERGE_CAP = 128 << 10
MERGE_MAX_INPUT = 8 << 10


def merged(path: Path) -> bool:
    """Whether ``path`` is an input a merge committed (named after the SHA-1 of its bytes, as libFuzzer names them)
    rather than a seed fuzz/seeds.py writes."""
    return re.fullmatch(r"[0-9a-f]{40}", path.name) is not None and \
        hashlib.sha1(path.read_bytes()).hexdigest() == path.name


def admit(found: list[Path], corpus: Path) -> list[Path]:
    """Copy the inputs a merge ``found`` into ``corpus``, smallest first, while its merged inputs stay within
    :data:`MERGE_CAP` bytes and each within :data:`MERGE_MAX_INPUT`; the files added."""
    total = sum(p.stat().st_size for p in corpus.iterdir() if merged(p))
    added = []
    for path in sorted(found, key=lambda p: (p.stat().st_size, p.name)):
        size, name = path.stat().st_size, hashlib.sha1(path.read_bytes()).hexdigest()
        if size > MERGE_MAX_INPUT or total + size > MERGE_CAP or (corpus / name).exists():
            continue
        shutil.copyfile(path, corpus / name)
        total += size
        added.append(corpus / name)
    return added


def preload() -> Path:
    """atheris' libFuzzer + AddressSanitizer runtime (it ships with the wheel, beside the package)."""
    try:
        import atheris
    except ImportError:
        raise SystemExit("fuzz: atheris is not installed (pip install -e '.[fuzz]')") from None
    path = Path(atheris.path()) / "asan_with_fuzzer.so"
    if not path.exists():
        raise SystemExit(f"fuzz: {path} is missing (an atheris built without its sanitizer runtimes)")
    return path


def child(target: str, args: list[str], python: bool) -> None:
    """In the preloaded process: import the target (csum's Python instrumented too with ``python``), fuzz. libFuzzer
    runs its first argument again for a merge (``-merge=1``'s inner process): that is :func:`launcher`'s script."""
    import atheris

    if python:
        with atheris.instrument_imports(include=["csum", "fuzz_common", f"fuzz_{target}"]):
            module = __import__(f"fuzz_{target}")
    else:
        module = __import__(f"fuzz_{target}")
    atheris.Setup([str(launcher(target, python)), *args], module.one_input)
    atheris.Fuzz()


def launcher(target: str, python: bool) -> Path:
    """An executable script that starts this child again (libFuzzer runs it through the shell, so a Python script
    cannot be its first argument; the environment, sanitizer runtime preloaded, is inherited)."""
    path = BUILD / f"{target}{'-python' if python else ''}.sh"
    flag = " --python" if python else ""
    text = f"#!/bin/sh\nexec {sys.executable} {HERE / 'run.py'} {target} --child{flag} \"$@\"\n"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
        path.chmod(0o755)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("--time", type=int, default=60, help="seconds of fuzzing (default 60)")
    parser.add_argument("--no-build", action="store_true", help="reuse build/fuzz")
    parser.add_argument("--python", action="store_true",
                        help="csum's Python code as coverage too (4 to 7 times fewer executions a second)")
    parser.add_argument("--merge", action="store_true", help="then merge the inputs that add coverage into "
                        f"fuzz/corpus/TARGET (at most {MERGE_CAP >> 10} KiB of them a target)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.child:
        child(args.target, rest, args.python)
        return 0
    lib = BUILD / "ext" / "lib"
    if not args.no_build or not lib.exists():
        sanitized.build(BUILD / "ext", "address,undefined,fuzzer-no-link", "clang")
    env = sanitized.environment(lib, preload(), None, [HERE])
    env["ASAN_OPTIONS"] += ":detect_leaks=0"  # the interpreter's caches look like leaks to libFuzzer; see tests
    # Python's own allocator for objects (twice the executions): what C reads is in exact-size numpy buffers, on the
    # sanitizer's heap either way; tools/sanitized.py replays every committed input with PYTHONMALLOC=malloc.
    env["PYTHONMALLOC"] = "pymalloc"
    work, artifacts = BUILD / "corpus" / args.target, BUILD / "artifacts"
    work.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    replay = [a for a in rest if not a.startswith("-")]
    dirs = [] if replay else [str(work), *(str(d) for d in (HERE / "corpus" / args.target,
                                                             HERE / "regressions" / args.target) if d.is_dir())]
    fuzzer = [*dirs, *rest, f"-artifact_prefix={artifacts}/{args.target}-", "-print_final_stats=1",
              "-timeout=20", "-rss_limit_mb=6144", f"-max_len={MAX_LEN}"]
    if not replay:
        fuzzer.append(f"-max_total_time={args.time}")
    start = time.monotonic()
    command = [sys.executable, str(HERE / "run.py"), args.target, "--child", *(["--python"] if args.python else [])]
    launcher(args.target, args.python)
    if args.merge and not replay and args.time == 0:  # a merge of the last run's corpus alone
        return _merge(args.target, command, env)
    proc = subprocess.run([*command, *fuzzer], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    log = proc.stderr
    (BUILD / f"{args.target}.log").write_text(log)
    stats = {k: int(v) for k, v in re.findall(r"stat::(\w+):\s*(\d+)", log)}
    cov = re.findall(r"cov: (\d+) ft: (\d+)", log)
    summary = {"target": args.target, "exit": proc.returncode, "seconds": round(time.monotonic() - start, 1),
               "executions": stats.get("number_of_executed_units"), "corpus": len(list(work.iterdir())),
               "cov": int(cov[-1][0]) if cov else None, "ft": int(cov[-1][1]) if cov else None}
    (BUILD / f"{args.target}.json").write_text(json.dumps(summary, indent=1) + "\n")
    sys.stderr.write(log[-6000:] if proc.returncode else "")
    print(f"fuzz {args.target}: {json.dumps(summary)}")
    if args.merge and not proc.returncode and not replay:
        return _merge(args.target, command, env)
    return proc.returncode


def _merge(target: str, command: list[str], env: dict[str, str]) -> int:
    """libFuzzer's ``-merge=1`` of build/fuzz/corpus/TARGET into a copy of the committed inputs: what it adds (the
    inputs that add coverage) goes to fuzz/corpus/TARGET through :func:`admit`."""
    base = BUILD / "merge" / target
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    committed = HERE / "corpus" / target
    for folder in (committed, HERE / "regressions" / target):
        for path in folder.glob("*") if folder.is_dir() else ():
            shutil.copyfile(path, base / path.name)
    before = {p.name for p in base.iterdir()}
    proc = subprocess.run([*command, "-merge=1", str(base), str(BUILD / "corpus" / target), "-timeout=20",
                           "-rss_limit_mb=6144", f"-max_len={MAX_LEN}"], cwd=ROOT, env=env, stderr=subprocess.PIPE,
                          text=True, errors="replace")
    (BUILD / f"{target}.merge.log").write_text(proc.stderr)
    if proc.returncode:
        sys.stderr.write(proc.stderr[-4000:])
        return proc.returncode
    found = [p for p in base.iterdir() if p.name not in before]
    added = admit(found, committed)
    size = sum(p.stat().st_size for p in committed.iterdir() if merged(p))
    print(f"fuzz {target}: merge: {len(found)} inputs add coverage, {len(added)} added to "
          f"{committed.relative_to(ROOT)} ({size:,} bytes of merged inputs there, at most {MERGE_CAP:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
