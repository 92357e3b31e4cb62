"""``csum rewrite --fix`` against ``tcprewrite --fixcsum`` (Debian's tcpreplay 4.4): the same bytes on every packet
both rewrite, and the differences, each listed and explained, on the packets where csum does more.

Expected values: tcprewrite's output (--srcipmap / --dstipmap with IPv4 and IPv6 prefixes, --portmap, --ttl=-1,
--fixcsum: it recomputes every checksum it knows). Skipped with the reason where tcprewrite is not installed
(``.ci/run`` installs tcpreplay).
"""

from __future__ import annotations

import ipaddress
import random
import shutil
import subprocess

import pytest
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN

from csum import inet
from csum.capture import pcap
from csum.cli import main

pytestmark = pytest.mark.skipif(shutil.which("tcprewrite") is None,
                                reason="tcprewrite (Debian's tcpreplay) is not installed")

MAP4, MAP6 = ("10.0.0.0/8", "192.168.0.0/16"), ("2001:db8::/32", "2001:db9::/48")
E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def _tcprewrite(src, dst, *extra: str) -> None:
    ipmap = f"{MAP4[0]}:{MAP4[1]},[{MAP6[0]}]:[{MAP6[1]}]"
    subprocess.run(["tcprewrite", f"--infile={src}", f"--outfile={dst}", f"--srcipmap={ipmap}",
                    f"--dstipmap={ipmap}", "--portmap=80:8080", "--ttl=-1", "--fixcsum", *extra],
                   check=True, capture_output=True)


def _csum(src, dst) -> None:
    assert main(["rewrite", str(src), str(dst), "--map-ip", "=".join(MAP4), "--map-ip", "=".join(MAP6),
                 "--map-port", "80=8080", "--ttl", "-1", "--fix"]) == 0


def _both(tmp_path, frames: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(frames))
    _tcprewrite(src, tmp_path / "tcprewrite.pcap")
    _csum(src, tmp_path / "csum.pcap")
    theirs, ours = pcap.read(tmp_path / "tcprewrite.pcap"), pcap.read(tmp_path / "csum.pcap")
    return [bytes(theirs.packet(i)) for i in range(len(theirs))], [bytes(ours.packet(i)) for i in range(len(ours))]


def _plain(rng: random.Random) -> bytes:
    """An Ethernet frame (maybe VLAN-tagged) of IPv4 or IPv6 TCP, UDP or echo, addresses in and out of the maps,
    ports 80 and others, TTLs above 1 (tcprewrite's --ttl=-1 stops at 1), some checksums wrong."""
    v6 = rng.random() < 0.5
    pick = (lambda: str(ipaddress.ip_address(rng.choice([0x20010DB8 << 96, 0xFD00 << 112]) + rng.getrandbits(64)))) \
        if v6 else (lambda: str(ipaddress.ip_address(rng.choice([10 << 24, 203 << 24]) + rng.getrandbits(24))))
    hop = rng.randrange(2, 256)
    ip = IPv6(src=pick(), dst=pick(), hlim=hop, tc=rng.randrange(256), fl=rng.getrandbits(20)) if v6 else \
        IP(src=pick(), dst=pick(), ttl=hop, tos=rng.randrange(256), id=rng.getrandbits(16))
    port = lambda: rng.choice([80, rng.randrange(65536)])  # noqa: E731
    l4 = rng.choice([TCP(sport=port(), dport=port(), seq=rng.getrandbits(32)), UDP(sport=port(), dport=port()),
                     ICMPv6EchoRequest(id=rng.getrandbits(16)) if v6 else ICMP(id=rng.getrandbits(16))])
    tagged = rng.random() < 0.2
    frame = (E / Dot1Q(vlan=rng.randrange(1, 4095)) if tagged else E) / ip / l4 / rng.randbytes(rng.randrange(40))
    data = bytearray(raw(frame))
    # a wrong L4 checksum: --fix and --fixcsum both correct it (but an ICMP one: see the differences)
    if rng.random() < 0.1 and not isinstance(l4, ICMP):
        field = len(data) - len(raw(frame[type(l4)])) + {TCP: 16, UDP: 6}.get(type(l4), 2)
        data[field] ^= 0x5A
    return bytes(data)


