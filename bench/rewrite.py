"""``python -m bench.rewrite [--calls N] [--repeats R] [--quick] [--out JSON]``: csum.rewrite vs scapy, per packet.

Four NAT workloads, one Ethernet frame each (scapy-built, checksums by scapy):

* ``ipv4-tcp``: IPv4/TCP with 40 payload bytes, the 4-tuple rewritten (saddr, daddr, sport, dport);
* ``ipv6-udp``: the same on IPv6/UDP;
* ``icmp4-error``: a port unreachable quoting a UDP datagram, NATed back (outer daddr, quoted saddr and sport);
* ``vxlan``: a VXLAN packet (outer UDP checksum computed) whose inner IPv4/TCP daddr and dport change.

Timed in the same process, interleaved, CPU time (``time.process_time``) per call, median of R repeats of N calls:

* csum: ``csum.rewrite.rewrite(frame, ...)`` (helper calls recorded, skb->csum shadow, checks included);
* scapy: what a scapy user writes for the same change: dissect the frame, set the fields, delete every checksum
  the change touches and ``raw()`` the packet to recompute them. Both give the same bytes (checked first).

The ratio scapy / csum is what to quote (the machine is shared: the load average is recorded).
Results go to bench/results/rewrite.json with the machine description.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from csum.rewrite import rewrite

from .run import machine, publish

RESULTS = Path(__file__).resolve().parent / "results"


def workloads() -> dict[str, tuple[bytes, dict[str, Any], Callable[[bytes], bytes]]]:
    """name -> (frame, rewrite keywords, the scapy rewrite of the frame to the same bytes)."""
    from scapy.compat import raw
    from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, UDPerror
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.layers.vxlan import VXLAN

    eth = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    payload = bytes(range(40))

    def four_tuple(ip_cls: type, l4_cls: type, src: str, dst: str) -> Callable[[bytes], bytes]:
        def scapy(frame: bytes) -> bytes:
            p = Ether(frame)
            p[ip_cls].src, p[ip_cls].dst = src, dst
            p[l4_cls].sport, p[l4_cls].dport = 4321, 8080
            if ip_cls is IP:
                del p[IP].chksum
            del p[l4_cls].chksum
            return raw(p)
        return scapy

    def icmp_error(frame: bytes) -> bytes:
        p = Ether(frame)
        p[IP].dst, p[IPerror].src, p[UDPerror].sport = "10.0.0.7", "10.0.0.7", 1234
        del p[IP].chksum, p[ICMP].chksum, p[IPerror].chksum, p[UDPerror].chksum
        return raw(p)

    def vxlan(frame: bytes) -> bytes:
        p = Ether(frame)
        inner = p[VXLAN][IP]
        inner.dst, inner[TCP].dport = "10.9.9.9", 8080
        del p[UDP].chksum, inner.chksum, inner[TCP].chksum
        return raw(p)

    v4 = raw(eth / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1234, dport=80) / payload)
    v6 = raw(eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1234, dport=53) / payload)
    err = raw(eth / IP(src="192.0.2.1", dst="203.0.113.7") / ICMP(type=3, code=3) /
              IP(src="203.0.113.7", dst="192.0.2.1") / UDP(sport=40000, dport=53) / b"query")
    vx = raw(eth / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=42) /
             Ether(dst="02:00:00:00:00:03", src="02:00:00:00:00:04") / IP(src="10.1.0.5", dst="10.2.0.9") /
             TCP(sport=33000, dport=80, flags="S") / payload)
    nat4 = dict(saddr="192.0.2.1", daddr="192.0.2.2", sport=4321, dport=8080)
    nat6 = dict(saddr="2001:db8::7", daddr="2001:db8::8", sport=4321, dport=8080)
    return {
        "ipv4-tcp": (v4, nat4, four_tuple(IP, TCP, nat4["saddr"], nat4["daddr"])),
        "ipv6-udp": (v6, nat6, four_tuple(IPv6, UDP, nat6["saddr"], nat6["daddr"])),
        "icmp4-error": (err, dict(daddr="10.0.0.7", quoted=dict(saddr="10.0.0.7", sport=1234)), icmp_error),
        "vxlan": (vx, dict(inner=dict(daddr="10.9.9.9", dport=8080)), vxlan),
    }


def _per_call(fn: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def measure(calls: int, repeats: int) -> dict[str, Any]:
    """Per workload: median CPU µs per call of csum and scapy (interleaved repeats) and their ratio."""
    out: dict[str, Any] = {}
    for name, (frame, keywords, scapy) in workloads().items():
        expected = scapy(frame)
        if rewrite(frame, **keywords).packet != expected:
            raise AssertionError(f"{name}: csum.rewrite and scapy disagree; nothing to compare")
        times: dict[str, list[float]] = {"csum": [], "scapy": []}
        for _ in range(repeats):
            times["csum"].append(_per_call(lambda: rewrite(frame, **keywords), calls))
            times["scapy"].append(_per_call(lambda: scapy(frame), max(1, calls // 4)))
        csum_us, scapy_us = (statistics.median(times[k]) * 1e6 for k in ("csum", "scapy"))
        out[name] = {"csum_us": round(csum_us, 1), "scapy_us": round(scapy_us, 1),
                     "scapy_over_csum": round(scapy_us / csum_us, 2)}
    return out


def table(results: dict[str, Any]) -> str:
    rows = ["| workload | csum.rewrite (µs/call) | scapy rebuild (µs/call) | scapy / csum |", "|---|---:|---:|---:|"]
    for name, r in results["workloads"].items():
        rows.append(f"| {name} | {r['csum_us']} | {r['scapy_us']} | {r['scapy_over_csum']} |")
    before, after = (load[0] for load in results["load_average"])
    return "\n".join(rows + [f"\n1-minute load average {before} before, {after} after; CPU time, {results['calls']} "
                             f"calls x {results['repeats']} repeats (median)"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rewrite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per repeat (scapy: a quarter as many)")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved repeats (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="200 calls, 3 repeats")
    parser.add_argument("--out", type=Path, default=RESULTS / "rewrite.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    calls, repeats = (200, 3) if args.quick else (args.calls, args.repeats)
    load = [round(x, 2) for x in os.getloadavg()]
    results = {"machine": machine(), "calls": calls, "repeats": repeats, "workloads": measure(calls, repeats)}
    results["load_average"] = [load, [round(x, 2) for x in os.getloadavg()]]
    return publish(results, args.out, table)


if __name__ == "__main__":
    sys.exit(main())
