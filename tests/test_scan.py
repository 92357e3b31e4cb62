"""csum/scan.py and csum/parallel.py: chunked and parallel checking give the whole-file report.

Reference: csum._cli_verify.check on the whole capture read at once (csum.pcap.read),
itself checked against scapy and csum.inet in tests/test_pcap.py; the packets are
built by scapy, with known fields overwritten.
"""

from __future__ import annotations

import dataclasses
import gzip

import pytest
from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw

from captures import pcap_bytes
from csum import pcap
from csum._cli_verify import check
from csum.scan import merged, scan

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


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
    whole-file check's; the sink receives the whole-file patched copy."""
    data = _capture()
    path = tmp_path / "c.pcap"
    path.write_bytes(data)
    whole = check(pcap.read(path))
    assert whole.bad and whole.malformed and whole.cut
    out = []
    got = scan(str(path), jobs=jobs, chunk_bytes=chunk_bytes, keep_patches=True, sink=type("S", (), {
        "write": staticmethod(out.append)})())
    assert dataclasses.asdict(got.report) == dataclasses.asdict(whole)
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
