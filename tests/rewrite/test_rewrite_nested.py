"""csum.rewrite through ICMP errors (``quoted=``) and tunnels (``inner=``), against scapy and the running kernel.

Expected bytes come from scapy: the same change made to scapy's fields (outer and inner), every checksum left
unset (``None``, except an outer UDP checksum of 0, which means none computed) so that ``raw()`` recomputes
them from scratch: the quoted IPv4 header, the quoted / inner L4 checksum, the outer ICMP / ICMPv6 checksum
(with its pseudo-header), the GRE checksum and the outer UDP checksum over the tunnelled bytes. A quote
cut short (as routers send it) is compared with scapy's full rewritten datagram cut at the same length.
Every rewrite is also replayed on the running kernel (csum.kernel.skb_run: the recorded helper calls run by
BPF_PROG_TEST_RUN), whose output must be rewrite's byte for byte.
"""

from __future__ import annotations

import pytest
from bits import Bits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.contrib.geneve import GENEVE
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6PacketTooBig, ICMPv6TimeExceeded, IPv6
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from csum import bpf, kernel
from csum.errors import CsumTypeError, CsumValueError
from csum.rewrite import CsumReplaceCall, rewrite

ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
INNER_ETHER = Ether(dst="02:00:00:00:00:03", src="02:00:00:00:00:04")
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: 500 generated packets per kind by default, 5,000 under CSUM_HYPOTHESIS_PROFILE=thorough.
EXAMPLES = 500 * max(1, settings().max_examples // 2000)
KERNEL = kernel.available()

u16 = st.one_of(st.sampled_from([0, 1, 0xFFFF]), st.integers(0, 0xFFFF))
payloads = st.one_of(st.binary(max_size=300), st.integers(0, 300).map(bytes))
#: The bits of a case's NATs (up to three), ICMP error kind, quote cut and tunnel options (tests/bits.py: one draw
#: instead of some 45): a case cuts at most 1,939 bits.
CASE_BITS = st.binary(min_size=248, max_size=248)
#: How much of the quoted L4 header an ICMP error keeps (or all of it): 8..40 bytes, but a cut through the TCP
#: checksum (17 bytes) would leave half of it, which Linux does not patch either.
CUTS = {"tcp": tuple(n for n in range(8, 41) if n != 17), "udp": tuple(range(8, 41))}


def _ip(version: int, src: str, dst: str, ttl: int):
    return IP(src=src, dst=dst, ttl=ttl) if version == 4 else IPv6(src=src, dst=dst, hlim=ttl)


def _l4(kind: str, sport: int, dport: int):
    return TCP(sport=sport, dport=dport, flags="S") if kind == "tcp" else UDP(sport=sport, dport=dport)


def nat(bits: Bits, version: int, l4: str | None):
    """Original and rewritten (src, dst, sport, dport, ttl) of one IP layer, and the keywords for rewrite: each
    address (and with ``l4`` each port) changed or not, the TTL / hop limit decremented or not (616 bits)."""
    src, dst, sport, dport, ttl = bits.address(version), bits.address(version), bits.u16(), bits.u16(), bits.ttl()
    keys = {}
    for key, old in (("saddr", src), ("daddr", dst)):
        value = bits.new(old, lambda: bits.address(version))
        if value is not None:
            keys[key] = value
    for key, old in (("sport", sport), ("dport", dport)) if l4 else ():
        value = bits.new(old, bits.u16)
        if value is not None:
            keys[key] = value
    if bits.flag():
        keys["decrement_ttl"] = True
    new = (keys.get("saddr", src), keys.get("daddr", dst), keys.get("sport", sport), keys.get("dport", dport),
           ttl - 1 if keys.get("decrement_ttl") else ttl)
    return (src, dst, sport, dport, ttl), new, keys


def _datagram(version: int, l4: str, fields: tuple, payload: bytes):
    src, dst, sport, dport, ttl = fields
    return _ip(version, src, dst, ttl) / _l4(l4, sport, dport) / payload


def _kernel_replay(frame: bytes, result) -> bytes:
    """The packet the running kernel makes of ``frame`` with ``result``'s calls, in runs of at most MAX_OPS calls
    (each run after the first starts by repeating the last bpf_csum_diff, which leaves the packet alone, so that
    its size-0 calls take the same diff)."""
    runs: list[list] = [[]]
    last_diff = None
    for op in result.ops():
        if len(runs[-1]) == kernel.MAX_OPS:
            runs.append([last_diff] if last_diff and op[0] != "bpf_csum_diff" else [])
        runs[-1].append(op)
        if op[0] == "bpf_csum_diff":
            last_diff = op
    packet = frame
    for run in runs:
        out = kernel.skb_run(packet, run, checksum_complete=False)
        assert out.errno == 0
        packet = out.packet
    return packet


def _check(frame: bytes, expected: bytes, result) -> int:
    """Compare with scapy's bytes, the skb->csum model and (where BPF runs) the kernel; 1 if the kernel checked."""
    assert result.packet == expected
    assert result.skb().csum_valid()
    if KERNEL:
        assert _kernel_replay(frame, result) == expected
    return int(KERNEL)


def _compare(build, outer: tuple, inner: tuple, name: str) -> int:
    """Rewrite ``build(original outer, original inner)`` with the outer keywords and ``name={inner keywords}``;
    compare with ``build(rewritten outer, rewritten inner)`` (see :func:`_check`)."""
    frame = build(outer[0], inner[0])
    r = rewrite(frame, **outer[2], **{name: inner[2]})
    return _check(frame, build(outer[1], inner[1]), r)


# --- ICMP / ICMPv6 errors ------------------------------------------------------------------------------------

ICMPV6_ERRORS = [ICMPv6DestUnreach, ICMPv6PacketTooBig, ICMPv6TimeExceeded]


@pytest.mark.parametrize("version", [4, 6])
def test_icmp_error_nat_equals_scapy_and_kernel(version, record_property):
    """rewrite(outer NAT, quoted={...}) on an ICMP (v4: type 3/11) or ICMPv6 error quoting a TCP or UDP datagram,
    whole or cut after 8..40 bytes of its L4 header (not through the TCP checksum): equal to scapy's from-scratch build of the rewritten
    packet, and to the kernel's replay of the calls."""

    count = 0

    @settings(max_examples=EXAMPLES, **_SETTINGS)
    @given(st.sampled_from(["tcp", "udp"]), CASE_BITS, payloads)
    def check(l4, data, payload):
        bits = Bits(data)
        outer_o, outer_n, outer_keys = nat(bits, version, None)
        inner_o, inner_n, inner_keys = nat(bits, version, l4)
        kind = bits.choice((0, 1, 2))
        cut = None if bits.flag() else bits.choice(CUTS[l4])

        def build(outer, inner):
            quote = raw(_datagram(version, l4, inner, payload))
            if cut is not None:
                quote = quote[:(20 if version == 4 else 40) + cut]
            if version == 4:
                error = ICMP(type=(3, 11, 11)[kind], code=(3, 0, 1)[kind])
            else:
                error = ICMPV6_ERRORS[kind]()
            return raw(ETHER / _ip(version, outer[0], outer[1], outer[4]) / error / Raw(quote))

        nonlocal count
        count += _compare(build, (outer_o, outer_n, outer_keys), (inner_o, inner_n, inner_keys), "quoted")

    check()
    record_property("kernel_checked", count)


def test_icmp_error_calls_cover_the_quote():
    """A port-unreachable for a DNS query, NATed back (outer destination, quoted source and source port): the
    quoted IPv4 and UDP checksums are patched and every quoted change is carried into the ICMP checksum with
    bpf_l4_csum_replace (no pseudo-header: ICMPv4 has none). Expected: scapy's rebuild; offsets counted by hand
    (Ethernet 14 + IPv4 20: ICMP at 34, its checksum at 36; quoted IPv4 at 42, checksum 52, source 54; UDP at
    62, source port 62, checksum 68)."""
    before = ETHER / IP(src="192.0.2.1", dst="203.0.113.7") / ICMP(type=3, code=3) / \
        IP(src="203.0.113.7", dst="192.0.2.1") / UDP(sport=40000, dport=53) / b"query"
    after = ETHER / IP(src="192.0.2.1", dst="10.0.0.7") / ICMP(type=3, code=3) / \
        IP(src="10.0.0.7", dst="192.0.2.1") / UDP(sport=1234, dport=53) / b"query"
    r = rewrite(raw(before), daddr="10.0.0.7", quoted=dict(saddr="10.0.0.7", sport=1234))
    assert r.packet == raw(after)
    icmp = [c for c in r.calls if isinstance(c, CsumReplaceCall) and c.offset == 36]
    assert icmp and all(c.helper == "bpf_l4_csum_replace" and not c.flags & 0x10 for c in icmp)
    assert {c.offset for c in r.calls if isinstance(c, CsumReplaceCall)} == {24, 36, 52, 68}


def test_quote_without_its_tcp_checksum():
    """A quote of 8 TCP bytes (RFC 792's minimum) holds the ports but not the checksum: the ports change, no call
    touches bytes past the quote (Linux NAT does the same). Expected: scapy's rewritten datagram, cut."""
    def frame(sport):
        quote = raw(IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=sport, dport=80))[:28]
        return raw(ETHER / IP(src="10.0.0.2", dst="10.0.0.1") / ICMP(type=3, code=4) / Raw(quote))
    r = rewrite(frame(1000), quoted=dict(sport=2000))
    assert r.packet == frame(2000)
    assert max(c.offset for c in r.calls if isinstance(c, CsumReplaceCall)) < len(r.packet)


