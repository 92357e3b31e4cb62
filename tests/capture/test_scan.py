"""csum/capture/scan.py and csum/capture/parallel.py: chunked and parallel checking give the whole-file report.

Reference: csum.capture.checker.check on the whole capture read at once (csum.pcap.read),
itself checked against scapy and csum.inet in tests/capture/test_pcap.py; the packets are
built by scapy, with known fields overwritten.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import struct

import pytest
from captures import epb, idb, other, pb, pcap_bytes, shb, spb
from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw, fragment

from csum import engine
from csum.capture import checker, parallel, pcap
from csum.capture.checker import check
from csum.capture.scan import merged, scan

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _findings(report) -> dict:
    """Every Report field but ``fast``: which packets the C walker takes depends on where chunks begin (a datagram
    split across chunks is reassembled by the walker in one run, by C in another)."""
    return {k: v for k, v in dataclasses.asdict(report).items() if k != "fast"}


def _capture(n: int = 400) -> bytes:
    pkts = []
    for i in range(n):
        l3 = IP(src="192.0.2.1", dst="198.51.100.2") if i % 2 else IPv6(src="2001:db8::1", dst="2001:db8::2")
        p = bytearray(bytes(ETH / l3 / (TCP() if i % 3 else UDP()) / Raw(bytes(i % 50))))
        if i % 11 == 5:
            p[-1] ^= 0xFF  # checksum now wrong (payload changed)
        if i % 97 == 13:
            p[14] = 0x43 if i % 2 else p[14]  # IPv4 IHL 3: malformed
        pkts.append(bytes(p))
    origlens = [len(p) + (9 if i % 50 == 1 else 0) for i, p in enumerate(pkts)]
    return pcap_bytes(pkts, origlens=origlens)


@pytest.mark.parametrize("jobs,chunk_bytes", [(1, 300), (2, 300), (2, 5000), (2, 1 << 20)])
def test_scan_equals_the_whole_file_check(jobs, chunk_bytes, tmp_path):
    """Every Report field (bad, malformed, cut, counts, patches ...) of the chunked (and parallel) scan is the
    whole-file check's; the sink receives the whole-file patched copy. Also with IPv4 fragments, some of their
    datagrams split across chunks (``fast`` aside, see _findings)."""
    for data, fragments in ((_capture(), False), (pcap_bytes(_mixed()), True)):
        path = tmp_path / "c.pcap"
        path.write_bytes(data)
        whole = check(pcap.read(path))
        assert whole.bad and (whole.malformed and whole.cut or fragments)
        out = []
        got = scan(str(path), jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True, sink=type("S", (), {
            "write": staticmethod(out.append)})())
        assert _findings(got.report) == _findings(whole)
        assert fragments or got.report.fast == whole.fast
        assert b"".join(out) == pcap.patched(pcap.read(path), whole.patches)
        assert got.patched == len(whole.patches) and got.stop is None


def test_merged_scans_add_up(tmp_path):
    """merged(): packets and bad checksums of two files add up; the gzip copy scans like the original."""
    path, packed = tmp_path / "a.pcap", tmp_path / "b.pcap.gz"
    path.write_bytes(_capture(100))
    packed.write_bytes(gzip.compress(_capture(100)))
    a, b = scan(str(path)), scan(str(packed))
    assert b.compression == "gzip" and dataclasses.asdict(a.report) == dataclasses.asdict(b.report)
    total = merged([a, b]).report
    assert total.packets == 200 and len(total.bad) == 2 * len(a.report.bad)


# --- the index path of --jobs (a regular file: each process reads its own chunks) ---------------------

def _mixed(n: int = 120) -> list[bytes]:
    """Packets with bad checksums, cut packets and IPv4 fragments (some datagrams straddle a small chunk)."""
    pkts = []
    for i in range(n):
        if i % 17 == 3:
            bad = i % 2
            whole = ETH / IP(src="192.0.2.1", dst="198.51.100.2", id=i) / UDP(chksum=0x1234 if bad else None) \
                / Raw(bytes(range(256)) * 2)
            pkts += [bytes(f) for f in fragment(whole, fragsize=200)]
            continue
        l3 = IP(src="192.0.2.1", dst="198.51.100.2") if i % 2 else IPv6(src="2001:db8::1", dst="2001:db8::2")
        p = bytearray(bytes(ETH / l3 / (TCP() if i % 3 else UDP()) / Raw(bytes(i % 50))))
        if i % 11 == 5:
            p[-1] ^= 0xFF
        pkts.append(bytes(p))
    return pkts


def _files() -> dict[str, bytes]:
    pkts = _mixed()
    ng = shb() + idb(1, snaplen=65535) + idb(101)
    ng += b"".join(epb(p) if i % 5 else epb(p[14:], 1) for i, p in enumerate(pkts[:60]))
    ng += other(5, b"\0" * 20) + spb(pkts[60]) + pb(pkts[61])
    ng += shb(">") + idb(101, ">") + idb(1, ">") + b"".join(epb(p, 1, ">") for p in pkts[62:])
    return {"pcap-le": pcap_bytes(pkts, origlens=[len(p) + (i % 23 == 1) for i, p in enumerate(pkts)]),
            "pcap-be-ns": pcap_bytes(pkts, endian=">", nano=True),
            "pcapng": ng, "pcap-truncated": pcap_bytes(pkts)[:-30],
            # record 70 announces 2 GiB: the reading stops there, nothing after it is read
            "pcap-damaged": pcap_bytes(pkts[:70]) + struct.pack("<IIII", 0, 0, 1 << 31, 1 << 31)
            + pcap_bytes(pkts[70:])[24:]}


NAMES = ["pcap-le", "pcap-be-ns", "pcapng", "pcap-truncated", "pcap-damaged"]


@pytest.mark.parametrize("name", NAMES)
def test_spans_give_the_chunks_iterating_gives(name):
    """Reader.spans(): each span walked again from the file's bytes is the chunk iterating a Reader over the same
    bytes yields (packets, file offsets, lengths, link types, numbers); stop and packet count are the same, at
    several chunk sizes (1 byte: every record its own chunk)."""
    data = _files()[name]
    for chunk_bytes in (1, 300, 2000, 1 << 20):
        reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
        chunks = [c for c in reader if len(c)]
        spanner = pcap.Reader(io.BytesIO(data), chunk_bytes)
        got = [span.capture(lambda at, n: data[at : at + n]) for span in spanner.spans()]
        assert len(got) == len(chunks)
        for mine, theirs in zip(got, chunks):
            assert mine.first_index == theirs.first_index and mine.format == theirs.format
            assert [bytes(mine.packet(i)) for i in range(len(mine))] == \
                [bytes(theirs.packet(i)) for i in range(len(theirs))]
            assert (mine.base + mine.offsets).tolist() == (theirs.base + theirs.offsets).tolist()
            for col in ("caplens", "origlens", "linktypes"):
                assert getattr(mine, col).tolist() == getattr(theirs, col).tolist()
        assert (spanner.stop, spanner.packets) == (reader.stop, reader.packets)
        assert (reader.stop is not None) == (name in ("pcap-truncated", "pcap-damaged"))
        assert reader.stop is None or reader.stop.truncated == (name == "pcap-truncated")


@pytest.mark.parametrize("name", NAMES)
def test_mapped_gives_the_chunks_iterating_gives(name):
    """Reader.mapped() over the file's bytes yields the chunks iterating a Reader over the same bytes yields (the
    same records split at the same places: packets, file offsets, lengths, link types, numbers; empty chunks too),
    each holding the file from its start; stop and packet count are the same, at several chunk sizes."""
    data = _files()[name]
    for chunk_bytes in (1, 300, 2000, 1 << 20):
        reader = pcap.Reader(io.BytesIO(data), chunk_bytes)
        chunks = list(reader)
        mapper = pcap.Reader(io.BytesIO(data), chunk_bytes)
        got = list(mapper.mapped(memoryview(data)))
        assert len(got) == len(chunks)
        for mine, theirs in zip(got, chunks):
            assert mine.base == 0 and bytes(mine.data) == data[: len(mine.data)]
            assert len(mine.data) == theirs.base + len(theirs.data)
            assert mine.first_index == theirs.first_index and mine.format == theirs.format
            assert [bytes(mine.packet(i)) for i in range(len(mine))] == \
                [bytes(theirs.packet(i)) for i in range(len(theirs))]
            assert mine.offsets.tolist() == (theirs.base + theirs.offsets).tolist()
            for col in ("caplens", "origlens", "linktypes"):
                assert getattr(mine, col).tolist() == getattr(theirs, col).tolist()
        assert (mapper.stop, mapper.packets) == (reader.stop, reader.packets)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunk_bytes", [1, 300, 700, 5000])
def test_a_mapped_file_checks_as_a_read_one(name, chunk_bytes, tmp_path, monkeypatch):
    """scan(jobs=1) of a regular file maps it (the Reader is not iterated) and gives the Report and stop of the
    same capture read from a stream (gzip-compressed: the reading path), fragments carried across chunks
    included."""
    data = _files()[name]
    packed = tmp_path / "c.pcap.gz"
    packed.write_bytes(gzip.compress(data))
    read = scan(str(packed), jobs=1, chunk_bytes=chunk_bytes)
    path = tmp_path / "c.pcap"
    path.write_bytes(data)

    def refuse(_self):
        raise AssertionError("a regular file was read, not mapped")

    monkeypatch.setattr(pcap.Reader, "__iter__", refuse)
    mapped = scan(str(path), jobs=1, chunk_bytes=chunk_bytes)
    assert mapped.report.bad and _findings(mapped.report) == _findings(read.report)
    assert (mapped.stop, mapped.format, mapped.compression) == (read.stop, read.format, None)


def test_a_mapped_file_leaves_memory_chunk_by_chunk(tmp_path, monkeypatch):
    """scan's done() for Reader.mapped (the pages of the chunks already checked leave the process: MADV_DONTNEED)
    is called once per chunk after the first, with the end of the chunk before (the ends iterating a Reader gives),
    in file order; the report is still the one of the same capture read from a stream (gzip), the fragments carried
    across chunks read again from the page cache."""
    from csum.capture import scan as scan_module

    data = pcap_bytes(_mixed(3000))
    path, packed = tmp_path / "c.pcap", tmp_path / "c.pcap.gz"
    path.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    ends: list[int] = []
    real = scan_module._dropper

    def recording(mapped):
        done = real(mapped)
        assert done is not None  # Linux has madvise and MADV_DONTNEED

        def spy(end):
            ends.append(end)
            done(end)
        return spy

    monkeypatch.setattr(scan_module, "_dropper", recording)
    got = scan(str(path), jobs=1, chunk_bytes=20000)
    chunks = [c.base + len(c.data) for c in pcap.Reader(io.BytesIO(data), 20000)]
    assert len(chunks) > 10 and ends == chunks[: len(ends)] and len(ends) >= len(chunks) - 1
    assert _findings(got.report) == _findings(scan(str(packed), jobs=1, chunk_bytes=20000).report)


@pytest.mark.parametrize("keep", [0, 1, 3, 7, 40])
@pytest.mark.parametrize("chunk_bytes", [300, 5000, 1 << 20])
def test_keep_makes_only_the_results_it_keeps(keep, chunk_bytes, tmp_path):
    """scan(keep=k) (the CLI's --show) lists the first k bad and offload fields of the whole-file check and counts the
    rest: the C walker's chunks make no Result past k (csum/capture/fastpath.py c_fast), the Python walker's packets
    (malformed, cut, fragments across chunks) still come in packet order. Expected: the report with every item kept
    (keep None), itself the whole-file check's (test_scan_equals_the_whole_file_check)."""
    for data in (_capture(), pcap_bytes(_mixed()), _files()["pcapng"]):
        path = tmp_path / "c.pcap"
        path.write_bytes(data)
        every = scan(str(path), jobs=1, chunk_bytes=chunk_bytes).report
        assert every.total("bad") > 7
        got = scan(str(path), jobs=1, chunk_bytes=chunk_bytes, keep=keep).report
        for name in ("bad", "offload", "malformed", "cut"):
            assert getattr(got, name) == getattr(every, name)[:keep], name
            assert got.total(name) == every.total(name), name
        assert got.counts == every.counts and got.fast == every.fast


@pytest.mark.skipif(engine.cwalk is None, reason="the C walker is not built")
def test_keep_makes_no_result_past_k_over_many_chunks(monkeypatch, tmp_path):
    """With keep=k, the C walker's chunks together make the Results of at most k packets with a bad field and k with an
    offload one (a chunk counts what the chunks before it listed: csum/capture/checker.py Checker.listed), however
    many chunks the capture has; the report is still the one with every item kept (keep None), cut to k."""
    path = tmp_path / "c.pcap"
    path.write_bytes(pcap_bytes(_mixed()))
    monkeypatch.setattr(checker, "one_by_one", lambda packets: False)  # every chunk to C at once, numpy or not
    every = scan(str(path), jobs=1, chunk_bytes=300).report
    made = []
    real = engine.cwalk
    monkeypatch.setattr(engine, "cwalk", type("Counting", (), {
        "__getattr__": lambda self, name: getattr(real, name),
        "results": lambda self, kept: made.append(1) or real.results(kept)})())
    got = scan(str(path), jobs=1, chunk_bytes=300, keep=2).report
    assert every.total("bad") > 7 and 0 < len(made) <= 4
    for name in ("bad", "offload"):
        assert getattr(got, name) == getattr(every, name)[:2] and got.total(name) == every.total(name), name


def test_a_file_changed_under_the_reader_is_an_error():
    """A span whose bytes no longer hold its records (the file was rewritten meanwhile) raises, never mis-checks."""
    data = _files()["pcap-le"]
    span = next(iter(pcap.Reader(io.BytesIO(data), 300).spans()))
    with pytest.raises(pcap.CsumValueError, match="changed while it was read"):
        span.capture(lambda at, n: data[at : at + n - 1])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunk_bytes", [700, 5000])
def test_jobs_on_a_file_equals_serial(name, chunk_bytes, tmp_path, monkeypatch):
    """scan(jobs=2) of a regular file goes through the index path (the pipe path is not called) and gives the
    serial scan's Report and stop, fragments (some across chunks), bad, cut and patches included."""
    path = tmp_path / "c"
    path.write_bytes(_files()[name])
    serial = scan(str(path), jobs=1, chunk_bytes=chunk_bytes, keep_patches=True)
    assert serial.report.bad and serial.report.counts["udp"]["ok"]

    def refuse(*_args, **_kwargs):
        raise AssertionError("--jobs 2 on a regular file read the chunks in the parent")

    monkeypatch.setattr(parallel, "checked", refuse)  # csum.capture.scan takes it from there when it runs
    for jobs in (2, 3):
        par = scan(str(path), jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True)
        assert _findings(par.report) == _findings(serial.report)
        assert (par.stop, par.format) == (serial.stop, serial.format)


def test_jobs_on_a_capture_without_packets(tmp_path):
    """A pcap with its file header only, and one with a single packet: --jobs 2 gives the serial report."""
    for data in (pcap_bytes([]), pcap_bytes(_mixed(1))):
        path = tmp_path / "small.pcap"
        path.write_bytes(data)
        one, two = scan(str(path), jobs=1), scan(str(path), jobs=2)
        assert dataclasses.asdict(one.report) == dataclasses.asdict(two.report)
        assert one.report.packets == two.report.packets == len(pcap.parse(data))


def _pid_and_square(k: int) -> tuple[int, int]:
    import os

    return os.getpid(), k * k


def _fails_on_three(k: int) -> int:
    if k == 3:
        raise ValueError("three")
    return k


def test_each_item_spreads_items_over_processes_in_order():
    """parallel.each_item (csum verify's small files across processes): the results are [fn(x) for x in items] in
    order (squares computed by Python here), from 3 worker processes (each takes an item at the start, so 3
    distinct pids, none the caller's); jobs 1 or one item runs here; a worker's exception is raised here."""
    import os

    got = parallel.each_item(list(range(20)), _pid_and_square, 3)
    assert [sq for _, sq in got] == [k * k for k in range(20)]
    pids = {pid for pid, _ in got}
    assert len(pids) == 3 and os.getpid() not in pids
    assert {pid for pid, _ in parallel.each_item([1, 2], _pid_and_square, 1)} == {os.getpid()}
    assert {pid for pid, _ in parallel.each_item([1], _pid_and_square, 4)} == {os.getpid()}
    with pytest.raises(ValueError, match="three"):
        parallel.each_item(list(range(6)), _fails_on_three, 2)


@pytest.mark.parametrize("jobs,chunk_bytes", [(1, 300), (2, 5000)])
def test_options_object_is_the_keywords(jobs, chunk_bytes, tmp_path):
    """``scan(name, ScanOptions(...))``, ``scan(name, **keywords)`` and the object with keywords on top give the same
    report (reference: the whole-file check, as above); an unknown keyword or a field of the wrong kind is one
    CsumError naming it."""
    from csum.errors import CsumError
    from csum.scan import ScanOptions

    path = tmp_path / "c.pcap"
    path.write_bytes(_capture())
    whole = _findings(check(pcap.read(path)))
    options = ScanOptions(jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True)
    assert _findings(scan(str(path), options).report) == whole
    assert _findings(scan(str(path), jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True).report) == whole
    assert _findings(scan(str(path), ScanOptions(jobs=jobs), chunk_bytes=chunk_bytes,
                          keep_patches=True).report) == whole
    assert options.but(jobs=1) == ScanOptions(chunk_bytes=chunk_bytes, keep_patches=True)
    for bad, name in ((dict(chunk_size=4), "chunk_size"), (dict(hosts=1), "hosts"), (dict(keep=-1), "keep")):
        with pytest.raises(CsumError, match=name):
            scan(str(path), **bad)
        with pytest.raises(CsumError, match=name):
            scan(str(path), options, **bad)
    with pytest.raises(CsumError, match="options"):
        scan(str(path), {"jobs": 2})
