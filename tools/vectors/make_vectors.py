"""Regenerate (or extend) the vector files under tests/vectors/ from the kernel's own code.

    python tools/vectors/make_vectors.py TARGET --ksrc KERNEL_TREE [--ksrc ANOTHER_TREE ...] [--cc CC]
                                         [--qemu QEMU] [--inputs FILE] [--out FILE | --check]

Compiles the kernel files TARGET names (taken from KERNEL_TREE, a kernel source tree outside
this repository; nothing of it is copied here) with csum's shims (tools/vectors/shim/) and
harness (tools/vectors/harness.c for csum_partial, harness_bpf.c for bpf_csum_diff, whose
function is cut out of net/core/filter.c into the build directory; an assembler file is cut
after the csum_partial it defines, so the rest of it needs no shims; harness_prim.c for the
primitives/ and helpers/ files, whose functions are cut out of the kernel's headers and sources
into the build directory, and lib/checksum.c compiled whole), runs the harness natively
or under qemu-user, and writes the vector file: a header naming the kernel files and the
release they come from (the tree's Makefile; a tree extracted from Debian's linux-source-X
package into a directory named after the .deb, ``linux-source-X_VERSION``, also names the
package), the compiler, the runner and this command, the target's notes and the ``# check:`` lines of
the input file's header (facts about its numbers, kept as long as the numbers are), then one line per input (``align seed
result data`` or ``seed result from to``). The build lives in a temporary directory. Several
``--ksrc`` trees must all give the same lines; the header then names every release.

Inputs are the input columns of ``--inputs`` (default: the target's committed file, so a run
regenerates it bit for bit: ``--check`` compares instead of writing, for every tree). The
inputs of the committed files came from generators that are not in this repository (their
headers say which PRNG); new inputs are any file of ``align seed data`` lines.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
VECTORS = REPO / "tests" / "vectors"
BPF_COLUMNS = ("# columns: seed result from to -- seed = u32 (8 hex); result = helper return value: 8 hex digits "
               "of the low 32 bits when >= 0, else negative decimal (-22 = -EINVAL); from/to = bytes in memory order "
               "(hex, \"-\" if empty), each at a 64-byte aligned address")
COLUMNS = ("# columns: align seed result data -- align = byte offset of data from an 8-byte (64-byte) aligned "
           "address; seed = u32 csum_partial() sum argument (8 hex); result = u32 returned, as held in a register "
           "(8 hex); data = bytes in memory order (hex, \"-\" if empty)")
CURRENT = "a current tree (Linux 7.3, 7.2, 6.12, ...)"
C_FLAGS = ("-O2", "-fno-strict-aliasing", "-fno-strict-overflow")
STATIC = (*C_FLAGS, "-fno-builtin", "-static")


@dataclass(frozen=True)
class Target:
    """One kernel csum_partial: the files that define it, how to build and run it, what its header says."""

    sources: tuple[str, ...]            # paths inside the kernel tree
    cc: str = "gcc"                     # default compiler
    cflags: tuple[str, ...] = C_FLAGS
    qemu: str | None = None             # qemu-user binary for a cross-compiled target
    qemu_args: tuple[str, ...] = ()
    min_qemu: tuple[int, int] | None = None  # oldest qemu that emulates the file's instructions right
    shim: str | None = None             # tools/vectors/shim/csum_<shim>.h, force-included after csum_shim.h
    cut: str | None = None              # an assembler/C source is compiled only up to the line holding this
    notes: tuple[str, ...] = ()         # one "# note:" line each
    needs: str = CURRENT                # which kernel trees hold the file in this form (docs/evidence.md, tests)
    excerpt: str | None = None          # bpf_csum_diff targets: the kernel file the helper is cut out of
    form: str | None = None             # bpf_csum_diff targets: "homogenized" (v6.13+) or "legacy" (<= v6.12)
    inline: tuple[tuple[str, tuple[str, ...]], ...] = ()  # primitives: (kernel file, functions cut out of it)

    @property
    def family(self) -> str:
        return "bpf_csum_diff" if self.excerpt else "primitives" if self.inline else "csum_partial"

    @property
    def harness(self) -> str:
        return {"bpf_csum_diff": "harness_bpf.c", "primitives": "harness_prim.c"}.get(self.family, "harness.c")


def _static(*flags: str) -> tuple[str, ...]:
    return (*STATIC, *flags)


TARGETS = {
    "generic": Target(("lib/checksum.c",)),
    "x86_64": Target(("arch/x86/lib/csum-partial_64.c",), needs="a tree from v6.7 on (Linux 7.3, 7.2, 6.12)"),
    "x86_64@6.6": Target(("arch/x86/lib/csum-partial_64.c",),
                         notes=("the v5.17..v6.6 csum_partial (3411506550b1 \"x86/csum: Rewrite/optimize csum_partial()\" "
                              "and 688eb8191b47, same bits); 6.6.y stable later took the v6.7 form",),
                         needs="a tree from v5.17 to v6.6 (Linux 6.1)"),
    "x86_64@5.16": Target(("arch/x86/lib/csum-partial_64.c",),
                          notes=("Andi Kleen's do_csum + add32_with_carry, used up to v5.16",),
                          needs="a tree up to v5.16 (Linux 5.10)"),
    "generic-be": Target(("lib/checksum.c",), "s390x-linux-gnu-gcc", STATIC, qemu="qemu-s390x",
                         notes=("lib/checksum.c do_csum/csum_partial on a big-endian CPU; result = end-around add of "
                              "the 16-bit do_csum and the seed",)),
    "arm64": Target(("arch/arm64/lib/csum.c", "lib/checksum.c"), cflags=(*C_FLAGS, "-DCSUM_ARCH_DO_CSUM"),
                    notes=("C code, built for and run on x86_64 (little-endian, 64-bit like arm64)",)),
    "alpha": Target(("arch/alpha/lib/checksum.c",),
                    notes=("C code, built for and run on x86_64 (little-endian, 64-bit like alpha)",)),
    "loongarch64": Target(("arch/loongarch/lib/csum.c", "lib/checksum.c"), cflags=(*C_FLAGS, "-DCSUM_ARCH_DO_CSUM"),
                          notes=("C code, built for and run on x86_64 (little-endian, 64-bit like loongarch64)",),
                          needs="a tree from v6.1 on with arch/loongarch/lib/csum.c (Linux 7.3, 7.2, 6.12)"),
    "riscv64": Target(("arch/riscv/lib/csum.c", "lib/checksum.c"),
                      cflags=(*C_FLAGS, "-DCSUM_ARCH_DO_CSUM", "-DCSUM_ZBB=0", "-DCSUM_FAST_UNALIGNED=0"), shim="riscv",
                      notes=("C code with CONFIG_RISCV_ISA_ZBB off (plain-C fold), built for and run on x86_64 "
                           "(little-endian, 64-bit like rv64); has_fast_unaligned_accesses() = false",),
                      needs="a tree from v6.8 on with arch/riscv/lib/csum.c (Linux 7.3, 7.2, 6.12)"),
    "riscv64-zbb": Target(("arch/riscv/lib/csum.c", "lib/checksum.c"), "riscv64-linux-gnu-gcc",
                          _static("-march=rv64gc", "-mabi=lp64d", "-DCSUM_ARCH_DO_CSUM", "-DCSUM_ZBB=1",
                                 "-DCSUM_FAST_UNALIGNED=0"),
                          qemu="qemu-riscv64", qemu_args=("-cpu", "rv64,zbb=true"), shim="riscv",
                          notes=("Zbb fold (the ALTERNATIVE / riscv_has_extension_likely check resolved to Zbb present); "
                               "has_fast_unaligned_accesses() = false, so misaligned buffers use do_csum_with_alignment",),
                          needs="a tree from v6.8 on with arch/riscv/lib/csum.c (Linux 7.3, 7.2, 6.12)"),
    "riscv64-zbb-fast-unaligned": Target(
        ("arch/riscv/lib/csum.c", "lib/checksum.c"), "riscv64-linux-gnu-gcc",
        _static("-march=rv64gc", "-mabi=lp64d", "-DCSUM_ARCH_DO_CSUM", "-DCSUM_ZBB=1", "-DCSUM_FAST_UNALIGNED=1"),
        qemu="qemu-riscv64", qemu_args=("-cpu", "rv64,zbb=true"), shim="riscv",
        notes=("Zbb fold; has_fast_unaligned_accesses() = true, so every buffer uses do_csum_no_alignment",),
        needs="a tree from v6.8 on with arch/riscv/lib/csum.c (Linux 7.3, 7.2, 6.12)"),
    "arm": Target(("arch/arm/lib/csumpartial.S",), "arm-linux-gnueabihf-gcc", _static("-marm"),
                  qemu="qemu-arm", shim="arm", notes=("ARM state, __LINUX_ARM_ARCH__ = 7, little-endian",)),
    "i386": Target(("arch/x86/lib/checksum_32.S",), "i686-linux-gnu-gcc",
                   _static("-DCONFIG_X86_USE_PPRO_CHECKSUM"), shim="x86_32", cut="EXPORT_SYMBOL(csum_partial)",
                   notes=("CONFIG_X86_USE_PPRO_CHECKSUM=y body (PPro/PII); asmlinkage (arguments on the stack)",)),
    "i386-nonppro": Target(("arch/x86/lib/checksum_32.S",), "i686-linux-gnu-gcc", _static(), shim="x86_32",
                           cut="EXPORT_SYMBOL(csum_partial)",
                           notes=("CONFIG_X86_USE_PPRO_CHECKSUM not set (386/486/Pentium body); asmlinkage",
                                  "this body loses a carry at an odd address when seed + first byte overflows 32 bits "
                                  "(adcl then roll $8 overwrites CF)")),
    "mips": Target(("arch/mips/lib/csum_partial.S",), "mips-linux-gnu-gcc",
                   _static("-march=mips32r2", "-DCONFIG_CPU_MIPSR2"), qemu="qemu-mips", shim="mips",
                   cut="END(csum_partial)", notes=("o32, 32-bit big-endian, the MIPS R2 wsbh path",)),
    "mipsel": Target(("arch/mips/lib/csum_partial.S",), "mipsel-linux-gnu-gcc",
                     _static("-march=mips32r2", "-DCONFIG_CPU_MIPSR2"), qemu="qemu-mipsel", shim="mips",
                     cut="END(csum_partial)", notes=("o32, 32-bit little-endian, the MIPS R2 wsbh path",)),
    "mips64el": Target(("arch/mips/lib/csum_partial.S",), "mips64el-linux-gnuabi64-gcc",
                       _static("-march=mips64r2", "-DCONFIG_64BIT", "-DCONFIG_CPU_MIPSR2"), qemu="qemu-mips64el",
                       shim="mips", cut="END(csum_partial)",
                       notes=("n64, 64-bit little-endian (CONFIG_64BIT: USE_DOUBLE, daddu/ld sums folded 64 to 32), "
                              "the MIPS R2 wsbh path, as Debian's mips64el kernels (MIPS64R2) build it",)),
    "powerpc64": Target(("arch/powerpc/lib/checksum_64.S",), "powerpc64-linux-gnu-gcc",
                        _static("-Dcsum_partial=__csum_partial"), qemu="qemu-ppc64", shim="ppc64",
                        cut="EXPORT_SYMBOL(__csum_partial)",
                        notes=("ELFv1, big-endian; __csum_partial, which the inline csum_partial of "
                             "arch/powerpc/include/asm/checksum.h calls for a length that is not a compile-time "
                             "constant (as in bpf_csum_diff); the constant-length inline paths are not covered",)),
    "powerpc64le": Target(("arch/powerpc/lib/checksum_64.S",), "powerpc64le-linux-gnu-gcc",
                          _static("-Dcsum_partial=__csum_partial"), qemu="qemu-ppc64le", shim="ppc64",
                          cut="EXPORT_SYMBOL(__csum_partial)",
                          notes=("ELFv2, little-endian; __csum_partial (runtime length), as for powerpc64",)),
    "s390x": Target(("arch/s390/lib/csum-partial.c",), "s390x-linux-gnu-gcc",
                    _static("-march=z13", "-fno-tree-vectorize"), qemu="qemu-s390x", qemu_args=("-cpu", "max"),
                    min_qemu=(10, 0), shim="s390", cut="EXPORT_SYMBOL(csum_partial);",
                    notes=("vector-facility path (cpu_has_vx() = 1); qemu-s390x 7.2 emulates VCKSM wrongly (seed 1, "
                         "no data gives 0x100), so a qemu >= 10.0 runs it",),
                    needs="a tree from v6.8 on with the fpu_* csum-partial.c (Linux 7.3, 7.2, 6.12)"),
    "parisc": Target(("arch/parisc/lib/checksum.c",), "hppa-linux-gnu-gcc", _static(), qemu="qemu-hppa",
                     notes=("32-bit big-endian, the add/addc asm kept; csum_partial returns "
                          "csum_from32to16(do_csum + seed with end-around carry): a 16-bit value",),
                     needs="a tree with arch/parisc/lib/checksum.c, gone in 7.2 (Linux 6.12, 6.1, 5.10)"),
}

#: bpf_csum_diff (net/core/filter.c) on top of a csum_partial target, for every committed file: the v6.13
#: homogenized form needs a tree from v6.13 on (Linux 7.3, 7.2), the legacy one (512-byte scratch buffer, through
#: v6.12) an older tree (Linux 6.12, 6.1, 5.10).
FORMS = {"homogenized": "bpf_csum_diff after \"bpf: bpf_csum_diff: optimize and homogenize for all archs\" (v6.13 on)",
         "legacy": "bpf_csum_diff with the 512-byte per-CPU scratch buffer (through v6.12), here 64-byte aligned"}
for _name, _base in list(TARGETS.items()):
    for _form, _what in FORMS.items():
        if (VECTORS / "bpf_csum_diff" / f"{_name}-{_form}.txt").is_file():
            TARGETS[f"{_name}-{_form}"] = replace(
                _base, excerpt="net/core/filter.c", form=_form, notes=(_what, *_base.notes),
                needs=(f"{_base.needs}, up to v6.12 for the legacy filter.c"
                       if _form == "legacy" and _base.needs != CURRENT else
                       "a tree up to v6.12 (Linux 6.12, 6.1, 5.10)" if _form == "legacy" else
                       "a v6.13..v7.1 tree, which still has arch/parisc/lib/checksum.c (no Debian package)"
                       if _name == "parisc" else "a tree from v6.13 on (Linux 7.3, 7.2)"))


#: The kernel's checksum primitives (harness_prim.c): named "<dir>/<file>" after the committed file; the
#: functions are cut out of the kernel's headers (static inline) into the build directory, lib/checksum.c
#: is compiled whole where it defines them. Only the functions a file's lines name are called.
_GENERIC_INLINE = (("include/asm-generic/checksum.h", ("csum_fold",)), ("include/net/checksum.h", ("?csum_from32to16",)),
                   ("net/ipv6/ip6_checksum.c", ("csum_ipv6_magic",)))
PRIM_NATIVE = (*C_FLAGS, "-Werror=implicit-function-declaration", "-DCSUM_KERNEL_PRIMS")
PRIM_FLAGS = (*STATIC, "-Werror=implicit-function-declaration", "-DCSUM_KERNEL_PRIMS")
TARGETS.update({
    "primitives/generic": Target(("lib/checksum.c",), cflags=PRIM_NATIVE, inline=_GENERIC_INLINE,
                                 notes=("lib/checksum.c csum_tcpudp_nofold (from64to32), include/asm-generic/checksum.h "
                                        "csum_fold, net/ipv6/ip6_checksum.c csum_ipv6_magic; little-endian",)),
    "primitives/generic-be": Target(("lib/checksum.c",), "s390x-linux-gnu-gcc", PRIM_FLAGS, qemu="qemu-s390x",
                                    inline=_GENERIC_INLINE, notes=("the generic files built big-endian (s390x)",)),
    "helpers/generic": Target(("lib/checksum.c",), cflags=PRIM_NATIVE,
                              inline=(("include/asm-generic/checksum.h", ("csum_fold",)),
                                      ("include/net/checksum.h", ("csum_from32to16",))),
                              notes=("lib/checksum.c ip_fast_csum and csum_tcpudp_nofold, include/asm-generic/checksum.h "
                                     "csum_fold, include/net/checksum.h csum_from32to16",),
                              needs="a tree from v6.13 on, whose include/net/checksum.h has csum_from32to16 (Linux 7.3, "
                                    "7.2)"),
    "primitives/arm": Target((), "arm-linux-gnueabihf-gcc", (*PRIM_FLAGS, "-marm"), qemu="qemu-arm",
                             inline=(("arch/arm/include/asm/checksum.h",
                                      ("csum_fold", "ip_fast_csum", "csum_tcpudp_nofold")),),
                             notes=("arch/arm/include/asm/checksum.h inline asm, ARM state, little-endian",)),
    "primitives/powerpc64le": Target((), "powerpc64le-linux-gnu-gcc", PRIM_FLAGS, qemu="qemu-ppc64le",
                                     inline=(("arch/powerpc/include/asm/checksum.h",
                                              ("csum_fold", "from64to32", "csum_tcpudp_nofold", "ip_fast_csum_nofold",
                                               "ip_fast_csum")),),
                                     notes=("arch/powerpc/include/asm/checksum.h, the __powerpc64__ branches",)),
    "primitives/s390x": Target((), "s390x-linux-gnu-gcc", PRIM_FLAGS, qemu="qemu-s390x",
                               inline=(("arch/s390/include/asm/checksum.h",
                                        ("csum_fold", "ip_fast_csum", "csum_tcpudp_nofold", "csum_ipv6_magic")),)),
    **{f"primitives/{name}": Target((), cc, PRIM_FLAGS, qemu=qemu, shim="mips",
                                    inline=(("arch/mips/include/asm/checksum.h",
                                             ("csum_fold", "ip_fast_csum", "csum_tcpudp_nofold", "csum_ipv6_magic")),),
                                    notes=(f"arch/mips/include/asm/checksum.h (its C and inline asm), {build}",))
       for name, cc, qemu, build in (
           ("mips", "mips-linux-gnu-gcc", "qemu-mips", "o32, 32-bit big-endian"),
           ("mipsel", "mipsel-linux-gnu-gcc", "qemu-mipsel", "o32, 32-bit little-endian"),
           ("mips64el", "mips64el-linux-gnuabi64-gcc", "qemu-mips64el", "n64, 64-bit little-endian (CONFIG_64BIT)"))},
    "primitives/x86_64": Target((), cflags=PRIM_NATIVE,
                                inline=(("arch/x86/include/asm/checksum_64.h",
                                         ("csum_fold", "ip_fast_csum", "csum_tcpudp_nofold", "add32_with_carry",
                                          "csum_ipv6_magic")),),
                                needs="a tree whose arch/x86/include/asm/checksum_64.h defines csum_ipv6_magic "
                                      "(Linux 7.3, 7.2)"),
})


def committed_file(name: str) -> Path:
    """The committed vector file a target regenerates."""
    return VECTORS / f"{name}.txt" if "/" in name else VECTORS / TARGETS[name].family / f"{name}.txt"


def _functions(path: Path, names: tuple[str, ...]) -> str:
    """The definitions of ``names`` (``?name``: if there) in ``path``: from the declarator lines to the closing brace."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for name in names:
        optional, name = name.startswith("?"), name.lstrip("?")
        at = next((i for i, line in enumerate(lines) if re.search(rf"(^|[\s*]){name}\(", line)
                   and not line.rstrip().endswith(";") and not line.lstrip().startswith(("#", "*", "/*"))
                   and any(lines[j].startswith("{") for j in range(i, min(i + 6, len(lines))))), None)
        if at is None and optional:
            continue
        if at is None:
            raise SystemExit(f"make_vectors: no definition of {name} in {path}")
        start = at
        while start and lines[start - 1].strip() and not lines[start - 1].rstrip().endswith((";", "}", "*/")) \
                and not lines[start - 1].startswith("#"):
            start -= 1
        end = next(j for j in range(at, len(lines)) if lines[j] == "}")
        # A file's exported function becomes static here: the header goes into every unit of the build.
        out += ([] if lines[start].startswith("static") else ["static"]) + lines[start : end + 1] + [""]
    return "\n".join(out)


