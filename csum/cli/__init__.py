"""The ``csum`` command line (also ``python -m csum``): :func:`main` runs one command (one module each, see
:mod:`csum.cli.parser`).

Exit codes: 0 ok, 1 some check failed, 2 usage or input error (standard output that cannot be written
included), 128 + the signal for Ctrl-C (130), SIGTERM (143) and SIGHUP (129): :mod:`csum.cli.exits`.
Expected errors print one line ``csum: <what> failed for <input>: <reason>`` on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .. import __version__, engine, schemas
from ..errors import CsumError, CsumStdoutFailed
from . import exits, parser

__all__ = ["main"]


def _version(as_json: bool) -> int:
    if as_json:
        print(json.dumps(schemas.document("version", {"version": __version__, "engine": engine.ENGINE,
                                                      "python": sys.version.split()[0]})))
    else:
        print(f"csum {__version__} (engine: {engine.ENGINE})")
    return 0


def _run(argv: list[str]) -> int:
    cli = parser.build(argv)
    parser.check_habits(cli, argv)
    args = cli.parse_args(argv)
    if args.command is None and not args.version:  # `csum` alone: what it can do (the sample's table: csum compare)
        cli.print_help()
        return 0
    parser.settle(cli, args)
    args.json = getattr(args, "json", False) or args.json_top
    if getattr(args, "jobs", 1) is None:
        from ..capture.parallel import default_jobs

        args.jobs = default_jobs()
    try:
        code = _version(args.json) if args.version else int(args.func(args))
        if sys.stdout is not None:
            sys.stdout.flush()  # a full disk is found here rather than at exit
        return code
    except CsumStdoutFailed as exc:
        exc.command = args.command
        raise
    except CsumError as exc:  # UsageError among them
        print(f"csum: {args.command} failed for {_input(args)}: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"csum: {args.command} failed for {_input(args)}: out of memory", file=sys.stderr)
        return 2


def _input(args: argparse.Namespace) -> str:
    """What an error line names: the file being read, else the command's input file(s), else "input"."""
    files = [name for name in getattr(args, "files", None) or [] if name]
    named = files[0] if len(files) == 1 else f"{len(files)} inputs" if files else None
    return getattr(args, "current", None) or getattr(args, "file", None) or named or "input"


def _one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for one thread unless the user chose a number: csum does no linear algebra, and OpenBLAS
    starting a thread per core when numpy is imported costs a command 80-120 ms of CPU (bench/startup.py). Only
    before numpy is imported (the CLI's own process and the processes it starts), never under a caller that has it."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring)."""
    _one_blas_thread()
    with exits.guarded_stdout(), exits.signals():
        try:
            return _run(list(sys.argv[1:] if argv is None else argv))
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP
            return exits.interrupted(exc)
        except CsumStdoutFailed as exc:
            return exits.stdout_failed(exc)