# --- tunnels -------------------------------------------------------------------------------------------------

def _tunnel_options(bits: Bits) -> dict:
    """The outer UDP source port, VNI / GRE key (odd: a key present), GRE checksum or Geneve's Ethernet payload,
    outer UDP checksum computed (None) or 0 (58 bits)."""
    return dict(sport=bits.u16(), id=bits.take(24), teb=bits.flag(), udp0=bits.choice((None, 0)))


def _tunnel(kind: str, inner: bytes, options: dict):
    """The outer layers of a tunnel carrying ``inner`` (an IP datagram's bytes, kept as raw bytes: scapy would
    dissect them again, a UDP port 4789 inside as VXLAN, and rebuild them differently)."""
    ethertype = 0x0800 if inner[0] >> 4 == 4 else 0x86DD
    if kind == "vxlan":
        return UDP(sport=options["sport"], dport=4789, chksum=options["udp0"]) / VXLAN(vni=options["id"]) / \
            Ether(dst=INNER_ETHER.dst, src=INNER_ETHER.src, type=ethertype) / Raw(inner)
    if kind == "geneve":
        if options["teb"]:
            return UDP(sport=options["sport"], dport=6081, chksum=options["udp0"]) / \
                GENEVE(vni=options["id"], proto=0x6558) / \
                Ether(dst=INNER_ETHER.dst, src=INNER_ETHER.src, type=ethertype) / Raw(inner)
        return UDP(sport=options["sport"], dport=6081, chksum=options["udp0"]) / \
            GENEVE(vni=options["id"], proto=ethertype) / Raw(inner)
    if kind == "gre":
        return GRE(chksum_present=options["teb"], key_present=options["id"] & 1, key=options["id"],
                   proto=ethertype) / Raw(inner)
    return Raw(inner)  # IP-in-IP / 6in4 / 4in6 / 6in6: the outer protocol is set by the caller


