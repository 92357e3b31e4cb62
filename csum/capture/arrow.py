"""Rows as an Arrow table, a pandas DataFrame or a Parquet file (the ``[arrow]`` extra: pyarrow and pandas).

One row per checksum field (:mod:`csum.capture.rows`), with the columns of :data:`csum.capture.rowtext.COLUMNS`,
typed (:data:`SCHEMA`): ``frame`` int64 (from 1, tshark's ``frame.number``), ``time`` timestamp[ns, UTC] (null where
the capture records none), ``src`` / ``dst`` the IP header's addresses as text (dictionary-encoded; null for a field
with no IP header above it), ``protocol`` and ``path`` (dictionary-encoded text), ``depth`` uint8, ``offset`` int32
(the checksum field's offset in the frame; null when the field is not in the packet), ``stored`` / ``computed``
uint16 (null when absent or not computable), ``status`` and ``reason`` (dictionary-encoded text). Text values are
those of ``csum verify --format jsonl``; ``stored`` and ``computed`` are the numbers its ``0x%04x`` strings write.
The Parquet file :class:`ParquetSink` writes has a ``file`` column first (dictionary-encoded text: the input's name as
given) and names its schema in its key-value metadata and the Arrow schema's: ``csum.schema`` = ``csum.rows/N``
(:mod:`csum.schemas`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import Code, CsumValueError
from .rows import NAMES, REASONS, STATUSES, Rows
from .. import schemas
from .rowtext import ALL_COLUMNS, COLUMNS, FILE, only
from ..layers.table import ADDR_SIZES

__all__ = ["ParquetSink", "frame", "pyarrow", "record_batch", "schema"]


def pyarrow(what: str) -> ModuleType:
    """The pyarrow module, or the one-line error naming the extra."""
    try:
        import pyarrow as pa
    except ImportError:
        raise CsumValueError(f"{what} needs pyarrow: pip install 'linux-csum[arrow]'",
                             code=Code.MISSING_ARROW) from None
    return pa


def schema(pa: ModuleType, columns: tuple[str, ...] = COLUMNS) -> Any:
    """The rows' Arrow schema (see the module docstring): ``columns`` of :data:`csum.capture.rowtext.ALL_COLUMNS`,
    its metadata naming ``csum.rows/N``."""
    text = pa.dictionary(pa.int32(), pa.string())
    types = {"file": text, "frame": pa.int64(), "time": pa.timestamp("ns", tz="UTC"), "src": text, "dst": text,
             "protocol": text, "path": text, "depth": pa.uint8(), "offset": pa.int32(), "stored": pa.uint16(),
             "computed": pa.uint16(), "status": text, "reason": text}
    return pa.schema([pa.field(name, types[name], nullable=name not in ("file", "frame", "protocol", "path", "depth",
                                                                        "status", "reason"))
                      for name in columns], metadata={schemas.PARQUET_KEY: schemas.name("rows")})


def _names(pa: ModuleType, codes: np.ndarray, names: list[str]) -> Any:
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(names, type=pa.string()))


def _addresses(pa: ModuleType, version: np.ndarray, raw: np.ndarray) -> Any:
    """The addresses as dictionary-encoded text: each distinct one written once (Python's ipaddress), looked up once
    per run of equal ones (a packet's fields share theirs)."""
    n = len(raw)
    words = np.ascontiguousarray(raw).view(np.uint64).reshape(n, 2)
    start = np.ones(n, dtype=bool)
    start[1:] = (words[1:] != words[:-1]).any(axis=1) | (version[1:] != version[:-1])
    firsts = np.flatnonzero(start)
    seen: dict[tuple[int, bytes], int] = {}
    texts: list[str] = []
    codes = np.empty(len(firsts), dtype=np.int32)
    for k, (v, a) in enumerate(zip(version[firsts].tolist(), raw[firsts].tolist())):
        code = seen.get((v, a))
        if code is None:
            code = seen[(v, a)] = len(texts)
            texts.append(str(ipaddress.ip_address(a[:ADDR_SIZES[v]])) if v in ADDR_SIZES else "")
        codes[k] = code
    indices = pa.array(codes[np.cumsum(start) - 1], type=pa.int32(), mask=version == 0)
    return pa.DictionaryArray.from_arrays(indices, pa.array(texts, type=pa.string()))


def _maybe(pa: ModuleType, values: np.ndarray, kind: Any) -> Any:
    missing = values < 0
    return pa.array(np.where(missing, 0, values).astype(kind.to_pandas_dtype()), type=kind, mask=missing)


def record_batch(rows: Rows, pa: ModuleType, file: str | None = None, columns: tuple[str, ...] = COLUMNS) -> Any:
    """``rows`` as an Arrow RecordBatch of :func:`schema` (``columns``; ``file``: the file column's value)."""
    t = rows.table
    time = t["time"]
    arrays = {
        "frame": pa.array(t["frame"], type=pa.int64()),
        "time": pa.array(time, type=pa.timestamp("ns", tz="UTC"), mask=time == np.iinfo(np.int64).min),
        "src": _addresses(pa, t["ipver"], t["src"]), "dst": _addresses(pa, t["ipver"], t["dst"]),
        "protocol": _names(pa, t["layer"], NAMES), "path": _names(pa, t["path"], NAMES),
        "depth": pa.array(t["depth"], type=pa.uint8()),
        "offset": _maybe(pa, t["field"], pa.int32()),
        "stored": _maybe(pa, t["stored"], pa.uint16()), "computed": _maybe(pa, t["computed"], pa.uint16()),
        "status": _names(pa, t["status"], [str(s) for s in STATUSES]),
        "reason": _names(pa, t["reason"], [str(r) for r in REASONS]),
    }
    if FILE in columns:
        if file is None:
            raise ValueError("the file column needs a file name")
        arrays[FILE] = pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(t), dtype=np.int32)),
                                                      pa.array([file], type=pa.string()))
    return pa.RecordBatch.from_arrays([arrays[name] for name in columns], schema=schema(pa, columns))


