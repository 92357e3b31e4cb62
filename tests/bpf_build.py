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


def compile_bpf(source: Path, out: Path, *defines: str, cpu: str | None = None) -> Path:
    """clang -target bpf ``source`` into ``out`` (``cpu``: clang's -mcpu, e.g. "v3" for atomics that fetch); raises
    with clang's messages on failure."""
    cmd = ["clang", "-O2", "-g", "-target", "bpf", *([f"-mcpu={cpu}"] if cpu else []),
           f"-I/usr/include/{platform.machine()}-linux-gnu",
           f"-I{source.parent}", *(f"-D{d}" for d in defines), "-c", str(source), "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return out
