"""IP fragments inside tunnels (GTP-U, VXLAN, GRE, IP in IP, 6in4, Geneve) reassembled like outer ones, their inner
TCP/UDP checksums judged on the first fragment.

Expected values: the packets and their checksums are scapy's (each inner datagram built whole by scapy, cut by
scapy's ``fragment`` / ``fragment6``, one TCP checksum broken by the test before cutting); where tshark is installed,
tshark 4's own verdicts on the same capture (tools/tshark_agree.py: reassembly on, its defaults, every checksum
compared, none missing); the fixed datagram's checksum is scapy's, recomputed over the datagram scapy reassembles
from the fixed file.
"""

from __future__ import annotations

import functools
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from captures import pcap_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.all import GRE, IP, TCP, UDP, Ether, IPv6, defragment, raw
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header
from scapy.layers.inet6 import IPv6ExtHdrFragment, fragment6
from scapy.layers.inet import fragment
from scapy.layers.vxlan import VXLAN

from csum import engine
from csum.capture import checker, pcap
from csum.capture.checker import Checker, check, check_part
from csum.capture.report import Report
from csum.capture.stitch import Stitcher
from csum.cli import main
from csum.layers import reassembly
from csum.layers.reasons import Reason

TOOL = Path(__file__).resolve().parent.parent.parent / "tools" / "tshark_agree.py"
needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None,
                                  reason="tshark is not installed (apt-get install tshark)")
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
OUTER = IP(src="192.0.2.1", dst="192.0.2.2")


@functools.lru_cache(maxsize=None)
def _inner(v6: bool, ident: int, tcp_bad: bool = False) -> tuple[bytes, ...]:
    """Two inner datagrams (scapy's checksums) cut in 3 (IPv6: 4) fragments each: a UDP one and a TCP one (its
    checksum broken when ``tcp_bad``)."""
    out = []
    for l4 in (UDP(sport=1000, dport=2000) / (b"u" * 300), TCP(sport=1001, dport=2001) / (b"t" * 300)):
        if v6:
            whole = IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrFragment(id=ident) / l4
        else:
            whole = IP(src="10.0.0.1", dst="10.0.0.2", id=ident) / l4
        data = bytearray(raw(whole))
        if tcp_bad and isinstance(l4, TCP):
            data[(48 if v6 else 20) + 16] ^= 0xFF  # the TCP checksum's first byte
        pkt = (IPv6 if v6 else IP)(bytes(data))
        out += [raw(f) for f in (fragment6(pkt, 150) if v6 else fragment(pkt, fragsize=128))]
        ident += 1
    return tuple(out)


def _wrap(tunnel: str, inner: bytes, outer: IP = OUTER) -> bytes:
    """``inner`` (an IP fragment) in ``tunnel`` from ``outer``, in an Ethernet frame (scapy's headers and
    checksums)."""
    version = inner[0] >> 4
    ip = IP(inner) if version == 4 else IPv6(inner)
    layers = {
        "gtpu": lambda: outer.copy() / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=5) / ip,
        "vxlan": lambda: outer.copy() / UDP(sport=40000, dport=4789) / VXLAN(vni=7) / ETH / ip,
        "geneve": lambda: outer.copy() / UDP(sport=40000, dport=6081) / GENEVE(vni=7, proto=0x6558) / ETH / ip,
        "gre": lambda: outer.copy() / GRE() / ip,
        "ipip": lambda: outer.copy() / ip,
    }
    return raw(ETH / layers[tunnel]())


CASES = [("gtpu", False), ("gtpu", True), ("vxlan", False), ("vxlan", True), ("geneve", False), ("gre", False),
         ("gre", True), ("ipip", False), ("ipip", True)]


def _capture(tunnel: str, v6: bool) -> bytes:
    return pcap_bytes([_wrap(tunnel, f) for f in _inner(v6, 77, tcp_bad=True)])


@pytest.mark.parametrize("tunnel,v6", CASES)
@pytest.mark.parametrize("one_by_one", [False, True])
def test_inner_fragments_are_reassembled_and_judged(tunnel, v6, one_by_one, monkeypatch):
    """The inner UDP datagram's checksum ok and the inner TCP one's bad (scapy's, broken by the test), each reported
    once, on its first fragment, at the inner depth and path; nothing left needing reassembly; checked at once (the
    C walker hands these packets to Python) or a packet at a time."""
    monkeypatch.setattr(checker, "one_by_one", lambda packets: one_by_one)
    rows: dict[int, list] = {}
    report = check(pcap.parse(_capture(tunnel, v6)), sink=lambda i, results: rows.__setitem__(i, results))
    inner = [(i, r) for i, results in rows.items() for r in results if r.depth == 1 and r.layer in ("tcp", "udp")]
    judged = [(i, r.layer, r.status.value) for i, r in inner if r.computed is not None]
    first_tcp = len(_inner(v6, 77)) // 2  # the UDP datagram's fragments come first, as many as the TCP one's
    assert judged == [(0, "udp", "ok"), (first_tcp, "tcp", "bad")]
    assert all(r.path.endswith(f"/ipv{6 if v6 else 4}/{r.layer}") for _i, r in inner)
    assert not any(r.reason == Reason.NEEDS_REASSEMBLY for _i, r in inner)
    plain = check(pcap.parse(_capture(tunnel, v6)))
    assert [(i, r.layer, r.depth) for i, r in plain.bad] == [(first_tcp, "tcp", 1)]


