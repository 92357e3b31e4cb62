"""What every command's arguments share: the usage error, argument types, and the one way to write a file."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import CsumUsageError as UsageError

__all__ = ["UsageError", "add_quiet", "add_read_write", "align", "check_show", "chunk_bytes", "hex_bytes", "integer",
           "jobs", "positive", "write_text"]


def add_quiet(cmd: argparse.ArgumentParser) -> None:
    """``-q``/``--quiet`` of verify, fix and rewrite: no report, no progress, no warning; the exit code says it."""
    cmd.add_argument("-q", "--quiet", action="store_true", help="print no report, progress or warning: the exit code "
                     "only (errors still go to standard error; rows and a capture written to - are still written)")


def add_read_write(cmd: argparse.ArgumentParser, write: bool) -> None:
    """tcpdump's and tshark's ``-r IN`` (and ``-w OUT`` when ``write``), taken beside the positional IN and OUT
    (csum.cli.parser.settle merges them)."""
    cmd.add_argument("-r", dest="read", action="append", default=[], metavar="IN",
                     help="read IN (as tcpdump -r: the same as giving IN)")
    if write:
        cmd.add_argument("-w", dest="write", metavar="OUT", help="write OUT (as tcpdump -w: the same as giving OUT)")


def integer(text: str) -> int:
    """An argparse type: a decimal or 0x-prefixed integer."""
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (decimal or 0x-prefixed hex)") from None


def align(text: str) -> int:
    """An argparse type: a buffer's address mod 8 (0..7)."""
    value = integer(text)
    if not 0 <= value <= 7:
        raise argparse.ArgumentTypeError(f"an address mod 8 is 0..7, got {value}")
    return value


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    n = integer(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def jobs(text: str) -> int:
    """An argparse type: a number of processes, 1 to :func:`csum.core.inputs.max_jobs` (the message says why)."""
    from ..core.inputs import check_jobs
    from ..errors import CsumError

    try:
        return check_jobs(positive(text), "--jobs")
    except CsumError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--jobs ")) from None


def chunk_bytes(text: str) -> int:
    """An argparse type: bytes of records per chunk, 1 to :data:`csum.capture.pcap.MAX_CHUNK_BYTES`."""
    from ..capture.pcap import MAX_CHUNK_BYTES

    n = positive(text)
    if n > MAX_CHUNK_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_CHUNK_BYTES} (1 GiB: a chunk is held in memory "
                                         f"whole), got {n}")
    return n


def hex_bytes(text: str) -> bytes:
    """Bytes written as hex (spaces and colons allowed, 0x prefix too); a UsageError otherwise."""
    cleaned = "".join(text.split()).replace(":", "")
    if cleaned.startswith(("0x", "0X")):
        cleaned = cleaned[2:]
    bad = next((c for c in cleaned if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise UsageError(f"not a hex string: {text[:40]!r} ({bad!r} is not a hex digit)")
    if len(cleaned) % 2:
        raise UsageError(f"odd number of digits in {text[:40]!r}: {len(cleaned)} hex digits, bytes need pairs")
    return bytes.fromhex(cleaned)


def check_show(args: argparse.Namespace) -> None:
    """``--show`` is 0 or more."""
    if args.show < 0:
        raise UsageError(f"--show must be 0 or more, got {args.show}")


def write_text(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` as csum fix writes OUT (csum.capture.output.write_text); ``what`` names the option in
    the error."""
    from ..capture.output import write_text as write
    from ..errors import CsumValueError

    try:
        write(path, text, what)
    except CsumValueError as exc:
        raise UsageError(str(exc)) from None
