"""csum's one protocol model: a declarative table (:mod:`.table`), one walker (:mod:`.walk`) and the
verdict on each checksum field (:mod:`.check`). csum.rewrite consumes the walker's :class:`Stack`;
csum.inet and the capture checker behind ``csum verify``/``csum fix`` consume its :class:`Result` objects,
which the C walker (:mod:`.accel`, csum/engine/_cwalk.c) gives for the stacks it knows and the Python
walker, the reference, for everything.

Adding a protocol is one entry in :mod:`.table` and its edge in ``table.DISSECTORS`` (plus, where its layout
varies with a type or version field, a line in ``transport.entry_for``, or a handler registered under its layer
name for a new encapsulation) and its tests; the C walker leaves what it does not know to the Python walker
(docs/design.md, "The layer graph").
"""

from __future__ import annotations

from ..core.inputs import check_instance, check_uint
from ..errors import Code, CsumValueError
from . import (
    accel,  # binds the C walker (csum.engine.cwalk) to this package's Result and table
    table,
)
from .check import Result, corrections, evaluate, verify_stack
from .reasons import Reason, Status
from .walk import Field, Fragment, IPLayer, Link, Stack, walk, walk_outer_strict

__all__ = ["Field", "Fragment", "IPLayer", "Layout", "Link", "Reason", "Result", "Stack", "Status", "corrections",
           "evaluate", "layout", "outer_layer", "protocol_name", "table", "verify_stack", "walk"]

TCP, UDP, UDPLITE, ICMP, ICMPV6 = table.TCP, table.UDP, table.UDPLITE, table.ICMP, table.ICMPV6


def protocol_name(proto: int) -> str:
    """A readable name for an IP protocol number ("TCP", "UDP-Lite", ... or "protocol 47")."""
    proto = check_uint(proto, 8, "proto")
    entry = table.TRANSPORTS.get(proto)
    names = {TCP: "TCP", UDP: "UDP", UDPLITE: "UDP-Lite", ICMP: "ICMP", ICMPV6: "ICMPv6"}
    return names.get(proto) or (entry.name.upper() if entry else f"protocol {proto}")


#: The outer IP layer of a packet as csum.rewrite edits it: :class:`IPLayer` with ``link`` set.
Layout = IPLayer


_LINK_NAMES = {"eth": "ethernet", "raw": "ip"}


def layout(buf: memoryview, link: Link = "auto") -> Layout:
    """The outer IP layer of ``buf`` (see :class:`IPLayer`); raise CsumValueError if it is malformed or not IP (a
    malformed layer inside a tunnel is not its concern).

    ``link`` on the result is "ethernet", "ip" or the link layer's name ("sll", "ppp" ...).
    """
    return outer_layer(walk_outer_strict(buf, link))


def outer_layer(stack: Stack) -> Layout:
    """The outer IP layer of a stack :func:`walk` made in strict mode (so it has one), its ``link`` set as in
    :func:`layout`."""
    check_instance(stack, Stack, "stack")
    if not stack.ips:
        raise CsumValueError("stack has no IP layer (walk it with strict=True)", code=Code.NOT_IP)
    ip = stack.ips[0]
    ip.link = _LINK_NAMES.get(stack.link, stack.link)
    return ip
