"""Signatures of csum/engine/_explain.c (its reference: csum/explain/hypotheses.py alone; driven by
csum/explain/quick.py and csum/explain/fast.py)."""

from collections.abc import Sequence

from typing_extensions import Buffer

def alone(buf: Buffer, start: int, end: int, at: int, src: int, dst: int, size: int, length: int, proto: int,
          stored: int, computed: int, flags: int, pad: int, ip_total: int, after: int, minimum: int, l3: int,
          l3_end: int, /) -> list[tuple[int, int, int, int, int]] | None:
    """The hypotheses of the field at ``at`` covering buf[start:end] (csum/explain/quick.py), or None."""

def wrong_all(packets: Sequence[Buffer], linktypes: Sequence[int], fields: Sequence[int], /) -> list[
        tuple[Buffer, int, int, int, int, int, tuple[int, bytes, bytes, int, int, int, str, int], int, bytes,
              list[tuple[int, int, int, int, int]]] | None]:
    """Per packet, its one wrong TCP/UDP checksum's stack facts and hypotheses (csum/explain/fast.py), or None."""
