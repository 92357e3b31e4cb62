"""csum/capture/hosts.py: who sent the bad and offload checksums, per host, per flow and in time.

Expected values: tests/senders.py tallies them from the packets scapy built (which host sent which kind of field,
at which time); csum's own counts are never the reference. Equalities across --jobs, chunk sizes, both walkers
and several files are checked against those same tallies.
"""

from __future__ import annotations

import gzip

import pytest
import senders
from scapy.utils import PcapNgWriter, wrpcap

from csum import engine
from csum.capture import hosts as hosts_module
from csum.capture.hosts import BUCKETS, FIRST_SHIFT, Hosts, Sender
from csum.capture.scan import merged, scan
from csum.layers import Reason, Result


def _write(path, packets, fmt="pcap"):
    if fmt == "pcap":
        wrpcap(str(path), packets)
    else:
        writer = PcapNgWriter(str(path))
        for p in packets:
            writer.write(p)
        writer.close()
    return str(path)


def _check(h: Hosts, exp: senders.Expected) -> None:
    """``h`` holds exactly what ``exp`` says (the timeline at its finest buckets: few fields)."""
    assert h.hosts == exp.hosts
    assert {tuple(k): v for k, v in h.flows.items()} == exp.flows
    assert h.shift == FIRST_SHIFT
    assert {b << h.shift: v for b, v in h.timeline.items()} == exp.buckets(FIRST_SHIFT)
    assert h.untimed == [0, 0] and h.unplaced == [0, 0]
    assert {src: h.verdict(src) for src in h.hosts} == exp.verdicts()


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("walker", ["c", "python"])
def test_summary_is_what_scapy_built(tmp_path, monkeypatch, fmt, walker):
    """Hosts with offload sums (IPv4 TCP, IPv6 UDP, a tunnel's inner sender), hosts with real corruption (TCP, IPv6
    UDP, an IPv4 header, ICMP, a fragmented datagram's UDP), a host with none: every count, flow, time and verdict as
    tests/senders.py tallied it, from the C walker's Results and from the Python walker's alone."""
    if walker == "c" and engine.cwalk is None:
        pytest.skip("the C walker is not built")
    if walker == "python":
        monkeypatch.setattr(engine, "cwalk", None)
    packets, exp = senders.build()
    report = scan(_write(tmp_path / f"s.{fmt}", packets, fmt), hosts=True).report
    _check(report.hosts, exp)
    assert report.hosts.verdict_line() == ("offload on 10.0.0.1; offload on 2001:db8::1; offload on 10.1.0.1; "
                                           "corruption or a bug on 10.0.0.3; corruption or a bug on 2001:db8::3; "
                                           "corruption or a bug on 10.0.0.5; corruption or a bug on 10.0.0.6; "
                                           "corruption or a bug on 10.0.0.8")


def test_not_collected_unless_asked(tmp_path):
    """Without ``hosts=True`` the report carries no summary (verify's cost stays what it was)."""
    packets, _ = senders.build()
    assert scan(_write(tmp_path / "s.pcap", packets)).report.hosts is None


@pytest.mark.parametrize("jobs,chunk,gz", [(1, 2 << 20, False), (1, 600, False), (2, 600, False), (2, 900, True)])
def test_jobs_and_chunks_give_the_same_summary(tmp_path, jobs, chunk, gz):
    """Ten copies of the sample one after another (fragments straddling chunks at these sizes), checked in one
    process or two (check_spans for a plain file, checked() for a gzip stream): the tallies of all ten."""
    packets, exps = [], []
    for k in range(10):
        more, exp = senders.build(first=len(packets))
        packets += more
        exps.append(exp)
    path = _write(tmp_path / "s.pcap", packets)
    if gz:
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            g.write(f.read())
        path += ".gz"
    _check(scan(path, jobs=jobs, chunk_bytes=chunk, hosts=True).report.hosts, senders.merged(*exps))


def test_several_files_merge(tmp_path):
    """Two files (pcap, pcapng) merged as ``csum verify A B`` totals them: the sum of both tallies."""
    a, ea = senders.build()
    b, eb = senders.build(first=1000)
    scans = [scan(_write(tmp_path / "a.pcap", a), hosts=True),
             scan(_write(tmp_path / "b.pcapng", b, "pcapng"), hosts=True)]
    _check(merged(scans).report.hosts, senders.merged(ea, eb))


def _result(status_reason: Reason, offset: int = 34) -> Result:
    ok = status_reason is Reason.OK
    return Result("tcp", offset, 1, 2, ok, status_reason, offset + 16, "eth/ipv4/tcp", 0)


ROW = [Sender(0, 14, 4, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 6, 1, 2)]


