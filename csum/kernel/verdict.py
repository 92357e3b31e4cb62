"""The verdict on what a program did to one packet: its return value, and every checksum of its output on its own.

:func:`judge` checks every checksum of the output packet with the protocol model (:func:`csum.inet.verify`),
whatever its length and layers, and compares each with its counterpart in the input. Counterparts are paired
outer to inner when the output has the input's layers, else from the innermost outwards (an encapsulation
adds layers outside, a decapsulation removes them) and then from the outermost for the rest; a field with no
counterpart was added by the program. A field is

* ``ok``: right in the output (an added one too);
* ``broken``: wrong in the output and right in the input, added by the program, or wrong by another amount;
* ``kept-bad``: wrong in the output as in the input, by the same residual (what an incremental update of a
  wrong checksum leaves, RFC 1624);
* ``cleared``: a UDP checksum the input had, set to 0 ("none") on purpose (the one a sender computes is not
  0xffff, so no computed 0 was stored unmangled);
* ``unjudged``: not verifiable here (a fragment, bytes not captured ...): csum says so rather than pass it.

An output that does not parse is an error of its own (``broken`` unless the input failed the same way).
Return values are named after include/uapi/linux/pkt_cls.h and include/uapi/linux/bpf.h; a packet the program
drops (TC_ACT_SHOT, STOLEN, QUEUED, TRAP: net/core/dev.c frees or consumes the skb; XDP_DROP, XDP_ABORTED and
unknown XDP actions, which drivers drop) is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..core.arith import sub16
from ..errors import Code, CsumValueError
from ..layers import inet
from ..layers.reasons import ABSENT

__all__ = ["BROKEN", "CLEARED", "KEPT_BAD", "OK", "UNJUDGED", "Check", "Judged", "action", "judge"]

OK, BROKEN, KEPT_BAD, CLEARED, UNJUDGED = "ok", "broken", "kept-bad", "cleared", "unjudged"

#: Return values by program kind, and the ones after which the packet goes nowhere.
_ACTIONS = {"tc": {-1: "TC_ACT_UNSPEC", 0: "TC_ACT_OK", 1: "TC_ACT_RECLASSIFY", 2: "TC_ACT_SHOT", 3: "TC_ACT_PIPE",
                   4: "TC_ACT_STOLEN", 5: "TC_ACT_QUEUED", 6: "TC_ACT_REPEAT", 7: "TC_ACT_REDIRECT",
                   8: "TC_ACT_TRAP"},
            "xdp": {0: "XDP_ABORTED", 1: "XDP_DROP", 2: "XDP_PASS", 3: "XDP_TX", 4: "XDP_REDIRECT"}}
_GONE = {"tc": frozenset({2, 4, 5, 8}), "xdp": frozenset({0, 1})}


def action(kind: str, retval: int) -> tuple[str, bool]:
    """(name, dropped) of a program's u32 return value: TC_ACT_OK, XDP_PASS ... or the number; ``dropped`` when
    the packet goes nowhere after it (an unknown XDP action is dropped too, net/core/filter.c
    ``bpf_warn_invalid_xdp_action``)."""
    signed = retval - (1 << 32) if retval >> 31 else retval
    names = _ACTIONS[kind]
    name = names.get(signed, f"{signed} (unknown)" if kind == "xdp" else str(signed))
    return name, signed in _GONE[kind] or (kind == "xdp" and signed not in names)


@dataclass(frozen=True)
class Check:
    """One checksum of an output packet, judged (see the module docstring for ``status``).

    ``layer``, ``offset`` (its header), ``stored``, ``expected`` (what a sender stores), ``ok``, ``reason`` as
    :class:`csum.inet.Result` has them; ``field``: the checksum's offset; ``was``: the input counterpart's
    (stored, expected, ok), None when the program added the field; ``cause``: why it is wrong, where csum
    reproduced it (see :mod:`csum.rewrite.mistakes`) or says it could not; ``mistakes``: the ids reproduced.
    ``layer`` "skb->csum" is the CHECKSUM_COMPLETE run's verdict on a tc program.
    """

    layer: str
    offset: int
    stored: int | None
    expected: int | None
    ok: bool | None
    reason: str
    cause: str | None = None
    status: str = OK
    field: int | None = None
    was: tuple[int | None, int | None, bool | None] | None = None
    mistakes: tuple[str, ...] = ()


class Judged(NamedTuple):
    """:func:`judge`'s answer: the output's checks (in packet order), the input's layers the output lost, why the
    output does not parse (None when it does) and whether that breaks it (False: the input did not parse either)."""

    checks: list[Check]
    removed: list[str]
    error: str | None = None
    error_breaks: bool = False


def _results(packet: bytes) -> tuple[list[inet.Result], CsumValueError | None]:
    try:
        return inet.verify(packet, link="ethernet"), None
    except CsumValueError as exc:
        return [], exc


def _pairs(before: list[inet.Result], after: list[inet.Result]) -> dict[int, int]:
    """Output index -> input index of each field's counterpart (see the module docstring)."""
    names_b, names_a = [r.layer for r in before], [r.layer for r in after]
    if names_a == names_b:
        return {i: i for i in range(len(after))}
    pairs: dict[int, int] = {}
    i, j = len(after) - 1, len(before) - 1
    while i >= 0 and j >= 0 and names_a[i] == names_b[j]:
        pairs[i] = j
        i, j = i - 1, j - 1
    k = 0
    while k <= i and k <= j and names_a[k] == names_b[k]:
        pairs[k] = k
        k += 1
    return pairs


def _residual(r: inet.Result) -> int | None:
    return None if r.stored is None or r.computed is None else sub16(r.stored, r.computed)


def _status(out: inet.Result, was: inet.Result | None) -> str:
    if out.ok is None:
        return UNJUDGED
    if out.ok:
        if was is not None and out.reason in ABSENT and was.ok and was.reason not in ABSENT:
            return BROKEN if out.computed == 0xFFFF else CLEARED  # 0 where 0xffff belongs: a computed 0 unmangled
        return OK
    if was is not None and was.ok is False and was.reason == out.reason and _residual(was) == _residual(out):
        return KEPT_BAD
    return BROKEN


def judge(before: bytes, after: bytes) -> Judged:
    """Every checksum of Ethernet frame ``after`` (a program's output), judged against ``before`` (its input)."""
    ins, in_error = _results(before)
    outs, out_error = _results(after)
    if out_error is not None:
        same = in_error is not None and in_error.code == out_error.code
        if out_error.code == Code.NOT_IP and same:
            return Judged([], [])  # not IP before or after: nothing carries a checksum csum knows
        what = "the output is not IP" if out_error.code == Code.NOT_IP else "the output does not parse"
        return Judged([], [], f"{what}: {out_error}" + (" (nor does the input)" if same else ""), in_error is None)
    pairs = _pairs(ins, outs)
    checks = []
    for i, r in enumerate(outs):
        was = ins[pairs[i]] if i in pairs else None
        checks.append(Check(r.layer, r.offset, r.stored, r.computed, r.ok, str(r.reason), status=_status(r, was),
                            field=r.field, was=None if was is None else (was.stored, was.computed, was.ok)))
    removed = [ins[j].layer for j in range(len(ins)) if j not in set(pairs.values())]
    return Judged(checks, removed)

