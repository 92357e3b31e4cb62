"""csum/core/pseudo.py: pseudo-header sums against scapy and against lib/checksum.c compiled outside the repo.

For every packet kind scapy builds, the L4 checksum scapy writes into raw(pkt)
must equal csum_tcpudp_magic / csum_ipv6_magic over the segment with a zeroed
checksum field (UDP's computed 0 sent as 0xffff, RFC 768).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracle import rfc1071_checksum
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.packet import Raw
from vectors import ROOT, _rows

import csum

ADDR4 = st.sampled_from(["192.0.2.1", "198.51.100.200", "0.0.0.0", "255.255.255.255", "203.0.113.9"])
ADDR6 = st.sampled_from(["2001:db8::1", "fe80::1", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8:0:1::ff"])
PAYLOAD = st.binary(min_size=0, max_size=1500) | st.integers(0, 1500).map(lambda n: b"\xff" * n)


def _le_sum16_to_wire(value: int) -> bytes:
    return value.to_bytes(2, "little")


def _l4_checksum_v4(ip_bytes: bytes, proto: int) -> bytes:
    ihl = (ip_bytes[0] & 0xF) * 4
    seg = bytearray(ip_bytes[ihl:])
    off = {6: 16, 17: 6}[proto]
    seg[off : off + 2] = b"\0\0"
    value = csum.csum_tcpudp_magic(ip_bytes[12:16], ip_bytes[16:20], len(seg), proto, csum.csum_partial(seg))
    if proto == 17 and value == 0:
        value = csum.CSUM_MANGLED_0
    return _le_sum16_to_wire(value)


@given(ADDR4, ADDR4, st.sampled_from([6, 17]), PAYLOAD, st.booleans())
def test_ipv4_tcp_udp_checksum_equals_scapy(src, dst, proto, payload, options):
    """TCP/UDP over IPv4 (with and without IP options): csum_tcpudp_magic == the checksum scapy writes."""
    l4 = TCP(sport=1234, dport=80) if proto == 6 else UDP(sport=53, dport=5353)
    ip = IP(src=src, dst=dst, options=b"\x01\x01\x01\x00" if options else b"")
    raw = bytes(ip / l4 / Raw(payload))
    ihl = (raw[0] & 0xF) * 4
    off = ihl + (16 if proto == 6 else 6)
    assert _l4_checksum_v4(raw, proto) == raw[off : off + 2]
    assert csum.ip_fast_csum(raw, raw[0] & 0xF) == 0


@given(PAYLOAD)
def test_icmp_checksum_equals_scapy(payload):
    """ICMPv4 has no pseudo-header: ip_compute_csum of the message == scapy's checksum."""
    raw = bytes(IP(src="192.0.2.1", dst="192.0.2.2") / ICMP(id=7, seq=1) / Raw(payload))
    msg = bytearray(raw[20:])
    stored = bytes(msg[2:4])
    msg[2:4] = b"\0\0"
    assert _le_sum16_to_wire(csum.ip_compute_csum(msg)) == stored


@given(ADDR6, ADDR6, st.sampled_from([6, 17, 58]), PAYLOAD)
def test_ipv6_checksums_equal_scapy(src, dst, proto, payload):
    """TCP/UDP/ICMPv6 over IPv6: csum_ipv6_magic == scapy's checksum (UDP 0 -> 0xffff, RFC 8200 8.1)."""
    l4 = {6: TCP(sport=1, dport=2), 17: UDP(sport=3, dport=4), 58: ICMPv6EchoRequest(id=5, seq=6)}[proto]
    raw = bytes(IPv6(src=src, dst=dst) / l4 / Raw(payload))
    seg = bytearray(raw[40:])
    off = {6: 16, 17: 6, 58: 2}[proto]
    stored = bytes(seg[off : off + 2])
    seg[off : off + 2] = b"\0\0"
    value = csum.csum_ipv6_magic(raw[8:24], raw[24:40], len(seg), proto, csum.csum_partial(seg))
    if proto == 17 and value == 0:
        value = csum.CSUM_MANGLED_0
    assert _le_sum16_to_wire(value) == stored


def test_ipv6_jumbo_length_is_32_bits():
    """RFC 2675: the upper-layer length above 65535 enters the pseudo-header as 32 bits (oracle: word sum)."""
    saddr, daddr = bytes(16), bytes(15) + b"\x01"
    length = 0x12345
    words = saddr + daddr + length.to_bytes(4, "big") + (17).to_bytes(4, "big")
    expected = rfc1071_checksum(words)
    got = csum.csum_ipv6_magic(saddr, daddr, length, 17)
    assert int.from_bytes(got.to_bytes(2, "little"), "big") == expected


TCPUDP = [r for r in _rows(ROOT / "helpers" / "generic.txt") if r[0] == "csum_tcpudp_nofold"]


