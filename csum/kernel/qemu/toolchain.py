"""Which compiler builds csum's runner (runner.c) for a guest architecture, and how.

* The architecture's Debian cross gcc (``Arch.cc``): ``CC -O2 -static``.
* Where that gcc is not packaged for the host (loong64 on Debian 12), clang-19
  and lld-19 for the architecture's clang target (``Arch.clang``):
  ``clang-19 --target=TRIPLE --sysroot=SYSROOT -fuse-ld=lld -O2 -static``, with
  a sysroot made of the guest architecture's own Debian packages (libc6-dev,
  linux-libc-dev and the libgcc-N-dev of the suite's default gcc, whose
  ``crtbeginT.o`` and ``libgcc.a`` glibc's static printf needs), fetched from
  :data:`SYSROOT_SUITE` once (csum.kernel.qemu.debian) and cached with the
  packages' versions and SHA256s.

:func:`recipe` returns the command and a one-line note of the tools and
packages it uses, which the boot's vector header names.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ...errors import Code, CsumValueError
from .debian import MANIFEST, apt, cache_dir, depends, download, extract, update

#: The suite the sysroot's packages come from (Debian's loong64 port is in unstable).
SYSROOT_SUITE = "unstable"
CLANG, LLD = "clang-19", "ld.lld-19"


@dataclass(frozen=True)
class Recipe:
    """A compiler command (``-o OUT SRC`` still to add) and what it is, for the vector header."""

    command: tuple[str, ...]
    note: str

    def argv(self, source: Path, out: Path) -> list[str]:
        """The full command line compiling ``source`` into ``out``."""
        return [*self.command, "-o", str(out), str(source)]


def first_line(*cmd: str) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True)
    return (done.stdout or done.stderr).strip().splitlines()[0]


def sysroot(debian_arch: str) -> tuple[Path, list[str]]:
    """The sysroot for ``debian_arch`` and its packages (``package version (sha256 ...)``), fetched once."""
    root = cache_dir() / "sysroot" / f"{SYSROOT_SUITE}-{debian_arch}"
    if not (root / MANIFEST).is_file():
        update(SYSROOT_SUITE, debian_arch)
        gcc = depends(apt(SYSROOT_SUITE, debian_arch, "apt-cache", "show", "--no-all-versions", "gcc"))
        major = next((m[1] for m in map(re.compile(r"gcc-(\d+)").fullmatch, gcc) if m), None)
        if major is None:
            raise CsumValueError(f"--qemu {debian_arch}: {SYSROOT_SUITE}'s gcc names no gcc-N package "
                                 f"(Depends: {', '.join(gcc)})", code=Code.APT_FAILED)
        debs = [download(SYSROOT_SUITE, debian_arch, name)
                for name in ("libc6-dev", "linux-libc-dev", f"libgcc-{major}-dev")]
        extract(debs, root)
    return root, (root / MANIFEST).read_text().splitlines()


def recipe(cc: str, clang_target: str, debian_arch: str) -> Recipe:
    """How to build the runner for ``debian_arch``: its cross gcc ``cc``, else clang for ``clang_target``."""
    if shutil.which(cc):
        return Recipe((cc, "-O2", "-static"), f"{first_line(cc, '--version')}: {cc} -O2 -static")
    package = f"gcc-{cc.rsplit('-gcc', 1)[0].replace('_', '-')}"
    if not clang_target:
        raise CsumValueError(f"--qemu {debian_arch}: cross compiler {cc} not found (Debian package {package})",
                             code=Code.NO_COMPILER)
    if not (shutil.which(CLANG) and shutil.which(LLD)):
        raise CsumValueError(f"--qemu {debian_arch}: cross compiler {cc} not found (Debian package {package}, "
                             f"Debian 13 on), nor {CLANG} and {LLD}, which build the runner against Debian's "
                             f"{debian_arch} libc (Debian 12: apt-get install clang-19 lld-19)", code=Code.NO_COMPILER)
    root, packages = sysroot(debian_arch)
    flags = (f"--target={clang_target}", "-fuse-ld=lld", "-O2", "-static")
    return Recipe((CLANG, f"--sysroot={root}", *flags),
                  f"{first_line(CLANG, '--version')} with {first_line(LLD, '--version')}: {CLANG} {' '.join(flags)} "
                  f"against Debian {SYSROOT_SUITE} {debian_arch}'s {', '.join(packages)}")
