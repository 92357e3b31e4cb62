"""Warnings for BPF checksum-helper calls the kernel accepts but that are almost surely wrong.

The helpers of net/core/filter.c check flags and offsets, not intent: a call
with the field size missing from the low flag bits returns -EINVAL that many
programs never look at; a 32-bit value passed with size 2 is cut to its low 16
bits; BPF_F_PSEUDO_HDR on a port moves ``skb->csum`` of a CHECKSUM_COMPLETE skb
by a change that is not in the pseudo-header, and so on (cilium#28768, the
BPF_F_IPV6 fix of Linux 6.16). Where the packet parses (:func:`csum.layers.layout`),
the checks also use what the checksum field belongs to. Each warning is a
:class:`BpfMisuse` whose ``code`` names the case.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..errors import BpfMisuse, Code, CsumError
from .flags import BPF_F_HDR_FIELD_MASK, BPF_F_IPV6, BPF_F_MARK_MANGLED_0, BPF_F_PSEUDO_HDR

if TYPE_CHECKING:  # the protocol model is imported on the first check that parses a packet (import csum stays light)
    from ..layers import Layout


def _warn(message: str, code: Code, stacklevel: int) -> None:
    warnings.warn(BpfMisuse(message, code), stacklevel=stacklevel)


def _common(helper: str, frm: int, to: int, flags: int, stacklevel: int) -> None:
    size = flags & BPF_F_HDR_FIELD_MASK
    if size == 0 and frm:
        _warn(f"{helper}: field size 0 (flags & 0xf) with a non-zero from ({frm:#x}): the kernel returns -EINVAL and "
              "leaves the checksum as it was; the field size (2 or 4) is probably missing from the flags",
              Code.SIZE_MISSING, stacklevel + 1)
    if size == 2 and (frm > 0xFFFF or to > 0xFFFF):
        _warn(f"{helper}: size 2 keeps only the low 16 bits of from {frm:#x} / to {to:#x}; a 32-bit value or "
              "diff needs size 4 (a bpf_csum_diff result: size 0)", Code.WIDE_FOR_SIZE_2, stacklevel + 1)


def check_l3(frm: int, to: int, flags: int, stacklevel: int) -> None:
    """bpf_l3_csum_replace: the size-0-with-from and wide-value-with-size-2 cases."""
    _common("bpf_l3_csum_replace", frm, to, flags, stacklevel + 1)


def _layout(view: memoryview) -> Layout | None:
    from ..layers import layout as parse

    try:
        return parse(view, "auto")
    except CsumError:
        return None


def _words(view: memoryview, lay: Layout) -> dict[str, set[int]]:
    """The 16-bit words (as a little-endian CPU loads them) of the ports and of the TTL/hop-limit word."""
    found: dict[str, set[int]] = {}
    ttl_word = lay.ttl - ((lay.ttl - lay.l3) & 1)
    found["the TTL/hop limit word"] = {int.from_bytes(view[ttl_word:ttl_word + 2], "little")}
    if lay.has_ports and lay.l4 is not None and lay.l4 + 4 <= len(view):
        found["a port"] = {int.from_bytes(view[lay.l4 + i:lay.l4 + i + 2], "little") for i in (0, 2)}
    return found


def _pseudo_words(view: memoryview, lay: Layout) -> set[int]:
    """The 16-bit words of the pseudo-header's addresses and length, as a little-endian CPU loads them."""
    from ..layers.table import ADDR_SIZES  # here: csum --version imports this module, and no layer

    size = ADDR_SIZES[lay.version]
    words = {(lay.l4_len or 0) & 0xFFFF, (lay.l4_len or 0) >> 16}
    words = {int.from_bytes(w.to_bytes(2, "big"), "little") for w in words}
    for start in (lay.pseudo_saddr, lay.pseudo_daddr):
        if start is not None:
            words.update(int.from_bytes(view[start + i:start + i + 2], "little") for i in range(0, size, 2))
    return words


def check_l4(view: memoryview, offset: int, frm: int, to: int, flags: int, stacklevel: int) -> None:
    """bpf_l4_csum_replace: the common cases, plus those the parsed packet makes knowable."""
    from ..layers import TCP

    helper = "bpf_l4_csum_replace"
    _common(helper, frm, to, flags, stacklevel + 1)
    lay = _layout(view)
    if lay is None or offset != lay.l4_csum:
        return
    size, pseudo = flags & BPF_F_HDR_FIELD_MASK, bool(flags & BPF_F_PSEUDO_HDR)
    if pseudo and size == 2 and frm != to and not {frm & 0xFFFF, to & 0xFFFF} & _pseudo_words(view, lay):
        for what, values in _words(view, lay).items():
            if frm & 0xFFFF in values or to & 0xFFFF in values:
                _warn(f"{helper}: BPF_F_PSEUDO_HDR on {what} (from {frm:#x} or to {to:#x} is the packet's, and "
                      "neither is a pseudo-header word): "
                      "it is not in the pseudo-header, so on a CHECKSUM_COMPLETE skb skb->csum moves by a change "
                      "the packet does not have; drop the flag", Code.PSEUDO_ON_NON_PSEUDO, stacklevel + 1)
                break
    if flags & BPF_F_MARK_MANGLED_0 and lay.proto == TCP:
        _warn(f"{helper}: BPF_F_MARK_MANGLED_0 on a TCP checksum: 0 is a valid TCP checksum, yet the helper skips "
              "the update when the field is 0; it is for UDP, whose 0 means 'no checksum'", Code.MANGLED0_ON_TCP,
              stacklevel + 1)
    if pseudo and size == 0:
        if lay.version == 6 and not flags & BPF_F_IPV6:
            _warn(f"{helper}: a pseudo-header diff on IPv6 without BPF_F_IPV6: on a CHECKSUM_COMPLETE skb the kernel "
                  "takes the diff out of skb->csum as if an IPv4 header checksum had absorbed it, and the stack "
                  "sees a bad checksum (Linux >= 6.16 has the flag)", Code.IPV6_FLAG_MISSING, stacklevel + 1)
        elif lay.version == 4 and flags & BPF_F_IPV6:
            _warn(f"{helper}: BPF_F_IPV6 on an IPv4 packet: the kernel then leaves skb->csum alone, which is stale "
                  "after the IPv4 header checksum changed too", Code.IPV6_FLAG_ON_IPV4, stacklevel + 1)
