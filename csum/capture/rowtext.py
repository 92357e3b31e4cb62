"""Rows as text: ``csum verify --format jsonl`` (JSON Lines) and ``--format csv``.

One line per checksum field (:mod:`csum.capture.rows`), with the columns of :data:`COLUMNS` (or those ``--fields``
chooses, :func:`fields`; and first, when several inputs are read, ``file``: the input's name as given): ``frame``
(from 1, tshark's ``frame.number``), ``time`` (seconds since the epoch with nine decimals, tshark's
``frame.time_epoch``; null/empty where the capture records none), ``src`` and ``dst`` (the addresses of the IP
header above the field, as Python's :mod:`ipaddress` writes them; null/empty for a field with no IP header above
it), ``protocol``, ``path``, ``depth``, ``offset`` (the checksum field's own offset in the frame), ``stored`` and
``computed`` (``0x%04x``; null when absent), ``status`` and ``reason``. JSON is written as :func:`json.dumps`
writes each object; CSV as the :mod:`csv` module writes its rows (``\\n`` line ends), after a header line. Each row
follows the JSON Schema ``csum.rows`` (:mod:`csum.schemas`).

The C walker's ``format_rows`` (csum/engine/_rowtext.c) writes the text where it is built; :func:`python_text` is
its twin and the reference (tests/capture/test_rowtext.py checks that both write the same bytes).
"""

from __future__ import annotations

import csv
import difflib
import io
import ipaddress
import json
from collections.abc import Callable

import numpy as np

from .. import engine
from ..errors import CsumUsageError
from ..layers import Status
from .pcap import NO_TIME
from .rows import NAMES, REASONS, STATUSES, Rows
from ..layers.table import ADDR_SIZES

__all__ = ["ALL_COLUMNS", "COLUMNS", "FILE", "ONLY", "TextSink", "csv_header", "fields", "only", "python_text",
           "text"]

#: The column naming the input a row comes from: first, whenever several inputs are read (and always in Parquet).
FILE = "file"
#: The columns of every row output, in order (also the Arrow table's: csum/capture/arrow.py).
COLUMNS = ("frame", "time", "src", "dst", "protocol", "path", "depth", "offset", "stored", "computed", "status",
           "reason")
#: Every column a row may have, in the order of the ids csum/engine/_rowtext.c's format_rows takes.
ALL_COLUMNS = (FILE, *COLUMNS)
_IDS = {name: k for k, name in enumerate(ALL_COLUMNS)}
#: ``--only``: the statuses (:class:`~csum.layers.Status`) whose rows and list entries are kept.
ONLY = {"bad": (Status.BAD,), "offload": (Status.OFFLOAD,),
        "not-ok": tuple(s for s in Status if s is not Status.OK)}


def fields(text: str, file: bool = False) -> tuple[str, ...]:
    """The columns ``--fields`` names (comma-separated, in that order), or a :class:`CsumUsageError` naming --fields
    and the closest column to an unknown name; ``file``: the ``file`` column is among the choices (several inputs,
    or Parquet)."""
    choices = ALL_COLUMNS if file else COLUMNS
    names = [name.strip() for name in text.split(",")]
    for name in names:
        if name not in choices:
            close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
            hint = " (a column of several inputs, or of parquet)" if name == FILE else \
                f" (did you mean {close[0]}?)" if close else ""
            raise CsumUsageError(f"--fields: unknown column {name!r}{hint}; the columns are {', '.join(choices)}")
        if names.count(name) > 1:
            raise CsumUsageError(f"--fields: {name} is named twice")
    return tuple(names)


def only(rows: Rows, which: str | None) -> Rows:
    """The rows whose status ``--only which`` keeps (:data:`ONLY`; None: every row)."""
    if which is None:
        return rows
    keep = [STATUSES.index(s) for s in ONLY[which]]
    return Rows(rows.table[np.isin(rows.table["status"], keep)])


def _csv_field(value: str) -> str:
    """``value`` as :func:`python_text`'s CSV writer writes it in a row (quoted when it holds a comma, a quote or the
    line end: the writer's line terminator decides which characters need quotes, so it is the same here)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([value])
    return out.getvalue()[:-1]


def _encoded(text: str) -> bytes:
    """Text as the rows' bytes hold it (a file name's undecodable bytes as they were: os.fsdecode's surrogates)."""
    return text.encode("utf-8", "surrogateescape")


class _Texts:
    """The names, reasons and statuses encoded for one format, as format_rows takes them (grown with NAMES)."""

    def __init__(self, as_csv: bool) -> None:
        self.encode = (lambda s: _encoded(_csv_field(s))) if as_csv else (lambda s: _encoded(json.dumps(s)))
        self.names: list[bytes] = []
        self.reasons = [self.encode(str(r)) for r in REASONS]
        self.statuses = [self.encode(str(s)) for s in STATUSES]

    def update(self) -> list[bytes]:
        self.names += [self.encode(name) for name in NAMES[len(self.names) :]]
        return self.names


