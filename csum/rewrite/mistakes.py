"""The usual mistakes of checksum updates in tc and XDP programs, and a finder that reproduces them.

A wrong checksum is not explained from its numbers alone: :func:`reproduce` re-makes the program's change
(:func:`csum.rewrite.infer.infer` names it, :func:`csum.rewrite.rewrite` makes it with correct incremental
updates) on the input packet once per known mistake injected, with csum's own models of the helpers
(:class:`csum.skb.Skb`, net/core/filter.c and net/core/utils.c) and of hand-written updates
(:mod:`csum.rewrite.handwritten`), and names the mistakes whose simulation gives exactly the observed
bytes and, for tc, the kernel's verdict on ``skb->csum`` (the CHECKSUM_COMPLETE test run). A checksum field
counts as reproduced when the simulation stores the same bytes, or when both the simulation and the program
store a correct value there (0x0000 and 0xffff may differ between correct updates). Where no simulation
reproduces the packet, the finding says so.

What a program calls narrows the candidates: :data:`Evidence` maps each helper it calls to the constants its
flags argument takes (:func:`csum.kernel.insn.helper_calls`), and a mistake is only named when the program
could make it (BPF_F_PSEUDO_HDR missing needs a ``bpf_l4_csum_replace`` whose flags may lack it).

:func:`on_partial` makes every simulation that reproduces a tc program's test runs again on a CHECKSUM_PARTIAL skb
(which no test run makes) and finishes it as the NIC would: what the program sends from veth or virtio.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from ..bpf.flags import (
    BPF_F_HDR_FIELD_MASK,
    BPF_F_IPV6,
    BPF_F_MARK_ENFORCE,
    BPF_F_MARK_MANGLED_0,
    BPF_F_PSEUDO_HDR,
    BPF_F_RECOMPUTE_CSUM,
)
from ..bpf.mistakes import Mistake
from ..bpf.skb import DIFF, Skb
from ..core.arith import M16, fold
from ..core.partial import csum_partial
from ..errors import CsumValueError
from ..layers import inet
from ..layers.reasons import ABSENT
from . import handwritten
from .handwritten import CORRECT, FORMS, Form
from ..layers.walk import IPLayer, walk_outer_strict
from .infer import infer
from .packet import Call, CsumDiffCall, CsumReplaceCall, StoreBytesCall, rewrite
from .program import store_groups

__all__ = ["NOT_PARTIAL", "SKB_CSUM", "Evidence", "Finding", "Mistake", "added_header", "on_partial", "reproduce"]

Kind = Literal["tc", "xdp"]
#: Helper name -> the constants its flags argument (r5) takes at the program's call sites; None: not known at some.
Evidence = Mapping[str, "frozenset[int] | None"]
#: The key of :attr:`Finding.fields` for ``skb->csum`` (the CHECKSUM_COMPLETE verdict).
SKB_CSUM = -1
#: :func:`on_partial`'s note for a packet no CHECKSUM_PARTIAL skb carries.
NOT_PARTIAL = "not TCP or UDP: a CHECKSUM_PARTIAL skb carries a TCP/UDP checksum to finish"
_NETWORK = 14  # where net/bpf/test_run.c's skb->csum starts: after the Ethernet header (eth_type_trans)


@dataclass(frozen=True)
class Finding:
    """What :func:`reproduce` found for one packet: ``mistakes`` whose simulation gives exactly the observed
    bytes (and skb->csum), () when none does; ``fields``: checksum field offset (or :data:`SKB_CSUM`) -> the
    mistakes accounting for it; ``note``: why nothing could be simulated, or details; ``explained``: checksum field
    offset -> the further causes (id of :data:`csum.explain.CAUSES`, detail) whose simulation by
    :func:`csum.explain.program.explain_program` gives its bytes too (for a field no mistake here accounts for, every
    such cause; for one that a mistake does, the slips of a checksum computed from scratch that give its bytes too)."""

    mistakes: tuple[Mistake, ...]
    fields: Mapping[int, tuple[Mistake, ...]]
    note: str = ""
    explained: Mapping[int, tuple[tuple[str, str], ...]] = dataclasses.field(default_factory=dict)

    @property
    def causes(self) -> tuple[str, ...]:
        """Every cause id named: the mistakes, then the explainer's causes."""
        return tuple(dict.fromkeys([*map(str, self.mistakes), *(c for cs in self.explained.values() for c, _ in cs)]))


