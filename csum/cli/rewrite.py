"""``csum rewrite IN OUT [rules]``: a copy of a capture with addresses, ports, TTL, DSCP ... rewritten and every
checksum updated incrementally (csum.rewrite.capture; rules: csum.rewrite.rules)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schemas
from . import progress
from .args import UsageError, add_quiet, add_read_write, chunk_bytes, jobs
from .trees import Listing, is_dir, outputs, skipped_text, tree

if TYPE_CHECKING:
    from ..rewrite.capture import RewriteResult


#: --explain: the groups of a flow and a cause the report lists.
SHOW = 10

#: The command's name on the command line.
NAME = "rewrite"
#: The MTU ``--truncate`` cuts to without ``--mtu``: Ethernet's (RFC 894), tcprewrite's default.
DEFAULT_MTU = 1500


def add(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``rewrite`` subcommand's arguments."""
    cmd = sub.add_parser(NAME, help="rewrite a capture's addresses, ports, TTL ... with incremental checksums")
    cmd.add_argument("file", nargs="?", metavar="IN", help="the capture (pcap or pcapng, compressed or not; - for "
                     "standard input), or a directory: every capture under it, found by its magic bytes")
    cmd.add_argument("out", nargs="?", metavar="OUT", help="a regular file to write (- for standard output); for a "
                     "directory IN, OUTDIR: each copy at its relative path under it, new files only")
    add_read_write(cmd, write=True)
    add_quiet(cmd)
    cmd.add_argument("--rules", metavar="FILE", help="a TOML file of rules (the options below, as keys)")
    many = dict(action="append", default=[], metavar="OLD=NEW")
    cmd.add_argument("--map-ip", **many, help="map addresses or CIDR prefixes, source and destination")
    cmd.add_argument("--map-src", **many, help="map source addresses only")
    cmd.add_argument("--map-dst", **many, help="map destination addresses only")
    cmd.add_argument("--map-port", action="append", default=[], metavar="[tcp|udp:]OLD=NEW", help="map a port")
    cmd.add_argument("--ttl", metavar="N", help="set the TTL / hop limit to N, or decrement it by -N (-1: a router)")
    for name, what in (("dscp", "DSCP (0..63)"), ("ecn", "ECN bits (0..3)"), ("tclass", "IPv6 traffic class"),
                       ("flowlabel", "IPv6 flow label")):
        cmd.add_argument(f"--{name}", metavar="N", help=f"set the {what}")
    cmd.add_argument("--mac-src", action="append", default=[], metavar="MAC|OLD=NEW", help="set source MACs")
    cmd.add_argument("--mac-dst", action="append", default=[], metavar="MAC|OLD=NEW", help="set destination MACs")
    cmd.add_argument("--vlan-retag", **many, help="change VLAN ID OLD to NEW")
    cmd.add_argument("--anonymize", metavar="KEY", help="Crypto-PAn anonymize the addresses no map matches "
                     "(KEY: 64 hex digits)")
    cmd.add_argument("--anonymize-key-file", metavar="F", help="the Crypto-PAn key from a file")
    cmd.add_argument("--level", choices=("outer", "inner", "all"), default=None,
                     help="which IP headers: the outermost, those inside it (tunnels, ICMP quotes) or all (default)")
    cmd.add_argument("--truncate", action="store_true", help="cut frames with more than the MTU's bytes of layer 3 "
                     "to it, their lengths and checksums updated (as tcprewrite --mtu-trunc)")
    cmd.add_argument("--mtu", metavar="N", help=f"the MTU --truncate cuts to (default {DEFAULT_MTU}, as tcprewrite's)")
    cmd.add_argument("--fix", action="store_true", help="also correct every checksum that was wrong")
    cmd.add_argument("--explain", action="store_true", help="with --fix: say why each corrected checksum was wrong in "
                     "IN, where one simulated mistake gives the stored bytes exactly (cause ids: docs/explain.md), "
                     "per cause and flow in the report")
    cmd.add_argument("--jobs", type=jobs, default=1, metavar="N", help="rewrite in N processes (default 1)")
    cmd.add_argument("--chunk-bytes", type=chunk_bytes, default=None, metavar="B", help="bytes of records per chunk")
    cmd.add_argument("--follow-symlinks", action="store_true", help="OUT may be a symbolic link: replace its target; "
                     "with a directory IN, symbolic links in it are followed (not by default)")
    cmd.add_argument("--force", action="store_true", help="with a directory IN: replace files that exist under OUTDIR")
    cmd.add_argument("--keep-going", action="store_true", help="write OUT even when IN cannot be read whole: every "
                     "frame before the damage rewritten, the rest copied unchanged (exit code still 2)")
    cmd.set_defaults(func=run)
    return cmd


