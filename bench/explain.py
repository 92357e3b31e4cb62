"""``python -m bench.explain [--packets N] [--repeat R]``: what ``csum verify --explain`` costs, side by side.

One workload: a pcap of N Ethernet IPv4/IPv6 TCP/UDP packets from 64 hosts (scapy builds 64 templates), 1 % of
them with a wrong TCP/UDP checksum, in turn a payload byte changed after the checksum (unexplained), the checksum
stored uncomplemented and stored byte-swapped (each a named cause). The wrong packets are the 8th or the 9th of each
hundred in turn, so their hosts are half IPv4 and half IPv6, two thirds TCP and one third UDP (as the templates), and
each mistake falls on each of the four alike. Timed in process, ``csum.cli.main`` with
``--jobs 1`` and standard output captured: ``verify FILE`` and ``verify FILE --explain`` (which copies the wrong
packets as the file is checked, then explains each wrong field), in ``--repeat`` interleaved rounds, each run in the
process's CPU time (``time.process_time``: one process does all the work, and the machine is shared, so wall time
measures the neighbours); the medians and the median of the rounds' ratios. Results go to
bench/results/explain.json with the machine description and the load average; the target (issue 32) is a ratio
within 1.5x.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from csum.cli import main as csum_main

from .run import machine, publish

RESULTS = Path(__file__).resolve().parent / "results"


def _templates() -> list[bytes]:
    from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw

    out = []
    for h in range(64):
        v6 = h % 2
        src, dst = (f"2001:db8::{h + 1:x}", "2001:db8::ffff") if v6 else (f"10.0.{h}.1", "10.0.255.1")
        l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)
        l4 = TCP(sport=1000 + h, dport=443) if h % 3 else UDP(sport=1000 + h, dport=53)
        out.append(bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / Raw(bytes(h % 40 + 1))))
    return out


def _wrong(frame: bytearray, kind: int) -> None:
    """Make the TCP/UDP checksum of ``frame`` wrong: a payload byte changed, not complemented, or byte-swapped."""
    v6 = frame[14] >> 4 == 6
    l4 = 14 + (40 if v6 else 20)
    at = l4 + (16 if frame[14 + (6 if v6 else 9)] == 6 else 6)
    if kind == 0:
        frame[-1] ^= 0x10
    elif kind == 1:
        frame[at] ^= 0xFF
        frame[at + 1] ^= 0xFF
    else:
        frame[at], frame[at + 1] = frame[at + 1], frame[at]


def _capture(n: int) -> bytes:
    frames = _templates()
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]  # pcap, microseconds, Ethernet
    for i in range(n):
        f = bytearray(frames[i % 64])
        if i % 100 == 7 + i // 100 % 2:  # the 8th and the 9th in turn: an odd (IPv6) and an even (IPv4) host
            _wrong(f, i // 100 % 3)
        out.append(struct.pack("<IIII", 1_700_000_000 + i // 1000, i % 1000 * 1000, len(f), len(f)) + bytes(f))
    return b"".join(out)


def _cli(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return csum_main(argv)


def run(n: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "rare.pcap")
        path.write_bytes(_capture(n))
        base = ["verify", str(path), "--jobs", "1"]
        _cli([*base, "--explain"])  # warm: imports
        plain: list[float] = []
        explain: list[float] = []
        load = os.getloadavg()[0]
        for _ in range(repeat):
            for argv, times in ((base, plain), ([*base, "--explain"], explain)):
                start = time.process_time()
                _cli(argv)
                times.append(time.process_time() - start)
    return {"machine": machine(), "load_average": load, "packets": n, "repeat": repeat, "wrong_share": 0.01,
            "clock": "process_time", "verify_s": statistics.median(plain), "explain_s": statistics.median(explain),
            "ratio": statistics.median(e / p for p, e in zip(plain, explain))}


def table(results: dict[str, Any]) -> str:
    return "\n".join([f"{results['packets']} packets, 1 % wrong TCP/UDP checksums, CPU time, median of "
                      f"{results['repeat']} interleaved rounds (load average {results['load_average']:.1f})",
                      "| verify | verify --explain | ratio |", "| --- | --- | --- |",
                      f"| {results['verify_s'] * 1e3:.0f} ms | {results['explain_s'] * 1e3:.0f} ms | "
                      f"{results['ratio']:.2f}x |"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    return publish(run(args.packets, args.repeat), RESULTS / "explain.json", table)


if __name__ == "__main__":
    sys.exit(main())
