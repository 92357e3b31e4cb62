"""``python -m bench.verify_pcap [--packets N] [--quick]``: checking every checksum of a capture, csum vs scapy and tshark.

Four workloads, each a pcap of N Ethernet packets written once to a temporary directory, 1 % of
them with a wrong TCP checksum (so every implementation finds the same bad packets):

* ``plain``: IPv4 and IPv6, TCP and UDP, 0-39 byte payloads (the vectorized path's case);
* ``mixed``: a sixth each of plain IPv4/TCP, IPv4 with options, IPv6 with extension headers,
  VLAN-tagged, VXLAN-encapsulated and IPv4 fragments (the issue's mix);
* ``ipv6ext``: IPv6 with extension headers of every kind (hop-by-hop, destination options with and without a
  Home Address, routing headers of types 0, 2 and 4 with segments left, AH, an atomic fragment), an eighth
  plain IPv4/TCP (issue 21's 2.8x-slower-than-tshark capture was such packets);
* ``tunnels``: GTP-U (with and without a PDU session container), VXLAN and Geneve (their UDP checksum 0, as Linux
  sends them), GRE with a key, GRE-in-UDP, IP-in-IP, 6in4, MPLS, PPPoE, an eighth plain IPv4/TCP.

Timed, each from the file on disk to the counts:

* ``csum verify FILE`` from the shell (a new process: interpreter start-up, import, ``--jobs``
  default; wall time, and the children's CPU time);
* ``csum verify`` in process: what ``csum verify FILE --jobs 1`` runs for the file, csum.scan.scan with the CLI's
  options (a regular file is mapped, not read; C walker + Python walker), the median of ``--repeat`` runs, wall and
  CPU time;
* ``csum.inet.verify`` packet by packet, on a slice, with the C walker and with the pure-Python
  walker alone (the reference, ``CSUM_ENGINE=python``'s path), in the same run;
* scapy: ``rdpcap`` + for each packet, delete the IP/TCP/UDP checksums of a copy and rebuild
  it to recompute them (what a scapy user writes), on a slice;
* tshark (where installed): ``tshark -r`` with IP/TCP/UDP checksum validation on, printing each
  packet's checksum statuses, on the slice (process start-up included);
* the C floor (where a C compiler is): bench/verify_floor.c, a bare loop that mmaps the pcap and checks the outer
  IPv4, TCP and UDP checksums it finds behind Ethernet and VLAN tags, compiled as the extensions are, on the whole
  capture (median of ``--repeat``); the table gives csum in process as a multiple of it, in CPU time.

The slices' rates are per packet, so the ratios compare like with like. Besides the captures,
``csum.inet.verify`` one call at a time on one 154-byte Ether/IPv4/TCP packet (C walker vs the
Python walker). Results go to bench/results/verify_pcap.json with the machine description and
the load average before and after (the machine may be shared: compare the ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from csum import engine, inet, pcap
from csum.capture.scan import ScanOptions, scan

from .diff_loop import compile_c
from .run import compile_csum, machine, publish

RESULTS = Path(__file__).resolve().parent / "results"
WORKLOADS = ("plain", "mixed", "ipv6ext", "tunnels")


def _templates(kind: str) -> list[bytes]:
    """64 scapy-built frames of the workload's kinds, checksums by scapy."""
    if kind in _OTHERS:
        return _OTHERS[kind]()
    from scapy.all import (
        IP,
        TCP,
        UDP,
        Dot1Q,
        Ether,
        IPOption_NOP,
        IPOption_Router_Alert,
        IPv6,
        IPv6ExtHdrDestOpt,
        IPv6ExtHdrHopByHop,
        fragment,
        raw,
    )
    from scapy.layers.vxlan import VXLAN

    rng = random.Random(1)
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    out: list[bytes] = []
    for k in range(64):
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        v4 = IP(src=f"10.0.{k}.1", dst="10.1.0.2")
        v6 = IPv6(src=f"2001:db8::{k + 1:x}", dst="2001:db8::2")
        if kind == "plain":
            l3 = v4 if k % 4 else v6
            out.append(raw(eth / l3 / (TCP(sport=1000 + k, dport=80) if k % 2 else UDP(sport=1000 + k)) / payload))
            continue
        tcp = TCP(sport=1000 + k, dport=80)
        shape = k % 6
        if shape == 0:
            out.append(raw(eth / v4 / tcp / payload))
        elif shape == 1:
            opts = IP(src=v4.src, dst=v4.dst, options=[IPOption_Router_Alert(), IPOption_NOP()] * 2)
            out.append(raw(eth / opts / UDP(sport=1000 + k) / payload))
        elif shape == 2:
            out.append(raw(eth / v6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / tcp / payload))
        elif shape == 3:
            out.append(raw(eth / Dot1Q(vlan=k) / v4 / UDP(sport=1000 + k) / payload))
        elif shape == 4:
            inner = eth / IP(src="172.16.0.1", dst="172.16.0.2") / tcp / payload
            out.append(raw(eth / v4 / UDP(sport=40000 + k, dport=4789) / VXLAN(vni=k) / inner))
        elif k % 12 == 5:  # a two-fragment datagram every other time: fragments are a sixth of the packets
            datagram = IP(src=v4.src, dst=v4.dst, id=k) / UDP(sport=1000 + k) / (payload * 10 + bytes(500))
            out += [raw(eth / f) for f in fragment(datagram, fragsize=400)]
    return out


