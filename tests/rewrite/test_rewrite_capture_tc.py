"""``csum rewrite`` of a capture against the kernel running the tc program ``Rewrite.format("tc")`` prints.

A sample of packets (IPv4/IPv6 TCP, UDP with and without a checksum, ICMP and ICMPv6 echo, a VLAN tag, a TCP
checksum that is wrong, VXLAN, an ICMP error) is rewritten by csum.rewrite.rewrite_capture (the C engine where it
takes the packet, the Python one where not); for each, the changes it made (the new addresses, ports and TTLs, read
back from its output with scapy) are given to csum.rewrite.rewrite(), whose printed tc program is compiled (clang
-target bpf), loaded and run on the original packet by the running kernel (BPF_PROG_TEST_RUN). Expected: the
kernel's output bytes (its own bpf_l3/l4_csum_replace and bpf_skb_store_bytes; the tc form also passes the kernel's
CHECKSUM_COMPLETE check). Skipped where clang, libbpf or BPF are missing.
"""

from __future__ import annotations

import pytest
from bpf_build import compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN

from csum.capture import pcap
from csum.kernel import prog
from csum.rewrite import rewrite, rewrite_capture
from csum.rewrite.rules import Rules

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

E = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
RULES = Rules(map_ip=["10.0.0.0/8=192.168.0.0/16", "2001:db8::/32=2001:db9::/48"], map_port=["80=8080", "53=5353"],
              ttl=-1)


def _bad_tcp() -> bytes:
    frame = bytearray(raw(E / IP(src="10.1.1.1", dst="198.51.100.9") / TCP(sport=1025, dport=80) / b"wrong"))
    frame[50:52] = b"\x12\x34"  # a TCP checksum that is wrong: the kernel's incremental update keeps it wrong
    return bytes(frame)


SAMPLE = {
    "ipv4-tcp": raw(E / IP(src="10.0.0.1", dst="10.2.0.2") / TCP(sport=80, dport=1234) / b"data"),
    "ipv4-tcp-bad": _bad_tcp(),
    "ipv4-udp": raw(E / IP(src="203.0.113.1", dst="10.9.8.7") / UDP(sport=53, dport=40000) / b"query"),
    "ipv4-udp-0": raw(E / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=53, dport=9, chksum=0) / b"none"),
    "ipv4-icmp": raw(E / IP(src="10.3.3.3", dst="192.0.2.1") / ICMP(id=7) / b"ping"),
    "vlan-ipv4-udp": raw(E / Dot1Q(vlan=10) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=80) / b"x"),
    "ipv6-tcp": raw(E / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=80, dport=443) / b"data"),
    "ipv6-udp": raw(E / IPv6(src="2001:db8::1", dst="fd00::2") / UDP(sport=53, dport=53) / b"query"),
    "ipv6-icmp": raw(E / IPv6(src="fd00::9", dst="2001:db8::2") / ICMPv6EchoRequest(id=7) / b"ping"),
    "vxlan": raw(E / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=49152, dport=4789) / VXLAN(vni=1) /
                 Ether(src="02:00:00:00:00:03", dst="02:00:00:00:00:04") / IP(src="10.0.0.1", dst="10.0.0.2") /
                 TCP(sport=1234, dport=80) / b"inner"),
    "icmp-error": raw(E / IP(src="198.51.100.1", dst="10.0.0.1") / ICMP(type=3, code=3) /
                      IP(src="10.0.0.1", dst="198.51.100.1") / UDP(sport=40000, dport=53) / b"quoted"),
}


def _changes(before, after) -> dict:
    """rewrite() keywords for what changed from ``before`` to ``after`` (scapy IP/IPv6 layers) at one level."""
    out: dict = {}
    for key, name in (("saddr", "src"), ("daddr", "dst")):
        if getattr(before, name) != getattr(after, name):
            out[key] = getattr(after, name)
    if isinstance(before.payload, (TCP, UDP)):  # (scapy's TCPerror / UDPerror of a quote are subclasses)
        for key in ("sport", "dport"):
            if getattr(before.payload, key) != getattr(after.payload, key):
                out[key] = getattr(after.payload, key)
    hop = "ttl" if isinstance(before, IP) else "hlim"
    if getattr(before, hop) != getattr(after, hop):
        assert getattr(before, hop) - 1 == getattr(after, hop)
        out["decrement_ttl"] = True
    return out


def _request(frame: bytes, new: bytes) -> dict:
    """The keywords of rewrite() that make ``frame`` into ``new``: the outer IP layer's changes, and those of the
    datagram an ICMP error quotes (``quoted``) or of the packet VXLAN carries (``inner``)."""
    before, after = Ether(frame), Ether(new)
    outer, outer_after = before.payload, after.payload
    while isinstance(outer, Dot1Q):
        outer, outer_after = outer.payload, outer_after.payload
    request = _changes(outer, outer_after)
    if before.haslayer(VXLAN):
        request["inner"] = _changes(before[VXLAN][IP], after[VXLAN][IP])
    elif before.haslayer(ICMP) and before[ICMP].type == 3:
        request["quoted"] = _changes(before[ICMP].payload, after[ICMP].payload)
    return request


@pytest.mark.parametrize("kind", sorted(SAMPLE))
def test_the_kernel_running_the_printed_tc_program_writes_csum_rewrites_bytes(kind, tmp_path, record_property):
    """The tc program for the changes ``csum rewrite`` made to a packet, run by the kernel on that packet, gives
    the bytes ``csum rewrite`` wrote (every checksum, a wrong one included)."""
    frame = SAMPLE[kind]
    src, dst = tmp_path / "in.pcap", tmp_path / "out.pcap"
    src.write_bytes(pcap.to_bytes([frame]))
    rewrite_capture(str(src), str(dst), RULES)
    ours = bytes(pcap.read(dst).packet(0))
    assert ours != frame
    request = _request(frame, ours)
    assert request and all(request.get(k) != {} for k in ("inner", "quoted"))
    program = tmp_path / "nat.c"
    program.write_text(rewrite(frame, **request).format("tc"))
    with prog.load(str(compile_bpf(program, tmp_path / "nat.o"))) as loaded:
        run = loaded.run(frame)
    assert run.retval == 0  # TC_ACT_OK
    assert all(c.ok is not False for c in run.results if c.layer == prog.SKB_CSUM)
    assert run.packet.hex() == ours.hex()
    record_property("kernel_checked", 1)
