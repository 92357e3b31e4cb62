"""Check a capture chunk after chunk: the walk behind ``csum verify`` and ``csum fix``, fragments across chunks.

Every packet the fast paths (:mod:`csum.capture.fastpath`) leave is walked by :func:`csum.layers.walk` on its
capture link type, and each checksum field judged by :func:`csum.layers.evaluate`, exactly as
:func:`csum.inet.verify` does. IP fragments, outer ones and those inside a tunnel, are reassembled within the capture
(:mod:`csum.layers.reassembly`) and the whole datagram's checksums reported on the fragment carrying
each field. A :class:`Checker` lives for the whole capture and carries the pending datagrams from one
chunk to the next (their fragments go in front of the next chunk's packets, a
:class:`~csum.capture.fastpath.Batch`); :func:`check_part` checks a chunk on its own for csum/capture/stitch.py to
join.
"""

from __future__ import annotations

import functools
import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import engine
from ..layers import Reason, Result, accel, corrections, reassembly, walk
from ..layers.check import judge
from ..layers.reassembly import Done, Reassembler
from . import fastpath
from .fastpath import FIX, Packet
from .hosts import Hosts, Sender, interesting, senders, senders_of
from .pcap import NO_TIME, Capture
from .report import Report

if TYPE_CHECKING:  # the rows' tables and a chunk's columns are numpy's: imported where a chunk is checked at once
    import numpy as np

    from . import rows
    from .fastpath import Batch

#: (packet index, every Result of that packet) for each packet, in order: the ``sink`` of :func:`check`.
Sink = Callable[[int, list[Result]], None]
#: Every field as a row, in packet order, a table at a time: the ``table`` of :class:`Checker`.
TableSink = Callable[["rows.Rows"], None]
#: The most packets (with the fragments carried in front of them) a chunk may have to be checked a packet at a
#: time where numpy is not imported yet (:func:`one_by_one`).
ONE_BY_ONE = 1024


def one_by_one(packets: int) -> bool:
    """Whether a chunk of ``packets`` is checked a packet at a time, by the C walker
    (:func:`csum.capture.fastpath.from_c`) else the Python walker, instead of whole by the C walker: with numpy not
    yet imported and at most :data:`ONE_BY_ONE` packets, where that costs less than numpy's import (a small
    capture's ``csum verify``: bench/startup.py); once numpy is there, a chunk at once is faster (about 0.16 us a
    packet against 8 us one at a time, on 1,000 TCP and UDP packets). The findings are the same either way."""
    return packets <= ONE_BY_ONE and "numpy" not in sys.modules


class _Row:
    """A walked packet's findings, kept until no pending datagram can amend them (with the packet's timestamp, its IP
    headers where the report collects hosts (csum.capture.hosts) and where its fields' addresses are, for the rows:
    :mod:`csum.capture.rows`)."""

    __slots__ = ("index", "results", "patches", "malformed", "time", "senders", "where")

    def __init__(self, index: int, results: list[Result], patches: list[tuple[int, bytes]], malformed: str | None = None,
                 time: int = NO_TIME, senders: list[Sender] | None = None,
                 where: Callable[[Result], tuple[int, bytes, bytes]] | None = None) -> None:
        self.index, self.results, self.patches, self.malformed = index, results, patches, malformed
        self.time, self.senders, self.where = time, senders, where


@dataclass
class Part:
    """One chunk checked on its own (:meth:`Checker.detach`), for csum/capture/stitch.py to join to the chunks before it.

    ``report``: everything the chunk settled; ``open``: the packets of the datagrams still pending at its end, their
    findings left out of ``report``; ``closed``: the keys of the datagrams completed or given up in the chunk
    (:func:`csum.layers.accel.key_bytes` each, end to end); ``crowd``: the most datagrams pending at once (an
    upper bound).
    """

    report: Report
    open: list[Packet]
    closed: bytes
    crowd: int

    def conflicts(self, pending: Iterable[reassembly.Key]) -> bool:
        """Whether a datagram of this chunk was completed or given up under one of the keys ``pending``."""
        return any(accel.holds(self.closed, accel.key_bytes(key)) for key in pending)


