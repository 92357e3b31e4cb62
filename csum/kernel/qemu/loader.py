"""Building csum's prog loader (``loader.c``) for a guest architecture: the ``/init`` that ``csum prog --debian``
boots.

The loader links libbpf statically, so it is built with the guest architecture's Debian cross gcc (``Arch.cc``)
against that architecture's own Debian static libraries: ``libbpf.a``, ``libelf.a``, ``libz.a`` and ``libzstd.a``
from :data:`LIBS` of :data:`SUITE`, fetched once with csum's private apt state (csum.kernel.qemu.debian) and
checked against the archive's SHA256. The binary is cached under the cache directory by the hash of the source and
the recipe; the recipe's note (compiler version, flags, packages) names how it was built.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ...errors import Code, CsumValueError
from .debian import MANIFEST, cache_dir, download, extract, update
from .guest import Arch, Runner, build_static

#: The Debian release the static libraries come from (libbpf 1.1).
SUITE = "bookworm"
#: The Debian packages holding the static libraries the loader links: libbpf.a, libelf.a, libz.a, libzstd.a.
LIBS = ("libbpf-dev", "libelf-dev", "zlib1g-dev", "libzstd-dev")


def loader_source() -> bytes:
    """The loader's C source, as shipped in the package."""
    return resources.files("csum.kernel.qemu").joinpath("loader.c").read_bytes()


def cross_package(cc: str) -> str:
    """The Debian package holding cross compiler ``cc`` (``aarch64-linux-gnu-gcc`` -> ``gcc-aarch64-linux-gnu``)."""
    return f"gcc-{cc.rsplit('-gcc', 1)[0].replace('_', '-')}"


def libraries(debian_arch: str) -> tuple[Path, list[str]]:
    """The tree of :data:`LIBS` for ``debian_arch`` and its packages (``package version (sha256 ...)``), fetched
    once."""
    root = cache_dir() / "loader-libs" / f"{SUITE}-{debian_arch}"
    if not (root / MANIFEST).is_file():
        update(SUITE, debian_arch)
        extract([download(SUITE, debian_arch, name) for name in LIBS], root)
    return root, (root / MANIFEST).read_text().splitlines()


def build_loader(a: Arch) -> Runner:
    """The static loader for ``a``, built on first use; raises CsumValueError naming the package of a missing
    compiler."""
    if not shutil.which(a.cc):
        raise CsumValueError(f"--debian {a.debian}: cross compiler {a.cc} not found (Debian package "
                             f"{cross_package(a.cc)})", code=Code.NO_COMPILER)
    root, packages = libraries(a.debian)
    found = sorted((root / "usr" / "lib").glob("*/libbpf.a"))
    if not found:
        raise CsumValueError(f"--debian {a.debian}: Debian {SUITE}'s libbpf-dev for {a.debian} holds no libbpf.a",
                             code=Code.BUILD_FAILED)
    libdir = found[0].parent
    include = root / "usr" / "include"
    flags = ("-O2", "-static")
    command = [a.cc, *flags, f"-I{include}", f"-I{include / libdir.name}"]
    version = subprocess.run([a.cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    note = (f"{version}: {a.cc} {' '.join(flags)} loader.c -lbpf -lelf -lz -lzstd against Debian {SUITE} "
            f"{a.debian}'s {', '.join(packages)}")
    return build_static("loader", a.debian, loader_source(), note,
                        lambda src, binary: [*command, "-o", str(binary), str(src), f"-L{libdir}", "-lbpf", "-lelf",
                                             "-lz", "-lzstd"], a.cc)
