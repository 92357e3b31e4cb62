"""``csum verify --explain``: why each wrong checksum of a capture is wrong, after the check.

The check itself is untouched (same verdicts, same exit code, same speed without ``--explain``). Once a capture is
checked, :func:`explain_capture` reads it again and, for the packets holding a bad or transmit-offload field (at
most :data:`LIMIT` fields), builds a :class:`csum.explain.Context` of those packets and of the packets near them
(within :data:`WINDOW` packets of one, of the same captured length: the packet before a NAT when the capture holds
both sides), then explains each field. :class:`Explained` holds the answers per field, the count per cause, and the
groups per flow and cause the summary prints ("10.0.0.3:40001 -> 10.0.0.9:80 TCP: 12 tcp checksums,
l4-not-patched: ...").
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..capture import pcap
from ..capture.hosts import Flow, Hosts, endpoint, flow_of, senders, senders_of
from ..capture.report import Report, frame
from ..capture.rows import Rows, wrong
from ..capture.arrow import ParquetSink
from ..capture.rowtext import TextSink, _csv_field, only
from ..capture.source import open_source
from ..layers import Result, Status
from . import Context, Explanation, explain_result

__all__ = ["LIMIT", "WINDOW", "Explained", "ExplainedParquet", "ExplainedText", "explain_capture"]

#: The most wrong fields explained per capture (the rest are counted, not explained).
LIMIT = 100_000
#: How many packets before and after a wrong one are looked at for the packet before a NAT.
WINDOW = 8


@dataclass
class Explained:
    """The explanations of one capture's wrong fields: ``fields[(packet index, field offset)]``; ``causes``: fields
    per cause id; ``flows[(flow, layer, cause)]`` = [fields, the first one's packet index, its detail];
    ``skipped``: wrong fields past :data:`LIMIT`, not explained."""

    fields: dict[tuple[int, int], Explanation] = field(default_factory=dict)
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
        for (flow, layer, cause), (n, index, detail) in groups[:show]:
            lines.append(f"  {_flow_text(flow)}: {n} {layer} checksum{'s' if n != 1 else ''}, {cause}: {detail} "
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
                           "layer": layer, "cause": cause, "fields": n, "first_frame": frame(index), "detail": detail}
                          for (flow, layer, cause), (n, index, detail) in self.ranked()[:show]]}


def _flow_text(flow: Flow | None) -> str:
    if flow is None:
        return "(no IP header)"
    return f"{endpoint(flow.src, flow.sport)} -> {endpoint(flow.dst, flow.dport)} {flow.proto}"


def _wrong(report: Report, limit: int) -> tuple[dict[int, list[Result]], int]:
    """Packet index -> its bad and offload Results (the first ``limit`` fields), and how many fields are left."""
    items = sorted(report.bad + report.offload, key=lambda item: item[0])
    wanted: dict[int, list[Result]] = {}
    for index, r in items[:limit]:
        wanted.setdefault(index, []).append(r)
    return wanted, report.total("bad") + report.total("offload") - min(len(items), limit)


def explain_capture(name: str, report: Report, *, limit: int = LIMIT, hosts: Hosts | None = None,
                    chunk_bytes: int = pcap.CHUNK_BYTES) -> Explained:
    """Explain the wrong fields ``report`` found in capture ``name`` (read again: a path, not standard input);
    ``hosts``: its per-host counts, given the causes of each host's bad fields (:attr:`Hosts.causes`)."""
    wanted, skipped = _wrong(report, limit)
    packets: dict[int, tuple[bytes, int, int]] = {}  # index -> (bytes, link type, original length)
    near: dict[int, tuple[bytes, int]] = {}
    order = sorted(wanted)
    with open_source(name) as source:
        for chunk in pcap.Reader(source.stream, chunk_bytes):
            first, n = chunk.first_index, len(chunk)
            mine = order[bisect.bisect_left(order, first):bisect.bisect_left(order, first + n)]
            if not mine:
                continue
            caplens, origlens, links = chunk.caplens, chunk.origlens, chunk.linktypes
            for index in mine:
                k = index - first
                caplen = caplens[k]
                packets[index] = (bytes(chunk.packet(k)), int(links[k]), int(origlens[k]))
                for j in range(max(0, k - WINDOW), min(n, k + WINDOW + 1)):
                    if j != k and caplens[j] == caplen and first + j not in wanted:
                        near[first + j] = (bytes(chunk.packet(j)), int(links[j]))
    context = Context()
    for index, (data, link) in near.items():
        context.add(data, link, frame(index))
    for index, (data, link, _) in packets.items():
        context.add(data, link, frame(index))
    out = Explained(skipped=skipped)
    for index, results in sorted(wanted.items()):
        if index not in packets:
            continue
        data, link, origlen = packets[index]
        rows = senders(context.walked[data][0], data) if data in context.walked else senders_of(data, link, origlen)
        for r in results:
            e = explain_result(data, r, link=link, context=context)
            out.fields[(index, -1 if r.field is None else r.field)] = e
            out.causes[e.cause] += 1
            flow = flow_of(r, rows)
            group = out.flows.setdefault((flow, r.layer, e.cause), [0, index, e.detail])
            group[0] += 1
            if hosts is not None and r.status is Status.BAD and flow is not None and e.named:
                hosts.causes.setdefault(flow.src, {}).setdefault(e.cause, 0)
                hosts.causes[flow.src][e.cause] += 1
    return out



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
