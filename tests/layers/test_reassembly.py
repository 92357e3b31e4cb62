"""csum/layers/reassembly.py inside the capture checker: the whole datagram's checksum, whatever order its
fragments arrive in and whichever fragment carries the checksum field.

Expected values come from scapy: the datagram is built whole (scapy fills in the right TCP/UDP
checksum, read back from the bytes it built) and cut with ``scapy.fragment``; where tshark is
installed, its own verdicts on the reassembled datagrams (ip.defragment is on by default, checksum
validation switched on) must agree.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from captures import pcap_bytes
from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw, fragment, raw

from csum import engine
from csum.capture import fastpath, pcap
from csum.capture.checker import check
from csum.capture.report import Report
from csum.layers import Status

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
A4, B4 = "192.0.2.1", "198.51.100.7"


def _datagram(l4: str, bad: bool, ident: int = 7, size: int = 40) -> tuple[list[bytes], int, int, int]:
    """Fragments of 8 data bytes each of one TCP or UDP datagram; (frames, scapy's right checksum, stored
    checksum, field's offset in the fragmentable part)."""
    layer = TCP(sport=1, dport=2) if l4 == "tcp" else UDP(sport=1, dport=2)
    right = IP(raw(IP(src=A4, dst=B4, id=ident) / layer / Raw(bytes(range(size)))))[l4.upper()].chksum
    stored = right ^ 0x0101 if bad else right
    whole = IP(src=A4, dst=B4, id=ident) / layer.copy() / Raw(bytes(range(size)))
    whole[l4.upper()].chksum = stored
    frames = [raw(ETH / f) for f in fragment(whole, fragsize=8)]
    return frames, right, stored, (16 if l4 == "tcp" else 6)


ORDERS = {"in order": lambda n: list(range(n)), "reversed": lambda n: list(range(n))[::-1],
          "head last": lambda n: list(range(1, n)) + [0], "shuffled": lambda n: random.Random(5).sample(range(n), n)}


def _judged(frames: list[bytes], monkeypatch: pytest.MonkeyPatch, c_walker: bool) -> Report:
    if not c_walker:
        monkeypatch.setattr(engine, "cwalk", None)
    return check(pcap.parse(pcap_bytes(frames)))


@pytest.mark.parametrize("c_walker", [True, False], ids=["c-walker", "python"])
@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("l4,bad", [("tcp", True), ("tcp", False), ("udp", True), ("udp", False)])
def test_the_checksum_of_fragments_in_any_order(l4, bad, order, c_walker, monkeypatch):
    """The TCP checksum sits in the third 8-byte fragment (UDP's in the first); in every arrival order the
    datagram gets exactly one verdict: scapy's right value as ``computed``, on the packet that carries the
    field, bad when the stored value differs. (Before the fix, a field-carrying fragment that arrived
    before the offset-0 one lost its result.)"""
    frames, right, stored, field = _datagram(l4, bad)
    perm = ORDERS[order](len(frames))
    report = _judged([frames[i] for i in perm], monkeypatch, c_walker)
    row = report.counts[l4]
    assert (row["ok"], row["bad"]) == ((0, 1) if bad else (1, 0))
    assert row["n/a"] == len(frames) - 1  # the transport layer of every later fragment
    carrier = perm.index(field // 8)
    if bad:
        [(index, r)] = report.bad
        assert (index, r.layer, r.stored, r.computed, r.status) == (carrier, l4, stored, right, Status.BAD)
        # fix: the field of the fragment that carries it
        [(at, new)] = [p for p in report.patches if p[1] == right.to_bytes(2, "big")]
        data = pcap_bytes([frames[i] for i in perm])
        assert data[at : at + 2] == stored.to_bytes(2, "big")
    else:
        assert not report.bad


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_agrees_on_fragments_in_any_order(tmp_path):
    """tshark reassembles the same datagrams (one good and one bad TCP, one bad UDP, in the orders above) and
    its checksum verdicts are csum's, datagram by datagram."""
    frames: list[bytes] = []
    expected = []
    for k, (l4, bad) in enumerate([("tcp", False), ("tcp", True), ("udp", True)]):
        for n, order in enumerate(ORDERS.values()):
            got, *_ = _datagram(l4, bad, ident=100 + 10 * k + n)
            frames += [got[i] for i in order(len(got))]
            expected.append((l4, "0" if bad else "1"))
    path = tmp_path / "frags.pcap"
    path.write_bytes(pcap_bytes(frames))
    out = subprocess.run(["tshark", "-r", str(path), "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
                          "-T", "fields", "-e", "tcp.checksum.status", "-e", "udp.checksum.status"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    theirs = [("tcp" if t else "udp", t or u) for t, u in (line.split("\t") for line in out.splitlines())
              if t in ("0", "1") or u in ("0", "1")]
    rows: list = []
    check(pcap.parse(path.read_bytes()), sink=lambda i, results: rows.extend(results))
    ours = [(r.layer, "1" if r.status is Status.OK else "0") for r in rows
            if r.layer in ("tcp", "udp") and r.status in (Status.OK, Status.BAD)]
    assert theirs == ours == expected


def _oversized(v6: bool) -> list[bytes]:
    """Fragments of a UDP datagram whose data fits the 65,535 bytes a fragment offset can reach, but whose headers
    make it longer than IP allows: IPv4 with 4 bytes of options (24 + 65,512 bytes), IPv6 with an 8-byte
    destination options header in front of the data (payload 8 + 8 + 65,520 bytes). Built by hand (scapy will not
    write a length over 65,535); IPv4 header checksums by the RFC 1071 model."""
    from oracle import rfc1071_checksum

    data = bytes(UDP(sport=1, dport=2, len=8, chksum=0x1111)) + bytes(65504 if not v6 else 65512)
    step, frames = 8192, []
    for at in range(0, len(data), step):
        piece, more = data[at : at + step], at + step < len(data)
        if v6:
            head = bytearray(IPv6(src="2001:db8::1", dst="2001:db8::2", nh=60, plen=16 + len(piece)).build()[:40])
            head += bytes([44, 0]) + b"\0" * 6  # destination options (nothing), then the Fragment header
            head += bytes([17, 0]) + (at | more).to_bytes(2, "big") + (9).to_bytes(4, "big")
            frames.append(raw(ETH)[:12] + b"\x86\xdd" + bytes(head) + piece)
        else:
            head = bytearray(bytes.fromhex("46000000000900004011") + bytes(2) + bytes([192, 0, 2, 1, 198, 51, 100, 7]))
            head += b"\x01\x01\x01\x00"  # NOP NOP NOP EOL
            head[2:4] = (24 + len(piece)).to_bytes(2, "big")
            head[6:8] = ((more << 13) | at // 8).to_bytes(2, "big")
            head[10:12] = rfc1071_checksum(bytes(head)).to_bytes(2, "big")
            frames.append(raw(ETH)[:12] + b"\x08\x00" + bytes(head) + piece)
    return frames


@pytest.mark.parametrize("c_walker", [True, False], ids=["c-walker", "python"])
@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_a_datagram_longer_than_ip_allows(v6, c_walker, monkeypatch):
    """Every byte of the datagram is here but it would be longer than 65,535 bytes rebuilt: Linux drops it
    ("Oversized IP packet", net/ipv4/ip_fragment.c; IPV6_MAXPLEN in net/ipv6/reassembly.c), and csum reports the
    first fragment's UDP checksum as reassembly-failed instead of a verdict (before: an OverflowError)."""
    frames = _oversized(v6)
    report = _judged(frames, monkeypatch, c_walker)
    rows: list = []
    check(pcap.parse(pcap_bytes(frames)), sink=lambda i, results: rows.extend((i, r) for r in results))
    assert [(i, r.reason) for i, r in rows if r.layer == "udp" and r.reason != "non-first-fragment"] == \
        [(0, "reassembly-failed")]
    assert report.counts["udp"] == {"ok": 0, "bad": 0, "offload": 0, "none": 0, "n/a": len(frames)}


@pytest.mark.parametrize("c_walker", [True, False], ids=["c-walker", "python"])
def test_a_repeated_fragment_gives_the_field_one_row(c_walker, monkeypatch):
    """A capture that repeats fragments (a duplicate of the first, then of a later one): the datagram's UDP field
    gets one row, on the first copy of the first fragment, with scapy's checksum; the copies report nothing of it
    (the later copy keeps its non-first-fragment row, as every later fragment has), and the counts count the field
    once. Before, the first copy said needs-reassembly and ok."""
    pieces = fragment(IP(src=A4, dst=B4, id=5) / UDP(sport=1, dport=2) / (b"x" * 100), fragsize=48)
    right = IP(raw(IP(src=A4, dst=B4, id=5) / UDP(sport=1, dport=2) / (b"x" * 100)))[UDP].chksum
    frames = [raw(ETH / f) for f in (pieces[0], pieces[0], pieces[1], pieces[1], pieces[2])]
    if not c_walker:
        monkeypatch.setattr(engine, "cwalk", None)
    rows: list = []
    check(pcap.parse(pcap_bytes(frames)), sink=lambda i, res: rows.extend((i, r) for r in res if r.layer == "udp"))
    assert [(i, str(r.reason)) for i, r in rows] == [(0, "ok"), (2, "non-first-fragment"), (3, "non-first-fragment"),
                                                     (4, "non-first-fragment")]
    assert rows[0][1].computed == rows[0][1].stored == right
    counts = check(pcap.parse(pcap_bytes(frames))).counts["udp"]
    assert (counts["ok"], counts["n/a"]) == (1, 3)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_gives_a_repeated_datagram_one_verdict(tmp_path):
    """tshark 4.0 reassembles a datagram whose first fragment is repeated once and judges its UDP checksum once;
    csum verify gives one verdict too (the same), on a datagram with a wrong checksum and one with a right one."""
    frames = []
    for ident, bad in ((5, False), (6, True)):
        whole = IP(src=A4, dst=B4, id=ident) / UDP(sport=1, dport=2, chksum=0x1234 if bad else None) / (b"y" * 90)
        pieces = fragment(whole, fragsize=48)
        frames += [raw(ETH / f) for f in (pieces[0], pieces[0], *pieces[1:])]
    path = tmp_path / "repeats.pcap"
    path.write_bytes(pcap_bytes(frames))
    out = subprocess.run(["tshark", "-r", str(path), "-o", "udp.check_checksum:TRUE", "-T", "fields", "-e",
                          "udp.checksum.status"], capture_output=True, text=True, check=True, timeout=120).stdout
    theirs = [v for v in out.split() if v in ("0", "1")]
    rows: list = []
    check(pcap.parse(path.read_bytes()), sink=lambda i, res: rows.extend(r for r in res if r.layer == "udp"))
    assert theirs == ["1", "0"] == ["1" if r.ok else "0" for r in rows if r.status in ("ok", "bad")]
