"""The layer graph (csum/layers/table.py DISSECTORS, C_EDGES) against both walkers: every edge has a Python handler,
every edge the C walker takes has a C case, and on packets built by scapy for each edge of the tables C dispatches
on, the C walker answers exactly for its edges, as the Python walker (the reference) does, and declines the others.

Expected values: the table is the specification (which keys lead where), scapy builds the packets and their
checksums, the Python walker is the reference the C walker is compared with."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from csum import engine
from csum.errors import CsumValueError
from csum.layers import dissect, table as T, verify_stack, walk
from csum.layers.check import Result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import gen_cwalk_table  # noqa: E402

#: Which registry a table's child layers are found in (csum/layers/dissect.py).
_REGISTRY = {"ip.proto": dissect.CARRIED}


def _handler(table: str, layer: str) -> object:
    if table == "link.type":
        return dissect.LINK_KINDS.get(layer) or dissect.LAYERS.get(layer)
    return _REGISTRY.get(table, dissect.LAYERS).get(layer)


def test_every_edge_has_a_python_handler():
    """Each child layer of each dissector table is registered in the registry its table uses."""
    missing = [(table, key, layer) for table, edges in T.DISSECTORS.items() for key, layer in edges.items()
               if _handler(table, layer) is None]
    assert not missing, missing


def test_every_handler_is_some_edge_s_child():
    """No registered handler is unreachable: each is the child layer of some edge (no dead handler), and the
    registries hold nothing else."""
    children = {layer for edges in T.DISSECTORS.values() for layer in edges.values()}
    carried = set(T.DISSECTORS["ip.proto"].values())
    assert set(dissect.CARRIED) == carried
    assert set(dissect.LINK_KINDS) <= set(T.DISSECTORS["link.type"].values())
    # "eth", "vlan", "wlan-in", "pw" and the rest are reached through a table; every frame layer is some edge's child
    assert set(dissect.LAYERS) <= children, set(dissect.LAYERS) - children


def test_c_edges_are_edges_and_have_a_c_case():
    """Each C edge is an edge of the graph; the C walker (_walk.c, with _encap.h, the encapsulations it shares with
    _rewrite.c) follows each table through its generated ct_next_<table>() and has a case (or a test) for each child
    layer it takes; the committed header is the generated one."""
    src = "".join((ROOT / "csum" / "engine" / name).read_text() for name in ("_walk.c", "_encap.h"))
    header = (ROOT / "csum" / "engine" / "_cwalk_table.h").read_text()
    assert header == gen_cwalk_table.render()
    for table, keys in T.C_EDGES.items():
        assert keys <= set(T.DISSECTORS[table]), (table, keys - set(T.DISSECTORS[table]))
        # link.type: a capture's CT_LINKS row, looked up once, holds its edge's layer
        follows = "row->kind" if table == "link.type" else f"{gen_cwalk_table.next_function(table)}("
        assert follows in src, table
        for key in keys:
            layer = gen_cwalk_table.layer_id(T.DISSECTORS[table][key])
            assert re.search(rf"(case {layer}:|== {layer}\b)", src), (table, key, layer)


# --- the C walker on each edge of the tables it dispatches on --------------------------------------------------


def _rows(results: list[Result]) -> list[tuple]:
    return [tuple(getattr(r, name) for name in Result.__slots__) for r in results]


def _python(frame: bytes, linktype: int = T.LINKTYPE_ETHERNET) -> list[tuple] | str:
    view = memoryview(frame)
    try:
        return _rows(verify_stack(view, walk(view, linktype, strict=True).fields))
    except CsumValueError as exc:
        return exc.code


def _inner():
    from scapy.all import IP, UDP
    return IP(src="192.0.2.1", dst="198.51.100.2") / UDP(sport=1000, dport=53) / b"graph"


def _ethertype(key: int) -> bytes:
    from scapy.all import PPP, UDP, Dot1Q, Ether, IPv6, PPPoE, Raw, raw
    from scapy.contrib.mpls import MPLS
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=key)
    layer = T.ETHERTYPES[key]
    if layer == "ipv4":
        return raw(eth / _inner())
    if layer == "ipv6":
        return raw(eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=53) / b"graph")
    if layer == "vlan":
        return raw(eth / Dot1Q(vlan=7, type=0x0800) / _inner())
    if layer == "mpls":
        return raw(eth / MPLS(label=16, s=1) / _inner())
    if layer == "pppoe":
        return raw(eth / PPPoE(sessionid=1) / PPP(proto=0x21) / Raw(raw(_inner())))
    return raw(eth / Raw(raw(_inner())))


def _ip_proto(key: int) -> bytes:
    from scapy.all import AH, GRE, ICMP, IP, TCP, UDP, Ether, ICMPv6EchoRequest, IPv6, Raw, raw
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    outer = IP(src="10.0.0.1", dst="10.0.0.2", proto=key)
    inner = {T.IPIP: _inner(), T.IPV6_IN: IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(dport=53) / b"g",
             T.GRE: GRE(proto=0x0800) / _inner(), T.AH: AH(nh=T.UDP, payloadlen=1) / UDP(dport=53) / b"g",
             T.TCP: TCP(sport=1, dport=80) / b"g", T.UDP: UDP(sport=1, dport=53) / b"g", T.ICMP: ICMP() / b"g"}
    if key == T.ICMPV6:
        return raw(eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / ICMPv6EchoRequest())
    return raw(eth / outer / inner.get(key, Raw(bytes(range(48)))))


def _udp_port(key: int) -> bytes:
    from scapy.all import GRE, IP, UDP, Ether, Raw, raw
    from scapy.contrib.geneve import GENEVE
    from scapy.contrib.gtp import GTP_U_Header
    from scapy.layers.vxlan import VXLAN
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    inner = {T.VXLAN_PORT: VXLAN(vni=1) / eth / _inner(), T.GENEVE_PORT: GENEVE(proto=0x6558) / eth / _inner(),
             T.GTP_U_PORT: GTP_U_Header(teid=1) / _inner(), T.GRE_UDP_PORT: GRE(proto=0x0800) / _inner()}
    if key == T.GTP_V0_PORT:  # GSM 09.60 GTPv0: version 0, PT 1, type 0xff (T-PDU), Length, 20 bytes in all
        data = raw(_inner())
        payload = Raw(bytes([0x10, T.GTP_TPDU]) + len(data).to_bytes(2, "big") + bytes(16) + data)
    else:
        payload = inner.get(key, Raw(bytes(range(48))))
    return raw(eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=40000, dport=key) / payload)


def _link_type(key: int) -> tuple[bytes, int]:
    """A frame of link type ``key`` carrying _inner() (IPv6 for LINKTYPE_IPV6): scapy's Ethernet, Linux cooked (SLL,
    SLL2) and DLT_NULL (family in the host's order) headers; by hand from tcpdump.org's LINKTYPE_ descriptions the
    Cisco HDLC header (address 0x0f, control 0, EtherType), DLT_LOOP's family in network order and IPoIB's 40-byte
    pseudo-header before the 4-byte RFC 4391 header. A link type C does not walk gets bare IP bytes."""
    from scapy.all import UDP, CookedLinux, CookedLinuxV2, Ether, IPv6, Loopback, raw
    ip = raw(_inner())
    kind = T.DISSECTORS["link.type"][key]
    if key == T.LINKTYPE_IPV6:
        ip = raw(IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=53) / b"graph")
    if kind == "ip":
        return ip, key
    if kind == "ethernet":
        return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / _inner()), key
    if kind == "family-host":
        return raw(Loopback(type=2) / _inner()), key
    if kind == "family-net":
        return (2).to_bytes(4, "big") + ip, key
    if key == T.LINKTYPE_LINUX_SLL:
        return raw(CookedLinux(pkttype=0, lladdrtype=1, lladdrlen=6, proto=T.ETH_IPV4) / _inner()), key
    if key == T.LINKTYPE_LINUX_SLL2:
        return raw(CookedLinuxV2(proto=T.ETH_IPV4, ifindex=1, lladdrtype=1, lladdrlen=6) / _inner()), key
    if key == 104:  # LINKTYPE_C_HDLC
        return b"\x0f\x00\x08\x00" + ip, key
    if key == 242:  # LINKTYPE_IPOIB: the pseudo-header, then the EtherType and 2 reserved bytes
        return bytes(40) + b"\x08\x00\x00\x00" + ip, key
    assert kind not in T.C_LINK_KINDS, key
    return ip, key  # any bytes: C declines the link type


def _ppp_protocol(key: int) -> bytes:
    from scapy.all import PPP, UDP, Ether, IPv6, PPPoE, Raw, raw
    from scapy.contrib.mpls import MPLS
    inner = {"ipv4": _inner(), "ipv6": IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=53) / b"g",
             "mpls": MPLS(label=16, s=1) / _inner()}[T.PPP_PROTOCOLS[key]]
    return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / PPPoE(sessionid=1) / PPP(proto=key)
               / Raw(raw(inner)))


def _mpls_nibble(key: int) -> bytes:
    from scapy.all import UDP, Ether, IPv6, Raw, raw
    from scapy.contrib.mpls import MPLS
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    inner = {"ipv4": _inner(), "ipv6": IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=53) / b"g",
             "pw": Raw(bytes(4)) / eth / _inner()}[T.MPLS_NIBBLES[key]]  # RFC 4385 control word, RFC 4448 frame
    return raw(eth / MPLS(label=16, s=1) / inner)


def _gre_proto(key: int) -> bytes:
    from scapy.all import GRE, IP, UDP, Ether, IPv6, Raw, raw
    from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    inner = {T.ETH_IPV4: _inner(), T.ETH_IPV6: IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(dport=53) / b"g",
             T.ETH_TEB: eth / _inner(), T.ETH_ERSPAN2: ERSPAN_II(session_id=1) / eth / _inner(),
             T.ETH_ERSPAN3: ERSPAN_III(session_id=1) / eth / _inner()}
    gre = GRE(proto=key, seqnum_present=int(key in (T.ETH_ERSPAN2, T.ETH_ERSPAN3)), sequence_number=1)
    return raw(eth / IP(src="10.0.0.1", dst="10.0.0.2") / gre / inner.get(key, Raw(bytes(range(48)))))


def _icmp_type(key: int) -> bytes:
    from scapy.all import ICMP, IP, Ether, raw
    return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2")
               / ICMP(type=key, code=0) / raw(_inner()))


def _icmpv6_type(key: int) -> bytes:
    from scapy.all import UDP, Ether, ICMPv6Unknown, IPv6, raw
    quoted = IPv6(src="2001:db8::2", dst="2001:db8::3") / UDP(sport=1, dport=53) / b"graph"
    return raw(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IPv6(src="2001:db8::1", dst="2001:db8::2")
               / ICMPv6Unknown(type=key, code=0, msgbody=bytes(4) + raw(quoted)))


_BUILD = {"link.type": _link_type, "ethertype": _ethertype, "ppp.protocol": _ppp_protocol,
          "mpls.nibble": _mpls_nibble, "gre.proto": _gre_proto, "ip.proto": _ip_proto, "udp.port": _udp_port,
          "icmp.type": _icmp_type, "icmpv6.type": _icmpv6_type}


def test_the_c_tables_are_all_built():
    """Every table the C walker dispatches on has its packets here."""
    assert set(_BUILD) == set(T.C_EDGES)


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
@pytest.mark.parametrize("table, key", [(t, k) for t in _BUILD for k in sorted(T.DISSECTORS[t])])
def test_c_takes_exactly_its_edges(table, key):
    """A packet through each edge: the C walker answers for the edges table.C_EDGES gives it, equal to the Python
    walker, and whose checksums (scapy's) pass; for every other edge it declines (None: the packet goes to Python)."""
    built = _BUILD[table](key)
    frame, linktype = built if isinstance(built, tuple) else (built, T.LINKTYPE_ETHERNET)
    got = engine.cwalk.verify(frame, linktype)
    if key not in T.C_EDGES[table]:
        assert got is None
        return
    assert got is not None
    assert _rows(got) == _python(frame, linktype)
    assert got and all(r.ok for r in got)
    if table in ("icmp.type", "icmpv6.type"):  # the quote followed: its UDP (and IPv4 header) judged too
        assert len(got) == 2 + (table == "icmp.type") * 2


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
def test_erspan_type_i_through_gre_proto():
    """GRE's "erspan" edge without a sequence number is ERSPAN type I (the frame right after GRE), in C as in the
    Python walker; scapy builds it and its checksums."""
    from scapy.all import GRE, IP, Ether, raw
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frame = raw(eth / IP(src="10.0.0.1", dst="10.0.0.2") / GRE(proto=T.ETH_ERSPAN2) / eth / _inner())
    got = engine.cwalk.verify(frame, T.LINKTYPE_ETHERNET)
    assert got is not None and _rows(got) == _python(frame)
    assert [r.depth for r in got] == [0, 1, 1] and all(r.ok for r in got)


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
@pytest.mark.parametrize("table, key", [("icmp.type", 0), ("icmp.type", 8), ("icmp.type", 13), ("icmpv6.type", 128),
                                        ("icmpv6.type", 129), ("icmpv6.type", 135)])
def test_no_quote_off_the_icmp_tables(table, key):
    """An ICMP/ICMPv6 type no entry of its table names (echo, timestamp, Neighbor Solicitation) quotes nothing, in C
    as in the Python walker: its body, an IP datagram's bytes, is not walked (the message's own checksum alone, and
    IPv4's header)."""
    assert key not in T.DISSECTORS[table]
    frame = _BUILD[table](key)
    got = engine.cwalk.verify(frame, T.LINKTYPE_ETHERNET)
    assert got is not None and _rows(got) == _python(frame)
    assert len(got) == 1 + (table == "icmp.type") and all(r.ok for r in got)
