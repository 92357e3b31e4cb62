"""csum/kernel/qemu/toolchain.py and guest.qemu_version: which compiler builds the runner, which QEMU boots.

Independent sources: binutils' ``readelf`` reads the runner clang-19 and lld-19
build against Debian's loong64 packages (ELF machine, type, no interpreter);
the command every architecture's runner was built with before the clang
fallback existed (``CC -O2 -static -o OUT SRC``, guest.build_runner at commit
eeee82a). Compilers and QEMU binaries that are not installed are
stood in for by scripts on PATH that print a version line, so the choice
between them is tested on every machine.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import csum
from csum.errors import Code
from csum.kernel.qemu import debian, guest, toolchain


def _tools(monkeypatch, tmp: Path, **versions: str) -> Path:
    """A PATH of one directory holding a script per tool name, each printing its version line."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, line in versions.items():
        script = bin_dir / name.replace("_", "-")
        script.write_text(f"#!/bin/sh\necho '{line}'\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_every_arch_with_its_cross_gcc_builds_as_before(monkeypatch, tmp_path):
    """Where an architecture's Debian cross gcc is on PATH, the runner is built exactly as before: CC -O2 -static."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for a in guest.ARCHES.values():
        (bin_dir / a.cc).write_text(f"#!/bin/sh\necho '{a.cc} (Debian 12.2.0-14) 12.2.0'\n")
        (bin_dir / a.cc).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    for a in guest.ARCHES.values():
        how = toolchain.recipe(a.cc, a.clang, a.debian)
        assert how.argv(Path("runner.c"), Path("init")) == [a.cc, "-O2", "-static", "-o", "init", "runner.c"]
        assert how.note == f"{a.cc} (Debian 12.2.0-14) 12.2.0: {a.cc} -O2 -static"


def _cached_sysroot(monkeypatch, tmp: Path) -> Path:
    """A loong64 sysroot already in the cache (its manifest as toolchain.sysroot writes it): no apt run."""
    monkeypatch.setenv("CSUM_CACHE", str(tmp / "cache"))
    root = tmp / "cache" / "sysroot" / f"{toolchain.SYSROOT_SUITE}-loong64"
    root.mkdir(parents=True)
    (root / debian.MANIFEST).write_text("libc6-dev 2.43-7 (sha256 7b18)\nlinux-libc-dev 7.2.13-1 (sha256 8b33)\n"
                                        "libgcc-16-dev 16.2.0-4 (sha256 4706)\n")
    return root


def test_loong64_without_its_gcc_is_built_by_clang_against_debian_packages(monkeypatch, tmp_path):
    """No loongarch64-linux-gnu-gcc (Debian 12): clang-19 --target=loongarch64-linux-gnu -fuse-ld=lld against the
    sysroot of Debian's loong64 libc6-dev, linux-libc-dev and libgcc-N-dev, whose versions and SHA256s the note names."""
    root = _cached_sysroot(monkeypatch, tmp_path)
    _tools(monkeypatch, tmp_path, clang_19="Debian clang version 19.1.7 (3~deb12u1)",
           **{"ld.lld-19": "Debian LLD 19.1.7 (compatible with GNU linkers)"})
    a = guest.arch("loong64")
    how = toolchain.recipe(a.cc, a.clang, a.debian)
    assert how.command == ("clang-19", f"--sysroot={root}", "--target=loongarch64-linux-gnu", "-fuse-ld=lld", "-O2",
                           "-static")
    assert how.note == ("Debian clang version 19.1.7 (3~deb12u1) with Debian LLD 19.1.7 (compatible with GNU linkers): "
                        "clang-19 --target=loongarch64-linux-gnu -fuse-ld=lld -O2 -static against Debian unstable "
                        "loong64's libc6-dev 2.43-7 (sha256 7b18), linux-libc-dev 7.2.13-1 (sha256 8b33), "
                        "libgcc-16-dev 16.2.0-4 (sha256 4706)")
    with pytest.raises(csum.CsumValueError, match=r"aarch64-linux-gnu-gcc not found \(Debian package "
                                                  r"gcc-aarch64-linux-gnu\)$") as err:
        toolchain.recipe(guest.arch("arm64").cc, "", "arm64")  # no clang target: clang is not tried
    assert err.value.code == Code.NO_COMPILER


def test_loong64_without_any_compiler_says_what_to_install(monkeypatch, tmp_path):
    """Neither the cross gcc nor clang-19/lld-19: one line naming both ways (Debian 13's gcc, Debian 12's clang)."""
    _tools(monkeypatch, tmp_path, clang_19="Debian clang version 19.1.7")  # clang without lld is not enough
    a = guest.arch("loong64")
    with pytest.raises(csum.CsumValueError) as err:
        toolchain.recipe(a.cc, a.clang, a.debian)
    assert err.value.code == Code.NO_COMPILER and "\n" not in str(err.value)
    assert "gcc-loongarch64-linux-gnu, Debian 13 on" in str(err.value)
    assert "apt-get install clang-19 lld-19" in str(err.value)


def test_runner_built_by_clang_is_a_static_loongarch_executable():
    """The real clang-19 and lld-19 against the cached Debian loong64 sysroot: readelf sees a static LoongArch
    executable (no program interpreter), and guest.build_runner's note names the packages it was linked with."""
    a = guest.arch("loong64")
    for tool in (toolchain.CLANG, toolchain.LLD, "readelf"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    if shutil.which(a.cc):
        pytest.skip(f"{a.cc} is installed: the runner is built with it, not with clang")
    root = debian.cache_dir() / "sysroot" / f"{toolchain.SYSROOT_SUITE}-loong64"
    if not (root / debian.MANIFEST).is_file():
        pytest.skip(f"no loong64 sysroot cached under {root} (csum kernel-check --debian unstable loong64 fetches it)")
    runner = guest.build_runner(a)
    header = subprocess.run(["readelf", "-h", "-l", str(runner.path)], capture_output=True, text=True, check=True).stdout
    assert "LoongArch" in header and "EXEC (Executable file)" in header and "INTERP" not in header
    assert runner.note.startswith("Debian clang version 19") and "libc6-dev" in runner.note


def test_qemu_too_old_for_loong64_names_the_backports_package(monkeypatch, tmp_path):
    """QEMU 7.2 (Debian 12's) cannot boot Debian's loong64 kernel: a one-line error naming bookworm-backports'
    qemu-system-misc; 10.0 is taken; other architectures take any version."""
    _tools(monkeypatch, tmp_path, **{"qemu-system-loongarch64": "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7)",
                                     "qemu-system-aarch64": "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7)"})
    with pytest.raises(csum.CsumValueError) as err:
        guest.qemu_version(guest.arch("loong64"))
    assert err.value.code == Code.NO_QEMU and "\n" not in str(err.value)
    assert "apt-get install -t bookworm-backports qemu-system-misc" in str(err.value)
    assert guest.qemu_version(guest.arch("arm64")).startswith("QEMU emulator version 7.2.22")
    _tools(monkeypatch, tmp_path, **{"qemu-system-loongarch64": "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2)"})
    assert guest.qemu_version(guest.arch("loong64")) == "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2)"
    _tools(monkeypatch, tmp_path / "none")
    with pytest.raises(csum.CsumValueError, match="qemu-system-loongarch64 not found .*qemu-system-misc, QEMU >= 10.0"):
        guest.qemu_version(guest.arch("loong64"))