@pytest.mark.parametrize("kind", ["vxlan", "geneve", "gre", "ipip"])
def test_tunnel_nat_equals_scapy_and_kernel(kind, record_property):
    """rewrite(outer NAT, inner={...}) on a VXLAN, Geneve (Ethernet or IP payload), GRE (with or without its
    checksum and key) or IP-in-IP packet (every IPv4/IPv6 combination), outer UDP checksum computed or 0:
    equal to scapy's from-scratch build of the rewritten packet, and to the kernel's replay of the calls."""

    count = 0

    @settings(max_examples=EXAMPLES, **_SETTINGS)
    @given(st.sampled_from([4, 6]), st.sampled_from([4, 6]), st.sampled_from(["tcp", "udp"]), CASE_BITS, payloads)
    def check(outer_version, inner_version, l4, data, payload):
        bits = Bits(data)
        outer_o, outer_n, outer_keys = nat(bits, outer_version, None)
        inner_o, inner_n, inner_keys = nat(bits, inner_version, l4)
        options = _tunnel_options(bits)

        def build(outer, inner):
            ip = _ip(outer_version, outer[0], outer[1], outer[4])
            if kind == "ipip":
                setattr(ip, "proto" if outer_version == 4 else "nh", 4 if inner_version == 4 else 41)
            return raw(ETHER / ip / _tunnel(kind, raw(_datagram(inner_version, l4, inner, payload)), options))

        nonlocal count
        count += _compare(build, (outer_o, outer_n, outer_keys), (inner_o, inner_n, inner_keys), "inner")

    check()
    record_property("kernel_checked", count)


