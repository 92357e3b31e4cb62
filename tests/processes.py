"""Watching csum processes from the tests: a pipe drained, the processes a run leaves (from /proc)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path


def default_signals() -> None:
    """A child's ``preexec_fn``: SIGINT, SIGTERM and SIGHUP back to their defaults. A job started in the background
    (``cmd &``) inherits SIGINT ignored and one under ``nohup`` SIGHUP ignored; csum then rightly leaves them
    ignored, and a test of what it does on those signals would test the parent's shell instead."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def drained(proc: subprocess.Popen, settle: float = 0.3) -> None:
    """Wait until ``proc`` has read everything written to its stdin pipe (so it is inside its read loop, waiting for
    more), then ``settle`` seconds more."""
    deadline = time.monotonic() + 60
    buf = bytearray(4)
    while time.monotonic() < deadline:
        fcntl.ioctl(proc.stdin.fileno(), termios.FIONREAD, buf)
        if int.from_bytes(buf, sys.byteorder) == 0:
            time.sleep(settle)
            return
        time.sleep(0.05)
    raise AssertionError("the process never read its input")


def leftovers(marker: str) -> list[int]:
    """Pids of the processes whose command line contains ``marker`` (a csum run and its forked workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def gone(marker: str, timeout: float = 15.0) -> bool:
    """Whether every process whose command line contains ``marker`` ends within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not leftovers(marker):
            return True
        time.sleep(0.05)
    return False


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (its main thread's, as /proc lists them)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]