def rules_of(args: argparse.Namespace) -> object:
    """The :class:`csum.rewrite.Rules` the options and ``--rules`` file say (options add to the file's lists)."""
    from ..rewrite.rules import MAX_MTU, MIN_MTU, Rules, read_key

    base = Rules()
    if args.rules:
        try:
            base = Rules.from_toml(args.rules)
        except OSError as exc:
            raise UsageError(f"cannot read the rules file {args.rules}: {exc.strerror or exc}") from None
    key = args.anonymize
    if args.anonymize_key_file:
        if key:
            raise UsageError("give --anonymize or --anonymize-key-file, not both")
        try:
            key = read_key(Path(args.anonymize_key_file))
        except OSError as exc:
            raise UsageError(f"cannot read {args.anonymize_key_file}: {exc.strerror or exc}") from None
    if args.mtu is not None and not args.truncate:
        raise UsageError("--mtu: it says where --truncate cuts; give --truncate too")
    truncate = None
    if args.truncate:
        try:
            truncate = DEFAULT_MTU if args.mtu is None else int(args.mtu, 0)
        except ValueError:
            truncate = -1
        if not MIN_MTU <= truncate <= MAX_MTU:
            raise UsageError(f"--mtu: an MTU in {MIN_MTU}..{MAX_MTU} bytes, not {args.mtu}")
    return base.merged(map_ip=args.map_ip, map_src=args.map_src, map_dst=args.map_dst, map_port=args.map_port,
                       ttl=args.ttl, dscp=args.dscp, ecn=args.ecn, tclass=args.tclass, flowlabel=args.flowlabel,
                       mac_src=args.mac_src, mac_dst=args.mac_dst, vlan_retag=args.vlan_retag, anonymize=key,
                       level=args.level, truncate=truncate)


def run(args: argparse.Namespace) -> int:
    """``csum rewrite IN OUT``; ``csum rewrite DIR OUTDIR`` (:func:`_run_tree`)."""
    from ..capture import pcap
    from ..rewrite import rewrite_capture

    rules = rules_of(args)  # every rule checked before anything is opened
    if args.explain and not args.fix:
        raise UsageError("--explain: give --fix too (the checksums explained are those --fix corrects)")
    if is_dir(args.file):
        return _run_tree(args, rules)
    if args.out == "-" and sys.stdout.isatty():
        raise UsageError("OUT is - but standard output is a terminal: redirect it to a file or a pipe")
    bar = progress.Bar(sys.stderr, "rewrite", quiet=args.quiet)
    bar.phase(f"rewriting {args.file} into {args.out}")
    try:
        result = rewrite_capture(args.file, args.out, rules, fix=args.fix, jobs=args.jobs,  # type: ignore[arg-type]
                                 chunk_bytes=args.chunk_bytes or pcap.CHUNK_BYTES,
                                 follow_symlinks=args.follow_symlinks, progress=bar.update, explain=_explainer(args),
                                 keep_going=args.keep_going)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UsageError(f"cannot read {args.file} or write {args.out}: {exc.strerror or exc}") from None
    finally:
        bar.close()
    report = sys.stderr if args.out == "-" else sys.stdout
    if not args.quiet:
        if args.json:
            print(json.dumps(schemas.document(NAME, result.as_json(SHOW)), indent=2), file=report)
        else:
            print(_text(result, rules), file=report)
    return _stopped(args, args.file, args.out, result)


def _stopped(args: argparse.Namespace, name: str, out: str, result: RewriteResult) -> int:
    """The exit code of a capture rewritten whole or not (as verify's and fix's, docs/verify.md "Exit codes"): 2 with
    one stderr line when it could not be read whole (a damaged record, compressed data cut or corrupt: OUT not
    written, or with --keep-going the rest copied unchanged from there), a warning line and 0 for a truncated last
    record, else 0."""
    stop = result.stop
    if stop is None or (stop.truncated and args.quiet):
        return 0
    verb = "warning for" if stop.truncated else "failed for"
    done = f"wrote {out} with every frame before it rewritten, the rest copied unchanged" if result.written \
        else f"{out} not written (--keep-going writes it)"
    if result.written and not stop.truncated and out != "-":
        done = "--keep-going: " + done
    print(f"csum: {NAME} {verb} {name}: {stop}; {done}", file=sys.stderr)
    return 0 if stop.truncated else 2


