"""Rewrite.format("tc") / format("xdp") for NAT through ICMP errors and tunnels, run on the running kernel.

For each kind of packet (ICMP / ICMPv6 errors quoting TCP, UDP or an echo, whole or cut after 8 bytes; ICMP echo
queries; VXLAN, Geneve, GRE with and without its checksum, IP-in-IP; an ICMP error inside VXLAN) and a few sets
of changes, the printed program is compiled once (clang -target bpf) from one packet of that kind, loaded, and
run through BPF_PROG_TEST_RUN on generated packets of the same layout (other addresses, ports, TTLs, ids,
payloads, outer UDP checksum computed or 0). Expected bytes: csum.rewrite's packet for each generated packet
(itself equal to scapy's from-scratch build, tests/rewrite/test_rewrite_nested.py); the tc form must also pass the
kernel's CHECKSUM_COMPLETE check (BPF_F_TEST_SKB_CHECKSUM_COMPLETE: a stale skb->csum fails it), and the output
packet is checked field by field with csum's protocol model. Skipped where clang, libbpf or BPF are missing.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Callable, NamedTuple

import pytest
from bpf_build import compile_bpf, why_not
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.compat import raw
from scapy.contrib.geneve import GENEVE
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6TimeExceeded, IPv6
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from csum.kernel import prog
from csum.rewrite import rewrite

pytestmark = pytest.mark.skipif(why_not() is not None, reason=str(why_not()))

#: 30 generated packets per kind and program by default, 300 under CSUM_HYPOTHESIS_PROFILE=thorough.
EXAMPLES = 30 * max(1, settings().max_examples // 2000)
ETHER = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
INNER_ETHER = Ether(dst="02:00:00:00:00:03", src="02:00:00:00:00:04")


class Values(NamedTuple):
    """What varies between packets of one layout."""

    v4: tuple[str, ...]
    v6: tuple[str, ...]
    ports: tuple[int, ...]
    ttls: tuple[int, int]
    ident: int
    payload: bytes
    udp0: bool
    error: int


u16 = st.one_of(st.sampled_from([0, 1, 0xFFFF]), st.integers(0, 0xFFFF))
values = st.builds(
    Values,
    st.tuples(*[st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))] * 4),
    st.tuples(*[st.binary(min_size=16, max_size=16).map(lambda b: str(ipaddress.IPv6Address(b)))] * 4),
    st.tuples(u16, u16),
    st.tuples(st.integers(1, 255), st.integers(1, 255)),
    u16,
    st.one_of(st.binary(max_size=64), st.integers(0, 64).map(bytes)),
    st.booleans(),
    st.integers(0, 1),
)
TEMPLATE = Values(("192.0.2.1", "203.0.113.7", "10.0.0.5", "10.0.0.6"),
                  ("2001:db8::1", "2001:db8::2", "2001:db8:1::5", "2001:db8:1::6"),
                  (40000, 53), (64, 63), 0x1234, b"payload", False, 0)


def _ip(version: int, v: Values, i: int, ttl: int, **kw: Any):
    if version == 4:
        return IP(src=v.v4[i], dst=v.v4[i + 1], ttl=ttl, **kw)
    return IPv6(src=v.v6[i], dst=v.v6[i + 1], hlim=ttl, **kw)


def _upper(l4: str, v: Values):
    if l4 == "tcp":
        return TCP(sport=v.ports[0], dport=v.ports[1], flags="S")
    if l4 == "udp":
        return UDP(sport=v.ports[0], dport=v.ports[1])
    return ICMP(type=8, id=v.ident, seq=7) if l4 == "icmp" else ICMPv6EchoRequest(id=v.ident, seq=7)


def _error(version: int, v: Values):
    if version == 4:
        return ICMP(type=(3, 11)[v.error], code=(3, 0)[v.error])
    return (ICMPv6DestUnreach, ICMPv6TimeExceeded)[v.error]()


def icmp_error(version: int, l4: str, cut: int | None = None) -> Callable[[Values], bytes]:
    """An ICMP/ICMPv6 error quoting a datagram (quoted source = the error's destination), cut after ``cut`` L4 bytes."""
    def build(v: Values) -> bytes:
        quote = raw(_ip(version, v, 2, v.ttls[1]) / _upper(l4, v) / v.payload)
        if cut is not None:
            quote = quote[:(20 if version == 4 else 40) + cut]
        return raw(ETHER / _ip(version, v, 0, v.ttls[0]) / _error(version, v) / Raw(quote))
    return build


def echo(version: int) -> Callable[[Values], bytes]:
    def build(v: Values) -> bytes:
        return raw(ETHER / _ip(version, v, 0, v.ttls[0]) / _upper("icmp" if version == 4 else "icmp6", v) / v.payload)
    return build


def tunnel(kind: str, outer: int, inner: int, l4: str = "tcp", quoted: bool = False) -> Callable[[Values], bytes]:
    """A tunnel packet carrying an IPv{inner} ``l4`` datagram, or (``quoted``) an ICMP error quoting one."""
    def build(v: Values) -> bytes:
        if quoted:
            datagram = raw(_ip(inner, v, 2, v.ttls[1]) / _error(inner, v) /
                           Raw(raw(_ip(inner, v, 2, v.ttls[0]) / _upper(l4, v) / v.payload)))
        else:
            datagram = raw(_ip(inner, v, 2, v.ttls[1]) / _upper(l4, v) / v.payload)
        ethertype = 0x0800 if inner == 4 else 0x86DD
        udp = dict(chksum=0) if v.udp0 else {}
        if kind == "vxlan":
            tail = UDP(sport=v.ident ^ 0x5555, dport=4789, **udp) / VXLAN(vni=v.ident) / \
                Ether(dst=INNER_ETHER.dst, src=INNER_ETHER.src, type=ethertype) / Raw(datagram)
        elif kind == "geneve":
            tail = UDP(sport=v.ident ^ 0x5555, dport=6081, **udp) / GENEVE(vni=v.ident, proto=ethertype) / Raw(datagram)
        elif kind in ("gre", "gre-csum"):
            tail = GRE(chksum_present=int(kind == "gre-csum"), proto=ethertype) / Raw(datagram)
        else:
            tail = Raw(datagram)
        ip = _ip(outer, v, 0, v.ttls[0])
        if kind == "ipip":
            setattr(ip, "proto" if outer == 4 else "nh", 4 if inner == 4 else 41)
        return raw(ETHER / ip / tail)
    return build


A4, B4, A6, B6 = "198.51.100.9", "0.0.0.0", "2001:db8:9::9", "::"
ICMP_ERROR_CHANGES = {
    4: [dict(daddr=A4, quoted=dict(saddr=A4, sport=8080, decrement_ttl=True)),
        dict(saddr=B4, decrement_ttl=True, quoted=dict(daddr=B4, dport=0xFFFF))],
    6: [dict(daddr=A6, quoted=dict(saddr=A6, sport=8080, decrement_ttl=True)),
        dict(saddr=B6, decrement_ttl=True, quoted=dict(daddr=B6, dport=0))],
}


def _quoted_echo(version: int) -> list[dict]:
    a, b = (A4, B4) if version == 4 else (A6, B6)
    return [dict(daddr=a, quoted=dict(saddr=a, icmp_id=0xFFFF, decrement_ttl=True)),
            dict(quoted=dict(daddr=b, icmp_id=0))]


def _tunnel_changes(outer: int, inner: int) -> list[dict]:
    a, b = (A4, B4) if inner == 4 else (A6, B6)
    return [dict(saddr=A4 if outer == 4 else A6, inner=dict(daddr=a, dport=8080, decrement_ttl=True)),
            dict(decrement_ttl=True, inner=dict(saddr=b, sport=0))]


KINDS: dict[str, tuple[Callable[[Values], bytes], list[dict]]] = {
    "icmp4-tcp": (icmp_error(4, "tcp"), ICMP_ERROR_CHANGES[4]),
    "icmp4-udp": (icmp_error(4, "udp"), ICMP_ERROR_CHANGES[4]),
    "icmp4-tcp-cut8": (icmp_error(4, "tcp", 8), ICMP_ERROR_CHANGES[4]),
    "icmp4-echo": (icmp_error(4, "icmp"), _quoted_echo(4)),
    "icmp6-tcp": (icmp_error(6, "tcp"), ICMP_ERROR_CHANGES[6]),
    "icmp6-udp": (icmp_error(6, "udp"), ICMP_ERROR_CHANGES[6]),
    "icmp6-echo": (icmp_error(6, "icmp6"), _quoted_echo(6)),
    "echo4": (echo(4), [dict(saddr=A4, icmp_id=0), dict(icmp_id=0xFFFF, decrement_ttl=True)]),
    "echo6": (echo(6), [dict(saddr=A6, icmp_id=0), dict(icmp_id=0xFFFF, decrement_ttl=True)]),
    "vxlan-4in4": (tunnel("vxlan", 4, 4), _tunnel_changes(4, 4)),
    "vxlan-6in6-udp": (tunnel("vxlan", 6, 6, "udp"), _tunnel_changes(6, 6)),
    "geneve-6in4": (tunnel("geneve", 4, 6), _tunnel_changes(4, 6)),
    "gre-csum-4in6": (tunnel("gre-csum", 6, 4), _tunnel_changes(6, 4)),
    "gre-4in4-udp": (tunnel("gre", 4, 4, "udp"), _tunnel_changes(4, 4)),
    "ipip-4in4": (tunnel("ipip", 4, 4), _tunnel_changes(4, 4)),
    "ipip-6in4": (tunnel("ipip", 4, 6, "udp"), _tunnel_changes(4, 6)),
    "vxlan-icmp4-error": (tunnel("vxlan", 4, 4, "udp", quoted=True),
                          [dict(inner=dict(daddr=A4, quoted=dict(saddr=A4, sport=8080, decrement_ttl=True))),
                           dict(saddr=B4, inner=dict(saddr=B4, decrement_ttl=True, quoted=dict(daddr=B4, dport=0)))]),
    "geneve-icmp6-error": (tunnel("geneve", 6, 6, "tcp", quoted=True),
                           [dict(inner=dict(daddr=A6, quoted=dict(saddr=A6, sport=8080, decrement_ttl=True)))]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """Loaded programs by (kind, change set index, form), compiled from the TEMPLATE packet of the kind."""
    loaded: dict[tuple[str, int, str], prog.Program] = {}
    out = tmp_path_factory.mktemp("rewrite_c_nested")

    def get(kind: str, i: int, form: str) -> prog.Program:
        key = (kind, i, form)
        if key not in loaded:
            build, changes = KINDS[kind]
            src = out / f"{kind}_{i}_{form}.c"
            src.write_text(rewrite(build(TEMPLATE), **changes[i]).format(form))
            loaded[key] = prog.load(str(compile_bpf(src, src.with_suffix(".o"))))
        return loaded[key]

    yield get
    for program in loaded.values():
        program.close()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_printed_program_makes_rewrites_bytes_on_kernel(kind, programs, record_property):
    """Invariant: on generated packets of one layout, each printed tc and XDP program makes csum.rewrite's bytes
    (every quoted / inner / enclosing checksum included, 0x0000/0xffff corners from all-zero payloads and
    ports 0/0xffff), and the tc form leaves a valid skb->csum on a CHECKSUM_COMPLETE skb."""
    build, changes = KINDS[kind]
    count = 0

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(values, st.integers(0, len(changes) - 1))
    def check(v: Values, i: int) -> None:
        nonlocal count
        frame = build(v)
        expected = rewrite(frame, **changes[i]).packet
        for form in ("tc", "xdp"):
            run = programs(kind, i, form).run(frame)
            assert run.packet.hex() == expected.hex(), form
            assert run.retval == (0 if form == "tc" else 2)  # TC_ACT_OK / XDP_PASS
            skb = [c.ok for c in run.results if c.layer == prog.SKB_CSUM]
            assert skb == ([True] if form == "tc" else [])
            count += 1

    check()
    record_property("kernel_checked", count)


def test_program_leaves_a_tunnel_checksum_of_zero_alone(programs):
    """A VXLAN program printed from a packet with an outer UDP checksum keeps a 0 (none computed) at 0 on another
    packet of the layout, as rewrite does (BPF_F_MARK_MANGLED_0), in both forms. Expected: scapy's build of the
    rewritten packet (outer source, inner destination, port and TTL) with the outer UDP checksum 0 (RFC 7348 5)."""
    build, changes = KINDS["vxlan-4in4"]
    v = TEMPLATE._replace(udp0=True)
    expected = build(v._replace(v4=(A4, *v.v4[1:3], A4), ports=(v.ports[0], 8080), ttls=(v.ttls[0], v.ttls[1] - 1)))
    assert rewrite(build(v), **changes[0]).packet == expected
    for form in ("tc", "xdp"):
        out = programs("vxlan-4in4", 0, form).run(build(v)).packet
        assert out == expected
        assert out[14 + 20 + 6:14 + 20 + 8] == b"\0\0"
