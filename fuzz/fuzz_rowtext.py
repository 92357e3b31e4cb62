"""Fuzz target: the row formatter (csum/engine/_rowtext.c ``format_rows``: ``csum verify --format jsonl|csv``) against
its Python twin, :func:`csum.capture.rowtext.python_text`.

The input is rows as the C walker lays them out (:data:`csum.capture.rows.ROW`, 96 bytes each) with every value as
the input has it (frames, times NO_TIME or not, IP versions other than 4 and 6, any
address bytes), except the stored and computed values (16 bits or none) and the indexes into csum's name tables (layer,
path, reason, status), taken modulo the tables' lengths. The bytes after the last whole row choose the columns
(``--fields``) and the file column's text: none, the default columns; else its first byte says how many of the next
bytes name columns (each modulo :data:`~csum.capture.rowtext.ALL_COLUMNS`' length, repeats dropped), and the rest is
the file name (UTF-8, undecodable bytes kept as os.fsdecode keeps them). JSON Lines and CSV: the same bytes from both.

Name index 0 (no name) is left out: the C writes an empty name as ``""`` in CSV where Python's csv module writes
nothing (both read back as an empty field; a row of ``csum verify`` always has a layer and a path). Found by this
target at once; the C is another change's to align.
"""

from __future__ import annotations

import numpy as np
from fuzz_common import assert_equal

from csum import engine
from csum.capture import rows as rows_module
from csum.capture import rowtext


#: Names the rows may point to (as a capture's rows do: protocols and their paths).
for _name in ("ipv4", "ipv6", "tcp", "udp", "icmp", "icmpv6", "eth/ipv4", "eth/ipv4/udp", "eth/ipv6/tcp", "ip/gre"):
    rows_module.name_code(_name)


def table(data: bytes) -> np.ndarray:
    """The rows of ``data``: whole 96-byte rows, name indexes brought into their tables (1 and up for names)."""
    n = len(data) // rows_module.ROW.itemsize
    t = np.frombuffer(data[: n * rows_module.ROW.itemsize], dtype=rows_module.ROW).copy()
    names = len(rows_module.NAMES) - 1
    t["layer"] = 1 + t["layer"] % names
    t["path"] = 1 + t["path"] % names
    for column in ("stored", "computed"):  # 16-bit checksums, -1 for none (wider ones the two write differently)
        t[column] = np.where(t[column] < 0, -1, t[column] & 0xFFFF)
    t["reason"] %= len(rows_module.REASONS)
    t["status"] %= len(rows_module.STATUSES)
    return t


def choice(data: bytes) -> tuple[str | None, tuple[str, ...] | None]:
    """The file name and columns the bytes after the last whole row of ``data`` choose (see the module docstring)."""
    tail = data[len(data) - len(data) % rows_module.ROW.itemsize :]
    if not tail:
        return None, None
    named = tail[1 : 1 + tail[0] % len(rowtext.ALL_COLUMNS)]
    columns = tuple(dict.fromkeys(rowtext.ALL_COLUMNS[b % len(rowtext.ALL_COLUMNS)] for b in named)) or None
    return tail[1 + len(named) :].decode("utf-8", "surrogateescape"), columns


def one_input(data: bytes) -> None:
    assert engine.cwalk is not None, "the C walker is not built or CSUM_ENGINE is not c"
    rows = rows_module.Rows(table(data))
    file, columns = choice(data)
    for as_csv in (False, True):
        assert_equal(rowtext.text(rows, as_csv, file, columns), rowtext.python_text(rows, as_csv, file, columns),
                     f"format_rows(as_csv={as_csv}, file={file!r}, columns={columns})")