_TEXTS = {False: _Texts(False), True: _Texts(True)}


def csv_header(columns: tuple[str, ...] = COLUMNS) -> str:
    """The CSV output's first line."""
    return ",".join(columns) + "\n"


def text(rows: Rows, as_csv: bool = False, file: str | None = None, columns: tuple[str, ...] | None = None) -> bytes:
    """``rows`` as JSON Lines (or CSV lines, without the header), in C where it is built: the ``columns`` of
    :data:`ALL_COLUMNS` (default :data:`COLUMNS`, after ``file`` when ``file`` names the input the rows come from)."""
    columns = _columns(file, columns)
    cwalk = engine.cwalk
    if cwalk is None:
        return python_text(rows, as_csv, file, columns)
    texts = _TEXTS[as_csv]
    return cwalk.format_rows(np.ascontiguousarray(rows.table), as_csv, texts.update(), texts.reasons, texts.statuses,
                             None if file is None else texts.encode(file) if file or not as_csv else b"",
                             bytes(_IDS[c] for c in columns))


def _columns(file: str | None, columns: tuple[str, ...] | None) -> tuple[str, ...]:
    if columns is None:
        return COLUMNS if file is None else ALL_COLUMNS
    if FILE in columns and file is None:
        raise ValueError("the file column needs a file name")
    return columns


def _time(t: int) -> str | None:
    if t == NO_TIME:
        return None
    sec, ns = divmod(t, 1_000_000_000)
    return f"{sec}.{ns:09d}"


def _address(version: int, raw: bytes) -> str | None:
    if version not in (4, 6):
        return None
    return str(ipaddress.ip_address(raw[:ADDR_SIZES[version]]))


def _hex16(value: int) -> str | None:
    return None if value < 0 else f"{value:#06x}"


def python_text(rows: Rows, as_csv: bool = False, file: str | None = None,
                columns: tuple[str, ...] | None = None) -> bytes:
    """What :func:`text` writes, in Python (the reference of csum/engine/_rowtext.c)."""
    columns = _columns(file, columns)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n") if as_csv else None
    t = rows.table
    for frame, time, ver, src, dst, layer, path, depth, at, stored, computed, status, reason in zip(
            t["frame"].tolist(), t["time"].tolist(), t["ipver"].tolist(), t["src"].tolist(), t["dst"].tolist(),
            t["layer"].tolist(), t["path"].tolist(), t["depth"].tolist(), t["field"].tolist(), t["stored"].tolist(),
            t["computed"].tolist(), t["status"].tolist(), t["reason"].tolist()):
        values = {"file": file, "frame": frame, "time": _time(time), "src": _address(ver, src),
                  "dst": _address(ver, dst), "protocol": NAMES[layer], "path": NAMES[path], "depth": depth,
                  "offset": None if at < 0 else at, "stored": _hex16(stored), "computed": _hex16(computed),
                  "status": str(STATUSES[status]), "reason": str(REASONS[reason])}
        if writer is not None:
            writer.writerow(["" if values[c] is None else values[c] for c in columns])
            continue
        encoded = {c: json.dumps(values[c]) for c in columns}
        if "time" in encoded and values["time"] is not None:  # the time: a number with its nine decimals
            encoded["time"] = str(values["time"])
        out.write("{" + ", ".join(f'"{k}": {v}' for k, v in encoded.items()) + "}\n")
    return _encoded(out.getvalue())


class TextSink:
    """Rows written as they come, as JSON Lines or CSV (its header line first, naming ``extra`` columns after the
    rows' own: csum.explain's sink writes their values), through ``write`` (bytes): the ``columns`` of
    :data:`ALL_COLUMNS` (default: :data:`COLUMNS`, after ``file`` when ``file`` is given), the rows ``--only`` keeps
    (:func:`only`); ``file()`` names the input being read (for the file column)."""

    def __init__(self, write: Callable[[bytes], object], as_csv: bool = False, extra: tuple[str, ...] = (),
                 columns: tuple[str, ...] | None = None, keep: str | None = None,
                 file: Callable[[], str] | None = None) -> None:
        self.write, self.as_csv, self.keep, self.file = write, as_csv, keep, file
        self.columns = columns if columns is not None else COLUMNS if file is None else ALL_COLUMNS
        if as_csv:
            write(_encoded(csv_header(self.columns).rstrip("\n") + "".join("," + name for name in extra) + "\n"))

    def lines(self, rows: Rows) -> bytes:
        """The text of ``rows`` (already chosen by --only)."""
        return text(rows, self.as_csv, None if self.file is None else self.file(), self.columns)

    def __call__(self, rows: Rows) -> None:
        rows = only(rows, self.keep)
        if len(rows):
            self.write(self.lines(rows))

    def close(self) -> None:
        """Nothing is buffered here (for the CLI, like :class:`csum.capture.arrow.ParquetSink`)."""

    def discard(self) -> None:
        """Nothing to end (like :meth:`csum.capture.arrow.ParquetSink.discard`)."""
