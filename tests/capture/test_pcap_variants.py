"""The pcap variants libpcap reads (sf-pcap.c), read as libpcap reads them: the modified format (a1b2cd34, 24-byte
record headers), versions before 2.3 and DG/UX's 543.0 (captured and original lengths swapped), version 2.3 (swapped
where the captured length is the larger), records longer than the snap length (cut to it), and the link type's FCS
bits (the frame check sequence left out of the packet).

Expected values: the files are built here with struct from sf-pcap.c's layouts; what each record holds is what
libpcap 1.10 hands tcpdump 4.99 (``tcpdump -r variant -w standard``, the standard file read back with scapy's
RawPcapReader); the FCS rule (the last 2 * LT_FCS_LENGTH bytes of the frame are no payload) and the fixed files are
checked with tshark 4 (``-o tcp.check_checksum:TRUE``); checksum verdicts are scapy's (the packets are scapy's, with a
checksum broken by the test).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.all import IP, TCP, UDP, Ether, raw
from scapy.utils import RawPcapReader

from csum import engine
from csum.capture import checker, pcap
from csum.capture.checker import check
from csum.cli import main
from csum.errors import CsumValueError

needs_tcpdump = pytest.mark.skipif(shutil.which("tcpdump") is None,
                                   reason="tcpdump is not installed (apt-get install tcpdump)")
needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None,
                                  reason="tshark is not installed (apt-get install tshark)")

STANDARD, NSEC, MODIFIED = 0xA1B2C3D4, 0xA1B23C4D, 0xA1B2CD34
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _frames() -> list[bytes]:
    """A good TCP segment, a UDP datagram with its checksum broken (scapy's packets), a longer good UDP one."""
    good = raw(ETH / IP(src="192.0.2.1", dst="192.0.2.2") / TCP(sport=1, dport=2) / b"hello")
    bad = bytearray(raw(ETH / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=3, dport=4) / b"world"))
    bad[40] ^= 0xFF  # the UDP checksum's first byte (14 + 20 + 6)
    big = raw(ETH / IP(src="192.0.2.3", dst="192.0.2.4") / UDP(sport=5, dport=6) / (b"x" * 200))
    return [good, bytes(bad), big]


def _file(frames: list[bytes], *, magic: int = STANDARD, endian: str = "<", version: tuple[int, int] = (2, 4),
          snap: int = 65535, link: int = 1, swapped: list[bool] | None = None, origlens: list[int] | None = None,
          fcs: bytes = b"") -> bytes:
    """A pcap file as sf-pcap.c lays it out: the 24-byte file header, then per frame (``fcs`` appended) the seconds,
    microseconds, captured and original length (``swapped[i]``: written the other way round) and, in the modified
    format, ifindex (4), protocol (2), packet type (1) and a pad byte."""
    out = [struct.pack(endian + "IHHiIII", magic, *version, 0, 0, snap, link)]
    for i, frame in enumerate(frames):
        frame += fcs
        lengths = (len(frame), origlens[i] if origlens else len(frame))
        if swapped and swapped[i]:
            lengths = lengths[::-1]
        head = struct.pack(endian + "IIII", 1_000_000 + i, 7 * i, *lengths)
        if magic == MODIFIED:
            head += struct.pack(endian + "iHBB", 2, 0x0800, 0, 0)
        out.append(head + frame)
    return b"".join(out)


def _libpcap(path: Path, tmp_path: Path) -> list[tuple[int, int, bytes]]:
    """(captured length, original length, bytes) of each packet as libpcap hands it to tcpdump: ``tcpdump -r path -w``
    a standard pcap file, read back with scapy."""
    out = tmp_path / f"{path.stem}.libpcap.pcap"
    subprocess.run(["tcpdump", "-r", str(path), "-w", str(out)], check=True, capture_output=True, timeout=60)
    return [(meta.caplen, meta.wirelen, data) for data, meta in RawPcapReader(str(out))]


