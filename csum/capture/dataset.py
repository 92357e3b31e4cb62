"""The rows of a directory of captures as a Hive-partitioned Parquet dataset (``csum verify DIR --format parquet
--out OUTDIR``; the ``[arrow]`` extra).

Each capture's rows (:mod:`csum.capture.arrow`'s schema) go to ``OUTDIR/file=<its path under DIR>/part-0.parquet``,
the path percent-encoded as Hive partition values are (``/`` is ``%2F``: pyarrow's ``segment_encoding="uri"``, which
DuckDB, pandas and Dask decode too), so readers of the dataset get a ``file`` column from the directory names. With
``by_date``, each row goes under the UTC date of its packet's timestamp first:
``OUTDIR/date=YYYY-MM-DD/file=<path>/part-0.parquet`` (rows without a timestamp under
``date=__HIVE_DEFAULT_PARTITION__``, which pyarrow reads as null). Every part file is written as ``verify --out``
writes its one file (:class:`csum.capture.output.AtomicFile`: complete or absent), and only where no file is:
:meth:`Dataset.taken` lists the parts that exist already, for the caller to refuse unless forced.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .arrow import ParquetSink
from .rowtext import COLUMNS
from .output import AtomicFile, target
from .rows import Rows

__all__ = ["NO_DATE", "Dataset", "partition"]

#: The date partition of rows without a timestamp (Hive's name for a null partition value).
NO_DATE = "__HIVE_DEFAULT_PARTITION__"
#: The one part file of each partition directory.
PART = "part-0.parquet"
_DAY_NS = 86_400 * 10**9


def partition(key: str, value: str) -> str:
    """A Hive partition directory's name, ``key=value`` with the value percent-encoded (every byte but letters,
    digits and ``_.-~``)."""
    return f"{key}={urllib.parse.quote(value, safe='')}"


class Dataset:
    """Writes the parts of the dataset under ``root`` (see the module docstring): :meth:`begin` one capture, feed it
    its rows (a :data:`csum.capture.checker.TableSink`), then :meth:`commit` or :meth:`discard`."""

    def __init__(self, root: str | os.PathLike[str], *, by_date: bool = False, follow_symlinks: bool = False,
                 force: bool = False, writer: Callable[[AtomicFile, Path], Any] | None = None) -> None:
        """``writer(out, path)``: what pyarrow writes a part through (csum verify's names a write error as one);
        default the part's AtomicFile itself."""
        self.root, self.by_date = Path(root), by_date
        self._follow, self._force = follow_symlinks, force
        self._writer = writer or (lambda out, path: out)
        self._rel = ""
        self._parts: dict[str, tuple[AtomicFile, ParquetSink]] = {}

    def taken(self, rels: list[str]) -> list[Path]:
        """The part files of the captures ``rels`` that exist already (under any date with ``by_date``)."""
        found = []
        dates = sorted(p for p in self.root.glob("date=*") if p.is_dir()) if self.by_date else [self.root]
        for rel in rels:
            for base in dates:
                path = base / partition("file", rel) / PART
                if os.path.lexists(path):
                    found.append(path)
        return found

    def begin(self, rel: str) -> None:
        """Start the parts of the capture at ``rel`` (its path under the directory read)."""
        self._rel, self._parts = rel, {}

    def _part(self, date: str | None) -> ParquetSink:
        base = self.root if date is None else self.root / partition("date", date)
        path = base / partition("file", self._rel) / PART
        key = str(path)
        if key not in self._parts:
            path.parent.mkdir(parents=True, exist_ok=True)
            out = AtomicFile(target(path, follow_symlinks=self._follow, force=self._force, what="--out part"))
            out.__enter__()
            try:
                # no file column in a part: the partition's directory name is it (a column too would clash)
                self._parts[key] = (out, ParquetSink(self._writer(out, path), columns=COLUMNS))
            except BaseException:
                out.__exit__(None, None, None)
                raise
        return self._parts[key][1]

    def __call__(self, rows: Rows) -> None:
        if not self.by_date:
            self._part(None).write(rows)
            return
        times = rows.table["time"]
        missing = times == np.iinfo(np.int64).min  # csum.capture.arrow's null time
        if missing.any():
            self._part(NO_DATE).write(Rows(rows.table[missing]))
        days = times // _DAY_NS
        for day in np.unique(days[~missing]).tolist():
            self._part(str(np.datetime64(day, "D"))).write(Rows(rows.table[~missing & (days == day)]))

    def commit(self) -> list[Path]:
        """Finish and name every part of the capture begun (one with no rows, without ``by_date``: a part with the
        schema and no row, so that every capture has its partition); the paths written."""
        if not self._parts and not self.by_date:
            self._part(None)
        written = []
        for key, (out, sink) in self._parts.items():
            sink.close()
            out.commit()
            out.__exit__(None, None, None)
            written.append(Path(key))
        self._parts = {}
        return written

    def discard(self) -> None:
        """Drop every part of the capture begun: none is named."""
        for out, sink in self._parts.values():
            sink.discard()
            out.__exit__(None, None, None)
        self._parts = {}

