"""csum.skb: skb->csum, ip_summed and csum_level beside the bytes, and csum.bpf's BpfMisuse warnings.

Expected values: tests/oracle.py (naive RFC 1071 sums of the bytes: skb->csum must fold to the sum of
the bytes from the network header), scapy (packets with correct checksums), and the state rules of
include/linux/skbuff.h / net/core/filter.c as documented in include/uapi/linux/bpf.h. The same model is
compared number for number with the running kernel in tests/kernel/test_skb_kernel.py.
"""

from __future__ import annotations

import warnings

import pytest
from oracle import fold16, ones_sum16
from scapy.compat import raw
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from csum import bpf
from csum.bpf.helpers import BpfMisuse
from csum.bpf.skb import (
    BPF_CSUM_LEVEL_DEC,
    BPF_CSUM_LEVEL_INC,
    BPF_CSUM_LEVEL_QUERY,
    BPF_CSUM_LEVEL_RESET,
    BPF_F_RECOMPUTE_CSUM,
    DIFF,
    EACCES,
    ENOTSUPP,
    Skb,
)
from csum.errors import CsumValueError
from csum.rewrite import rewrite

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
TCP4 = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1000, dport=80) / b"payload!")
UDP6 = raw(ETHER / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=53, dport=5353) / b"abc")


def _oracle_fold(skb: Skb) -> int:
    """skb->csum folded to 16 bits (little-endian words, as the u32 is summed on x86/generic)."""
    return fold16(skb.csum)


def test_checksum_complete_sums_from_network_header():
    """skb->csum of a fresh CHECKSUM_COMPLETE skb folds to the RFC 1071 sum of data[14:] (little-endian words)."""
    skb = Skb.checksum_complete(TCP4)
    assert _oracle_fold(skb) == ones_sum16(TCP4[14:], "little")
    assert skb.csum_valid()


def test_nat_with_pseudo_flag_keeps_csum_valid_and_without_goes_stale_by_the_change():
    """IPv4 SNAT: with BPF_F_PSEUDO_HDR skb->csum moves by minus the address change and stays valid; without it
    the bytes are the same (CHECKSUM_NONE and COMPLETE patch the field alike) but skb->csum is off by exactly
    the change (oracle: sums of the bytes)."""
    new = bytes([192, 0, 2, 7])
    out = {}
    for flags in (bpf.BPF_F_PSEUDO_HDR, 0):
        skb = Skb.checksum_complete(TCP4)
        diff = skb.bpf_csum_diff(TCP4[26:30], new)
        assert skb.bpf_l4_csum_replace(50, 0, diff, flags) == 0
        assert skb.bpf_l3_csum_replace(24, 0, diff, 0) == 0
        assert skb.bpf_skb_store_bytes(26, new) == 0
        out[flags] = skb
    good, bad = out[bpf.BPF_F_PSEUDO_HDR], out[0]
    assert good.data == bad.data
    assert raw(Ether(bytes(good.data))) == raw(Ether(bytes(good.data)).__class__(raw(
        ETHER / IP(src="192.0.2.7", dst="10.0.0.2") / TCP(sport=1000, dport=80) / b"payload!")))
    assert good.csum_valid() and _oracle_fold(good) == ones_sum16(bytes(good.data[14:]), "little")
    assert not bad.csum_valid()
    change = (ones_sum16(new, "little") + (~ones_sum16(TCP4[26:30], "little") & 0xFFFF)) % 0xFFFF
    assert (fold16(bad.csum) - fold16(good.csum)) % 0xFFFF == change


def test_ipv6_diff_needs_ipv6_flag():
    """IPv6 SNAT by diff: BPF_F_IPV6 leaves skb->csum alone (the address and L4 checksum changes cancel); without
    it the kernel (before and after the 6.16 fix) takes the diff out and skb->csum is stale."""
    new = bytes(15) + b"\x09"
    for flags, valid in ((bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_IPV6, True), (bpf.BPF_F_PSEUDO_HDR, False)):
        skb = Skb.checksum_complete(UDP6)
        diff = skb.bpf_csum_diff(UDP6[22:38], new)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BpfMisuse)
            assert skb.bpf_l4_csum_replace(60, 0, diff, flags | bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE) == 0
        skb.bpf_skb_store_bytes(22, new)
        assert skb.csum_valid() is valid


