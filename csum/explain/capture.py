"""``csum verify --explain``: why each wrong checksum of a capture is wrong, after the check.

The check itself is untouched (same verdicts, same exit code, same speed without ``--explain``). While a capture is
checked, a :class:`Collector` copies the packets holding a bad or transmit-offload field (at most :data:`LIMIT`
fields) and the packets near them (within :data:`WINDOW` packets of one, of the same captured length: the packet
before a NAT when the capture holds both sides): the capture is read once, standard input too. Once it is checked,
:func:`explain_capture` builds a :class:`csum.explain.Context` of those packets and explains each field (a packet
whose one wrong field is the TCP/UDP checksum of its one IP layer from the C walker's stack, :mod:`csum.explain.fast`;
the others through the Python walker). :class:`Explained` holds the answers per field, the count per cause, and the
groups per flow and cause the summary prints ("10.0.0.3:40001 -> 10.0.0.9:80 TCP: 12 tcp checksums,
l4-not-patched: ...").
"""

from __future__ import annotations

import gc
import json
from bisect import bisect_left
from collections import Counter
from itertools import islice, repeat
from operator import itemgetter, lt
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..capture import pcap
from ..capture.hosts import Flow, Hosts, Sender, endpoint, flow_of, senders, senders_of
from ..capture.report import Report, frame
from ..capture.rows import Rows, wrong
from ..capture.arrow import ParquetSink
from ..capture.rowtext import TextSink, _csv_field, only, text
from ..capture.source import open_source
from ..layers import Reason, Result
from . import UNNAMED, Context, Explanation, explain, explain_result, fast
from .flow import FlowKey

__all__ = ["LIMIT", "WINDOW", "Collector", "Explained", "Fields", "ExplainedParquet", "ExplainedText", "explain_capture"]

#: The most wrong fields explained per capture (the rest are counted, not explained).
LIMIT = 100_000
#: How many packets before and after a wrong one are looked at for the packet before a NAT.
WINDOW = 8
_OFFSETS = np.array([*range(-WINDOW, 0), *range(1, WINDOW + 1)])  # a packet's window, itself left out


#: What makes a fast path field's explanation: its Wrong, its Result, the verdicts by group and its group
#: (csum.explain.fast.made(w, r, verdicts[group])).
_Making = tuple[fast.Wrong, Result, dict[Any, fast.Verdict], Any]


