"""Address rules on ARP and IPv6 Neighbor Discovery (csum/rewrite/apply.py ``_arp`` / ``_ndp``), with the C engine
and with the Python engine alone (the C hands both to Python when addresses are mapped).

Expected values: scapy's rebuild of each frame with the addresses set to their mapped values (``ipaddress``
arithmetic: the new prefix, the old host bits) and the checksums deleted, so ``raw()`` recomputes them; the
``yacryptopan`` package for Crypto-PAn. Against ``tcprewrite --pnat``: test_rewrite_tcprewrite.py.
"""

from __future__ import annotations

import ipaddress

import pytest
from scapy.compat import raw
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import (ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6ND_Redirect, ICMPv6NDOptSrcLLAddr,
                                ICMPv6NDOptDstLLAddr, IPv6)
from scapy.packet import Raw
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN

import csum.engine
from csum.capture import pcap
from csum.rewrite.apply import apply
from csum.rewrite.fast import rewrite_chunk
from csum.rewrite.rules import Rules

E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
OLD4, NEW4, OLD6, NEW6 = "10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32", "2001:db9::/48"


def _mapped(address: str) -> str:
    ip = ipaddress.ip_address(address)
    for old, new in ((OLD4, NEW4), (OLD6, NEW6)):
        o, n = ipaddress.ip_network(old), ipaddress.ip_network(new)
        if ip.version == o.version and ip in o:
            return str(n.network_address + (int(ip) & int(n.hostmask)))
    return address


@pytest.fixture(params=["c", "python"])
def rewritten(request, monkeypatch):
    """The frames (Ethernet) rewritten by the rules with the C engine or with the Python engine alone."""
    if request.param == "python":
        monkeypatch.setattr(csum.engine, "crewrite", None)
    elif csum.engine.crewrite is None:
        pytest.skip("the C extension csum.engine._rewrite is not built")

    def run(frames: list[bytes], rules: Rules) -> list[bytes]:
        chunk = pcap.parse(pcap.to_bytes(frames))
        data, _, _ = rewrite_chunk(chunk, rules)
        return [data[int(chunk.offsets[i]):int(chunk.offsets[i]) + int(chunk.caplens[i])] for i in range(len(chunk))]
    return run


@pytest.mark.parametrize("option", ["map_ip", "map_src", "map_dst"])
def test_arp_sender_is_a_source_and_target_a_destination(rewritten, option):
    """--map-ip maps ARP's sender and target protocol addresses; --map-src the sender's only, --map-dst the
    target's only (the sender is the message's source), on requests, replies and VLAN-tagged frames; the hardware
    addresses and everything else stay. Expected: scapy's frame with those addresses set."""
    frames = [E / ARP(op=1, psrc="10.1.2.3", pdst="10.4.5.6"),
              E / Dot1Q(vlan=9) / ARP(op=2, psrc="10.4.5.6", pdst="203.0.113.9", hwdst="02:00:00:00:00:01"),
              E / ARP(op=1, psrc="198.51.100.7", pdst="10.0.0.1")]
    got = rewritten([raw(f) for f in frames], Rules(**{option: [f"{OLD4}={NEW4}"]}))
    for f, g in zip(frames, got):
        want = f.copy()
        if option != "map_dst":
            want[ARP].psrc = _mapped(f[ARP].psrc)
        if option != "map_src":
            want[ARP].pdst = _mapped(f[ARP].pdst)
        assert g.hex() == raw(want).hex(), f.summary()


@pytest.mark.parametrize("linktype", [113, 276])
def test_arp_on_linux_cooked_captures(linktype):
    """ARP behind a Linux cooked v1 / v2 header (the EtherType at 14 / at 0, the message at 16 / 20), untagged and
    behind an 802.1Q tag: both addresses mapped. Expected: scapy's CookedLinux / CookedLinuxV2 frame with them set."""
    from scapy.layers.l2 import CookedLinux, CookedLinuxV2

    head = CookedLinux(pkttype=0, lladdrtype=1) if linktype == 113 else CookedLinuxV2(pkttype=0, lladdrtype=1)
    for frame in (head / ARP(psrc="10.1.2.3", pdst="10.4.5.6"), head / Dot1Q(vlan=4) / ARP(psrc="10.1.2.3")):
        frame = frame.__class__(raw(frame))
        want = frame.copy()
        want[ARP].psrc, want[ARP].pdst = _mapped(frame[ARP].psrc), _mapped(frame[ARP].pdst)
        assert apply(raw(frame), linktype, Rules(map_ip=[f"{OLD4}={NEW4}"])).hex() == raw(want).hex(), frame.summary()