def test_store_bytes_recompute_csum_follows_the_bytes_at_odd_offsets():
    """BPF_F_RECOMPUTE_CSUM keeps skb->csum the sum of the bytes for stores at even and odd offsets (oracle)."""
    skb = Skb.checksum_complete(TCP4)
    for offset, data in ((21, b"\x3f"), (40, b"\x01\x02\x03"), (55, b"zz"), (60, b"\xff")):
        assert skb.bpf_skb_store_bytes(offset, data, BPF_F_RECOMPUTE_CSUM) == 0
        assert skb.csum_valid() and _oracle_fold(skb) == ones_sum16(bytes(skb.data[14:]), "little")
    assert skb.bpf_skb_store_bytes(len(TCP4) - 1, b"\x00\x00") == -14  # past the end: -EFAULT
    assert skb.bpf_skb_store_bytes(20, b"\x00", 4) == -22       # unknown flag: -EINVAL
    skb.bpf_skb_store_bytes(30, b"\x00")                        # without the flag skb->csum is not carried
    assert not skb.csum_valid()


def test_csum_update_and_level_state_rules():
    """bpf_csum_update: csum_add on COMPLETE, -ENOTSUPP otherwise; bpf_csum_level: INC turns NONE into UNNECESSARY
    level 0 and counts up to 3, DEC counts down and back to NONE, RESET, QUERY -EACCES off UNNECESSARY."""
    skb = Skb.checksum_complete(TCP4)
    before = skb.csum
    assert skb.bpf_csum_update(0) == before
    assert skb.bpf_csum_update(0xFFFFFFFF) == (before + 0xFFFFFFFF) % 0xFFFFFFFF or skb.csum == 0xFFFFFFFF
    assert skb.bpf_csum_level(BPF_CSUM_LEVEL_QUERY) == -EACCES
    assert skb.bpf_csum_level(BPF_CSUM_LEVEL_INC) == 0 and skb.bpf_csum_level(BPF_CSUM_LEVEL_QUERY) == -EACCES
    none = Skb(TCP4)
    assert none.bpf_csum_update(1) == -ENOTSUPP
    seen = []
    for level in [BPF_CSUM_LEVEL_INC] * 5 + [BPF_CSUM_LEVEL_DEC] * 2 + [BPF_CSUM_LEVEL_RESET, BPF_CSUM_LEVEL_DEC]:
        assert none.bpf_csum_level(level) == 0
        seen.append(none.bpf_csum_level(BPF_CSUM_LEVEL_QUERY))
    assert seen == [0, 1, 2, 3, 3, 2, 1, -EACCES, -EACCES]
    assert none.bpf_csum_level(4) == -22


def test_run_feeds_diff_and_matches_method_calls():
    """Skb.run with to=DIFF passes the last csum_diff result, as a program's diff variable."""
    new = bytes([1, 2, 3, 4])
    a, b = Skb.checksum_complete(TCP4), Skb.checksum_complete(TCP4)
    results = a.run([("bpf_csum_diff", TCP4[30:34], new, 0), ("bpf_l4_csum_replace", 50, 0, DIFF, bpf.BPF_F_PSEUDO_HDR),
                     ("bpf_l3_csum_replace", 24, 0, DIFF, 0), ("bpf_skb_store_bytes", 30, new, 0), ("bpf_csum_update", 0)])
    diff = b.bpf_csum_diff(TCP4[30:34], new)
    b.bpf_l4_csum_replace(50, 0, diff, bpf.BPF_F_PSEUDO_HDR)
    b.bpf_l3_csum_replace(24, 0, diff, 0)
    b.bpf_skb_store_bytes(30, new)
    assert results == [diff, 0, 0, 0, b.csum] and a.data == b.data and a.csum_valid()
    with pytest.raises(CsumValueError, match="unknown helper"):
        a.run([("bpf_csum_frobnicate", 1)])


@pytest.mark.parametrize("changes", [
    dict(saddr="192.0.2.1"), dict(sport=7, dport=9), dict(decrement_ttl=True), dict(daddr="10.9.9.9", sport=0)])