@pytest.mark.parametrize("kind", ["vxlan", "gre"])
@pytest.mark.parametrize("port, payload", [(5072, b""), (4789, b""), (4789, b"\x08\x00\x00"), (5072, b"\x41" * 7)])
def test_tunnel_nat_past_a_tunnel_port_inside(kind, port, payload):
    """The inner datagram is UDP to a tunnel's port, empty or holding the start of a header only (tshark: a
    malformed VXLAN / AYIYA three layers down): the outer and inner NAT is still made, equal to scapy's rebuild and
    the kernel's replay (hypothesis found inner port 5072, empty, refused as "AYIYA header needs 110 bytes")."""
    options = {"sport": 5000, "udp0": None, "id": 7, "teb": 1}

    def build(outer, inner):
        return raw(ETHER / IP(src=outer[0], dst=outer[1], ttl=outer[4])
                   / _tunnel(kind, raw(_datagram(4, "udp", inner, payload)), options))

    outer = (("192.0.2.1", "192.0.2.2", 0, 0, 64), ("192.0.2.9", "192.0.2.2", 0, 0, 64), {"saddr": "192.0.2.9"})
    inner = (("10.0.0.1", "10.0.0.2", 40000, port, 9), ("10.0.0.7", "10.0.0.2", 40001, port, 9),
             {"saddr": "10.0.0.7", "sport": 40001})
    _compare(build, outer, inner, "inner")


def test_nat_of_a_tunnel_whose_inner_datagram_is_cut():
    """GRE whose outer IPv4 total length ends 3 bytes before the inner datagram's (tshark 4.0: "length exceeds"):
    the outer NAT is made (scapy's rebuild with the new source: the outer header's checksum is all that covers it);
    an inner NAT is refused with the walker's reason, not "carries no tunnelled IP packet"."""
    inner = raw(IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=1, dport=2) / b"abcdef")

    def frame(src):
        return raw(ETHER / IP(src=src, dst="192.0.2.2", proto=47, len=20 + 4 + len(inner) - 3) / GRE(proto=0x0800)
                   / Raw(inner))

    assert rewrite(frame("192.0.2.1"), saddr="192.0.2.9").packet == frame("192.0.2.9")
    with pytest.raises(CsumValueError, match=r"^inside eth/ipv4/gre: truncated: IPv4 total length 46 ") as err:
        rewrite(frame("192.0.2.1"), inner={"saddr": "10.0.0.9"})
    assert err.value.code.value == "truncated"


