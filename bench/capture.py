"""``python -m bench.capture [--gib G] [--packets N] [--repeats R] [--quick]``: capture checking at scale.

Two measurements, both from the shell (``python -m csum`` as a real process):

* **Peak memory**: a G GiB pcap (default 4) of small Ethernet packets (the
  bench.verify_pcap workload's 64 scapy-built templates, 1 % with a wrong TCP
  checksum), written on the fly to a temporary directory; ``csum verify`` and
  ``csum fix`` run on it with ``--jobs 1`` and ``--jobs 2``. Peak RSS is read two
  ways: the kernel's ``ru_maxrss`` from ``wait4`` (the largest single process of
  the tree) and the sum of the RSS of csum and its workers, sampled every 20 ms.
* **--jobs scaling**: ``csum verify`` of N-packet captures (default 1,000,000)
  with ``--jobs 1, 2, 4``, interleaved, ``R`` repeats; the median wall time, its
  ratio to ``--jobs 1`` of the same run, and the CPU seconds of all processes
  (with the load average: on a shared machine, other work takes cores too). Two
  workloads: the small packets of bench.verify_pcap (86 bytes on average, where
  the interpreter's start-up is a third of the time) and full-size frames
  (1,514-byte Ether/IPv4/TCP, as bulk transfers fill a capture).

Results go to bench/results/capture.json with the machine description.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .run import compile_csum, machine, publish
from .verify_pcap import write_workload

#: The scaling workloads: name -> (description, writer of an N-packet pcap).
WORKLOADS: dict[str, tuple[str, Any]] = {}

RESULTS = Path(__file__).resolve().parent / "results"


def write_big(path: Path, size: int) -> int:
    """A pcap of at least ``size`` bytes: the verify_pcap workload's records repeated; returns its packet count."""
    block_path = path.with_suffix(".block")
    write_workload(block_path, 100_000)
    block = block_path.read_bytes()
    block_path.unlink()
    header, records = block[:24], block[24:]
    written, copies = len(header), 0
    with open(path, "wb") as out:
        out.write(header)
        while written < size:
            out.write(records)
            written += len(records)
            copies += 1
    return copies * 100_000


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants now (0 once gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as status:
                total += next((int(line.split()[1]) << 10 for line in status if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as children:
                    todo += [int(c) for c in children.read().split()]
        except (OSError, ValueError):
            continue
    return total


def measure(args: list[str]) -> dict[str, Any]:
    """Run ``python -m csum ARGS``; wall time, exit code, ru_maxrss and the sampled peak of the process tree."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "csum", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    return {"args": args, "exit": proc.returncode, "seconds": round(seconds, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "maxrss_mib": round(usage.ru_maxrss / 1024, 1), "tree_peak_mib": round(peak[0] / 2**20, 1),
            "stderr": err[-300:]}


def memory(gib: float, root: Path) -> dict[str, Any]:
    path, out = root / "big.pcap", root / "fixed.pcap"
    packets = write_big(path, int(gib * 2**30))
    rows = []
    for jobs in ("1", "2"):
        rows.append(measure(["verify", str(path), "--jobs", jobs]))
        rows.append(measure(["fix", str(path), str(out), "--jobs", jobs]))
        out.unlink(missing_ok=True)
    return {"bytes": path.stat().st_size, "packets": packets, "rows": rows}


def write_full_size(path: Path, n: int) -> None:
    """N full-size frames (64 scapy-built 1,514-byte Ether/IPv4/TCP templates), every 100th with a wrong TCP
    checksum (last byte flipped)."""
    from scapy.all import IP, TCP, Ether, raw

    templates = [raw(Ether() / IP(src="10.0.0.1", dst="10.0.0.2", id=k) / TCP(sport=1000 + k, dport=80, seq=k)
                     / (bytes([k]) * 1460)) for k in range(64)]
    with path.open("wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            p = templates[i % 64]
            if i % 100 == 7:
                p = p[:-1] + bytes([p[-1] ^ 1])
            out.write(struct.pack("<IIII", i // 1000, i % 1000, len(p), len(p)) + p)


WORKLOADS.update({"small": ("the bench.verify_pcap packets", write_workload),
                  "full-size": ("1,514-byte frames", write_full_size)})


def scaling(packets: int, repeats: int, root: Path, workload: str = "small") -> dict[str, Any]:
    path = root / "scaling.pcap"
    what, write = WORKLOADS[workload]
    write(path, packets)
    jobs = ("1", "2", "4")
    times: dict[str, list[float]] = {j: [] for j in jobs}
    cpu: dict[str, list[float]] = {j: [] for j in jobs}
    load = [os.getloadavg()[0]]
    for _ in range(repeats):
        for j in jobs:
            row = measure(["verify", str(path), "--jobs", j])
            if row["exit"] != 1:
                raise SystemExit(f"bench.capture: verify --jobs {j} exited {row['exit']}: {row['stderr']}")
            times[j].append(row["seconds"])
            cpu[j].append(row["cpu_s"])
    load.append(os.getloadavg()[0])
    tiny = root / "tiny.pcap"
    write_workload(tiny, 1)
    startup = statistics.median(measure(["verify", str(tiny), "--jobs", "1"])["seconds"] for _ in range(repeats))
    serial = statistics.median(times["1"])
    cpu_split = split(path, repeats)
    size = path.stat().st_size
    path.unlink()
    return {"workload": what, "packets": packets, "bytes": size, "repeats": repeats, "loadavg_1min": load,
            "split": cpu_split, "startup_s": startup,
            "rows": [{"jobs": int(j), "median_s": round(statistics.median(t), 3), "min_s": min(t), "max_s": max(t),
                      "cpu_s": round(statistics.median(cpu[j]), 2),
                      "speedup": round(serial / statistics.median(t), 2)} for j, t in times.items()]}


def split(packets_path: Path, repeats: int) -> dict[str, Any]:
    """``--jobs 2`` in this process (csum.scan.scan, as the CLI runs it): CPU seconds of the calling process (the
    critical path: it finds the records, forks, checks its share of the chunks and merges) and of the worker, and
    the wall time they would take on two idle cores (the larger of the two), against ``--jobs 1``'s CPU seconds."""
    from csum.scan import scan

    def once(jobs: int) -> tuple[float, float]:
        before = os.times()
        scan(str(packets_path), jobs=jobs)
        after = os.times()
        return (after.user + after.system - before.user - before.system,
                after.children_user + after.children_system - before.children_user - before.children_system)

    serial = statistics.median(sum(once(1)) for _ in range(repeats))
    runs = [once(2) for _ in range(repeats)]
    main_s, worker_s = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    return {"serial_cpu_s": round(serial, 3), "parent_cpu_s": round(main_s, 3), "worker_cpu_s": round(worker_s, 3),
            "two_idle_cores_s": round(max(main_s, worker_s), 3),
            "speedup_on_two_idle_cores": round(serial / max(main_s, worker_s), 2)}


def table(results: dict[str, Any]) -> str:
    lines = []
    mem = results.get("memory")
    if mem:
        lines += [f"Peak memory on a {mem['bytes'] / 2**30:.2f} GiB pcap ({mem['packets']:,} packets):", "",
                  "| command | jobs | seconds | exit | largest process (ru_maxrss) | csum + workers (sampled) |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in mem["rows"]:
            lines.append(f"| csum {r['args'][0]} | {r['args'][-1]} | {r['seconds']} | {r['exit']} | "
                         f"{r['maxrss_mib']} MiB | {r['tree_peak_mib']} MiB |")
        lines.append("")
    for sc in results["scaling"]:
        lines += scaling_table(sc)
    return "\n".join(lines)


def scaling_table(sc: dict[str, Any]) -> list[str]:
    before, after = sc["loadavg_1min"]
    lines = [f"`csum verify` of a {sc['packets']:,}-packet pcap of {sc.get('workload', 'small packets')} "
             f"({sc['bytes'] / 1e6:.0f} MB), median of {sc['repeats']} runs from the shell (1-minute load average "
             f"{before:.1f} before, {after:.1f} after):",
             "", "| --jobs | median s | min-max s | CPU s (all processes) | speedup vs --jobs 1 |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['jobs']} | {r['median_s']} | {r['min_s']}-{r['max_s']} | {r['cpu_s']} | {r['speedup']}x |"
              for r in sc["rows"]]
    sp = sc["split"]
    lines += ["", f"CPU split of `--jobs 2` (in one process, median of {sc['repeats']}): calling process "
              f"{sp['parent_cpu_s']} s, worker {sp['worker_cpu_s']} s, against {sp['serial_cpu_s']} s for `--jobs 1`: "
              f"on two idle cores {sp['two_idle_cores_s']} s, {sp['speedup_on_two_idle_cores']}x."]
    if "startup_s" in sc:
        start, one = sc["startup_s"], sc["rows"][0]["median_s"]
        lines += ["", f"Start-up (`csum verify` of a 1-packet capture: interpreter, imports, exit): {start} s of the "
                  f"{one} s of `--jobs 1`; it runs once whatever --jobs is, so two cores can give at most "
                  f"{one / (start + (one - start) / 2):.2f}x here."]
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capture", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=4.0,
                        help="size of the memory workload (default 4 GiB; 0: skip it, keeping the saved results)")
    parser.add_argument("--packets", type=int, default=1_000_000,
                        help="packets of the scaling workload (0: skip it, keeping the saved results)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per --jobs value")
    parser.add_argument("--quick", action="store_true", help="0.05 GiB, 100,000 packets, 2 repeats")
    parser.add_argument("--out", type=Path, default=RESULTS / "capture.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    gib, packets, repeats = (0.05, 100_000, 2) if args.quick else (args.gib, args.packets, args.repeats)
    saved = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    compile_csum()
    with tempfile.TemporaryDirectory() as tmp:
        results = {"machine": machine(), "cpus_usable": len(os.sched_getaffinity(0)),
                   "memory": memory(gib, Path(tmp)) if gib else saved.get("memory"),
                   "scaling": [scaling(packets, repeats, Path(tmp), w) for w in WORKLOADS] if packets
                   else saved["scaling"]}
    return publish(results, args.out, table)


if __name__ == "__main__":
    sys.exit(main())
