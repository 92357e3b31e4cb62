"""The measurements: every workload, every implementation, side by side in one run.

Each number is the median of ``repeats`` timings (each timing ``number`` calls,
calibrated to a time slice), with the min-max spread; ratios against scapy,
dpkt and a bare ``zlib.crc32`` call are taken from the same run, and where two
calls are compared (the call floor, legacy vs homogenized bpf_csum_diff) they are
timed in interleaved rounds and the ratio is the median of the rounds'. The public
functions run on the engine bound at import (``CSUM_ENGINE``), and some tables again
with another engine bound for the block (:func:`csum.engine.use`); every engine
this installation has is timed directly through its :class:`csum.engine.Engine`.
Workloads are named after conventions.md: 20, 40, 64, 1500 B, 64 KiB, 4 MiB and the
odd sizes 1499 and 65535.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import timeit
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

import csum
import csum.batch
from csum import engine as _engine

from . import diff_loop

SIZES = [20, 40, 64, 1499, 1500, 65535, 65536, 4 << 20]
BPF_SIZES = [4, 8, 16, 20, 32, 40, 64, 128, 256, 512]
BATCH_ROWS, BATCH_LEN = 1_000_000, 64


@dataclass
class Timing:
    """Seconds per call: median and spread over the repeats."""

    median: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float]:
        return {"median_s": self.median, "min_s": self.low, "max_s": self.high}


def measure(fn: Callable[..., Any], *args: Any, quick: bool) -> Timing:
    """Median seconds per ``fn(*args)`` over repeats (3 quick, else 9), each calibrated to ~2 ms (quick) or ~60 ms."""
    names = [f"a{i}" for i in range(len(args))]
    timer = timeit.Timer(f"f({', '.join(names)})", globals={"f": fn, **dict(zip(names, args))})
    slice_s = 0.002 if quick else 0.06
    number = 1
    while True:
        spent = timer.timeit(number)
        if spent >= slice_s / 4 or number >= 1 << 24:
            break
        number *= 4
    number = max(1, int(number * slice_s / max(spent, 1e-9)))
    runs = [t / number for t in timer.repeat(repeat=3 if quick else 9, number=number)]
    return Timing(statistics.median(runs), min(runs), max(runs))


def _peers() -> dict[str, Callable[[bytes], int]]:
    import dpkt
    from scapy.utils import checksum as scapy_checksum

    return {"scapy.utils.checksum": scapy_checksum, "dpkt.in_cksum": dpkt.in_cksum}


def single_buffer(quick: bool) -> list[dict[str, Any]]:
    """csum's public functions, every engine's ones_sum, zlib.crc32, scapy and dpkt, per size."""
    rows = []
    peers = _peers()
    rng = np.random.default_rng(2024)
    bound = _engine.ENGINE
    for size in SIZES:
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        impls: dict[str, tuple[Callable[..., int], tuple[Any, ...]]] = {
            f"csum.internet_checksum [{bound}]": (csum.internet_checksum, (data,)),
            f"csum.csum_partial [{bound}]": (csum.csum_partial, (data,)),
        }
        for name, engine in _engine.ENGINES.items():
            impls[f"engine {name}: ones_sum"] = (engine.ones_sum, (data, 16, "big"))
        impls["zlib.crc32 (not a checksum: the call floor)"] = (zlib.crc32, (data,))
        for name, fn in peers.items():
            impls[name] = (fn, (data,))
        timings = {name: measure(fn, *args, quick=quick) for name, (fn, args) in impls.items()}
        crc = timings["zlib.crc32 (not a checksum: the call floor)"].median
        for name, t in timings.items():
            rows.append({"size": size, "impl": name, **t.as_dict(), "gb_per_s": size / t.median / 1e9,
                         "x_scapy": timings["scapy.utils.checksum"].median / t.median,
                         "x_dpkt": timings["dpkt.in_cksum"].median / t.median, "per_crc32": t.median / crc})
    return rows


def paired(calls: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]], rounds: int,
           slice_s: float) -> dict[str, list[float]]:
    """CPU seconds per call of each ``name -> (fn, args)``, timed in interleaved rounds: one round times each in
    turn (its number of calls calibrated once to ~``slice_s``), so a load that changes during the run changes
    every member of a round alike (the machine is shared; separate medians drift apart). The clock is the
    thread's CPU time (``time.thread_time``): time the scheduler gives other jobs is not counted, while what
    they do to caches and clocks is."""
    timers = {}
    for name, (fn, args) in calls.items():
        names = [f"a{i}" for i in range(len(args))]
        timer = timeit.Timer(f"f({', '.join(names)})", globals={"f": fn, **dict(zip(names, args))},
                             timer=time.thread_time)
        number = 1
        while (spent := timer.timeit(number)) < slice_s / 4 and number < 1 << 24:
            number *= 4
        timers[name] = (timer, max(1, int(number * slice_s / max(spent, 1e-9))))
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (timer, number) in timers.items():
            times[name].append(timer.timeit(number) / number)
    return times


def _ratios(num: list[float], den: list[float]) -> dict[str, float]:
    ratios = [a / b for a, b in zip(num, den)]
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


def _loop_helpers() -> list[tuple[str, Callable[..., Any], tuple[Any, ...]]]:
    """The calls users make in loops, on 20 bytes (the l3/l4 helpers on a 20-byte packet, replace16 on 16-byte
    fields): each answers from C with the C engine (csum.engine.fast_path)."""
    rng = np.random.default_rng(20)
    data, other = (rng.integers(0, 256, 20, dtype=np.uint8).tobytes() for _ in range(2))
    pkt = bytearray(rng.integers(0, 256, 20, dtype=np.uint8).tobytes())
    x86 = csum.profile("x86_64")
    return [("csum.csum_partial", csum.csum_partial, (data,)),
            ("csum.internet_checksum", csum.internet_checksum, (data,)),
            ("csum.internet_checksum_bytes", csum.internet_checksum_bytes, (data,)),
            ("csum.profile('x86_64').csum_partial", x86.csum_partial, (data,)),
            ("csum.bpf_csum_diff (20 B -> 20 B)", csum.bpf_csum_diff, (data, other)),
            ("csum.bpf_csum_diff_legacy (20 B -> 20 B)", csum.bpf_csum_diff_legacy, (data, other)),
            ("csum.profile('x86_64').bpf_csum_diff", x86.bpf_csum_diff, (data, other)),
            ("csum.profile('x86_64').bpf_csum_diff_legacy", x86.bpf_csum_diff_legacy, (data, other)),
            ("csum.bpf_l3_csum_replace (size 4)", csum.bpf_l3_csum_replace, (pkt, 10, 0x0A000001, 0xC0A80001, 4)),
            ("csum.bpf_l4_csum_replace (size 4, BPF_F_PSEUDO_HDR)", csum.bpf_l4_csum_replace,
             (pkt, 16, 0x0A000001, 0xC0A80001, 4 | csum.BPF_F_PSEUDO_HDR)),
            ("csum.csum_replace2", csum.csum_replace2, (0x1C46, 0x0050, 0x1F90)),
            ("csum.csum_replace4", csum.csum_replace4, (0x1C46, 0x0A000001, 0xC0A80001)),
            ("csum.inet_proto_csum_replace16", csum.inet_proto_csum_replace16, (0x1C46, data[:16], other[:16]))]


def call_floor(quick: bool) -> list[dict[str, Any]]:
    """The loop helpers' 20-byte calls against a bare ``zlib.crc32`` call and against ``csum.csum_partial``,
    timed in interleaved rounds (:func:`paired`): on the bound engine, then with the Python functions
    (csum.engine.use("python"): what each call cost before its C fast path)."""
    crc_data = np.random.default_rng(20).integers(0, 256, 20, dtype=np.uint8).tobytes()
    rounds, slice_s = (5, 0.001) if quick else (41, 0.01)
    rows = []
    engines = [_engine.ENGINE] + (["python"] if _engine.ENGINE != "python" else [])
    for name in engines:
        with _engine.use(name):
            for label, fn, args in _loop_helpers():
                times = paired({"crc": (zlib.crc32, (crc_data,)), "partial": (csum.csum_partial, (crc_data,)),
                                "fn": (fn, args)}, rounds, slice_s)
                crc, per_crc, per_partial = times["crc"], _ratios(times["fn"], times["crc"]), \
                    _ratios(times["fn"], times["partial"])
                rows.append({"impl": label, "engine": name, "size": 20, "median_s": statistics.median(times["fn"]),
                             "ratio_median": per_crc["median"], "ratio_min": per_crc["min"],
                             "ratio_max": per_crc["max"], "per_partial": per_partial,
                             "crc32_median_s": statistics.median(crc),
                             "partial_median_s": statistics.median(times["partial"])})
    return rows


def batch(quick: bool) -> list[dict[str, Any]]:
    """internet_checksums (2-D), internet_checksums_ragged and csum_partials on 1,000,000 packets of 64 B
    (bound engine), and each non-Python engine's ones_sum_many on the same rows."""
    rows = []
    packets = np.random.default_rng(7).integers(0, 256, (BATCH_ROWS, BATCH_LEN), dtype=np.uint8)
    flat = packets.reshape(-1)
    offsets = np.arange(BATCH_ROWS, dtype=np.int64) * BATCH_LEN
    lengths = np.full(BATCH_ROWS, BATCH_LEN, dtype=np.int64)
    out = np.zeros(BATCH_ROWS, dtype=np.uint64)
    jobs: list[tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = [
        (f"csum.batch.internet_checksums [{_engine.ENGINE}]", csum.batch.internet_checksums, (packets,), {}),
        (f"csum.batch.internet_checksums_ragged [{_engine.ENGINE}]", csum.batch.internet_checksums_ragged,
         (flat, offsets, lengths), {}),
        (f"csum.batch.csum_partials x86_64 [{_engine.ENGINE}]", csum.batch.csum_partials, (packets,),
         {"profile": "x86_64"})]
    for name, engine in _engine.ENGINES.items():
        if name != "python" and not (quick and name != _engine.ENGINE):  # python: a row loop, not a batch
            jobs.append((f"engine {name}: ones_sum_many", engine.ones_sum_many,
                         (flat, offsets, lengths, out, 16, "big"), {}))
    for name, fn, args, kwargs in jobs:
        runs = []
        for _ in range(2 if quick else 5):
            start = time.perf_counter()
            fn(*args, **kwargs)
            runs.append(time.perf_counter() - start)
        rows.append({"impl": name, "rows": BATCH_ROWS, "length": BATCH_LEN,
                     "median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs)})
    return rows


def bpf_csum_diff(quick: bool) -> list[dict[str, Any]]:
    """Legacy vs homogenized bpf_csum_diff emulation, push mode (from empty, to = size bytes), per size.

    The shape of the table in "bpf: bpf_csum_diff: optimize and homogenize for all archs": the
    kernel's bench filled ``to`` from a random buffer; here ``to`` is random bytes of each size. The two
    forms are timed in interleaved rounds (:func:`paired`) and the improvement is the median of the rounds'
    ratios; every profile on the bound engine, and generic with the Python functions too (csum.engine.use);
    then generic's and x86_64's C emulations called in a C loop (engine ``C loop``, bench/diff_loop.py), where no
    Python call hides what the two forms compute differently (left out without a C compiler or the C engine).
    """
    rows = []
    data = np.random.default_rng(3).integers(0, 256, 512, dtype=np.uint8).tobytes()
    rounds, slice_s = (5, 0.001) if quick else (15, 0.004)
    names = ["x86_64"] if quick else [n for n in csum.profile_names() if n != "generic"]
    targets = [("csum (generic)", _engine.ENGINE, csum.bpf_csum_diff_legacy, csum.bpf_csum_diff)]
    targets += [(f"profile {name}", _engine.ENGINE, csum.profile(name).bpf_csum_diff_legacy,
                 csum.profile(name).bpf_csum_diff) for name in names]
    if not quick and _engine.ENGINE != "python":
        targets.append(("csum (generic)", "python", csum.bpf_csum_diff_legacy, csum.bpf_csum_diff))
    for label, engine, legacy, homogenized in targets:
        with _engine.use(engine):
            for size in BPF_SIZES:
                to = data[:size]
                times = paired({"before": (legacy, (b"", to)), "after": (homogenized, (b"", to))}, rounds, slice_s)
                rows.append(_diff_row(label, engine, size, times["before"], times["after"]))
    # the emulations without the Python call (bench/diff_loop.c): many short rounds, so the two forms of a round
    # run under the same conditions (the machine's speed drifts by 2x over tens of ms)
    shapes = {"csum (generic)": "lib/checksum.c-le", "profile x86_64": "x86_64"}
    loops = {label: shape for label, shape in shapes.items() if shape in _engine.SHAPES}
    loop_rounds, calls = (11, 2_000) if quick else (201, 20_000)
    looped = diff_loop.times([_engine.SHAPES[s] for s in loops.values()], BPF_SIZES, loop_rounds, calls) or []
    for label, per in zip(loops, looped):
        for size, (before, after) in per.items():
            rows.append(_diff_row(label, "C loop", size, before, after))
    return rows


def _diff_row(label: str, engine: str, size: int, before: list[float], after: list[float]) -> dict[str, Any]:
    """A row of the bpf_csum_diff table: seconds per call of each form, per round; the improvement is the median
    of the rounds' ratios."""
    return {"target": label, "engine": engine, "size": size, "before": _spread(before), "after": _spread(after),
            "improvement_pct": (_ratios(before, after)["median"] - 1) * 100,
            "after_faster_rounds": sum(b > a for b, a in zip(before, after)), "rounds": len(before)}


def _spread(times: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def profiles_1mib(quick: bool) -> list[dict[str, Any]]:
    """Every profile's emulated csum_partial on 1 MiB, in GB/s."""
    data = np.random.default_rng(5).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    rows = []
    for name in csum.profile_names():
        t = measure(csum.profile(name).csum_partial, data, quick=quick)
        rows.append({"profile": name, **t.as_dict(), "gb_per_s": (1 << 20) / t.median / 1e9})
    return rows


def import_time(quick: bool) -> list[dict[str, Any]]:
    """Wall time of ``import csum`` (and with numpy) in a fresh interpreter: median of several starts."""
    rows = []
    code = "import time; t = time.perf_counter(); import {mods}; print(time.perf_counter() - t)"
    for mods in ("csum", "csum, numpy", "csum.batch"):
        runs = []
        for _ in range(3 if quick else 11):
            out = subprocess.run([sys.executable, "-c", code.format(mods=mods)], capture_output=True, text=True,
                                 check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            runs.append(float(out.stdout))
        rows.append({"import": mods, "median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs)})
    return rows


def publish(results: dict[str, Any], out: Path, table: Callable[[dict[str, Any]], str]) -> int:
    """Save a bench's results as JSON at ``out`` and print its table; the exit status of its main()."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(table(results))
    return 0


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process run to its exit, as a user types it; a failure stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"bench: {' '.join(cmd)} exited {done.returncode}: {done.stderr[-500:]!r}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def compile_csum() -> None:
    """Write csum's bytecode, as an installed package has it, before timing ``python -m csum`` from the shell: where
    PYTHONDONTWRITEBYTECODE is set (this machine), a source checkout compiles every module at each start
    (70-100 ms here), which no user of the package pays."""
    import compileall

    compileall.compile_dir(str(Path(csum.__file__).parent), quiet=1)


def machine() -> dict[str, Any]:
    """Where and with what the numbers were taken."""
    import dpkt
    import scapy

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "python": sys.version.split()[0],
            "platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count(), "csum": csum.__version__,
            "engine": _engine.ENGINE, "engines": list(_engine.ENGINES), "numpy": np.__version__,
            "scapy": scapy.VERSION, "dpkt": dpkt.__version__}


def run_all(quick: bool) -> dict[str, Any]:
    """Every section, in one process, one after the other."""
    return {"machine": machine(), "quick": quick, "single": single_buffer(quick), "call_floor": call_floor(quick),
            "batch": batch(quick),
            "bpf_csum_diff": bpf_csum_diff(quick), "profiles_1mib": profiles_1mib(quick),
            "import": import_time(quick)}