@pytest.mark.parametrize("frame", [TCP4, UDP6], ids=["ipv4-tcp", "ipv6-udp"])
def test_rewrite_leaves_a_valid_skb_csum(frame, changes):
    """csum.rewrite's calls keep a CHECKSUM_COMPLETE skb's csum valid (an IPv6 hop limit store carries
    BPF_F_RECOMPUTE_CSUM), and Rewrite.skb() reports the bytes rewrite returned (oracle: sum of the bytes)."""
    if "daddr" in changes and frame is UDP6:
        changes = dict(changes, daddr="2001:db8::99")
    if "saddr" in changes and frame is UDP6:
        changes = dict(changes, saddr="2001:db8::42")
    with warnings.catch_warnings():
        warnings.simplefilter("error", BpfMisuse)
        r = rewrite(frame, **changes)
    skb = r.skb(arch="x86_64")
    assert bytes(skb.data) == r.packet and skb.csum_valid()
    assert fold16(skb.csum) == ones_sum16(r.packet[14:], "little")
    if frame is UDP6 and changes.get("decrement_ttl"):
        assert "BPF_F_RECOMPUTE_CSUM" in r.format()


# --- BpfMisuse ----------------------------------------------------------------------------------------------

def _codes(fn, *args) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [w.message.code for w in caught if isinstance(w.message, BpfMisuse)]


def test_misuse_size_missing_and_wide_size_2():
    """Size 0 with a non-zero from (the kernel's -EINVAL that programs ignore) and a >16-bit value with size 2."""
    for fn in (bpf.bpf_l3_csum_replace, bpf.bpf_l4_csum_replace):
        assert _codes(fn, bytearray(TCP4), 24, 0x0A000001, 0xC0000207, 0) == ["size-missing"]
        assert _codes(fn, bytearray(TCP4), 24, 0x0A000001, 0xC0000207, 2) == ["wide-for-size-2"]
        assert _codes(fn, bytearray(TCP4), 24, 0x0100, 0x0200, 2) == []


def test_misuse_pseudo_on_port_and_ttl_mangled0_on_tcp_ipv6_flag():
    """Packet-aware cases: PSEUDO_HDR on a port or the TTL word, MARK_MANGLED_0 on TCP, BPF_F_IPV6 missing on
    an IPv6 diff or set on an IPv4 one; the correct calls (what csum.rewrite makes) stay silent."""
    port, new_port = int.from_bytes(TCP4[34:36], "little"), int.from_bytes((2000).to_bytes(2, "big"), "little")
    ttl_word = int.from_bytes(TCP4[22:24], "little")
    l4 = bpf.bpf_l4_csum_replace
    assert _codes(l4, bytearray(TCP4), 50, port, new_port, 2 | bpf.BPF_F_PSEUDO_HDR) == ["pseudo-on-non-pseudo"]
    assert _codes(l4, bytearray(TCP4), 50, port, new_port, 2) == []
    assert _codes(l4, bytearray(TCP4), 50, ttl_word, ttl_word - 1, 2 | bpf.BPF_F_PSEUDO_HDR) == ["pseudo-on-non-pseudo"]
    assert _codes(l4, bytearray(TCP4), 50, port, new_port, 2 | bpf.BPF_F_MARK_MANGLED_0) == ["mangled0-on-tcp"]
    assert _codes(l4, bytearray(TCP4), 50, 0, 0x1234, bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_IPV6) == ["ipv6-flag-on-ipv4"]
    flags6 = bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE
    assert _codes(l4, bytearray(UDP6), 60, 0, 0x1234, flags6) == ["ipv6-flag-missing"]
    assert _codes(l4, bytearray(UDP6), 60, 0, 0x1234, flags6 | bpf.BPF_F_IPV6) == []
    half = int.from_bytes(TCP4[26:28], "little")  # a 16-bit half of the source address: in the pseudo-header
    assert _codes(l4, bytearray(TCP4), 50, half, 0x0000, 2 | bpf.BPF_F_PSEUDO_HDR) == []


def test_misuse_warning_points_at_the_caller():
    """The warning's location is the line that called the helper (stacklevel), for bpf.* and Skb methods."""
    with pytest.warns(BpfMisuse, match="size 0") as record:
        bpf.bpf_l3_csum_replace(bytearray(TCP4), 24, 1, 2, 0)
        Skb(TCP4).bpf_l4_csum_replace(50, 1, 2, 0)
    assert [w.filename for w in record] == [__file__, __file__]


