"""Booting a kernel of another architecture under ``qemu-system-*`` with csum's runner as ``/init``.

* :data:`ARCHES`: per Debian architecture, the QEMU machine, console, cross
  compiler, byte order and Debian kernel flavour.
* :func:`build_runner`: compiles ``runner.c`` (csum's own code, never kernel
  code) statically as csum.kernel.qemu.toolchain says (the Debian cross gcc,
  or clang against a Debian sysroot), cached under :func:`cache_dir` by the
  hash of the source and the recipe.
* :func:`initramfs`: a one-file ``newc`` cpio (``/init``, ``/plan.txt``,
  ``/dev/console``), written here without the ``cpio`` tool.
* :func:`qemu_command` / :func:`boot`: the command line, and one boot that
  returns the console log.
* :func:`fetch_debian`: a Debian kernel package for any architecture
  (csum.kernel.qemu.debian: a private apt state under the cache directory;
  the host's apt configuration is not touched).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from ...errors import Code, CsumValueError
from . import toolchain
from .debian import apt, cache_dir, depends, download, extract, update


@dataclass(frozen=True)
class Arch:
    """How to boot one Debian architecture under QEMU and build the runner for it."""

    debian: str
    qemu: str
    machine: tuple[str, ...]
    console: str
    cc: str
    order: Literal["little", "big"]
    flavour: str
    #: The Debian package holding ``qemu``.
    qemu_package: str
    memory: str = "512M"
    #: Kernel command line arguments this machine needs (besides the console and the runner).
    append: str = ""
    #: clang's target, to build the runner against a Debian sysroot where ``cc`` is not installed.
    clang: str = ""
    #: The oldest QEMU (major, minor) known to boot Debian's kernel for this architecture.
    min_qemu: tuple[int, int] = (0, 0)


ARCHES = {a.debian: a for a in (
    Arch("armhf", "qemu-system-arm", ("-M", "virt", "-cpu", "cortex-a15"), "ttyAMA0",
         "arm-linux-gnueabihf-gcc", "little", "armmp", "qemu-system-arm"),
    Arch("arm64", "qemu-system-aarch64", ("-M", "virt", "-cpu", "cortex-a57"), "ttyAMA0",
         "aarch64-linux-gnu-gcc", "little", "arm64", "qemu-system-arm"),
    Arch("ppc64el", "qemu-system-ppc64", ("-M", "pseries", "-cpu", "power9"), "hvc0",
         "powerpc64le-linux-gnu-gcc", "little", "powerpc64le", "qemu-system-ppc", "1G"),
    Arch("riscv64", "qemu-system-riscv64", ("-M", "virt", "-cpu", "rv64,zbb=true"), "ttyS0",
         "riscv64-linux-gnu-gcc", "little", "riscv64", "qemu-system-misc"),
    # QEMU 7.2 emulates the vector facility's VCKSM wrongly: boot s390x without it (CKSM path).
    Arch("s390x", "qemu-system-s390x", ("-M", "s390-ccw-virtio", "-cpu", "max,vx=off"), "ttysclp0",
         "s390x-linux-gnu-gcc", "big", "s390x", "qemu-system-misc"),
    Arch("amd64", "qemu-system-x86_64", ("-M", "q35", "-cpu", "max"), "ttyS0",
         "x86_64-linux-gnu-gcc", "little", "amd64", "qemu-system-x86"),
    Arch("i386", "qemu-system-i386", ("-M", "pc", "-cpu", "max"), "ttyS0",
         "i686-linux-gnu-gcc", "little", "686-pae", "qemu-system-x86"),
    Arch("mips64el", "qemu-system-mips64el", ("-M", "malta", "-cpu", "5KEc", "-vga", "none"), "ttyS0",
         "mips64el-linux-gnuabi64-gcc", "little", "5kc-malta", "qemu-system-mips"),
    Arch("mipsel", "qemu-system-mipsel", ("-M", "malta", "-cpu", "24Kc", "-vga", "none"), "ttyS0",
         "mipsel-linux-gnu-gcc", "little", "4kc-malta", "qemu-system-mips", "256M"),
    # QEMU's loongarch virt machine has no i8042; Debian's kernel probes one and oopses without this.
    # QEMU 7.2 loads only ELF kernels there; 10.0 loads Debian's (raw, unpacked from EFI zboot).
    Arch("loong64", "qemu-system-loongarch64", ("-M", "virt", "-cpu", "la464"), "ttyS0",
         "loongarch64-linux-gnu-gcc", "little", "loong64", "qemu-system-misc", "1G", "initcall_blacklist=i8042_init",
         clang="loongarch64-linux-gnu", min_qemu=(10, 0)),
)}

#: Other names a user may give for an architecture (uname -m, csum profile names).
_ARCH_ALIASES = {"arm": "armhf", "armv7l": "armhf", "aarch64": "arm64", "ppc64le": "ppc64el",
                 "powerpc64le": "ppc64el", "x86_64": "amd64", "i686": "i386",
                 "loongarch64": "loong64"}


def arch(name: str) -> Arch:
    """The :class:`Arch` for a Debian architecture name (or a common alias such as ``aarch64``)."""
    key = _ARCH_ALIASES.get(name, name)
    if key not in ARCHES:
        raise CsumValueError(f"--qemu: unknown architecture {name!r}; known: {', '.join(sorted(ARCHES))}",
                             code=Code.UNKNOWN_ARCH)
    return ARCHES[key]


def runner_source() -> bytes:
    """The runner's C source, as shipped in the package."""
    return resources.files("csum.kernel.qemu").joinpath("runner.c").read_bytes()


