"""``python -m bench.verify_pcap [--packets N] [--quick]``: checking every checksum of a capture, csum vs scapy.

Workload: a pcap of N small Ethernet packets (IPv4 and IPv6, TCP and UDP, 0-39
byte payloads, 1 % with a wrong TCP checksum), written once to a temporary
directory. Timed, each from the file on disk to the counts:

* ``csum verify``: csum.pcap.read + the vectorized check behind the CLI;
* ``csum.inet.verify`` packet by packet (the scalar path), on a slice;
* scapy: ``rdpcap`` + for each packet, delete the IP/TCP/UDP checksums of a copy
  and rebuild it to recompute them (what a scapy user writes), on a slice.

The slices' rates are per packet, so the ratios compare like with like; all
three must find the same bad checksums in the slice. Results go to
bench/results/verify_pcap.json with the machine description.
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from csum import inet, pcap
from csum._cli_verify import check

from .run import machine

RESULTS = Path(__file__).resolve().parent / "results"


def write_workload(path: Path, n: int) -> None:
    """N packets from 64 scapy-built templates; every 100th packet's last byte flipped (TCP ones become bad)."""
    from scapy.all import IP, TCP, UDP, Ether, IPv6, raw

    rng = random.Random(1)
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    templates = []
    for k in range(64):
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        l3 = IP(src=f"10.0.{k}.1", dst="10.1.0.2") if k % 4 else IPv6(src=f"2001:db8::{k + 1:x}", dst="2001:db8::2")
        l4 = TCP(sport=1000 + k, dport=80) if k % 2 else UDP(sport=1000 + k, dport=53)
        templates.append(raw(eth / l3 / l4 / payload))
    parts = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i in range(n):
        p = templates[i % 64]
        if i % 100 == 7 and len(p) > 60:
            p = p[:-1] + bytes([p[-1] ^ 1])
        parts.append(struct.pack("<IIII", i // 1000, i % 1000, len(p), len(p)) + p)
    path.write_bytes(b"".join(parts))


def time_csum(path: Path) -> tuple[float, int, int]:
    start = time.perf_counter()
    report = check(pcap.read(path))
    return time.perf_counter() - start, report.packets, len(report.bad)


def time_inet(path: Path, limit: int) -> tuple[float, int, int]:
    start = time.perf_counter()
    cap = pcap.read(path)
    count = min(limit, len(cap))
    bad = sum(1 for i in range(count) for r in inet.verify(cap.packet(i), link="ether") if r.ok is False)
    return time.perf_counter() - start, count, bad


def time_scapy(path: Path, limit: int) -> tuple[float, int, int]:
    from scapy.all import IP, TCP, UDP, Ether, IPv6, rdpcap

    start = time.perf_counter()
    bad = 0
    packets = rdpcap(str(path), count=limit)
    for pkt in packets:
        fresh = pkt.copy()
        for layer in (IP, TCP, UDP):
            if layer in fresh:
                del fresh[layer].chksum
        rebuilt = Ether(bytes(fresh))
        for layer in (IP, TCP, UDP):
            if layer in pkt and (layer is not IP or IPv6 not in pkt):
                bad += pkt[layer].chksum != rebuilt[layer].chksum
    return time.perf_counter() - start, len(packets), bad


def run(n: int, slice_n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        full, part = Path(tmp) / "full.pcap", Path(tmp) / "slice.pcap"
        write_workload(full, n)
        write_workload(part, slice_n)
        rows = []
        for name, (seconds, packets, bad) in (("csum verify (vectorized)", time_csum(full)),
                                             ("csum verify (vectorized), slice", time_csum(part)),
                                             ("csum.inet.verify per packet, slice", time_inet(part, slice_n)),
                                             ("scapy rdpcap + recompute, slice", time_scapy(part, slice_n))):
            rows.append({"impl": name, "packets": packets, "seconds": round(seconds, 3),
                         "packets_per_s": round(packets / seconds), "bad_found": bad})
    slice_bad = {r["bad_found"] for r in rows[1:]}
    if len(slice_bad) != 1:
        raise SystemExit(f"bench.verify_pcap: implementations disagree on the slice's bad checksums: {rows}")
    return {"machine": machine(), "packets": n, "slice": slice_n, "rows": rows}


def table(results: dict[str, Any]) -> str:
    scapy_rate = results["rows"][-1]["packets_per_s"]
    lines = ["| implementation | packets | seconds | packets/s | × scapy | bad found |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        lines.append(f"| {r['impl']} | {r['packets']:,} | {r['seconds']} | {r['packets_per_s']:,} | "
                     f"{r['packets_per_s'] / scapy_rate:.0f} | {r['bad_found']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verify_pcap", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=1_000_000, help="packets in the full capture (default 1e6)")
    parser.add_argument("--slice", type=int, default=20_000, help="packets for the slow implementations")
    parser.add_argument("--quick", action="store_true", help="100,000 packets and a 2,000-packet slice")
    parser.add_argument("--out", type=Path, default=RESULTS / "verify_pcap.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    n, slice_n = (100_000, 2_000) if args.quick else (args.packets, args.slice)
    results = run(n, slice_n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
