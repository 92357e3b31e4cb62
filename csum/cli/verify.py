"""``csum verify``: check every Internet checksum of pcap/pcapng captures (csum.scan), or of an archive on a Dask
cluster (csum.dask)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from . import progress
from .args import UsageError, check_show
from .scans import add_common, exit_code, print_scans, report_problems, scan_one

if TYPE_CHECKING:
    from ..capture.scan import Scan


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``verify`` subcommand's arguments."""
    ver = sub.add_parser("verify", help="check every Internet checksum (IPv4, TCP, UDP, ICMP, tunnels ...) in pcap "
                         "or pcapng files")
    ver.add_argument("files", nargs="+", metavar="FILE", help="a capture (pcap or pcapng, maybe gzip/bzip2/xz/zstd "
                     "compressed), - for standard input, or with --dask any fsspec URL")
    ver.add_argument("--dask", metavar="SCHEDULER", help="check the files on a dask.distributed cluster (its "
                     "scheduler's address, or 'local' for a LocalCluster on this machine)")
    ver.add_argument("--format", choices=("text", "json", "jsonl"), default="text",
                     help="text (default), json (the summary, like --json) or jsonl (one object per checksum field)")
    ver.add_argument("--strict", action="store_true",
                     help="count transmit-offload checksums (the pseudo-header sum the NIC completes) as bad, and "
                     "packets on link types csum cannot look into as an input error (exit 2)")
    add_common(ver)
    ver.set_defaults(func=run)
    return ver


class _JsonlRows:
    """``verify --format jsonl``: one JSON object per checksum field, in packet order, written in blocks of a few
    thousand lines (:meth:`flush` writes the rest)."""

    def __init__(self) -> None:
        from ..capture.report import jsonl_line

        self.line = jsonl_line
        self.lines: list[str] = []

    def __call__(self, index: int, results: list) -> None:
        self.lines += [self.line(index, r) for r in results]
        if len(self.lines) >= 4096:
            self.flush()

    def flush(self) -> None:
        sys.stdout.write("".join(self.lines))
        self.lines.clear()


def _jsonl_scan(args: argparse.Namespace, name: str, bar: progress.Bar) -> Scan:
    rows = _JsonlRows()
    try:
        return scan_one(args, name, bar, each=rows)
    finally:
        rows.flush()


def run(args: argparse.Namespace) -> int:
    """``csum verify FILE...``."""
    check_show(args)
    args.json = args.json or args.format == "json"
    bar = progress.Bar(sys.stderr, "verify")
    try:
        if args.dask is not None:
            from ..capture.dask import verify_cli

            if args.format == "jsonl":
                raise UsageError("--dask: --format jsonl streams rows from one process; use the json summary")
            if "-" in args.files:
                raise UsageError("--dask: standard input cannot be sent to a cluster; give file names or URLs")
            args.current = f"{len(args.files)} file(s) on {args.dask}"
            try:
                scans = verify_cli(args.dask, args.files, args.jobs, args.chunk_bytes)
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the dask scheduler {args.dask}: {exc}") from None
        else:
            scans = [_jsonl_scan(args, name, bar) if args.format == "jsonl" else scan_one(args, name, bar)
                     for name in args.files]
    finally:
        bar.close()
    print_scans(scans, args)
    code = exit_code(scans, args)
    report_problems(scans, args, code)
    return code