@needs_tshark
@pytest.mark.parametrize("tunnel,v6", CASES)
def test_tshark_agrees_on_inner_fragments(tunnel, v6, tmp_path):
    """tools/tshark_agree.py: tshark's verdicts (its reassembly defaults, the inner transport's on the frame that
    completes the datagram) and csum's agree on every checksum, none missing: the outer headers, the tunnel's UDP,
    each inner IP header and the two reassembled inner datagrams."""
    cap, details = tmp_path / "c.pcap", tmp_path / "d.jsonl"
    cap.write_bytes(_capture(tunnel, v6))
    proc = subprocess.run([sys.executable, str(TOOL), "--details", str(details), str(cap)], capture_output=True,
                          text=True, timeout=300)
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0 and details.read_text() == "", details.read_text()
    assert not any(k.startswith("missing") for k in summary) and summary.get("disagree", 0) == 0
    frames, outer_udp = len(_inner(v6, 77)), tunnel in ("gtpu", "vxlan", "geneve")
    assert summary["compared"] == frames * (1 + outer_udp + (not v6)) + 2


@pytest.mark.parametrize("jobs", [["--jobs", "1"], ["--jobs", "2", "--chunk-bytes", "300"]])
def test_inner_fragments_across_chunks_and_jobs(jobs, tmp_path, capsys):
    """``csum verify --jobs`` with chunks of a few packets (the datagrams straddle chunks and workers, stitched):
    the inner UDP ok and TCP bad, as scapy built them; nothing left unverified."""
    path = tmp_path / "c.pcap"
    path.write_bytes(pcap_bytes([_wrap("gtpu", f) for f in _inner(False, 77, tcp_bad=True)]
                                + [_wrap("vxlan", f) for f in _inner(True, 90)]))
    assert main(["verify", str(path), "--json", *jobs]) == 1
    doc = json.loads(capsys.readouterr().out)
    counts = doc["counts"]
    assert (counts["tcp@1"]["ok"], counts["tcp@1"]["bad"]) == (1, 1)
    assert (counts["udp@1"]["ok"], counts["udp@1"]["bad"]) == (2, 0)


def test_fragments_through_different_tunnel_endpoints_are_not_mixed():
    """Two datagrams with the same inner addresses, protocol and identification (private addresses behind two GTP-U
    endpoints), their fragments interleaved: each reassembled from its own tunnel's fragments (scapy's checksums:
    both good); a third datagram whose fragments come through two endpoints is left needing reassembly, never
    passed (Wireshark, keying by the inner header alone, would mix them)."""
    a = [_wrap("gtpu", f) for f in _inner(False, 500)[:3]]
    other = IP(src="10.0.0.1", dst="10.0.0.2", id=500) / UDP(sport=1000, dport=2000) / (b"v" * 300)
    b = [_wrap("gtpu", raw(f), IP(src="192.0.2.9", dst="192.0.2.2")) for f in fragment(IP(raw(other)), fragsize=128)]
    split = [_wrap("gtpu", f) for f in _inner(False, 600)[:3]]
    split[1] = _wrap("gtpu", _inner(False, 600)[1], IP(src="192.0.2.7", dst="192.0.2.2"))  # via another endpoint
    rows: dict[int, list] = {}
    check(pcap.parse(pcap_bytes([a[0], b[0], a[1], b[1], a[2], b[2], *split])),
          sink=lambda i, results: rows.__setitem__(i, results))
    inner = {i: [(r.status.value, r.reason.value) for r in results if r.depth == 1 and r.layer == "udp"]
             for i, results in rows.items()}
    assert inner[0] == [("ok", "ok")] and inner[1] == [("ok", "ok")]
    assert inner[6] == [("n/a", "needs-reassembly")]


