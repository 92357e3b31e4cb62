"""``csum verify``: check every Internet checksum of pcap/pcapng captures (csum.scan), or of an archive on a Dask
cluster (csum.dask)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CsumError
from . import progress
from .args import UsageError, add_read_write, check_show, write_text
from .exits import SIGNAL_CODES
from .scans import ROW_FORMATS, Failed, Sink, add_common, exit_code, print_scans, report_problems, scan_each, scan_one
from .trees import expand, is_dir

if TYPE_CHECKING:
    from ..capture.arrow import ParquetSink
    from ..explain.capture import Collector, Explained, ExplainedParquet, ExplainedText
    from ..capture.scan import Scan

EXIT_CODES = f"""exit codes:
  0    every checksum found is good; malformed packets, packets cut by the snap length and a truncated
       last record are reported and do not change the code by themselves
  1    at least one bad checksum (with --strict, transmit-offload fields count as bad)
  2    an input could not be read whole (not a capture, unreadable, a damaged record, compressed data cut,
       corrupt or followed by garbage: whatever was found before it), with --strict packets on link types
       csum cannot look into, a bad argument, or standard output could not be written
{SIGNAL_CODES}"""


#: The command's name on the command line.
NAME = "verify"


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``verify`` subcommand's arguments."""
    ver = sub.add_parser(NAME, help="check every Internet checksum (IPv4, TCP, UDP, ICMP, tunnels ...) in pcap "
                         "or pcapng files", epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    ver.add_argument("files", nargs="*", metavar="FILE", help="a capture (pcap or pcapng, maybe gzip/bzip2/xz/zstd "
                     "compressed), - for standard input, a directory (every capture under it, found by its magic "
                     "bytes, in sorted order), or with --dask any fsspec URL")
    ver.add_argument("--dask", metavar="SCHEDULER", help="check the files on a dask.distributed cluster (its "
                     "scheduler's address, or 'local' for a LocalCluster on this machine)")
    ver.add_argument("--format", choices=("text", "json", *ROW_FORMATS), default="text",
                     help="text (default), json (the summary, like --json), or one row per checksum field: jsonl "
                     "(JSON Lines), csv, parquet (needs --out and the [arrow] extra); see docs/results-as-data.md")
    ver.add_argument("--fields", metavar="LIST", help="with --format jsonl, csv or parquet: the row columns to write, "
                     "comma-separated, in that order (as tshark -T fields -e): file, frame, time, src, dst, protocol, "
                     "path, depth, offset, stored, computed, status, reason (file: with several FILEs, or parquet)")
    ver.add_argument("--out", metavar="OUT", help="with --format jsonl, csv or parquet: write the rows to OUT (a "
                     "regular file, replaced atomically) instead of standard output; with --format parquet and a "
                     "directory FILE, OUT is a directory: a Hive-partitioned dataset, one partition per capture "
                     "(file=PATH/part-0.parquet)")
    ver.add_argument("--partition", choices=("file", "date"), default=None,
                     help="the dataset's partitions: file (default), or date then file (date=YYYY-MM-DD/file=PATH/, "
                     "by each packet's UTC date)")
    ver.add_argument("--force", action="store_true", help="replace part files that exist in the dataset's directory")
    ver.add_argument("--strict", action="store_true",
                     help="count transmit-offload checksums (the pseudo-header sum the NIC completes) as bad, and "
                     "packets on link types csum cannot look into as an input error (exit 2)")
    ver.add_argument("--by", choices=("host",), help="host: also list the bad and offload checksums per source host "
                     "and per flow, with the verdict 'offload on HOST' or 'corruption or a bug on HOST'")
    ver.add_argument("--explain", action="store_true",
                     help="say why each bad or offload checksum is wrong, where one simulated mistake gives the stored "
                     "bytes exactly (cause ids: docs/explain.md): per field in the lists and rows, per cause and flow "
                     "in the summary, in the --by host and --html verdicts (with --format jsonl, csv or parquet it reads each FILE "
                     "twice: not standard input)")
    ver.add_argument("--annotate", metavar="OUT.pcapng", help="with --explain: also write a pcapng copy of FILE with a "
                     "comment on every packet that has a wrong checksum (the field, stored and expected values, the "
                     "cause; tshark -Y 'frame.comment contains \"csum\"' finds them); one FILE")
    ver.add_argument("--html", metavar="REPORT.html", help="also write the report as one self-contained HTML page "
                     "(totals, hosts, flows, a timeline of bad checksums, the verdict)")
    ver.add_argument("--follow-symlinks", action="store_true",
                     help="--out, --html and --annotate may be symbolic links: replace their targets; in a directory "
                     "FILE, symbolic links to files and directories are followed (not by default)")
    add_common(ver)
    add_read_write(ver, write=False)
    ver.set_defaults(func=run)
    return ver


def _rows_scan(args: argparse.Namespace, bar: progress.Bar) -> list[Scan | Failed]:
    """``--format jsonl|csv|parquet``: every checksum field as a row (csum/capture/rows.py), to standard output or to
    ``--out`` (a regular file, replaced atomically once every input was read; parquet needs it)."""
    from ..capture.output import AtomicFile, target
    from ..capture.rowtext import TextSink, fields

    parquet, several = args.format == "parquet", len(args.files) > 1
    choice = dict(keep=args.only, file=(lambda: args.current) if several or parquet else None,
                  columns=None if args.fields is None else fields(args.fields, several or parquet))
    why: dict[str, Explained | None] = {}
    if args.explain:  # check and explain first: the rows then carry each wrong field's cause
        from ..explain.capture import ExplainedParquet, ExplainedText

        collectors = _collectors(args)
        items = scan_each(args, bar, collect=collectors)
        _explain(args, items, bar, collectors)
        why = {name: None if isinstance(item, Failed) else item.explained for name, item in zip(args.files, items)}

    def current() -> Explained | None:
        return why.get(args.current)  # the file scan_one reads now

    if args.listing is not None and args.format == "parquet" and args.out is not None:
        return _dataset(args, bar)
    if args.out is None:
        if args.format == "parquet":
            raise UsageError("--format parquet writes a file: give --out FILE")
        sys.stdout.flush()
        as_csv = args.format == "csv"
        rows = ExplainedText(sys.stdout.buffer.write, as_csv, current, **choice) if args.explain else \
            TextSink(sys.stdout.buffer.write, as_csv, **choice)
        return _explained(scan_each(args, bar, table=rows), args, why)
    path = target(args.out, [name for name in args.files if name != "-"], follow_symlinks=args.follow_symlinks,
                  what="--out")
    try:
        with AtomicFile(path) as out:
            sink: TextSink | ParquetSink | ExplainedText | ExplainedParquet
            if parquet:
                from ..capture.arrow import ParquetSink

                if choice["columns"] is None:
                    del choice["columns"]  # every column, file first
                sink = ExplainedParquet(Sink(out, args.out), current, **choice) if args.explain else \
                    ParquetSink(Sink(out, args.out), **choice)
            elif args.explain:
                sink = ExplainedText(Sink(out, args.out).write, args.format == "csv", current, **choice)
            else:
                sink = TextSink(Sink(out, args.out).write, args.format == "csv", **choice)
            try:
                items = _explained(scan_each(args, bar, table=sink), args, why)
            except BaseException:
                sink.discard()
                raise
            sink.close()
            out.commit()
    except OSError as exc:
        raise UsageError(f"--out: cannot write {args.out}: {exc.strerror or exc}") from None
    return items


def _dataset(args: argparse.Namespace, bar: progress.Bar) -> list[Scan | Failed]:
    """``verify DIR --format parquet --out OUTDIR``: each capture's rows as one partition of a Hive-partitioned
    dataset (csum.capture.dataset), written as each capture is read; OUTDIR gets new files only unless --force."""
    from ..capture.dataset import Dataset
    from ..errors import CsumWriteFailed
    from .trees import outputs

    trees = args.listing.trees
    if len(trees) != 1 or len(args.files) != len(trees[0].files):
        raise UsageError("--format parquet --out OUTDIR: give one directory and nothing else (its captures' paths "
                         "under it name the partitions)")
    if args.explain:
        raise UsageError("--explain: not with a directory's dataset; give --format jsonl or csv, or one file")
    found = trees[0]
    dataset = Dataset(args.out, by_date=args.partition == "date", follow_symlinks=args.follow_symlinks,
                      force=args.force, writer=lambda out, path: Sink(out, str(path)))
    outputs(found.root, [], args.out, force=args.force, follow_symlinks=args.follow_symlinks)  # OUTDIR itself
    taken = dataset.taken(found.files)
    if taken and not args.force:
        raise UsageError(f"--out: {taken[0]} exists; csum writes only new files into an output directory (--force "
                         "replaces them)")
    items: list[Scan | Failed] = []
    for name, rel in zip(args.files, found.files):
        dataset.begin(rel)
        try:
            items.append(scan_one(args, name, bar, table=dataset))
        except CsumWriteFailed:
            dataset.discard()
            raise
        except CsumError as exc:
            dataset.discard()
            items.append(Failed(name, str(exc), exc.code))
            continue
        except BaseException:
            dataset.discard()
            raise
        try:
            dataset.commit()
        except OSError as exc:
            raise UsageError(f"--out: cannot write {args.out}: {exc.strerror or exc}") from None
    return items


def _explained(items: list[Scan | Failed], args: argparse.Namespace,
               why: dict[str, Explained | None]) -> list[Scan | Failed]:
    """The rows pass's scans with the explanations of the pass before (for --annotate)."""
    for name, item in zip(args.files, items):
        if not isinstance(item, Failed):
            item.explained = why.get(name)
    return items


def _dask(args: argparse.Namespace) -> list[Scan]:
    from ..capture.dask import verify_cli

    if args.format in ROW_FORMATS:
        raise UsageError(f"--dask: --format {args.format} writes rows from one process; use the json summary, or "
                         "csum.dask.to_dataframe in Python")
    if "-" in args.files:
        raise UsageError("--dask: standard input cannot be sent to a cluster; give file names or URLs")
    args.current = f"{len(args.files)} file(s) on {args.dask}"
    try:
        return verify_cli(args.dask, args.files, args.jobs, args.chunk_bytes)
    except CsumError:
        raise
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the dask scheduler {args.dask}: {exc}") from None
    except ValueError as exc:  # dask.distributed's word on the address (no port, unknown protocol ...)
        raise UsageError(f"--dask {args.dask}: {exc}") from None


def _html_target(args: argparse.Namespace) -> Path | None:
    """Where --html writes (csum.capture.output.target: a regular file, never an input), refused before anything
    is read; the options that cannot go with --by host / --html."""
    if args.by is not None or args.html is not None:
        what = "--by host" if args.html is None else "--html"
        if args.dask is not None:
            raise UsageError(f"{what}: not with --dask (the workers send counts, not senders)")
        if args.by is not None and args.format == "jsonl":
            raise UsageError("--by host: a summary of the report; use --format text or json")
    if args.html is None:
        return None
    if args.html == "-":
        raise UsageError("--html: REPORT.html must be a file name: csum writes regular files only")
    from ..capture.output import target

    try:
        return target(args.html, [f for f in args.files if f != "-"], follow_symlinks=args.follow_symlinks,
                      what="--html")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_explain(args: argparse.Namespace) -> Path | None:
    """--explain copies the wrong packets as each input is checked, in this process (the rows formats read each input
    twice: files only); where --annotate writes."""
    if args.annotate is not None:
        if not args.explain:
            raise UsageError("--annotate: give --explain too (the comments hold each field's cause)")
        if len(args.files) != 1:
            raise UsageError("--annotate: one FILE (the copy is of one capture)")
        if args.files[0] == "-":
            raise UsageError("--annotate: the copy reads FILE again, and standard input cannot be read twice; save it "
                             "to a file first")
    if not args.explain:
        return None
    if args.dask is not None:
        raise UsageError("--explain: not with --dask (the workers send counts, not the wrong packets)")
    if "-" in args.files and args.format in ROW_FORMATS:
        raise UsageError(f"--explain: --format {args.format} reads each input twice (the causes first, then the rows), "
                         "and standard input cannot be read twice; save it to a file first")
    if args.annotate is None:
        return None
    if args.annotate == "-":
        raise UsageError("--annotate: OUT.pcapng must be a file name: csum writes regular files only")
    from ..capture.output import target

    try:
        return target(args.annotate, args.files, follow_symlinks=args.follow_symlinks, what="--annotate")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _annotate(path: Path, args: argparse.Namespace, item: Scan | Failed) -> None:
    """Write --annotate's copy (csum.explain.annotate) atomically."""
    from ..capture.output import AtomicFile
    from ..capture.pcap import CHUNK_BYTES
    from ..explain.annotate import annotate

    if isinstance(item, Failed):
        return
    try:
        with AtomicFile(path) as out:
            annotate(args.files[0], item.report.bad + item.report.offload, item.explained, out.write,
                     args.chunk_bytes or CHUNK_BYTES)
            out.commit()
    except OSError as exc:
        raise UsageError(f"--annotate: cannot write {args.annotate}: {exc.strerror or exc}") from None


def _collectors(args: argparse.Namespace) -> list[Collector]:
    """One csum.explain.capture.Collector per input: it copies the wrong packets as the input is checked."""
    from ..explain.capture import Collector

    return [Collector() for _ in args.files]


def _explain(args: argparse.Namespace, items: list[Scan | Failed], bar: progress.Bar,
             collectors: list[Collector]) -> None:
    """Explain the wrong fields of every input checked (csum.explain.capture), from the packets copied then."""
    from ..explain.capture import explain_capture

    for name, item, collected in zip(args.files, items, collectors):
        if isinstance(item, Failed) or not (item.report.total("bad") + item.report.total("offload")):
            continue
        bar.phase(f"explaining {name}")
        item.explained = explain_capture(collected, item.report, hosts=item.report.hosts)


def run(args: argparse.Namespace) -> int:
    """``csum verify FILE...``."""
    check_show(args)
    args.json = args.json or args.format == "json"
    args.listing = expand(args) if any(is_dir(name) for name in args.files) else None
    dataset = args.listing is not None and args.format == "parquet" and args.out is not None
    for given, option in ((args.partition, "--partition"), (args.force, "--force")):
        if given and not dataset:
            raise UsageError(f"{option}: only with a directory's dataset (a directory FILE, --format parquet --out "
                             "OUTDIR)")
    notes = _check_explain(args)
    page = _html_target(args)
    bar = progress.Bar(sys.stderr, "verify", quiet=args.quiet)
    items: list[Scan | Failed]
    try:
        if args.dask is not None:
            items = list(_dask(args))
        elif args.format in ROW_FORMATS:
            items = _rows_scan(args, bar)
        elif args.out is not None or args.fields is not None:
            raise UsageError(f"{'--out' if args.fields is None else '--fields'}: only with --format jsonl, csv or "
                             "parquet (the rows)")
        elif args.explain:
            collectors = _collectors(args)
            items = scan_each(args, bar, collect=collectors)
            _explain(args, items, bar, collectors)
        else:
            items = scan_each(args, bar)
        if notes is not None:
            _annotate(notes, args, items[0])
    finally:
        bar.close()
    if page is not None:
        from ..capture.html_report import render

        write_text(page, render([s for s in items if not isinstance(s, Failed)]), "--html")
    if not args.quiet:
        print_scans(items, args)
    code = exit_code(items, args)
    report_problems(items, args, code)
    return code
