"""The ``csum`` argument parser: the top-level options, then each command module's own (``add(sub)``)."""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
from collections.abc import Iterator, Sequence
from typing import NoReturn

#: The commands, in the order ``csum --help`` lists them; each is the module csum/cli/<name with _ for ->.py, whose
#: ``NAME`` it is, imported only when its arguments are added (a command imports no other command's module).
COMMANDS = ("compare", "kernel-check", "diff", "verify", "fix", "rewrite", "prog", "bench")


def build(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``csum``: ``args.func(args)`` runs the chosen command. Given the command line ``argv`` that
    names a command (or ``--version`` and none), only that command's arguments are added, the others named alone:
    a command starts without building every other one's parser (bench/startup.py)."""
    parser = Parser(prog="csum", description="The Internet checksum as each Linux architecture computes it.")
    parser.add_argument("--version", action="store_true", help="show the version and the summing engine, then exit")
    parser.add_argument("--json", dest="json_top", action="store_true", help="machine-readable output (also after "
                        "the command)")
    sub = parser.add_subparsers(dest="command")
    chosen = None if argv is None else _chosen(argv)
    for name in COMMANDS:
        if chosen is None or chosen == name:
            command = importlib.import_module(f".{name.replace('-', '_')}", __package__)
            command.add(sub).add_argument("--json", action="store_true", help="machine-readable output")
        else:
            sub.add_parser(name)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs ("" for ``--version`` alone), or None when every command's parser may be needed (no
    command: compare with its defaults, ``--help``, a word that is not a command)."""
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return "" if "--version" in argv and not {"-h", "--help"} & set(argv) else None
    return words[0] if words[0] in COMMANDS else None


class Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors naming the closest command, choice or option to a mistyped one (what
    Python 3.14's ``suggest_on_error`` does); every command's parser is one (argparse makes subparsers of the same
    class)."""

    _intermixed = False

    def error(self, message: str) -> NoReturn:
        super().error(message + _suggestion(self, message))

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        """A command's arguments in any order, options between or after IN and OUT (``rewrite IN --ttl 5 OUT``):
        argparse's intermixed parsing for a command's parser (the top-level one, which holds the commands, parses
        as argparse does)."""
        if _commands(self) is not None or self._intermixed:
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return super().parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """" (did you mean X?)" for the one word of an argparse error ``message`` that is close to a valid one, else ""."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        word, valid = choice.group(1), re.findall(r"'([^']*)'", choice.group(2))
    else:
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if not unknown or not unknown.group(1).startswith("-"):
            return ""
        word, valid = unknown.group(1).split("=")[0], sorted(set(_options(parser)))
    close = difflib.get_close_matches(word, valid, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _options(parser: argparse.ArgumentParser) -> Iterator[str]:
    """The option strings of ``parser`` and of the command parsers built under it."""
    for action in parser._actions:
        yield from (o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                yield from _options(command)


def _commands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    """The commands' action of the top-level parser; None for a command's own parser."""
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def check_habits(cli: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A usage error for tcpdump's ``-r``/``-w`` given without a command (``csum -r IN``): it names the commands
    that take them."""
    if _chosen(argv) is None and {"-r", "-w"} & set(argv):
        cli.error("-r and -w follow a command: csum verify -r IN, csum fix -r IN -w OUT, csum rewrite -r IN -w OUT")


def settle(cli: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Merge tcpdump's ``-r IN`` and ``-w OUT`` into the positional inputs and output of verify, fix and rewrite; a
    usage error (exit 2) from that command's parser when the input or output is missing or given twice."""
    if not hasattr(args, "read"):
        return
    commands = _commands(cli)
    command = commands.choices[args.command] if commands is not None else cli
    if hasattr(args, "files"):  # verify FILE...
        args.files = args.read + args.files
        if not args.files:
            command.error("the following arguments are required: FILE (or -r FILE)")
        return
    given = [p for p in (args.file, args.out) if p is not None]
    if len(args.read) > 1:
        command.error("argument -r: give one IN")
    args.file = args.read[0] if args.read else given.pop(0) if given else None
    args.out = args.write if args.write is not None else given.pop(0) if given else None
    if args.file is None or args.out is None:
        command.error(f"the following arguments are required: {'IN' if args.file is None else 'OUT'} "
                      "(IN OUT, or -r IN -w OUT)")
    if given:
        command.error(f"unrecognized arguments: {' '.join(given)} (IN and OUT are given already)")
