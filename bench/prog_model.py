"""``python -m bench.prog_model [--packets N] [--repeats R] [--out JSON]``: ``csum prog --model`` beside the running
kernel, side by side in one process.

Two programs of examples/bpf (built with clang): xdp_ttl_csum_diff.c (XDP, one run a packet) and tc_nat.c (tc, a
CHECKSUM_NONE and a CHECKSUM_COMPLETE run a packet), on N packets of ``csum.testing.packets()`` (seed 0). For each,
the median of R repeats of: the running kernel (``csum.prog.load`` and ``Program.run`` of every packet: the
BPF_PROG_TEST_RUN calls and csum's judging) and csum's model of the same architecture and release
(``csum.kernel.model.model_kernel``: linking the object, interpreting every packet, the same judging). The running
kernel needs root; without it only the model is timed. Results go to bench/results/prog_model.json.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .run import machine, publish

RESULTS = Path(__file__).resolve().parent / "results"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bpf"
PROGRAMS = ("xdp_ttl_csum_diff", "tc_nat")


def _median(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(packets: int, repeats: int) -> dict[str, Any]:
    from csum import kernel
    from csum.kernel import model, prog
    from csum.testing import sample_packets

    frames = [prog.ethernet(p) for p in sample_packets(packets, seed=0)]
    words = "{}:{}".format(platform.machine(), ".".join(platform.release().split("-")[0].split(".")[:2]))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in PROGRAMS:
            obj = str(Path(tmp) / f"{name}.o")
            subprocess.run(["clang", "-O2", "-g", "-target", "bpf", f"-I/usr/include/{platform.machine()}-linux-gnu",
                            f"-I{EXAMPLES}", "-c", str(EXAMPLES / f"{name}.c"), "-o", obj], check=True)

            def on_kernel(obj: str = obj) -> None:
                with prog.load(obj) as program:
                    for frame in frames:
                        program.run(frame)

            def on_model(obj: str = obj) -> None:
                model.model_kernel(words, obj, list(enumerate(frames)))

            real = _median(on_kernel, repeats) if kernel.available() else None
            modelled = _median(on_model, repeats)
            rows.append({"program": name, "packets": len(frames), "model": words, "kernel_s": real,
                         "model_s": modelled, "model_over_kernel": None if real is None else modelled / real})
    return {"machine": machine(), "repeats": repeats, "rows": rows}


def table(results: dict[str, Any]) -> str:
    lines = ["| program | packets | running kernel s | model s | model / kernel |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        real = "not run" if r["kernel_s"] is None else f"{r['kernel_s']:.3f}"
        ratio = "" if r["model_over_kernel"] is None else f"{r['model_over_kernel']:.1f}x"
        lines.append(f"| {r['program']} | {r['packets']} | {real} | {r['model_s']:.3f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.prog_model", description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "prog_model.json")
    args = parser.parse_args(argv)
    return publish(run(args.packets, args.repeats), args.out, table)


if __name__ == "__main__":
    raise SystemExit(main())
