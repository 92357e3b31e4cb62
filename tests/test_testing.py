"""csum/testing.py: the strategies users get are well-formed (checked with scapy, an independent parser)."""

from hypothesis import example, given, settings
from scapy.layers.inet import ICMP, IP
from scapy.layers.inet6 import IPv6
from scapy.packet import Padding

import csum
from csum.testing import buffers, chunked, frames, packets


@settings(max_examples=300)  # scapy parsing dominates the run time
@given(packets())
# hypothesis: scapy 2.8 dissects this 9-byte ICMPv6 MRD Solicitation (type 152) with its last byte as
# Padding and leaves that byte out of the checksum it recomputes; RFC 4443 section 2.3 sums the whole
# message, as csum.inet.verify checks. Packets scapy pads are compared with csum.inet.verify only.
@example(bytes.fromhex("6000000000093a01" + "00" * 32 + "980067bc0000000000"))
# hypothesis: an ICMP destination unreachable whose data scapy dissects as a quoted IP header; deleting that
# quote's checksum made scapy recompute bytes of the ICMP data. Only the packet's own checksums are redone.
@example(bytes(IP(src="0.0.0.0", dst="0.0.0.0", ttl=1) / ICMP(type=3, code=0) / (bytes(16) + bytes(136))))
def test_packets_have_the_checksums_scapy_computes(pkt):
    """Every generated packet equals scapy's rebuild with checksums recomputed from scratch (unless scapy
    dissects part of the packet as Padding), and passes csum.inet.verify."""
    parsed = (IP if pkt[0] >> 4 == 4 else IPv6)(pkt)
    for layer in parsed.layers():
        if "error" in layer.__name__:  # an ICMP error's quoted header (IPerror, UDPerror ...): data, kept as is
            break
        for field in ("chksum", "cksum"):
            if field in parsed[layer].fields:
                delattr(parsed[layer], field)
    if not parsed.haslayer(Padding):
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


def test_import_without_hypothesis_names_the_extra():
    """Without hypothesis, ``import csum.testing`` says which extra to install (hypothesis hidden by a finder)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "class Hide:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'hypothesis' or name.startswith('hypothesis.'):\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Hide())\n"
            "import csum\n"
            "try:\n"
            "    import csum.testing\n"
            "except ModuleNotFoundError as exc:\n"
            "    print(exc.name, '|', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("hypothesis | csum.testing needs hypothesis: pip install 'linux-csum[testing]' "
                                  "(or pip install 'hypothesis>=6.80')")