def test_timeline_coarsens_exactly_in_any_order():
    """Fields at 1000 times spread over a day: at most BUCKETS buckets of 2**k ns, k the smallest that fits
    (computed here by brute force), every field counted; adding the two halves in either order, or one by one,
    gives the same timeline."""
    times = [1_700_000_000 * 10**9 + i * 86_400 * 10**6 + (i * i % 977) * 10**6 for i in range(1000)]
    k = next(k for k in range(FIRST_SHIFT, 64) if len({t >> k for t in times}) <= BUCKETS)
    expected: dict[int, int] = {}
    for t in times:
        expected[t >> k] = expected.get(t >> k, 0) + 1
    whole, first, second = Hosts(), Hosts(), Hosts()
    for i, t in enumerate(times):
        whole.add(t, [_result(Reason.OFFLOAD)], ROW)
        (first if i < 500 else second).add(t, [_result(Reason.OFFLOAD)], ROW)
    ab, ba = Hosts(), Hosts()
    ab.update(first)
    ab.update(second)
    ba.update(second)
    ba.update(first)
    for h in (whole, ab, ba):
        assert h.shift == k and len(h.timeline) <= BUCKETS
        assert {b: v[1] for b, v in h.timeline.items()} == expected
        assert h.hosts == {"10.0.0.1": {"tcp": [0, 1000]}}


def test_tables_past_their_bound_are_dropped_whole(monkeypatch):
    """More flows than MAX_FLOWS: the flow table is dropped (None), never cut; the host table stays exact; the same
    when the flows only exceed the bound once two parts are merged."""
    monkeypatch.setattr(hosts_module, "MAX_FLOWS", 3)
    rows = [[Sender(0, 14, 4, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]), 6, port, 80)] for port in range(4)]
    one = Hosts()
    for row in rows:
        one.add(5, [_result(Reason.MISMATCH)], row)
    assert one.flows is None and one.hosts == {"10.0.0.1": {"tcp": [4, 0]}}
    a, b = Hosts(), Hosts()
    for row in rows[:2]:
        a.add(5, [_result(Reason.MISMATCH)], row)
    for row in rows[2:]:
        b.add(5, [_result(Reason.MISMATCH)], row)
    assert a.flows is not None and b.flows is not None
    a.update(b)
    assert a.flows is None and a.hosts == one.hosts


def test_ok_fields_and_untimed_packets():
    """ok fields are not counted; a packet without a timestamp (NO_TIME) is counted in ``untimed``, not placed."""
    h = Hosts()
    h.add(hosts_module.NO_TIME, [_result(Reason.OK), _result(Reason.OFFLOAD)], ROW)
    assert h.untimed == [0, 1] and h.timeline == {} and h.hosts == {"10.0.0.1": {"tcp": [0, 1]}}
    assert list(h.flows.values()) == [[0, 1, hosts_module.NO_TIME, hosts_module.NO_TIME]]


#: IPv4 headers the walker refuses, each with its checksum then broken (byte 10 of the header xor 0x11): a total
#: length past the capture, one below the header, a malformed option; and (below) a cut inside the UDP header.
_REFUSED = {"total length past the end": (2, (500).to_bytes(2, "big")), "total length below IHL": (2, b"\x00\x16"),
            "option length 9": (20, b"\x07\x09\x00\x00")}


@pytest.mark.parametrize("walker", ["c", "python"])
def test_a_refused_ipv4_header_keeps_its_sender(tmp_path, monkeypatch, walker):
    """A bad IPv4 header checksum in a header the walker refuses had null src/dst in the rows and no sender in --by
    host (37 of 1,623 bad fields of a public corpus, issue 33): now the addresses the header holds, in the rows and
    the per-host tally, from either walker. Expected: the addresses scapy wrote (10.0.0.9 -> 10.0.0.10), one bad
    ipv4 field per packet, every packet's header checksum broken by this test."""
    pytest.importorskip("pyarrow")
    from scapy.all import IP, UDP, Ether, raw

    from csum.scan import to_arrow

    if walker == "c" and engine.cwalk is None:
        pytest.skip("the C walker is not built")
    if walker == "python":
        monkeypatch.setattr(engine, "cwalk", None)
    base = raw(Ether() / IP(src="10.0.0.9", dst="10.0.0.10", options=b"\x01\x01\x01\x00") / UDP(sport=1, dport=2)
               / b"abcdefgh")
    frames = []
    for at, new in _REFUSED.values():
        f = bytearray(base)
        f[14 + at : 14 + at + len(new)] = new
        f[14 + 10] ^= 0x11
        frames.append(bytes(f))
    cut = bytearray(base[:40])
    cut[14 + 10] ^= 0x11
    frames.append(bytes(cut))
    path = tmp_path / "refused.pcap"
    path.write_bytes(_pcap_of(frames))
    rows = to_arrow(str(path)).to_pylist()
    ip_rows = [r for r in rows if r["protocol"] == "ipv4"]
    assert [(r["frame"], r["status"], r["src"], r["dst"]) for r in ip_rows] == [
        (i + 1, "bad", "10.0.0.9", "10.0.0.10") for i in range(len(frames))]
    h = scan(str(path), hosts=True).report.hosts
    assert h.hosts == {"10.0.0.9": {"ipv4": [len(frames), 0]}}


def _pcap_of(frames: list[bytes]) -> bytes:
    """A little-endian microsecond pcap of Ethernet ``frames`` (draft-ietf-opsawg-pcap's layout)."""
    import struct

    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for i, f in enumerate(frames):
        out.append(struct.pack("<IIII", 1_700_000_000 + i, 0, len(f), len(f)) + f)
    return b"".join(out)