def _multicast_macs(frame: bytes) -> bytes:
    """What tcprewrite 4.4 writes as the MACs of an IPv6 frame it maps addresses in: the IPv6 multicast MACs
    (RFC 2464 7: 33:33 and the address's last 4 bytes) of the new destination and source."""
    at = 14 + 4 * (frame[12:14] == b"\x81\x00")
    return b"\x33\x33" + frame[at + 36:at + 40] + b"\x33\x33" + frame[at + 20:at + 24]


def test_csum_fix_equals_tcprewrite_fixcsum_on_plain_packets(tmp_path):
    """2,000 generated IPv4 and IPv6 frames (TCP, UDP, ICMP / ICMPv6 echo, VLAN tags, some checksums wrong): every
    byte of ``csum rewrite --fix`` from the EtherType on equals ``tcprewrite --fixcsum`` for the same prefix and port
    maps and TTL decrement; the MACs too but in IPv6 frames, where tcprewrite (not csum, which has no such rule
    here) writes the addresses' multicast MACs."""
    rng = random.Random(25)
    frames = [_plain(rng) for _ in range(2000)]
    theirs, ours = _both(tmp_path, frames)
    assert len(theirs) == len(ours) == len(frames)
    assert sum(t != f for t, f in zip(theirs, frames)) > 1900  # the rules change nearly every packet
    for i, (f, t, o) in enumerate(zip(frames, theirs, ours)):
        assert o[12:].hex() == t[12:].hex(), (i, Ether(f).summary())
        v6 = Ether(f).haslayer(IPv6)
        assert o[:12] == f[:12] and t[:12] == (_multicast_macs(t) if v6 else f[:12]), (i, Ether(f).summary())


def test_where_csum_does_more_than_tcprewrite(tmp_path):
    """The differences, each checked on both outputs: tcprewrite leaves the datagram an ICMP error quotes, the packet
    VXLAN carries and the ports behind IPv6 extension headers as they were, and takes a TTL of 1 to 1 (not 0) and
    of 0 to 1; csum maps the quote and the inner packet too (every checksum right), takes 1 to 0 and leaves a 0
    alone (a router would not forward it), and leaves a wrong ICMP checksum wrong, which csum --fix corrects.
    Everything else of these packets is the same in both."""
    frames = {
        "quote": raw(E / IP(src="198.51.100.1", dst="10.0.0.1") / ICMP(type=3, code=3) /
                     IP(src="10.0.0.1", dst="198.51.100.1") / UDP(sport=40000, dport=53) / b"query"),
        "vxlan": raw(E / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=1) /
                     Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1234, dport=80) / b"inner"),
        "extension": raw(E / IPv6(src="2001:db8::1", dst="2001:db8::2") / IPv6ExtHdrHopByHop() /
                         UDP(sport=1234, dport=80) / b"x"),
        "ttl1": raw(E / IP(src="10.0.0.1", dst="10.0.0.2", ttl=1) / TCP(dport=80) / b"x"),
        "ttl0": raw(E / IP(src="10.0.0.1", dst="10.0.0.2", ttl=0) / TCP(dport=80) / b"x"),
        "icmp": raw(E / Dot1Q(vlan=7) / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(chksum=0x1234) / b"x"),
    }
    theirs, ours = _both(tmp_path, list(frames.values()))
    t, o = dict(zip(frames, (Ether(x) for x in theirs))), dict(zip(frames, (Ether(x) for x in ours)))
    for name in frames:
        assert all(r.ok for r in inet.verify(raw(o[name]))), name  # csum's output: every checksum right
    # the quote: tcprewrite maps only the outer destination
    assert (t["quote"][IP].dst, o["quote"][IP].dst) == ("192.168.0.1",) * 2
    assert t["quote"][ICMP].payload.src == "10.0.0.1" and o["quote"][ICMP].payload.src == "192.168.0.1"
    # VXLAN: tcprewrite leaves the inner packet; csum maps its addresses and port (and the outer UDP checksum)
    assert (t["vxlan"][VXLAN][IP].dst, t["vxlan"][VXLAN][TCP].dport) == ("10.0.0.2", 80)
    assert (o["vxlan"][VXLAN][IP].dst, o["vxlan"][VXLAN][TCP].dport) == ("192.168.0.2", 8080)
    assert t["vxlan"][IP].src == o["vxlan"][IP].src == "192.0.2.1"
    # behind a hop-by-hop header: both map the addresses, only csum the port
    assert t["extension"][IPv6].dst == o["extension"][IPv6].dst == "2001:db9::2"
    assert (t["extension"][UDP].dport, o["extension"][UDP].dport) == (80, 8080)
    # TTLs: tcprewrite's decrement stops at 1
    assert (t["ttl1"][IP].ttl, o["ttl1"][IP].ttl) == (1, 0)
    assert (t["ttl0"][IP].ttl, o["ttl0"][IP].ttl) == (1, 0)
    for name in ("ttl1", "ttl0"):  # but for the TTL, the same bytes
        assert raw(t[name][TCP]) == raw(o[name][TCP]) and t[name][IP].src == o[name][IP].src
    # a wrong ICMP checksum: tcprewrite --fixcsum leaves it (its manual: "IPv4/TCP/UDP"), csum --fix corrects it
    assert t["icmp"][ICMP].chksum == 0x1234 != o["icmp"][ICMP].chksum
    assert raw(t["icmp"][IP])[:20] == raw(o["icmp"][IP])[:20]


