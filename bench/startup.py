"""``python -m bench.startup [--repeats R] [--quick] [--out JSON]``: how long a command takes to start and exit, side
by side with the interpreter's own start and tshark's.

Each command is a new process, as a user types it, timed from start to exit (wall time, and its CPU time from the
kernel's rusage), the commands interleaved round by round, R rounds (default 31): the median, the min-max spread and
each command's ratio to ``python -c pass`` of the same round (the median of those ratios). csum's bytecode is written
first, as an installed package has it (bench.run.compile_csum). The commands:

* ``python -c pass`` (the floor every Python command pays: the interpreter and its site packages' start-up);
* ``python -c "import numpy"`` (what any command that reads a capture pays for numpy), and the same with
  ``OPENBLAS_NUM_THREADS=1`` (what the command line asks for: no OpenBLAS thread per core);
* ``python -c "import csum"``;
* ``csum --version`` and ``csum verify SMALL.pcap`` (five scapy-built packets, one chunk: checked in this process, a
  packet at a time, without numpy), and ``csum verify SMALL.pcap --format jsonl`` (rows: numpy's columns), also with
  ``OPENBLAS_NUM_THREADS`` set to the CPU count (numpy's own default, which the command line would otherwise replace
  by 1); the ``env`` rows start through env(1). ``csum`` is the console script pip installed for this interpreter
  (its scripts directory, whatever PATH holds);
* ``tshark -v`` and ``tshark -r SMALL.pcap`` (Wireshark's start on the same file; skipped, with the reason, where
  tshark is missing).

The "start-up" column is the median wall time less ``python -c pass``'s: what csum adds to the interpreter's start.
Results go to bench/results/startup.json with the machine and the 1-minute load average before and after (a shared
machine: read the ratios).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from .run import compile_csum, machine, publish, timed

RESULTS = Path(__file__).resolve().parent / "results"

SMALL_PACKETS = 5


def _small_capture(path: Path) -> None:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    wrpcap(str(path), [Ether() / IP(dst="192.0.2.1") / TCP() / (b"x" * k) for k in range(SMALL_PACKETS)])


def _script() -> Path | None:
    """The console script pip installed for this interpreter (its scripts directory), or None from a checkout."""
    path = Path(sysconfig.get_path("scripts")) / "csum"
    return path if path.is_file() else None


def commands(small: Path) -> dict[str, list[str]]:
    """The commands timed, by the name the table shows (tshark's only where it is installed)."""
    py = sys.executable
    script = _script()
    csum = [str(script)] if script else [py, "-c", "import sys; from _csum_cli import main; sys.exit(main())"]
    out = {"python -c pass": [py, "-c", "pass"], "python -c 'import numpy'": [py, "-c", "import numpy"],
           "python -c 'import csum'": [py, "-c", "import csum"], "csum --version": [*csum, "--version"],
           f"csum verify SMALL.pcap ({SMALL_PACKETS} packets)": [*csum, "verify", str(small)]}
    threads = f"OPENBLAS_NUM_THREADS={os.cpu_count()}"
    out["env OPENBLAS_NUM_THREADS=1 python -c 'import numpy'"] = ["env", "OPENBLAS_NUM_THREADS=1", py, "-c",
                                                                 "import numpy"]
    rows = ["verify", str(small), "--format", "jsonl"]  # rows come from numpy columns: numpy's import
    out["csum verify SMALL.pcap --format jsonl"] = [*csum, *rows]
    out[f"env {threads} csum verify SMALL.pcap --format jsonl"] = ["env", threads, *csum, *rows]
    tshark = shutil.which("tshark")
    if tshark is not None:
        out["tshark -v"] = [tshark, "-v"]
        out[f"tshark -r SMALL.pcap ({SMALL_PACKETS} packets)"] = [tshark, "-r", str(small)]
    return out


def run(repeats: int) -> dict[str, Any]:
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.pcap"
        _small_capture(small)
        cmds = commands(small)
        for cmd in cmds.values():  # a warm-up of each: the page cache, not the first start, is what users see
            timed(cmd)
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(repeats):
            for name, cmd in cmds.items():
                wall, cpu = timed(cmd)
                walls[name].append(wall)
                cpus[name].append(cpu)
    load.append(os.getloadavg()[0])
    floor = walls["python -c pass"]
    rows = []
    for name in cmds:
        ratios = [w / f for w, f in zip(walls[name], floor)]
        rows.append({"command": name, "wall_ms": round(1000 * statistics.median(walls[name]), 1),
                     "wall_min_max_ms": [round(1000 * min(walls[name]), 1), round(1000 * max(walls[name]), 1)],
                     "cpu_ms": round(1000 * statistics.median(cpus[name]), 1),
                     "startup_ms": round(1000 * (statistics.median(walls[name]) - statistics.median(floor)), 1),
                     "x_python": round(statistics.median(ratios), 2)})
    return {"machine": machine(), "load_average": load, "repeats": repeats, "rows": rows,
            "tshark": "installed" if shutil.which("tshark") else "not installed"}


def table(results: dict[str, Any]) -> str:
    lines = ["| command | wall ms, median (min-max) | start-up ms (less `python -c pass`) | CPU ms | × `python -c pass` |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        lo, hi = r["wall_min_max_ms"]
        lines.append(f"| `{r['command']}` | {r['wall_ms']} ({lo}-{hi}) | {r['startup_ms']} | {r['cpu_ms']} | "
                     f"{r['x_python']:.2f} |")
    lines.append(f"\nmedian of {results['repeats']} interleaved rounds; tshark {results['tshark']}; 1-minute load "
                 f"average {' / '.join(f'{x:.2f}' for x in results['load_average'])} before / after")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=31, help="rounds of every command (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--out", type=Path, default=RESULTS / "startup.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    compile_csum()
    return publish(run(3 if args.quick else args.repeats), args.out, table)


if __name__ == "__main__":
    sys.exit(main())