@dataclass(frozen=True)
class _Sim:
    mistakes: frozenset[Mistake]
    packet: bytes
    valid: bool | None
    #: how it was made: the calls, and the hand-written update's slip (None: the helpers)
    calls: tuple[Call, ...] = ()
    slip: _Slip | None = None


def _carried(call: CsumReplaceCall, snaps: dict[int, tuple[bytes, bytes]]) -> tuple[bytes, bytes] | None:
    """The before/after bytes of the checksum field a carried replace takes its change from, as the program reads
    them around that field's own replace (None: it carries a non-checksum word, whose values it records)."""
    return snaps.get(call.carries) if call.carries is not None else None


def _helpers(before: bytes, calls: list[Call], skb: Skb | None = None) -> tuple[bytes, bool]:
    """The calls made by the helpers on a CHECKSUM_COMPLETE skb of ``before`` (or on ``skb``): (bytes, whether
    skb->csum is still valid)."""
    skb = skb or Skb.checksum_complete(before, network_offset=_NETWORK)
    snaps: dict[int, tuple[bytes, bytes]] = {}
    for call in calls:  # a size-0 replace's ``to`` is the bpf_csum_diff result csum.rewrite recorded
        if isinstance(call, CsumReplaceCall):
            frm, to = call.frm, call.to
            carried = _carried(call, snaps)
            if carried is not None:
                frm, to = (int.from_bytes(v, "little") for v in carried)
            old = bytes(skb.data[call.offset:call.offset + 2])
            if call.helper == "bpf_l3_csum_replace":  # the simulated mistakes are BpfMisuse cases on purpose
                skb.bpf_l3_csum_replace(call.offset, frm, to, call.flags, misuse=False)
            else:
                skb.bpf_l4_csum_replace(call.offset, frm, to, call.flags, misuse=False)
            snaps[call.offset] = (old, bytes(skb.data[call.offset:call.offset + 2]))
        elif isinstance(call, StoreBytesCall):
            skb.bpf_skb_store_bytes(call.offset, call.to, call.flags)
    return bytes(skb.data), skb.csum_valid()


@dataclass(frozen=True)
class _Slip:
    """A hand-written update's deviations, on the checksum fields in ``only`` (None: all)."""

    form: Form = CORRECT
    swap_new: bool = False
    swap_both: bool = False
    swap_result: bool = False
    keep_zero: bool = True
    mangle: bool = True
    only: frozenset[int] | None = None


def _by_hand(before: bytes, calls: list[Call], slip: _Slip) -> bytes:
    """The calls' change made by a hand-written update (XDP; a tc program writing checksums itself)."""
    buf = bytearray(before)
    snaps: dict[int, tuple[bytes, bytes]] = {}
    pair = (b"", b"")
    for call in calls:
        if isinstance(call, CsumDiffCall):
            pair = (call.frm, call.to)
        elif isinstance(call, CsumReplaceCall):
            size = call.flags & BPF_F_HDR_FIELD_MASK
            carried = _carried(call, snaps)
            if carried is not None:
                old, new = carried
            elif size:
                old, new = call.frm.to_bytes(size, "little"), call.to.to_bytes(size, "little")
            else:
                old, new = pair
            s = slip if slip.only is None or call.offset in slip.only else _Slip()
            at = call.offset
            was = bytes(buf[at:at + 2])
            check = int.from_bytes(was, "little")
            mangled0 = bool(call.flags & BPF_F_MARK_MANGLED_0)
            if not (mangled0 and s.keep_zero and not call.flags & BPF_F_MARK_ENFORCE and check == 0):
                value = handwritten.update(check, old, new, s.form, swap_new=s.swap_new, swap_both=s.swap_both,
                                           swap_result=s.swap_result)
                if mangled0 and s.mangle and value == 0:
                    value = M16
                buf[at:at + 2] = value.to_bytes(2, "little")
            snaps[at] = (was, bytes(buf[at:at + 2]))
        else:
            buf[call.offset:call.offset + len(call.to)] = call.to
    return bytes(buf)


