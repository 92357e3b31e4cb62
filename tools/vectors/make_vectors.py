"""Regenerate (or extend) tests/vectors/{csum_partial,bpf_csum_diff}/<target>.txt from the kernel's own code.

    python tools/vectors/make_vectors.py TARGET --ksrc KERNEL_TREE [--cc CC] [--qemu QEMU]
                                         [--inputs FILE] [--out FILE | --check]

Compiles the kernel files TARGET names (taken from KERNEL_TREE, a kernel source tree outside
this repository; nothing of it is copied here) with csum's shims (tools/vectors/shim/) and
harness (tools/vectors/harness.c for csum_partial, harness_bpf.c for bpf_csum_diff, whose
function is cut out of net/core/filter.c into the build directory), runs the harness natively
or under qemu-user, and writes the vector file: a header naming the kernel files, the compiler,
the runner and this command, then one line per input (``align seed result data`` or ``seed
result from to``). The build lives in a temporary directory.

Inputs are the input columns of ``--inputs`` (default: the target's committed
file, so a run regenerates it bit for bit: ``--check`` compares instead of writing). The
inputs of the committed files came from generators that are not in this repository (their
headers say which PRNG); new inputs are any file of ``align seed data`` lines.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VECTORS = REPO / "tests" / "vectors" / "csum_partial"
BPF_COLUMNS = ("# columns: seed result from to -- seed = u32 (8 hex); result = helper return value: 8 hex digits "
               "of the low 32 bits when >= 0, else negative decimal (-22 = -EINVAL); from/to = bytes in memory order "
               "(hex, \"-\" if empty), each at a 64-byte aligned address")
COLUMNS = ("# columns: align seed result data -- align = byte offset of data from an 8-byte (64-byte) aligned "
           "address; seed = u32 csum_partial() sum argument (8 hex); result = u32 returned, as held in a register "
           "(8 hex); data = bytes in memory order (hex, \"-\" if empty)")


@dataclass(frozen=True)
class Target:
    """One kernel csum_partial: the file that defines it, how to build it, what its header says."""

    sources: tuple[str, ...]    # paths inside the kernel tree
    provenance: str             # where those files were read (repository path@commit, release)
    cc: str                     # default compiler
    cflags: tuple[str, ...]
    qemu: str | None = None     # qemu-user binary for a cross-compiled target
    note: str = ""
    excerpt: str | None = None  # bpf_csum_diff targets: the kernel file the helper is cut out of

    @property
    def family(self) -> str:
        return "bpf_csum_diff" if self.excerpt else "csum_partial"


MIRROR = "Kingxukai/linux (a mirror of torvalds/linux)"
SNAPSHOT = ("mainline with the v6.13 homogenized bpf_csum_diff; the index does not record which tag contains "
            "the commit")
TARGETS = {
    "generic": Target(
        ("lib/checksum.c",),
        f"{MIRROR} lib/checksum.c@0291023e7330da28f2f7453c87c2ab7082d8360f ({SNAPSHOT}); do_csum/csum_partial "
        "arithmetic unchanged since torvalds/linux lib/checksum.c@02b5a6031ba7a8cbfde5d65ff9e13ecdbc4a92ca "
        "(from32to16 instead of csum_from32to16, same bits)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow")),
    "x86_64": Target(
        ("arch/x86/lib/csum-partial_64.c",),
        f"{MIRROR} arch/x86/lib/csum-partial_64.c@0291023e7330da28f2f7453c87c2ab7082d8360f ({SNAPSHOT}; the "
        "content of torvalds/linux a476aae3f1dc78a162a0d2e7945feea7d2b29401 \"x86/csum: clean up `csum_partial' "
        "further\", released in v6.7)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow")),
    "generic-be": Target(
        ("lib/checksum.c",),
        f"{MIRROR} lib/checksum.c@0291023e7330da28f2f7453c87c2ab7082d8360f ({SNAPSHOT}), compiled big-endian "
        "(__BIG_ENDIAN)",
        "s390x-linux-gnu-gcc", ("-O2", "-fno-strict-aliasing", "-fno-builtin", "-static"), qemu="qemu-s390x",
        note="lib/checksum.c do_csum/csum_partial on a big-endian CPU; result = end-around add of the 16-bit "
             "do_csum and the seed"),
    "x86_64@5.16": Target(
        ("arch/x86/lib/csum-partial_64.c",),
        "torvalds/linux arch/x86/lib/csum-partial_64.c@16217dc79dbc599b110dda26d0421df47904bba4 (Andi Kleen's "
        "do_csum + add32_with_carry, used up to v5.16, replaced in v5.17 by 3411506550b1)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow"),
        note="--ksrc must hold the v5.16-era file at its kernel path"),
    "arm64": Target(
        ("arch/arm64/lib/csum.c", "lib/checksum.c"),
        "torvalds/linux arch/arm64/lib/csum.c@0cfa80d3c398c747f9d502f5812465b082ad675a (do_csum) with "
        f"{MIRROR} lib/checksum.c@0291023e7330da28f2f7453c87c2ab7082d8360f ({SNAPSHOT}; csum_partial around "
        "the arch do_csum)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow", "-DCSUM_ARCH_DO_CSUM"),
        note="C code, built for and run on x86_64 (little-endian, 64-bit like arm64)"),
    "alpha": Target(
        ("arch/alpha/lib/checksum.c",),
        f"{MIRROR} arch/alpha/lib/checksum.c@9b44fff655e2c6f4cc53cb499dd2c038e99cb013 (do_csum + csum_partial; "
        "mainline with the v6.13 homogenized bpf_csum_diff, tag not recorded in the index)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow"),
        note="C code, built for and run on x86_64 (little-endian, 64-bit like alpha)"),
    "loongarch64": Target(
        ("arch/loongarch/lib/csum.c", "lib/checksum.c"),
        f"{MIRROR} arch/loongarch/lib/csum.c@0291023e7330da28f2f7453c87c2ab7082d8360f (do_csum) with lib/checksum.c "
        f"of the same commit ({SNAPSHOT}; csum_partial around the arch do_csum)",
        "gcc", ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow", "-DCSUM_ARCH_DO_CSUM"),
        note="C code, built for and run on x86_64 (little-endian, 64-bit like loongarch64)"),
}

#: bpf_csum_diff (net/core/filter.c) on top of each csum_partial target: the v6.13 form needs a tree with the
#: homogenized filter.c, the legacy one (scratch buffer, through v6.12) a tree with the old filter.c.
FILTER = {
    "homogenized": f"{MIRROR} net/core/filter.c@0291023e7330da28f2f7453c87c2ab7082d8360f (bpf_csum_diff after "
                   "\"bpf: bpf_csum_diff: optimize and homogenize for all archs\", v6.13 and later)",
    "legacy": "torvalds/linux net/core/filter.c@0076cad30135f95bf9a144269906f9b7a4eb542c (bpf_csum_diff legacy form "
              "with the 512-byte scratch buffer, used through v6.12)",
}
for _name in ("generic", "x86_64"):
    for _form, _where in FILTER.items():
        _base = TARGETS[_name]
        TARGETS[f"{_name}-{_form}"] = Target(
            _base.sources, f"{_where}\n# source: {_base.provenance}", _base.cc, _base.cflags, _base.qemu,
            note=f"--ksrc must hold the {_form} net/core/filter.c; the scratch buffer is 64-byte aligned"
            if _form == "legacy" else f"--ksrc must hold the {_form} net/core/filter.c",
            excerpt="net/core/filter.c")


def _excerpt(path: Path, workdir: Path) -> Path:
    """Cut bpf_csum_diff (and the legacy scratch pad it uses) out of net/core/filter.c into the build directory."""
    text = path.read_text(encoding="utf-8")
    parts = []
    for start, end in (("struct bpf_scratchpad {", "\n};\n"), ("static DEFINE_PER_CPU(struct bpf_scratchpad", ";\n"),
                       ("BPF_CALL_5(bpf_csum_diff,", "\n}\n")):
        at = text.find(start)
        if at >= 0:
            parts.append(text[at : text.index(end, at) + len(end)])
    if not parts or not parts[-1].startswith("BPF_CALL_5"):
        raise SystemExit(f"make_vectors: no bpf_csum_diff in {path}")
    out = workdir / "bpf_csum_diff.c"
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def _first_line(cmd: list[str]) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).splitlines()[0].strip()


def read_inputs(path: Path) -> list[str]:
    """The inputs of every case line of a vector file (or a plain inputs file): all but the result column.

    csum_partial lines are ``align seed result data`` (result third), bpf_csum_diff lines
    ``seed result from to`` (result second); inputs files leave the result out.
    """
    bpf = path.parent.name == "bpf_csum_diff"
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) == 4:
            del fields[1 if bpf else 2]
        cases.append(" ".join(fields))
    return cases


def build(target: Target, ksrc: Path, cc: str, workdir: Path) -> Path:
    """Compile the kernel file and the harness into one executable under ``workdir``."""
    sources = [ksrc / path for path in target.sources]
    for source in sources:
        if not source.is_file():
            raise SystemExit(f"make_vectors: {source} not found (give --ksrc a kernel source tree)")
    if target.excerpt:
        sources.append(_excerpt(ksrc / target.excerpt, workdir))
    exe = workdir / "harness"
    harness = HERE / ("harness_bpf.c" if target.excerpt else "harness.c")
    cmd = [cc, *target.cflags, "-I", str(HERE / "shim"), "-include", "csum_shim.h", "-o", str(exe),
           str(harness), *map(str, sources)]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, qemu: str | None, cases: list[str]) -> list[str]:
    cmd = ([qemu] if qemu else []) + [str(exe)]
    out = subprocess.run(cmd, input="\n".join(cases) + "\n", capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    if len(lines) != len(cases):
        raise SystemExit(f"make_vectors: harness answered {len(lines)} of {len(cases)} cases: {out.stderr}")
    return lines


def header(name: str, target: Target, cc: str, qemu: str | None, ksrc: Path, inputs: Path) -> list[str]:
    runner = (f"run under {_first_line([qemu, '--version'])}" if qemu
              else f"run natively on {os.uname().machine}")
    command = f"python tools/vectors/make_vectors.py {name} --ksrc {ksrc} --cc {cc}"
    if qemu:
        command += f" --qemu {qemu}"
    lines = [f"# source: {target.provenance}",
             f"# built: {_first_line([cc, '--version'])} {' '.join(target.cflags)}, with csum's harness and shims "
             f"(tools/vectors/{'harness_bpf.c' if target.excerpt else 'harness.c'}, tools/vectors/shim/: types, "
             f"annotations, csum_from32to16/csum_fold{', csum_add/csum_sub' if target.excerpt else ''}, ror64, "
             f"load_unaligned_zeropad); {runner} (outside this repository)",
             f"# command: {command}"]
    if target.note:
        lines.append(f"# note: {target.note}")
    lines += [f"# inputs: {_origin(inputs)}; each case run twice, with the bytes around the buffers 0x5a then "
              "0xa5, results identical", BPF_COLUMNS if target.excerpt else COLUMNS]
    return lines


def _origin(inputs: Path) -> str:
    """Where the input cases come from: a committed vector file keeps the origin its header states."""
    where = inputs.relative_to(REPO) if inputs.is_relative_to(REPO) else inputs
    said = [line for line in inputs.read_text(encoding="utf-8").splitlines() if line.startswith("# inputs: ")]
    if not said:
        return f"the input lines of {where}"
    first = said[0][len("# inputs: "):].split(";")[0]
    if first.startswith("the input columns of "):
        return first
    return (f"the input columns of {where}, first drawn by a generator that is not in this "
            f"repository (its header said: {first})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--ksrc", type=Path, required=True, help="kernel source tree (outside this repository)")
    parser.add_argument("--cc", help="compiler (default: the target's)")
    parser.add_argument("--qemu", help="qemu-user binary for a cross-compiled target (default: the target's)")
    parser.add_argument("--inputs", type=Path, help="align/seed/data cases (default: the committed vector file)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--out", type=Path, help="write the vector file here (default: print it)")
    group.add_argument("--check", action="store_true", help="compare every case line with the committed file")
    args = parser.parse_args(argv)
    target = TARGETS[args.target]
    if args.ksrc.resolve().is_relative_to(REPO):
        raise SystemExit("make_vectors: the kernel tree must live outside this repository")
    cc, qemu = args.cc or target.cc, args.qemu or target.qemu
    committed = VECTORS.parent / target.family / f"{args.target}.txt"
    inputs = args.inputs or committed
    cases = read_inputs(inputs)
    workdir = Path(tempfile.mkdtemp(prefix="csum-vectors-"))
    try:
        results = run(build(target, args.ksrc.resolve(), cc, workdir), qemu, cases)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.check:
        want = [line for line in committed.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
        bad = [(i, a, b) for i, (a, b) in enumerate(zip(results, want)) if a != b]
        if bad or len(results) != len(want):
            print(f"{committed.name}: {len(bad)} of {len(want)} lines differ, e.g. {bad[:3]}", file=sys.stderr)
            return 1
        print(f"{committed.name}: all {len(want)} case lines regenerated bit for bit")
        return 0
    text = "\n".join(header(args.target, target, cc, qemu, args.ksrc, inputs) + results) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