def _explainer(args: argparse.Namespace) -> Any:
    """--explain: csum.explain.capture's collector for rewrite_capture, else None."""
    if not args.explain:
        return None
    from ..explain.capture import Collector

    return Collector.rewriting


def _text(result: RewriteResult, rules: object) -> str:
    """What rewrite prints about one capture (its --json is ``result.as_json()``)."""
    o = result.outcome
    alone = ", ".join(f"{n} {why}" for why, n in sorted(o.left_alone.items())) or "none"
    cut = f", {o.truncated} truncated" if rules.truncate is not None else ""  # type: ignore[attr-defined]
    slow = ", ".join(f"{n} {why}" for why, n in sorted(o.declined.items()))
    slow = f"; the Python engine took {sum(o.declined.values())}: {slow}" if slow else ""
    lines = [f"{result.name}: {result.format}, {o.packets} packets, {o.changed} changed{cut} ({result.fast} on the fast "
             f"path{slow}); checksums updated incrementally: {o.kept}, corrected (--fix): {o.fixed}; left alone: "
             f"{alone}"]
    if result.explained is not None:
        lines += result.explained.as_text(SHOW)[1:]
    if result.stop is not None and result.written:
        lines.append(f"{result.stop}: copied unchanged from there")
    if not result.written:
        lines.append(f"{result.stop}: {result.out} not written")
    elif result.out != "-":
        lines.append(f"wrote {result.out}")
    return "\n".join(lines)


def _run_tree(args: argparse.Namespace, rules: object) -> int:
    """``csum rewrite DIR OUTDIR``: every capture under DIR (csum.capture.tree) rewritten into the same relative path
    under OUTDIR, which gets new files only (csum.cli.trees.outputs). A capture that cannot be read is named on
    stderr (exit 2) and the others are still rewritten; one read only in part is named too (exit 2), written with
    --keep-going."""
    from ..capture import pcap
    from ..errors import CsumError
    from ..rewrite import rewrite_capture

    if args.out == "-":
        raise UsageError("OUTDIR must be a directory name: IN is a directory")
    found = tree(args.file, args.follow_symlinks)
    paths = outputs(args.file, found.files, args.out, force=args.force, follow_symlinks=args.follow_symlinks)
    bar = progress.Bar(sys.stderr, "rewrite", quiet=args.quiet)
    docs: list[dict[str, object]] = []
    failed = damaged = 0  # not written; read only in part
    try:
        for rel, name, path in zip(found.files, found.paths(), paths):
            bar.phase(f"rewriting {name} into {path}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                result = rewrite_capture(name, path, rules, fix=args.fix, jobs=args.jobs,  # type: ignore[arg-type]
                                         chunk_bytes=args.chunk_bytes or pcap.CHUNK_BYTES,
                                         follow_symlinks=args.follow_symlinks, progress=bar.update,
                                         compression=found.compression[rel], explain=_explainer(args),
                                         keep_going=args.keep_going)
            except (CsumError, OSError) as exc:
                reason = str(exc) if isinstance(exc, CsumError) else f"cannot read {name} or write {path}: " \
                    f"{exc.strerror or exc}"
                print(f"csum: rewrite failed for {name}: {reason}; {path} not written", file=sys.stderr)
                failed += 1
                docs.append({"file": name, "error": reason, "out": None})
                continue
            docs.append(result.as_json(SHOW))
            if not args.quiet and not args.json:
                print(_text(result, rules))
            damaged += _stopped(args, name, str(path), result) == 2
            failed += not result.written
    finally:
        bar.close()
    if not args.quiet:
        if args.json:
            print(json.dumps(schemas.document(NAME, {"files": docs, "out": args.out, "written": len(paths) - failed,
                                                     "directories": Listing([found]).as_json()}), indent=2))
        else:
            print(f"total: {len(paths)} capture{'' if len(paths) == 1 else 's'}, {len(paths) - failed} written into "
                  f"{args.out}, {failed} not written; {skipped_text(found.skipped, found.links)}")
    return 2 if failed or damaged else 0
