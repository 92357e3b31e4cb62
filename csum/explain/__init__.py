"""Why a checksum is wrong: single-mistake hypotheses, each simulated, named only when it gives the stored bytes.

:func:`explain` takes a packet (and, where known, the packet before a program or a rewrite changed it, and a
:class:`Context` of the capture around it); for every wrong checksum field it computes what each known mistake
(:data:`csum.explain.causes.CAUSES`) would have stored there, and names the one whose value is exactly the stored
one. Each value tried is fixed by the packet (the checksum over a length the packet holds, the TTL one higher, the
before-packet's field) or pinned by its flow (every wrong field of the flow off by the same amount); a mistake with
a free value is never tried alone, since with 16-bit checksums some value would always fit. Where no mistake gives
the stored value, or mistakes with different ids do, the answer is ``unexplained``; where the flow's wrong fields
are each off by a different amount, ``corruption``; where the packet does not parse, ``cannot-judge``. An
explanation never changes a verdict: it is computed from the verdict, for wrong (bad or transmit offload) fields.

``csum verify --explain``, the HTML report and the row outputs call this module (docs/explain.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..core.inputs import as_view
from ..errors import CsumValueError
from ..layers import Reason, Result, Stack, Status, walk
from ..layers import table as T
from ..layers.check import judge
from ..layers.walk import Field, IPLayer, Link
from . import header, hypotheses, sums
from .causes import CANNOT_JUDGE, CAUSES, CORRUPTION, NOT_CAUSES, UNEXPLAINED, Cause, what
from .flow import Context, FlowKey, carrier, residual

__all__ = ["CANNOT_JUDGE", "CAUSES", "CORRUPTION", "NOT_CAUSES", "UNEXPLAINED", "UNNAMED", "Cause", "Context",
           "Explanation", "explain", "explain_result", "what"]

#: How many wrong fields of a flow must share a one-bit residual, or fit one weak cause, for the flow to pin it (two
#: bits flipped at one place of two packets of a flow happen; three, hardly).
PIN = 3
#: The statuses explained: what csum fix corrects.
WRONG = (Status.BAD, Status.OFFLOAD)


_set = object.__setattr__
#: The ids an explanation gives where it names no cause (:attr:`Explanation.named`).
UNNAMED = (UNEXPLAINED, CORRUPTION, CANNOT_JUDGE)


class Explanation:
    """Why one field is wrong: ``cause`` (a cause id of :data:`CAUSES`, or unexplained / corruption /
    cannot-judge) and ``detail``, one line naming the values (the field, the old address, the length ...).

    ``detail`` may be given as a callable that makes the text: it is made when first read (a capture's wrong fields
    are explained in bulk and few of their texts printed), then kept."""

    __slots__ = ("cause", "_detail")

    cause: str
    _detail: str | Callable[[], str]

    def __init__(self, cause: str, detail: str | Callable[[], str]) -> None:
        _set(self, "cause", cause)
        _set(self, "_detail", detail)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"an Explanation is immutable: cannot set {name}")

    @property
    def detail(self) -> str:
        """The one-line text naming the values."""
        d = self._detail
        if not isinstance(d, str):
            d = d()
            _set(self, "_detail", d)
        return d

    @property
    def named(self) -> bool:
        """Whether a cause was found (not unexplained, corruption or cannot-judge)."""
        return self.cause not in UNNAMED

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Explanation):
            return NotImplemented
        return self.cause == other.cause and self.detail == other.detail

    def __hash__(self) -> int:
        return hash((self.cause, self.detail))

    def __repr__(self) -> str:
        return f"Explanation(cause={self.cause!r}, detail={self.detail!r})"


def _walk(packet: object, link: Link, context: Context | None = None) -> tuple[bytes, Stack]:
    buf = packet if type(packet) is bytes else bytes(as_view(packet, "packet"))  # bytes: the key Context.add made
    if context is not None and buf in context.walked:
        return buf, context.walked[buf][0]
    return buf, walk(memoryview(buf), link)


def explain(packet: object, *, link: Link = "ethernet", before: object = None,
            context: Context | None = None) -> list[tuple[Result, Explanation]]:
    """Every wrong checksum field of ``packet`` (a bytes-like frame of link type ``link``) with its explanation.

    ``before``: the same packet before a program or rewrite changed it (same link type); ``context``: the capture
    around it (:class:`Context`, the packet itself added too). Right fields are left out; a packet that does not
    parse gives one (None-field) result explained ``cannot-judge``.
    """
    buf, stack = _walk(packet, link, context)
    if stack.malformed is not None and not stack.fields:
        code, message = stack.malformed
        r = Result("packet", 0, None, None, None, Reason.BAD_LENGTH)
        return [(r, Explanation(CANNOT_JUDGE, f"the packet does not parse: {message} ({code})"))]
    view = memoryview(buf)
    out = []
    for f in stack.fields:
        r = judge(view, f)
        if r.status in WRONG:
            out.append((r, _explain(buf, stack, f, r, link, before, context)))
    return out


def explain_result(packet: object, result: Result, *, link: Link = "ethernet", before: object = None,
                   context: Context | None = None) -> Explanation:
    """The explanation of one wrong field ``result`` of ``packet`` (a :class:`Result` csum gave for it, as
    ``csum verify`` reports it: a reassembled datagram's field on its first fragment included)."""
    if not isinstance(result, Result):
        raise CsumValueError("result must be a csum.layers.Result")
    buf, stack = _walk(packet, link, context)
    f = next((f for f in stack.fields if f.at is not None and f.at == result.field), None)
    if f is None:
        why = stack.malformed[1] if stack.malformed else f"no checksum field at offset {result.field}"
        return Explanation(CANNOT_JUDGE, f"the packet does not parse that far: {why}")
    return _explain(buf, stack, f, result, link, before, context)


class Subject(NamedTuple):
    """What the choice among the fitting hypotheses needs of one wrong field, however its packet was walked (the
    Python walker here, the C walker's stack in :mod:`.fast`): its layer name, stored and right values and their
    residual, its flow (None: no context, or no IP header carries it), whether it covers a pseudo-header, and two
    questions asked only when the flow's residuals come into it: whether its IP header checksum is right, and, for an
    IPv4 header's own checksum, that header's (TTL, TOS) (None: not one)."""

    layer: str
    stored: int
    computed: int
    res: int
    key: FlowKey | None
    pseudo: bool
    header_ok: Callable[[], bool]
    ipv4: Callable[[], tuple[int, int]] | None


def _explain(buf: bytes, stack: Stack, f: Field, r: Result, link: Link, before: object,
             context: Context | None) -> Explanation:
    stored, computed = r.stored, r.computed
    if stored is None or computed is None:
        return Explanation(CANNOT_JUDGE, f"the {r.layer} checksum is not verifiable here ({r.reason})")
    ip = carrier(stack, f)
    found = _offload(buf, f, r, ip)
    if found is not None:
        return found
    cached = None if context is None or f.at is None else context.walked.get(buf, (None, {}))[1].get(f.at)
    hits = (hypotheses.fitting(buf, stack, f, r, ip) if cached is None else cached) \
        + hypotheses.fitting_extra(buf, stack, f, r, ip, _before(before, link), context)
    subject = _subject(buf, stack, f, stored, computed, ip, context)
    found = choose(subject, hits, context)
    if found is None and before is not None and link == "ethernet":
        found = _program(before, buf, f)
    return unnamed(subject, hits, context) if found is None else found


def _subject(buf: bytes, stack: Stack, f: Field, stored: int, computed: int, ip: IPLayer | None,
             context: Context | None) -> Subject:
    key = None if context is None or ip is None else context.flow(buf, ip, f)
    ipv4 = None
    if ip is not None and f.entry.name == "ipv4" and ip.ip_csum == f.at:
        def ipv4() -> tuple[int, int]:
            return buf[ip.l3 + T.IPV4_TTL], buf[ip.l3 + T.IPV4_TOS]
    return Subject(f.entry.name, stored, computed, residual(stored, computed), key, f.pseudo is not None,
                   lambda: ip is not None and hypotheses.header_ok(buf, stack, ip), ipv4)


#: :func:`decide`'s answer: (k, n, text): ``hits[k]`` names the cause (``n``: how many wrong fields of the flow it
#: fits, where its residual is weak and the flow pins it, else 0), or (-1, 0, text): several causes (``text`` the
#: detail); None: none.
Decision = tuple[int, int, str] | None


def choose(subject: Subject, hits: list[sums.Guess], context: Context | None) -> Explanation | None:
    """The explanation where the fitting hypotheses ``hits`` name one cause (weak ones only where the flow pins
    them), or several (unexplained); None where they name none."""
    return chosen(decide(subject, hits, context), hits)


def decide(subject: Subject, hits: list[sums.Guess], context: Context | None) -> Decision:
    """:func:`choose`'s decision, before any text is made: it depends on the hits' causes and sureness (not their
    values), on the flow's pins, on whether the residual is one bit's, and on what the flow says of the residual
    itself: for an IPv4 header's checksum, and where another wrong field of the flow has the same residual (a
    rewrite the flow names contests a cause that fits this field alone)."""
    if not hits:
        return None
    pinned = _pinned(subject, context)
    weak = hypotheses.one_bit(subject.res)
    strong = [k for k, g in enumerate(hits) if g.sure or not weak or g.cause in pinned]
    causes = _causes(subject, context, [hits[k] for k in strong], pinned, weak)
    if len(causes) == 1:
        k = next(k for k in strong if hits[k].cause == causes[0])
        n = pinned.get(causes[0], 0)
        rewrite = by_flow(subject, context) if not n and context is not None and shared(context, subject.key,
                                                                                          subject.res) else None
        if rewrite is not None and rewrite.named and rewrite.cause != causes[0]:
            causes.append(rewrite.cause)
        else:
            return k, n if weak else 0, ""
    if len(causes) > 1:
        return -1, 0, "several simulated mistakes give these bytes: " + ", ".join(causes)
    return None


def chosen(decision: Decision, hits: list[sums.Guess]) -> Explanation | None:
    """The explanation :func:`decide` chose among ``hits`` (None: none)."""
    if decision is None:
        return None
    k, n, text = decision
    if k < 0:
        return Explanation(UNEXPLAINED, text)
    g = hits[k]
    return fitted(g.cause, g.text, n)


def fitted(cause: str, text: Callable[[], str], n: int) -> Explanation:
    """The explanation naming ``cause``, its hypothesis's text made by ``text()``; ``n``: how many wrong fields of
    the flow it fits, where the flow pins it (:data:`Decision`), else 0."""
    if n:
        return Explanation(cause, lambda: f"{text()} (it fits {n} wrong fields of this flow)")
    return Explanation(cause, text)


def _offload(buf: bytes, f: Field, r: Result, ip: IPLayer | None) -> Explanation | None:
    """``offload``, where a transmit-offload field holds the pseudo-header sum alone."""
    if f.na is not None or r.status is not Status.OFFLOAD or r.stored is None:
        return None
    m = sums.message(buf, f, ip)
    detail = None if m is None else sums.offload(f, m, r.stored)
    return None if detail is None else Explanation("offload", detail)


def _causes(subject: Subject, context: Context | None, strong: list[sums.Guess], pinned: dict[str, int],
            weak: bool) -> list[str]:
    """The cause ids of the ``strong`` hypotheses, told apart by the flow where it can (``pinned``: per cause, the
    wrong fields of the flow it fits; ``weak``: the residual is one bit's)."""
    causes = list(dict.fromkeys(g.cause for g in strong))
    if len(causes) > 1:  # the flow may tell them apart: the one that fits the most wrong fields of it
        flow = sorted((pinned[c] for c in causes if c in pinned), reverse=True)
        if flow and (len(flow) == 1 or flow[0] > flow[1]):
            causes = [c for c in causes if pinned.get(c) == flow[0]]
    if len(causes) == 1 and weak and causes[0] in pinned and subject.layer == "ipv4" and context is not None \
            and subject.key is not None:
        # a header field changed by a small amount on every packet fits as well as a few carries lost on each
        other = by_flow(subject, context)
        if other is not None and other.named and other.cause != causes[0]:
            causes.append(other.cause)
    return causes


def shared(context: Context, key: FlowKey | None, res: int) -> bool:
    """Whether another wrong field of flow ``key`` has the residual ``res`` (the flow may then name a rewrite)."""
    counts = None if key is None else context.residuals.get(key)
    return counts is not None and counts.get(res, 0) >= 2


def unnamed(subject: Subject, hits: list[sums.Guess], context: Context | None) -> Explanation:
    """No hypothesis named alone (nor a program mistake): the flow, else unexplained."""
    if context is not None and subject.key is not None:
        found = by_flow(subject, context)
        if found is not None:
            return found
    return nothing_named(subject.stored, subject.computed, [g.cause for g in hits])


def nothing_named(stored: int, computed: int, causes: Sequence[str]) -> Explanation:
    """Unexplained: no hypothesis (``causes``: the cause ids of those that store ``stored``) names ``stored`` alone
    (``computed``: the right checksum), nor does the flow say."""
    if causes:
        return Explanation(UNEXPLAINED, lambda: f"{', '.join(dict.fromkeys(causes))} would store {stored:#06x}, but so "
                           f"does one bit flipped (the checksum is {computed:#06x}): not named from one packet, nor "
                           "fitting another of its flow")
    return Explanation(UNEXPLAINED, lambda: f"no simulated mistake gives {stored:#06x} (the checksum is "
                       f"{computed:#06x})")


def _before(before: object, link: Link) -> tuple[bytes, Stack] | None:
    if before is None:
        return None
    try:
        return _walk(before, link)
    except CsumValueError:
        return None


def _pinned(subject: Subject, context: Context | None) -> dict[str, int]:
    """Per cause id that fits at least :data:`PIN` wrong fields of this field's flow, and at least half of them (a
    mistake fits every packet it made wrong; one bit flipped fits a weak cause now and then), how many."""
    key = subject.key
    if context is None or key is None:
        return {}
    pins = context.pins.get(key)
    if pins is None:
        wrong = sum(context.residuals.get(key, {}).values())
        pins = context.pins[key] = {cause: n for cause, n in context.fits.get(key, {}).items()
                                    if n >= PIN and 2 * n >= wrong}
    return pins


def _program(before: object, buf: bytes, f: Field) -> Explanation | None:
    """The program mistakes of :mod:`csum.rewrite.mistakes` (bytes only: an XDP-style hand-written update or
    the helpers), when one alone accounts for this field."""
    from ..rewrite.mistakes import reproduce

    try:
        finding = reproduce(bytes(as_view(before, "before")), buf, kind="xdp")
    except CsumValueError:
        return None
    named = finding.fields.get(f.at or -1, ())
    if len(named) == 1:
        m = named[0]
        return Explanation(m.value, f"simulated on the packet before the change: {m.what}")
    if len(named) > 1:
        return Explanation(UNEXPLAINED, "several simulated mistakes give these bytes: "
                           + ", ".join(m.value for m in named))
    return None


def _signed(n: int) -> int:
    return n if n <= 0x7FFF else n - 0xFFFF


def by_flow(subject: Subject, context: Context) -> Explanation | None:
    """A residual the flow's other wrong fields share (a rewrite), or that none does (corruption)."""
    assert subject.key is not None
    counts = context.residuals.get(subject.key)
    if not counts:
        return None
    total = sum(counts.values())
    res = subject.res
    same = counts.get(res, 0)
    layer = subject.layer.upper() if subject.layer in ("tcp", "udp") else subject.layer
    if same >= (PIN if hypotheses.one_bit(res) else 2) and 2 * same >= total:
        shared = f"every one of {same} wrong {layer} checksums of this flow" \
            + (f" (of {total})" if total > same else "") + f" is off by the same amount ({res:#06x})"
        if subject.pseudo and subject.header_ok():
            return Explanation("l4-not-patched", f"{shared}: a stale pseudo-header (an address rewritten, the {layer} "
                               "checksum not updated); a rewrite, not corruption")
        if subject.ipv4 is not None:
            ttl, tos = subject.ipv4()
            if res & 0xFF == 0 and 1 <= res >> 8 <= 0xFF - ttl:
                return Explanation("ttl-not-updated", f"{shared}: the TTL decremented by {res >> 8} without an "
                                   "update")
            old = tos + _signed(res)
            if 0 <= old <= 0xFF and old != tos:
                return Explanation("tos-not-updated", f"{shared}: the TOS was {header.show('tos', bytes([old]))}, "
                                   f"now {header.show('tos', bytes([tos]))}, without an update")
            return Explanation("ip-field-not-updated", f"{shared}: a header field rewritten without an update")
        return Explanation(UNEXPLAINED, f"{shared}: a consistent rewrite, not corruption")
    if same == 1 and total >= 2:
        return Explanation(CORRUPTION, f"{total} wrong {layer} checksums in this flow, off by {len(counts)} different "
                           "amounts: scattered, not a rewrite")
    return None
