"""What ``csum verify`` and ``csum fix`` share: their common options, one input through csum.scan, the exit code,
the reports and the lines on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import progress
from .args import UsageError, integer, positive

if TYPE_CHECKING:  # numpy-backed modules are imported when verify/fix run, keeping other commands' start-up light
    from ..capture.checker import Sink as ResultSink
    from ..capture.output import AtomicFile
    from ..capture.scan import Scan


def add_common(cmd: argparse.ArgumentParser) -> None:
    """The options of verify and fix: --show, --jobs, --chunk-bytes, --skip-unsupported."""
    cmd.add_argument("--show", type=integer, default=10, help="list at most this many bad packets (default 10)")
    cmd.add_argument("--jobs", type=positive, default=None, metavar="N",
                     help="check in N processes (default: every core)")
    cmd.add_argument("--chunk-bytes", type=positive, default=None, metavar="B",
                     help="read and check B bytes of records at a time (default 2 MiB)")
    cmd.add_argument("--skip-unsupported", action="store_true",
                     help="accepted for scripts written before 0.2: packets on link types csum cannot look into are "
                     "listed and make the exit code 2 only with --strict")


class Sink:
    """fix's output, with write errors named as such (reading errors say "cannot read")."""

    def __init__(self, out: AtomicFile, name: str) -> None:
        self._out, self._name = out, name

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data)
        except OSError as exc:
            raise UsageError(f"cannot write {self._name}: {exc.strerror or exc}") from None


def scan_one(args: argparse.Namespace, name: str, bar: progress.Bar, sink: Sink | None = None,
          each: ResultSink | None = None) -> Scan:
    """One input through csum.scan, with OSError turned into a one-line usage error."""
    from ..capture import pcap
    from ..capture.scan import scan

    args.current = name
    bar.phase(f"checking {name}" if sink is None else f"checking {name} and writing {args.out}")
    try:
        return scan(name, jobs=args.jobs, chunk_bytes=args.chunk_bytes or pcap.CHUNK_BYTES, sink=sink,
                    progress=bar.update, each=each, keep=getattr(args, "show", None),
                    fix_embedded=getattr(args, "fix_embedded", False))
    except BrokenPipeError:  # our output's reader left (`| head`): not a read error; main() stops quietly
        raise
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def exit_code(scans: Sequence[Scan], args: argparse.Namespace) -> int:
    """The exit-code table (README, CLI): 1 a bad checksum anywhere; else 2 for records csum could not read
    or, with --strict, link types it cannot look into; else 0."""
    strict = getattr(args, "strict", False)  # --strict: offload's pseudo-header sums are bad, unknown links fail
    if any(s.report.total("bad") or (strict and s.report.total("offload")) for s in scans):
        return 1
    if any(s.stop is not None and not s.stop.truncated for s in scans):
        return 2
    if strict and any(s.report.unsupported for s in scans):
        return 2
    return 0


def _problems(scan: Scan, args: argparse.Namespace) -> list[str]:
    """What to say on stderr about a scan: why it gets exit code 2 (or would, were there no bad checksum),
    and a truncated last record."""
    found = []
    if scan.stop is not None:
        found.append(f"{scan.stop}; nothing after it was read" if not scan.stop.truncated else
                     f"the file ends inside {scan.stop}; every record before it was checked")
    if scan.report.unsupported:
        links = ", ".join(f"{n} on link type {k}" for k, n in sorted(scan.report.unsupported.items()))
        found.append(f"packets csum cannot look into ({links}), not checked")
    return found


def _stop_line(scan: Scan) -> str | None:
    if scan.stop is None:
        return None
    what = "truncated" if scan.stop.truncated else "damaged"
    return f"{what}: {scan.stop}; every record before it was checked"


def scan_json(scan: Scan, show: int) -> dict[str, object]:
    from ..capture import report

    doc = report.as_json(scan.report, scan, scan.name, show)  # type: ignore[arg-type]
    doc["compression"] = scan.compression
    doc["stopped"] = None if scan.stop is None else {
        "offset": scan.stop.offset, "packet": scan.stop.index, "truncated": scan.stop.truncated,
        "reason": scan.stop.reason}
    return doc


def scan_text(scan: Scan, show: int) -> str:
    from ..capture import report

    text = report.as_text(scan.report, scan, scan.name, show)  # type: ignore[arg-type]
    line = _stop_line(scan)
    return text if line is None else f"{text}\n\n{line}"


def print_scans(scans: Sequence[Scan], args: argparse.Namespace) -> None:
    if args.format == "jsonl":  # the rows went to stdout while the files were read
        return
    if args.json and len(scans) == 1:
        print(json.dumps(scan_json(scans[0], args.show), indent=2))
    elif args.json:
        total = _total(scans)
        print(json.dumps({"files": [scan_json(s, args.show) for s in scans],
                          "total": scan_json(total, args.show)}, indent=2))
    else:
        print("\n\n".join(scan_text(s, args.show) for s in scans))
        if len(scans) > 1:
            t = _total(scans).report
            print(f"\ntotal: {len(scans)} files, {t.packets} packets, {t.total('bad')} bad checksums, "
                  f"{t.total('malformed')} malformed, {t.total('cut')} cut")


def _total(scans: Sequence[Scan]) -> Scan:
    from ..capture.scan import merged

    return merged(scans)


def report_problems(scans: Sequence[Scan], args: argparse.Namespace, code: int, tail: str = "") -> None:
    """One stderr line per input with problems: ``failed`` when they decide exit 2, else a warning."""
    for scan in scans:
        found = _problems(scan, args)
        if found:
            verb = "failed for" if code == 2 else "warning for"
            print(f"csum: {args.command} {verb} {scan.name}: {'; '.join(found)}{tail}", file=sys.stderr)