class Fields(Mapping[tuple[int, int], Explanation]):
    """(packet index, field offset) -> :class:`~csum.explain.Explanation`. A field of the fast path is kept as what
    makes its explanation (:data:`_Making`) until it is read (a capture's wrong fields are explained in bulk; the
    text and JSON outputs read a few of them)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[int, int], Explanation | _Making] = {}

    def __getitem__(self, key: tuple[int, int]) -> Explanation:
        e = self._kept[key]
        if isinstance(e, tuple):
            w, r, verdicts, group = e
            e = self._kept[key] = fast.made(w, r, verdicts[group])
        return e

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def update(self, items: Iterator[tuple[tuple[int, int], Explanation | _Making]]) -> None:
        """Add ``items``: (key, an explanation or what makes it)."""
        self._kept.update(items)


@dataclass
class Explained:
    """The explanations of one capture's wrong fields: ``fields[(packet index, field offset)]``; ``causes``: fields
    per cause id; ``flows[(flow, layer, cause)]`` = [fields, the first one's packet index, its explanation];
    ``skipped``: wrong fields past :data:`LIMIT`, not explained."""

    fields: Fields = field(default_factory=Fields)
    causes: Counter[str] = field(default_factory=Counter)
    flows: dict[tuple[Flow | None, str, str], list] = field(default_factory=dict)
    skipped: int = 0

    def of(self, index: int, r: Result) -> Explanation | None:
        """The explanation of field ``r`` of packet ``index`` (None: not explained)."""
        return self.fields.get((index, -1 if r.field is None else r.field))

    def as_text(self, show: int) -> list[str]:
        """The summary: fields per cause, then the first ``show`` groups of a flow and a cause; a blank line first."""
        lines = ["", "why (--explain: a cause where one simulated mistake gives the stored bytes exactly)"]
        if not self.causes:
            return lines + ["  nothing to explain: no bad or offload checksum"]
        wide = max(len(c) for c in self.causes)
        lines += [f"  {cause:<{wide}} {n:>8} field{'s' if n != 1 else ''}" for cause, n in self.causes.most_common()]
        if self.skipped:
            lines.append(f"  {self.skipped} more wrong fields not explained (past the first {LIMIT})")
        groups = self.ranked()
        lines += ["", "by flow and cause" + (f" (first {show} of {len(groups)})" if len(groups) > show else "")]
        for (flow, layer, cause), (n, index, e) in groups[:show]:
            lines.append(f"  {_flow_text(flow)}: {n} {layer} checksum{'s' if n != 1 else ''}, {cause}: {e.detail} "
                         f"(frame {frame(index)})")
        return lines

    def ranked(self) -> list[tuple[tuple[Flow | None, str, str], list]]:
        """The groups of a flow, a layer and a cause, most fields first."""
        return sorted(self.flows.items(), key=lambda kv: (-kv[1][0], kv[1][1]))

    def as_json(self, show: int) -> dict[str, object]:
        """The summary as a JSON-ready dict (groups cut to the first ``show``)."""
        return {"causes": dict(self.causes.most_common()), "not_explained": self.skipped,
                "flows": [{"flow": None if flow is None else {"src": flow.src, "dst": flow.dst, "proto": flow.proto,
                                                              "sport": None if flow.sport < 0 else flow.sport,
                                                              "dport": None if flow.dport < 0 else flow.dport},
                           "layer": layer, "cause": cause, "fields": n, "first_frame": frame(index), "detail": e.detail}
                          for (flow, layer, cause), (n, index, e) in self.ranked()[:show]]}


def _flow_text(flow: Flow | None) -> str:
    if flow is None:
        return "(no IP header)"
    return f"{endpoint(flow.src, flow.sport)} -> {endpoint(flow.dst, flow.dport)} {flow.proto}"


def _wrong(report: Report, limit: int) -> tuple[dict[int, list[Result]], int]:
    """Packet index -> its bad and offload Results (the first ``limit`` fields; the packets in their order), and how
    many fields are left."""
    items = sorted(report.bad + report.offload, key=itemgetter(0))
    wanted: dict[int, list[Result]] = {index: [r] for index, r in items[:limit]}
    if len(wanted) < min(len(items), limit):  # a packet with more than one: its fields in their order
        wanted = {}
        for index, r in items[:limit]:
            got = wanted.get(index)
            if got is None:
                wanted[index] = [r]
            else:
                got.append(r)
    return wanted, report.total("bad") + report.total("offload") - min(len(items), limit)


class Collector:
    """``scan(collect=...)`` for ``csum verify --explain``: copies, as the capture is checked (read once: a file or
    standard input), the packets holding the first ``limit`` bad or offload fields, and the packets near each
    (within :data:`WINDOW` packets of it, of the same captured length: the packet before a NAT when the capture
    holds both sides; across a chunk's end too); :func:`explain_capture` explains them once the check is done."""

    def __init__(self, limit: int = LIMIT, source: Callable[[pcap.Capture], pcap.Capture] | None = None) -> None:
        self.limit = limit
        #: ``csum rewrite --fix --explain``: the chunk as read for each chunk checked (rewritten, packets of the same
        #: lengths): the packets copied are those, their rewritten bytes kept in :attr:`after`.
        self.source = source
        self.after: dict[int, bytes] = {}
        self.fields = 0
        self.last = -1  # the highest packet index collected
        #: index -> (bytes, link type, original length) of the packets with a wrong field.
        self.packets: dict[int, tuple[bytes, int, int]] = {}
        #: index -> (bytes, link type) of the packets near them.
        self.near: dict[int, tuple[bytes, int]] = {}
        self.seen: list[_Chunk] = []  # the chunks the last call had, the one before them kept: a window's start
        self.later: list[tuple[int, int]] = []  # (index, captured length) whose window runs past the chunks seen

    @classmethod
    def rewriting(cls, source: Callable[[pcap.Capture], pcap.Capture]) -> Collector:
        """``csum.rewrite.rewrite_capture(explain=Collector.rewriting)``: a collector of the chunks as read."""
        return cls(source=source)

    def finish(self, report: Report) -> Explained:
        """The explanation of what was collected, once the capture has been checked (``report``)."""
        return explain_capture(self, report, limit=self.limit)

    def __call__(self, chunks: Sequence[pcap.Capture], part: Report) -> None:
        known = {c.first: c for c in self.seen}
        for chunk in chunks:
            if chunk.first_index not in known:
                known[chunk.first_index] = _Chunk(chunk, None if self.source is None else self.source(chunk))
        self.seen = sorted(known.values(), key=lambda c: c.first)[-len(chunks) - 1:]
        later, self.later = self.later, []
        for index, caplen in later:
            self._near(index, caplen)
        items = part.bad + part.offload
        if self.fields >= self.limit:  # past it, only a datagram's field settled late: an earlier packet
            items = [item for item in items if item[0] < self.last]
        mine = Counter(map(itemgetter(0), items))  # fields per packet
        order = sorted(mine)
        for c in self.seen:
            ours = order[bisect_left(order, c.first):bisect_left(order, c.end)]
            if not ours:
                continue
            ks = np.asarray(ours, dtype=np.int64) - c.first
            links, origlens, caplens = c.links[ks].tolist(), c.origlens[ks].tolist(), c.caplens[ks].tolist()
            starts = c.capture.offsets[ks]
            view = memoryview(c.capture.data)
            copies = [view[a:b].tobytes() for a, b in zip(starts.tolist(), (starts + c.caplens[ks]).tolist())]
            self.packets.update(zip(ours, zip(copies, links, origlens)))  # Capture.packet's bytes
            self.fields += sum(map(mine.__getitem__, ours))
            self.last = max(self.last, ours[-1])
            if c.checked is not None:
                for index, k in zip(ours, ks.tolist()):
                    self.after[index] = bytes(c.checked.packet(k))
            if self.near:
                for index in ours:
                    self.near.pop(index, None)
            for k, j in self._inside(c, ks):  # in the order of the packets, then of their windows
                if j is None:
                    self._near(ours[k], caplens[k])
                elif j not in self.packets and j not in self.near:
                    self.near[j] = (bytes(c.capture.packet(j - c.first)), int(c.links[j - c.first]))
        _promote()  # the chunk's findings and copies outlive the check

    @staticmethod
    def _inside(c: _Chunk, ks: np.ndarray) -> list[tuple[int, int | None]]:
        """For packets ``ks`` (positions in chunk ``c``): (k, j) for each packet j within WINDOW of packet ``ks[k]``
        of its captured length, where its window lies inside the chunk, else (k, None): :meth:`_near` looks."""
        n = len(c.caplens)
        whole = (ks >= WINDOW) & (ks + WINDOW < n)
        inner = np.flatnonzero(whole)
        window = ks[inner][:, None] + _OFFSETS
        rows, cols = np.nonzero(c.caplens[window] == c.caplens[ks[inner]][:, None])
        found = list(zip(inner[rows].tolist(), (window[rows, cols] + c.first).tolist()))
        if whole.all():
            return found
        return sorted(found + [(k, None) for k in np.flatnonzero(~whole).tolist()], key=itemgetter(0))

    def _near(self, index: int, caplen: int) -> None:
        """The packets within WINDOW of ``index`` of captured length ``caplen``; those not read yet, at the next
        call."""
        lo, hi = max(0, index - WINDOW), index + WINDOW + 1
        for c in self.seen:
            if c.end <= lo or c.first >= hi:
                continue
            first, start = c.first, max(lo, c.first)
            for j, n in enumerate(c.caplens[start - first:min(hi, c.end) - first].tolist(), start):
                if n == caplen and j != index and j not in self.packets and j not in self.near:
                    self.near[j] = (bytes(c.capture.packet(j - first)), int(c.links[j - first]))
        if self.seen and hi > self.seen[-1].end:
            self.later.append((index, caplen))


def _promote() -> None:
    """Move the objects the cyclic garbage collector tracks into its oldest generation at once, none walked
    (:func:`gc.freeze`, then :func:`gc.unfreeze`; not where the process keeps objects frozen of its own). For what
    outlives a capture's check: its wrong fields' Results and copies as it is checked, their explanations after.
    Neither makes a reference cycle (a ``verify --explain`` run leaves the same cyclic garbage as a plain one: the
    command line's parser), so the young collections their count would start find nothing to free; each walks them
    all."""
    if not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()


class _Chunk:
    """A chunk and its columns (``read``: the chunk as read, where the one checked is its rewrite, ``checked``)."""

    def __init__(self, capture: pcap.Capture, read: pcap.Capture | None = None) -> None:
        self.capture = capture if read is None else read
        self.checked = None if read is None else capture
        self.first, self.end = capture.first_index, capture.first_index + len(capture)
        self.caplens, self.origlens, self.links = self.capture.caplens, self.capture.origlens, self.capture.linktypes


def explain_capture(collected: Collector, report: Report, *, limit: int = LIMIT,
                    hosts: Hosts | None = None) -> Explained:
    """Explain the wrong fields ``report`` found in a capture whose packets ``collected`` copied as it was checked;
    ``hosts``: its per-host counts, given the causes of each host's bad fields (:attr:`Hosts.causes`).

    The collector's last chunks are let go (a mapped file's views: it is unmapped then). The cyclic garbage
    collector is paused meanwhile (as it was before, after): the explanations make several objects per field and
    no reference cycle, and each collection it would start walks every object of the process. The objects made
    meanwhile then join the oldest generation (:func:`_promote`): else the next young collection walks them all."""
    collected.seen, collected.later = [], []  # the check is done: its chunks (views of a mapped file) are let go
    paused = gc.isenabled()
    gc.disable()
    try:
        return _explain_capture(collected, report, limit, hosts)
    finally:
        _promote()
        if paused:
            gc.enable()


def _explain_capture(collected: Collector, report: Report, limit: int, hosts: Hosts | None) -> Explained:
    wanted, skipped = _wrong(report, limit)
    packets, near = collected.packets, collected.near
    context = Context()
    for index, (data, link) in near.items():
        if index not in wanted:
            context.add(data, link, frame(index))
    by_c = _by_c(packets, wanted, collected.after)  # the packets the C walker's stack explains (csum.explain.fast)
    if len(by_c) < len(packets):  # else every packet copied is on the fast path
        for index, (data, link, _) in packets.items():
            if index in wanted and index not in by_c:
                context.add(data, link, frame(index))
    # a field the walked path explains (a right packet's segment pairs it) looks its flow key up by its place
    groups = fast.record_all(list(by_c.values()), context, places=bool(context.segments))
    out = Explained(skipped=skipped)
    flows: dict[FlowKey, Flow | None | Literal[False]] = {}  # the flow of each flow key the fast path gave
    memo = fast.Memo()  # fast.explain's decisions, found once (the context is complete)
    labels: dict[tuple[Flow | None, str, str], int] = {}
    columns = _fast_rows(wanted, by_c, groups, context, flows, memo, labels)
    walked = _walked_rows(collected, wanted, by_c, context, flows, len(columns[0]), labels)
    if walked:  # in packet order (stable: a packet's fields in their order)
        columns = tuple(map(list, zip(*sorted([*zip(*columns), *walked], key=_INDEX))))  # type: ignore[assignment]
    _count(out, hosts, columns, list(labels))
    return out


#: A wrong field as :func:`_count` counts it: its packet's index, its offset (-1: none), its group of a flow, a layer
#: and a cause (its number in ``labels``: the group names its cause), its Result, and its explanation (a fast path's
#: field: what makes it when read, :class:`Fields`).
_Row = tuple[int, int, int, Result, "Explanation | _Making"]
#: Rows as columns (a list per item of :data:`_Row`).
_Columns = tuple[list[int], list[int], list[int], list[Result], "list[Explanation | _Making]"]
_INDEX = itemgetter(0)
_AT = itemgetter(1)


def _label(labels: dict[tuple[Flow | None, str, str], int], flow: Flow | None, layer: str, cause: str) -> int:
    """The number of the group of ``flow``, ``layer`` and ``cause`` (:attr:`Explained.flows`) in ``labels``."""
    return labels.setdefault((flow, layer, cause), len(labels))


def _fast_rows(wanted: dict[int, list[Result]], by_c: dict[int, fast.Wrong], groups: fast.Groups, context: Context,
               flows: dict[FlowKey, Flow | None | Literal[False]], memo: fast.Memo,
               labels: dict[tuple[Flow | None, str, str], int]) -> _Columns:
    """The rows (as columns) of the fields of ``wanted`` on the fast path (``by_c``, in :class:`fast.Groups`
    ``groups``; not those a right packet's segment pairs: the walked path's), in packet order: judged once per group
    (fast.judge), in the order of their first field, as one by one; each field's explanation made when read."""
    quick, ws, of = list(by_c), list(by_c.values()), groups.of
    if context.segments:  # a right packet's segment to pair with (else fast.paired is False)
        keep = [k for k, w in enumerate(ws) if not fast.paired(w, context)]
        quick, ws, of = [quick[k] for k in keep], [ws[k] for k in keep], [of[k] for k in keep]
    if not all(map(lt, quick, islice(quick, 1, None))):  # a datagram's packet collected late: in packet order
        order = sorted(range(len(quick)), key=quick.__getitem__)
        quick, ws, of = [quick[k] for k in order], [ws[k] for k in order], [of[k] for k in order]
    rs = [wanted[index][0] for index in quick]
    firsts = dict(zip(reversed(of), range(len(of) - 1, -1, -1)))  # each group's first field here
    verdicts: dict[int, fast.Verdict] = {}
    numbers: dict[int, int] = {}
    for g in dict.fromkeys(of):  # in the order of their first field, as one by one
        w, r = ws[firsts[g]], rs[firsts[g]]
        verdicts[g] = fast.judge(w, r, context, memo)
        flow = flows.get(w.key, False)
        if flow is False:
            flow = flows[w.key] = _flow_of_key(w.key, r)
        numbers[g] = _label(labels, flow, r.layer, fast.cause_of(verdicts[g]))
    return (quick, list(map(_AT, ws)), list(map(numbers.__getitem__, of)), rs, list(zip(ws, rs, repeat(verdicts), of)))


def _walked_rows(collected: Collector, wanted: dict[int, list[Result]], by_c: dict[int, fast.Wrong],
                 context: Context, flows: dict[FlowKey, Flow | None | Literal[False]], fast_rows: int,
                 labels: dict[tuple[Flow | None, str, str], int]) -> list[_Row]:
    """The rows of the other fields of ``wanted`` (``fast_rows``: how many :func:`_fast_rows` gave), in packet
    order: explained from the Python walker's stack."""
    packets = collected.packets
    pairs = bool(context.segments)
    out: list[_Row] = []
    if fast_rows == sum(map(len, wanted.values())):  # every field on the fast path
        return out
    for index, results in wanted.items():  # in packet order (_wrong's)
        w = by_c.get(index)
        if w is not None and not (pairs and fast.paired(w, context)):
            continue  # _fast_rows'
        if index not in packets:
            continue
        data, link, origlen = packets[index]
        senders_: list[Sender] | None = None
        read = _as_read(data, link, context) if index in collected.after else None
        for r in results:
            if read is None:
                e = explain_result(data, r, link=link, context=context)
            else:
                e = _before_rewrite(read, r, collected.after[index], data, link, context)
            flow = flows.get(w.key, False) if w is not None else False
            if flow is False:
                flow = _keyed_flow(context, data, r, w is not None)
                if w is not None:
                    flows[w.key] = flow
            if flow is False:
                if senders_ is None:
                    walked = context.walked.get(data)
                    senders_ = senders(walked[0], data) if walked is not None else senders_of(data, link, origlen)
                flow = flow_of(r, senders_)
            out.append((index, -1 if r.field is None else r.field, _label(labels, flow, r.layer, e.cause), r, e))
    return out


def _count(out: Explained, hosts: Hosts | None, columns: _Columns, labels: list[tuple[Flow | None, str, str]]
           ) -> None:
    """The rows (``columns``, in packet order; ``labels``: their groups of a flow, a layer and a cause) in ``out``:
    each field's explanation, the fields per cause, per group (the first one's index and explanation), and, for a
    bad field whose explanation names a cause, per source host of its flow (:attr:`Hosts.causes`)."""
    indices, ats, numbers, results, es = columns
    out.fields.update(zip(zip(indices, ats), es))
    first = dict(zip(reversed(numbers), range(len(numbers) - 1, -1, -1)))
    causes = out.causes
    for g, n in Counter(numbers).items():  # in the order of each group's first row: the causes' too
        k = first[g]
        causes[labels[g][2]] += n
        out.flows[labels[g]] = [n, indices[k], out.fields[(indices[k], ats[k])] if isinstance(es[k], tuple) else es[k]]
    if hosts is not None:  # every row's Result is bad or offload (_wrong's): bad where its reason is not offload
        offload = Reason.OFFLOAD
        for g, n in Counter(g for g, r in zip(numbers, results) if r.reason is not offload).items():
            flow, _layer, cause = labels[g]
            if flow is not None and cause not in UNNAMED:
                counts = hosts.causes.setdefault(flow.src, {})
                counts[cause] = counts.get(cause, 0) + n


def _by_c(packets: dict[int, tuple[bytes, int, int]], wanted: dict[int, list[Result]],
          after: dict[int, bytes]) -> dict[int, fast.Wrong]:
    """The packets of ``wanted`` whose one wrong field :mod:`csum.explain.fast` explains, by index, asked of the C
    at once (not those rewritten: ``after``)."""
    asked = [(index, data, link, results[0].field) for index, (data, link, _) in packets.items()
             if (results := wanted.get(index)) is not None and len(results) == 1 and index not in after
             and results[0].field is not None and results[0].stored is not None and results[0].computed is not None]
    if not asked:
        return {}
    indices, datas, links, ats = zip(*asked)
    return {index: w for index, w in zip(indices, fast.wrong_all(datas, links, ats)) if w is not None}


def _keyed_flow(context: Context, data: bytes, r: Result, c_walked: bool) -> Flow | None | Literal[False]:
    """The flow of wrong field ``r`` from the flow key :class:`Context` found for it (the IP header carrying it, as
    :func:`csum.capture.hosts.flow_of` finds it among the packet's headers); False where there is none, or where the
    packet has an IPv4 header the walker refused (flow_of's rows hold it: the caller asks flow_of; ``c_walked``: the
    C walker walked the whole packet, one IP layer, none refused)."""
    key = context.keys.get((data, -1 if r.field is None else r.field))
    if key is None or (not c_walked and context.refused(data)):
        return False
    return _flow_of_key(key, r)


def _flow_of_key(key: FlowKey, r: Result) -> Flow | None:
    """The flow of wrong field ``r`` whose IP header has flow key ``key``."""
    version, src, dst, proto, sport, dport, _layer, depth = key
    return flow_of(r, [Sender(depth, 0, version, src, dst, proto, sport, dport)])


def _as_read(data: bytes, link: int, context: Context) -> dict[int, tuple[Result, Explanation]]:
    """The wrong fields of a packet as read (before a rewrite), by field offset, explained."""
    return {-1 if r.field is None else r.field: (r, e) for r, e in explain(data, link=link, context=context)}


def _before_rewrite(read: dict[int, tuple[Result, Explanation]], r: Result, after: bytes, data: bytes, link: int,
                    context: Context) -> Explanation:
    """``csum rewrite --fix --explain``: why field ``r`` of a rewritten packet (``after``) was wrong: as the packet
    was read (``data``), where it was wrong then (the rewrite kept its residual); else the rewrite made it wrong, and
    the packet read is the one before the change."""
    found = read.get(-1 if r.field is None else r.field)
    if found is not None:
        return found[1]
    e = explain_result(after, r, link=link, before=data)
    return Explanation(e.cause, lambda: "right as read, wrong after the rewrite: " + e.detail)


def _causes(rows: Rows, explained: Explained | None) -> tuple[list[str | None], list[str | None]]:
    """Each row's cause and detail (None for a right field, or one not explained)."""
    t = rows.table
    causes: list[str | None] = [None] * len(t)
    details: list[str | None] = [None] * len(t)
    if explained is None:
        return causes, details
    for k in np.flatnonzero(wrong(t)).tolist():
        e = explained.fields.get((int(t["frame"][k]) - 1, int(t["field"][k])))
        if e is not None:
            causes[k], details[k] = e.cause, e.detail
    return causes, details


class ExplainedText(TextSink):
    """``verify --format jsonl|csv --explain``: the rows with two more columns, ``cause`` and ``detail`` (null /
    empty for right fields and fields not explained), written through ``write``; ``current()`` gives the
    explanations of the file being read."""

    def __init__(self, write: Callable[[bytes], object], as_csv: bool, current: Callable[[], Explained | None],
                 **choice: Any) -> None:
        super().__init__(write, as_csv, extra=("cause", "detail"), **choice)
        self.current = current

    def __call__(self, rows: Rows) -> None:
        rows = only(rows, self.keep)
        if not len(rows):
            return
        lines = self.lines(rows).split(b"\n")
        causes, details = _causes(rows, self.current())
        out = []
        for line, cause, detail in zip(lines, causes, details):
            if self.as_csv:
                extra = "" if cause is None else _csv_field(cause) + "," + _csv_field(detail or "")
                out.append(line + b"," + (extra.encode() if extra else b","))
            else:
                out.append(line[:-1] + f', "cause": {json.dumps(cause)}, "detail": {json.dumps(detail)}}}'.encode())
        self.write(b"\n".join(out) + b"\n")


class ExplainedParquet(ParquetSink):
    """``verify --format parquet --explain``: :class:`csum.capture.arrow.ParquetSink`'s rows with ``cause`` and
    ``detail`` string columns."""

    def __init__(self, out: Any, current: Callable[[], Explained | None], **choice: Any) -> None:
        super().__init__(out, extra=("cause", "detail"), **choice)
        self.current = current

    def __call__(self, rows: Rows) -> None:
        rows = only(rows, self.keep)
        if len(rows):
            self.write(rows, *_causes(rows, self.current()))
