"""Rows as text: ``csum verify --format jsonl`` (JSON Lines) and ``--format csv``.

One line per checksum field (:mod:`csum.capture.rows`), with the columns of :data:`COLUMNS`: ``frame`` (from 1,
tshark's ``frame.number``), ``time`` (seconds since the epoch with nine decimals, tshark's ``frame.time_epoch``;
null/empty where the capture records none), ``src`` and ``dst`` (the addresses of the IP header above the field, as
Python's :mod:`ipaddress` writes them; null/empty for a field with no IP header above it), ``protocol``, ``path``,
``depth``, ``offset`` (the checksum field's own offset in the frame), ``stored`` and ``computed`` (``0x%04x``; null
when absent), ``status`` and ``reason``. JSON is written as :func:`json.dumps` writes each object; CSV as the
:mod:`csv` module writes its rows (``\\n`` line ends), after a header line.

The C walker's ``format_rows`` (csum/engine/_rowtext.c) writes the text where it is built; :func:`python_text` is
its twin and the reference (tests/capture/test_rowtext.py checks that both write the same bytes).
"""

from __future__ import annotations

import csv
import io
import ipaddress
import json
from collections.abc import Callable

import numpy as np

from .. import engine
from .pcap import NO_TIME
from .rows import NAMES, REASONS, STATUSES, Rows

__all__ = ["COLUMNS", "TextSink", "csv_header", "python_text", "text"]

#: The columns of every row output, in order (also the Arrow table's: csum/capture/arrow.py).
COLUMNS = ("frame", "time", "src", "dst", "protocol", "path", "depth", "offset", "stored", "computed", "status",
           "reason")


def _csv_field(value: str) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([value])
    return out.getvalue()


class _Texts:
    """The names, reasons and statuses encoded for one format, as format_rows takes them (grown with NAMES)."""

    def __init__(self, as_csv: bool) -> None:
        self.encode = (lambda s: _csv_field(s).encode()) if as_csv else (lambda s: json.dumps(s).encode())
        self.names: list[bytes] = []
        self.reasons = [self.encode(str(r)) for r in REASONS]
        self.statuses = [self.encode(str(s)) for s in STATUSES]

    def update(self) -> list[bytes]:
        self.names += [self.encode(name) for name in NAMES[len(self.names) :]]
        return self.names


_TEXTS = {False: _Texts(False), True: _Texts(True)}


def csv_header() -> str:
    """The CSV output's first line."""
    return ",".join(COLUMNS) + "\n"


def text(rows: Rows, as_csv: bool = False) -> bytes:
    """``rows`` as JSON Lines (or CSV lines, without the header), in C where it is built."""
    cwalk = engine.cwalk
    if cwalk is None:
        return python_text(rows, as_csv)
    texts = _TEXTS[as_csv]
    return cwalk.format_rows(np.ascontiguousarray(rows.table), as_csv, texts.update(), texts.reasons, texts.statuses)


def _time(t: int) -> str | None:
    if t == NO_TIME:
        return None
    sec, ns = divmod(t, 1_000_000_000)
    return f"{sec}.{ns:09d}"


def _address(version: int, raw: bytes) -> str | None:
    if version not in (4, 6):
        return None
    return str(ipaddress.ip_address(raw[: 4 if version == 4 else 16]))


def _hex16(value: int) -> str | None:
    return None if value < 0 else f"{value:#06x}"


def python_text(rows: Rows, as_csv: bool = False) -> bytes:
    """What :func:`text` writes, in Python (the reference of csum/engine/_rowtext.c)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n") if as_csv else None
    t = rows.table
    for frame, time, ver, src, dst, layer, path, depth, at, stored, computed, status, reason in zip(
            t["frame"].tolist(), t["time"].tolist(), t["ipver"].tolist(), t["src"].tolist(), t["dst"].tolist(),
            t["layer"].tolist(), t["path"].tolist(), t["depth"].tolist(), t["field"].tolist(), t["stored"].tolist(),
            t["computed"].tolist(), t["status"].tolist(), t["reason"].tolist()):
        values = [frame, _time(time), _address(ver, src), _address(ver, dst), NAMES[layer], NAMES[path], depth,
                  None if at < 0 else at, _hex16(stored), _hex16(computed), str(STATUSES[status]),
                  str(REASONS[reason])]
        if writer is not None:
            writer.writerow(["" if v is None else v for v in values])
            continue
        encoded = [json.dumps(v) for v in values]
        if values[1] is not None:  # the time: a number with its nine decimals
            encoded[1] = values[1]
        out.write("{" + ", ".join(f'"{k}": {v}' for k, v in zip(COLUMNS, encoded)) + "}\n")
    return out.getvalue().encode()


class TextSink:
    """Rows written as they come, as JSON Lines or CSV (its header line first, naming ``extra`` columns after the
    rows' own: csum.explain's sink writes their values), through ``write`` (bytes)."""

    def __init__(self, write: Callable[[bytes], object], as_csv: bool = False, extra: tuple[str, ...] = ()) -> None:
        self.write, self.as_csv = write, as_csv
        if as_csv:
            write((csv_header().rstrip("\n") + "".join("," + name for name in extra) + "\n").encode())

    def __call__(self, rows: Rows) -> None:
        if len(rows):
            self.write(text(rows, self.as_csv))

    def close(self) -> None:
        """Nothing is buffered here (for the CLI, like :class:`csum.capture.arrow.ParquetSink`)."""

    def discard(self) -> None:
        """Nothing to end (like :meth:`csum.capture.arrow.ParquetSink.discard`)."""
