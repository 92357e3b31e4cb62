"""``python -m bench.verify_rows [--packets N] [--repeat R] [--quick]``: every checksum field as a row, from the shell.

The capture is bench/verify_pcap.py's ``mixed`` workload (plain IPv4/TCP, IPv4 with options, IPv6 with extension
headers, VLAN, VXLAN, IPv4 fragments; every 100th plain TCP packet with a wrong checksum), N packets written once.
Timed side by side, each a new process from the file on disk (wall time; the children's CPU time), ``--repeat``
times (median, min and max):

* ``csum verify FILE --format json``: the summary (the fast path, ``--jobs`` default);
* ``csum verify FILE --format jsonl`` and ``--format csv`` to /dev/null, ``--format parquet --out FILE``: one row per
  checksum field (csum/capture/rows.py; the text written in C by csum/engine/_rowtext.c);
* tshark (where installed): ``tshark -r -T fields`` of the same columns (frame.number, frame.time_epoch, ip.src,
  ip.dst, the IPv4/TCP/UDP checksums and their statuses, validation on) on the first ``--slice`` packets (tshark
  takes minutes for a million), its rate per packet and per row scaled from there.

Rows per second: the capture's fields (the summary's counts, checked against the parquet file's row count) over the
wall time, and over the CPU time (the machine may be shared: the wall times then wait for the CPU). Results go to
bench/results/verify_rows.json with the machine and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .run import compile_csum, machine, publish
from .verify_pcap import write_workload

RESULTS = Path(__file__).resolve().parent / "results"
FORMATS = ("json", "jsonl", "csv", "parquet")
#: tshark's columns for the rows' (frame, time, addresses, the checksums and their verdicts).
TSHARK_FIELDS = ("frame.number", "frame.time_epoch", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.checksum",
                 "ip.checksum.status", "tcp.checksum", "tcp.checksum.status", "udp.checksum", "udp.checksum.status")


def _timed(cmd: list[str], repeat: int) -> dict[str, float]:
    """Wall times (median, min, max) and the median children's CPU time of ``repeat`` runs of ``cmd``."""
    runs, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        runs.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):
            raise SystemExit(f"bench.verify_rows: {' '.join(cmd)} failed: {done.stderr.decode()[-500:]}")
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"median_s": statistics.median(runs), "min_s": min(runs), "max_s": max(runs),
            "cpu_s": statistics.median(cpu)}


def _fields(path: Path) -> tuple[int, int]:
    """(packets, checksum fields) of the capture: csum's summary."""
    out = subprocess.run([sys.executable, "-m", "csum", "verify", str(path), "--format", "json"],
                         capture_output=True, text=True).stdout
    summary = json.loads(out)
    return summary["packets"], sum(sum(c.values()) for c in summary["counts"].values())


def _tshark(path: Path, limit: int, repeat: int) -> dict[str, Any] | None:
    tshark = shutil.which("tshark")
    if tshark is None:
        return None
    cmd = [tshark, "-r", str(path), "-c", str(limit), "-T", "fields", "-o", "ip.check_checksum:TRUE", "-o",
           "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]
    for name in TSHARK_FIELDS:
        cmd += ["-e", name]
    return _timed(cmd, repeat)


def run(n: int, slice_n: int, repeat: int) -> dict[str, Any]:
    load = [os.getloadavg()[0]]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path, part, out = Path(tmp) / "mixed.pcap", Path(tmp) / "mixed-slice.pcap", Path(tmp) / "rows.parquet"
        write_workload(path, n, "mixed")
        write_workload(part, slice_n, "mixed")
        packets, fields = _fields(path)
        part_packets, part_fields = _fields(part)
        csum = [sys.executable, "-m", "csum", "verify", str(path), "--format"]
        for fmt in FORMATS:
            cmd = csum + [fmt] + (["--out", str(out)] if fmt == "parquet" else [])
            timing = _timed(cmd, repeat)
            rows.append({"impl": f"csum verify --format {fmt}" + (" --out FILE" if fmt == "parquet" else ""),
                         "packets": packets, "rows": fields, **_rates(timing, packets, fields)})
        import pyarrow.parquet as pq

        written = pq.ParquetFile(out).metadata.num_rows
        if written != fields:
            raise SystemExit(f"bench.verify_rows: the parquet file holds {written} rows, the summary {fields} fields")
        timing = _tshark(part, slice_n, repeat)
        if timing is not None:
            rows.append({"impl": f"tshark -r -T fields (the same columns), first {part_packets:,} packets",
                         "packets": part_packets, "rows": part_fields, **_rates(timing, part_packets, part_fields)})
    load.append(os.getloadavg()[0])
    return {"machine": machine(), "load_average": load, "workload": "mixed", "packets": n, "slice": slice_n,
            "repeat": repeat, "rows": rows}


def _rates(timing: dict[str, float], packets: int, fields: int) -> dict[str, Any]:
    median = timing["median_s"]
    return {**{k: round(v, 3) for k, v in timing.items()}, "packets_per_s": round(packets / median),
            "rows_per_s": round(fields / median), "rows_per_s_min": round(fields / timing["max_s"]),
            "rows_per_s_max": round(fields / timing["min_s"])}


def table(results: dict[str, Any]) -> str:
    summary = next(r for r in results["rows"] if r["impl"].endswith("json"))
    lines = ["| implementation | packets | rows | median s (min-max) | rows/s (min-max) | packets/s | CPU s | "
             "rows per CPU s | time / summary |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        per_row = (r["median_s"] / r["rows"]) / (summary["median_s"] / summary["rows"])
        lines.append(f"| {r['impl']} | {r['packets']:,} | {r['rows']:,} | {r['median_s']} ({r['min_s']}-{r['max_s']}) "
                     f"| {r['rows_per_s']:,} ({r['rows_per_s_min']:,}-{r['rows_per_s_max']:,}) | "
                     f"{r['packets_per_s']:,} | {r['cpu_s']} | {round(r['rows'] / r['cpu_s']):,} | {per_row:.1f} |")
    lines.append(f"\n{results['repeat']} runs each; load average (1 min) before / after: "
                 f"{' / '.join(f'{x:.2f}' for x in results['load_average'])}")
    return "\n".join(lines)


def _table_of(path: Path) -> int:
    print(table(json.loads(path.read_text(encoding="utf-8"))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verify_rows", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=1_000_000, help="packets in the capture (default 1e6)")
    parser.add_argument("--slice", type=int, default=50_000, help="packets tshark reads (default 50,000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (median, min and max kept)")
    parser.add_argument("--quick", action="store_true", help="20,000 packets, a 2,000-packet slice, 2 runs")
    parser.add_argument("--out", type=Path, default=RESULTS / "verify_rows.json", help="where to write the JSON")
    parser.add_argument("--table-only", type=Path, metavar="JSON", help="print the table of saved results")
    args = parser.parse_args(argv)
    if args.table_only is not None:
        return _table_of(args.table_only)
    n, slice_n, repeat = (20_000, 2_000, 2) if args.quick else (args.packets, args.slice, args.repeat)
    compile_csum()
    return publish(run(n, slice_n, repeat), args.out, table)


if __name__ == "__main__":
    sys.exit(main())