PNAT = f"{MAP4[0]}:{MAP4[1]},[{MAP6[0]}]:[{MAP6[1]}]"


def _pnat_both(tmp_path, frames: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    """``tcprewrite --pnat`` and ``csum rewrite --map-ip`` of the same prefix maps on ``frames``."""
    src = tmp_path / "in.pcap"
    src.write_bytes(pcap.to_bytes(frames))
    subprocess.run(["tcprewrite", f"--infile={src}", f"--outfile={tmp_path / 'tcprewrite.pcap'}", f"--pnat={PNAT}"],
                   check=True, capture_output=True)
    assert main(["rewrite", str(src), str(tmp_path / "csum.pcap"), "--map-ip", "=".join(MAP4), "--map-ip",
                 "=".join(MAP6)]) == 0
    theirs, ours = pcap.read(tmp_path / "tcprewrite.pcap"), pcap.read(tmp_path / "csum.pcap")
    return [bytes(theirs.packet(i)) for i in range(len(theirs))], [bytes(ours.packet(i)) for i in range(len(ours))]


def _v4(rng: random.Random) -> str:
    return str(ipaddress.ip_address(rng.choice([10 << 24, 203 << 24, 192 << 24 | 168 << 16]) + rng.getrandbits(16)))


def _v6(rng: random.Random) -> str:
    return str(ipaddress.ip_address(rng.choice([0x20010DB8 << 96, 0xFD00 << 112, 0xFE80 << 112]) + rng.getrandbits(64)))


def _mapped(address: str) -> str:
    """``address`` through MAP4 / MAP6 as tcprewrite and csum map a prefix: the new prefix, the old host bits."""
    ip = ipaddress.ip_address(address)
    for old, new in (MAP4, MAP6):
        o, n = ipaddress.ip_network(old), ipaddress.ip_network(new)
        if o.version == ip.version and ip in o:
            return str(n.network_address + (int(ip) & int(n.hostmask)))
    return address


def test_map_ip_maps_arp_as_tcprewrite_pnat_does(tmp_path):
    """1,000 generated ARP requests and replies (gratuitous ones, VLAN-tagged ones, Ethernet padding, sender and
    target in and out of the map): ``csum rewrite --map-ip`` writes every byte ``tcprewrite --pnat`` writes for the
    same prefix maps (tcprewrite's output is the expected value). The two change more than 450 frames."""
    from scapy.layers.l2 import ARP

    rng = random.Random(34)
    frames = []
    for _ in range(1000):
        sender = _v4(rng)
        target = sender if rng.random() < 0.1 else _v4(rng)
        mac = ":".join(f"{b:02x}" for b in rng.randbytes(6))
        frame = Ether(src=mac, dst=rng.choice(["ff:ff:ff:ff:ff:ff", "02:00:00:00:00:09"]))
        if rng.random() < 0.2:
            frame = frame / Dot1Q(vlan=rng.randrange(1, 4095))
        frame = frame / ARP(op=rng.choice([1, 2]), hwsrc=mac, psrc=sender, pdst=target,
                            hwdst=rng.choice(["00:00:00:00:00:00", "02:00:00:00:00:09"]))
        frames.append(raw(frame) + bytes(rng.choice([0, 18])))
    theirs, ours = _pnat_both(tmp_path, frames)
    assert len(theirs) == len(ours) == len(frames)
    assert sum(t != f for t, f in zip(theirs, frames)) > 450  # a third of the addresses are in the map
    for i, (f, t, o) in enumerate(zip(frames, theirs, ours)):
        assert o.hex() == t.hex(), (i, Ether(f).summary())


def test_map_ip_maps_ndp_targets_tcprewrite_pnat_does_not(tmp_path):
    """300 generated Neighbor Solicitations, Advertisements and Redirects (options, VLAN tags, some checksums wrong):
    ``tcprewrite --pnat`` maps the IPv6 header's addresses but not the targets (nor Redirect's destination), csum maps
    them too. Expected values: the header and every other byte from tcprewrite's output (from the EtherType on:
    tcprewrite writes multicast MACs), the targets mapped by ``ipaddress`` arithmetic, and the ICMPv6 checksum
    from scapy's rebuild of the mapped message; a wrong one keeps its residual (scapy's in6_chksum over the message
    with its stored checksum is the same before and after)."""
    from scapy.layers.inet6 import ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6ND_Redirect, ICMPv6NDOptDstLLAddr, \
        ICMPv6NDOptSrcLLAddr, in6_chksum

    rng = random.Random(341)
    frames = []
    for _ in range(300):
        kind = rng.choice(["ns", "na", "redirect"])
        a, b, t = _v6(rng), _v6(rng), _v6(rng)
        if kind == "ns":
            message = ICMPv6ND_NS(tgt=t) / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01")
        elif kind == "na":
            message = ICMPv6ND_NA(tgt=a, R=rng.random() < 0.5, S=1) / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:02")
        else:
            message = ICMPv6ND_Redirect(tgt=t, dst=_v6(rng))
        frame = (E / Dot1Q(vlan=7) if rng.random() < 0.2 else E) / IPv6(src=a, dst=b, hlim=255) / message
        data = bytearray(raw(frame))
        if rng.random() < 0.2:
            data[len(data) - len(raw(message)) + 2] ^= 0x33
        frames.append(bytes(data))
    theirs, ours = _pnat_both(tmp_path, frames)
    moved = wrong = 0
    for i, (f, t, o) in enumerate(zip(frames, theirs, ours)):
        before, want, got = Ether(f), Ether(t), Ether(o)
        nd = {ICMPv6ND_NS: ("tgt",), ICMPv6ND_NA: ("tgt",), ICMPv6ND_Redirect: ("tgt", "dst")}
        layer = next(k for k in nd if before.haslayer(k))
        for name in nd[layer]:  # tcprewrite left it; csum mapped it
            assert getattr(want[layer], name) == getattr(before[layer], name), i
            setattr(want[layer], name, _mapped(getattr(before[layer], name)))
            moved += getattr(want[layer], name) != getattr(before[layer], name)
        stored = before[layer].cksum
        residual = in6_chksum(58, before[IPv6], raw(before[IPv6].payload))
        want[layer].cksum = None
        rebuilt = Ether(raw(want))  # the checksum of the mapped message, by scapy
        if residual == 0:
            assert o[12:].hex() == raw(rebuilt)[12:].hex(), (i, before.summary())
        else:  # a wrong checksum stays wrong by the same amount
            wrong += 1
            assert raw(got[layer])[:2] + raw(got[layer])[4:] == raw(rebuilt[layer])[:2] + raw(rebuilt[layer])[4:]
            assert in6_chksum(58, got[IPv6], raw(got[IPv6].payload)) == residual, (i, stored)
            assert o[12:][:-len(raw(got[layer]))] == raw(rebuilt)[12:][:-len(raw(got[layer]))]
    assert moved > 100 and wrong > 30  # a third of the addresses are in the map; a fifth of the checksums wrong


def test_map_ip_maps_ndp_options_tcprewrite_pnat_does_not(tmp_path):
    """Router Solicitations and Advertisements (Prefix Information, DNS servers, Route Information) and Redirects
    (a Redirected Header): ``tcprewrite --pnat`` maps the IPv6 header's addresses only and leaves the ICMPv6 message
    as it was, its checksum too (now wrong); ``csum rewrite --map-ip`` writes the same IPv6 header and maps the
    option addresses with the checksum. Expected values: tcprewrite's header, and scapy's build of the messages with
    every address mapped by ``ipaddress`` arithmetic and the checksum computed for them."""
    from scapy.layers.inet6 import (ICMPv6ND_RA, ICMPv6ND_Redirect, ICMPv6ND_RS, ICMPv6NDOptPrefixInfo,
                                    ICMPv6NDOptRDNSS, ICMPv6NDOptRedirectedHdr, ICMPv6NDOptRouteInfo,
                                    ICMPv6NDOptSrcLLAddr)

    rng = random.Random(342)
    _prefix = lambda r: str(ipaddress.ip_network(f"{_v6(r)}/64", strict=False).network_address)  # noqa: E731

    def build(f) -> bytes:  # one frame, every address through f
        kind = rng.choice(["rs", "ra", "redirect"])
        a, b = f(_v6(rng)), f(_v6(rng))
        if kind == "rs":
            message = ICMPv6ND_RS() / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01")
        elif kind == "ra":
            message = ICMPv6ND_RA() / ICMPv6NDOptPrefixInfo(prefix=f(_prefix(rng)), prefixlen=64) / \
                ICMPv6NDOptRDNSS(dns=[f(_v6(rng)), f(_v6(rng))]) / ICMPv6NDOptRouteInfo(prefix=f(_v6(rng)), plen=128)
        else:
            quoted = IPv6(src=b, dst=f(_v6(rng))) / UDP(sport=1, dport=2, chksum=0x4321) / rng.randbytes(8)
            message = ICMPv6ND_Redirect(tgt="fe80::9", dst=IPv6(raw(quoted)).dst) / \
                ICMPv6NDOptRedirectedHdr(pkt=raw(quoted))
        return raw((E / Dot1Q(vlan=7) if rng.random() < 0.2 else E) / IPv6(src=a, dst=b, hlim=255) / message)

    state = rng.getstate()
    frames = [build(lambda x: x) for _ in range(200)]
    rng.setstate(state)
    mapped = [build(_mapped) for _ in range(200)]
    theirs, ours = _pnat_both(tmp_path, frames)
    options = 0
    for i, (f, m, t, o) in enumerate(zip(frames, mapped, theirs, ours)):
        header = 14 + 4 * (f[12:14] == b"\x81\x00") + 40
        assert o[12:header].hex() == t[12:header].hex() == m[12:header].hex(), (i, Ether(f).summary())
        assert t[header:] == f[header:]  # tcprewrite: the message as it was
        assert o.hex() == m.hex(), (i, Ether(f).summary())  # csum: scapy's mapped build
        options += o[header + 8:] != f[header + 8:]
    assert options > 60  # a third of the addresses are in the map; Router Solicitations hold none
