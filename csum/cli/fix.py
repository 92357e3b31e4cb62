"""``csum fix IN OUT``: a copy of a capture with every wrong checksum corrected, written only to a regular file and
atomically (csum.capture.output).

The exit code says what OUT is: 0 IN byte for byte (nothing needed correcting), 1 IN with checksum fields
changed (wrong ones corrected, transmit-offload fields filled in: the summary counts each), 2 not written
(or, with --keep-going, written from an input that could not be read whole).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import schemas
from ..errors import CsumStdoutFailed
from . import progress
from .args import UsageError, add_read_write, check_show
from .exits import SIGNAL_CODES
from .trees import Listing, is_dir, outputs, skipped_text, tree
from .scans import Sink, add_common, count, exit_code, report_problems, scan_json, scan_one, scan_text, small_files
from .scans import unread

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
    fix.add_argument("file", nargs="?", metavar="IN", help="the capture (as for verify; - for standard input), or a "
                     "directory: every capture under it, found by its magic bytes")
    fix.add_argument("out", nargs="?", metavar="OUT", help="a regular file to write (compressed when it ends in .gz, .bz2, .xz "
                     "or .zst); for a directory IN, OUTDIR: each copy at its relative path under it, new files only")
    fix.add_argument("--follow-symlinks", action="store_true", help="OUT may be a symbolic link: replace its target; "
                     "with a directory IN, symbolic links in it are followed (not by default)")
    fix.add_argument("--force", action="store_true", help="replace OUT even if it is read-only; with a directory IN, "
                     "replace files that exist under OUTDIR")
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
    """``csum fix IN OUT``; ``csum fix DIR OUTDIR`` (:func:`_run_tree`)."""
    from ..capture.output import target

    check_show(args)
    if args.out == "-":
        raise UsageError("OUT must be a file name: csum fix writes regular files only")
    if is_dir(args.file):
        return _run_tree(args)
    path = target(args.out, [] if args.file == "-" else [args.file], follow_symlinks=args.follow_symlinks,
                  force=args.force)
    bar = progress.Bar(sys.stderr, "fix", quiet=args.quiet)
    try:
        scan, code, written = _fix(args, args.file, args.out, path, bar)
    finally:
        bar.close()
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


def _fix(args: argparse.Namespace, name: str, out_name: str, path: Path, bar: progress.Bar, jobs: int | None = None,
         **compression: str | None) -> tuple[Scan, int, bool]:
    """Check ``name`` and write its corrected copy to ``path`` (``out_name`` in messages) atomically (``compression=``:
    as csum.capture.output.AtomicFile takes it; by default the one OUT's name says): the scan, the exit code (1 when a
    field changed) and whether the copy was written; ``jobs``: its processes when not ``args.jobs``."""
    from ..capture.output import AtomicFile

    try:
        with AtomicFile(path, **compression) as out:
            collected = _collector(args)
            scan = scan_one(args, name, bar, sink=Sink(out, out_name), jobs=jobs, collect=collected)
            if collected is not None and scan.report.total("bad") + scan.report.total("offload"):
                from ..explain.capture import explain_capture

                bar.phase(f"explaining {name}")
                scan.explained = explain_capture(collected, scan.report)
            code = exit_code([scan], args)
            written = code != 2 or (args.keep_going and unread(scan))
            if written:
                bar.show(f"syncing {out_name}")
                try:
                    out.commit()
                except OSError as exc:
                    raise UsageError(f"cannot write {out_name}: {exc.strerror or exc}") from None
    except OSError as exc:  # the temporary file could not be made or written
        raise UsageError(f"cannot write {out_name}: {exc.strerror or exc}") from None
    if code == 0 and scan.patched:  # offload fields filled in: OUT is not IN
        code = 1
    return scan, code, written


#: What :func:`_fix_entry` gives for one capture: its name, its output's, the scan (None when it could not be
#: checked), the exit code, whether the output was written, and why not (when the scan is None).
Done = tuple[str, str, "Scan | None", int, bool, str]


def _fix_entry(args: argparse.Namespace, bar: progress.Bar | None, jobs: int | None,
               entry: tuple[str, Path, str | None]) -> Done:
    """One capture of ``fix DIR OUTDIR`` (``entry``: its name, its output's path and compression), its failure
    caught; ``bar`` None in a worker process (no progress line)."""
    from ..errors import CsumError, CsumWriteFailed

    name, path, compression = entry
    out_name = str(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return (name, out_name, *_fix(args, name, out_name, path, bar or progress.Bar(sys.stderr, "fix", quiet=True),
                                      jobs, compression=compression), "")
    except CsumWriteFailed:
        raise
    except (CsumError, OSError) as exc:
        reason = str(exc) if isinstance(exc, CsumError) else f"cannot write {out_name}: {exc.strerror or exc}"
        return name, out_name, None, 2, False, reason


def _run_tree(args: argparse.Namespace) -> int:
    """``csum fix DIR OUTDIR``: every capture under DIR (csum.capture.tree) fixed into the same relative path under
    OUTDIR, which gets new files only (csum.cli.trees.outputs); a capture that cannot be read is named on stderr and
    the others are still fixed. The exit code: 2 if any output was not written, else 1 if any changed, else 0."""
    from ..capture.parallel import each_item

    found = tree(args.file, args.follow_symlinks)
    paths = outputs(args.file, found.files, args.out, force=args.force, follow_symlinks=args.follow_symlinks)
    entries = [(name, path, found.compression[rel]) for rel, name, path in zip(found.files, found.paths(), paths)]
    small = set(small_files([name for name, _, _ in entries], args))
    bar = progress.Bar(sys.stderr, "fix", quiet=args.quiet)
    try:
        if small:  # several files of a chunk or less: one per process at a time
            bar.phase(f"fixing {count(len(small), 'file')} in {min(args.jobs, len(small))} processes")
        quick = each_item([e for e in entries if e[0] in small], functools.partial(_fix_entry, args, None, 1),
                          args.jobs)
        by_name = {e[0]: result for e, result in zip((e for e in entries if e[0] in small), quick)}
        done = [by_name[e[0]] if e[0] in small else _fix_entry(args, bar, None, e) for e in entries]
    finally:
        bar.close()
    docs: list[dict[str, object]] = []
    for name, out_name, item, code, written, reason in done:
        if item is None:
            print(f"csum: fix failed for {name}: {reason}; {out_name} not written", file=sys.stderr)
            docs.append({"file": name, "error": reason, "out": None})
            if not args.quiet and not args.json:
                print(f"{name}: not checked: {reason}\n")
            continue
        scan = item
        if not args.quiet and args.json:
            doc = scan_json(scan, args.show)
            doc.update(out=out_name if written else None, fixed_checksums=scan.patched,
                       offload_filled=scan.offload_filled, fixed_packets=scan.patched_packets)
            docs.append(doc)
        elif not args.quiet:
            args.out, keep = out_name, args.out
            _print(scan, args, written)
            args.out = keep
            print()
        report_problems([scan], args, code, "" if written else f"; {out_name} not written")
    codes = [code for *_, code, _w, _r in done]
    code = 2 if 2 in codes else 1 if 1 in codes else 0
    if args.quiet:
        return code
    written_n = sum(w for *_, w, _r in done)
    if args.json:
        print(json.dumps(schemas.document(NAME, {"files": docs, "out": args.out, "written": written_n,
                                                 "directories": Listing([found]).as_json()}), indent=2))
    else:
        print(f"total: {count(len(done), 'capture')}, {written_n} written into {args.out}, "
              f"{sum(c == 1 for c in codes)} with checksums changed, {sum(not w for *_, w, _r in done)} not written; "
              f"{skipped_text(found.skipped, found.links)}")
    return code


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