@needs_tshark
def test_fix_corrects_an_inner_fragmented_checksum(tmp_path, capsys):
    """``csum fix`` patches the inner TCP checksum in the first fragment inside GTP-U: the datagram scapy
    reassembles from the fixed file has scapy's checksum, and tshark finds every checksum of the fixed file good."""
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(_capture("gtpu", False))
    assert main(["fix", str(src), str(dst)]) == 1
    frames = [Ether(p) for p, _meta in _raw_records(dst)]
    inner = defragment([f[GTP_U_Header].payload for f in frames])
    tcp = next(p for p in inner if TCP in p and not p.flags.MF and p.frag == 0)
    stored = tcp[TCP].chksum
    del tcp[TCP].chksum
    assert IP(raw(tcp))[TCP].chksum == stored
    proc = subprocess.run([sys.executable, str(TOOL), str(dst)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and json.loads(proc.stdout).get("disagree", 0) == 0
    assert main(["verify", str(dst)]) == 0


def _raw_records(path: Path) -> list:
    from scapy.utils import RawPcapReader

    return list(RawPcapReader(str(path)))


#: The datagrams the strategy below draws from, made here (scapy's fragment6 uses the random module).
_DATAGRAMS = {(v6, ident, bad): _inner(v6, ident, bad) for v6 in (False, True) for ident in (77, 79, 81, 83, 85)
              for bad in (False, True)}
FIELDS = ("packets", "counts", "bad", "offload", "malformed", "cut", "not_ip", "unsupported", "patches", "dropped")


@st.composite
def _tunnelled(draw) -> tuple[list[bytes], int, int]:
    """Frames of 1-3 pairs of inner datagrams (scapy's, cut by scapy) in random tunnels, some fragments lost,
    repeated or moved, some datagrams under one inner key through two tunnels; how many of the datagrams have a
    good checksum and how many a broken one. Two datagrams share an inner key only when they are the same datagram
    (a sender reusing a key for another datagram within the window has its fragments mixed, by csum as by Linux)."""
    out, good, broken = [], 0, 0
    for n in range(draw(st.integers(1, 3))):
        tunnel, v6 = draw(st.sampled_from(CASES))
        outer = IP(src=draw(st.sampled_from(("192.0.2.1", "192.0.2.9"))), dst="192.0.2.2")
        bad = draw(st.booleans())
        ident = draw(st.sampled_from((77 + 2 * bad, 81 + 2 * n)))
        out += [_wrap(tunnel, f, outer) for f in _DATAGRAMS[v6, ident, bad]]
        good, broken = good + 2 - bad, broken + bad
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(out) - 1))
        action = draw(st.sampled_from(("drop", "repeat", "move")))
        frame = out.pop(k) if action != "repeat" else out[k]
        if action != "drop":
            out.insert(draw(st.integers(0, len(out))), frame)
    return out, good, broken


@settings(max_examples=60, deadline=None)
@given(frames=_tunnelled(), chunk_bytes=st.integers(1, 2000), window=st.sampled_from((3, reassembly.WINDOW)),
       most=st.sampled_from((1, reassembly.MAX_DATAGRAMS)), c_walker=st.booleans())
def test_chunks_and_parts_give_the_whole_capture_report(frames, chunk_bytes, window, most, c_walker):
    """Differential (as tests/capture/test_stitch.py for outer fragments): inner fragments in chunks from one record to
    the whole file, with and without the C walker, the Reassembler's window and datagram limit small: the carried
    check (--jobs 1) and the stitched parts (--jobs N) equal the whole check; at most as many inner TCP/UDP checksums
    are ok as the test built good datagrams, and at most as many bad as it broke (scapy's checksums): a datagram is
    judged once, never over another's fragments."""
    frames, good, broken = frames
    data = pcap_bytes(frames)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reassembly, "WINDOW", window)
        patch.setattr(reassembly, "MAX_DATAGRAMS", most)
        if not c_walker:
            patch.setattr(engine, "cwalk", None)
        whole = check(pcap.parse(data))
        chunks = list(pcap.Reader(io.BytesIO(data), chunk_bytes))
        carried, report = Checker(), Report(0)
        for chunk in chunks:
            report.update(carried.check(chunk))
        report.update(carried.close())
        stitcher, joined = Stitcher(), Report(0)
        for chunk in chunks:
            joined.update(stitcher.add(check_part(chunk), lambda chunk=chunk: chunk))
        joined.update(stitcher.close())
        for name in FIELDS:
            assert getattr(report, name) == getattr(whole, name), name
            assert getattr(joined, name) == getattr(whole, name), name
    inner = [whole.counts.get(f"{layer}@1", {}) for layer in ("tcp", "udp")]
    assert sum(c.get("ok", 0) for c in inner) <= good and sum(c.get("bad", 0) for c in inner) <= broken
