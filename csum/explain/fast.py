"""The commonest wrong field of a capture explained without the Python walker: ``csum verify --explain``'s fast path.

A packet whose one wrong field is the TCP or UDP checksum of its one IP layer (not a fragment, a tunnel, an ICMP
error's quote, nor behind AH; the IPv4 header's checksum right) is walked by the C walker (csum/engine/_walk.c,
through csum/engine/_explain.c ``wrong``), which gives where the field, its segment and its IP header are, and the
hypotheses from the packet alone that store its value (csum/engine/_explain.c ``alone``, as csum/explain/quick.py
asks for them). Here they become what the Python path makes of the same packet (:func:`csum.explain.flow.Context.add`
and :func:`csum.explain.explain_result`): the field's flow key, its residual and fits recorded in the
:class:`~csum.explain.flow.Context`, the hits named through the reference's texts, and the choice among them made by
the same code (:func:`csum.explain.choose`, :func:`csum.explain.unnamed`). Every other packet, and a field whose
segment a right packet of the capture also holds (the packet before a NAT: :mod:`.hypotheses` pairs them), takes the
Python path. tests/explain/test_fast.py checks that both paths give the same facts and the same explanations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from .. import engine
from ..layers import Result
from ..layers.walk import Link
from . import Decision, Explanation, Subject, by_flow, decide, fitted, nothing_named, quick, shared, sums
from .causes import UNEXPLAINED
from .flow import Context, FlowKey
from .hypotheses import one_bit, segment_of
from .sums import Guess

__all__ = ["Groups", "Memo", "Verdict", "Wrong", "cause_of", "explain", "judge", "made", "paired", "record", "record_all",
           "wrong", "wrong_all"]


class Wrong(NamedTuple):
    """One wrong field from the C walker's stack (csum/engine/_explain.c ``wrong_all``'s tuple): the packet, the
    field's offset, the segment it covers (``start``, ``end``), its IP header's start and its datagram's end, its
    flow key, its residual (:func:`.flow.residual`), and the hypotheses from the packet alone that store its value:
    their variants (:data:`.quick.VARIANTS`, as bytes) and the C's numbers for each (:attr:`hits` names them)."""

    data: bytes
    at: int
    start: int
    end: int
    l3: int
    ip_end: int
    key: FlowKey
    res: int
    variants: bytes
    found: list[tuple[int, int, int, int, int]]

    def lengths(self, header: int) -> list[tuple[int, str]]:
        """:func:`.sums.lengths_of` for this field, its transport header of ``header`` bytes."""
        return sums.lengths_of(self.key[6], self.key[0], self.ip_end - self.l3, self.ip_end - self.start,
                               self.end - self.start, header)

    def guess(self, k: int) -> Guess:
        """Hypothesis ``k`` of :attr:`found`, named (:func:`.quick.guess`)."""
        return quick.guess(self.found[k], self.lengths, self.end - self.start)

    @property
    def hits(self) -> list[Guess]:
        """The hypotheses that store the field's value, named (:func:`.quick.named`)."""
        return quick.named(self.found, self.lengths, self.end - self.start)

    @property
    def causes(self) -> tuple[str, ...]:
        """The cause id of each hypothesis of :attr:`found` (one per variants' signature, found once)."""
        causes = _CAUSES.get(self.variants)
        if causes is None:
            causes = _CAUSES[self.variants] = tuple(g.cause for g in self.hits)
        return causes


#: Per variants' signature, the causes of its hypotheses (each variant names one cause: csum/explain/quick.py).
_CAUSES: dict[bytes, tuple[str, ...]] = {}


def wrong_all(packets: Sequence[bytes], links: Sequence[int], fields: Sequence[int]) -> list[Wrong | None]:
    """Per packet of ``packets`` (link types ``links``), whose one wrong field the check found at offset
    ``fields[k]``: the field from the C walker, where this path covers it (see the module docstring); None: the
    Python path's. All None where the C is not built."""
    c = engine.cexplain
    if c is None:
        return [None] * len(packets)
    return c.wrong_all(packets, links, fields, Wrong)  # made as Wrongs


def wrong(data: bytes, link: Link | int, r: Result) -> Wrong | None:
    """Field ``r`` of packet ``data`` (link type ``link``) from the C walker, where it is the packet's one wrong field
    and one this path covers (see the module docstring); None: the Python path's."""
    if r.field is None or r.stored is None or r.computed is None or not isinstance(link, int):
        return None
    return wrong_all([data], [link], [r.field])[0]


def paired(w: Wrong, context: Context) -> bool:
    """Whether a right packet of the context holds this field's segment (:func:`.hypotheses.segment_key`): the
    packet before a NAT, which only the Python path pairs."""
    return bool(context.segments) and segment_of(w.data, w.start, w.at, w.end) in context.segments


class Memo:
    """What :func:`explain` found once for a capture's fields, all recorded (the context no longer changes): the
    choice among the hits, by flow key, whether the residual is one bit's, the hits' variants, and the residual
    where another wrong field of the flow shares it (:func:`csum.explain.decide` depends on nothing else for a field
    of this path: a TCP or UDP checksum, its IP header right; the variants fix the hits' causes, none sure); and what
    the flow says of a residual no hit names, by flow key and residual (None where no other wrong field of the flow
    shares it: :func:`csum.explain.by_flow` then depends on the flow alone)."""

    __slots__ = ("decisions", "flows")

    def __init__(self) -> None:
        self.decisions: dict[tuple[FlowKey, bool, bytes, int | None], Decision] = {}
        self.flows: dict[tuple[FlowKey, int | None], Explanation | None] = {}