def _payloads(seed: int) -> list[bytes]:
    """The 64 templates' payloads: 0-39 random bytes each, the same for the same ``seed``."""
    rng = random.Random(seed)
    return [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))) for _ in range(64)]


def _plain_tcp(k: int, payload: bytes) -> bytes:
    """The eighth of the issue-21 workloads that takes the injected bad checksums: Ether/IPv4/TCP."""
    from scapy.all import IP, TCP, Ether, raw

    return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src=f"10.0.{k}.1", dst="10.1.0.2")
               / TCP(sport=1000 + k, dport=80) / payload)


def _ipv6ext() -> list[bytes]:
    """IPv6 with every kind of extension header the walkers walk (scapy computes the checksums over the final
    destination and the Home Address), an eighth plain IPv4/TCP."""
    from scapy.all import AH, HAO, TCP, UDP, Ether, IPv6, raw
    from scapy.layers.inet6 import (
        IPv6ExtHdrDestOpt,
        IPv6ExtHdrFragment,
        IPv6ExtHdrHopByHop,
        IPv6ExtHdrRouting,
        IPv6ExtHdrSegmentRouting,
    )

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    out: list[bytes] = []
    for k, payload in enumerate(_payloads(2)):
        v6 = IPv6(src=f"2001:db8::{k + 1:x}", dst="2001:db8::2")
        l4 = TCP(sport=1000 + k, dport=80) if k % 2 else UDP(sport=1000 + k, dport=53)
        shape = (k + 1) % 8  # the plain ones at k % 8 == 7: where write_workload puts its bad checksums
        if shape == 0:
            out.append(_plain_tcp(k, payload))
        elif shape == 1:
            out.append(raw(eth / v6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / l4 / payload))
        elif shape == 2:
            out.append(raw(eth / v6 / IPv6ExtHdrRouting(addresses=["2001:db8::9"], segleft=1) / l4 / payload))
        elif shape == 3:
            out.append(raw(eth / v6 / IPv6ExtHdrRouting(type=2, addresses=["2001:db8::9"], segleft=1) / l4 / payload))
        elif shape == 4:
            srh = IPv6ExtHdrSegmentRouting(addresses=["2001:db8::9", "2001:db8::8"], segleft=1)
            out.append(raw(eth / v6 / srh / l4 / payload))
        elif shape == 5:
            out.append(raw(eth / v6 / IPv6ExtHdrDestOpt(options=[HAO(hoa="2001:db8::77")]) / l4 / payload))
        elif shape == 6:  # AH spliced in front of the upper layer, scapy's checksum kept (AH is not in it)
            plain = raw(eth / v6 / l4 / payload)
            ah = raw(AH(nh=plain[20], payloadlen=4, spi=1, seq=k, icv=bytes(12)))
            frame = bytearray(plain[:54] + ah + plain[54:])
            frame[20], frame[18:20] = 51, (len(frame) - 54).to_bytes(2, "big")
            out.append(bytes(frame))
        else:
            out.append(raw(eth / v6 / IPv6ExtHdrFragment(id=k) / l4 / payload))
    return out


