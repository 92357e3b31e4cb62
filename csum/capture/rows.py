"""One row per checksum field of a capture: the table behind ``csum verify --format jsonl|csv|parquet`` and
:func:`csum.scan.to_arrow`.

A row is one checksum field of one packet, every packet's, the passing ones too: the frame number (from 1, tshark's
``frame.number``), the packet's timestamp (:meth:`csum.pcap.Capture.times`), the addresses of the IP header above the
field, then what :class:`csum.layers.Result` says of it. :data:`ROW` lays a row out as ``row_t`` does
(csum/engine/_rows.h): the C walker writes the rows of the packets it judges (``fast_check``'s rows mode, fragments of
the datagrams it reassembles included), :class:`Builder` those of the packets the Python walker judges from their
Results, and merges both in packet order. Protocol and path names are kept once, as indexes into :data:`NAMES`
(append-only, shared by every table of the process); reasons and statuses by their position in
:class:`~csum.layers.Reason` and :class:`~csum.layers.Status`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .. import engine
from ..layers import Reason, Result, Status
from ..layers.check import status as status_of
from ..layers.table import IPHDR
from ..layers.walk import IPLayer
from .fastpath import FIX, Batch
from .report import Report, depth_key, zero_counts
from ..layers.table import ADDR_SIZES

if TYPE_CHECKING:
    from .pcap import Int64s

__all__ = ["NAMES", "REASONS", "ROW", "STATUSES", "Builder", "Rows", "c_rows"]

#: A row, as csum/engine/_rows.h's row_t (tests/capture/test_rows.py checks it against the C walker's ROW_LAYOUT).
_FIELDS = ["frame", "time", "key", "packet", "header", "field", "stored", "computed", "layer", "path", "code", "depth",
           "rs", "ok", "reason", "status", "ipver", "src", "dst"]
ROW = np.dtype({
    "names": _FIELDS,
    "formats": ["<i8", "<i8", "<u8", "<i4", "<i4", "<i4", "<i4", "<i4", "<i4", "<i4", "u1", "u1", "u1", "i1", "u1",
                "u1", "u1", "V16", "V16"],
    "offsets": [0, 8, 16, 24, 28, 32, 36, 40, 44, 48, 52, 53, 54, 55, 56, 57, 58, 60, 76],
    "itemsize": 96})

#: The protocol and path names rows point to (index 0: no name). Append-only: an index, once given, names the same.
NAMES: list[str] = [""]
_CODES: dict[str, int] = {"": 0}
#: Reasons and statuses by the index a row holds.
REASONS: tuple[Reason, ...] = tuple(Reason)
STATUSES: tuple[Status, ...] = tuple(Status)
_REASON_INDEX = {r: k for k, r in enumerate(REASONS)}
_STATUS_INDEX = {s: k for k, s in enumerate(STATUSES)}
_OKS = (None, False, True)  # a row's ok + 1
_RESULT_FIELDS = [_FIELDS.index(name) for name in ("frame", "header", "field", "stored", "computed", "layer", "path",
                                                      "depth", "ok", "reason")]


def name_code(name: str) -> int:
    """The index of ``name`` in :data:`NAMES` (added at the end when new)."""
    code = _CODES.get(name)
    if code is None:
        code = _CODES[name] = len(NAMES)
        NAMES.append(name)
    return code


#: A row's status by its ok (+1) and reason index (csum.layers.check.status).
_STATUS_OF = np.array([[_STATUS_INDEX[status_of(ok, r)] for r in REASONS] for ok in _OKS], dtype=np.uint8)


@dataclass(frozen=True, eq=False)
class Rows:
    """Rows in packet order (:data:`ROW`), their names in :data:`NAMES`."""

    table: np.ndarray

    def __len__(self) -> int:
        return len(self.table)

    def results(self) -> list[tuple[int, Result]]:
        """(packet index, :class:`Result`) of each row: the Result the walker gave for it."""
        t = self.table
        out = []
        for row in t.tolist():
            frame, header, at, stored, computed, layer, path, depth, ok, reason = (row[k] for k in _RESULT_FIELDS)
            out.append((frame - 1, Result(NAMES[layer], header, None if stored < 0 else stored,
                                          None if computed < 0 else computed, _OKS[ok + 1], REASONS[reason],
                                          None if at < 0 else at, NAMES[path], depth)))
        return out


def empty() -> np.ndarray:
    """A table of no rows."""
    return np.zeros(0, dtype=ROW)


class _CNames:
    """The C walker's layer and reason codes and path keys as :data:`NAMES` / :data:`REASONS` indexes (a cache)."""

    def __init__(self, cwalk: object) -> None:
        self.cwalk = cwalk
        layers = cwalk.LAYERS  # type: ignore[attr-defined]
        self.layers = np.array([0 if name is None else name_code(name) for name in layers], dtype=np.int32)
        self.reasons = np.array([_REASON_INDEX[Reason(name)] for name in cwalk.REASONS],  # type: ignore[attr-defined]
                                dtype=np.uint8)
        self.paths: dict[int, int] = {}

    def path_codes(self, keys: np.ndarray) -> np.ndarray:
        unique, inverse = np.unique(keys, return_inverse=True)
        codes = np.empty(len(unique), dtype=np.int32)
        for k, key in enumerate(unique.tolist()):
            code = self.paths.get(key)
            if code is None:
                code = self.paths[key] = name_code(self.cwalk.path(key))  # type: ignore[attr-defined]
            codes[k] = code
        return codes[inverse]


