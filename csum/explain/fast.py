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
from . import Decision, Explanation, Subject, by_flow, choose, chosen, decide, nothing_named, quick, sums, unnamed
from .flow import Context, FlowKey
from .hypotheses import one_bit, segment_of
from .sums import Guess

__all__ = ["Memo", "Wrong", "explain", "paired", "record", "record_all", "wrong"]


class Wrong(NamedTuple):
    """One wrong field from the C walker's stack: the packet, the field's offset, the segment it covers
    (``start``, ``end``), its flow key, its residual (:func:`.flow.residual`) and the hypotheses from the packet alone
    that store its value."""

    data: bytes
    at: int
    start: int
    end: int
    key: FlowKey
    res: int
    hits: list[Guess]


def wrong(data: bytes, link: int, r: Result) -> Wrong | None:
    """Field ``r`` of packet ``data`` (link type ``link``) from the C walker, where it is the packet's one wrong field
    and one this path covers (see the module docstring); None: the Python path's."""
    c = engine.cexplain
    if c is None or r.field is None or r.stored is None or r.computed is None:
        return None
    got = c.wrong(data, link)
    if got is None or got[0] != r.field:
        return None
    at, start, end, l3, ip_end, version, proto, src, dst, sport, dport, res, found = got
    layer = r.layer
    if found:
        length = end - start

        def lengths(header: int) -> list[tuple[int, str]]:
            return sums.lengths_of(layer, version, ip_end - l3, ip_end - start, length, header)

        hits = quick.named(found, lengths, length)
    else:
        hits = []
    # tuple.__new__: Wrong(...) without its NamedTuple __new__ (Python code run for every field)
    return _new(Wrong, (data, at, start, end, (version, src, dst, proto, sport, dport, layer, 0), res, hits))


_new = tuple.__new__


def paired(w: Wrong, context: Context) -> bool:
    """Whether a right packet of the context holds this field's segment (:func:`.hypotheses.segment_key`): the
    packet before a NAT, which only the Python path pairs."""
    return bool(context.segments) and segment_of(w.data, w.start, w.at, w.end) in context.segments


class Memo:
    """What :func:`explain` found once for a capture's fields, all recorded (the context no longer changes): the
    choice among the hits, by flow key, whether the residual is one bit's, and the hits' causes and sureness
    (:func:`csum.explain.decide` depends on nothing else for a field of this path: a TCP or UDP checksum, its IP
    header right); and what the flow says of a residual no hit names, by flow key and residual."""

    __slots__ = ("decisions", "flows")

    def __init__(self) -> None:
        self.decisions: dict[tuple[FlowKey, bool, tuple[tuple[str, bool], ...]], Decision] = {}
        self.flows: dict[tuple[FlowKey, int], Explanation | None] = {}


def explain(w: Wrong, r: Result, context: Context, memo: Memo | None = None) -> Explanation:
    """Why field ``r`` (``w``, recorded in ``context``) is wrong, as :func:`csum.explain.explain_result` says;
    ``memo``: the decisions kept across a capture's fields (:class:`Memo`), each field's explanation then made from
    its own hits and values."""
    assert r.stored is not None and r.computed is not None
    hits = w.hits
    if memo is None:
        subject = _subject(w, r)
        found = choose(subject, hits, context)
        return unnamed(subject, hits, context) if found is None else found
    if hits:
        sig = (w.key, one_bit(w.res), tuple(map(_CAUSE_SURE, hits)))
        decision = memo.decisions.get(sig, _UNSEEN)  # one lookup: a decision may be None
        if decision is _UNSEEN:
            decision = memo.decisions[sig] = decide(_subject(w, r), hits, context)
        found = chosen(decision, hits)
        if found is not None:
            return found
    place = (w.key, w.res)
    said = memo.flows.get(place, _UNSEEN)
    if said is _UNSEEN:
        said = memo.flows[place] = by_flow(_subject(w, r), context)
    return nothing_named(r.stored, r.computed, hits) if said is None else said


_UNSEEN: Any = object()  # not in a Memo yet


def _subject(w: Wrong, r: Result) -> Subject:
    """Field ``r`` (``w``) as :func:`csum.explain.choose` sees it."""
    assert r.stored is not None and r.computed is not None
    return Subject(r.layer, r.stored, r.computed, w.res, w.key, True, _right, None)


def _right() -> bool:
    """The IP header checksum of a field this path explains: right (wrong() takes only packets with one wrong
    field)."""
    return True


def record(w: Wrong, context: Context) -> None:
    """Record field ``w`` in ``context`` as :meth:`~csum.explain.flow.Context.add` does for its packet."""
    context.record(w.data, w.at, w.key, w.res, w.hits)


_PLACE, _KEY_RES, _CAUSE_SURE = itemgetter(0, 1), itemgetter(4, 5), itemgetter(0, 3)


def record_all(ws: Sequence[Wrong], context: Context) -> None:
    """:func:`record` of every field of ``ws``, counted at once (the same counts: their order does not matter)."""
    context.pins.clear()
    context.keys.update(zip(map(_PLACE, ws), map(itemgetter(4), ws)))
    residuals = context.residuals
    for (key, res), n in Counter(map(_KEY_RES, ws)).items():
        counts = residuals.get(key)
        if counts is None:
            counts = residuals[key] = Counter()
        counts[res] = counts.get(res, 0) + n
    every = context.fits
    for w in ws:
        hits = w.hits
        if hits:
            fits = every.get(w.key)
            if fits is None:
                fits = every[w.key] = Counter()
            if len(hits) == 1:  # the commonest: one hypothesis fits
                cause = hits[0].cause
                fits[cause] = fits.get(cause, 0) + 1
                continue
            for cause in {g.cause for g in hits}:
                fits[cause] = fits.get(cause, 0) + 1
