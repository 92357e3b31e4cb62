"""One progress line for the CLI, drawn only on a terminal: ``csum verify: checking in.pcap  45% (1.2 of 2.7 GB)``.

The line names the phase it is in (``checking``, ``checking and writing``,
``syncing``, ``waiting for the cluster`` ...); a new phase redraws the same line
with its label instead of silently restarting at 0 %. Anything that is not a
terminal (a log file, a pipe) gets nothing at all, so logs stay free of ``\\r``.
"""

from __future__ import annotations

import time
from typing import TextIO

#: Files below this size finish before a bar would help.
MIN_BYTES = 16 << 20


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


class Bar:
    """Progress of ``command`` on ``stream`` (usually stderr); silent unless ``stream.isatty()`` and not ``quiet``."""

    def __init__(self, stream: TextIO, command: str, quiet: bool = False) -> None:
        self._stream, self._command = stream, command
        self.enabled = stream.isatty() and not quiet
        self._label, self._last, self._width = "", 0.0, 0

    def phase(self, label: str) -> None:
        """Start a new phase; its label is shown from the next update on."""
        self._label = label
        self._last = 0.0

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` bytes of ``total`` (None: unknown) processed; redrawn at most ten times a second."""
        if not self.enabled or (total is not None and total < MIN_BYTES and done < MIN_BYTES):
            return
        now = time.monotonic()
        if now - self._last < 0.1 and (total is None or done < total):
            return
        self._last = now
        amount = f"{100 * done // max(total, 1):3d}% ({_size(done)} of {_size(total)})" if total else _size(done)
        self._draw(f"csum {self._command}: {self._label} {amount}")

    def show(self, text: str) -> None:
        """A phase without a measure of its own (e.g. the final fsync)."""
        if self.enabled and self._width:
            self._draw(f"csum {self._command}: {text}")

    def _draw(self, line: str) -> None:
        pad = max(self._width - len(line), 0)
        self._stream.write("\r" + line + " " * pad)
        self._stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Erase the line (if one was drawn)."""
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
            self._width = 0
