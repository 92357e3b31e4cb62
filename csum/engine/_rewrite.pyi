"""Signatures of the capture rewriter csum/engine/_rewrite.c (its reference: csum/rewrite/apply.py)."""

from typing import Any, Callable

from typing_extensions import Buffer

class Plan:
    """A set of rules as the C engine applies them (csum/rewrite/fast.py ``_plan``)."""

    def __init__(self, facts: dict[str, Any], src_maps: list[tuple[int, bytes, int, bytes, int]],
                 dst_maps: list[tuple[int, bytes, int, bytes, int]], ports: list[tuple[int, int, int]], ttl: int,
                 dscp: int, ecn: int, tclass: int, flowlabel: int, mac_src: list[tuple[bytes, bytes]],
                 mac_dst: list[tuple[bytes, bytes]], vlan: list[tuple[int, int]], level: int,
                 anonymize: Callable[[bytes], bytes] | None, /) -> None: ...

def rewrite(plan: Plan, data: Buffer, offsets: Buffer, caplens: Buffer, origlens: Buffer, linktypes: Buffer,
            /) -> tuple[list[int], int, int]:
    """Rewrite the packets it takes in ``data`` in place: (indices declined, checksums updated, packets changed)."""
