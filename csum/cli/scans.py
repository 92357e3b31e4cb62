"""What ``csum verify`` and ``csum fix`` share: their common options, one input through csum.scan, the exit code,
the reports and the lines on stderr.

An input that cannot be read whole (a damaged record, compressed data cut, corrupt or followed by
garbage, a file that is not a capture or cannot be opened) makes the exit code 2 whatever was found
before it: a bad checksum's 1 would say the rest was read. With several inputs each one is reported in
its place, an unreadable one as one line, and the others still checked.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..errors import Code, CsumError, CsumWriteFailed
from . import progress
from .args import UsageError, add_quiet, chunk_bytes, integer, jobs

if TYPE_CHECKING:  # numpy-backed modules are imported when verify/fix run, keeping other commands' start-up light
    from ..capture.checker import Sink as ResultSink
    from ..capture.checker import TableSink
    from ..capture.output import AtomicFile
    from ..capture.pcap import Stop
    from ..capture.options import Collect
    from ..capture.scan import Scan


#: ``verify --format`` values that write one row per checksum field (csum/capture/rows.py) instead of a report.
ROW_FORMATS = ("jsonl", "csv", "parquet")


def add_common(cmd: argparse.ArgumentParser) -> None:
    """The options of verify and fix: --show, --jobs, --chunk-bytes, --skip-unsupported (a no-op kept for old scripts)."""
    cmd.add_argument("--show", type=integer, default=10, help="list at most this many bad packets (default 10)")
    cmd.add_argument("--jobs", type=jobs, default=None, metavar="N",
                     help="check in N processes (default: every core)")
    cmd.add_argument("--chunk-bytes", type=chunk_bytes, default=None, metavar="B",
                     help="read and check B bytes of records at a time (default 2 MiB)")
    cmd.add_argument("--skip-unsupported", action="store_true",
                     help="accepted for scripts written before 0.2: packets on link types csum cannot look into are "
                     "listed and make the exit code 2 only with --strict")
    cmd.add_argument("--only", choices=("bad", "offload", "not-ok"), help="list only the bad checksums, only the "
                     "transmit-offload ones, or every one that is not ok (with the malformed and cut packets): in the "
                     "text lists and the rows (not-ok rows: every status but ok)")
    add_quiet(cmd)


class Sink:
    """fix's output and verify's ``--out``, with write errors named as such (reading errors say "cannot read"; a full
    disk under ``verify --format jsonl --out`` said "cannot read IN")."""

    def __init__(self, out: AtomicFile, name: str) -> None:
        self._out, self._name = out, name

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data)
        except OSError as exc:
            raise CsumWriteFailed(f"cannot write {self._name}: {exc.strerror or exc}") from None


class Failed(NamedTuple):
    """An input of several that could not be checked at all: its name, why (one line) and the error's code."""

    name: str
    reason: str
    code: Code


def scan_one(args: argparse.Namespace, name: str, bar: progress.Bar, sink: Sink | None = None,
             each: ResultSink | None = None, table: TableSink | None = None, jobs: int | None = None,
             collect: Collect | None = None) -> Scan:
    """One input through csum.scan, with OSError turned into a one-line usage error; ``jobs``: its processes when
    not ``args.jobs``; ``collect``: csum.scan's, for ``--explain``."""
    from ..capture import pcap
    from ..capture.scan import ScanOptions, scan

    args.current = name
    bar.phase(f"checking {name}" if sink is None else f"checking {name} and writing {args.out}")
    try:
        show = getattr(args, "show", None)
        if getattr(args, "explain", False) and show is not None:  # every wrong field up to the explainer's limit
            from ..explain.capture import LIMIT

            show = max(show, LIMIT)
        return scan(name, ScanOptions(jobs=args.jobs if jobs is None else jobs,
                                      chunk_bytes=args.chunk_bytes or pcap.CHUNK_BYTES, sink=sink,
                                      progress=bar.update, each=each, keep=show,
                                      fix_embedded=getattr(args, "fix_embedded", False), hosts=wants_hosts(args),
                                      table=table, collect=collect))
    except BrokenPipeError:  # our output's reader left (`| head`): not a read error; main() stops quietly
        raise
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def wants_hosts(args: argparse.Namespace) -> bool:
    """Whether the reports must say who sent the bad and offload checksums (``verify --by host``, ``--html``)."""
    return by_host(args) or getattr(args, "html", None) is not None