def _valid_unmoved(before: bytes, packet: bytes) -> bool:
    """Whether skb->csum, not moved by anything, still sums ``packet`` (bytes written directly, no helper)."""
    skb = Skb.checksum_complete(before, network_offset=_NETWORK)
    skb.data[:] = packet
    return skb.csum_valid()


def _may(evidence: Evidence | None, helper: str, test: Callable[[int], bool] = lambda f: True) -> bool:
    """Whether the program may make a call of ``helper`` whose flags pass ``test`` (True without evidence)."""
    if evidence is None:
        return True
    if helper not in evidence:
        return False
    flags = evidence[helper]
    return flags is None or any(test(f) for f in flags)


def _always(evidence: Evidence | None, helper: str, test: Callable[[int], bool], absent: bool, *,
            some: bool = False) -> bool:
    """Whether the instructions show that every call of ``helper`` (``some``: one call at least) passes flags that
    pass ``test``; ``absent``: the answer when the program does not call it. False without evidence."""
    if evidence is None or (helper in evidence and evidence[helper] is None):
        return False
    if helper not in evidence:
        return absent
    flags = evidence[helper] or frozenset()
    return any(map(test, flags)) if some else all(map(test, flags))


_L3, _L4, _STORE = "bpf_l3_csum_replace", "bpf_l4_csum_replace", "bpf_skb_store_bytes"
#: The mistakes that leave the bytes right and only skb->csum wrong: a simulation of one shows only if skb->csum
#: comes out otherwise than with the correct calls; any other mistake shows only if the bytes do.
_CSUM_ONLY = frozenset({Mistake.PSEUDO_HDR_MISSING, Mistake.PSEUDO_HDR_ON_PORT, Mistake.IPV6_FLAG_MISSING,
                        Mistake.IPV6_FLAG_ON_IPV4, Mistake.STORE_NO_RECOMPUTE, Mistake.DIRECT_WRITE})


class _Case:
    """One packet's change: the correct calls and what each one is for."""

    def __init__(self, before: bytes, calls: list[Call], address: set[int] | None = None) -> None:
        self.before, self.calls = before, calls
        self.address: set[int] = set()  # ids of the replaces updating a checksum for an address
        self.field: set[int] = set()    # ... for any other field (port, id, TTL word, header word)
        for pre, store in store_groups(calls):
            has_diff = any(isinstance(c, CsumDiffCall) for c in pre)
            for c in pre:
                if isinstance(c, CsumReplaceCall) and c.carries is None:
                    is_address = id(c) in address if address is not None else has_diff
                    (self.address if is_address else self.field).add(id(c))

    def replace(self, pick: Callable[[CsumReplaceCall], bool], change: Callable[[CsumReplaceCall], Call | None]
                ) -> list[Call] | None:
        """The calls with every replace ``pick`` selects changed (None: dropped); None when none is selected."""
        out: list[Call] = []
        hit = False
        for c in self.calls:
            if isinstance(c, CsumReplaceCall) and pick(c):
                hit = True
                new = change(c)
                if new is not None:
                    out.append(new)
            else:
                out.append(c)
        return out if hit else None

    def stores(self, change: Callable[[StoreBytesCall], StoreBytesCall]) -> list[Call] | None:
        """The calls with every store given ``change``; None when that changes nothing."""
        out = [change(c) if isinstance(c, StoreBytesCall) else c for c in self.calls]
        return out if out != self.calls else None

    def size4(self) -> _Case | None:
        """The case with its IPv4 address updates made by size-4 replaces of the address (bpf_l3_csum_replace(skb,
        off, old, new, 4)) instead of a bpf_csum_diff; None when the packet has none."""
        out: list[Call] = []
        address: set[int] = set()
        for pre, store in store_groups(self.calls):
            diff = any(isinstance(c, CsumDiffCall) for c in pre)
            if diff and len(store.to) != 4:
                return None
            for c in pre:
                if isinstance(c, CsumDiffCall):
                    continue
                if diff and isinstance(c, CsumReplaceCall) and c.carries is None:
                    c = dataclasses.replace(c, frm=int.from_bytes(store.frm, "little"),
                                            to=int.from_bytes(store.to, "little"), flags=c.flags | 4)
                    address.add(id(c))
                out.append(c)
            out.append(store)
        return _Case(self.before, out, address) if address else None

    def udp_zero(self, c: CsumReplaceCall) -> bool:
        return bool(c.flags & BPF_F_MARK_MANGLED_0) and self.before[c.offset:c.offset + 2] == b"\0\0"


