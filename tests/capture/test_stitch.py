"""IP fragments across chunks (csum/capture/checker.py Checker, csum/capture/stitch.py): a capture checked chunk by chunk, in
one process or as parts joined afterwards, gives the report of the whole capture checked at once.

Reference: csum.capture.checker.check on the whole capture, itself checked against scapy's checksums (and tshark's
verdicts) in tests/layers/test_reassembly.py and against the Python walker alone in tests/capture/test_pcap.py. The packets:
scapy-built datagrams cut into fragments lost, repeated, reordered, overlapping and cut
(tests/fragmented.py), among csum.testing.frames stacks; the Reassembler's limits are made small so that
evictions and expiries happen across chunk boundaries too.
"""

from __future__ import annotations

import dataclasses
import io

import pytest
from captures import pcapng_bytes
from fragmented import fragmented
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.all import IP, UDP, Ether, IPv6, IPv6ExtHdrFragment, Raw, fragment, fragment6, raw

from csum import engine
from csum.capture import fastpath, pcap
from csum.capture.checker import Checker, check, check_part
from csum.capture.report import Report
from csum.capture.scan import scan
from csum.capture.stitch import Stitcher
from csum.layers import reassembly
from csum.testing import frames

#: Every Report field but ``fast`` (which packets the C walker takes depends on where chunks begin).
FIELDS = ("packets", "counts", "bad", "offload", "malformed", "cut", "not_ip", "unsupported", "patches", "dropped")


def _same(got: Report, want: Report) -> None:
    for name in FIELDS:
        assert getattr(got, name) == getattr(want, name), name


def _chunked(data: bytes, chunk_bytes: int) -> list[pcap.Capture]:
    return list(pcap.Reader(io.BytesIO(data), chunk_bytes))


def _carried(chunks: list[pcap.Capture], sink=None) -> Report:
    checker, report = Checker(sink), Report(0)
    for chunk in chunks:
        report.update(checker.check(chunk))
    report.update(checker.close())
    return report


def _stitched(chunks: list[pcap.Capture]) -> tuple[Report, int]:
    stitcher, report = Stitcher(), Report(0)
    for chunk in chunks:
        report.update(stitcher.add(check_part(chunk), lambda chunk=chunk: chunk))
    report.update(stitcher.close())
    return report, stitcher.rechecked


# each example checks a capture of up to ~60 packets five ways (~15 ms): 250 keep this near 5 s
@settings(max_examples=250)
@given(pieces=fragmented(), plain=st.lists(frames(), max_size=4), chunk_bytes=st.integers(1, 700),
       window=st.sampled_from((2, 5, reassembly.WINDOW)), most=st.sampled_from((1, 2, reassembly.MAX_DATAGRAMS)),
       c_walker=st.booleans(), where=st.integers(0, 60))
