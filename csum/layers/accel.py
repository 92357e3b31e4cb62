"""The C walker csum/engine/_cwalk.c, bound to this package's :class:`~csum.layers.check.Result` and
:class:`~csum.layers.reasons.Reason`.

csum/engine/_cwalk.c walks the common stacks (see its header comment) and, for a packet made only of what it
walks, reports every checksum field as a :class:`Result` equal in all nine fields to what
:func:`csum.layers.walk` + :func:`csum.layers.evaluate` give (tests/layers/test_layers_c.py checks it on
generated stacks); for anything else it answers None and the Python walker, the reference, answers. Its protocol
facts, layer names and path parts come from :mod:`csum.layers.table` through csum/engine/_cwalk_table.h
(tools/gen_cwalk_table.py); this module gives it the two classes it makes objects of, and the reassembly key
format it shares with csum/capture/stitch.py.

``csum.engine.cwalk`` is None where the extension is not built or ``CSUM_ENGINE`` is not ``c``.
"""

from __future__ import annotations

from .. import engine
from . import table as T
from .check import Result
from .reasons import Reason
from .reassembly import Key

#: The bytes csum/engine/_cwalk.c keys a datagram by (its outer_t.key): csum.layers.table.REASSEMBLY_KEY_BYTES.
KEY_BYTES = T.REASSEMBLY_KEY_BYTES


def key_bytes(key: Key) -> bytes:
    """A Reassembler key as csum/engine/_cwalk.c writes it (fast_check()'s ``closed`` holds KEY_BYTES for each): the
    version, then the IPv4 source, destination, identification and protocol, or the IPv6 source, destination
    and identification; zeros after. The tunnel of a datagram inside one is left out: its key then reads as an
    outer datagram's with the same fields (csum/capture/stitch.py only takes a match as a reason to check a chunk
    again, so one too many costs time, never a verdict)."""
    version, saddr, daddr, ident, proto, _tunnel = key
    raw = bytes([version]) + saddr + daddr + ident.to_bytes(2 if version == 4 else 4, "big")
    return (raw + bytes([proto]) if version == 4 else raw).ljust(KEY_BYTES, b"\0")


def holds(keys: bytes, key: bytes) -> bool:
    """Whether the KEY_BYTES-long ``key`` is one of ``keys`` (KEY_BYTES each, end to end)."""
    at = keys.find(key)
    while at >= 0 and at % KEY_BYTES:
        at = keys.find(key, at + 1)
    return at >= 0


if engine.CWALK is not None:  # bound whatever the engine: csum.engine's switch may turn it on later
    engine.CWALK.bind(Result, Reason)
