"""What a program changed in a packet, as a :func:`csum.rewrite.rewrite` request: the inverse of a rewrite.

:func:`infer` compares a packet before and after a program ran (same length, same layers) and names every
change outside the checksum fields in the terms of :func:`csum.rewrite.rewrite`: the outer layer's addresses
(``saddr`` / ``daddr``), a TTL or hop limit one lower (``decrement_ttl``) and every other changed 16-bit word
of its IP header, transport header or payload (``fields``, as :class:`~csum.rewrite.FieldChange`, in the
pseudo-header only for addresses); a quoted datagram's or a tunnelled packet's addresses, ports, ICMP
identifier and TTL (``quoted`` / ``inner``). ``rewrite(before, **request)`` then makes the same change with
correct incremental updates: csum's reference for what the program should have stored. Changes csum.rewrite
cannot express (a length change, new layers, bytes of a quote other than those) give no request and a reason.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import CsumValueError
from ..layers import Stack, table
from ..layers.walk import IPLayer, walk_outer_strict
from .packet import FieldChange

__all__ = ["Inferred", "infer"]

#: The keywords csum.rewrite takes for a quoted or tunnelled layer's words (offsets from its transport header):
#: the ports of TCP/UDP/UDP-Lite/DCCP and an ICMP query's identifier (csum/rewrite/packet.py ``_plan``).
_NESTED_WORDS = {0: "sport", 2: "dport", 4: "icmp_id"}


class Inferred(NamedTuple):
    """``request`` for :func:`csum.rewrite.rewrite` (None when the change cannot be expressed: ``reason`` says why)
    and ``csum_fields``: the offset of every checksum field of the packet."""

    request: dict[str, Any] | None
    reason: str
    csum_fields: frozenset[int]


def _stack(packet: bytes) -> Stack | None:
    try:
        return walk_outer_strict(memoryview(packet), "ethernet")
    except CsumValueError:
        return None


def _kind(stack: Stack, ip: IPLayer, packet: bytes) -> str:
    """"quoted" when ``ip`` is the datagram an ICMP/ICMPv6 error quotes, else "inner" (a tunnel's)."""
    parent = max((p for p in stack.ips if p.depth == ip.depth - 1 and p.l3 < ip.l3), key=lambda p: p.l3)
    errors = table.ICMP_QUOTES.get(parent.proto, {})
    return "quoted" if parent.l4_start < len(packet) and packet[parent.l4_start] in errors else "inner"


def _refused(before: bytes, after: bytes, sb: Stack | None, sa: Stack | None, fields: frozenset[int]) -> str | None:
    """Why the change from ``before`` to ``after`` (walked: ``sb``, ``sa``) is no rewrite request, else None."""
    if len(before) != len(after):
        return f"the program changed the length ({len(before)} -> {len(after)} bytes)"
    if sb is None or sa is None or not sb.ips:
        return "the packet is not IPv4/IPv6 csum can walk before and after"
    shape = [(ip.l3, ip.version, ip.depth, ip.l4_start) for ip in sb.ips]
    if shape != [(ip.l3, ip.version, ip.depth, ip.l4_start) for ip in sa.ips] or fields != frozenset(
            f.at for f in sa.fields if f.at is not None):
        return "the program changed the packet's layers"
    return None


def _ip_words(ip: IPLayer, inside: list[int], taken: set[int], before: bytes, after: bytes) -> dict[str, Any]:
    """The addresses and the TTL decrement of ``ip`` among the changed bytes ``inside`` (marked ``taken``)."""
    size = (table.IPHDR if ip.version == 4 else table.IPV6HDR).addr_size
    words: dict[str, Any] = {}
    for name, at in (("saddr", ip.saddr), ("daddr", ip.daddr)):
        if any(at <= i < at + size for i in inside):
            words[name] = after[at:at + size]
            taken.update(range(at, at + size))
    if ip.ttl in inside and before[ip.ttl] == (after[ip.ttl] + 1) & 0xFF and before[ip.ttl]:
        words["decrement_ttl"] = True
        taken.add(ip.ttl)
    return words


def _nested(sb: Stack, ip: IPLayer, rest: list[int], words: dict[str, Any], taken: set[int], before: bytes,
            after: bytes, nested: dict[str, dict[str, Any]]) -> str | None:
    """A quoted or tunnelled ``ip``'s changed words (``rest``: their offsets) into ``nested``; else why not."""
    for at in rest:
        keyword = _NESTED_WORDS.get(at - ip.l4_start)
        if keyword is None or ip.fragment == "later":
            return (f"bytes {at}..{at + 1} of a tunnelled or quoted packet changed, which csum.rewrite does not "
                    "model (its addresses, ports, ICMP id and TTL only)")
        words[keyword] = int.from_bytes(after[at:at + 2], "big")
        taken.update((at, at + 1))
    key = _kind(sb, ip, before)
    if ip.depth > 2 or (ip.depth == 2 and key == "inner"):
        return "changes two encapsulations deep, which csum.rewrite does not model"
    if ip.depth == 2:
        nested.setdefault("inner", {})["quoted"] = words
    else:
        nested.setdefault(key, {}).update(words)
    return None


def infer(before: bytes, after: bytes) -> Inferred:
    """The rewrite request that turns Ethernet frame ``before`` into ``after`` outside the checksum fields."""
    sb, sa = _stack(before), _stack(after)
    fields = frozenset(f.at for f in (sb.fields if sb else []) if f.at is not None)
    why = _refused(before, after, sb, sa, fields)
    if why is not None or sb is None:
        return Inferred(None, why or "", fields)
    in_csum = {at + i for at in fields for i in (0, 1)}
    changed = sorted(i for i in range(len(before)) if before[i] != after[i] and i not in in_csum)
    outer, mac = sb.ips[0], table.ETHHDR.size
    if any(mac <= i < outer.l3 for i in changed):
        return Inferred(None, f"bytes between the Ethernet header and the IP header changed "
                              f"({', '.join(map(str, [i for i in changed if mac <= i < outer.l3]))})", fields)
    request: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    taken: set[int] = {i for i in changed if i < mac}  # the MAC header: in no checksum, outside skb->csum
    for ip in sorted(sb.ips, key=lambda ip: -ip.depth):  # innermost first: a tunnel's bytes are its own
        inside = [i for i in changed if ip.l3 <= i < ip.end and i not in taken]
        if not inside:
            continue
        words = _ip_words(ip, inside, taken, before, after)
        rest = sorted({i - ((i - ip.l3) & 1) for i in inside if i not in taken})
        if ip.depth == 0:
            request.update(words)
            request["fields"] = [FieldChange(at, after[at:at + 2]) for at in rest]
            taken.update(i for at in rest for i in (at, at + 1))
            continue
        why = _nested(sb, ip, rest, words, taken, before, after, nested)
        if why is not None:
            return Inferred(None, why, fields)
    request.update(nested)
    if not any(v for k, v in request.items()):
        return Inferred(None, "nothing but checksum fields changed", fields)
    return Inferred(request, "", fields)
