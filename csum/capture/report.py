"""What checking a capture found (:class:`Report`), and how ``csum verify`` and ``csum fix`` print it.

Every output format numbers packets and places fields the same way, as tshark shows them: ``frame`` counts
from 1 (a :class:`Report` keeps 0-based packet indexes; the outputs add 1), and ``offset`` is where the
checksum field itself starts in the frame (``Result.field``; not the header's start).

The checking itself is :mod:`csum.capture.checker` (the walk, fragments across chunks) behind the fast paths of
:mod:`csum.capture.fastpath`. Counts are kept per protocol and depth: ``"tcp"`` is TCP over the outer IP layer,
``"tcp@1"`` TCP one tunnel (or ICMP quote) deeper.
"""

from __future__ import annotations

import copy
import functools
import heapq
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..layers import Result, Status
from .hosts import Hosts, Sender
from .pcap import NO_TIME, Capture

#: The counters of every ``Report.counts`` entry, in the order the outputs show them.
STATUSES = tuple(s.value for s in Status)
#: Protocols always present in ``Report.counts`` (others appear once seen).
LAYERS = ("ipv4", "tcp", "udp", "icmp", "icmpv6")
#: Each status's counter name (an Enum's ``value`` costs a descriptor call per lookup on CPython 3.11), and the two
#: statuses a report lists, bound once.
_VALUE = {s: s.value for s in Status}
_BAD, _OFFLOAD = Status.BAD, Status.OFFLOAD


def zero_counts() -> dict[str, int]:
    return dict.fromkeys(STATUSES, 0)


def count_key(r: Result) -> str:
    """The ``Report.counts`` key of a result: the protocol, with ``@depth`` below the outer IP layer."""
    return depth_key(r.layer, r.depth)


def depth_key(layer: str, depth: int) -> str:
    """The ``Report.counts`` key of protocol ``layer`` at ``depth``."""
    return layer if not depth else f"{layer}@{depth}"


#: The per-item lists of a :class:`Report` (bounded by ``Report.keep``), each in packet order.
KEPT = ("bad", "offload", "malformed", "cut")


_INDEX = itemgetter(0)  # the packet number of a bad, offload or malformed item: (index, Result or reason)


def _number(item: int | tuple[int, object]) -> int:
    """The packet number of an item of a KEPT list."""
    return item if isinstance(item, int) else item[0]