def release(ksrc: Path) -> str:
    """The kernel release a tree holds (its Makefile), with the Debian package a tree named after one came from."""
    makefile = (ksrc / "Makefile").read_text(encoding="utf-8", errors="replace") if (ksrc / "Makefile").is_file() else ""
    fields = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION) = *(\S*)", makefile, re.M))
    if not {"VERSION", "PATCHLEVEL", "SUBLEVEL"} <= fields.keys():
        return f"the tree {ksrc.name} (no kernel Makefile)"
    name = f"Linux {fields['VERSION']}.{fields['PATCHLEVEL']}.{fields['SUBLEVEL']}{fields.get('EXTRAVERSION', '')}"
    debian = re.fullmatch(r"(linux-source-[0-9.]+)_(.+)", ksrc.name)
    return f"{name} (Debian {debian[1]} {debian[2]})" if debian else name


def _cut(path: Path, marker: str, workdir: Path) -> Path:
    """The kernel file up to and including the first line holding ``marker``, written into the build directory."""
    text = path.read_text(encoding="utf-8")
    at = text.find(marker)
    if at < 0:
        raise SystemExit(f"make_vectors: no {marker} in {path}")
    out = workdir / path.name
    out.write_text(text[: text.index("\n", at) + 1], encoding="utf-8")
    return out


