"""csum's two bpf_csum_diff emulations timed in a C loop (bench/diff_loop.c), for bench.run's bpf_csum_diff table.

From Python both forms cost a call of about 70 ns, of which the emulation itself is a few ns to a few tens: the
difference the kernel patch made (the legacy form's copy of ``~from || to`` into a scratch buffer, gone in 6.13)
is lost in the call's noise there. The harness calls csum/engine/_arith.c's ``csum_diff`` and
``csum_diff_legacy`` directly, compiled as the extension is (Python's compiler and CFLAGS), in interleaved rounds,
so the two forms are compared on what they compute. Without a C compiler the rows are left out (the table says so).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "bench" / "diff_loop.c", ROOT / "csum" / "engine" / "_arith.c")


def compile_c(out: Path, sources: tuple[Path, ...]) -> bool:
    """Compile ``sources`` to the program ``out`` as the extensions are compiled (Python's CC and CFLAGS); False where
    there is no C compiler."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    if not shutil.which(cc[0]):
        return False
    flags = shlex.split(sysconfig.get_config_var("CFLAGS") or "-O2")
    subprocess.run([*cc, *flags, "-o", str(out), *map(str, sources)], check=True, capture_output=True)
    return True


def build(out: Path) -> bool:
    """Compile the harness to ``out``; False where there is no C compiler."""
    return compile_c(out, SOURCES)


def times(shapes: list[int], sizes: list[int], rounds: int,
          calls: int) -> list[dict[int, tuple[list[float], list[float]]]] | None:
    """Seconds per call, (legacy, homogenized) per round, of each size in push mode, for each csum_partial shape of
    ``shapes`` (csum.engine.SHAPES numbers), the harness compiled once; None without a C compiler."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "diff_loop"
        if not build(exe):
            return None
        for shape in shapes:
            run = subprocess.run([str(exe), str(shape), str(rounds), str(calls), *map(str, sizes)],
                                 check=True, capture_output=True, text=True)
            per: dict[int, tuple[list[float], list[float]]] = {size: ([], []) for size in sizes}
            for line in run.stdout.splitlines()[:-1]:  # the last line is the sink
                size, legacy, homogenized = line.split()
                per[int(size)][0].append(float(legacy) * 1e-9)
                per[int(size)][1].append(float(homogenized) * 1e-9)
            out.append(per)
    return out
