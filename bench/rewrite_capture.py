"""``python -m bench.rewrite_capture [--mix MIX] [--packets N] [--scapy-packets M] [--repeats R] [--quick] [--out JSON]``:
rewriting a whole capture from the shell, ``csum rewrite`` against ``tcprewrite`` and a scapy script.

The capture (N packets, default 1,000,000, written once to a temporary directory) is one of bench.verify_pcap's
workloads, ``--mix``:

* ``mixed`` (the default; 149 bytes on average): a sixth each of plain IPv4/TCP, IPv4 with options, IPv6 with
  hop-by-hop and destination options, VLAN-tagged IPv4/UDP, VXLAN-encapsulated IPv4/TCP and IPv4 fragments;
* ``icmp-errors``: a fifth ICMP and ICMPv6 errors quoting the datagram they answer (whole, or RFC 792's first 8
  bytes), the rest IPv4/IPv6 TCP/UDP;
* ``ipv6ext``: IPv6 behind every extension header the walkers walk (hop-by-hop, destination options with a Home
  Address, routing types 0 and 2, segment routing, AH, fragment), an eighth plain IPv4/TCP;
* ``vxlan``: half VXLAN-encapsulated IPv4/IPv6 TCP/UDP, half plain;
* ``tunnels``: GTP-U (with and without a PDU session container), VXLAN and Geneve (their UDP checksum 0), GRE with a
  key, GRE-in-UDP, IP-in-IP, 6in4, MPLS and PPPoE, each around an IPv4 or IPv6 TCP/UDP packet, an eighth plain;

with 1 % of the plain IPv4/TCP packets given a wrong checksum. The same rules for all: the prefix maps 10.0.0.0/8 -> 192.168.0.0/16 and 2001:db8::/32 ->
2001:db9::/48 on sources and destinations, port 80 -> 8080, TTL / hop limit - 1. Each is a new process, as a user
types it, timed from start to exit (wall time, and its CPU time from the kernel's rusage), interleaved, R repeats
(default 5): the median, the min-max spread, and each one's ratio to tcprewrite in the same repeat (the median of
those ratios):

* ``csum rewrite IN OUT --map-ip ... --map-port 80=8080 --ttl -1`` (every checksum updated incrementally, a wrong
  one kept wrong), and the same with ``--fix`` (then corrected: the checker of ``csum fix`` runs too), csum's
  bytecode written first as an installed package has it (bench.run.compile_csum);
* ``tcprewrite --srcipmap/--dstipmap ... --portmap=80:8080 --ttl=-1 --fixcsum`` (Debian's tcpreplay; skipped,
  with the reason, where it is missing);
* a scapy script (what a scapy user writes: read each packet, set the fields of every IP layer and port, delete the
  checksums, write it) on the first M packets (default 5,000) of the same capture: its rate is per packet;
* ``dd`` copying the capture (4 MiB blocks): the reading and writing every one of them pays, on this machine's
  disk and load.

Results go to bench/results/rewrite_capture.json (``mixed``) or rewrite_capture_MIX.json. Each output is then checked by ``csum verify`` (how many checksums are wrong after), and csum's output is compared
with tcprewrite's packet by packet from the EtherType on (tcprewrite writes multicast MACs into IPv6 frames; the
packets that differ are those tcprewrite does not rewrite in full: VXLAN's inner packets, ports behind IPv6
extension headers). The results hold the machine and the 1-minute load average before and after (a shared machine:
read the ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .run import compile_csum, machine, publish, timed
from .verify_pcap import write_workload

RESULTS = Path(__file__).resolve().parent / "results"
MAPS = (("10.0.0.0/8", "192.168.0.0/16"), ("2001:db8::/32", "2001:db9::/48"))
CSUM_RULES = ["--map-ip", "=".join(MAPS[0]), "--map-ip", "=".join(MAPS[1]), "--map-port", "80=8080", "--ttl", "-1"]
_IPMAP = f"{MAPS[0][0]}:{MAPS[0][1]},[{MAPS[1][0]}]:[{MAPS[1][1]}]"
TCPREWRITE_RULES = [f"--srcipmap={_IPMAP}", f"--dstipmap={_IPMAP}", "--portmap=80:8080", "--ttl=-1", "--fixcsum"]

#: The scapy way to the same change: every IP / IPv6 layer's addresses and TTL, every TCP / UDP port 80, every
#: checksum deleted so that scapy computes it again.
SCAPY_SCRIPT = '''
import ipaddress, sys
from scapy.all import ICMP, IP, TCP, UDP, IPv6, PcapReader, PcapWriter
MAPS = [(ipaddress.ip_network(a), ipaddress.ip_network(b)) for a, b in %r]

def mapped(text):
    addr = ipaddress.ip_address(text)
    for old, new in MAPS:
        if addr.version == old.version and addr in old:
            return str(ipaddress.ip_address(int(new.network_address) | (int(addr) & int(new.hostmask))))
    return text

with PcapReader(sys.argv[1]) as packets, PcapWriter(sys.argv[2], linktype=1) as out:
    for p in packets:
        for cls in (IP, IPv6):
            i = 1
            while p.getlayer(cls, i) is not None:
                ip = p.getlayer(cls, i)
                ip.src, ip.dst = mapped(ip.src), mapped(ip.dst)
                if cls is IP:
                    ip.ttl = max(ip.ttl - 1, 0)
                    del ip.chksum
                else:
                    ip.hlim = max(ip.hlim - 1, 0)
                i += 1
        for cls in (TCP, UDP, ICMP):
            i = 1
            while p.getlayer(cls, i) is not None:
                layer = p.getlayer(cls, i)
                if cls is not ICMP:
                    layer.sport, layer.dport = [8080 if x == 80 else x for x in (layer.sport, layer.dport)]
                del layer.chksum
                i += 1
        out.write(p)
''' % (MAPS,)


def _wrong_after(path: Path, env: dict[str, str]) -> int:
    """How many checksums ``csum verify`` finds wrong in ``path``."""
    done = subprocess.run([sys.executable, "-m", "csum", "verify", str(path), "--format", "json"], env=env,
                          capture_output=True, text=True)
    return int(json.loads(done.stdout)["bad_count"])


def _same_from_ethertype(a: Path, b: Path) -> tuple[int, int]:
    """(packets equal from the EtherType on, packets) of two captures of the same packets."""
    from csum.capture import pcap

    x, y = pcap.read(a), pcap.read(b)
    same = sum(bytes(x.packet(i))[12:] == bytes(y.packet(i))[12:] for i in range(min(len(x), len(y))))
    return same, len(x)


MIXES = ("mixed", "icmp-errors", "ipv6ext", "vxlan", "tunnels")


def run(n: int, scapy_n: int, repeats: int, mix: str = "mixed") -> dict[str, Any]:
    env = dict(os.environ)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        full, part = Path(tmp) / f"{mix}.pcap", Path(tmp) / "slice.pcap"
        write_workload(full, n, mix)
        write_workload(part, scapy_n, mix)  # the same generator: the first scapy_n packets of the capture
        script = Path(tmp) / "scapy_rewrite.py"
        script.write_text(SCAPY_SCRIPT)
        csum_cmd = [sys.executable, "-m", "csum", "rewrite", str(full), str(Path(tmp) / "csum.pcap"), *CSUM_RULES]
        impls: dict[str, tuple[list[str], int, Path]] = {
            "csum rewrite": (csum_cmd, n, Path(tmp) / "csum.pcap"),
            "csum rewrite --fix": (csum_cmd[:5] + [str(Path(tmp) / "fix.pcap")] + csum_cmd[6:] + ["--fix"], n,
                                   Path(tmp) / "fix.pcap"),
        }
        tcprewrite = shutil.which("tcprewrite")
        if tcprewrite is not None:
            impls["tcprewrite --fixcsum"] = ([tcprewrite, f"--infile={full}", f"--outfile={Path(tmp) / 't.pcap'}",
                                              *TCPREWRITE_RULES], n, Path(tmp) / "t.pcap")
        impls["scapy script"] = ([sys.executable, str(script), str(part), str(Path(tmp) / "scapy.pcap")], scapy_n,
                                 Path(tmp) / "scapy.pcap")
        impls["dd (a copy: the I/O floor)"] = (["dd", f"if={full}", f"of={Path(tmp) / 'dd.pcap'}", "bs=4M",
                                                "status=none"], n, Path(tmp) / "dd.pcap")
        timed(csum_cmd, env)  # warm: the page cache holds the capture, csum's bytecode is read once
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in impls}
        for _ in range(repeats):
            for name, (cmd, _, _) in impls.items():
                times[name].append(timed(cmd, env))
        rows = []
        for name, (_, packets, out) in impls.items():
            walls, cpus = [w for w, _ in times[name]], [c for _, c in times[name]]
            row: dict[str, Any] = {
                "impl": name, "packets": packets, "wall_s": round(statistics.median(walls), 3),
                "wall_min_s": round(min(walls), 3), "wall_max_s": round(max(walls), 3),
                "cpu_s": round(statistics.median(cpus), 3), "packets_per_s": round(packets / statistics.median(walls)),
                "packets_per_cpu_s": round(packets / statistics.median(cpus)), "wrong_after": _wrong_after(out, env)}
            if "tcprewrite --fixcsum" in times:  # its time per packet over this one's, repeat by repeat
                pairs = [(peer / n) / (own / packets) for (own, _), (peer, _) in zip(times[name],
                                                                                     times["tcprewrite --fixcsum"])]
                row["speed_vs_tcprewrite"] = round(statistics.median(pairs), 2)  # > 1: faster per packet
                row["speed_vs_tcprewrite_min_max"] = [round(min(pairs), 2), round(max(pairs), 2)]
            rows.append(row)
        agree = _same_from_ethertype(impls["csum rewrite --fix"][2], impls["tcprewrite --fixcsum"][2]) \
            if tcprewrite is not None else None
        wrong_before = _wrong_after(full, env)
    load.append(os.getloadavg()[0])
    tcprewrite_version = None if tcprewrite is None else subprocess.run(  # it prints its version on stderr
        [tcprewrite, "-V"], capture_output=True, text=True).stderr.splitlines()[0]
    return {"machine": machine(), "load_average": load, "mix": mix, "packets": n, "scapy_packets": scapy_n, "repeats": repeats,
            "rules": " ".join(CSUM_RULES), "tcprewrite": tcprewrite_version or "not installed",
            "wrong_before": wrong_before, "rows": rows,
            "same_as_tcprewrite_from_ethertype": None if agree is None else {"packets": agree[0], "of": agree[1]}}


def table(results: dict[str, Any]) -> str:
    lines = ["| command (from the shell) | packets | wall s, median (min-max) | packets/s | CPU s | packets per CPU s "
             "| × tcprewrite (per packet, wall) | checksums wrong after |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results["rows"]:
        ratio = f"{r['speed_vs_tcprewrite']:.2f} ({r['speed_vs_tcprewrite_min_max'][0]:.2f}-" \
                f"{r['speed_vs_tcprewrite_min_max'][1]:.2f})" if "speed_vs_tcprewrite" in r else "-"
        lines.append(f"| {r['impl']} | {r['packets']:,} | {r['wall_s']} ({r['wall_min_s']}-{r['wall_max_s']}) | "
                     f"{r['packets_per_s']:,} | {r['cpu_s']} | {r['packets_per_cpu_s']:,} | {ratio} | "
                     f"{r['wrong_after']:,} |")
    same = results["same_as_tcprewrite_from_ethertype"]
    lines.append(f"\n{results['packets']:,} packets of the {results.get('mix', 'mixed')} mix, "
                 f"{results['wrong_before']:,} checksums wrong before; "
                 f"rules `{results['rules']}`; {results['tcprewrite']}; median of {results['repeats']} repeats; "
                 f"1-minute load average {' / '.join(f'{x:.2f}' for x in results['load_average'])} before / after"
                 + ("" if same is None else f"; `csum rewrite --fix` and tcprewrite wrote the same bytes from the "
                    f"EtherType on for {same['packets']:,} of {same['of']:,} packets"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rewrite_capture", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mix", choices=MIXES, default="mixed", help="the capture's packets (default mixed)")
    parser.add_argument("--packets", type=int, default=1_000_000, help="packets in the capture (default 1e6)")
    parser.add_argument("--scapy-packets", type=int, default=5_000, help="packets the scapy script rewrites")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="2,000 packets, 200 for scapy, 1 repeat")
    parser.add_argument("--out", type=Path, help="where to write the JSON (default bench/results/"
                        "rewrite_capture.json, rewrite_capture_MIX.json for another mix)")
    args = parser.parse_args(argv)
    n, scapy_n, repeats = (2_000, 200, 1) if args.quick else (args.packets, args.scapy_packets, args.repeats)
    out = args.out or RESULTS / ("rewrite_capture.json" if args.mix == "mixed" else f"rewrite_capture_{args.mix}.json")
    compile_csum()
    return publish(run(n, scapy_n, repeats, args.mix), out, table)


if __name__ == "__main__":
    sys.exit(main())