def _excerpt(path: Path, form: str, workdir: Path) -> Path:
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
    found = "legacy" if "scratch" in parts[-1] else "homogenized"
    if found != form:
        raise SystemExit(f"make_vectors: {path} has the {found} bpf_csum_diff, this target needs the {form} one")
    out = workdir / "bpf_csum_diff.c"
    out.write_text("\n".join(parts[-1:] if form == "homogenized" else parts), encoding="utf-8")
    return out


def _first_line(cmd: list[str]) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return (out.stdout or out.stderr).splitlines()[0].strip()


def qemu_problem(target: Target, qemu: str | None) -> str | None:
    """Why ``qemu`` cannot run ``target`` (not installed, too old), or None when it can."""
    if not qemu:
        return None
    if shutil.which(qemu) is None:
        return f"not installed: {qemu}"
    if target.min_qemu:
        version = re.search(r"version (\d+)\.(\d+)", _first_line([qemu, "--version"]))
        if not version or (int(version[1]), int(version[2])) < target.min_qemu:
            return (f"{qemu} is {version[0] if version else 'of unknown version'}; this target needs qemu >= "
                    f"{'.'.join(map(str, target.min_qemu))} (give --qemu a newer qemu-user binary)")
    return None


#: Fields of a primitives line with its result (the result is third, or last for the pseudo-header sums).
PRIM_FIELDS = {"csum_fold": 3, "csum_from32to16": 3, "ip_fast_csum": 4, "csum_tcpudp_nofold": 7, "csum_ipv6_magic": 7}


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
        if fields[0] in PRIM_FIELDS:
            if len(fields) == PRIM_FIELDS[fields[0]]:
                del fields[2 if len(fields) < 7 else 6]
        elif len(fields) == 4:
            del fields[1 if bpf else 2]
        cases.append(" ".join(fields))
    return cases


