"""Signatures of the capture rewriter csum/engine/_rewrite.c (its reference: csum/rewrite/apply.py)."""

from typing import Callable

from typing_extensions import Buffer

class Plan:
    """A set of rules as the C engine applies them (csum/rewrite/fast.py ``_plan``); its protocol facts are compiled
    in from csum/engine/_cwalk_table.h."""

    def __init__(self, src_maps: list[tuple[bytes, int, bytes, int]], dst_maps: list[tuple[bytes, int, bytes, int]],
                 ports: list[tuple[int, int, int]], ttl: int, dscp: int, ecn: int, tclass: int, flowlabel: int,
                 mac_src: list[tuple[bytes, bytes]], mac_dst: list[tuple[bytes, bytes]], vlan: list[tuple[int, int]],
                 level: int, anonymize: Callable[[bytes], bytes] | None, /) -> None: ...

#: Why a packet goes to ``fallback``, in the order of rewrite()'s last item
DECLINES: tuple[str, ...]

def rewrite(plan: Plan, data: Buffer, offsets: Buffer, caplens: Buffer, origlens: Buffer, linktypes: Buffer,
            fallback: Callable[[int], bytes | None], /) -> tuple[bytes, int, int, int, int, tuple[int, ...]]:
    """A copy of ``data`` with every packet rewritten, those it does not take by ``fallback(index)`` (None:
    unchanged): (new data, checksums updated, packets changed, packets taken, quotes too short for a transport field
    a change reaches, packets given to ``fallback`` per :data:`DECLINES`), the counts for those it took."""