def by_host(args: argparse.Namespace) -> bool:
    """``verify --by host``: the per-host summary goes in the text and JSON reports."""
    return getattr(args, "by", None) == "host"


def scan_each(args: argparse.Namespace, bar: progress.Bar, each: ResultSink | None = None,
              table: TableSink | None = None, collect: Sequence[Collect] | None = None) -> list[Scan | Failed]:
    """Every input of ``args.files`` through :func:`scan_one`; with several, one that cannot be checked is a
    :class:`Failed` in its place (alone, its error is raised: the one line, and nothing else to report).
    ``collect``: one csum.scan ``collect`` per input, in order (the inputs then each scanned here, not in workers)."""
    done: dict[str, Scan | Failed] = {}
    small = small_files(args.files, args) if each is None and table is None and collect is None else []
    if small:  # several files of a chunk or less: one per process at a time (csum.capture.parallel.each_item)
        from ..capture.parallel import each_item

        bar.phase(f"checking {count(len(small), 'file')} in {min(args.jobs, len(small))} processes")
        done = dict(zip(small, each_item(small, functools.partial(_one_quietly, args), args.jobs)))
    out: list[Scan | Failed] = []
    for k, name in enumerate(args.files):
        if name in done:
            out.append(done[name])
            continue
        try:
            out.append(scan_one(args, name, bar, each=each, table=table,
                                collect=None if collect is None else collect[k]))
        except CsumWriteFailed:
            raise
        except CsumError as exc:
            if len(args.files) == 1 and getattr(args, "listing", None) is None:
                raise
            out.append(Failed(name, str(exc), exc.code))
    return out


def small_files(names: list[str], args: argparse.Namespace) -> list[str]:
    """With several inputs and ``--jobs`` > 1, those of ``names`` that are files of at most one chunk: checked one per
    process at a time (csum.capture.parallel.each_item), where a larger file is checked by all the processes in turn
    (csum.capture.parallel.check_spans, checked). Two at least, else none."""
    from ..capture.pcap import CHUNK_BYTES

    if args.jobs <= 1 or len(names) < 2:
        return []
    limit = args.chunk_bytes or CHUNK_BYTES
    small = []
    for name in names:
        try:
            if name != "-" and "://" not in name and os.stat(name).st_size <= limit:
                small.append(name)
        except OSError:  # scan_one says why, in its place
            continue
    return small if len(small) > 1 else []


def _one_quietly(args: argparse.Namespace, name: str) -> Scan | Failed:
    """One small input in a worker process (no progress bar: the parent shows one line for all)."""
    try:
        return scan_one(args, name, progress.Bar(sys.stderr, args.command, quiet=True), jobs=1)
    except CsumError as exc:
        return Failed(name, str(exc), exc.code)


def unread(scan: Scan) -> bool:
    """Whether ``scan``'s input could not be read whole (a truncated last record alone is read whole)."""
    return scan.stop is not None and not scan.stop.truncated


def exit_code(items: Sequence[Scan | Failed], args: argparse.Namespace) -> int:
    """The exit-code table (docs/verify.md, --help): 2 for an input not read whole; else 1 for a bad checksum anywhere;
    else, with --strict, 2 for link types csum cannot look into; else 0."""
    scans = _scans(items)
    if len(scans) < len(items) or any(unread(s) for s in scans):
        return 2
    strict = getattr(args, "strict", False)  # --strict: offload's pseudo-header sums are bad, unknown links fail
    if any(s.report.total("bad") or (strict and s.report.total("offload")) for s in scans):
        return 1
    if strict and any(s.report.unsupported for s in scans):
        return 2
    return 0


def _scans(items: Sequence[Scan | Failed]) -> list[Scan]:
    return [s for s in items if not isinstance(s, Failed)]


def _stopped(stop: Stop) -> str:
    """Where and why reading stopped, and what that means for what was checked."""
    if stop.truncated:
        return f"the file ends inside {stop}; every frame before it was checked"
    return f"{stop}; nothing after it was read"


def _problems(scan: Scan, args: argparse.Namespace) -> list[str]:
    """What to say on stderr about a scan: why it gets exit code 2 (or would, were there no bad checksum),
    and a truncated last record."""
    found = [] if scan.stop is None else [_stopped(scan.stop)]
    if scan.report.unsupported:
        links = ", ".join(f"{n} on link type {k}" for k, n in sorted(scan.report.unsupported.items()))
        found.append(f"packets csum cannot look into ({links}), not checked")
    return found