def _icmp_errors() -> list[bytes]:
    """A fifth ICMP and ICMPv6 errors (time exceeded, unreachable, packet too big) quoting the IPv4/IPv6 TCP/UDP
    datagram they answer, whole or its first 8 bytes (RFC 792's minimum: a TCP quote without its checksum), the rest
    IPv4 and IPv6 TCP/UDP; the plain IPv4/TCP packets take write_workload's bad checksums."""
    from scapy.all import ICMP, IP, TCP, UDP, Ether, IPv6, raw
    from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6PacketTooBig, ICMPv6TimeExceeded

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    out: list[bytes] = []
    for k, payload in enumerate(_payloads(4)):
        host4, host6 = f"10.0.{k}.1", f"2001:db8::{k + 1:x}"
        l4 = TCP(sport=1000 + k, dport=80) if k % 2 else UDP(sport=1000 + k, dport=80)
        if k % 5:
            out.append(_plain_tcp(k, payload) if k % 5 == 1 else
                       raw(eth / (IP(src=host4, dst="10.1.0.2") if k % 3 else IPv6(src=host6, dst="2001:db8::2"))
                           / l4 / payload))
        elif k % 4 in (0, 2):  # sent by a router (time exceeded) or by the destination (port unreachable)
            quote = raw(IP(src="10.1.0.2", dst=host4, ttl=1) / l4 / payload)
            error = IP(src="10.9.9.9", dst="10.1.0.2") / ICMP(type=11) if k % 4 == 0 else \
                IP(src=host4, dst="10.1.0.2") / ICMP(type=3, code=3)
            out.append(raw(eth / error / (quote[:28] if k % 8 == 0 else quote)))
        else:
            quote = raw(IPv6(src="2001:db8::2", dst=host6, hlim=1) / l4 / payload)
            error = IPv6(src="2001:db8::99", dst="2001:db8::2") / ICMPv6TimeExceeded() if k % 4 == 1 else \
                IPv6(src=host6, dst="2001:db8::2") / (ICMPv6DestUnreach(code=4) if k % 8 == 3 else
                                                      ICMPv6PacketTooBig(mtu=1280))
            out.append(raw(eth / error / quote))
    return out


def _vxlan() -> list[bytes]:
    """Half VXLAN-encapsulated IPv4 and IPv6 TCP/UDP (the tunnel's UDP checksum set or 0), half plain IPv4/IPv6
    TCP/UDP; the plain IPv4/TCP packets take write_workload's bad checksums."""
    from scapy.all import IP, TCP, UDP, Ether, IPv6, raw
    from scapy.layers.vxlan import VXLAN

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    out: list[bytes] = []
    for k, payload in enumerate(_payloads(5)):
        l4 = TCP(sport=1000 + k, dport=80) if k % 2 else UDP(sport=1000 + k, dport=80)
        l3 = IP(src=f"10.0.{k}.1", dst="10.1.0.2") if k % 3 else IPv6(src=f"2001:db8::{k + 1:x}", dst="2001:db8::2")
        if k % 2:
            out.append(_plain_tcp(k, payload) if k % 4 == 1 else raw(eth / l3 / l4 / payload))
        else:
            outer = IP(src=f"10.2.{k}.1", dst="10.3.0.1") / UDP(sport=40000 + k, dport=4789, chksum=0 if k % 4 else None)
            out.append(raw(eth / outer / VXLAN(vni=k) / eth / l3 / l4 / payload))
    return out