def test_arp_anonymized_as_yacryptopan_does(rewritten):
    """--anonymize takes ARP's addresses through Crypto-PAn as it does the IP header's: yacryptopan's values."""
    yacryptopan = pytest.importorskip("yacryptopan", reason="yacryptopan (the [test] extra) is not installed")
    key = "ab" * 32
    frame = E / ARP(op=1, psrc="192.0.2.1", pdst="198.51.100.2")
    (got,) = rewritten([raw(frame)], Rules(anonymize=key))
    pan = yacryptopan.CryptoPAn(bytes.fromhex(key))
    want = frame.copy()
    want[ARP].psrc, want[ARP].pdst = pan.anonymize("192.0.2.1"), pan.anonymize("198.51.100.2")
    assert got.hex() == raw(want).hex()


def test_arp_left_by_level_inner_and_cut_by_the_snap_length():
    """--level inner leaves ARP (an outer header) as it is; an ARP cut by the snap length gets what it holds
    mapped (the sender here) and nothing else. Expected: the input bytes, and scapy's frame cut the same way."""
    frame = raw(E / ARP(op=1, psrc="10.1.2.3", pdst="10.4.5.6"))
    assert apply(frame, 1, Rules(map_ip=[f"{OLD4}={NEW4}"], level="inner")) is None
    cut = frame[:14 + 8 + 6 + 4 + 6]  # up to the target's hardware address: no target protocol address
    want = raw(E / ARP(op=1, psrc=_mapped("10.1.2.3"), pdst="10.4.5.6"))[:len(cut)]
    assert apply(cut, 1, Rules(map_ip=[f"{OLD4}={NEW4}"]), wire_len=len(frame)) == want


@pytest.mark.parametrize("option", ["map_ip", "map_src", "map_dst"])
def test_ndp_addresses_mapped_with_the_checksum(rewritten, option):
    """Neighbor Solicitation's target and Redirect's target and destination are destinations, a Neighbor
    Advertisement's target (the sender's own address) a source: each mapped with the header's addresses, and the
    ICMPv6 checksum (and an enclosing VXLAN UDP checksum) as scapy computes it for the mapped frame."""
    ns = ICMPv6ND_NS(tgt="2001:db8::2") / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01")
    frames = [E / IPv6(src="2001:db8::1", dst="ff02::1:ff00:2", hlim=255) / ns,
              E / Dot1Q(vlan=3) / IPv6(src="2001:db8::2", dst="2001:db8::1", hlim=255) / ICMPv6ND_NA(tgt="2001:db8::2"),
              E / IPv6(src="fe80::1", dst="2001:db8::1", hlim=255) / ICMPv6ND_Redirect(tgt="fe80::9",
                                                                                       dst="2001:db8:7::7"),
              E / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=1) / Ether() /
              IPv6(src="2001:db8::5", dst="2001:db8::6", hlim=255) / ICMPv6ND_NS(tgt="2001:db8::6")]
    frames = [Ether(raw(f)) for f in frames]
    got = rewritten([raw(f) for f in frames], Rules(**{option: [f"{OLD6}={NEW6}"]}))
    for f, g in zip(frames, got):
        want = f.copy()
        if option != "map_dst":
            want[IPv6].src = _mapped(want[IPv6].src)
        if option != "map_src":
            want[IPv6].dst = _mapped(want[IPv6].dst)
        for kind, names, source in ((ICMPv6ND_NS, ("tgt",), False), (ICMPv6ND_NA, ("tgt",), True),
                                    (ICMPv6ND_Redirect, ("tgt", "dst"), False)):
            if want.haslayer(kind):
                for name in names:
                    if option == "map_ip" or (option == "map_src") == source:
                        setattr(want[kind], name, _mapped(getattr(want[kind], name)))
                want[kind].cksum = None
        if want.haslayer(UDP):
            want[UDP].chksum = None
        assert g.hex() == raw(want).hex(), f.summary()


