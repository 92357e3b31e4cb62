"""csum/testing.py: the strategies users get are well-formed (checked with scapy, an independent parser)."""

from hypothesis import given, settings
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6

import csum
from csum.testing import buffers, chunked, frames, packets


@settings(max_examples=300)  # scapy parsing dominates the run time
@given(packets())
def test_packets_have_the_checksums_scapy_computes(pkt):
    """Every generated packet equals scapy's rebuild with checksums recomputed from scratch."""
    parsed = (IP if pkt[0] >> 4 == 4 else IPv6)(pkt)
    for layer in parsed.layers():
        if hasattr(layer, "chksum") or hasattr(layer, "cksum"):
            for field in ("chksum", "cksum"):
                if field in parsed[layer].fields:
                    delattr(parsed[layer], field)
    assert bytes(parsed) == pkt
    assert all(r.ok for r in csum.inet.verify(pkt))


def _rebuilt_by_scapy(parsed):
    """The packet scapy builds after forgetting every checksum it knows (it recomputes them)."""
    for layer in parsed.layers():
        for name in ("chksum", "cksum"):
            if name in parsed[layer].fields:
                delattr(parsed[layer], name)
    return bytes(parsed)


@settings(max_examples=300)  # scapy dissection dominates
@given(frames())
def test_frames_have_the_checksums_scapy_computes(case):
    """frames(): Ethernet/VLAN/QinQ/MPLS or raw, IPv4 options / IPv6 destination options, IP-in-IP, GRE with
    checksum and VXLAN tunnels: scapy dissects each frame and, recomputing every checksum it knows (IPv4,
    TCP, UDP, ICMP, ICMPv6, GRE; not UDP-Lite), builds the same bytes; csum verifies them all."""
    from scapy.contrib.mpls import MPLS  # noqa: F401  (binds EtherType 0x8847)
    from scapy.layers.inet import GRE  # noqa: F401
    from scapy.layers.l2 import Ether
    from scapy.layers.vxlan import VXLAN  # noqa: F401

    link, frame = case
    parsed = Ether(frame) if link == 1 else (IP if frame[0] >> 4 == 4 else IPv6)(frame)
    assert _rebuilt_by_scapy(parsed) == frame
    assert all(r.status in ("ok", "none") for r in csum.inet.verify(frame, link=link))


@given(chunked())
def test_chunked_joins_back(case):
    buf, chunks = case
    assert b"".join(chunks) == buf and 1 <= len(chunks) <= 20


@given(buffers(max_size=50))
def test_buffers_respect_max_size(buf):
    assert len(buf) <= 50
