"""``csum fix IN OUT``: a copy of a capture with every wrong checksum corrected, written only to a regular file and
atomically (csum.capture.output)."""

from __future__ import annotations

import argparse
import json
import sys

from . import progress
from .args import UsageError, check_show
from .scans import Sink, add_common, exit_code, report_problems, scan_json, scan_one, scan_text


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``fix`` subcommand's arguments."""
    fix = sub.add_parser("fix", help="copy a capture with every wrong checksum corrected")
    fix.add_argument("file", metavar="IN", help="the capture (as for verify; - for standard input)")
    fix.add_argument("out", metavar="OUT", help="a regular file to write (gzip-compressed when it ends in .gz)")
    fix.add_argument("--follow-symlinks", action="store_true", help="OUT may be a symbolic link: replace its target")
    fix.add_argument("--strict", action="store_true",
                     help="packets on link types csum cannot look into are an input error (exit 2, OUT not written)")
    fix.add_argument("--fix-embedded", action="store_true",
                     help="correct the checksums of embedded packets too (sFlow samples, OpenFlow packet-ins: copies "
                     "of other packets, left as they are by default)")
    add_common(fix)
    fix.set_defaults(func=run)
    return fix


def run(args: argparse.Namespace) -> int:
    """``csum fix IN OUT``."""
    from ..capture.output import AtomicFile, target

    check_show(args)
    if args.out == "-":
        raise UsageError("OUT must be a file name: csum fix writes regular files only")
    path = target(args.out, [] if args.file == "-" else [args.file], follow_symlinks=args.follow_symlinks)
    bar = progress.Bar(sys.stderr, "fix")
    try:
        with AtomicFile(path) as out:
            scan = scan_one(args, args.file, bar, sink=Sink(out, args.out))
            code = exit_code([scan], args)
            if code != 2:
                bar.show(f"syncing {args.out}")
                try:
                    out.commit()
                except OSError as exc:
                    raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    except OSError as exc:  # the temporary file could not be made or written
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    if args.json:
        doc = scan_json(scan, args.show)
        doc.update(out=args.out if code != 2 else None, fixed_checksums=scan.patched,
                   fixed_packets=scan.patched_packets)
        print(json.dumps(doc, indent=2))
    else:
        print(scan_text(scan, args.show))
        if code != 2:
            print(f"\nwrote {args.out}: {scan.patched} checksums corrected in {scan.patched_packets} packets; "
                  f"every other byte copied unchanged (cut, malformed and unchecked packets included)")
    report_problems([scan], args, code, f"; {args.out} not written" if code == 2 else "")
    return code