def _swap(value: int, size: int) -> int:
    return int.from_bytes(value.to_bytes(size, "little"), "big") if size in (2, 4) else value


def _size_is(size: int) -> Callable[[int], bool]:
    """A test of a flags value: its field size bits are ``size``."""
    return lambda flags: flags & BPF_F_HDR_FIELD_MASK == size


def _on(helper: str, *, own: bool = False, among: set[int] | None = None) -> Callable[[CsumReplaceCall], bool]:
    """A pick of the sized replaces of ``helper`` (``own``: not carrying an inner change; ``among``: those ids)."""
    def pick(c: CsumReplaceCall) -> bool:
        return (c.helper == helper and bool(c.flags & BPF_F_HDR_FIELD_MASK) and not (own and c.carries is not None)
                and (among is None or id(c) in among))
    return pick


def _sized(size: int) -> Callable[[CsumReplaceCall], Call]:
    """A change of a replace: its field size bits set to ``size``."""
    return lambda c: dataclasses.replace(c, flags=(c.flags & ~BPF_F_HDR_FIELD_MASK) | size)


def _swapped(both: bool) -> Callable[[CsumReplaceCall], Call]:
    """A change of a replace: ``to`` (``both``: and ``from``) in the other byte order."""
    def change(c: CsumReplaceCall) -> Call:
        size = c.flags & BPF_F_HDR_FIELD_MASK
        return dataclasses.replace(c, frm=_swap(c.frm, size) if both else c.frm, to=_swap(c.to, size))
    return change