def _tunnels() -> list[bytes]:
    """The tunnels the C walker walks, each around an inner IPv4 or IPv6 TCP/UDP packet, an eighth plain IPv4/TCP."""
    from scapy.all import GRE, IP, PPP, TCP, UDP, Ether, IPv6, PPPoE, Raw, raw
    from scapy.contrib.geneve import GENEVE
    from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
    from scapy.contrib.mpls import MPLS
    from scapy.layers.vxlan import VXLAN

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    out: list[bytes] = []
    for k, payload in enumerate(_payloads(3)):
        inner = (IP(src="172.16.0.1", dst=f"172.16.{k}.2") if k % 3 else IPv6(src="2001:db8:1::1", dst="2001:db8:1::2")) \
            / (TCP(sport=2000 + k, dport=443) if k % 2 else UDP(sport=2000 + k, dport=53)) / payload
        v4 = IP(src=f"10.0.{k}.1", dst="10.1.0.2")
        shape = (k + 1) % 8  # the plain ones at k % 8 == 7: where write_workload puts its bad checksums
        if shape == 0:
            out.append(_plain_tcp(k, payload))
        elif shape == 1:
            gtp = GTP_U_Header(teid=k) if k % 16 == 1 else GTP_U_Header(teid=k, E=1, next_ex=0x85) \
                / GTPPDUSessionContainer(type=1, QFI=9)
            out.append(raw(eth / v4 / UDP(sport=2152, dport=2152) / gtp / inner))
        elif shape == 2:
            out.append(raw(eth / v4 / UDP(sport=40000 + k, dport=4789, chksum=0) / VXLAN(vni=k) / eth / inner))
        elif shape == 3:
            out.append(raw(eth / v4 / UDP(sport=40000 + k, dport=6081, chksum=0) / GENEVE(proto=0x6558) / eth / inner))
        elif shape == 4:
            proto = 0x0800 if k % 3 else 0x86DD
            out.append(raw(eth / v4 / GRE(key_present=1, key=k) / inner) if k % 16 == 4 else
                       raw(eth / v4 / UDP(sport=40000 + k, dport=4754) / GRE(proto=proto) / inner))
        elif shape == 5:
            out.append(raw(eth / v4 / inner))  # IP-in-IP, 6in4
        elif shape == 6:
            out.append(raw(Ether(src=eth.src, dst=eth.dst, type=0x8847) / MPLS(label=16, s=0) / MPLS(label=17, s=1)
                           / inner))
        else:
            out.append(raw(Ether(src=eth.src, dst=eth.dst) / PPPoE(sessionid=k)
                           / PPP(proto=0x21 if k % 3 else 0x57) / Raw(raw(inner))))
    return out


#: The workloads built by a function of their own: verify's (WORKLOADS) and the rewrite benchmark's other mixes.
_OTHERS = {"ipv6ext": _ipv6ext, "tunnels": _tunnels, "icmp-errors": _icmp_errors, "vxlan": _vxlan}


def write_workload(path: Path, n: int, kind: str = "plain") -> None:
    """N packets from the templates, in order; every 100th plain TCP packet gets a wrong checksum (last byte)."""
    templates = _templates(kind)
    parts = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i in range(n):
        p = templates[i % len(templates)]
        if i % 100 == 7 and p[12:14] == b"\x08\x00" and p[14] == 0x45 and p[23] == 6 and len(p) > 60 and \
                p[20:22] == b"\0\0":
            p = p[:-1] + bytes([p[-1] ^ 1])
        parts.append(struct.pack("<IIII", i // 1000, i % 1000, len(p), len(p)) + p)
    path.write_bytes(b"".join(parts))


#: ``csum verify``'s ``--show`` default: the bad fields its report keeps (csum/cli/scans.py).
SHOW = 10


def time_csum(path: Path, repeat: int = 1) -> tuple[float, int, int, float]:
    """The median of ``repeat`` runs of what ``csum verify FILE --jobs 1`` runs for the file (csum.scan.scan with the
    CLI's options: one process, keeping the first SHOW bad fields): (wall seconds, packets, bad fields (one per bad
    packet in these captures: write_workload breaks one TCP checksum), CPU seconds)."""
    runs, cpu = [], []
    options = ScanOptions(jobs=1, keep=SHOW)
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        report = scan(str(path), options).report
        cpu.append(time.process_time() - start_cpu)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), report.packets, report.total("bad"), statistics.median(cpu)


def time_shell(path: Path, repeat: int = 1) -> tuple[float, int, int, float]:
    """``csum verify FILE --format json`` in a new process (median wall time of ``repeat``; children's CPU)."""
    cmd = [sys.executable, "-m", "csum"]  # the csum on sys.path (the console script is the same code)
    runs, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run(cmd + ["verify", str(path), "--format", "json"], capture_output=True, text=True).stdout
        runs.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    summary = json.loads(out)
    return statistics.median(runs), summary["packets"], summary["bad_count"], statistics.median(cpu)


def time_floor(exe: Path | None, path: Path, repeat: int = 1) -> tuple[float, int, int, float] | None:
    """bench/verify_floor.c's loop on ``path`` (median of ``repeat`` runs of its own clocks, wall and CPU: no process
    start-up), the packets and the bad ones it found; None without the compiled ``exe``."""
    if exe is None:
        return None
    runs, cpu = [], []
    for _ in range(repeat):
        out = subprocess.run([str(exe), str(path)], check=True, capture_output=True, text=True).stdout.split()
        got = dict(zip(out[::2], map(int, out[1::2])))
        runs.append(got["ns"] / 1e9)
        cpu.append(got["cpu_ns"] / 1e9)
    return statistics.median(runs), got["packets"], got["bad"], statistics.median(cpu)


def _inet_verify(c_walker: bool):
    """csum.inet.verify with or without the C walker (without: the Python walker, the reference)."""
    if c_walker or engine.cwalk is None:
        return inet.verify

    def python_only(packet: object, **kw: Any) -> list[inet.Result]:
        saved, engine.cwalk = engine.cwalk, None
        try:
            return inet.verify(packet, **kw)
        finally:
            engine.cwalk = saved
    return python_only


def time_inet(path: Path, limit: int, c_walker: bool = True) -> tuple[float, int, int]:
    verify = _inet_verify(c_walker)
    start = time.perf_counter()
    cap = pcap.read(path)
    count = min(limit, len(cap))
    bad = sum(1 for i in range(count) if any(r.ok is False for r in verify(cap.packet(i), link=1)))
    return time.perf_counter() - start, count, bad


def one_packet() -> bytes:
    """The 154-byte Ether/IPv4/TCP packet of issue 15 item 4 (100 bytes of payload), checksums by scapy."""
    from scapy.all import IP, TCP, Ether, raw

    return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2")
               / TCP(sport=1000, dport=80) / bytes(range(100)))


