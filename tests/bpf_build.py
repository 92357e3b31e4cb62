"""Compile BPF C for the tests with clang, and say why when it cannot run here.

``clang -O2 -g -target bpf`` with the multiarch include directory Debian puts asm/types.h in
(the one-line build examples/bpf documents). Tests skip with :func:`why_not` as the reason.
"""

from __future__ import annotations

import functools
import platform
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "bpf"


@functools.cache
def why_not_build() -> str | None:
    """None when BPF C can be compiled and opened with libbpf here (no kernel needed: csum's model runs it), else
    the reason."""
    if shutil.which("clang") is None:
        return "clang is not installed (apt-get install clang llvm libbpf-dev)"
    if not Path("/usr/include/bpf/bpf_helpers.h").exists():
        return "libbpf headers are not installed (apt-get install libbpf-dev)"
    try:
        from csum.kernel.libbpf import library

        library()
    except Exception as exc:  # noqa: BLE001  (any failure to find libbpf is a reason to skip)
        return str(exc)
    return None


@functools.cache
def why_not() -> str | None:
    """None when BPF C can be compiled, loaded and run here, else the reason."""
    from csum import kernel

    if why_not_build() is not None:
        return why_not_build()
    if not kernel.available():
        return f"csum.kernel: {kernel.why_unavailable()}"
    return None


#: The big-endian kernel headers (asm/byteorder.h: __BIG_ENDIAN_BITFIELD, which struct iphdr's ihl needs) of
#: Debian's linux-libc-dev-s390x-cross, which gcc-s390x-linux-gnu brings.
BE_INCLUDE = Path("/usr/s390x-linux-gnu/include")


def compile_bpf(source: Path, out: Path, *defines: str, big_endian: bool = False, cpu: str | None = None) -> Path:
    """clang -target bpf ``source`` into ``out`` (``big_endian``: -target bpfeb with :data:`BE_INCLUDE`, for
    big-endian kernels; ``cpu``: clang's -mcpu, e.g. "v3" for atomics that fetch); raises with clang's messages on
    failure."""
    target, include = ("bpfeb", BE_INCLUDE) if big_endian else ("bpf", f"/usr/include/{platform.machine()}-linux-gnu")
    cmd = ["clang", "-O2", "-g", "-target", target, *([f"-mcpu={cpu}"] if cpu else []), f"-I{include}",
           f"-I{source.parent}", *(f"-D{d}" for d in defines), "-c", str(source), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return out