def _helper_sims(case: _Case, evidence: Evidence | None) -> Iterator[tuple[frozenset[Mistake], list[Call]]]:
    """(mistakes, calls) for the tc helper mistakes the program may make."""
    def no_flag(bit: int) -> Callable[[int], bool]:
        return lambda f: not f & bit

    tries: list[tuple[Mistake, bool, list[Call] | None]] = [
        (Mistake.PSEUDO_HDR_MISSING, _may(evidence, _L4, no_flag(BPF_F_PSEUDO_HDR)),
         case.replace(lambda c: bool(c.flags & BPF_F_PSEUDO_HDR),
                      lambda c: dataclasses.replace(c, flags=c.flags & ~(BPF_F_PSEUDO_HDR | BPF_F_IPV6)))),
        (Mistake.PSEUDO_HDR_ON_PORT, _may(evidence, _L4, lambda f: bool(f & BPF_F_PSEUDO_HDR)),
         case.replace(lambda c: id(c) in case.field and c.helper == _L4,
                      lambda c: dataclasses.replace(c, flags=c.flags | BPF_F_PSEUDO_HDR))),
        (Mistake.IPV6_FLAG_MISSING, _may(evidence, _L4, lambda f: bool(f & BPF_F_PSEUDO_HDR) and not f & BPF_F_IPV6),
         case.replace(lambda c: bool(c.flags & BPF_F_IPV6),
                      lambda c: dataclasses.replace(c, flags=c.flags & ~BPF_F_IPV6))),
        (Mistake.IPV6_FLAG_ON_IPV4, _may(evidence, _L4, lambda f: bool(f & BPF_F_IPV6)),
         case.replace(lambda c: bool(c.flags & BPF_F_PSEUDO_HDR) and not c.flags & BPF_F_IPV6,
                      lambda c: dataclasses.replace(c, flags=c.flags | BPF_F_IPV6))),
        (Mistake.STORE_NO_RECOMPUTE, _may(evidence, _STORE, no_flag(BPF_F_RECOMPUTE_CSUM)),
         case.stores(lambda c: dataclasses.replace(c, flags=c.flags & ~BPF_F_RECOMPUTE_CSUM))),
        (Mistake.UDP0_NOT_KEPT, _may(evidence, _L4, no_flag(BPF_F_MARK_MANGLED_0)),
         case.replace(case.udp_zero, lambda c: dataclasses.replace(c, flags=c.flags & ~BPF_F_MARK_MANGLED_0))),
        (Mistake.UDP0_NOT_MANGLED, _may(evidence, _L4, no_flag(BPF_F_MARK_MANGLED_0)),
         case.replace(lambda c: bool(c.flags & BPF_F_MARK_MANGLED_0) and not case.udp_zero(c),
                      lambda c: dataclasses.replace(c, flags=c.flags & ~BPF_F_MARK_MANGLED_0))),
    ]
    for helper in (_L3, _L4):
        tries += [(Mistake.SIZE_BITS, _may(evidence, helper, _size_is(0)), case.replace(_on(helper), _sized(0))),
                  (Mistake.BYTE_ORDER, _may(evidence, helper), case.replace(_on(helper, own=True), _swapped(False))),
                  (Mistake.BYTE_ORDER, _may(evidence, helper), case.replace(_on(helper, own=True), _swapped(True)))]
    # a program passing BPF_F_PSEUDO_HDR to bpf_l4_csum_replace did patch the L4 checksum for addresses
    pseudo = _always(evidence, _L4, lambda f: bool(f & BPF_F_PSEUDO_HDR), False, some=True)
    tries += [(m, allowed and not (m is Mistake.L4_NOT_PATCHED and pseudo), calls) for m, allowed, calls in _common(case)]
    for mistake, allowed, calls in tries:
        if allowed and calls is not None:
            yield frozenset({mistake}), calls
    narrow = case.size4()
    if narrow is not None:  # the addresses by size-4 replaces: their size bits can be 0 or 2 instead
        yield frozenset(), narrow.calls
        for helper, size in itertools.product((_L3, _L4), (0, 2)):
            calls = narrow.replace(_on(helper, among=narrow.address), _sized(size))
            if calls is not None and _may(evidence, helper, _size_is(size)):
                yield frozenset({Mistake.SIZE_BITS}), calls


def _common(case: _Case) -> list[tuple[Mistake, bool, list[Call] | None]]:
    """The mistakes of leaving an update out, helpers or hand-written alike."""
    return [
        (Mistake.L4_NOT_PATCHED, True, case.replace(lambda c: id(c) in case.address and c.helper == _L4,
                                                    lambda c: None)),
        (Mistake.OUTER_NOT_CARRIED, True, case.replace(lambda c: c.carries is not None, lambda c: None)),
    ]


def _hand_sims(case: _Case) -> Iterator[tuple[frozenset[Mistake], list[Call], _Slip]]:
    """(mistakes, calls, slip) for the hand-written update mistakes."""
    yield frozenset(), case.calls, _Slip()
    for mistake, _, calls in _common(case):
        if calls is not None:
            yield frozenset({mistake}), calls, _Slip()
    fields = [frozenset({c.offset}) for c in case.calls if isinstance(c, CsumReplaceCall)]
    scopes: list[frozenset[int] | None] = [None, *dict.fromkeys(fields)]
    for only in scopes:
        for form in FORMS:
            yield frozenset({Mistake.SINGLE_FOLD}), case.calls, _Slip(dataclasses.replace(form, folds=1), only=only)
        yield frozenset({Mistake.CARRY_LOST}), case.calls, _Slip(Form(word=4, acc=32), only=only)
        yield frozenset({Mistake.CARRY_LOST}), case.calls, _Slip(Form(word=2, acc=16), only=only)
        for slip in (_Slip(swap_new=True, only=only), _Slip(swap_both=True, only=only),
                     _Slip(swap_result=True, only=only)):
            yield frozenset({Mistake.BYTE_ORDER}), case.calls, slip
    if any(isinstance(c, CsumReplaceCall) and case.udp_zero(c) for c in case.calls):
        yield frozenset({Mistake.UDP0_NOT_KEPT}), case.calls, _Slip(keep_zero=False)
    yield frozenset({Mistake.UDP0_NOT_MANGLED}), case.calls, _Slip(mangle=False)