class Checker:
    """Checks the chunks of one capture in order, IP fragments reassembled across them.

    :meth:`check` returns a chunk's :class:`Report`: its fast-path counts and the findings of every walked
    packet that no pending datagram may still amend (some from earlier chunks); :meth:`close` the rest.
    ``sink(index, results)``, when given, receives every packet's results in packet order (the fast path is
    then off, so every field is seen); a pending datagram holds back the rows after its first fragment, at
    most :data:`~csum.layers.reassembly.WINDOW` packets. ``table(rows)``, when given instead, receives every field
    as a row (:class:`csum.capture.rows.Rows`), the C walker's and the Python walker's merged in packet order: a
    table at the end of each chunk, of the packets settled by then. ``part``: this checker checks one chunk on its own
    and ends with :meth:`detach` (it records what a :class:`Part` tells). ``fix_embedded``: the patches correct the
    checksums of embedded packets too (sFlow samples, OpenFlow packet-ins; ``csum fix --fix-embedded``).
    ``hosts``: the reports collect who sent the bad and offload checksums (:class:`csum.capture.hosts.Hosts`).
    ``fixes``: False when no one reads the reports' ``patches``: the C walker's chunks then leave them out (the
    packets the Python walker walks keep theirs). ``keep``: no one reads more than that many of a report's bad and
    offload items (its lists are cut to them when merged, in packet order: :attr:`Report.keep`); the C walker's chunks
    then make the Results of no more, counting those the reports before already listed (the rest counted in
    ``dropped``), unless ``fixes`` or ``hosts``.
    """

    def __init__(self, sink: Sink | None = None, *, part: bool = False, fix_embedded: bool = False,
                 hosts: bool = False, table: TableSink | None = None, fixes: bool = True,
                 keep: int | None = None) -> None:
        self.sink = sink
        self.table = table
        if table is not None:
            from . import rows

            self.built = rows.Builder()
        self.fix_embedded = fix_embedded
        self.hosts = hosts
        self.fixes = fixes
        self.keep = keep
        self.listed = (0, 0)  # the bad and offload items of the reports check() returned so far
        self.frags = Reassembler(record=part)
        self.rows: deque[_Row] = deque()
        self.by_index: dict[int, _Row] = {}
        self.held: dict[int, Packet] = {}  # packets of pending datagrams: their rows may still change
        self.report = self.new_report(0)
        self.c_closed = b""  # the last chunk's: what csum/engine/_cwalk.c reassembled (a part has one chunk)
        self.c_peak = 0

    def new_report(self, packets: int) -> Report:
        """An empty report for ``packets`` packets, collecting hosts when this checker does."""
        return Report(packets, hosts=Hosts() if self.hosts else None)

    def check(self, cap: Capture, progress: Callable[[int, int], None] | None = None) -> Report:
        report = self.report = self.new_report(len(cap))
        carried = self._reopen() if self.sink is None and self.frags.pending else []
        if not len(cap) and not carried:
            return report
        if self.table is None and (self.sink is not None or one_by_one(len(cap) + len(carried))):
            packets = [Packet(cap.first_index + i, cap.base + off, link, wire, memoryview(cap.data)[off : off + n], t)
                       for i, (off, n, wire, link, t) in enumerate(cap.records())]
            report.cut = [p.number for p in packets if len(p.data) < p.wire]
            self._walk([*carried, *packets], False, progress)
        else:
            self._at_once(cap, carried, progress)
        for given_up in self.frags.expire(cap.first_index + len(cap) - 1 if len(cap) else carried[-1].number):
            self.finish(given_up)
        self.flush()
        report.sort()
        if self.table is not None:
            self.table(self.built.take(self.unsettled()))
        self.listed = (self.listed[0] + len(report.bad), self.listed[1] + len(report.offload))
        return report

    def _at_once(self, cap: Capture, carried: list[Packet], progress: Callable[[int, int], None] | None) -> None:
        """The chunk to the C walker at once (:func:`csum.capture.fastpath.c_fast`, without numpy, or its rows), the
        packets it leaves to the Python walker."""
        from .fastpath import Batch

        batch = Batch.of(cap, carried)
        c_tried = self.sink is None and engine.cwalk is not None  # the chunk goes to C at once, then the rest to Python
        if c_tried and self.table is None:  # report.cut set there
            walk, self.c_closed, self.c_peak = fastpath.c_fast(batch, self.report, self.fixes, self.keep, self.listed)
        else:
            self.report.cut = batch.cut
            walk = self._c_rows(batch) if c_tried else list(range(len(batch)))
        self._walk([batch.packet(i) for i in walk], c_tried, progress)

    def _walk(self, packets: list[Packet], c_tried: bool, progress: Callable[[int, int], None] | None) -> None:
        """Each of ``packets`` through :meth:`packet`."""
        for n, p in enumerate(packets):
            self.packet(p, c_tried)
            if progress is not None and not n & 0xFFF:
                progress(n, len(packets))

    def _c_rows(self, batch: Batch) -> list[int]:
        """The C walker's rows of the chunk, counted and kept for the table; the packets it left to the Python walker."""
        import numpy as np

        from . import rows

        todo = np.frombuffer(batch.todo, dtype=np.int8).astype(bool)
        table, taken, self.c_closed, self.c_peak = rows.c_rows(batch, batch.times, todo)
        report = self.report
        report.fast = int(np.count_nonzero(taken))
        rows.tally(report, table)
        packet = np.ascontiguousarray(table["packet"])
        for i in np.unique(packet[rows.wrong(table)]).tolist():
            lo, hi = np.searchsorted(packet, [i, i + 1])
            found = [r for _, r in rows.Rows(table[lo:hi]).results()]
            report.patches += fastpath.patches(found, int(batch.bases[i]), functools.partial(batch.packet, i))
        self.built.add(table)
        return np.flatnonzero(~taken).tolist()

    def _reopen(self) -> list[Packet]:
        """The packets of the pending datagrams, taken back (their rows dropped, the datagrams forgotten) to be
        checked again in front of the next chunk; every other row is emitted now."""
        carried = sorted(self.held.values(), key=lambda p: p.number)
        for row in self.rows:
            if row.index not in self.held:
                self._emit(row)
        self.rows.clear()
        self.by_index.clear()
        self.held.clear()
        self.frags.pending.clear()
        return carried

    def packet(self, p: Packet, c_tried: bool = False) -> None:
        """Walk one packet (or take C's results for it, unless the C walker already declined it: ``c_tried``),
        reassembling it if it is a fragment."""
        results = None if c_tried else fastpath.from_c(p)
        if results is not None:  # a small chunk's common packets, or every packet's for a sink
            bad = interesting(results)
            self.report.fast += not bad
            sent = senders_of(p.data, p.linktype, p.wire) if self.hosts and bad else None
            self._row(_Row(p.number, results, fastpath.patches(results, p.base, lambda: p), None, p.time, sent))
            return
        view = memoryview(p.data)
        stack = walk(view, p.linktype, wire_len=p.wire)
        report = self.report
        if stack.unsupported is not None:
            report.unsupported[stack.unsupported] = report.unsupported.get(stack.unsupported, 0) + 1
        elif stack.no_checksum is not None:
            report.no_checksum[stack.no_checksum] = report.no_checksum.get(stack.no_checksum, 0) + 1
        elif stack.not_ip:
            report.not_ip += 1
        results = [judge(view, f) for f in stack.fields]
        fixes = [(p.base + at, new) for at, new in corrections(view, stack.fields, embedded=self.fix_embedded)] \
            if any(r.status in FIX for r in results) else []
        where = None
        if self.table is not None:
            from . import rows

            where = rows.addresses(view, stack.ips)
        malformed = stack.malformed or stack.inner_malformed
        row = _Row(p.number, results, fixes, None if malformed is None else malformed[1], p.time,
                   senders(stack, view) if self.hosts else None, where)
        at = next((k for k, ip in enumerate(stack.ips) if ip.fragment in ("first", "later") and not ip.copy), None)
        if at is None:
            self._row(row)
            return
        self.rows.append(row)
        self.by_index[p.number] = row
        self.held[p.number] = p
        frag = stack.ips[at]  # the outer IP header, or one inside a tunnel (the walk stops at a fragment)
        prefix = frag.path[: -len(f"ipv{frag.version}")]
        tunnel = reassembly.tunnel_of(view, frag, stack.ips[:at]) if frag.depth else b""
        for done in self.frags.add(p.number, view, frag, p.wire > len(view), prefix, tunnel):
            self.finish(done)
        self.flush()

    def _row(self, row: _Row) -> None:
        if self.rows:
            self.rows.append(row)
            self.by_index[row.index] = row
            self.flush()
        else:
            self._emit(row)

    def finish(self, done: Done) -> None:
        """Put a reassembled datagram's results in place of the first fragment's "needs reassembly"; the rows of
        its fragments are final now. A repeat of the first fragment (a duplicate in the capture) reports nothing of
        the datagram's transport field: its one row is the first fragment's."""
        pieces = {index: self.held.pop(index) for index in done.pieces if index in self.held}
        for index in done.repeats:
            row = self.by_index.get(index)
            if row is not None:
                row.results[:] = [r for r in row.results if r.reason != Reason.NEEDS_REASSEMBLY]
        if done.failed is not None:  # every first fragment of the datagram says why
            for index in done.pieces:
                row = self.by_index.get(index)
                if row is not None:
                    row.results[:] = [Result(r.layer, r.offset, r.stored, None, None, done.failed, r.field, r.path,
                                             r.depth) if r.reason == Reason.NEEDS_REASSEMBLY else r
                                      for r in row.results]
            return
        head = self.by_index.get(done.first)
        if head is None:
            return
        if done.results:
            head.results[:] = [r for r in head.results if r.reason != Reason.NEEDS_REASSEMBLY]
        for index, found in done.results.items():
            row = self.by_index.get(index)
            if row is None:
                continue
            row.results.extend(found)
            row.results.sort(key=lambda r: r.offset if r.field is None else r.field)
            new = [(r.field, r.computed.to_bytes(2, "big")) for r in found
                   if r.status in FIX and r.computed is not None and r.field is not None
                   and (self.fix_embedded or (index, r.field) not in done.embedded)]
            if new and done.depth:
                row.patches = self._tunnel_patches(pieces[index], new)
            else:
                row.patches += [(pieces[index].base + at, value) for at, value in new]

    def _tunnel_patches(self, p: Packet, new: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        """The patches of a packet holding a fragment inside a tunnel: ``new`` (packet offset, bytes), the reassembled
        datagram's, and every field of the packet's own walk judged again over the bytes they set (a tunnel's UDP
        or GRE checksum covers them: set after them, as :func:`csum.layers.corrections` sets an outer field after an
        inner one)."""
        data = bytearray(p.data)
        for at, value in new:
            data[at : at + 2] = value
        view = memoryview(bytes(data))
        stack = walk(view, p.linktype, wire_len=p.wire)
        merged = dict(new)
        merged.update(corrections(view, stack.fields, embedded=self.fix_embedded))
        return [(p.base + at, value) for at, value in sorted(merged.items())]

    def flush(self) -> None:
        """Emit the rows in order up to the first one a pending datagram may still amend."""
        while self.rows and self.rows[0].index not in self.held:
            row = self.rows.popleft()
            del self.by_index[row.index]
            self._emit(row)

    def _emit(self, row: _Row) -> None:
        report = self.report
        report.tally(row.index, row.results, row.time, row.senders)
        report.patches += row.patches
        if row.malformed is not None:
            report.malformed.append((row.index, row.malformed))
        if self.sink is not None:
            self.sink(row.index, row.results)
        if row.where is not None:
            self.built.add_results(row.index, row.time, row.results, row.where)

    def unsettled(self) -> int | None:
        """The first packet whose findings are not yet in a report (None: every packet's are)."""
        return self.rows[0].index if self.rows else None

    def detach(self) -> Part:
        """End here without waiting for the datagrams still pending: every other row goes into the last chunk's
        report, and those datagrams' packets are handed over (copied). For a ``Checker(part=True)`` that checked
        one chunk; the checker is done with after it."""
        if self.frags.closed is None:
            raise ValueError("detach: for a Checker(part=True)")
        report = self.report
        for row in self.rows:
            if row.index not in self.held:
                self._emit(row)
        report.sort()
        packets = [Packet(p.number, p.base, p.linktype, p.wire, bytes(p.data), p.time) for p in self.held.values()]
        closed = self.c_closed + b"".join(accel.key_bytes(key) for key in self.frags.closed)
        return Part(report, sorted(packets, key=lambda p: p.number), closed, max(self.frags.peak, self.c_peak))

    def close(self) -> Report:
        """The capture ended: every pending datagram given up, every row emitted; the report of those rows."""
        report = self.report = self.new_report(0)
        for done in self.frags.flush():
            self.finish(done)
        self.flush()
        report.sort()
        if self.table is not None:
            self.table(self.built.take(None))
        return report


def check(cap: Capture, progress: Callable[[int, int], None] | None = None, sink: Sink | None = None,
          fix_embedded: bool = False, hosts: bool = False) -> Report:
    """Check every packet of ``cap``, a whole capture; see :class:`Report` and :class:`Checker`."""
    checker = Checker(sink, fix_embedded=fix_embedded, hosts=hosts)
    report = checker.check(cap, progress)
    report.update(checker.close())
    return report


def check_part(cap: Capture, fix_embedded: bool = False, hosts: bool = False) -> Part:
    """Check the chunk ``cap`` on its own, leaving its datagrams still pending at its end to csum/capture/stitch.py."""
    checker = Checker(part=True, fix_embedded=fix_embedded, hosts=hosts)
    checker.check(cap)
    return checker.detach()