@dataclass
class Report:
    """What checking a capture (or a chunk of one) found; packet numbers are global (``first_index`` + i).

    ``counts[key]`` = {"ok", "bad", "offload", "none", "n/a"} with ``key`` from :func:`count_key`;
    ``bad``: (packet index, Result) of every wrong checksum, in packet order; ``offload``: the same
    for fields holding transmit offload's pseudo-header sum (not in ``bad``); ``malformed``:
    (index, reason) of packets whose outer headers are inconsistent; ``cut``: packets captured
    only in part (their captured headers are still checked); ``not_ip``: packets carrying neither
    IPv4 nor IPv6; ``unsupported``: link type -> packets whose link type csum does not know (they might hold a
    checksum); ``no_checksum``: link type -> packets that hold no Internet checksum csum could reach (USB,
    Bluetooth, Netlink, 802.15.4 without 6LoWPAN ...); ``fast``: packets the C walker judged
    with the rest of their chunk (csum.capture.fastpath); ``patches``: (file offset, new field bytes) that correct every bad and
    offload checksum (and the outer checksums covering a corrected inner one); ``hosts``: who sent the bad and
    offload checksums, and when (:class:`csum.capture.hosts.Hosts`; None when not collected).

    ``keep``: when set, :meth:`update` keeps at most that many items in each of ``bad``,
    ``offload``, ``malformed`` and ``cut`` and counts the rest in ``dropped`` (the CLI keeps what
    it prints, so a capture with millions of bad checksums checks in bounded memory);
    :meth:`total` is the whole number either way.
    """

    packets: int
    counts: dict[str, dict[str, int]] = field(default_factory=lambda: {k: zero_counts() for k in LAYERS})
    bad: list[tuple[int, Result]] = field(default_factory=list)
    offload: list[tuple[int, Result]] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)
    not_ip: int = 0
    unsupported: dict[int, int] = field(default_factory=dict)
    fast: int = 0
    patches: list[tuple[int, bytes]] = field(default_factory=list)
    keep: int | None = None
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KEPT, 0))
    no_checksum: dict[int, int] = field(default_factory=dict)
    hosts: Hosts | None = None

    def total(self, name: str) -> int:
        """How many ``name`` ("bad", "offload", "malformed", "cut") items there are, kept or dropped."""
        return len(getattr(self, name)) + self.dropped[name]

    def merge(self, other: Report) -> Report:
        """This report followed by ``other``'s (the next chunk of the same capture): counts added, lists joined."""
        out = Report(self.packets, {k: dict(v) for k, v in self.counts.items()}, list(self.bad), list(self.offload),
                     list(self.malformed), list(self.cut), self.not_ip, dict(self.unsupported), self.fast,
                     list(self.patches), self.keep, dict(self.dropped), dict(self.no_checksum),
                     copy.deepcopy(self.hosts))
        out.update(other)
        return out

    def update(self, other: Report) -> None:
        """:meth:`merge` in place: ``other`` (the next chunk) added to this report."""
        self.packets += other.packets
        counts = self.counts
        for key, row in other.counts.items():
            mine = counts.get(key)
            if mine is None:
                mine = counts[key] = zero_counts()
            for status, n in row.items():
                mine[status] = mine.get(status, 0) + n
        for counted, more in ((self.unsupported, other.unsupported), (self.no_checksum, other.no_checksum)):
            for link, n in more.items():
                counted[link] = counted.get(link, 0) + n
        for name in KEPT:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine and theirs and _number(theirs[0]) < _number(mine[-1]):  # a datagram settled a chunk late
                both = list(heapq.merge(mine, theirs, key=_number))
                room = len(both) if self.keep is None else min(len(both), self.keep)
                mine[:] = both[:room]
                self.dropped[name] += other.dropped[name] + len(both) - room
                continue
            room = len(theirs) if self.keep is None else max(0, min(len(theirs), self.keep - len(mine)))
            mine += theirs[:room]
            self.dropped[name] += other.dropped[name] + len(theirs) - room
        if self.patches and other.patches and other.patches[0] < self.patches[-1]:
            self.patches[:] = heapq.merge(self.patches, other.patches)
        else:
            self.patches += other.patches
        self.not_ip += other.not_ip
        self.fast += other.fast
        if other.hosts is not None:
            if self.hosts is None:
                self.hosts = Hosts()
            self.hosts.update(other.hosts)

    def sort(self) -> None:
        """Put the lists in packet order (and the patches in file order)."""
        for name in ("bad", "offload", "malformed"):  # (index, ...) items
            getattr(self, name).sort(key=_INDEX)
        self.patches.sort()

    def tally(self, index: int, results: list[Result], time: int = NO_TIME,
              senders: Sequence[Sender] | None = None) -> None:
        """Count packet ``index``'s results (and, where :attr:`hosts` is collected, who sent its bad and offload
        ones: its IP headers ``senders``, at ``time``)."""
        if self.hosts is not None and senders is not None:
            self.hosts.add(time, results, senders)
        counts = self.counts
        for r in results:
            key = count_key(r)
            row = counts.get(key)
            if row is None:
                row = counts[key] = zero_counts()
            s = r.status
            row[_VALUE[s]] += 1
            if s is _BAD:
                self.bad.append((index, r))
            elif s is _OFFLOAD:
                self.offload.append((index, r))


# --- the two commands' output ----------------------------------------------------------------

def frame(index: int) -> int:
    """The frame number (from 1, as tshark shows it) of the packet at 0-based ``index``."""
    return index + 1


#: Why a wrong field is wrong, where ``verify --explain`` found out: (packet index, Result) -> its
#: csum.explain.Explanation, or None.
Why = Callable[[int, Result], Any]


def _bad_row(index: int, r: Result, why: Why | None = None) -> dict[str, object]:
    row: dict[str, object] = {"frame": frame(index), "layer": r.layer, "path": r.path, "offset": r.field,
                              "stored": r.stored, "computed": r.computed, "reason": str(r.reason)}
    if why is not None:
        e = why(index, r)
        row["cause"], row["detail"] = (None, None) if e is None else (e.cause, e.detail)
    return row


def _hex16(value: int | None) -> str | None:
    return None if value is None else f"{value:#06x}"