def test_vxlan_zero_udp_checksum_is_left_alone():
    """An outer UDP checksum of 0 (none computed, as Linux VXLAN sends by default) stays 0: its calls carry
    BPF_F_MARK_MANGLED_0 (so that a program printed from them fits packets with and without the checksum) and the
    kernel's helper leaves a 0 alone; the inner TCP checksum is patched. Expected: scapy's rebuild with the outer
    checksum 0; offset 40 = 14 + 20 + 6, the outer UDP checksum."""
    def frame(dst, dport):
        return raw(ETHER / IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=5000, dport=4789, chksum=0) / VXLAN(vni=7)
                   / INNER_ETHER / IP(src="10.0.0.1", dst=dst) / TCP(sport=1, dport=dport) / b"data")
    r = rewrite(frame("10.0.0.2", 80), inner=dict(daddr="10.9.9.9", dport=8080))
    assert r.packet == frame("10.9.9.9", 8080)
    outer = [c for c in r.calls if isinstance(c, CsumReplaceCall) and c.offset == 40]
    assert outer and all(c.flags & ~0xF == bpf.BPF_F_MARK_MANGLED_0 for c in outer)
    if KERNEL:
        assert _kernel_replay(frame("10.0.0.2", 80), r) == r.packet


@pytest.mark.parametrize("kwargs, code, message", [
    (dict(quoted=dict(saddr="10.0.0.1")), "no-quote", "not an ICMP/ICMPv6 error"),
    (dict(inner=dict(saddr="10.0.0.1")), "no-tunnel", "no tunnelled IP packet"),
])
def test_nested_requests_on_plain_packets(kwargs, code, message):
    with pytest.raises(CsumValueError, match=message) as info:
        rewrite(raw(IP(src="10.0.0.1", dst="10.0.0.2") / UDP() / b"x"), **kwargs)
    assert info.value.code == code


def test_nested_bad_keywords():
    frame = raw(IP(src="10.0.0.2", dst="10.0.0.1") / ICMP(type=3, code=3) / IP(src="10.0.0.1", dst="10.0.0.2") /
                ICMP())
    with pytest.raises(CsumValueError, match="quoted: unknown keyword 'fields'"):
        rewrite(frame, quoted=dict(fields=[]))
    with pytest.raises(CsumTypeError, match="quoted must be a dict"):
        rewrite(frame, quoted=[("saddr", "1.2.3.4")])
    with pytest.raises(CsumValueError, match="quoted packet has no ports") as info:
        rewrite(frame, quoted=dict(sport=1))
    assert info.value.code == "no-ports"
    with pytest.raises(CsumValueError, match="quoted saddr must be an IPv4 address"):
        rewrite(frame, quoted=dict(saddr="::1"))


# --- ICMP echo identifiers and ICMP errors inside tunnels ----------------------------------------------------

def _echo(version: int, ident: int, payload: bytes):
    return ICMP(type=8, id=ident, seq=9) / payload if version == 4 else ICMPv6EchoRequest(id=ident, seq=9) / payload