def _sims(case: _Case, kind: Kind, evidence: Evidence | None) -> Iterator[_Sim]:
    if kind == "tc":
        yield _Sim(frozenset(), *_helpers(case.before, case.calls), tuple(case.calls))
        for mistakes, calls in _helper_sims(case, evidence):
            yield _Sim(mistakes, *_helpers(case.before, calls), tuple(calls))
        # a tc program writing checksums or fields itself: skb->csum moves only where the program moves it; that it
        # writes bytes directly rather than with a store that leaves skb->csum alone needs a program storing none,
        # or storing with BPF_F_RECOMPUTE_CSUM
        direct = evidence is None or not (_L4 in evidence and _L3 in evidence)
        unmoved_ok = not _always(evidence, _STORE, lambda f: not f & BPF_F_RECOMPUTE_CSUM, False)
        for mistakes, calls, slip in (_hand_sims(case) if direct else iter(())):
            packet = _by_hand(case.before, calls, slip)
            if unmoved_ok and not _valid_unmoved(case.before, packet):
                yield _Sim(mistakes | {Mistake.DIRECT_WRITE}, packet, False, tuple(calls), slip)
            yield _Sim(mistakes, packet, True, tuple(calls), slip)  # skb->csum moved right (bpf_csum_update ...)
        return
    for mistakes, calls, slip in _hand_sims(case):
        yield _Sim(mistakes, _by_hand(case.before, calls, slip), None, tuple(calls), slip)


def _field_ok(packet: bytes) -> dict[int, bool]:
    """Checksum field offset -> whether it holds a right checksum (a UDP 0, "none", is not one)."""
    try:
        return {r.field: bool(r.ok) and r.reason not in ABSENT for r in inet.verify(packet, link="ethernet")
                if r.field is not None}
    except CsumValueError:
        return {}


class _Compare:
    """Compares packets of one layout: bytes, checksum fields equal or both correct."""

    def __init__(self, fields: frozenset[int]) -> None:
        self.owner = {at + i: at for at in fields for i in (0, 1)}
        self._ok: dict[bytes, dict[int, bool]] = {}

    def ok(self, packet: bytes) -> dict[int, bool]:
        if packet not in self._ok:
            self._ok[packet] = _field_ok(packet)
        return self._ok[packet]

    def differ(self, a: bytes, b: bytes) -> set[int] | None:
        """The checksum fields where ``a`` and ``b`` differ (not both correct); None when other bytes differ."""
        if len(a) != len(b):
            return None
        at: set[int] = set()
        for i in range(len(a)):
            if a[i] != b[i]:
                if i not in self.owner:
                    return None
                at.add(self.owner[i])
        if at:
            ok_a, ok_b = self.ok(a), self.ok(b)
            at = {f for f in at if not (ok_a.get(f) and ok_b.get(f))}
        return at