_c_names: dict[int, _CNames] = {}


def c_rows(batch: Batch, times: Int64s, todo: np.ndarray) -> tuple[np.ndarray, np.ndarray, bytes, int]:
    """The C walker's rows for the packets of ``batch`` it judges (among ``todo``), in packet order with frame and time
    set; and which packets those are (bool), the keys of the datagrams it reassembled and their peak (as
    :func:`csum.capture.fastpath.c_fast`)."""
    from ..layers import reassembly

    cwalk = engine.cwalk
    if cwalk is None:
        raise RuntimeError("c_rows: csum.engine._cwalk is not built")
    names = _c_names.get(id(cwalk))
    if names is None:
        names = _c_names[id(cwalk)] = _CNames(cwalk)
    n = len(batch)
    out = np.zeros((n, cwalk.SLOTS), dtype=np.int16)
    slots = np.empty(n * cwalk.SLOTS, dtype=ROW)
    count = np.zeros(n, dtype=np.int8)
    _reported, closed, peak = cwalk.fast_check(batch.data, batch.offsets, batch.caplens, batch.linktypes, out,
                                               todo.astype(np.int8), batch.indices, reassembly.MAX_DATAGRAMS,
                                               reassembly.WINDOW, slots, count)
    made = cwalk.finish_rows(slots, count, batch.indices, np.ascontiguousarray(times, dtype=np.int64), names.layers,
                             names.reasons, _STATUS_OF)
    t = slots[:made]
    t["path"] = names.path_codes(t["key"])
    lost = np.flatnonzero((t["ipver"] == 0) & (t["layer"] == name_code("ipv4")))
    for k in lost.tolist():  # IPv4 headers the C walker refused: their own addresses, as the Python rows have them
        version, src, dst = header_addresses(batch.packet(int(t["packet"][k])).data, int(t["header"][k]))
        t["ipver"][k], t["src"][k], t["dst"][k] = version, src.ljust(16, b"\0"), dst.ljust(16, b"\0")
    return t, count > 0, closed, peak


def _address(data: memoryview, ip: IPLayer | None) -> tuple[int, bytes, bytes]:
    if ip is None:
        return 0, b"", b""
    size = ADDR_SIZES[ip.version]
    return ip.version, bytes(data[ip.saddr : ip.saddr + size]), bytes(data[ip.daddr : ip.daddr + size])


def header_addresses(data: memoryview | bytes, header: int) -> tuple[int, bytes, bytes]:
    """(4, source, destination) as the IPv4 header at ``header`` holds them, or (0, b"", b"") when the capture cut it
    before them. An IPv4 header checksum's row gets them even when the walker refused the header (a total length,
    IHL or option that does not fit): with the checksum wrong they are unverified, but they name a sender, so the
    bad field counts in ``--by host`` and every group-by (it had no addresses: 37 of 1,623 bad fields of a public
    corpus)."""
    h = IPHDR
    if header < 0 or header + h.size > len(data):
        return 0, b"", b""
    return (4, bytes(data[header + h.saddr : header + h.saddr + h.addr_size]),
            bytes(data[header + h.daddr : header + h.daddr + h.addr_size]))


