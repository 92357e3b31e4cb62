"""Signatures of csum/engine/_explain.c (its reference: csum/explain/hypotheses.py alone; driven by
csum/explain/quick.py and csum/explain/fast.py)."""

from collections.abc import Sequence
from typing import TypeVar

from typing_extensions import Buffer

T = TypeVar("T", bound=tuple)

def alone(buf: Buffer, start: int, end: int, at: int, src: int, dst: int, size: int, length: int, proto: int,
          stored: int, computed: int, flags: int, pad: int, ip_total: int, after: int, minimum: int, l3: int,
          l3_end: int, /) -> list[tuple[int, int, int, int, int]] | None:
    """The hypotheses of the field at ``at`` covering buf[start:end] (csum/explain/quick.py), or None."""

def wrong_all(packets: Sequence[Buffer], linktypes: Sequence[int], fields: Sequence[int], cls: type[T] = ...,
              /) -> list[T | None]:
    """Per packet, its one wrong TCP/UDP checksum's stack facts and hypotheses (csum/explain/fast.py), or None: a
    ``cls`` (a subclass of tuple; a tuple without it) of (packet, field, header, end, l3, ip_end, (version, source,
    destination, protocol, source port, destination port, layer, depth), residual, variants, [(variant, value, a,
    b, c)])."""
