"""The helper calls a rewrite makes (csum.rewrite.packet's :class:`~csum.rewrite.packet.Rewrite` ``.calls``), as a
BPF program passes their arguments: net/core/filter.c ``bpf_csum_diff``, ``bpf_l3_csum_replace`` /
``bpf_l4_csum_replace`` and ``bpf_skb_store_bytes``. Their own module so that the printed program
(:mod:`csum.rewrite.program`) reads them without importing the rewrite."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .. import bpf
from ..bpf.skb import BPF_F_RECOMPUTE_CSUM

__all__ = ["FLAG_NAMES", "Call", "CsumDiffCall", "CsumReplaceCall", "StoreBytesCall"]

#: The replace helpers' flag bits by their include/uapi/linux/bpf.h names.
FLAG_NAMES = ((bpf.BPF_F_PSEUDO_HDR, "BPF_F_PSEUDO_HDR"), (bpf.BPF_F_MARK_MANGLED_0, "BPF_F_MARK_MANGLED_0"),
              (bpf.BPF_F_MARK_ENFORCE, "BPF_F_MARK_ENFORCE"), (bpf.BPF_F_IPV6, "BPF_F_IPV6"))


@dataclass(frozen=True)
class CsumDiffCall:
    """``bpf_csum_diff(frm, len(frm), to, len(to), seed)`` and what it returned (Linux >= 6.13 form).

    ``frm_align``/``to_align``: the buffers' addresses mod 8 as the program passes them
    (``frm`` in place in the packet, at ``skb->data`` = the profile's NET_IP_ALIGN mod 8
    plus the field's offset; ``to`` from an 8-byte aligned stack slot). The homogenized
    helper reads both in place, so ``result`` is computed at these alignments.
    """

    frm: bytes
    to: bytes
    seed: int
    result: int
    frm_align: int = 0
    to_align: int = 0

    def __str__(self) -> str:
        return f"diff = bpf_csum_diff(&from /* {self.frm.hex()} */, {len(self.frm)}, &to /* {self.to.hex()} */, " \
               f"{len(self.to)}, {self.seed:#x});  /* {self.result:#06x} */"


@dataclass(frozen=True)
class CsumReplaceCall:
    """``helper(skb, offset, frm, to, flags)``: ``frm``/``to`` as the u64 registers hold them on little-endian."""

    helper: str
    offset: int
    frm: int
    to: int
    flags: int
    #: For a change carried into an enclosing checksum (``quoted=`` / ``inner=``): the offset of the bytes
    #: whose change ``frm`` -> ``to`` is (another checksum field, or a TTL's 16-bit word); None otherwise.
    carries: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        names = [n for bit, n in FLAG_NAMES if self.flags & bit]
        flags = " | ".join(([str(self.flags & bpf.BPF_F_HDR_FIELD_MASK)] if self.flags & 0xF or not names else [])
                           + names)
        to = "diff" if self.flags & bpf.BPF_F_HDR_FIELD_MASK == 0 else f"{self.to:#x}"
        return f"{self.helper}(skb, {self.offset}, {self.frm:#x}, {to}, {flags});"


@dataclass(frozen=True)
class StoreBytesCall:
    """``bpf_skb_store_bytes(skb, offset, &to, len(to), flags)``; ``frm`` is what was there.

    ``flags`` is BPF_F_RECOMPUTE_CSUM where no checksum patch balances the change in the sum of
    the bytes (an IPv6 hop limit, a field outside every checksum), so that a CHECKSUM_COMPLETE
    skb's ``skb->csum`` stays right; else 0.
    """

    offset: int
    frm: bytes
    to: bytes
    flags: int = 0

    def __str__(self) -> str:
        flags = "BPF_F_RECOMPUTE_CSUM" if self.flags & BPF_F_RECOMPUTE_CSUM else str(self.flags)
        return f"bpf_skb_store_bytes(skb, {self.offset}, &to /* {self.to.hex()}, was {self.frm.hex()} */, " \
               f"{len(self.to)}, {flags});"


Call = Union[CsumDiffCall, CsumReplaceCall, StoreBytesCall]
