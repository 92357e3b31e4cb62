"""The ``csum`` command line (also ``python -m csum``): :func:`main` runs one command (one module each, see
:mod:`csum.cli.parser`).

Exit codes: 0 ok, 1 some check failed, 2 usage or input error. Expected errors
print one line ``csum: <what> failed for <input>: <reason>`` on stderr, never
a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .. import __version__, engine
from ..errors import CsumError
from . import parser

__all__ = ["main"]


def _version(as_json: bool) -> int:
    if as_json:
        print(json.dumps({"version": __version__, "engine": engine.ENGINE, "python": sys.version.split()[0]}))
    else:
        print(f"csum {__version__} (engine: {engine.ENGINE})")
    return 0


def _run(argv: list[str]) -> int:
    cli = parser.build()
    args = cli.parse_args(argv)
    if args.version:
        return _version(args.json_top)
    if args.command is None:
        args = cli.parse_args([*argv, "compare"])
    args.json = args.json or args.json_top
    if getattr(args, "jobs", 1) is None:
        from ..capture.parallel import default_jobs

        args.jobs = default_jobs()
    try:
        return int(args.func(args))
    except CsumError as exc:  # UsageError among them
        print(f"csum: {args.command} failed for {_input(args)}: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"csum: {args.command} failed for {_input(args)}: out of memory", file=sys.stderr)
        return 2


def _input(args: argparse.Namespace) -> str:
    return getattr(args, "current", None) or getattr(args, "file", None) or "input"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (130 after Ctrl-C)."""
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("csum: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