def test_chunks_give_the_whole_capture_report(pieces, plain, chunk_bytes, window, most, c_walker, where):
    """Differential: chunk sizes from one record a chunk to the whole file, with and without the C walker, the
    Reassembler's window and datagram limit as small as 2 packets and 1 datagram: the carried check (--jobs 1),
    the stitched parts (--jobs N) and the packet-by-packet rows (--format jsonl) all equal the whole check."""
    records = [(1, f, orig) for f, orig in pieces]
    records[where:where] = [(link, f, len(f)) for link, f in plain]
    data = pcapng_bytes(records)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reassembly, "WINDOW", window)
        patch.setattr(reassembly, "MAX_DATAGRAMS", most)
        if not c_walker:
            patch.setattr(engine, "cwalk", None)
        whole = check(pcap.parse(data))
        chunks = _chunked(data, chunk_bytes)
        _same(_carried(chunks), whole)
        _same(_stitched(chunks)[0], whole)
        rows, want = [], []
        _carried(chunks, sink=lambda i, results: rows.append((i, results)))
        check(pcap.parse(data), sink=lambda i, results: want.append((i, results)))
        assert rows == want


ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _repeated_key(v6: bool, n: int = 30, lost: tuple[int, ...] = (4, 11, 17)) -> bytes:
    """``n`` two-fragment UDP datagrams under one key (same addresses and identification, as a generator or a
    replayed capture sends them), each followed by a plain packet; the last five with a wrong UDP checksum (the C
    walker leaves a key to the Python walker from its first failing datagram on); the datagrams ``lost`` lose their
    last fragment. The payloads differ, so a first fragment joined to another datagram's last fails."""
    out = []
    for i in range(n):
        udp = UDP(sport=9, dport=1000, chksum=0x1234 if i >= n - 5 else None) / Raw(bytes([i]) * 300)
        if v6:
            dgram = IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrFragment(id=77) / udp
            pieces = [raw(ETH / f) for f in fragment6(dgram, 250)]
        else:
            pieces = [raw(ETH / f) for f in fragment(IP(src="192.0.2.1", dst="198.51.100.2", id=77) / udp,
                                                    fragsize=200)]
        out += pieces[:1] if i in lost else pieces
        out.append(raw(ETH / IP(src="192.0.2.9", dst="192.0.2.10") / UDP() / Raw(b"x" * i)))
    return pcapng_bytes([(1, f, len(f)) for f in out])


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
def test_one_key_across_every_boundary(v6):
    """Datagrams that reuse one key, cut at every chunk size from a record a chunk on: the carried check and the
    stitched parts give the whole check's report (scapy's wrong 0x1234 in five datagrams found; a datagram that lost
    its last fragment fails when the next one's first fragment overlaps it with other bytes, and that one starts the
    next datagram), and stitching needs to check chunks again."""
    data = _repeated_key(v6)
    rows: list = []
    whole = check(pcap.parse(data), sink=lambda i, results: rows.extend(r.reason for r in results))
    # 30 plain packets; of the 25 good datagrams, the three that lost their last fragment are not verified
    # (reassembly-failed: the next datagram's first fragment overlaps theirs with other bytes), and the three after
    # them are verified whole (scapy gave their checksums)
    assert whole.counts["udp"]["ok"] == 30 + 25 - 3 and whole.counts["udp"]["bad"] == 5
    assert {r.stored for _, r in whole.bad} == {0x1234}
    assert (rows.count("reassembly-failed"), rows.count("needs-reassembly")) == (3, 0)
    assert rows.count("non-first-fragment") == 30 - 3
    rechecked = 0
    for chunk_bytes in (1, 97, 250, 600, 1500, 1 << 20):
        chunks = _chunked(data, chunk_bytes)
        _same(_carried(chunks), whole)
        report, again = _stitched(chunks)
        _same(report, whole)
        rechecked += again
    assert rechecked


def test_fix_corrects_a_datagram_split_across_chunks(tmp_path):
    """A datagram whose first fragment (holding the UDP field) ends one chunk and whose last starts the next, its
    UDP checksum wrong: verify says bad, with scapy's checksum of the datagram as ``computed``, and fix writes
    that value into the first fragment, at --jobs 1 and 2, the copy equal to the whole-file fix."""
    dgram = IP(src="192.0.2.1", dst="198.51.100.2", id=5) / UDP(sport=1, dport=2) / Raw(bytes(range(200)) * 2)
    right = IP(raw(dgram))[UDP].chksum  # scapy's
    dgram[UDP].chksum = right ^ 0xFF
    pieces = [raw(ETH / f) for f in fragment(dgram, fragsize=240)]
    filler = raw(ETH / IP(src="192.0.2.9", dst="192.0.2.10") / UDP() / Raw(b"abc"))
    data = pcapng_bytes([(1, f, len(f)) for f in [filler, pieces[0], pieces[1], filler]])
    path = tmp_path / "split.pcapng"
    path.write_bytes(data)
    chunk_bytes = _split(data, 2)
    whole = check(pcap.parse(data))
    for jobs in (1, 2):
        written: list[bytes] = []
        got = scan(str(path), jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True,
                   sink=type("S", (), {"write": staticmethod(written.append)})())
        assert [(i, r.layer, r.stored, r.computed) for i, r in got.report.bad] == [(1, "udp", right ^ 0xFF, right)]
        assert dataclasses.asdict(got.report) == dataclasses.asdict(whole) | {"fast": got.report.fast}
        fixed = b"".join(written)
        assert fixed == pcap.patched(pcap.parse(data), whole.patches)
        again = check(pcap.parse(fixed))
        assert not again.bad and again.counts["udp"]["ok"] == 3


def _split(data: bytes, first: int) -> int:
    """A chunk size that makes packet ``first`` begin the second chunk."""
    return next(n for n in range(64, len(data)) if [c.first_index for c in _chunked(data, n)][:2] == [0, first])


