"""tools/tshark_agree.py: csum verify against tshark's own verdicts, end to end on captures built here.

Expected values: the verdicts are tshark 4's (the tool's whole point); the packets are scapy's (the PIM
Register's checksum from tests/oracle.py), with checksums broken by the test where it says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from captures import pcap_bytes
from oracle import rfc1071_checksum
from scapy.all import ICMP, IP, TCP, UDP, Ether, fragment, raw

TOOL = Path(__file__).resolve().parent.parent / "tools" / "tshark_agree.py"
pytestmark = pytest.mark.skipif(shutil.which("tshark") is None,
                                reason="tshark is not installed (apt-get install tshark)")


def run(tmp_path: Path, frames: list[bytes]) -> tuple[int, dict, list[dict]]:
    cap, details = tmp_path / "c.pcap", tmp_path / "details.jsonl"
    cap.write_bytes(pcap_bytes(frames))
    proc = subprocess.run([sys.executable, str(TOOL), "--details", str(details), str(cap)],
                          capture_output=True, text=True, timeout=300)
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    return proc.returncode, json.loads(proc.stdout), rows


def test_agreement_on_good_bad_and_fragmented_packets(tmp_path):
    """Good and broken IPv4/TCP/UDP/ICMP plus a UDP datagram in three fragments (tshark reports its verdict on
    the last fragment, csum on the first: the tool pairs them): every verdict compared, none disagree, exit 0."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [raw(eth / IP(src="192.0.2.1", dst="192.0.2.2") / TCP() / b"t"),
              raw(eth / IP(src="192.0.2.1", dst="192.0.2.2") / UDP() / b"u"),
              raw(eth / IP(src="192.0.2.1", dst="192.0.2.2") / ICMP() / b"i")]
    bad = bytearray(frames[0])
    bad[-2] ^= 0xFF  # inside the TCP checksum field
    frames.append(bytes(bad))
    frames += [raw(eth / f) for f in fragment(IP(src="192.0.2.1", dst="192.0.2.2", id=7) / UDP() / (b"f" * 300),
                                                fragsize=128)]
    code, summary, rows = run(tmp_path, frames)
    assert code == 0 and summary.get("disagree", 0) == 0 and rows == []
    # 7 IPv4 headers, TCP x2, UDP x2 (one reassembled), ICMP x1
    assert summary["compared"] == 7 + 2 + 2 + 1


def test_disagreements_and_missing_verdicts_are_listed(tmp_path):
    """A PIMv2 Register whose checksum covers the whole message (RFC 7761 4.9 asks receivers to accept it; csum
    says ok, reason whole-register) is bad to tshark, which sums the 8-byte header only: one disagreement, exit 1.
    A TCP segment cut short by a total length larger than the frame is judged by tshark and not by csum (the
    packet is malformed): listed as missing."""
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    inner = raw(IP(src="198.51.100.1", dst="203.0.113.9") / UDP(sport=1, dport=2) / b"mc")
    msg = bytearray(b"\x21\x00\x00\x00\x00\x00\x00\x00" + inner)
    msg[2:4] = rfc1071_checksum(bytes(msg)).to_bytes(2, "big")
    register = raw(eth / IP(src="192.0.2.1", dst="192.0.2.2", proto=103) / bytes(msg))
    cut = raw(eth / IP(src="192.0.2.1", dst="192.0.2.2", len=400) / TCP() / b"x")
    code, summary, rows = run(tmp_path, [register, cut])
    assert code == 1 and summary["disagree"] == 1 and summary["missing tcp.checksum.status"] == 1
    assert [(r["kind"], r["frame"], r["field"]) for r in rows] == [
        ("disagree", 1, "pim.cksum.status"), ("missing", 2, "tcp.checksum.status")]


def test_a_csum_crash_is_reported_not_missing(tmp_path, monkeypatch):
    """When csum itself fails with a traceback, the file is counted as ``csum crashed`` with the error in the
    details and the tool exits 1, instead of its verdicts silently counting as missing."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tshark_agree", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    monkeypatch.setattr(tool, "CSUM", [sys.executable, "-c", "1 / 0"])
    cap = tmp_path / "c.pcap"
    cap.write_bytes(pcap_bytes([raw(Ether() / IP(src="192.0.2.1", dst="192.0.2.2") / TCP())]))
    details = tmp_path / "d.jsonl"
    assert tool.main(["--details", str(details), str(cap)]) == 1
    [row] = [json.loads(line) for line in details.read_text().splitlines() if '"crashed"' in line]
    assert row["error"].startswith("ZeroDivisionError")
