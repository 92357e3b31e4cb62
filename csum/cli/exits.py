"""How a csum command ends when something outside it ends it: a signal, or standard output that cannot be written.

SIGTERM and SIGHUP raise :class:`~csum.errors.CsumInterrupted` in the main thread, a KeyboardInterrupt as Ctrl-C's
SIGINT raises one, so the same cleanup runs for all three: the file being written is discarded
(:class:`csum.capture.output.AtomicFile`), the worker processes are killed (:mod:`csum.capture.parallel`; they
also die with their parent, whatever kills it), and the exit code is 128 + the signal (130, 143, 129). A signal
already ignored when csum starts (``nohup``) stays ignored.

Standard output (and its binary ``buffer``) goes through :class:`Guard`: a write or flush that fails raises
:class:`~csum.errors.CsumStdoutFailed`, which ends the command with exit 2 and one line on stderr, or none when
the reader has left the pipe (EPIPE: ``csum verify x | head``). The verdict was not delivered either way, so the
code is never 0 (``set -o pipefail`` must not read it as "every checksum good").
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, BinaryIO, TextIO

from ..errors import CsumInterrupted, CsumStdoutFailed

__all__ = ["ENDING", "SIGNAL_CODES", "Guard", "guarded_stdout", "interrupted", "signals", "stdout_failed"]

#: The signals that end a command as Ctrl-C does (SIGINT raises KeyboardInterrupt by itself).
ENDING = (signal.SIGTERM, signal.SIGHUP)
#: The rows of every ``--help`` exit-code table that the signals give (128 + the signal, POSIX shells' way).
SIGNAL_CODES = (f"  {128 + signal.SIGINT}  interrupted (Ctrl-C)\n  {128 + signal.SIGTERM}  terminated (SIGTERM)\n"
                f"  {128 + signal.SIGHUP}  terminated (SIGHUP)")


def _raise(signum: int, frame: FrameType | None) -> None:
    raise CsumInterrupted(signum)


@contextmanager
def signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise CsumInterrupted while the block runs (main thread only; a signal ignored stays so)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _raise) for s in ENDING if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def interrupted(exc: KeyboardInterrupt) -> int:
    """The stderr line for a Ctrl-C, SIGTERM or SIGHUP; the exit code, 128 + the signal."""
    signum = exc.signum if isinstance(exc, CsumInterrupted) else signal.SIGINT
    what = "interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"
    print(f"csum: {what}", file=sys.stderr)
    return 128 + signum


class Guard:
    """Standard output whose failed writes raise CsumStdoutFailed, its binary ``buffer`` too (everything else is
    the stream's)."""

    def __init__(self, stream: TextIO | BinaryIO) -> None:
        self.stream = stream

    def write(self, data: Any) -> int:
        """Write all of ``data``. A binary write can return short without an error (CPython's BufferedWriter, given
        more than its buffer, when the reader leaves the pipe in mid-write): the rest is written again, which then
        raises, rather than dropped with exit 0."""
        try:
            n = self.stream.write(data)
            if not isinstance(data, str) and n is not None:
                view, binary = memoryview(data).cast("B"), self.stream  # type: tuple[memoryview, Any]
                while n < len(view):
                    n += binary.write(view[n:]) or 0
            return n
        except OSError as exc:
            raise CsumStdoutFailed(exc.errno or 0, exc.strerror or str(exc)) from None

    @property
    def buffer(self) -> Guard:
        """The binary stream below (``csum rewrite IN -`` writes the capture there), guarded the same way."""
        return Guard(self.stream.buffer)  # type: ignore[union-attr]

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise CsumStdoutFailed(exc.errno or 0, exc.strerror or str(exc)) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """``sys.stdout`` is a :class:`Guard` while the block runs (unless there is no standard output at all)."""
    real = sys.stdout
    if real is None:  # started with fd 1 closed: print() writes nothing, and nothing can fail
        yield
        return
    sys.stdout = Guard(real)
    try:
        yield
    finally:
        sys.stdout = real


def stdout_failed(exc: CsumStdoutFailed) -> int:
    """Stop writing standard output (what is still buffered goes to /dev/null at exit, so Python's own last flush
    cannot fail again) and say why on stderr, unless the reader left the pipe; the exit code, 2."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
        fd = None
    if fd is not None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    if exc.errno != errno.EPIPE:
        command = f"{exc.command} " if exc.command else ""
        note = f" ({exc.note})" if exc.note else ""
        print(f"csum: {command}failed for standard output: {exc.strerror}{note}", file=sys.stderr)
    return 2