def _cut(cap: pcap.Capture, at: int) -> list[pcap.Capture]:
    """``cap`` as two chunks, the second from packet ``at`` on (both over the same bytes)."""
    def part(lo: int, hi: int) -> pcap.Capture:
        return pcap.Capture(cap.data, cap.format, cap.offsets[lo:hi], cap.caplens[lo:hi], cap.origlens[lo:hi],
                            cap.linktypes[lo:hi], first_index=lo)
    return [part(0, at), part(at, len(cap))]


def _udp_fragments(ident: int, fill: int) -> list[bytes]:
    dgram = IP(src="192.0.2.1", dst="198.51.100.2", id=ident) / UDP(sport=1, dport=2) / Raw(bytes([fill]) * 300)
    return [raw(ETH / f) for f in fragment(dgram, fragsize=200)]


@pytest.mark.parametrize("c_walker", [True, False], ids=["c-walker", "python"])
def test_limits_apply_across_a_boundary(c_walker, monkeypatch):
    """The Reassembler's limits count what is pending from the chunk before: with room for one datagram, a
    datagram begun in the first chunk is given up when another begins in the second (its last fragment then has
    no first; scapy's checksums: only the second datagram is verified); with a window of 3 packets, a last
    fragment 3 packets after its first is too late. Carried and stitched checks give the whole check's report."""
    if not c_walker:
        monkeypatch.setattr(engine, "cwalk", None)
    d, e = _udp_fragments(1, 0xAA), _udp_fragments(2, 0xBB)
    data = pcapng_bytes([(1, f, len(f)) for f in [d[0], e[0], e[1], d[1]]])
    for name, value, verified in (("MAX_DATAGRAMS", 1, 1), ("WINDOW", 3, 1), ("WINDOW", 4, 2)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reassembly, name, value)
            whole = check(pcap.parse(data))
            assert whole.counts["udp"]["ok"] == verified, (name, value)
            chunks = _cut(pcap.parse(data), 1)
            _same(_carried(chunks), whole)
            _same(_stitched(chunks)[0], whole)


@pytest.mark.parametrize("fix", [False, True], ids=["verify", "fix"])
def test_scan_holds_a_bounded_number_of_chunks(fix, tmp_path, monkeypatch):
    """scan() keeps no chunk it is done with: verify none at all, fix only those a pending datagram may still
    patch, at most the window (made 40 packets here) after a datagram that never completes; the fixed copy is
    the whole-file fix all the same. (A verify that kept every chunk grew to 5.8 GiB on a 4 GiB capture.)"""
    import weakref

    from csum.capture import scan as scan_module

    monkeypatch.setattr(reassembly, "WINDOW", 40)
    lost = _udp_fragments(9, 0xCC)[:1]  # its last fragment never comes
    filler = [raw(ETH / IP(src="192.0.2.9", dst="192.0.2.10") / UDP(chksum=0x4321) / Raw(bytes([i % 256]) * 40))
              for i in range(300)]
    data = pcapng_bytes([(1, f, len(f)) for f in filler[:5] + lost + filler[5:]])
    path = tmp_path / "long.pcapng"
    path.write_bytes(data)
    alive: list[weakref.ref] = []
    most = [0]
    def counting(real):
        def chunks(self, *args):
            for chunk in real(self, *args):
                alive.append(weakref.ref(chunk))
                most[0] = max(most[0], sum(r() is not None for r in alive))
                yield chunk
        return chunks

    # verify maps the file (Reader.mapped), fix reads it (iterating the Reader)
    monkeypatch.setattr(scan_module.pcap.Reader, "__iter__", counting(pcap.Reader.__iter__))
    monkeypatch.setattr(scan_module.pcap.Reader, "mapped", counting(pcap.Reader.mapped))
    written: list[bytes] = []
    sink = type("S", (), {"write": staticmethod(written.append)})() if fix else None
    got = scan(str(path), jobs=1, chunk_bytes=200, sink=sink, keep_patches=True)
    assert len(alive) > 100 and got.report.total("bad") == 300
    chunk_packets = len(filler) / len(alive)
    assert most[0] <= (40 / chunk_packets + 3 if fix else 3), (most[0], chunk_packets)
    if fix:
        assert b"".join(written) == pcap.patched(pcap.parse(data), check(pcap.parse(data)).patches)
