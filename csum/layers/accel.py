"""The C walker csum/engine/_cwalk.c, bound to this package's table, reasons and :class:`~csum.layers.check.Result`.

csum/engine/_cwalk.c walks the common stacks (see its header comment) and, for a packet made only of
what it walks, reports every checksum field as a :class:`Result` equal in all nine fields to
what :func:`csum.layers.walk` + :func:`csum.layers.evaluate` give (tests/layers/test_layers_c.py checks
it on generated stacks); for anything else it answers None and the Python walker, the reference,
answers. Its protocol facts come from :mod:`csum.layers.table` through :data:`LINKS` and
:data:`FACTS`, and its names (layers, reasons, path parts) through :func:`_bind`.

:data:`cwalk` is None where the extension is not built or ``CSUM_ENGINE`` is not ``c``.
"""

from __future__ import annotations

from array import array

from .. import engine
from . import table as T
from .check import Result
from .reasons import R
from .reassembly import Key

#: csum/engine/_cwalk.c's link kinds (K_*) by the table's LinkType.kind.
_KINDS = {"ethernet": 1, "ethertype": 2, "ip": 3, "family-host": 4, "family-net": 4}
_ROWS = [(number, _KINDS[e.kind], e.header, e.at) for number, e in T.LINKTYPES.items() if e.kind in _KINDS]
#: (link type, kind, header length, protocol word offset) per row (int64).
LINKS = array("q", [x for row in _ROWS for x in row])
#: The facts[] of csum/engine/_cwalk.c, in its F_* order (int64).
FACTS = array("q", [T.TCP_ENTRY.field, T.TCP_ENTRY.minimum, T.UDP_ENTRY.field, T.UDP_ENTRY.minimum,
                    T.ICMP_ENTRY.field, T.ICMP_ENTRY.minimum, T.VXLAN_PORT,
                    *sorted(set(T.UDP_TUNNELS) - {T.VXLAN_PORT}),  # F_TUN1..3: the tunnels C leaves to Python
                    sum(1 << t for t in T.ICMP_ERRORS), sum(1 << t for t in T.ICMPV6_ERRORS),
                    *sorted(T.VLAN_TPIDS)])
#: csum/engine/_cwalk.c's protocol codes C_* (code + 8 * depth in fast_check's output) -> layer name.
CODES = (None, T.IPV4_HEADER.name, T.TCP_ENTRY.name, T.UDP_ENTRY.name, T.ICMP_ENTRY.name, T.ICMPV6_ENTRY.name,
         T.GRE_ENTRY.name)
#: Its reasons RS_* -> Reason.
REASONS = (R.OK, R.MISMATCH, R.NEGATIVE_ZERO, R.OFFLOAD, R.NON_FIRST_FRAGMENT, R.NEEDS_REASSEMBLY)
#: Its path tokens T_* -> the path part csum.layers.walk writes for that layer (T_LINK + row: the link's name).
_TOKENS = (None, "vlan", T.IPV4_HEADER.name, "ipv6", T.TCP_ENTRY.name, T.UDP_ENTRY.name, T.ICMP_ENTRY.name,
           T.ICMPV6_ENTRY.name, T.UDP_TUNNELS[T.VXLAN_PORT], T.LINKTYPES[1].name, T.GRE_ENTRY.name,
           T.ETHERTYPES[T.ETH_ERSPAN2])
TOKENS = (_TOKENS + tuple(T.LINKTYPES[row[0]].name for row in _ROWS) + (None,) * 32)[:32]


#: The bytes csum/engine/_cwalk.c keys a datagram by (its outer_t.key).
KEY_BYTES = 37


def key_bytes(key: Key) -> bytes:
    """A Reassembler key as csum/engine/_cwalk.c writes it (fast_check()'s ``closed`` holds KEY_BYTES for each): the
    version, then the IPv4 source, destination, identification and protocol, or the IPv6 source, destination
    and identification; zeros after."""
    version, saddr, daddr, ident, proto = key
    raw = bytes([version]) + saddr + daddr + ident.to_bytes(2 if version == 4 else 4, "big")
    return (raw + bytes([proto]) if version == 4 else raw).ljust(KEY_BYTES, b"\0")


def holds(keys: bytes, key: bytes) -> bool:
    """Whether the KEY_BYTES-long ``key`` is one of ``keys`` (KEY_BYTES each, end to end)."""
    at = keys.find(key)
    while at >= 0 and at % KEY_BYTES:
        at = keys.find(key, at + 1)
    return at >= 0


def _bind() -> None:
    if engine.CWALK is not None:  # bound whatever the engine: csum.engine.use("c") may switch it on later
        engine.CWALK.bind(Result, CODES, REASONS, TOKENS, LINKS, FACTS)


_bind()