def build(target: Target, ksrc: Path, cc: str, workdir: Path, cases: list[str]) -> Path:
    """Compile the kernel file(s) and the harness into one executable under ``workdir``."""
    sources = [ksrc / path for path in target.sources]
    for source in sources + [ksrc / path for path, _ in target.inline]:
        if not source.is_file():
            raise SystemExit(f"make_vectors: {source} not found (--ksrc needs {target.needs})")
    extra = []
    if target.inline:
        prims = workdir / "kernel_prims.h"
        prims.write_text("\n".join(_functions(ksrc / path, names) for path, names in target.inline), encoding="utf-8")
        called = sorted({case.split()[0] for case in cases})
        cut = {name.lstrip("?") for _, names in target.inline for name in names}
        extra = ["-include", str(prims), *(f"-DCSUM_HAVE_{name}" for name in called),
                 *(f"-DCSUM_EXTERN_{name}" for name in called if name not in cut)]
    if target.cut:
        sources[0] = _cut(sources[0], target.cut, workdir)
    if target.excerpt:
        sources.append(_excerpt(ksrc / target.excerpt, target.form or "", workdir))
    exe = workdir / "harness"
    harness = HERE / target.harness
    shim = ["-include", f"csum_{target.shim}.h"] if target.shim else []
    cmd = [cc, *target.cflags, "-I", str(HERE / "shim"), "-include", "csum_shim.h", *shim, *extra, "-o", str(exe),
           str(harness), *map(str, sources)]
    subprocess.run(cmd, check=True)
    return exe


