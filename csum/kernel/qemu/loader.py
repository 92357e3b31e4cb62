"""Building csum's prog loader (``loader.c``) for a guest architecture: the ``/init`` that ``csum prog --debian``
boots.

The loader links libbpf statically, so it is built with the guest architecture's Debian cross gcc (``Arch.cc``)
against that architecture's own Debian static libraries: ``libbpf.a``, ``libelf.a``, ``libz.a`` and ``libzstd.a``
from :data:`LIBS` of :func:`suite` (bookworm; the release that has the architecture where bookworm has not),
fetched once with csum's private apt state (csum.kernel.qemu.debian) and
checked against the archive's SHA256. The binary is cached under the cache directory by the hash of the source and
the recipe; the recipe's note (compiler version, flags, packages) names how it was built.

Where the libraries come from unstable (riscv64, loong64), glibc must come from there too (its static archives call
glibc 2.38's ``__isoc23_strtol``; bookworm's cross binutils cannot link unstable's libc.a), so the loader is built
with clang-19 and lld-19 against the sysroot of csum.kernel.qemu.toolchain (unstable's libc6-dev, linux-libc-dev,
libgcc-N-dev). unstable's ``libelf.a`` and ``libz.a`` both define ``crc32`` (elfutils' lib/crc32.c and zlib's, the
same IEEE 802.3 CRC-32), so that link allows the duplicate and keeps libelf's.
"""

from __future__ import annotations

import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ...errors import Code, CsumValueError
from .debian import MANIFEST, cache_dir, download, extract, update
from . import toolchain
from .guest import Arch, Runner, build_static

#: The Debian release the static libraries come from (libbpf 1.1).
SUITE = "bookworm"
#: Where bookworm has no such architecture: unstable (loong64 is there only; trixie's riscv64 libelf.a 0.192 lacks
#: its own eu_search_tree_* functions, so it links nowhere statically).
SUITES = {"riscv64": toolchain.SYSROOT_SUITE, "loong64": toolchain.SYSROOT_SUITE}
#: The Debian packages holding the static libraries the loader links: libbpf.a, libelf.a, libz.a, libzstd.a.
LIBS = ("libbpf-dev", "libelf-dev", "zlib1g-dev", "libzstd-dev")


def loader_source() -> bytes:
    """The loader's C source, as shipped in the package."""
    return resources.files("csum.kernel.qemu").joinpath("loader.c").read_bytes()


def cross_package(cc: str) -> str:
    """The Debian package holding cross compiler ``cc`` (``aarch64-linux-gnu-gcc`` -> ``gcc-aarch64-linux-gnu``)."""
    return f"gcc-{cc.rsplit('-gcc', 1)[0].replace('_', '-')}"


def suite(debian_arch: str) -> str:
    """The Debian release whose static libraries the loader for ``debian_arch`` links."""
    return SUITES.get(debian_arch, SUITE)


def libraries(debian_arch: str) -> tuple[Path, list[str]]:
    """The tree of :data:`LIBS` for ``debian_arch`` and its packages (``package version (sha256 ...)``), fetched
    once."""
    release = suite(debian_arch)
    root = cache_dir() / "loader-libs" / f"{release}-{debian_arch}"
    if not (root / MANIFEST).is_file():
        update(release, debian_arch)
        extract([download(release, debian_arch, name) for name in LIBS], root)
    return root, (root / MANIFEST).read_text().splitlines()


def build_loader(a: Arch) -> Runner:
    """The static loader for ``a``, built on first use; raises CsumValueError naming the package of a missing
    compiler."""
    root, packages = libraries_checked(a)
    libdir = next((root / "usr" / "lib").glob("*/libbpf.a")).parent
    include = root / "usr" / "include"
    libs: tuple[str, ...] = ("-lbpf", "-lelf", "-lz", "-lzstd")
    if suite(a.debian) == SUITE:
        flags: tuple[str, ...] = ("-O2", "-static")
        command = [a.cc, *flags]
        version = subprocess.run([a.cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        how = f"{version}: {a.cc} {' '.join(flags)} loader.c {' '.join(libs)}"
    else:
        sysroot, sys_packages = toolchain.sysroot(a.debian)
        flags = (f"--target={a.clang or a.cc.removesuffix('-gcc')}", "-fuse-ld=lld", "-O2", "-static")
        command = [toolchain.CLANG, f"--sysroot={sysroot}", *flags]
        libs += ("-Wl,--allow-multiple-definition",)
        how = (f"{toolchain.first_line(toolchain.CLANG, '--version')} with "
               f"{toolchain.first_line(toolchain.LLD, '--version')}: {toolchain.CLANG} {' '.join(flags)} loader.c "
               f"{' '.join(libs)} against Debian {toolchain.SYSROOT_SUITE} {a.debian}'s {', '.join(sys_packages)}, and")
    note = f"{how} against Debian {suite(a.debian)} {a.debian}'s {', '.join(packages)}"
    return build_static("loader", a.debian, loader_source(), note,
                        lambda src, binary: [*command, f"-I{include}", f"-I{include / libdir.name}", "-o", str(binary),
                                             str(src), f"-L{libdir}", *libs], command[0])


def libraries_checked(a: Arch) -> tuple[Path, list[str]]:
    """:func:`libraries` for ``a`` once its compiler is known to be there (else CsumValueError naming the Debian
    package), with a ``libbpf.a`` in it."""
    if suite(a.debian) == SUITE and not shutil.which(a.cc):
        raise CsumValueError(f"--debian {a.debian}: cross compiler {a.cc} not found (Debian package "
                             f"{cross_package(a.cc)})", code=Code.NO_COMPILER)
    if suite(a.debian) != SUITE and not (shutil.which(toolchain.CLANG) and shutil.which(toolchain.LLD)):
        raise CsumValueError(f"--debian {a.debian}: {toolchain.CLANG} and {toolchain.LLD} not found, which build the "
                             f"loader against Debian {suite(a.debian)}'s {a.debian} libc and libbpf.a (Debian 12: "
                             "apt-get install clang-19 lld-19)", code=Code.NO_COMPILER)
    root, packages = libraries(a.debian)
    if not sorted((root / "usr" / "lib").glob("*/libbpf.a")):
        raise CsumValueError(f"--debian {a.debian}: Debian {suite(a.debian)}'s libbpf-dev for {a.debian} holds no "
                             "libbpf.a", code=Code.BUILD_FAILED)
    return root, packages