def _csum_records(cap: pcap.Capture) -> list[tuple[int, int, bytes]]:
    return [(int(cap.caplens[i]), int(cap.origlens[i]), bytes(cap.packet(i))) for i in range(len(cap))]


def _variants() -> dict[str, dict]:
    frames = _frames()
    n = len(frames)
    return {
        "modified-le": dict(magic=MODIFIED),
        "modified-be": dict(magic=MODIFIED, endian=">"),
        "nsec-be": dict(magic=NSEC, endian=">"),
        "v2.2-swapped": dict(version=(2, 2), swapped=[True] * n),
        "v2.3-some-swapped": dict(version=(2, 3), origlens=[len(f) + 10 for f in frames], swapped=[True, False, True]),
        "v543.0-dgux": dict(version=(543, 0), endian=">", swapped=[True] * n),
        "longer-than-snaplen": dict(snap=100),
        "modified-ethernet-snaplen-plus-14": dict(magic=MODIFIED, snap=100),
    }


VARIANTS = _variants()


@needs_tcpdump
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variants_hold_what_libpcap_reads(name, tmp_path):
    """Each variant's packets (captured length, original length, bytes) are libpcap's, whole and in small chunks,
    through Reader.spans (the --jobs record boundaries) and with the Python record walk in place of the C one."""
    data = _file(_frames(), **VARIANTS[name])
    path = tmp_path / f"{name}.pcap"
    path.write_bytes(data)
    want = _libpcap(path, tmp_path)
    assert len(want) == 3
    assert _csum_records(pcap.parse(data)) == want
    for chunk_bytes in (1, 64, 1 << 20):
        reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
        assert [r for c in reader for r in _csum_records(c)] == want and reader.stop is None
        spans = pcap.Reader(io.BytesIO(data), chunk_bytes)
        got = [r for s in spans.spans() for r in _csum_records(s.capture(lambda at, n: data[at:at + n]))]
        assert got == want
    saved = engine.cwalk
    try:
        engine.cwalk = None
        assert _csum_records(pcap.parse(data)) == want
    finally:
        engine.cwalk = saved