@dataclass(frozen=True)
class Runner:
    """A built runner and how it was built (:attr:`toolchain.Recipe.note`)."""

    path: Path
    note: str


def build_runner(a: Arch) -> Runner:
    """The static runner binary for ``a``, compiled on first use and cached by the source and recipe's hash."""
    how = toolchain.recipe(a.cc, a.clang, a.debian)
    return build_static("runner", a.debian, runner_source(), how.note, how.argv, how.command[0])


def build_static(kind: str, debian_arch: str, source: bytes, note: str, argv: Callable[[Path, Path], list[str]],
                 compiler: str) -> Runner:
    """A static guest program (``kind``: "runner", "loader") for ``debian_arch``, compiled on first use with
    ``argv(source file, binary)`` and cached under the hash of ``source`` and its recipe ``note``."""
    key = hashlib.sha256(source + b"\0" + note.encode()).hexdigest()[:16]
    out = cache_dir() / kind / f"{debian_arch}-{key}" / "init"
    note_file = out.with_name("built-with.txt")
    if not (out.exists() and note_file.exists()):
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            src, binary = Path(tmp) / f"{kind}.c", Path(tmp) / "init"
            src.write_bytes(source)
            done = subprocess.run(argv(src, binary), capture_output=True, text=True)
            if done.returncode:
                raise CsumValueError(f"building the {kind} with {compiler} failed: {done.stderr.strip()[-400:]}",
                                     code=Code.BUILD_FAILED)
            note_file.write_text(note + "\n")
            os.replace(binary, out)
    return Runner(out, note_file.read_text().strip())


def _cpio_entry(name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0), ino: int = 0) -> bytes:
    """One ``newc`` record (070701): header, NUL-terminated name, data, each padded to 4 bytes."""
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0)
    head = b"070701" + b"".join(b"%08x" % f for f in fields) + name.encode() + b"\0"
    head += b"\0" * (-len(head) % 4)
    return head + data + b"\0" * (-len(data) % 4)


def initramfs(runner: bytes, plan: str, files: Mapping[str, bytes] | None = None) -> bytes:
    """An uncompressed ``newc`` cpio holding ``/init`` (the runner), ``/plan.txt``, ``/dev/console`` and ``files``
    (name in ``/`` -> contents)."""
    entries = [
        ("dev", 0o040755, b"", (0, 0)),
        ("dev/console", 0o020600, b"", (5, 1)),
        ("proc", 0o040555, b"", (0, 0)),
        ("init", 0o100755, runner, (0, 0)),
        ("plan.txt", 0o100644, plan.encode(), (0, 0)),
        *((name, 0o100644, data, (0, 0)) for name, data in (files or {}).items()),
    ]
    body = b"".join(_cpio_entry(n, m, d, r, i + 1) for i, (n, m, d, r) in enumerate(entries))
    return body + _cpio_entry("TRAILER!!!", 0)