def time_one_packet(calls: int, repeat: int) -> list[dict[str, Any]]:
    """``csum.inet.verify(pkt)`` in a loop, C walker and Python walker; median of ``repeat``, CPU time."""
    packet, rows = one_packet(), []
    for name, c_walker in (("C walker", True), ("Python walker", False)):
        verify, runs = _inet_verify(c_walker), []
        assert all(r.ok for r in verify(packet))
        for _ in range(repeat):
            start = time.process_time()
            for _ in range(calls):
                verify(packet)
            runs.append(time.process_time() - start)
        seconds = statistics.median(runs)
        rows.append({"impl": f"csum.inet.verify(pkt), 154-byte Ether/IPv4/TCP, {name}", "calls": calls,
                     "cpu_seconds": round(seconds, 4), "calls_per_s": round(calls / seconds)})
    return rows


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
        bad += any(pkt[layer].chksum != rebuilt[layer].chksum for layer in (IP, TCP)
                   if layer in pkt and (layer is not IP or IPv6 not in pkt) and IP in pkt and pkt[IP].frag == 0
                   and not pkt[IP].flags.MF)
    return time.perf_counter() - start, len(packets), bad


def time_tshark(path: Path, limit: int) -> tuple[float, int, int] | None:
    tshark = shutil.which("tshark")
    if tshark is None:
        return None
    cmd = [tshark, "-r", str(path), "-c", str(limit), "-T", "fields", "-e", "ip.checksum.status", "-e",
           "tcp.checksum.status", "-e", "udp.checksum.status", "-o", "ip.check_checksum:TRUE", "-o",
           "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    seconds = time.perf_counter() - start
    return seconds, len(out), sum(1 for line in out if "0" in line.replace("\t", ",").split(","))


def run(n: int, slice_n: int, repeat: int = 3, calls: int = 200_000) -> dict[str, Any]:
    rows = []
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        floor: Path | None = Path(tmp) / "verify_floor"
        if not compile_c(floor, (Path(__file__).resolve().parent / "verify_floor.c",)):
            floor = None
        for kind in WORKLOADS:
            full, part = Path(tmp) / f"{kind}.pcap", Path(tmp) / f"{kind}-slice.pcap"
            write_workload(full, n, kind)
            write_workload(part, slice_n, kind)
            shell = time_shell(full, repeat)
            rows.append({"impl": f"csum verify FILE (shell), {kind}", "workload": kind, "packets": shell[1],
                         "seconds": round(shell[0], 3), "packets_per_s": round(shell[1] / shell[0]),
                         "bad_found": shell[2], "cpu_seconds": round(shell[3], 3)})
            timed = [(f"csum verify, {kind}", time_csum(full, repeat)),
                     (f"C floor (bare loop, mmap), {kind}", time_floor(floor, full, repeat)),
                     (f"csum verify, {kind} slice", time_csum(part, repeat)),
                     (f"csum.inet.verify per packet, {kind} slice", time_inet(part, slice_n)),
                     (f"csum.inet.verify per packet (Python walker), {kind} slice",
                      time_inet(part, slice_n, c_walker=False)),
                     (f"scapy rdpcap + recompute, {kind} slice", time_scapy(part, slice_n)),
                     (f"tshark -r (checksums on), {kind} slice", time_tshark(part, slice_n))]
            for name, measured in timed:
                if measured is None:
                    continue
                seconds, packets, bad = measured[:3]
                rows.append({"impl": name, "workload": kind, "packets": packets, "seconds": float(f"{seconds:.4g}"),
                             "packets_per_s": round(packets / seconds), "bad_found": bad})
                if len(measured) > 3:  # csum in process and the floor: CPU time too, what the ratio compares
                    rows[-1]["cpu_seconds"] = float(f"{measured[3]:.4g}")
    for kind in WORKLOADS:
        found = {r["bad_found"] for r in rows if r["workload"] == kind and "slice" in r["impl"]}
        floor_found = {r["bad_found"] for r in rows if r["workload"] == kind and r["impl"].startswith("C floor")}
        whole = {r["bad_found"] for r in rows if r["impl"] == f"csum verify, {kind}"}
        if kind == "plain" and floor_found and floor_found != whole:
            raise SystemExit(f"bench.verify_pcap: the C floor and csum disagree on the plain capture's bad packets: "
                             f"{floor_found} against {whole}")
        if len(found) != 1:
            raise SystemExit(f"bench.verify_pcap: implementations disagree on the {kind} slice's bad packets: {rows}")
    one = time_one_packet(calls, repeat)
    load.append(os.getloadavg()[0])
    return {"machine": machine(), "load_average": load, "packets": n, "slice": slice_n, "repeat": repeat,
            "tshark": _tshark_version(), "rows": rows, "one_packet": one}


def _tshark_version() -> str | None:
    tshark = shutil.which("tshark")
    if tshark is None:
        return None
    return subprocess.run([tshark, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def table(results: dict[str, Any]) -> str:
    scapy = {r["workload"]: r["packets_per_s"] for r in results["rows"] if r["impl"].startswith("scapy")}
    lines = ["| implementation | packets | seconds | packets/s | × scapy | bad found | CPU seconds |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        lines.append(f"| {r['impl']} | {r['packets']:,} | {r['seconds']} | {r['packets_per_s']:,} | "
                     f"{r['packets_per_s'] / scapy[r['workload']]:.1f} | {r['bad_found']} | {r.get('cpu_seconds', '')} |")
    lines += ["", "| one packet | calls | CPU seconds | calls/s |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {r['impl']} | {r['calls']:,} | {r['cpu_seconds']} | {r['calls_per_s']:,} |"
              for r in results["one_packet"]]
    floor = {r["workload"]: r["cpu_seconds"] for r in results["rows"] if r["impl"].startswith("C floor")}
    inproc = {r["workload"]: r["cpu_seconds"] for r in results["rows"] if r["impl"].startswith("csum verify, ")
              and "slice" not in r["impl"]}
    if floor:
        lines += ["", "| workload | csum verify --jobs 1 in process (CPU s) | C floor (CPU s) | × the floor |",
                  "| --- | ---: | ---: | ---: |"]
        lines += [f"| {kind} | {inproc[kind]} | {floor[kind]} | {inproc[kind] / floor[kind]:.1f} |" for kind in floor]
    lines.append(f"\nload average (1 min) before / after: {' / '.join(f'{x:.2f}' for x in results['load_average'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verify_pcap", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=1_000_000, help="packets in the full capture (default 1e6)")
    parser.add_argument("--slice", type=int, default=20_000, help="packets for the slow implementations")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each csum timing (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="20,000 packets, a 2,000-packet slice, 20,000 calls")
    parser.add_argument("--out", type=Path, default=RESULTS / "verify_pcap.json", help="where to write the JSON")
    args = parser.parse_args(argv)
    n, slice_n, calls = (20_000, 2_000, 20_000) if args.quick else (args.packets, args.slice, 200_000)
    compile_csum()
    results = run(n, slice_n, args.repeat, calls)
    return publish(results, args.out, table)


if __name__ == "__main__":
    sys.exit(main())
