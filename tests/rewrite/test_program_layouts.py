"""Printed programs (Rewrite.format("tc"/"xdp")) on packets of other layouts, both quote kinds, and older kernels.

A program printed from one packet checks the layout before it writes (EtherType, IP version and header length,
protocol, fragment offset, ICMP error type): run on the running kernel (BPF_PROG_TEST_RUN) on ARP, on IPv6 when it
rewrites IPv4, on UDP when it rewrites TCP, on a later IPv4 fragment and on an ICMP echo when it rewrites an error's
quote, it must pass them untouched (TC_ACT_OK / XDP_PASS, the same bytes). An ICMP error program printed from a
quote with a UDP checksum must handle quotes without one (0) too, and the reverse: bytes as csum.rewrite makes them
for that packet and a valid skb->csum. The IPv6 tc form built with -DCSUM_NO_BPF_F_IPV6 takes the path for kernels
before 6.16 (no BPF_F_IPV6) and must give the same bytes and a valid skb->csum. Expected bytes: csum.rewrite's
(itself checked against scapy in tests/rewrite/test_rewrite*.py); unharmed means byte-identical to the input (scapy
builds the inputs); skb->csum: the kernel's CHECKSUM_COMPLETE run. Skipped where clang, libbpf or BPF are missing.
"""

from __future__ import annotations

import pytest
from bpf_build import compile_bpf, why_not
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from csum.kernel import prog
from csum.rewrite import rewrite

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
TCP4 = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1000, dport=80) / b"payload")
OTHERS = {
    "arp": raw(ETHER / ARP(psrc="10.0.0.1", pdst="10.0.0.2")),
    "ipv6-tcp": raw(ETHER / IPv6(src="2001:db8::1", dst="2001:db8::2") / TCP(sport=1000, dport=80) / b"payload"),
    "ipv4-udp": raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1000, dport=80) / b"payload"),
    "ipv4-options": raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2", options=b"\x01\x01\x01\x00") / TCP() / b"payload"),
    "ipv4-later-fragment": raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2", proto=6, frag=8) / Raw(bytes(40))),
    "icmp-echo": raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=8, id=7) / bytes(40)),
}


def _icmp_error(udp_checksum: bool) -> bytes:
    """An ICMP port unreachable quoting a UDP datagram sent with a checksum, or without one (0)."""
    quote = raw(IP(src="10.0.0.2", dst="10.0.0.1") / UDP(sport=5353, dport=53, chksum=None if udp_checksum else 0)
                / b"query")
    return raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(type=3, code=3) / Raw(quote))


def _load(source: str, tmp_path, name: str, *defines: str) -> prog.Program:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    return prog.load(str(compile_bpf(src, tmp_path / f"{name}.o", *defines)))


@pytest.mark.parametrize("kind", ["tc", "xdp"])
def test_printed_program_leaves_other_layouts_alone(kind, tmp_path, record_property):
    """An IPv4/TCP SNAT + port + TTL program passes every other layout untouched, and still rewrites its own."""
    changes = dict(saddr="198.51.100.7", dport=8080, decrement_ttl=True)
    with _load(rewrite(TCP4, **changes).format(kind), tmp_path, f"tcp4_{kind}") as program:
        assert program.run(TCP4).packet == rewrite(TCP4, **changes).packet
        for name, frame in OTHERS.items():
            run = program.run(frame)
            assert (run.packet, run.action) == (frame, "TC_ACT_OK" if kind == "tc" else "XDP_PASS"), name
            assert not run.broken, name
    record_property("kernel_checked", (1 + len(OTHERS)) * (2 if kind == "tc" else 1))


@pytest.mark.parametrize("printed_from", [True, False], ids=["from-checksummed", "from-unchecksummed"])
@pytest.mark.parametrize("kind", ["tc", "xdp"])
def test_icmp_error_program_handles_both_quote_kinds(kind, printed_from, tmp_path):
    """One program for an ICMP error's NAT (outer destination, quoted source and port) makes csum.rewrite's bytes on
    quotes with and without a UDP checksum, whichever it was printed from, with skb->csum valid; an echo or a TCP
    packet passes untouched."""
    changes = dict(daddr="198.51.100.7", quoted=dict(saddr="198.51.100.7", sport=4000))
    source = rewrite(_icmp_error(printed_from), **changes).format(kind)
    with _load(source, tmp_path, f"icmp_{kind}") as program:
        for checksummed in (True, False):
            frame = _icmp_error(checksummed)
            run = program.run(frame)
            assert run.packet == rewrite(frame, **changes).packet, checksummed
            assert not run.broken and run.stale in ((False,) if kind == "tc" else (None,)), checksummed
        for name in ("icmp-echo", "ipv4-udp", "arp"):
            assert program.run(OTHERS[name]).packet == OTHERS[name], name


def test_ipv6_program_without_bpf_f_ipv6(tmp_path):
    """The IPv6 tc form built for kernels before 6.16 (-DCSUM_NO_BPF_F_IPV6: the pseudo-header diff without
    BPF_F_IPV6, skb->csum given the diff back with bpf_csum_update) gives the same bytes as with the flag, and the
    kernel's CHECKSUM_COMPLETE check passes both."""
    frames = [raw(ETHER / IPv6(src=f"2001:db8::{i:x}", dst="2001:db8:1::2") / l4 / bytes(i))
              for i in range(1, 9) for l4 in (TCP(sport=i, dport=80), UDP(sport=i, dport=53))]
    changes = dict(saddr="2001:db8:9::9", sport=4000)
    source = rewrite(frames[0], **changes).format("tc")
    assert "L4_CSUM_REPLACE_IPV6" in source and "Linux 6.16" in source
    with _load(source, tmp_path, "v6") as flagged, _load(source, tmp_path, "v6_old", "CSUM_NO_BPF_F_IPV6") as old:
        for frame in frames[::2]:  # the TCP ones: the layout printed
            want = rewrite(frame, **changes).packet
            for program in (flagged, old):
                run = program.run(frame)
                assert run.packet == want and run.stale is False
        for frame in frames[1::2]:  # UDP: another layout, untouched
            assert old.run(frame).packet == frame
