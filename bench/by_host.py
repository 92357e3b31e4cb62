"""``python -m bench.by_host [--packets N] [--repeat R]``: what ``csum verify --by host`` costs, side by side.

Two workloads, each a pcap of N Ethernet IPv4/IPv6 TCP/UDP packets from 64 hosts, written once to a temporary
directory (scapy builds 64 templates, the timestamps step by 1 ms):

* ``rare``: 1 % of the packets with a wrong TCP/UDP checksum (a capture off the wire);
* ``offload``: every packet holds transmit offload's partial sum (a capture taken on the sending hosts: every field
  is counted, the worst case of the per-host summary, whose senders the Python walker reads again for each packet
  the C walker judged).

Timed, in process, the median of ``--repeat`` runs of csum.scan.scan on the file with ``jobs=1``: without the
summary (``verify``), with it (``hosts=True``: ``verify --by host``), and the two with ``jobs=2``; plus what the
timestamps column (read only with the summary: ``Reader(times=True)``) adds to reading the chunks: the walker's
``_times`` on every chunk, timed alone, against reading them without it. Results go to
bench/results/by_host.json with the machine description; compare the ratios (the machine may be shared).
"""

from __future__ import annotations

import argparse
import io
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from csum.capture import pcap
from csum.capture.scan import scan

from .run import machine, publish

RESULTS = Path(__file__).resolve().parent / "results"


def _templates(kind: str) -> list[bytes]:
    """64 frames, one per host; ``offload``: their TCP/UDP field set to the folded pseudo-header sum."""
    import ipaddress

    from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw
    from scapy.utils import checksum

    out = []
    for h in range(64):
        v6 = h % 2
        src, dst = (f"2001:db8::{h + 1:x}", "2001:db8::ffff") if v6 else (f"10.0.{h}.1", "10.0.255.1")
        l3 = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)
        l4 = TCP(sport=1000 + h, dport=443) if h % 3 else UDP(sport=1000 + h, dport=53)
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / l3 / l4 / Raw(bytes(h % 40))
        if kind == "offload":
            seg = bytes(pkt[2])
            proto = 6 if TCP in pkt else 17
            pseudo = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
            pseudo += struct.pack("!I3xB", len(seg), proto) if v6 else struct.pack("!BBH", 0, proto, len(seg))
            pkt[2].chksum = checksum(pseudo) ^ 0xFFFF
        out.append(bytes(pkt))
    return out


def _capture(kind: str, n: int) -> bytes:
    frames = _templates(kind)
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]  # pcap, microseconds, Ethernet
    for i in range(n):
        f = bytearray(frames[i % 64])
        if kind == "rare" and i % 100 == 7:
            f[-1] ^= 0x10  # the payload changed: the checksum is wrong
        t = 1_700_000_000_000 + i  # milliseconds
        out.append(struct.pack("<IIII", t // 1000, t % 1000 * 1000, len(f), len(f)) + bytes(f))
    return b"".join(out)


def _median(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _times_share(data: bytes, repeat: int) -> dict[str, float]:
    """Reading the capture in chunks, and the walker's timestamp column alone over the same chunks."""
    chunks = list(pcap.Reader(io.BytesIO(data)))
    walker = pcap._PcapWalker("<", 1)
    read = _median(lambda: sum(len(c) for c in pcap.Reader(io.BytesIO(data))), repeat)
    stamps = _median(lambda: [walker._times(c.data, c.offsets) for c in chunks], repeat)
    return {"read_s": read, "times_column_s": stamps, "share": stamps / read}


def run(n: int, repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {"machine": machine(), "packets": n, "repeat": repeat, "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("rare", "offload"):
            data = _capture(kind, n)
            path = Path(tmp, f"{kind}.pcap")
            path.write_bytes(data)
            row: dict[str, Any] = {}
            for jobs in (1, 2):
                plain = _median(lambda: scan(str(path), jobs=jobs), repeat)
                hosts = _median(lambda: scan(str(path), jobs=jobs, hosts=True), repeat)
                row[f"jobs{jobs}"] = {"verify_s": plain, "by_host_s": hosts, "ratio": hosts / plain}
            row["timestamps"] = _times_share(data, repeat)
            out["workloads"][kind] = row
    return out


def table(results: dict[str, Any]) -> str:
    lines = [f"{results['packets']} packets, median of {results['repeat']}",
             "| workload | jobs | verify | verify --by host | ratio | timestamps share of reading |",
             "| --- | --- | --- | --- | --- | --- |"]
    for kind, row in results["workloads"].items():
        for jobs in (1, 2):
            r = row[f"jobs{jobs}"]
            lines.append(f"| {kind} | {jobs} | {r['verify_s'] * 1e3:.0f} ms | {r['by_host_s'] * 1e3:.0f} ms | "
                         f"{r['ratio']:.2f}x | {row['timestamps']['share'] * 100:.1f} % |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    return publish(run(args.packets, args.repeat), RESULTS / "by_host.json", table)


if __name__ == "__main__":
    sys.exit(main())