def explain(w: Wrong, r: Result, context: Context, memo: Memo | None = None) -> Explanation:
    """Why field ``r`` (``w``, recorded in ``context``) is wrong, as :func:`csum.explain.explain_result` says;
    ``memo``: the decisions kept across a capture's fields (:class:`Memo`), each field's explanation then made from
    its own hits and values (their texts when first read)."""
    return made(w, r, judge(w, r, context, memo))


#: What :func:`judge` found for a field: an explanation shared by every field it holds for, or (cause, k, n): the
#: hits' ``k``-th fits (``n``: the flow's wrong fields it fits, where the flow pins it), or None: no hit named,
#: nor does the flow say (:func:`csum.explain.nothing_named`, from the field's own values).
Verdict = Explanation | tuple[str, int, int] | None


def judge(w: Wrong, r: Result, context: Context, memo: Memo | None = None) -> Verdict:
    """What :func:`explain` finds for field ``r`` (``w``), short of the field's own texts: the same for every field
    of the same flow key, variants and residual (their explanations are then :func:`made` from it)."""
    _data, _at, _start, _end, _l3, _ip_end, key, res, variants, _found = w  # one unpacking
    together = shared(context, key, res)
    if variants:
        # a residual another wrong field of the flow shares: the decision may depend on it (decide, shared)
        sig = (key, one_bit(res), variants, res if together else None)
        decision = _UNSEEN if memo is None else memo.decisions.get(sig, _UNSEEN)  # one lookup: it may be None
        if decision is _UNSEEN:
            decision = decide(_subject(w, r), w.hits, context)
            if memo is not None:
                memo.decisions[sig] = decision
        if decision is not None:
            k, n, text = decision
            if k < 0:
                return Explanation(UNEXPLAINED, text)
            return (_CAUSES.get(variants) or w.causes)[k], k, n
    # what the flow says depends on the residual only where another field of the flow shares it (by_flow)
    place = (key, res if together else None)
    said = _UNSEEN if memo is None else memo.flows.get(place, _UNSEEN)
    if said is _UNSEEN:
        said = by_flow(_subject(w, r), context)
        if memo is not None:
            memo.flows[place] = said
    return said


def cause_of(verdict: Verdict) -> str:
    """The cause id of the fields :func:`judge` gave ``verdict``."""
    if verdict is None:
        return UNEXPLAINED
    return verdict.cause if isinstance(verdict, Explanation) else verdict[0]


def made(w: Wrong, r: Result, verdict: Verdict) -> Explanation:
    """The explanation of field ``r`` (``w``) that :func:`judge` gave ``verdict``."""
    if verdict is None:
        assert r.stored is not None and r.computed is not None
        return nothing_named(r.stored, r.computed, w.causes)
    if isinstance(verdict, Explanation):
        return verdict
    cause, k, n = verdict
    return fitted(cause, lambda: w.guess(k).text(), n)


_UNSEEN: Any = object()  # not in a Memo yet


def _subject(w: Wrong, r: Result) -> Subject:
    """Field ``r`` (``w``) as :func:`csum.explain.choose` sees it."""
    assert r.stored is not None and r.computed is not None
    return Subject(r.layer, r.stored, r.computed, w.res, w.key, True, _right, None)


def _right() -> bool:
    """The IP header checksum of a field this path explains: right (wrong_all takes only packets with one wrong
    field)."""
    return True


def record(w: Wrong, context: Context) -> None:
    """Record field ``w`` in ``context`` as :meth:`~csum.explain.flow.Context.add` does for its packet."""
    context.record(w.data, w.at, w.key, w.res, w.hits)


_PLACE, _KEY, _GROUP = itemgetter(0, 1), itemgetter(6), itemgetter(6, 8, 7)


class Groups(NamedTuple):
    """The fields of a capture grouped by flow key, variants and residual (:meth:`Wrong.group`: one :func:`judge`
    verdict holds for all of a group's fields): each field's group (a number), and per group, in the order of its
    first field, its (flow key, variants, residual) and its first field's position."""

    of: list[int]
    groups: list[tuple[FlowKey, bytes, int]]
    first: list[int]


def record_all(ws: Sequence[Wrong], context: Context, places: bool = True) -> Groups:
    """:func:`record` of every field of ``ws``, counted at once per group (the same counts, in the same order);
    the fields' :class:`Groups`. ``places``: each field's flow key by (packet, offset) too (:attr:`Context.keys`:
    only a field explained through the Python walker looks its own up; without, no packet's bytes are hashed)."""
    context.pins.clear()
    if places:
        context.keys.update(zip(map(_PLACE, ws), map(_KEY, ws)))
    numbers: dict[tuple[FlowKey, bytes, int], int] = {}
    of = [numbers.setdefault(g, len(numbers)) for g in map(_GROUP, ws)]
    groups = list(numbers)
    firsts = dict(zip(reversed(of), range(len(of) - 1, -1, -1)))  # each group's lowest position, last written
    first = list(map(firsts.__getitem__, range(len(groups))))
    residuals, every = context.residuals, context.fits
    for g, n in Counter(of).items():  # in the order of each group's first field, as one by one
        key, variants, res = groups[g]
        counts = residuals.get(key)
        if counts is None:
            counts = residuals[key] = Counter()
        counts[res] = counts.get(res, 0) + n
        if not variants:
            continue
        causes = _CAUSES.get(variants)
        if causes is None:  # a field of these variants names them (once per variants)
            causes = ws[first[g]].causes
        fits = every.get(key)
        if fits is None:
            fits = every[key] = Counter()
        for cause in dict.fromkeys(causes):
            fits[cause] = fits.get(cause, 0) + n
    return Groups(of, groups, first)
