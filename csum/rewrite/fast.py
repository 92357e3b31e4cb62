"""The C engine of capture rewriting (csum/engine/_rewrite.c, ``csum.engine.crewrite``) bound to a set of rules.

The C answers the common stacks (Ethernet with up to two VLAN tags or raw IP; IPv4 with options other than source
routes, first and later fragments; IPv6 with hop-by-hop and destination options but no Home Address; TCP, UDP, ICMP
and ICMPv6 other than errors; VXLAN with such a packet inside) exactly as :func:`csum.rewrite.apply.apply` does, the
same helper arithmetic in the same order (tests/rewrite/test_rewrite_capture.py compares the two); every other
packet, and every packet where something would be left alone, it declines to the Python engine. Without the
extension (or with ``CSUM_ENGINE`` other than ``c``) every packet is declined.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine
from ..layers import table
from .apply import Outcome
from .rules import Rules

__all__ = ["facts", "rewrite_packets"]


def facts() -> dict[str, Any]:
    """The protocol facts the C engine uses, by name, from csum/layers/table.py (none is written in the C)."""
    return {"eth_ipv4": table.ETH_IPV4, "eth_ipv6": table.ETH_IPV6, "vlan_tpids": sorted(table.VLAN_TPIDS),
            "tcp": table.TCP, "udp": table.UDP, "icmp": table.ICMP, "icmpv6": table.ICMPV6,
            "tcp_field": table.TCP_ENTRY.field, "udp_field": table.UDP_ENTRY.field,
            "icmp_field": table.ICMP_ENTRY.field, "icmpv6_field": table.ICMPV6_ENTRY.field,
            "icmp_errors": sorted(table.ICMP_ERRORS), "icmpv6_errors": sorted(table.ICMPV6_ERRORS),
            "source_routes": list(table.IPV4_SOURCE_ROUTES), "hop_by_hop": table.HOP_BY_HOP,
            "dest_opts": table.DEST_OPTS, "home_address": table.HOME_ADDRESS_OPTION, "jumbo": table.JUMBO_OPTION,
            "vxlan_port": table.VXLAN_PORT, "udp_tunnels": sorted(table.UDP_TUNNELS),
            "ipv4_tos": table.IPV4_TOS, "ipv4_ttl": table.IPV4_TTL}


def _plan(rules: Rules) -> Any:
    """The C engine's form of ``rules`` (made once per Rules object and kept on it)."""
    plan = rules.__dict__.get("_c_plan")
    if plan is None:
        maps = {side: [(m.old.version, int(m.old.network_address).to_bytes(16, "big"), m.old.prefixlen,
                        int(m.new.network_address).to_bytes(16, "big"), m.new.prefixlen)
                       for m in rules.map_ip + (rules.map_src if side else rules.map_dst)] for side in (True, False)}
        anon = rules._cryptopan.anonymize_packed if rules._cryptopan is not None else None
        plan = engine.crewrite.Plan(  # type: ignore[union-attr]
            facts(), maps[True], maps[False], [(-1 if m.proto is None else m.proto, m.old, m.new) for m in rules.map_port],
            -1000 if rules.ttl is None else rules.ttl, -1 if rules.dscp is None else rules.dscp,
            -1 if rules.ecn is None else rules.ecn, -1 if rules.tclass is None else rules.tclass,
            -1 if rules.flowlabel is None else rules.flowlabel, [(o or b"", n) for o, n in rules.mac_src],
            [(o or b"", n) for o, n in rules.mac_dst], list(rules.vlan_retag), ("outer", "inner", "all").index(rules.level),
            anon)
        object.__setattr__(rules, "_c_plan", plan)
    return plan


def rewrite_packets(data: bytearray, chunk: Any, rules: Rules, out: Outcome) -> tuple[list[int], int]:
    """Rewrite the packets of ``chunk`` (a :class:`csum.pcap.Capture`) in ``data`` (its bytes, writable) that the C
    engine takes; returns the indices of those it declined and how many it took. Counts go to ``out``."""
    n = len(chunk.offsets)
    c = engine.crewrite
    if c is None or not n:
        return list(range(n)), 0
    as64 = [np.ascontiguousarray(a, dtype=np.int64) for a in (chunk.offsets, chunk.caplens, chunk.origlens,
                                                                chunk.linktypes)]
    declined, kept, changed = c.rewrite(_plan(rules), data, *as64)
    taken = n - len(declined)
    out.packets += taken
    out.kept += kept
    out.changed += changed
    return declined, taken