def _scapy_nat(frame: bytes, **fields) -> bytes:
    """scapy's from-scratch build of ``frame`` with IP/TCP/UDP fields set (checksums recomputed)."""
    pkt = Ether(frame)
    for name, value in fields.items():
        layer = pkt[IP] if name in ("src", "dst") and IP in pkt else pkt[IPv6] if name in ("src", "dst") else \
            pkt[TCP] if TCP in pkt else pkt[UDP]
        setattr(layer, name, value)
    for layer in (IP, TCP, UDP):
        if layer in pkt:
            del pkt[layer].chksum
    return raw(pkt)


@pytest.mark.parametrize("frame", [TCP4, UDP6], ids=["tcp4", "udp6"])
def test_checksum_partial_seed_and_the_nic_finishing_it(frame):
    """A CHECKSUM_PARTIAL skb holds the pseudo-header sum in the L4 field (csum_start at the transport header);
    skb_checksum_help (the NIC) then stores the very checksum scapy computes for the packet."""
    skb = Skb.checksum_partial(frame)
    start = 34 if frame is TCP4 else 54
    assert (skb.ip_summed, skb.csum_start, skb.csum_offset) == (bpf.CHECKSUM_PARTIAL, start, 16 if frame is TCP4 else 6)
    assert bytes(skb.data) != frame and skb.skb_checksum_help() == 0
    assert bytes(skb.data) == frame and skb.ip_summed == bpf.CHECKSUM_NONE
    assert skb.skb_checksum_help() == -22  # -EINVAL: no longer CHECKSUM_PARTIAL


def test_partial_address_change_needs_the_pseudo_flag_and_ports_need_nothing():
    """On a CHECKSUM_PARTIAL skb an address change must move the seed: bpf_l4_csum_replace with BPF_F_PSEUDO_HDR does
    (the NIC then stores scapy's checksum of the rewritten packet), without it the seed stays and the NIC's checksum
    is wrong; a port change is summed by the NIC itself: the replace without the flag leaves the field (right), a
    hand-written update of it is wrong. Expected: scapy's checksums of the rewritten packets."""
    new = bytes([192, 0, 2, 7])
    want = _scapy_nat(TCP4, src="192.0.2.7")
    for flags, right in ((4 | bpf.BPF_F_PSEUDO_HDR, True), (4, False)):
        skb = Skb.checksum_partial(TCP4)
        assert skb.bpf_l3_csum_replace(24, TCP4[26:30], new, 4) == 0
        assert skb.bpf_l4_csum_replace(50, TCP4[26:30], new, flags) == 0
        assert skb.bpf_skb_store_bytes(26, new, BPF_F_RECOMPUTE_CSUM) == 0  # does nothing on PARTIAL
        skb.skb_checksum_help()
        assert (bytes(skb.data) == want) is right
    port = (2000).to_bytes(2, "big")
    want = _scapy_nat(TCP4, dport=2000)
    skb = Skb.checksum_partial(TCP4)
    seed = bytes(skb.data[50:52])
    assert skb.bpf_l4_csum_replace(50, TCP4[36:38], port, 2) == 0 and bytes(skb.data[50:52]) == seed
    skb.bpf_skb_store_bytes(36, port)
    skb.skb_checksum_help()
    assert bytes(skb.data) == want
    by_hand = Skb.checksum_partial(TCP4)
    by_hand.data[50:52] = rewrite(bytes(by_hand.data), dport=2000).packet[50:52]  # the update a tc program writes
    by_hand.bpf_skb_store_bytes(36, port)
    by_hand.skb_checksum_help()
    assert bytes(by_hand.data) != want


def test_offload_rule_names_the_region():
    """offload_rule: None off CHECKSUM_PARTIAL; the pending field, the covered bytes (from csum_start) and the IP
    header before it each get their rule."""
    assert Skb(TCP4).offload_rule(36, 2) is None
    skb = Skb.checksum_partial(TCP4)
    assert "pseudo-header seed" in skb.offload_rule(50, 2)
    assert "covered by the pending offload" in skb.offload_rule(36, 2)
    assert "BPF_F_PSEUDO_HDR" in skb.offload_rule(26, 4) and "before csum_start" in skb.offload_rule(26, 4)


def test_checksum_partial_needs_a_tcp_or_udp_checksum():
    """An ICMP packet has no pending transport checksum to model: a clear error."""
    icmp = raw(ETHER / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP())
    with pytest.raises(CsumValueError, match="CHECKSUM_PARTIAL needs a TCP/UDP packet"):
        Skb.checksum_partial(icmp)