def reproduce(before: bytes, after: bytes, *, kind: Kind, stale: bool | None = None,
              evidence: Evidence | None = None) -> Finding:
    """The mistakes whose simulation turns Ethernet frame ``before`` into exactly ``after`` (see the module docstring).

    ``kind``: "tc" (helpers and hand-written updates, skb->csum) or "xdp" (hand-written updates); ``stale``:
    the kernel's CHECKSUM_COMPLETE verdict for tc (True: skb->csum left stale; None: not known);
    ``evidence``: the helpers the program calls and their flags (:data:`Evidence`; None: anything goes).
    """
    inferred = infer(before, after)
    if inferred.request is None:
        return Finding((), {}, inferred.reason)
    try:
        base = rewrite(before, link="ethernet", **inferred.request)
    except CsumValueError as exc:
        return Finding((), {}, f"csum.rewrite cannot make this change: {exc}")
    compare = _Compare(inferred.csum_fields)
    case = _Case(before, list(base.calls))
    reference: _Sim | None = None
    found: dict[frozenset[Mistake], _Sim] = {}
    for sim in _sims(case, kind, evidence):
        reference = reference or sim
        if sim.mistakes - _CSUM_ONLY and compare.differ(sim.packet, reference.packet) == set():
            continue  # the mistake makes no difference to this packet's bytes
        if sim.mistakes & _CSUM_ONLY and sim.valid == reference.valid:
            continue  # ... or to its skb->csum
        if (stale is None or sim.valid is None or sim.valid != stale) and compare.differ(sim.packet, after) == set():
            if not sim.mistakes:
                return Finding((), {}, "a correct update gives these bytes" + ("" if stale is None else
                                                                                 " and skb->csum"))
            found.setdefault(sim.mistakes, sim)
    if not found or reference is None:
        return Finding((), {}, "no simulated mistake gives these bytes" + ("" if stale is None else " and skb->csum"))
    fields: dict[int, set[Mistake]] = {}
    for mistakes, sim in found.items():
        for at in compare.differ(sim.packet, reference.packet) or ():
            fields.setdefault(at, set()).update(mistakes)
        if sim.valid is not None and reference.valid is not None and sim.valid != reference.valid:
            fields.setdefault(SKB_CSUM, set()).update(mistakes)
    order = list(Mistake).index
    named = sorted({m for ms in found for m in ms}, key=order)
    return Finding(tuple(named), {at: tuple(sorted(ms, key=order)) for at, ms in fields.items()})


def _calls_possible(sim: _Sim, evidence: Evidence | None) -> bool:
    """Whether the program can have made ``sim``'s helper calls: it calls every replace helper they use (a program
    that never calls bpf_l4_csum_replace wrote its L4 checksum itself), and passes BPF_F_PSEUDO_HDR, or leaves it
    out, at one of its call sites as each call does (where the call sites' flags are known constants)."""
    if sim.slip is not None or evidence is None:
        return True
    for c in sim.calls:
        if isinstance(c, CsumReplaceCall):
            if c.helper not in evidence:
                return False
            flags = evidence[c.helper]
            if flags is not None and c.flags & BPF_F_PSEUDO_HDR not in {f & BPF_F_PSEUDO_HDR for f in flags}:
                return False
    return True


def on_partial(before: bytes, after: bytes, *, stale: bool | None = None, evidence: Evidence | None = None
               ) -> tuple[list[tuple[frozenset[Mistake], bool, bytes]], str]:
    """What a tc program that turned Ethernet frame ``before`` into ``after`` on a CHECKSUM_NONE skb (and whose
    CHECKSUM_COMPLETE run's verdict on skb->csum was ``stale``) sends from a CHECKSUM_PARTIAL skb of ``before``.

    Every simulation :func:`reproduce` makes that gives exactly ``after`` (and ``stale``) is one way the program
    may work; each is made again on :meth:`csum.skb.Skb.checksum_partial` of ``before`` (the L4 checksum field
    holding the pseudo-header seed, as veth and virtio deliver it), and the NIC's finish
    (:meth:`csum.skb.Skb.skb_checksum_help`, net/core/dev.c) is applied to the result. Returns (mistakes, whether
    the program writes checksums by hand, the finished frame) for each way, and a note when there is none (no
    simulation reproduces the program; :data:`NOT_PARTIAL`: the packet has no TCP/UDP checksum a CHECKSUM_PARTIAL
    skb carries).
    """
    try:
        seeded = Skb.checksum_partial(before, network_offset=_NETWORK)
    except CsumValueError:
        return [], NOT_PARTIAL
    inferred = infer(before, after)
    if inferred.request is None:
        return [], inferred.reason
    try:
        base = rewrite(before, link="ethernet", **inferred.request)
    except CsumValueError as exc:
        return [], f"csum.rewrite cannot make this change: {exc}"
    compare = _Compare(inferred.csum_fields)
    out: dict[bytes, tuple[frozenset[Mistake], bool]] = {}
    for sim in _sims(_Case(before, list(base.calls)), "tc", evidence):
        if (stale is not None and sim.valid is not None and sim.valid == stale) or \
                compare.differ(sim.packet, after) != set() or not _calls_possible(sim, evidence):
            continue
        skb = Skb.checksum_partial(before, network_offset=_NETWORK)
        if sim.slip is None:
            _helpers(bytes(skb.data), list(sim.calls), skb)
        else:
            skb.data[:] = _by_hand(bytes(seeded.data), list(sim.calls), sim.slip)
        skb.skb_checksum_help()
        out.setdefault(bytes(skb.data), (sim.mistakes, sim.slip is not None))
    if not out:
        return [], "no simulated update gives the program's CHECKSUM_NONE output" + \
            ("" if stale is None else " and skb->csum verdict")
    return [(m, hand, frame) for frame, (m, hand) in out.items()], ""