def addresses(data: memoryview, ips: Sequence[IPLayer]) -> Callable[[Result], tuple[int, bytes, bytes]]:
    """For a packet walked by the Python walker (its IP layers ``ips``): the IP version and header addresses a
    Result's row gets, those of the innermost IP header at the field's depth (or above it) in front of the field's
    header, as the C walker has them."""
    known = [(ip.depth, ip.l3, _address(data, ip)) for ip in ips]

    def of(r: Result) -> tuple[int, bytes, bytes]:
        if r.layer == "ipv4":  # the header's own addresses, refused by the walker or not
            return header_addresses(data, r.offset)
        best = None
        for depth, l3, found in known:
            if depth <= r.depth and l3 <= r.offset and (best is None or (depth, l3) >= best[:2]):
                best = (depth, l3, found)
        if best is None:
            return known[0][2] if known else (0, b"", b"")
        return best[2]

    return of


@dataclass
class Builder:
    """A capture's rows as they are settled, from the C walker (whole tables) and the Python walker (Results), handed
    out in packet order up to the first packet not settled yet (:meth:`take`)."""

    parts: list[np.ndarray] = field(default_factory=list)
    python: list[tuple] = field(default_factory=list)
    held: np.ndarray = field(default_factory=empty)

    def add(self, table: np.ndarray) -> None:
        if len(table):
            self.parts.append(table)

    def add_results(self, index: int, time: int, results: list[Result],
                    where: Callable[[Result], tuple[int, bytes, bytes]]) -> None:
        """The rows of a packet the Python walker judged: ``where(result)`` gives each row's IP version and
        addresses (:func:`addresses`)."""
        for r in results:
            version, src, dst = where(r)
            self.python.append((
                index + 1, time, 0, 0, r.offset, -1 if r.field is None else r.field,
                -1 if r.stored is None else r.stored, -1 if r.computed is None else r.computed, name_code(r.layer),
                name_code(r.path), 0, r.depth, 0, {None: -1, False: 0, True: 1}[r.ok], _REASON_INDEX[r.reason],
                _STATUS_INDEX[r.status], version, src.ljust(16, b"\0"), dst.ljust(16, b"\0")))

    def take(self, settled: int | None) -> Rows:
        """The rows of the packets before ``settled`` (a packet index; None: every row), in packet order."""
        parts = [t for t in (self.held, *self.parts) if len(t)]
        python = bool(self.python)
        if python:
            parts.append(np.array(self.python, dtype=ROW))
        self.parts, self.python = [], []
        table = empty() if not parts else parts[0] if len(parts) == 1 else _join(parts)
        # each packet's rows come from one part, in order, and the Python walker's packets in the order their datagrams
        # were settled (fragments interleaved: not packet order): a stable sort puts the packets in order, keeps rows
        if len(parts) > 1 or python:
            table = table[np.argsort(table["frame"], kind="stable")]
        cut = len(table) if settled is None else int(np.searchsorted(table["frame"], settled + 1))
        self.held = table[cut:]
        return Rows(table[:cut])


def _join(parts: list[np.ndarray]) -> np.ndarray:
    """The tables end to end, laid out as ROW (np.concatenate would drop its padding)."""
    out = np.empty(sum(len(p) for p in parts), dtype=ROW)
    at = 0
    for p in parts:
        out[at : at + len(p)] = p
        at += len(p)
    return out


def tally(report: Report, table: np.ndarray) -> None:
    """Count the C walker's rows ``table`` in ``report``: counts per protocol and depth, and the bad and offload
    fields as Results (in ``report.bad`` / ``report.offload``)."""
    combined = (table["layer"].astype(np.int64) * 256 + table["depth"]) * 8 + table["status"]
    values, n = np.unique(combined, return_counts=True)
    for value, k in zip(values.tolist(), n.tolist()):
        layer, depth = divmod(value // 8, 256)
        key = depth_key(NAMES[layer], depth)
        row = report.counts.get(key)
        if row is None:
            row = report.counts[key] = zero_counts()
        row[STATUSES[value % 8].value] += k
    for index, r in Rows(table[wrong(table)]).results():
        (report.bad if r.status is Status.BAD else report.offload).append((index, r))


def wrong(table: np.ndarray) -> np.ndarray:
    """Which rows are a field csum fix corrects (bad or offload)."""
    return np.isin(table["status"], [_STATUS_INDEX[s] for s in FIX])
