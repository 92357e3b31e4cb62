"""``csum fix IN OUT``: a copy of a capture with every wrong checksum corrected, written only to a regular file and
atomically (csum.capture.output).

The exit code says what OUT is: 0 IN byte for byte (nothing needed correcting), 1 IN with checksum fields
changed (wrong ones corrected, transmit-offload fields filled in: the summary counts each), 2 not written
(or, with --keep-going, written from an input that could not be read whole).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from .. import schemas
from ..errors import CsumStdoutFailed
from . import progress
from .args import UsageError, add_read_write, check_show
from .exits import SIGNAL_CODES
from .scans import Sink, add_common, count, exit_code, report_problems, scan_json, scan_one, scan_text, unread

if TYPE_CHECKING:
    from ..capture.scan import Scan
    from ..explain.capture import Collector

EXIT_CODES = f"""exit codes:
  0    OUT written, and OUT is IN byte for byte: no checksum needed correcting
  1    OUT written with checksum fields changed: wrong ones corrected, transmit-offload fields filled in
       (the summary counts each)
  2    OUT not written: IN could not be read whole (not a capture, unreadable, a damaged record,
       compressed data cut, corrupt or followed by garbage), with --strict packets on link types csum
       cannot look into, a bad argument, or an OUT csum will not replace; with --keep-going,
       OUT is written from what could be read and the code is still 2. Also 2 when standard output
       could not be written (the message says whether OUT was)
{SIGNAL_CODES}
       (after a signal OUT is not written)"""


#: The command's name on the command line.
NAME = "fix"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``fix`` subcommand's arguments."""
    fix = sub.add_parser(NAME, help="copy a capture with every wrong checksum corrected", epilog=EXIT_CODES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    fix.add_argument("file", nargs="?", metavar="IN", help="the capture (as for verify; - for standard input)")
    fix.add_argument("out", nargs="?", metavar="OUT", help="a regular file to write (compressed when it ends in .gz, .bz2, .xz "
                     "or .zst)")
    fix.add_argument("--follow-symlinks", action="store_true", help="OUT may be a symbolic link: replace its target")
    fix.add_argument("--force", action="store_true", help="replace OUT even if it is read-only")
    fix.add_argument("--keep-going", action="store_true", help="write OUT even when IN cannot be read whole: what "
                     "could be read, checked and corrected, then the rest as far as it reads (exit code still 2)")
    fix.add_argument("--strict", action="store_true",
                     help="packets on link types csum cannot look into are an input error (exit 2, OUT not written)")
    fix.add_argument("--fix-embedded", action="store_true",
                     help="correct the checksums of embedded packets too (sFlow samples, OpenFlow packet-ins: copies "
                     "of other packets, left as they are by default)")
    fix.add_argument("--explain", action="store_true",
                     help="say why each corrected checksum was wrong, where one simulated mistake gives the stored "
                     "bytes exactly (cause ids: docs/explain.md): per field in the list and the JSON, per cause and "
                     "flow in the summary (the wrong packets are copied as IN is read: standard input too)")
    add_common(fix)
    add_read_write(fix, write=True)
    fix.set_defaults(func=run)
    return fix


def run(args: argparse.Namespace) -> int:
    """``csum fix IN OUT``."""
    from ..capture.output import AtomicFile, target

    check_show(args)
    if args.out == "-":
        raise UsageError("OUT must be a file name: csum fix writes regular files only")
    path = target(args.out, [] if args.file == "-" else [args.file], follow_symlinks=args.follow_symlinks,
                  force=args.force)
    bar = progress.Bar(sys.stderr, "fix", quiet=args.quiet)
    try:
        with AtomicFile(path) as out:
            collected = _collector(args)
            scan = scan_one(args, args.file, bar, sink=Sink(out, args.out), collect=collected)
            if collected is not None and scan.report.total("bad") + scan.report.total("offload"):
                from ..explain.capture import explain_capture

                bar.phase(f"explaining {args.file}")
                scan.explained = explain_capture(collected, scan.report)
            code = exit_code([scan], args)
            written = code != 2 or (args.keep_going and unread(scan))
            if written:
                bar.show(f"syncing {args.out}")
                try:
                    out.commit()
                except OSError as exc:
                    raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    except OSError as exc:  # the temporary file could not be made or written
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    if code == 0 and scan.patched:  # offload fields filled in: OUT is not IN
        code = 1
    try:
        if not args.quiet:
            _print(scan, args, written)
    except CsumStdoutFailed as exc:
        exc.note = f"{args.out} was written" if written else None
        raise
    if not written:
        tail = f"; {args.out} not written"
    elif unread(scan):
        tail = f"; --keep-going: wrote {args.out} with every frame before it checked, the rest copied as it read"
    else:
        tail = ""
    report_problems([scan], args, code, tail)
    return code


def _collector(args: argparse.Namespace) -> Collector | None:
    """--explain: a csum.explain.capture.Collector, which copies the wrong packets as IN is checked."""
    if not args.explain:
        return None
    from ..explain.capture import Collector

    return Collector()


def _print(scan: Scan, args: argparse.Namespace, written: bool) -> None:
    """The report and, when OUT was written, what changed in it."""
    if args.json:
        doc = schemas.document(NAME, scan_json(scan, args.show))
        doc.update(out=args.out if written else None, fixed_checksums=scan.patched,
                   offload_filled=scan.offload_filled, fixed_packets=scan.patched_packets)
        print(json.dumps(doc, indent=2))
        return
    print(scan_text(scan, args.show, only=args.only))
    if written:
        corrected = count(scan.patched - scan.offload_filled, "checksum")
        filled = count(scan.offload_filled, "transmit-offload field")
        print(f"\nwrote {args.out}: {corrected} corrected and {filled} filled in, in "
              f"{count(scan.patched_packets, 'packet')}; every other byte copied unchanged (cut, malformed and "
              "unchecked packets included)")
