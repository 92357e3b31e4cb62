"""Line coverage of csum's C reached by the fuzz inputs: ``python fuzz/coverage.py [--grown] [--json FILE]``.

Builds the C extensions with llvm's source-based coverage (``CC=clang CSUM_COVERAGE=1``, into build/coverage),
replays every committed input (fuzz/corpus/, fuzz/regressions/; with ``--grown`` also the corpora the fuzz runs grew
in build/fuzz/corpus/) through its target, and prints ``llvm-cov report``'s line coverage of _cwalk.c,
_rowtext.c, _walk.c, _speedups.c, _rewrite.c, _explain.c and the arithmetic they all link, _arith.c and _arith.h
(its coverage: the union over the four extensions; llvm-profdata and llvm-cov of clang's version).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))

import sanitized  # noqa: E402

BUILD = ROOT / "build" / "coverage"
TARGETS = ("walker", "chunks", "records", "fix", "sums", "rewrite", "rowtext", "command", "explain")
REPLAY = """
import importlib, sys
from pathlib import Path
for arg in sys.argv[1:]:
    target, _, folder = arg.partition("=")
    run = importlib.import_module("fuzz_" + target).one_input
    for path in sorted(Path(folder).glob("*")):
        if path.is_file():
            run(path.read_bytes())
"""


def _tool(name: str) -> str:
    """llvm-profdata / llvm-cov of clang's own LLVM version (clang-14 writes profiles llvm-cov-14 reads)."""
    version = subprocess.run(["clang", "-dumpversion"], capture_output=True, text=True, check=True).stdout.split(".")[0]
    for candidate in (f"{name}-{version}", f"/usr/lib/llvm-{version}/bin/{name}", name):
        if subprocess.run(["sh", "-c", f"command -v {candidate}"], capture_output=True).returncode == 0:
            return candidate
    raise SystemExit(f"coverage: no {name} (Debian: llvm)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grown", action="store_true", help="also replay build/fuzz/corpus/")
    parser.add_argument("--json", type=Path, help="write the numbers here too")
    args = parser.parse_args(argv)
    lib = sanitized.build(BUILD, "", "clang", coverage=True)
    raw = BUILD / "profiles"
    raw.mkdir(parents=True, exist_ok=True)
    for old in raw.glob("*.profraw"):
        old.unlink()
    folders = [f"{t}={d}" for t in TARGETS for d in (HERE / "corpus" / t, HERE / "regressions" / t)
               if d.is_dir()]
    if args.grown:
        folders += [f"{t}={ROOT / 'build' / 'fuzz' / 'corpus' / t}" for t in TARGETS
                    if (ROOT / "build" / "fuzz" / "corpus" / t).is_dir()]
    env = {**os.environ, "LLVM_PROFILE_FILE": str(raw / "%p-%m.profraw"), "CSUM_ENGINE": "c", "PYTHONSAFEPATH": "1",
           "PYTHONPATH": os.pathsep.join([str(lib), str(HERE)])}
    subprocess.run([sys.executable, "-c", REPLAY, *folders], cwd=ROOT, env=env, check=True)
    merged = BUILD / "csum.profdata"
    subprocess.run([_tool("llvm-profdata"), "merge", "-sparse", "-o", str(merged), *map(str, raw.glob("*.profraw"))],
                   check=True)
    numbers = {}
    engine = lib / "csum" / "engine"
    objects = {name: next(engine.glob(f"{name}*.so")) for name in ("_cwalk", "_speedups", "_rewrite", "_explain")}
    # each C file and the extensions it is compiled into: the arithmetic into all four, the walker into the checker
    # and the rewriter (their union is its coverage)
    for source_name, names in (("_cwalk.c", ["_cwalk"]), ("_rowtext.c", ["_cwalk"]), ("_speedups.c", ["_speedups"]),
                               ("_walk.c", ["_cwalk", "_rewrite"]), ("_arith.c", list(objects)),
                               ("_arith.h", list(objects)), ("_rewrite.c", ["_rewrite"]), ("_explain.c", ["_explain"])):
        binaries = [str(objects[names[0]]), *(f"-object={objects[n]}" for n in names[1:])]
        source = ROOT / "csum" / "engine" / source_name
        out = subprocess.run([_tool("llvm-cov"), "export", "-summary-only", *binaries, f"-instr-profile={merged}",
                              str(source)], capture_output=True, text=True, check=True).stdout
        files = json.loads(out)["data"][0]["files"]
        lines = next(f["summary"]["lines"] for f in files if f["filename"].endswith(source_name))
        numbers[source_name] = {"lines": lines["count"], "covered": lines["covered"],
                                "percent": round(lines["percent"], 1)}
        report = subprocess.run([_tool("llvm-cov"), "report", *binaries, f"-instr-profile={merged}", str(source)],
                                capture_output=True, text=True, check=True).stdout
        print(report)
    print(json.dumps(numbers))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
