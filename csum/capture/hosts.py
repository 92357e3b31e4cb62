"""Who sent a capture's bad and transmit-offload checksums, and when: counts per source host and per flow.

``csum verify --by host`` (and ``--html``) collect, for every checksum field whose status is ``bad`` or
``offload`` (:class:`~csum.layers.Status`), the IP header that carries it (the innermost one of the field's
depth: a tunnel's inner packet is its own sender), its timestamp, and the transport ports where the IP header
carries TCP, UDP, UDP-Lite or DCCP. Those fields are rare, so :class:`Hosts` keeps them as exact counts:

* per source address and protocol (the field's layer): bad and offload fields;
* per flow (source, destination, the IP header's protocol, source and destination port): bad and offload
  fields, the first and last time one was seen;
* a timeline of the bad and offload fields in buckets of 2**k nanoseconds, k the smallest (from
  :data:`FIRST_SHIFT` on) that puts them in at most :data:`BUCKETS` buckets.

Memory stays bounded: past :data:`MAX_HOSTS` source addresses (or :data:`MAX_FLOWS` flows) the table is
dropped and marked as such (never a part of it: what is shown is whole). Every count is a sum, a minimum or a
maximum, so the report of a capture checked in chunks, by ``--jobs`` workers or file after file is the same
as one checked in one piece (:meth:`Hosts.update`).

The verdict (:meth:`Hosts.verdict`): a host sent **offload** when every bad-or-offload checksum from its
address is transmit offload's partial sum (the pseudo-header sum a NIC completes: CHECKSUM_PARTIAL,
include/linux/skbuff.h; the capture was taken on the sending host before the NIC); a host with any real bad
checksum (of any protocol) is **corruption or a bug**, unless ``verify --explain`` found the cause
(:mod:`csum.explain`): then the verdict names it.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..layers import Result, Stack, Status, protocol_name, table, walk
from .pcap import NO_TIME
from ..layers.table import ADDR_SIZES

__all__ = ["BUCKETS", "FIRST_SHIFT", "MAX_FLOWS", "MAX_HOSTS", "Flow", "Hosts", "Sender", "senders", "senders_of"]

#: The most source addresses, and flows, a :class:`Hosts` lists; past that the table is dropped (marked so).
MAX_HOSTS = 1 << 16
MAX_FLOWS = 1 << 16
#: The most buckets of the timeline, and the finest bucket: 2**20 ns (about a millisecond).
BUCKETS = 240
FIRST_SHIFT = 20
#: The statuses counted (the others are not a sender's doing).
COUNTED = (Status.BAD, Status.OFFLOAD)


class Sender(NamedTuple):
    """One IP header of a packet: its depth and offset, version, source and destination address (the header's
    bytes), protocol, and the transport ports (-1: none)."""

    depth: int
    l3: int
    version: int
    src: bytes
    dst: bytes
    proto: int
    sport: int
    dport: int


class Flow(NamedTuple):
    """A flow's key: source and destination address (text), the IP header's protocol ("TCP", "UDP" ...), ports
    (-1 for none)."""

    src: str
    dst: str
    proto: str
    sport: int
    dport: int


def senders(stack: Stack, buf: memoryview | bytes) -> list[Sender]:
    """The IP headers of a walked packet (:func:`csum.layers.walk`) as :class:`Sender` rows; an IPv4 header the walker
    refused (a total length, IHL or option that does not fit) but whose checksum it judged, with the addresses it
    holds (unverified; no ports): its bad checksum has a sender (it had none, and dropped out of ``--by host``)."""
    h = table.IPHDR
    out = [Sender(f.depth, f.header, 4, bytes(buf[f.header + h.saddr : f.header + h.saddr + h.addr_size]),
                  bytes(buf[f.header + h.daddr : f.header + h.daddr + h.addr_size]), buf[f.header + h.protocol], -1, -1)
           for f in stack.fields if f.entry is table.IPV4_HEADER and f.header + h.size <= len(buf)
           and not any(ip.l3 == f.header for ip in stack.ips)]
    for ip in stack.ips:
        size = ADDR_SIZES[ip.version]
        at = ip.l4_start
        ported = ip.proto in table.PORTED and ip.fragment != "later" and at + 4 <= len(buf)
        out.append(Sender(ip.depth, ip.l3, ip.version, bytes(buf[ip.saddr : ip.saddr + size]),
                          bytes(buf[ip.daddr : ip.daddr + size]), ip.proto,
                          int.from_bytes(buf[at : at + 2], "big") if ported else -1,
                          int.from_bytes(buf[at + 2 : at + 4], "big") if ported else -1))
    return sorted(out, key=lambda s: (s.depth, s.l3))


def senders_of(data: memoryview | bytes, linktype: int, wire: int) -> list[Sender]:
    """The :class:`Sender` rows of one captured packet, walked by the Python walker (for the C walker's results)."""
    view = memoryview(data)
    return senders(walk(view, linktype, wire_len=wire), view)


def interesting(results: Sequence[Result]) -> bool:
    """Whether any of a packet's results is counted here (bad or offload)."""
    return any(r.status in COUNTED for r in results)


def flow_of(r: Result, rows: Sequence[Sender]) -> Flow | None:
    """The :class:`Flow` of field ``r`` of a packet whose IP headers are ``rows`` (None: in no IP header)."""
    sender = _sender_of(r, rows)
    return None if sender is None else _flow(sender)


@functools.lru_cache(maxsize=4096)
def _flow(sender: Sender) -> Flow:
    """The :class:`Flow` of an IP header (made once per header: every wrong field of a flow has one)."""
    return Flow(address(sender.src), address(sender.dst), protocol_name(sender.proto), sender.sport, sender.dport)


def _sender_of(r: Result, rows: Sequence[Sender]) -> Sender | None:
    """The IP header that carries ``r``: the last one of its depth starting at or before it (else the last one
    before it, else the first)."""
    best = None
    for s in rows:
        if s.l3 <= r.offset and (s.depth == r.depth or best is None or best.depth != r.depth):
            best = s
    return best if best is not None else (rows[0] if rows else None)


@functools.lru_cache(maxsize=4096)
def address(raw: bytes) -> str:
    """An address as text (IPv6 compressed, RFC 5952)."""
    return str(ipaddress.ip_address(raw))


@dataclass
class Hosts:
    """The counts of the module docstring; ``None`` tables were dropped (more than MAX_HOSTS / MAX_FLOWS).

    ``hosts[src][layer]`` = [bad, offload]; ``flows[Flow]`` = [bad, offload, first time, last time] (nanoseconds,
    NO_TIME when none known); ``timeline[bucket]`` = [bad, offload] for the bucket starting at bucket << ``shift``
    ns; ``untimed``: [bad, offload] of packets without a timestamp; ``unplaced``: [bad, offload] of fields in no IP
    header (none known today: a checksum csum checks is in an IP packet).
    """

    hosts: dict[str, dict[str, list[int]]] | None = field(default_factory=dict)
    flows: dict[Flow, list[int]] | None = field(default_factory=dict)
    shift: int = FIRST_SHIFT
    timeline: dict[int, list[int]] = field(default_factory=dict)
    untimed: list[int] = field(default_factory=lambda: [0, 0])
    unplaced: list[int] = field(default_factory=lambda: [0, 0])
    #: ``csum verify --explain``: per source address, its bad fields per cause id found (csum.explain; not the
    #: unexplained ones); empty otherwise.
    causes: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, time: int, results: Sequence[Result], rows: Sequence[Sender]) -> None:
        """Count the bad and offload ``results`` of one packet seen at ``time`` (ns, or NO_TIME), whose IP headers
        are ``rows``."""
        for r in results:
            s = r.status
            if s not in COUNTED:
                continue
            k = 0 if s is Status.BAD else 1
            sender = _sender_of(r, rows)
            if sender is None:
                self.unplaced[k] += 1
            else:
                src = address(sender.src)
                if self.hosts is not None:
                    self.hosts.setdefault(src, {}).setdefault(r.layer, [0, 0])[k] += 1
                if self.flows is not None:
                    key = Flow(src, address(sender.dst), protocol_name(sender.proto), sender.sport, sender.dport)
                    row = self.flows.get(key)
                    if row is None:
                        row = self.flows[key] = [0, 0, time, time]
                    row[k] += 1
                    _span(row, time, time)
            if time == NO_TIME:
                self.untimed[k] += 1
            else:
                self.timeline.setdefault(time >> self.shift, [0, 0])[k] += 1
        self._bound()

    def update(self, other: Hosts) -> None:
        """Add ``other``'s counts to these (any order gives the same counts)."""
        if self.hosts is not None and other.hosts is not None:
            for src, layers in other.hosts.items():
                mine = self.hosts.setdefault(src, {})
                for layer, pair in layers.items():
                    _add(mine.setdefault(layer, [0, 0]), pair)
        else:
            self.hosts = None
        if self.flows is not None and other.flows is not None:
            for key, (bad, off, first, last) in other.flows.items():
                flow = self.flows.get(key)
                if flow is None:
                    self.flows[key] = [bad, off, first, last]
                else:
                    _add(flow, (bad, off))
                    _span(flow, first, last)
        else:
            self.flows = None
        shift = max(self.shift, other.shift)
        self._coarsen(shift)
        for bucket, pair in other.timeline.items():
            _add(self.timeline.setdefault(bucket >> (shift - other.shift), [0, 0]), pair)
        _add(self.untimed, other.untimed)
        _add(self.unplaced, other.unplaced)
        for src, counts in other.causes.items():
            mine_causes = self.causes.setdefault(src, {})
            for cause, n in counts.items():
                mine_causes[cause] = mine_causes.get(cause, 0) + n
        self._bound()

    def _coarsen(self, shift: int) -> None:
        """Rebucket the timeline at 2**``shift`` ns."""
        if shift == self.shift:
            return
        coarse: dict[int, list[int]] = {}
        for bucket, pair in self.timeline.items():
            _add(coarse.setdefault(bucket >> (shift - self.shift), [0, 0]), pair)
        self.timeline, self.shift = coarse, shift

    def _bound(self) -> None:
        while len(self.timeline) > BUCKETS:
            self._coarsen(self.shift + 1)
        if self.hosts is not None and len(self.hosts) > MAX_HOSTS:
            self.hosts = None
        if self.flows is not None and len(self.flows) > MAX_FLOWS:
            self.flows = None

    def totals(self, src: str) -> tuple[int, int]:
        """(bad, offload) fields from ``src``, every protocol."""
        layers = (self.hosts or {}).get(src, {})
        return sum(v[0] for v in layers.values()), sum(v[1] for v in layers.values())

    def verdict(self, src: str) -> str:
        """"offload" when every bad-or-offload checksum from ``src`` is an offload partial sum, else
        "corruption or a bug" (see the module docstring); where :attr:`causes` names the cause of its bad fields
        (``verify --explain``), those cause ids, most fields first, then "corruption or a bug" if some are left
        unexplained."""
        bad, _ = self.totals(src)
        if not bad:
            return "offload"
        counts = self.causes.get(src, {})
        named = sorted(counts, key=lambda c: (-counts[c], c))
        if not named:
            return "corruption or a bug"
        left = bad - sum(counts[c] for c in named)
        return ", ".join(named) + (", corruption or a bug" if left > 0 else "")

    def ranked_hosts(self) -> list[str]:
        """The source addresses, most bad-or-offload fields first (then by address text)."""
        return sorted(self.hosts or {}, key=lambda src: (-sum(self.totals(src)), src))

    def ranked_flows(self) -> list[tuple[Flow, list[int]]]:
        """The flows, most bad-or-offload fields first (then by key)."""
        return sorted((self.flows or {}).items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0]))

    def verdict_line(self, limit: int | None = None) -> str:
        """Which hosts sent offload sums only, which real bad checksums: "offload on A; corruption or a bug on B"
        ("" when no host sent either); past ``limit`` hosts, how many more."""
        if self.hosts is None:
            return f"more than {MAX_HOSTS} source hosts: no verdict per host"
        ranked = self.ranked_hosts()
        parts = [f"offload on {h}" for h in ranked if self.verdict(h) == "offload"]
        parts += [f"{self.verdict(h)} on {h}" for h in ranked if self.verdict(h) != "offload"]
        if limit is not None and len(parts) > limit:
            rest = len(parts) - limit
            parts = [*parts[:limit], f"and {rest} more hosts" if limit else f"{rest} hosts, not listed"]
        return "; ".join(parts)

    def as_text(self, show: int, title: str = "by source host") -> list[str]:
        """``csum verify --by host``: the first ``show`` hosts and flows (most bad-or-offload fields first), the
        verdict; a blank line first."""
        lines = ["", f"{title} (bad and offload checksum fields)"]
        if self.hosts is None:
            lines.append(f"  more than {MAX_HOSTS} source hosts: not listed")
        elif not self.hosts:
            lines.append("  none: no bad or offload checksum")
        else:
            ranked = self.ranked_hosts()
            lines[-1] += _first(show, len(ranked))
            wide = max([len("host"), *(len(h) for h in ranked[:show])])
            lines.append(f"  {'host':<{wide}} {'bad':>7} {'offload':>7}  verdict (per protocol: bad/offload)")
            for h in ranked[:show]:
                bad, off = self.totals(h)
                layers = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(self.hosts[h].items()))
                lines.append(f"  {h:<{wide}} {bad:>7} {off:>7}  {self.verdict(h)} ({layers})")
        if self.flows is None:
            lines += ["", f"by flow: more than {MAX_FLOWS}: not listed"]
        elif self.flows:
            flows = self.ranked_flows()[:show]
            ends = [(endpoint(f.src, f.sport), endpoint(f.dst, f.dport)) for f, _ in flows]
            w1 = max([len("source"), *(len(a) for a, _ in ends)])
            w2 = max([len("destination"), *(len(b) for _, b in ends)])
            lines += ["", "by flow" + _first(show, len(self.flows)),
                      f"  {'source':<{w1}} {'destination':<{w2}} {'proto':<6} {'bad':>6} {'offload':>7}  first - last"]
            for (f, v), (src, dst) in zip(flows, ends):
                lines.append(f"  {src:<{w1}} {dst:<{w2}} {f.proto:<6} {v[0]:>6} {v[1]:>7}  {clock(v[2])} - {clock(v[3])}")
        verdict = self.verdict_line(show)
        if verdict:
            lines += ["", f"verdict: {verdict}"]
        return lines

    def as_json(self) -> dict[str, object]:
        """The counts as a JSON-ready dict (hosts and flows ranked, times in nanoseconds since the epoch)."""
        return {
            "hosts": None if self.hosts is None else [
                {"src": h, "bad": self.totals(h)[0], "offload": self.totals(h)[1], "verdict": self.verdict(h),
                 "layers": {k: {"bad": v[0], "offload": v[1]} for k, v in sorted(self.hosts[h].items())}}
                for h in self.ranked_hosts()],
            "flows": None if self.flows is None else [
                {"src": f.src, "dst": f.dst, "proto": f.proto, "sport": None if f.sport < 0 else f.sport,
                 "dport": None if f.dport < 0 else f.dport, "bad": v[0], "offload": v[1],
                 "first_ns": None if v[2] == NO_TIME else v[2], "last_ns": None if v[3] == NO_TIME else v[3]}
                for f, v in self.ranked_flows()],
            "timeline": {"bucket_ns": 1 << self.shift,
                         "buckets": [{"start_ns": b << self.shift, "bad": v[0], "offload": v[1]}
                                     for b, v in sorted(self.timeline.items())],
                         "untimed": {"bad": self.untimed[0], "offload": self.untimed[1]}},
            "verdict": self.verdict_line(),
        }


def _first(show: int, total: int) -> str:
    return f" (first {show} of {total})" if total > show else ""


def endpoint(addr: str, port: int) -> str:
    """``addr`` and ``port`` as a URL writes them (``[2001:db8::1]:53``), or the address alone (no port)."""
    if port < 0:
        return addr
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"


def clock(ns: int) -> str:
    """A timestamp as UTC date and time to the microsecond ("-" when unknown)."""
    if ns == NO_TIME:
        return "-"
    import datetime  # where a time is written: a summary without hosts needs none

    when = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return (when + datetime.timedelta(microseconds=ns % 10**9 // 1000)).strftime("%Y-%m-%d %H:%M:%S.%f")


def _add(row: list[int], pair: Sequence[int]) -> None:
    """Add (bad, offload) ``pair`` to the first two counts of ``row``."""
    row[0] += pair[0]
    row[1] += pair[1]


def _span(row: list[int], first: int, last: int) -> None:
    """Widen a flow's [.., .., first, last] to take in ``first`` .. ``last`` (NO_TIME: unknown)."""
    if first != NO_TIME and (row[2] == NO_TIME or first < row[2]):
        row[2] = first
    if last != NO_TIME and last > row[3]:
        row[3] = last