def run(exe: Path, target: Target, qemu: str | None, cases: list[str]) -> list[str]:
    cmd = ([qemu, *target.qemu_args] if qemu else []) + [str(exe)]
    out = subprocess.run(cmd, input="\n".join(cases) + "\n", capture_output=True, text=True, check=False)
    lines = out.stdout.splitlines()
    if out.returncode or len(lines) != len(cases):
        raise SystemExit(f"make_vectors: harness answered {len(lines)} of {len(cases)} cases "
                         f"(exit {out.returncode}): {out.stderr[-500:]}")
    return lines


def _home(path: Path) -> str:
    text, home = str(path), str(Path.home())
    return "~" + text[len(home):] if text.startswith(home + os.sep) else text


def header(name: str, target: Target, cc: str, qemu: str | None, trees: list[Path], inputs: Path) -> list[str]:
    runner = (f"run under {_first_line([qemu, '--version'])}{''.join(' ' + a for a in target.qemu_args)}" if qemu
              else f"run natively on {os.uname().machine}")
    command = f"python tools/vectors/make_vectors.py {name}{''.join(f' --ksrc {_home(t)}' for t in trees)} --cc {cc}"
    if qemu:
        command += f" --qemu {qemu}"
    files = ", ".join([*target.sources, *(f"{path} ({', '.join(names)})" for path, names in target.inline)])
    files += f" (up to its {target.cut})" if target.cut else ""
    if target.excerpt:
        files = f"{target.excerpt} bpf_csum_diff ({target.form} form) on top of {files}"
    same = "" if len(trees) == 1 else "; every release gave the same lines"
    lines = [f"# source: {files} of {', '.join(map(release, trees))}{same}",
             f"# built: {_first_line([cc, '--version'])} {' '.join(target.cflags)}, with csum's harness and shims "
             f"(tools/vectors/{target.harness}, tools/vectors/shim/"
             f"{f'csum_shim.h + csum_{target.shim}.h' if target.shim else 'csum_shim.h'}); {runner} "
             "(outside this repository)",
             f"# command: {command}"]
    lines += [f"# note: {note}" for note in target.notes]
    lines += [line for line in inputs.read_text(encoding="utf-8").splitlines() if line.startswith("# check: ")]
    if target.inline:
        columns = [line for line in inputs.read_text(encoding="utf-8").splitlines()
                   if line.startswith(("# columns", "#   "))]
        return lines + [f"# inputs: {_origin(inputs)}", *columns]
    lines += [f"# inputs: {_origin(inputs)}; each case run twice, with the bytes around the buffers 0x5a then "
              "0xa5, results identical", BPF_COLUMNS if target.excerpt else COLUMNS]
    return lines