def scan_json(scan: Scan, show: int, hosts: bool = False) -> dict[str, object]:
    """``scan`` as verify and fix print it with --json; ``hosts``: with its per-host summary (``by_host``)."""
    from ..capture import report

    why = None if scan.explained is None else scan.explained.of
    doc = report.as_json(scan.report, scan, scan.name, show, why)  # type: ignore[arg-type]
    if hosts and scan.report.hosts is not None:
        doc["by_host"] = scan.report.hosts.as_json()
    if scan.explained is not None:
        doc["explain"] = scan.explained.as_json(show)
    doc["compression"] = scan.compression
    doc["stopped"] = None if scan.stop is None else {
        "offset": scan.stop.offset, "after_frame": scan.stop.index, "truncated": scan.stop.truncated,
        "reason": scan.stop.reason}
    return doc


def scan_text(scan: Scan, show: int, hosts: bool = False, only: str | None = None) -> str:
    """``scan`` as verify and fix print it; ``hosts``: with its per-host summary (first ``show`` hosts and flows);
    ``only``: ``--only``'s choice of lists."""
    from ..capture import report

    why = None if scan.explained is None else scan.explained.of
    text = report.as_text(scan.report, scan, scan.name, show, why, only)  # type: ignore[arg-type]
    if scan.explained is not None:
        text = "\n".join([text, *scan.explained.as_text(show)])
    if hosts and scan.report.hosts is not None:
        text = "\n".join([text, *scan.report.hosts.as_text(show)])
    if scan.stop is None:
        return text
    return f"{text}\n\n{'truncated' if scan.stop.truncated else 'damaged'}: {_stopped(scan.stop)}"


def _item_json(item: Scan | Failed, show: int, hosts: bool) -> dict[str, object]:
    if isinstance(item, Failed):
        return {"file": item.name, "error": item.reason, "code": str(item.code)}
    return scan_json(item, show, hosts)


def print_scans(items: Sequence[Scan | Failed], args: argparse.Namespace) -> None:
    if args.format in ROW_FORMATS:  # the rows went out while the files were read
        return
    from .. import schemas

    hosts = by_host(args)
    listing = getattr(args, "listing", None)  # csum.cli.trees.Listing when a directory was given
    if args.json and len(items) == 1 and listing is None:
        print(json.dumps(schemas.document(args.command, _item_json(items[0], args.show, hosts)), indent=2))
    elif args.json:
        doc = {"files": [_item_json(s, args.show, hosts) for s in items],
               "total": scan_json(_total(items), args.show, hosts)}
        if listing is not None:
            doc["directories"] = listing.as_json()
        print(json.dumps(schemas.document(args.command, doc), indent=2))
    else:
        print("\n\n".join(f"{s.name}: not checked: {s.reason}" if isinstance(s, Failed)
                          else scan_text(s, args.show, hosts, args.only) for s in items))
        if len(items) > 1 or listing is not None:
            from .trees import skipped_text

            t = _total(items).report
            missed = len(items) - len(_scans(items))
            print(f"\ntotal: {count(len(items), 'file')}, {t.packets} packets, {t.total('bad')} bad checksums, "
                  f"{t.total('malformed')} malformed, {t.total('cut')} cut" + (f"; {count(missed, 'file')} not read"
                                                                                if missed else "")
                  + ("" if listing is None else f"; {skipped_text(listing.skipped, listing.links)}"))
            if hosts and t.hosts is not None:
                print("\n".join(t.hosts.as_text(args.show, "total by source host")))


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 file", "2 files"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _total(items: Sequence[Scan | Failed]) -> Scan:
    from ..capture.scan import merged

    return merged(_scans(items))


def report_problems(items: Sequence[Scan | Failed], args: argparse.Namespace, code: int, tail: str = "") -> None:
    """One stderr line per input with problems: ``failed`` when that input's problems decide exit 2, else a warning
    (another input that could not be read makes the exit code 2, not this one's truncated last record)."""
    strict = getattr(args, "strict", False)
    for item in items:
        if isinstance(item, Failed):
            print(f"csum: {args.command} failed for {item.name}: {item.reason}", file=sys.stderr)
            continue
        found = _problems(item, args)
        if found:
            decides = unread(item) or (strict and bool(item.report.unsupported))
            failed = code == 2 and decides
            if args.quiet and not failed:
                continue
            verb = "failed for" if failed else "warning for"
            print(f"csum: {args.command} {verb} {item.name}: {'; '.join(found)}{tail}", file=sys.stderr)