def read_cpio(blob: bytes) -> dict[str, tuple[int, bytes, tuple[int, int]]]:
    """Parse a ``newc`` cpio into ``{name: (mode, data, (rdevmajor, rdevminor))}`` (for tests and checks)."""
    out: dict[str, tuple[int, bytes, tuple[int, int]]] = {}
    pos = 0
    while True:
        if blob[pos:pos + 6] != b"070701":
            raise CsumValueError(f"not a newc cpio record at byte {pos}", code=Code.BAD_CPIO)
        f = [int(blob[pos + 6 + 8 * i: pos + 14 + 8 * i], 16) for i in range(13)]
        name_end = pos + 110 + f[11]
        name = blob[pos + 110: name_end - 1].decode()
        data_at = name_end + (-name_end % 4)
        data = blob[data_at: data_at + f[6]]
        pos = data_at + f[6] + (-(data_at + f[6]) % 4)
        if name == "TRAILER!!!":
            return out
        out[name] = (f[1], data, (f[9], f[10]))


def qemu_command(a: Arch, kernel: Path, initrd: Path, append_extra: str = "") -> list[str]:
    """The ``qemu-system-*`` command line of one boot (one CPU, no network, console on stdio).

    ``append_extra`` goes on the kernel command line (e.g. ``unaligned_scalar_speed=slow`` on riscv).
    """
    extra = " ".join(filter(None, (a.append, append_extra)))
    append = f"console={a.console} rdinit=/init panic=-1 quiet loglevel=1" + (f" {extra}" if extra else "")
    return [a.qemu, *a.machine, "-m", a.memory, "-smp", "1", "-nographic", "-no-reboot", "-net", "none",
            "-kernel", str(kernel), "-initrd", str(initrd), "-append", append]


def unpack_zboot(image: Path) -> Path:
    """The kernel QEMU can load from ``image``: ``image`` itself, or the payload of an EFI zboot image.

    An EFI zboot image (drivers/firmware/efi/libstub/zboot-header.S: ``MZ``, ``zimg``
    at byte 4, the payload's offset and size as little-endian u32 at 8 and 12, the
    compression's name at 24) is a PE stub around a compressed kernel; Debian's
    loong64 kernel is one, zstd-compressed, which QEMU 10 does not unpack. The
    payload (gzip or zstd) is unpacked once into the cache directory.
    """
    try:
        with image.open("rb") as f:
            head = f.read(32)
    except OSError:
        return image  # qemu says why it cannot load it (the boot fails with its words)
    if head[:2] != b"MZ" or head[4:8] != b"zimg":
        return image
    blob = image.read_bytes()
    offset, size = struct.unpack_from("<II", blob, 8)
    method = head[24:32].rstrip(b"\0").decode("ascii", "replace")
    if offset + size > len(blob) or size == 0:
        raise CsumValueError(f"--kernel {image}: EFI zboot payload ({size} bytes at {offset}) lies outside the "
                             f"{len(blob)}-byte file", code=Code.BOOT_FAILED)
    out = cache_dir() / "kernels" / "unpacked" / f"{hashlib.sha256(blob).hexdigest()[:16]}.Image"
    if out.exists():
        return out
    payload = blob[offset:offset + size]
    if method == "gzip":
        data = gzip.decompress(payload)
    elif method == "zstd":
        try:
            import zstandard
        except ImportError:
            raise CsumValueError(f"--kernel {image}: a zstd-compressed EFI zboot image; unpacking it needs the "
                                 "zstandard package (pip install 'linux-csum[zstd]')", code=Code.MISSING_ZSTD) from None
        data = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    else:
        raise CsumValueError(f"--kernel {image}: EFI zboot compression {method!r} is not gzip or zstd",
                             code=Code.BOOT_FAILED)
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = out.with_suffix(f".{os.getpid()}.tmp")
    staged.write_bytes(data)
    os.replace(staged, out)
    return out


def _install_hint(a: Arch) -> str:
    """The Debian package that holds ``a.qemu``, and on Debian 12 where a new enough one comes from."""
    if a.min_qemu <= (7, 2):
        return f"Debian package {a.qemu_package}"
    newer = ".".join(map(str, a.min_qemu))
    return (f"Debian package {a.qemu_package}, QEMU >= {newer}: Debian 13 on, or on Debian 12 add bookworm-backports "
            f"to apt's sources and apt-get install -t bookworm-backports {a.qemu_package}")