def _ndp_with_options(address, v6_src: str = "2001:db8::fe") -> list[bytes]:
    """Neighbor Discovery frames whose options hold IPv6 addresses, each address passed through ``address(value,
    source)`` (``source``: whether the rules' source side maps it), every checksum computed by scapy: a Router
    Advertisement with Prefix Information, DNS servers and Route Information of 0, 8 and 16 prefix bytes; a
    Redirect with a Redirected Header quoting a UDP datagram (its UDP checksum fixed, as a quote keeps it); a
    Neighbor Solicitation with a nonce (no address); an option of length 0, after which nothing is mapped."""
    from scapy.layers.inet6 import (ICMPv6ND_RA, ICMPv6NDOptPrefixInfo, ICMPv6NDOptRDNSS, ICMPv6NDOptRedirectedHdr,
                                    ICMPv6NDOptRouteInfo)

    s, d = (lambda a: address(a, True)), (lambda a: address(a, False))  # noqa: E731
    ra = (IPv6(src="fe80::1", dst="ff02::1", hlim=255) / ICMPv6ND_RA() /
          ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01") /
          ICMPv6NDOptPrefixInfo(prefix=s("2001:db8:1:2::"), prefixlen=64) /
          ICMPv6NDOptRDNSS(dns=[s("2001:db8::53"), s("2001:db8:5::35"), "2001:db7::1"]) /
          ICMPv6NDOptRouteInfo(prefix=s("2001:db8:9:1::"), plen=64) /
          ICMPv6NDOptRouteInfo(prefix=s("2001:db8:9:1::7"), plen=128) / ICMPv6NDOptRouteInfo(plen=0))
    quoted = raw(IPv6(src=d("2001:db8::1"), dst=d("2001:db8:7::7"), hlim=63) / UDP(sport=5353, dport=53, chksum=0x1234)
                 / b"question")
    redirect = (IPv6(src=s(v6_src), dst=d("2001:db8::1"), hlim=255) /
                ICMPv6ND_Redirect(tgt="fe80::9", dst=d("2001:db8:7::7")) /
                ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:09") / ICMPv6NDOptRedirectedHdr(pkt=quoted))
    ns = (IPv6(src=s("2001:db8::1"), dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt=d("2001:db8::2")) /
          Raw(b"\x0e\x01\x01\x02\x03\x04\x05\x06"))  # a Nonce option (RFC 3971 5.3.2)
    ra0 = (IPv6(src="fe80::1", dst="ff02::1", hlim=255) / ICMPv6ND_RA() /
           ICMPv6NDOptPrefixInfo(prefix=s("2001:db8:1:2::"), prefixlen=64) /
           Raw(b"\x03\x00" + bytes(6)) / ICMPv6NDOptPrefixInfo(prefix="2001:db8:1:3::", prefixlen=64))
    return [raw(E / ra), raw(E / Dot1Q(vlan=5) / redirect), raw(E / ns), raw(E / ra0)]


@pytest.mark.parametrize("option", ["map_ip", "map_src", "map_dst"])
def test_ndp_option_addresses_mapped_with_the_checksum(rewritten, option):
    """The addresses Neighbor Discovery options hold: a Router Advertisement's prefixes (Prefix Information, Route
    Information of 8 and 16 bytes) and DNS servers map with the source rules (the sender announces them); the packet
    a Redirected Header quotes went from the Redirect's destination to its Destination Address, so both its addresses
    map with the destination rules; a nonce is no address, and after an option of length 0 nothing maps. Expected:
    scapy's build of the same frames with those addresses mapped by ``ipaddress`` arithmetic, its ICMPv6 checksums
    computed for them (the quoted UDP checksum stays as it was)."""
    def mapped(address: str, source: bool) -> str:
        return _mapped(address) if option == "map_ip" or (option == "map_src") == source else address

    before = _ndp_with_options(lambda a, source: a)
    want = _ndp_with_options(mapped)
    got = rewritten(before, Rules(**{option: [f"{OLD6}={NEW6}"]}))
    assert sum(b != w for b, w in zip(before, want)) >= 2
    for b, w, g in zip(before, want, got):
        assert g.hex() == w.hex(), Ether(b).summary()