def test_csum_tcpudp_nofold_matches_kernel():
    """500 cases of lib/checksum.c csum_tcpudp_nofold compiled outside the repo (helpers/generic.txt)."""
    bad = []
    for _, saddr, daddr, length, proto, wsum, result in TCPUDP:
        got = csum.csum_tcpudp_nofold(bytes.fromhex(saddr), bytes.fromhex(daddr), int(length), int(proto),
                                      int(wsum, 16))
        if got != int(result, 16):
            bad.append((saddr, daddr, length, proto, wsum, result, hex(got)))
    assert len(TCPUDP) == 500 and not bad[:3]


@pytest.mark.parametrize("kwargs,name", [
    ({"saddr": b"\0" * 5}, "saddr"), ({"daddr": "not-an-ip"}, "daddr"), ({"length": -1}, "length"),
    ({"proto": 256}, "proto"), ({"wsum": 1 << 32}, "wsum"),
])
def test_bad_pseudo_header_arguments_are_named(kwargs, name):
    """Each bad argument raises a TypeError/ValueError whose message names it."""
    args = {"saddr": "192.0.2.1", "daddr": "192.0.2.2", "length": 8, "proto": 17, "wsum": 0} | kwargs
    with pytest.raises((TypeError, ValueError), match=name):
        csum.csum_tcpudp_nofold(**args)


def test_csum_tcpudp_nofold_takes_be32_ints_like_the_kernel():
    """The kernel's saddr/daddr are __be32: the 4 address bytes loaded as a little-endian u32 here.

    Expected values: the lib/checksum.c cases of helpers/generic.txt (compiled outside the repo),
    whose header says the addresses are those bytes in memory order; each passed as that int, as
    a string and as an ipaddress object gives the kernel's result.
    """
    import ipaddress

    for _, saddr, daddr, length, proto, wsum, result in TCPUDP[:100]:
        s, d = bytes.fromhex(saddr), bytes.fromhex(daddr)
        for form in (lambda b: int.from_bytes(b, "little"), lambda b: str(ipaddress.IPv4Address(b)),
                     ipaddress.IPv4Address):
            got = csum.csum_tcpudp_nofold(form(s), form(d), int(length), int(proto), int(wsum, 16))
            assert got == int(result, 16), (saddr, daddr)
    assert csum.csum_tcpudp_magic(0x010200C0, "192.0.2.2", 8, 17) == csum.csum_tcpudp_magic("192.0.2.1",
                                                                                             "192.0.2.2", 8, 17)


@pytest.mark.parametrize("value, error, message", [
    ("nonsense", csum.CsumValueError, r"^saddr must be an IPv4 address \(a string like 192.0.2.1, an ipaddress "
                                      r"object or its 4 bytes\), got 'nonsense'"),
    ("2001:db8::1", csum.CsumValueError, "^saddr must be an IPv4 address, got '2001:db8::1'"),
    (1.5, csum.CsumTypeError, "^saddr must be an IPv4 address: a string, an ipaddress object, its 4 bytes or a "
                              "__be32 int; not float"),
    (1 << 32, csum.CsumValueError, "^saddr must be an int in 0..0xffffffff"),
])
def test_bad_ipv4_addresses_say_what_works(value, error, message):
    """A bad address names the argument and the accepted forms (strings and ipaddress objects included)."""
    with pytest.raises(error, match=message):
        csum.csum_tcpudp_nofold(value, "192.0.2.2", 8, 17)


@given(ADDR4, ADDR6, PAYLOAD)
def test_bytes_twins_are_the_fields_scapy_writes(src4, src6, payload):
    """csum_tcpudp_magic_bytes / csum_ipv6_magic_bytes / ip_fast_csum_bytes / ip_compute_csum_bytes:
    the field bytes scapy writes into raw(pkt) for TCP over IPv4 and IPv6, the IPv4 header and ICMPv4
    (computed with the field zeroed), with no byte-order step left to the caller."""
    raw = bytearray(bytes(IP(src=src4, dst="192.0.2.2") / TCP(sport=1234, dport=80) / Raw(payload)))
    stored_tcp, stored_ip = bytes(raw[36:38]), bytes(raw[10:12])
    raw[36:38] = raw[10:12] = b"\0\0"
    assert csum.csum_tcpudp_magic_bytes(src4, "192.0.2.2", len(raw) - 20, 6, csum.csum_partial(raw[20:])) == stored_tcp
    assert csum.ip_fast_csum_bytes(raw, 5) == stored_ip
    raw6 = bytearray(bytes(IPv6(src=src6, dst="2001:db8::2") / TCP(sport=1, dport=2) / Raw(payload)))
    stored6 = bytes(raw6[56:58])
    raw6[56:58] = b"\0\0"
    assert csum.csum_ipv6_magic_bytes(src6, "2001:db8::2", len(raw6) - 40, 6, csum.csum_partial(raw6[40:])) == stored6
    icmp = bytearray(raw_icmp := bytes(ICMP(id=7, seq=1) / Raw(payload)))
    icmp[2:4] = b"\0\0"
    assert csum.ip_compute_csum_bytes(icmp) == raw_icmp[2:4]