def as_json(report: Report, cap: Capture, name: str, show: int, why: Why | None = None) -> dict[str, object]:
    """The report as a JSON-ready dict (lists cut to their first ``show`` items, counts complete); ``why``: each
    bad and offload row gets the ``cause`` and ``detail`` of its explanation."""
    return {
        "file": name, "format": cap.format, "packets": report.packets, "fast_path": report.fast,
        "not_ip": report.not_ip, "unsupported_linktypes": {str(k): v for k, v in report.unsupported.items()},
        "no_checksum_linktypes": {str(k): v for k, v in report.no_checksum.items()},
        "counts": report.counts,
        "bad_count": report.total("bad"), "bad": [_bad_row(i, r, why) for i, r in report.bad[:show]],
        "offload_count": report.total("offload"), "offload": [_bad_row(i, r, why) for i, r in report.offload[:show]],
        "malformed_count": report.total("malformed"),
        "malformed": [{"frame": frame(i), "reason": why} for i, why in report.malformed[:show]],
        "cut_count": report.total("cut"), "cut_frames": [frame(i) for i in report.cut[:show]],
    }


def _cause(why: Why | None, index: int, r: Result) -> str:
    if why is None:
        return ""
    e = why(index, r)
    return f"  {'-' if e is None else e.cause}"


def _rows(title: str, items: list[tuple[int, Result]], total: int, show: int, why: Why | None = None) -> list[str]:
    if not total:
        return []
    lines = ["", f"{title}: {total}" + (f" (first {show})" if total > show else "")]
    if show > 0:
        lines.append(f"{'frame':>8}  {'layer':<10} {'offset':>6}  {'stored':<7} {'computed':<8}  "
                     + ("reason" if why is None else f"{'reason':<14}  cause"))
    reason = (lambda r: str(r.reason)) if why is None else (lambda r: f"{r.reason!s:<14}")
    return lines + [f"{frame(i):>8}  {count_key(r):<10} {'-' if r.field is None else r.field:>6}  "
                    f"{_hex16(r.stored) or '-':<7} {_hex16(r.computed) or '-':<8}  {reason(r)}{_cause(why, i, r)}"
                    for i, r in items[:show]]


#: ``--only``: which lists the text report shows (csum.capture.rowtext.ONLY: which rows).
ONLY_LISTS = {"bad": ("bad",), "offload": ("offload",), "not-ok": KEPT}


def as_text(report: Report, cap: Capture, name: str, show: int, why: Why | None = None,
            only: str | None = None) -> str:
    """The report as tables: counts per protocol and depth, then the first ``show`` bad, offload, malformed, cut
    (``why``: the bad and offload rows with the cause of their explanation; ``only``: those lists of
    :data:`ONLY_LISTS` alone)."""
    lists = KEPT if only is None else ONLY_LISTS[only]
    walked = report.packets - report.fast
    lines = [f"{name}: {cap.format}, {report.packets} packets ({report.fast} on the fast path, {walked} walked "
             f"layer by layer; {report.not_ip} not IP; {report.total('cut')} cut by the snap length, their captured "
             "headers checked)"]
    lines += [f"link type {k} not supported: {v} packets not checked" for k, v in sorted(report.unsupported.items())]
    lines += [f"link type {k} carries no Internet checksum: {v} packets, nothing to check"
              for k, v in sorted(report.no_checksum.items())]
    lines += ["", f"{'layer':<10} " + " ".join(f"{s:>9}" for s in STATUSES)]
    lines += [f"{key:<10} " + " ".join(f"{c.get(s, 0):>9}" for s in STATUSES) for key, c in report.counts.items()]
    if "bad" in lists:
        lines += _rows("bad checksums", report.bad, report.total("bad"), show, why)
    if "offload" in lists:
        lines += _rows("transmit offload (the field holds the pseudo-header sum; the NIC fills it in)",
                       report.offload, report.total("offload"), show, why)
    if report.total("malformed") and "malformed" in lists:
        lines += ["", f"malformed packets: {report.total('malformed')}"]
        lines += [f"{frame(i):>8}  {why}" for i, why in report.malformed[:show]]
    if report.total("cut") and "cut" in lists:
        first = f" (first: frames {', '.join(str(frame(i)) for i in report.cut[:show])})" if show else ""
        lines += ["", f"cut by the snap length: {report.total('cut')}{first}"]
    return "\n".join(lines)
