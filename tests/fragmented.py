"""A hypothesis strategy of IP fragments as captures hold them: lost, repeated, reordered, overlapping, cut.

Checksums come from scapy (each datagram is built whole by scapy, then cut into fragments by hand), and the
IPv4 header checksum of each fragment from the RFC 1071 model in tests/oracle.py.
"""

from __future__ import annotations

from hypothesis import strategies as st
from oracle import rfc1071_checksum
from scapy.all import ICMP, IP, TCP, UDP, Dot1Q, Ether, ICMPv6EchoRequest, IPv6
from scapy.layers.inet6 import IPv6ExtHdrDestOpt, IPv6ExtHdrFragment

ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


@st.composite
def fragmented(draw):
    """Ethernet (sometimes VLAN-tagged) frames of 1-3 IPv4 or IPv6 datagrams (UDP, TCP, ICMP/ICMPv6, or UDP to the
    VXLAN port; checksums by scapy) cut into fragments by hand, then some dropped, duplicated, reordered,
    overlapped, cut by the snap length or given another datagram's key; (frame, original length) pairs."""
    out = []
    for n in range(draw(st.integers(1, 3))):
        v6 = draw(st.integers(0, 2)) == 0
        proto = draw(st.sampled_from(("udp", "tcp", "icmp", "vxlan")))
        body = draw(st.binary(min_size=0, max_size=90))
        l4 = {"udp": UDP(sport=7), "tcp": TCP(sport=7), "icmp": ICMPv6EchoRequest() if v6 else ICMP(),
              "vxlan": UDP(sport=7, dport=4789) / bytes(8) / bytes(ETH / IP(dst="10.9.9.9") / UDP())}[proto]
        ident = draw(st.sampled_from((1, 1, 2, 3 + n)))
        if v6:  # sometimes a destination options header in the fragmentable part
            after = IPv6ExtHdrDestOpt() / l4 if draw(st.integers(0, 3)) == 0 else l4
            dgram = bytes(IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrFragment(id=ident) / after / body)
            head, data = dgram[:48], dgram[48:]
        else:
            dgram = bytes(IP(src="192.0.2.1", dst="192.0.2.2", id=ident, flags=draw(st.sampled_from((0, 2)))) /
                          l4 / body)
            head, data = dgram[:20], dgram[20:]
        step = 8 * draw(st.integers(1, 6))
        pieces = [(at, data[at : at + step]) for at in range(0, len(data), step)]
        if draw(st.booleans()):
            pieces = draw(st.permutations(pieces))
        for at, piece in pieces:
            if draw(st.integers(0, 9)) == 0:
                continue  # lost
            if draw(st.integers(0, 9)) == 0:
                at += 8  # overlaps the next piece
            more = at + len(piece) < len(data)
            h = bytearray(head)
            if v6:  # payload length; the Fragment header's offset (8-byte units, in place) and M flag
                h[4:6] = (8 + len(piece)).to_bytes(2, "big")
                h[42:44] = (at | more).to_bytes(2, "big")
            else:
                h[2:4] = (20 + len(piece)).to_bytes(2, "big")
                h[6:8] = ((head[6] & 0x40) << 8 | more << 13 | at // 8).to_bytes(2, "big")
                h[10:12] = b"\0\0"
                h[10:12] = rfc1071_checksum(bytes(h)).to_bytes(2, "big")
            ethertype = b"\x86\xdd" if v6 else b"\x08\x00"
            l2 = bytes(ETH / Dot1Q(vlan=5))[:18] if draw(st.booleans()) else bytes(ETH)[:12] + ethertype
            if len(l2) == 18:
                l2 = l2[:16] + ethertype
            frame = l2 + bytes(h) + piece
            for _ in range(1 + (draw(st.integers(0, 9)) == 0)):  # sometimes twice
                cut = draw(st.integers(0, 19)) == 0
                out.append((frame[: len(frame) - 4] if cut and len(frame) > 40 else frame, len(frame)))
    return out