def qemu_version(a: Arch) -> str:
    """The first line of ``qemu-system-* --version`` (e.g. ``QEMU emulator version 7.2.22 (Debian ...)``).

    Raises CsumValueError when the binary is missing or older than ``a.min_qemu``.
    """
    if shutil.which(a.qemu) is None:
        raise CsumValueError(f"--qemu {a.debian}: {a.qemu} not found ({_install_hint(a)})", code=Code.NO_QEMU)
    done = subprocess.run([a.qemu, "--version"], capture_output=True, text=True)
    first = (done.stdout.strip().splitlines() or ["unknown"])[0]
    found = re.search(r"version (\d+)\.(\d+)", first)
    if a.min_qemu > (0, 0) and (found is None or (int(found[1]), int(found[2])) < a.min_qemu):
        raise CsumValueError(f"--qemu {a.debian}: {a.qemu} is {first!r}, too old to boot Debian's {a.debian} kernel "
                             f"({_install_hint(a)})", code=Code.NO_QEMU)
    return first


def boot(a: Arch, kernel: Path, plan: str, *, timeout: float = 1200.0, log: Path | None = None,
         append_extra: str = "", init: Runner | None = None, files: Mapping[str, bytes] | None = None,
         marker: str = "CSUM-RUNNER") -> tuple[str, list[str]]:
    """Boot ``kernel`` with the runner (or ``init``: csum prog's loader), ``plan`` and ``files``; returns (console
    log, qemu command). ``marker``: the line ``/init`` prints first.

    The log is also written to ``log`` when given. Raises CsumValueError when
    qemu is missing or the boot does not finish within ``timeout`` seconds.
    """
    qemu_version(a)  # qemu is there
    runner = (init or build_runner(a)).path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        initrd = Path(tmp) / "initramfs.cpio"
        initrd.write_bytes(initramfs(runner, plan, files))
        command = qemu_command(a, unpack_zboot(kernel), initrd, append_extra)
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            text = (exc.stdout or b"").decode(errors="replace")
            if log is not None:
                log.write_text(text)
            raise CsumValueError(f"--qemu {a.debian}: the boot did not finish in {timeout:.0f} s"
                                 + (f" (console log in {log})" if log else ""), code=Code.TIMEOUT) from None
    text = done.stdout.decode(errors="replace").replace("\r\n", "\n")
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text)
    if marker not in text:
        tail = "\n".join(text.strip().splitlines()[-5:]) or done.stderr.decode(errors="replace").strip()[-300:]
        raise CsumValueError(f"--qemu {a.debian}: the runner never started (qemu exit {done.returncode}); "
                             f"last console lines:\n{tail}", code=Code.BOOT_FAILED)
    return text, [*command[:-4], "-initrd", "initramfs.cpio", *command[-2:]]


@dataclass(frozen=True)
class DebianKernel:
    """A kernel image extracted from a Debian package, with the package's provenance."""

    image: Path
    package: str
    version: str
    deb_sha256: str
    suite: str
    arch: str


def _kernel_file(tree: Path) -> Path | None:
    for pattern in ("boot/vmlinu[xz]-*", "usr/lib/modules/*/vmlinu[xz]", "boot/vmlinu[xz]"):
        found = sorted(tree.glob(pattern))
        if found:
            return found[0]
    return None


def fetch_debian(suite: str, debian_arch: str) -> DebianKernel:
    """Download (once) Debian ``suite``'s current kernel for ``debian_arch`` and extract its image."""
    a = arch(debian_arch)
    update(suite, a.debian)
    meta = apt(suite, a.debian, "apt-cache", "show", "--no-all-versions", f"linux-image-{a.flavour}")
    package = next((d for d in depends(meta) if d.startswith("linux-image-")), None)
    if package is None:
        raise CsumValueError(f"--debian: linux-image-{a.flavour} in {suite} names no kernel package", code=Code.APT_FAILED)
    for _ in range(2):  # the image package, or (7.x) the linux-binary-* package it depends on
        deb = download(suite, a.debian, package)
        image = _kernel_file(extract([deb], cache_dir() / "kernels" / deb.path.stem))
        if image is not None:
            return DebianKernel(image, package, deb.version, deb.sha256, suite, a.debian)
        package = next((d for d in deb.depends if d.startswith("linux-binary-")), "")
        if not package:
            break
    raise CsumValueError(f"--debian: no kernel image found in the {suite} packages for {a.debian}", code=Code.APT_FAILED)
