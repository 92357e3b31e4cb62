"""Rewrite a TCP 4-tuple (source NAT + destination NAT) with incremental checksum updates.

Builds an Ethernet/IPv4/TCP packet by hand (no scapy needed), rewrites both
addresses and both ports with csum.rewrite, prints the packet before and after
(addresses, ports, checksums, whether each checksum verifies) and the BPF helper
calls a tc program would make for the same rewrite.

    python examples/nat_rewrite.py
"""

from __future__ import annotations

import ipaddress
import struct

from csum import internet_checksum, verify_checksum
from csum.rewrite import rewrite

ETH_HLEN = 14


def build_packet(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    """Ethernet + IPv4 (no options) + TCP (no options) + payload, checksums computed in full."""
    saddr, daddr = ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0x01020304, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
    pseudo = saddr + daddr + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + internet_checksum(pseudo + tcp).to_bytes(2, "big") + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0x1234, 0x4000, 64, 6, 0, saddr, daddr)
    ip = ip[:10] + internet_checksum(ip).to_bytes(2, "big") + ip[12:]
    eth = bytes.fromhex("020000000001" "020000000002" "0800")
    return eth + ip + tcp


def describe(label: str, packet: bytes) -> None:
    """Print the 4-tuple, both checksums and whether they verify."""
    ip = packet[ETH_HLEN:ETH_HLEN + 20]
    tcp = packet[ETH_HLEN + 20:]
    saddr, daddr = ipaddress.IPv4Address(ip[12:16]), ipaddress.IPv4Address(ip[16:20])
    sport, dport = struct.unpack("!HH", tcp[:4])
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 6, len(tcp))
    yes = {True: "yes", False: "no"}
    print(f"{label}: {saddr}:{sport} -> {daddr}:{dport}")
    print(f"  IPv4 header checksum 0x{ip[10:12].hex()}  verifies: {yes[verify_checksum(ip)]}")
    print(f"  TCP checksum         0x{tcp[16:18].hex()}  verifies: {yes[verify_checksum(pseudo + tcp)]}")


def main() -> None:
    before = build_packet("10.0.0.2", "198.51.100.10", 51000, 8080, b"GET / HTTP/1.1\r\n\r\n")
    result = rewrite(before, saddr="203.0.113.7", sport=40000, daddr="192.0.2.80", dport=80)
    describe("before", before)
    describe("after ", result.packet)
    print("BPF helper calls for the same rewrite (offsets from skb->data):")
    for call in result.calls:
        print(f"  {call}")


if __name__ == "__main__":
    main()