@needs_tcpdump
def test_modified_format_timestamps_are_libpcaps(tmp_path):
    """The modified format's timestamps (microseconds, in the first 8 of the 24 header bytes) are what libpcap
    reads (the standard file tcpdump writes, through scapy)."""
    data = _file(_frames(), magic=MODIFIED, endian=">")
    path = tmp_path / "m.pcap"
    path.write_bytes(data)
    out = tmp_path / "std.pcap"
    subprocess.run(["tcpdump", "-r", str(path), "-w", str(out)], check=True, capture_output=True, timeout=60)
    want = [(meta.sec * 1_000_000 + meta.usec) * 1000 for _data, meta in RawPcapReader(str(out))]
    chunk = next(iter(pcap.Reader(io.BytesIO(data), times=True)))
    assert chunk.times.tolist() == want


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("one_by_one", [False, True])
def test_variant_verdicts_are_scapys(name, one_by_one, monkeypatch):
    """Checked at once (numpy, the C fast path) or a packet at a time (checker.one_by_one): the TCP and the big UDP
    checksums good, the broken UDP one bad (scapy's packets, one checksum broken by the test); a cut packet (the
    snap length variants cut the big one) has its headers checked only; the 2.3 file's frames, 10 bytes longer on
    the wire than captured, are cut with every IP datagram whole (judged)."""
    monkeypatch.setattr(checker, "one_by_one", lambda packets: one_by_one)
    report = check(pcap.parse(_file(_frames(), **VARIANTS[name])))
    cut = "snaplen" in name
    assert report.counts["tcp"]["ok"] == 1 and report.counts["udp"]["bad"] == 1
    assert report.counts["udp"]["ok"] == (0 if cut else 1)
    assert report.cut == ([2] if cut else [0, 1, 2] if name == "v2.3-some-swapped" else [])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_verdicts_with_jobs(name, tmp_path, capsys):
    """``csum verify --jobs 2`` over small chunks (csum/capture/parallel.py's record boundaries) gives the same
    verdicts: one bad UDP checksum (scapy's packets, broken by the test), the TCP one good."""
    path = tmp_path / "v.pcap"
    path.write_bytes(_file(_frames(), **VARIANTS[name]))
    assert main(["verify", str(path), "--json", "--jobs", "2", "--chunk-bytes", "64"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["tcp"]["ok"] == 1 and doc["counts"]["udp"]["bad"] == 1 and doc["bad_count"] == 1


def _tshark(path: Path, *fields: str, fcs: bool = False) -> list[list[str]]:
    cmd = ["tshark", "-r", str(path), "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
           "-o", "ip.check_checksum:TRUE", "-T", "fields"]
    for field in fields:
        cmd += ["-e", field]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return [line.split("\t") for line in proc.stdout.splitlines()]


@needs_tshark
@needs_tcpdump
@pytest.mark.parametrize("name", ["modified-le", "modified-be", "v2.2-swapped", "v543.0-dgux"])
@pytest.mark.parametrize("command", ["fix", "rewrite"])
def test_fix_and_rewrite_write_the_same_format_back(name, command, tmp_path):
    """``csum fix`` (and ``csum rewrite --fix`` with a TTL rule) on a variant write the same format back (its magic,
    version and record headers byte for byte); tshark reads the output with the same frames and lengths and finds
    every UDP/TCP checksum good, and libpcap reads the same records as from the input."""
    data = _file(_frames(), **VARIANTS[name])
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(data)
    argv = ["fix", str(src), str(dst)] if command == "fix" else \
        ["rewrite", str(src), str(dst), "--ttl", "9", "--fix"]
    assert main(argv) in (0, 1)
    assert src.read_bytes() == data
    out = dst.read_bytes()
    assert len(out) == len(data) and out[:24] == data[:24]
    before, after = _libpcap(src, tmp_path), _libpcap(dst, tmp_path)
    assert [(c, w) for c, w, _ in after] == [(c, w) for c, w, _ in before]
    rows = _tshark(dst, "frame.len", "tcp.checksum.status", "udp.checksum.status", "ip.ttl")
    assert [int(r[0]) for r in rows] == [w for _c, w, _ in before]
    assert [r[1] or r[2] for r in rows] == ["1", "1", "1"]  # 1: good
    if command == "rewrite":
        assert [r[3] for r in rows] == ["9", "9", "9"]


def _fcs_frames() -> list[bytes]:
    """A good TCP segment; a UDP datagram whose IP total length and UDP length take in the 4 FCS bytes after it (its
    checksum right over those bytes as payload: scapy's, over the frame with the FCS as data)."""
    good = raw(ETH / IP(src="192.0.2.1", dst="192.0.2.2") / TCP(sport=1, dport=2) / b"hello")
    over = raw(ETH / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=3, dport=4) / b"world\xde\xad\xbe\xef")
    return [good, over[:-4]]


@needs_tshark
def test_fcs_bits_keep_the_fcs_out_of_the_packet(tmp_path):
    """LT_FCS_DATALINK_EXT(2) (a 4-byte FCS ends each Ethernet frame): csum leaves the FCS out of the packet, as tshark
    does (eth.fcs shown, frame.len counting it). The TCP segment is judged good; the UDP datagram whose lengths run
    into the FCS is malformed to csum and never passed, and tshark does not judge it either (udp.checksum.status 2,
    unverified)."""
    fcs = b"\xde\xad\xbe\xef"
    frames = _fcs_frames()
    link = 1 | (2 << 28) | pcap.LT_FCS_LENGTH_PRESENT
    data = _file(frames, link=link, fcs=fcs, origlens=[len(f) + 4 for f in frames])
    path = tmp_path / "fcs.pcap"
    path.write_bytes(data)
    rows = _tshark(path, "frame.len", "eth.fcs", "tcp.checksum.status", "udp.checksum.status")
    assert [r[0] for r in rows] == [str(len(f) + 4) for f in frames]
    assert all(r[1] == "0xdeadbeef" for r in rows)
    assert rows[0][2] == "1" and rows[1][3] == "2"  # 2: unverified
    cap = pcap.parse(data)
    assert _csum_records(cap) == [(len(f), len(f), f) for f in frames]
    report = check(cap)
    assert report.counts["tcp"]["ok"] == 1 and report.counts["udp"] == {k: 0 for k in report.counts["udp"]}
    assert [i for i, _why in report.malformed] == [1]
    # The same datagram without the FCS bits: its checksum is right over the FCS bytes taken as payload (scapy).
    plain = check(pcap.parse(_file(frames, fcs=fcs)))
    assert plain.counts["udp"]["ok"] == 1 and not plain.malformed


@needs_tshark
def test_a_frame_cut_inside_its_fcs_is_judged(tmp_path):
    """A record whose snap length cut 2 of the 4 FCS bytes holds the whole packet: judged (scapy's good TCP segment),
    not counted as cut; tshark judges it too."""
    frame = _fcs_frames()[0]
    link = 1 | (2 << 28) | pcap.LT_FCS_LENGTH_PRESENT
    data = _file([frame + b"\xde\xad"], link=link, origlens=[len(frame) + 4])
    path = tmp_path / "cut.pcap"
    path.write_bytes(data)
    assert _tshark(path, "tcp.checksum.status") == [["1"]]
    report = check(pcap.parse(data))
    assert report.counts["tcp"]["ok"] == 1 and report.cut == []


def test_archaic_and_unknown_versions_are_refused():
    """libpcap refuses versions before 2 ("archaic") and any but 2.x and 543.0: so does csum, with a clear
    not-a-capture error naming the version; 2.5 (refused by libpcap, read by Wireshark) is read as 2.4."""
    frames = _frames()
    for version, needle in (((1, 0), "pcap version 1.0 is an archaic format"), ((3, 0), "pcap version 3.0 is not"),
                            ((543, 1), "pcap version 543.1 is not")):
        with pytest.raises(CsumValueError, match=needle) as info:
            pcap.parse(_file(frames, version=version))
        assert info.value.code == "not-a-capture"
    assert _csum_records(pcap.parse(_file(frames, version=(2, 5)))) == [(len(f), len(f), f) for f in frames]


@settings(max_examples=300)
@given(records=st.lists(st.tuples(st.binary(max_size=40), st.integers(0, 80)), max_size=10),
       tail=st.binary(max_size=30), big=st.booleans(), header=st.sampled_from([16, 24]), swap=st.integers(0, 2),
       snap=st.sampled_from([0, 8, 30]), fcs=st.sampled_from([0, 2, 4, 30]))
def test_c_variant_walk_equals_the_python_one(records, tail, big, header, swap, snap, fcs):
    """Differential: the C record walk (csum/engine/_cwalk.c pcap_records) with a 24-byte header, swapped lengths,
    a snap length cut and an FCS finds the same records, lengths and stop as the Python loop, on random records."""
    if engine.cwalk is None:
        pytest.skip("csum.engine._cwalk is not built")
    e = ">" if big else "<"
    data = b"".join(struct.pack(e + "IIII", 0, 0, len(body), orig) + os.urandom(header - 16) + body
                    for body, orig in records) + tail
    walker = pcap._PcapWalker(e, 1, False, header, swap, snap, fcs)
    c, saved = walker.walk(data, 0, False), engine.cwalk
    try:
        engine.cwalk = None
        py = walker.walk(data, 0, False)
    finally:
        engine.cwalk = saved
    assert (c.end, c.problem, c.short) == (py.end, py.problem, py.short)
    for name in ("offs", "caps", "origs"):
        assert getattr(c, name).tolist() == getattr(py, name).tolist(), name