def _origin(inputs: Path) -> str:
    """Where the input cases come from: a committed vector file keeps the origin its header states."""
    where = inputs.relative_to(REPO) if inputs.is_relative_to(REPO) else inputs
    text = inputs.read_text(encoding="utf-8").splitlines()
    said = [line[len("# inputs: "):] for line in text if line.startswith("# inputs: ")] or \
        [f"made by {line[len('# command: '):]}" for line in text if line.startswith("# command: python3 /tmp/")]
    if not said:
        return f"the input lines of {where}"
    first = said[0].split(";")[0]
    if first.startswith("the input columns of "):
        return first
    return (f"the input columns of {where}, first drawn by a generator that is not in this "
            f"repository (its header said: {first})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--ksrc", type=Path, action="append", required=True,
                        help="kernel source tree outside this repository (repeat: every tree must agree)")
    parser.add_argument("--cc", help="compiler (default: the target's)")
    parser.add_argument("--qemu", help="qemu-user binary for a cross-compiled target (default: the target's)")
    parser.add_argument("--inputs", type=Path, help="align/seed/data cases (default: the committed vector file)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--out", type=Path, help="write the vector file here (default: print it)")
    group.add_argument("--check", action="store_true", help="compare every case line with the committed file")
    args = parser.parse_args(argv)
    target = TARGETS[args.target]
    trees = [ksrc.resolve() for ksrc in args.ksrc]
    if any(tree.is_relative_to(REPO) for tree in trees):
        raise SystemExit("make_vectors: the kernel tree must live outside this repository")
    cc, qemu = args.cc or target.cc, args.qemu or target.qemu
    problem = qemu_problem(target, qemu)
    if problem:
        raise SystemExit(f"make_vectors: {problem}")
    committed = committed_file(args.target)
    inputs = args.inputs or committed
    cases = read_inputs(inputs)
    outputs = []
    for tree in trees:
        workdir = Path(tempfile.mkdtemp(prefix="csum-vectors-"))
        try:
            outputs.append(run(build(target, tree, cc, workdir, cases), target, qemu, cases))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.check:
        want = [line for line in committed.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
        failed = 0
        for tree, results in zip(trees, outputs):
            bad = [(i, a, b) for i, (a, b) in enumerate(zip(results, want)) if a != b]
            if bad or len(results) != len(want):
                print(f"{committed.name} from {release(tree)}: {len(bad)} of {len(want)} lines differ, e.g. {bad[:3]}",
                      file=sys.stderr)
                failed = 1
            else:
                print(f"{committed.name}: all {len(want)} case lines regenerated bit for bit from {release(tree)}")
        return failed
    differ = [release(tree) for tree, results in zip(trees, outputs) if results != outputs[0]]
    if differ:
        raise SystemExit(f"make_vectors: {', '.join(differ)} give other lines than {release(trees[0])}")
    text = "\n".join(header(args.target, target, cc, qemu, trees, inputs) + outputs[0]) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