@pytest.mark.parametrize("version", [4, 6])
def test_icmp_id_equals_scapy_and_kernel(version, record_property):
    """rewrite(icmp_id=...) on an ICMP / ICMPv6 echo request (with address and TTL changes), and quoted=dict(icmp_id=...)
    on an error quoting one (as Linux NAT rewrites the echo identifier, nf_nat_proto.c icmp_manip_pkt): equal to
    scapy's from-scratch build with the new identifier (the quoted ICMPv6 checksum over the quoted pseudo-header
    included), and to the kernel's replay of the calls."""
    count = 0

    @settings(max_examples=EXAMPLES // 2, **_SETTINGS)
    @given(st.booleans(), u16, u16, CASE_BITS, payloads)
    def check(quoted, ident, new_ident, data, payload):
        bits = Bits(data)
        outer_o, outer_n, outer_keys = nat(bits, version, None)
        inner_o, inner_n, inner_keys = nat(bits, version, None)

        def build(outer, inner, ident):
            if not quoted:
                return raw(ETHER / _ip(version, outer[0], outer[1], outer[4]) / _echo(version, ident, payload))
            quote = raw(_ip(version, inner[0], inner[1], inner[4]) / _echo(version, ident, payload))
            error = ICMP(type=11, code=0) if version == 4 else ICMPv6TimeExceeded()
            return raw(ETHER / _ip(version, outer[0], outer[1], outer[4]) / error / Raw(quote))

        frame = build(outer_o, inner_o, ident)
        if quoted:
            r = rewrite(frame, **outer_keys, quoted=dict(inner_keys, icmp_id=new_ident))
        else:
            r = rewrite(frame, **outer_keys, icmp_id=new_ident)
        nonlocal count
        count += _check(frame, build(outer_n, inner_n, new_ident), r)

    check()
    record_property("kernel_checked", count)


def test_icmp_id_on_other_packets_is_refused():
    """icmp_id on a UDP datagram or an ICMP error (no identifier there): code no-icmp-id naming the packet."""
    for frame, match in ((raw(IP() / UDP()), r"packet is not an ICMP/ICMPv6 query .*UDP"),
                         (raw(IP() / ICMP(type=3) / IP() / UDP()), "ICMP type 3")):
        with pytest.raises(CsumValueError, match=match) as info:
            rewrite(frame, icmp_id=1)
        assert info.value.code == "no-icmp-id"
    with pytest.raises(CsumValueError, match="quoted packet is not an ICMP/ICMPv6 query") as info:
        rewrite(raw(IP() / ICMP(type=3) / IP() / UDP()), quoted=dict(icmp_id=1))
    assert info.value.code == "no-icmp-id"


@pytest.mark.parametrize("kind", ["vxlan", "geneve", "gre", "ipip"])
def test_icmp_error_in_tunnel_equals_scapy_and_kernel(kind, record_property):
    """rewrite(inner={..., "quoted": {...}}) on an ICMP / ICMPv6 error carried by a VXLAN, Geneve, GRE or IP-in-IP
    tunnel (outer UDP checksum computed or 0, GRE checksum present or not): the tunnelled error's header, its
    quote (IPv4 header checksum, L4 checksum) and every enclosing checksum (the error's, GRE, outer UDP) equal to
    scapy's from-scratch build of the rewritten packet, and to the kernel's replay of the calls."""
    count = 0

    @settings(max_examples=EXAMPLES // 2, **_SETTINGS)
    @given(st.sampled_from([4, 6]), st.sampled_from([4, 6]), st.sampled_from(["tcp", "udp"]), CASE_BITS, payloads)
    def check(outer_version, inner_version, l4, data, payload):
        bits = Bits(data)
        outer_o, outer_n, outer_keys = nat(bits, outer_version, None)
        inner_o, inner_n, inner_keys = nat(bits, inner_version, None)
        quote_o, quote_n, quote_keys = nat(bits, inner_version, l4)
        options = _tunnel_options(bits)

        def build(outer, inner, quote):
            error = ICMP(type=3, code=3) if inner_version == 4 else ICMPv6DestUnreach()
            datagram = raw(_ip(inner_version, inner[0], inner[1], inner[4]) / error /
                           Raw(raw(_datagram(inner_version, l4, quote, payload))))
            ip = _ip(outer_version, outer[0], outer[1], outer[4])
            if kind == "ipip":
                setattr(ip, "proto" if outer_version == 4 else "nh", 4 if inner_version == 4 else 41)
            return raw(ETHER / ip / _tunnel(kind, datagram, options))

        frame = build(outer_o, inner_o, quote_o)
        r = rewrite(frame, **outer_keys, inner=dict(inner_keys, quoted=quote_keys))
        nonlocal count
        count += _check(frame, build(outer_n, inner_n, quote_n), r)

    check()
    record_property("kernel_checked", count)


def test_quoted_inside_inner_needs_an_error():
    """inner={"quoted": ...} on a tunnel whose packet is not an ICMP error: code no-quote, naming the tunnelled packet."""
    frame = raw(ETHER / IP() / UDP(sport=1, dport=4789) / VXLAN() / INNER_ETHER / IP() / UDP() / b"x")
    with pytest.raises(CsumValueError, match="inner quoted: the tunnelled packet is not an ICMP") as info:
        rewrite(frame, inner=dict(quoted=dict(saddr="10.0.0.1")))
    assert info.value.code == "no-quote"