def frame(table: Any) -> Any:
    """An Arrow table of :func:`schema` as a ``pandas.DataFrame`` (``offset``, ``stored``, ``computed``: pandas'
    nullable integers)."""
    try:
        import pandas as pd
    except ImportError:
        raise CsumValueError("to_pandas needs pandas: pip install 'linux-csum[arrow]'", code=Code.MISSING_ARROW) \
            from None
    pa = pyarrow("to_pandas")
    return table.to_pandas(types_mapper={pa.int32(): pd.Int32Dtype(), pa.uint16(): pd.UInt16Dtype()}.get)


class _Stream:
    """An :class:`~csum.capture.output.AtomicFile` as the file object pyarrow writes to (``out`` None: nowhere)."""

    def __init__(self, out: Any) -> None:
        self.out, self.closed, self.at = out, False, 0

    def write(self, data: Any) -> int:
        data = bytes(data)
        if self.out is not None:
            self.out.write(data)
        self.at += len(data)
        return len(data)

    def tell(self) -> int:
        return self.at

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True


class ParquetSink:
    """Rows written as they come into a Parquet file through ``out`` (an AtomicFile, committed by the caller after
    :meth:`close`); ``extra``: the names of more string columns after the rows' own (csum.explain's cause and
    detail), whose values :meth:`write` takes. ``columns``: which of :data:`~csum.capture.rowtext.ALL_COLUMNS`
    (default: all, ``file`` first, its value ``file()``: the input being read); ``keep``: ``--only``'s choice."""

    def __init__(self, out: Any, extra: tuple[str, ...] = (), columns: tuple[str, ...] = ALL_COLUMNS,
                 keep: str | None = None, file: Callable[[], str] = lambda: "-") -> None:
        self.pa = pyarrow("--format parquet")
        import pyarrow.parquet as pq

        self.columns, self.keep, self.file = columns, keep, file
        self.schema = schema(self.pa, columns)
        for name in extra:
            self.schema = self.schema.append(self.pa.field(name, self.pa.string()))
        self.stream = _Stream(out)
        self.writer = pq.ParquetWriter(self.pa.PythonFile(self.stream, mode="w"), self.schema)

    def __call__(self, rows: Rows) -> None:
        self.write(only(rows, self.keep))

    def write(self, rows: Rows, *extra: list[str | None]) -> None:
        """``rows`` (already chosen by --only), and the values of each extra column (one list per column, a value per
        row)."""
        if not len(rows):
            return
        batch = record_batch(rows, self.pa, self.file(), self.columns)
        if extra:
            batch = self.pa.RecordBatch.from_arrays(
                [*batch.columns, *(self.pa.array(values, type=self.pa.string()) for values in extra)],
                schema=self.schema)
        self.writer.write_batch(batch)

    def close(self) -> None:
        self.writer.close()

    def discard(self) -> None:
        """End the writer without writing (the output is being discarded): else pyarrow's ``__del__`` finishes the
        file later, into an output already closed, and prints an "Exception ignored" traceback."""
        self.stream.out = None
        self.writer.close()
