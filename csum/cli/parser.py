"""The ``csum`` argument parser: the top-level options, then each command module's own (``add(sub)``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from . import bench, compare, diff, fix, kernel_check, prog, rewrite, verify

#: The commands, in the order ``csum --help`` lists them.
COMMANDS = (compare, kernel_check, diff, verify, fix, rewrite, prog, bench)


def build(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``csum``: ``args.func(args)`` runs the chosen command. Given the command line ``argv`` that
    names a command (or ``--version`` and none), only that command's arguments are added, the others named alone:
    a command starts without building every other one's parser (bench/startup.py)."""
    parser = argparse.ArgumentParser(prog="csum", description="The Internet checksum as each Linux architecture computes it.")
    parser.add_argument("--version", action="store_true", help="show the version and the summing engine, then exit")
    parser.add_argument("--json", dest="json_top", action="store_true", help="machine-readable output (also after "
                        "the command)")
    sub = parser.add_subparsers(dest="command")
    chosen = None if argv is None else _chosen(argv)
    for command in COMMANDS:
        if chosen is None or chosen == command.NAME:
            command.add(sub).add_argument("--json", action="store_true", help="machine-readable output")
        else:
            sub.add_parser(command.NAME)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs ("" for ``--version`` alone), or None when every command's parser may be needed (no
    command: compare with its defaults, ``--help``, a word that is not a command)."""
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return "" if "--version" in argv and not {"-h", "--help"} & set(argv) else None
    return words[0] if words[0] in {c.NAME for c in COMMANDS} else None