def _header_checksum(header: bytes) -> bytes:
    """The IPv4 header checksum of ``header`` (its checksum field already 0) as the field's two bytes."""
    return fold(csum_partial(header)).to_bytes(2, "little")


def added_header(packet: bytes, l3: int) -> Finding:
    """Why the IPv4 header at ``l3``, which a program added, has a wrong checksum: reproduced by computing it over
    the header with one 16-bit word as it was before the program set it (0, as bpf_skb_adjust_room and
    bpf_xdp_adjust_head leave the room, or the inner header's word it was copied from), or not computed at all."""
    try:
        stack = walk_outer_strict(memoryview(packet), "ethernet")
    except CsumValueError as exc:
        return Finding((), {}, f"the packet does not parse: {exc}")
    ip = next((i for i in stack.ips if i.l3 == l3 and i.ip_csum is not None), None)
    if ip is None or ip.ip_csum is None:
        return Finding((), {}, f"no IPv4 header at offset {l3}")
    at, end = ip.ip_csum, ip.l3_header_end
    stored = packet[at:at + 2]
    if stored == b"\0\0":
        return Finding((Mistake.HEADER_CSUM_UNSET,), {at: (Mistake.HEADER_CSUM_UNSET,)})
    inner = next((i for i in stack.ips if i.l3 == end), None)
    header = bytearray(packet[l3:end])
    header[at - l3:at - l3 + 2] = b"\0\0"
    found = []
    for word in range(0, end - l3, 2):
        if l3 + word == at:
            continue
        values = {b"\0\0": "0"}
        if inner is not None and inner.version == 4 and end + word + 2 <= len(packet):
            values.setdefault(packet[end + word:end + word + 2], "the inner header's")
        for value, source in values.items():
            trial = bytearray(header)
            trial[word:word + 2] = value
            if value != header[word:word + 2] and _header_checksum(bytes(trial)) == stored:
                found.append(f"{_word_name(ip, l3 + word, packet)} still {source}")
    if not found:
        return Finding((), {}, "no header word set late gives the stored checksum")
    return Finding((Mistake.HEADER_FIELD_LATE,), {at: (Mistake.HEADER_FIELD_LATE,)},
                   "it matches the header with " + " or ".join(found))


def _word_name(ip: IPLayer, at: int, packet: bytes) -> str:
    """A readable name for the 16-bit word at ``at`` of IPv4 header ``ip``."""
    value = int.from_bytes(packet[at:at + 2], "big")
    if value == ip.end - ip.l3:
        return "the total length"
    for name, start in (("the source address", ip.saddr), ("the destination address", ip.daddr)):
        if start <= at < start + 4:
            return name
    if at <= ip.ttl < at + 2:
        return "the TTL/protocol word"
    return f"bytes {at}..{at + 1} (header offset {at - ip.l3})"
