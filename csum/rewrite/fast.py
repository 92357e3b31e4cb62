"""The C engine of capture rewriting (csum/engine/_rewrite.c, ``csum.engine.crewrite``) bound to a set of rules.

The C answers every stack the C walker walks (Ethernet with its VLAN tags, raw IP, Linux cooked and the other link
headers csum/engine/_cwalk.c walks; MPLS label stacks and PPPoE sessions; IPv4 with options other than source routes,
first and later fragments; IPv6 with its extension headers (hop-by-hop and destination options, a Home Address,
routing headers whose final destination csum reads, AH, one fragment header) but no Jumbo Payload; TCP, UDP, ICMP and
ICMPv6 other than, when addresses are mapped, the Neighbor Discovery messages holding addresses; an ICMP/ICMPv6 error
with the datagram it quotes, whole or its start only, and its RFC 4884 extension; IP-in-IP, 6in4, GRE with its
checksum or not (IPv4, IPv6, bridged Ethernet, ERSPAN), VXLAN, Geneve, GTP-U and GTPv0, GRE-in-UDP, with such packets
and errors inside: the stacks the checker's C walker, csum/engine/_walk.c, walks and describes to _rewrite.c)
exactly as :func:`csum.rewrite.apply.apply` does, the same helper arithmetic in the same order
(tests/rewrite/test_rewrite_fast.py compares the two on random and mutated frames); every other packet, and every packet
where something would be left alone, it hands untouched to the Python engine (the fallback). Its protocol facts come
from csum/layers/table.py through the generated csum/engine/_cwalk_table.h.
Without the extension (or with ``CSUM_ENGINE`` other than ``c``) the Python engine rewrites every packet.
"""

from __future__ import annotations

from typing import Any

from .. import engine
from ..capture import pcap
from ..layers.reasons import Reason
from .outcome import Outcome
from .rules import Rules

__all__ = ["NO_C_ENGINE", "TRUNCATING", "rewrite_chunk"]

#: ``Outcome.declined``'s reasons besides the C engine's own (csum/engine/_rewrite.c DECLINES): it is not there (not
#: built, or ``CSUM_ENGINE`` other than ``c``); the rules cut frames (``--truncate``: csum.rewrite.truncate)
NO_C_ENGINE = "no-c-engine"
TRUNCATING = "truncate"


def _plan(rules: Rules) -> Any:
    """The C engine's form of ``rules`` (made once per Rules object and kept on it)."""
    plan = rules.__dict__.get("_c_plan")
    if plan is None:
        maps = [[(m.old.network_address.packed, m.old.prefixlen, m.new.network_address.packed, m.new.prefixlen)
                 for m in rules.map_ip + (rules.map_src if side else rules.map_dst)] for side in (True, False)]
        anon = rules._cryptopan.anonymize_packed if rules._cryptopan is not None else None
        unset = -1  # the C's "the rules leave it alone" (a TTL rule may be negative: NO_TTL there)
        plan = engine.crewrite.Plan(  # type: ignore[union-attr]
            maps[0], maps[1], [(unset if m.proto is None else m.proto, m.old, m.new) for m in rules.map_port],
            -1000 if rules.ttl is None else rules.ttl, *(unset if v is None else v for v in (
                rules.dscp, rules.ecn, rules.tclass, rules.flowlabel)),
            [(o or b"", n) for o, n in rules.mac_src], [(o or b"", n) for o, n in rules.mac_dst],
            list(rules.vlan_retag), ("outer", "inner", "all").index(rules.level), anon)
        object.__setattr__(rules, "_c_plan", plan)
    return plan


def rewrite_chunk(chunk: pcap.Capture, rules: Rules) -> tuple[bytes, Outcome, int]:
    """The bytes of ``chunk`` (a :class:`csum.pcap.Capture`) with every packet rewritten by ``rules``, what happened,
    and how many packets the C engine answered (the rest: :func:`csum.rewrite.apply.apply`, counted per reason in
    ``Outcome.declined``)."""
    out = Outcome()
    columns = chunk.buffers()[:4]  # offsets, captured and original lengths, link types: int64 buffers, no numpy
    offsets, origlens, linktypes = columns[0], columns[2], columns[3]

    def fallback(i: int) -> bytes | None:
        from .apply import apply  # the Python engine: imported by the first packet the C declines, if any

        return apply(chunk.packet(i), int(linktypes[i]), rules, int(origlens[i]), out)

    c = engine.crewrite
    if c is None:
        data = bytearray(chunk.data)
        for i in range(len(chunk)):
            new = fallback(i)
            if new is not None:
                start = int(offsets[i])
                data[start:start + len(new)] = new
        out.declined[NO_C_ENGINE] += len(chunk)
        return bytes(data), out, 0
    new_data, kept, changed, taken, partial_quote, declined = c.rewrite(_plan(rules), chunk.data, *columns, fallback)
    out.declined.update({why: n for why, n in zip(c.DECLINES, declined) if n})
    out.packets += taken
    out.kept += kept
    out.changed += changed
    if partial_quote:
        out.left_alone[Reason.PARTIAL_QUOTE.value] += partial_quote
    return new_data, out, taken
