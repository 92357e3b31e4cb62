"""bench/: the quick benchmark runs end to end (CI runs it here) and writes its JSON, tables (tables.md, the form of
docs/benchmarks.md's) and plot.

No timing is asserted: performance claims live in bench/results/, measured side by side.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import csum
from csum import engine

REPO = Path(__file__).resolve().parent.parent


def test_bench_quick_writes_results(tmp_path):
    """`python -m bench --quick --out DIR` exits 0 and writes results with peers measured in the same run."""
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(next(tmp_path.glob("*.json")).read_text())
    text = json.dumps(results)
    assert "scapy" in text and "dpkt" in text and "engine" in text
    assert (tmp_path / "tables.md").read_text().count("|") > 20


def _xorshift_bytes(n: int) -> bytes:
    """bench/diff_loop.c's buffer: the low byte of each xorshift32 step from 0x12345678."""
    x, out = 0x12345678, bytearray()
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out.append(x & 0xFF)
    return bytes(out)


def test_diff_loop_harness_chains_the_two_emulations(tmp_path):
    """bench/diff_loop.c times what it says: its sink (each call's seed the previous call's result) equals the same
    chain of calls made with csum's pure-Python bpf_csum_diff and bpf_csum_diff_legacy (generic), a separate
    implementation from the C it times."""
    sys.path.insert(0, str(REPO))
    from bench import diff_loop

    exe = tmp_path / "diff_loop"
    if "lib/checksum.c-le" not in engine.SHAPES or not diff_loop.build(exe):
        pytest.skip("no C compiler or csum's C is not built")
    rounds, calls, sizes = 3, 2, [4, 20, 512]
    run = subprocess.run([str(exe), str(engine.SHAPES["lib/checksum.c-le"]), str(rounds), str(calls),
                          *map(str, sizes)], capture_output=True, text=True, check=True)
    data, seed = _xorshift_bytes(512), 0
    with engine.use("python"):
        for r in range(rounds):
            for size in sizes:
                forms = [csum.bpf_csum_diff_legacy, csum.bpf_csum_diff]
                for form in (forms[::-1] if r & 1 else forms):
                    for _ in range(calls):
                        seed = form(b"", data[:size], seed)
    lines = run.stdout.splitlines()
    assert len(lines) == rounds * len(sizes) + 1 and lines[-1] == f"sink {seed}"


def test_verify_floor_finds_the_bad_packets_scapy_finds(tmp_path):
    """bench/verify_floor.c (the floor under csum verify in bench.verify_pcap) checks what it says: on a pcap of
    scapy-built Ethernet frames (IPv4 and IPv6, TCP and UDP, a VLAN tag, IPv4 options, a fragment it passes over),
    some with a checksum scapy computed and then changed, it counts the packets and finds exactly the bad packets
    scapy's own recomputation finds."""
    from scapy.all import IP, TCP, UDP, Dot1Q, Ether, IPOption_Router_Alert, IPv6, Raw, raw, wrpcap

    sys.path.insert(0, str(REPO))
    from bench.diff_loop import compile_c

    exe = tmp_path / "verify_floor"
    if not compile_c(exe, (REPO / "bench" / "verify_floor.c",)):
        pytest.skip("no C compiler")
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [eth / IP(src="192.0.2.1", dst="192.0.2.2") / TCP(sport=1, dport=2) / Raw(b"abc"),
              eth / Dot1Q(vlan=5) / IP(src="192.0.2.1", dst="192.0.2.2", options=[IPOption_Router_Alert()])
              / UDP(sport=3, dport=4) / Raw(b"hello"),
              eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=5, dport=6) / Raw(b"x" * 7),
              eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=7, dport=8) / Raw(b"y"),
              eth / IP(src="192.0.2.1", dst="192.0.2.2", flags="MF", id=9) / UDP(sport=1, dport=2) / Raw(b"z" * 40)]
    built = [Ether(raw(f)) for f in frames]
    bad = {1: ("UDP", 0x1234), 2: ("TCP", 0x4321)}
    for i, (layer, value) in bad.items():
        built[i][layer].chksum = value
    built.append(Ether(raw(frames[0])))
    built[-1][IP].chksum = 0x0101  # the IPv4 header's checksum wrong
    wrpcap(str(tmp_path / "floor.pcap"), built)
    out = subprocess.run([str(exe), str(tmp_path / "floor.pcap")], capture_output=True, text=True, check=True)
    got = dict(zip(out.stdout.split()[::2], map(int, out.stdout.split()[1::2])))
    scapy_bad = 0
    for frame in built:
        again = Ether(raw(frame))
        for layer in ("IP", "TCP", "UDP"):
            if again.haslayer(layer) and not (layer != "IP" and again.haslayer("IP") and again["IP"].flags.MF):
                del again[layer].chksum
        scapy_bad += raw(Ether(raw(again))) != raw(frame)
    assert (got["packets"], got["bad"]) == (len(built), scapy_bad) == (6, 3)
