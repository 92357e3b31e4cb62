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
    """Each C edge is an edge of the graph; the C walker (_walk.c) follows each table through its generated
    ct_next_<table>() and has a case (or a test) for each child layer it takes; the committed header is the generated
    one."""
    src = (ROOT / "csum" / "engine" / "_walk.c").read_text()
    header = (ROOT / "csum" / "engine" / "_cwalk_table.h").read_text()
    assert header == gen_cwalk_table.render()
    for table, keys in T.C_EDGES.items():
        assert keys <= set(T.DISSECTORS[table]), (table, keys - set(T.DISSECTORS[table]))
        assert f"{gen_cwalk_table.next_function(table)}(" in src, table
        for key in keys:
            layer = gen_cwalk_table.layer_id(T.DISSECTORS[table][key])
            assert re.search(rf"(case {layer}:|== {layer}\b)", src), (table, key, layer)


# --- the C walker on each edge of the tables it dispatches on --------------------------------------------------


def _rows(results: list[Result]) -> list[tuple]:
    return [tuple(getattr(r, name) for name in Result.__slots__) for r in results]


def _python(frame: bytes) -> list[tuple] | str:
    view = memoryview(frame)
    try:
        return _rows(verify_stack(view, walk(view, 1, strict=True).fields))
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


_BUILD = {"ethertype": _ethertype, "ip.proto": _ip_proto, "udp.port": _udp_port}


@pytest.mark.skipif(engine.cwalk is None, reason="csum.engine._cwalk is not built or CSUM_ENGINE is not c")
@pytest.mark.parametrize("table, key", [(t, k) for t in _BUILD for k in sorted(T.DISSECTORS[t])])
def test_c_takes_exactly_its_edges(table, key):
    """A packet through each edge: the C walker answers for the edges table.C_EDGES gives it, equal to the Python
    walker, and whose checksums (scapy's) pass; for every other edge it declines (None: the packet goes to Python)."""
    frame = _BUILD[table](key)
    got = engine.cwalk.verify(frame, 1)
    if key not in T.C_EDGES[table]:
        assert got is None
        return
    assert got is not None
    assert _rows(got) == _python(frame)
    assert got and all(r.ok for r in got)
