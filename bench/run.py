"""The measurements: every workload, every implementation, side by side in one run.

Each number is the median of ``repeats`` timings (each timing ``number`` calls,
calibrated to a time slice), with the min-max spread; ratios against scapy and
dpkt are taken from the same run. Workloads are named after conventions.md: 20,
40, 64, 1500 B, 64 KiB, 4 MiB and the odd sizes 1499 and 65535.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

import numpy as np

import csum
import csum.batch
from csum import _engine

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
    """Median seconds per ``fn(*args)`` over repeats, each repeat calibrated to ~10 ms (quick) or ~60 ms."""
    names = [f"a{i}" for i in range(len(args))]
    timer = timeit.Timer(f"f({', '.join(names)})", globals={"f": fn, **dict(zip(names, args))})
    slice_s = 0.01 if quick else 0.06
    number = 1
    while True:
        spent = timer.timeit(number)
        if spent >= slice_s / 4 or number >= 1 << 24:
            break
        number *= 4
    number = max(1, int(number * slice_s / max(spent, 1e-9)))
    runs = [t / number for t in timer.repeat(repeat=5 if quick else 9, number=number)]
    return Timing(statistics.median(runs), min(runs), max(runs))


def _peers() -> dict[str, Callable[[bytes], int]]:
    from scapy.utils import checksum as scapy_checksum
    import dpkt

    return {"scapy.utils.checksum": scapy_checksum, "dpkt.in_cksum": dpkt.in_cksum}


def single_buffer(quick: bool) -> list[dict[str, Any]]:
    """csum's public functions (on every engine) and the engine itself, against scapy and dpkt, per size."""
    rows = []
    peers = _peers()
    rng = np.random.default_rng(2024)
    for size in SIZES:
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        impls: dict[str, tuple[str | None, Callable[..., int], tuple[Any, ...]]] = {}
        for engine in _engine.available_engines():
            impls[f"csum.internet_checksum [{engine}]"] = (engine, csum.internet_checksum, (data,))
            impls[f"csum.csum_partial [{engine}]"] = (engine, csum.csum_partial, (data,))
        impls["csum._engine.ones_sum [c]" if "c" in _engine.available_engines() else "csum._engine.ones_sum"] = (
            _engine.available_engines()[0], _engine.ones_sum, (data, 16, "big"))
        for name, fn in peers.items():
            impls[name] = (None, fn, (data,))
        timings = {}
        for name, (engine, fn, args) in impls.items():
            if engine is not None:
                _engine.use_engine(engine)
            timings[name] = measure(fn, *args, quick=quick)
        _engine.use_engine(_engine.ENGINE)
        for name, t in timings.items():
            rows.append({"size": size, "impl": name, **t.as_dict(), "gb_per_s": size / t.median / 1e9,
                         "x_scapy": timings["scapy.utils.checksum"].median / t.median,
                         "x_dpkt": timings["dpkt.in_cksum"].median / t.median})
    return rows


def batch(quick: bool) -> list[dict[str, Any]]:
    """internet_checksums (2-D) and internet_checksums_ragged on 1,000,000 packets of 64 B, per engine."""
    rows = []
    packets = np.random.default_rng(7).integers(0, 256, (BATCH_ROWS, BATCH_LEN), dtype=np.uint8)
    flat = packets.reshape(-1)
    offsets = np.arange(BATCH_ROWS, dtype=np.int64) * BATCH_LEN
    lengths = np.full(BATCH_ROWS, BATCH_LEN, dtype=np.int64)
    for engine in _engine.available_engines():
        if engine == "python" or (quick and engine != _engine.available_engines()[0]):
            continue  # the non-C batch code is numpy whatever the engine: measured once, as "numpy"
        _engine.use_engine(engine)
        for name, fn, args in (("csum.batch.internet_checksums", csum.batch.internet_checksums, (packets,)),
                               ("csum.batch.internet_checksums_ragged", csum.batch.internet_checksums_ragged,
                                (flat, offsets, lengths)),
                               ("csum.batch.csum_partials x86_64", csum.batch.csum_partials, (packets,))):
            runs = []
            for _ in range(3 if quick else 5):
                start = time.perf_counter()
                fn(*args, **({"profile": "x86_64"} if "partials" in name else {}))
                runs.append(time.perf_counter() - start)
            rows.append({"impl": f"{name} [{engine}]", "rows": BATCH_ROWS, "length": BATCH_LEN,
                         "median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs)})
    _engine.use_engine(_engine.ENGINE)
    return rows


def bpf_csum_diff(quick: bool) -> list[dict[str, Any]]:
    """Legacy vs homogenized bpf_csum_diff emulation, push mode (from empty, to = size bytes), per size.

    The shape of the table in "bpf: bpf_csum_diff: optimize and homogenize for all archs": the
    kernel's bench filled ``to`` from a random buffer; here ``to`` is random bytes of each size.
    """
    rows = []
    data = np.random.default_rng(3).integers(0, 256, 512, dtype=np.uint8).tobytes()
    targets = [("csum (generic)", csum.bpf_csum_diff_legacy, csum.bpf_csum_diff)]
    names = ["x86_64"] if quick else [n for n in csum.profile_names() if n != "generic"]
    for name in names:
        prof = csum.profile(name)
        targets.append((f"profile {name}", prof.bpf_csum_diff_legacy, prof.bpf_csum_diff))
    for label, legacy, homogenized in targets:
        for size in BPF_SIZES:
            to = data[:size]
            before, after = measure(legacy, b"", to, quick=quick), measure(homogenized, b"", to, quick=quick)
            rows.append({"target": label, "size": size,
                         "before": before.as_dict(), "after": after.as_dict(),
                         "improvement_pct": (before.median / after.median - 1) * 100})
    return rows


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
        for _ in range(5 if quick else 11):
            out = subprocess.run([sys.executable, "-c", code.format(mods=mods)], capture_output=True, text=True,
                                 check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            runs.append(float(out.stdout))
        rows.append({"import": mods, "median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs)})
    return rows


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
            "engine": _engine.ENGINE, "engines": _engine.available_engines(), "numpy": np.__version__,
            "scapy": scapy.VERSION, "dpkt": dpkt.__version__}


def run_all(quick: bool) -> dict[str, Any]:
    """Every section, in one process, one after the other."""
    return {"machine": machine(), "quick": quick, "single": single_buffer(quick), "batch": batch(quick),
            "bpf_csum_diff": bpf_csum_diff(quick), "profiles_1mib": profiles_1mib(quick),
            "import": import_time(quick)}
