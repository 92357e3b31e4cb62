"""Write what ``pip install`` puts under ``share/`` beside csum: the shell completions of ``csum`` (bash and zsh with
shtab, fish from the same argument parser) and the man page csum(1), all from ``csum.cli.parser.build``.

    python tools/gen_cli_docs.py           # rewrite share/ (the man page needs the [docs] extra: Sphinx)
    python tools/gen_cli_docs.py --check   # exit 1 if a committed completion differs (tests/test_docs.py)

The files sit in share/ as they are installed (pyproject.toml's data-files): share/man/man1/csum.1,
share/bash-completion/completions/csum, share/zsh/site-functions/_csum, share/fish/vendor_completions.d/csum.fish.
The man page is Sphinx's ``-b man`` build of docs/ (docs/reference/cli.md renders the parser);
tests/test_docs.py checks that build against the committed page.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARE = ROOT / "share"
COMPLETIONS = {"bash": SHARE / "bash-completion" / "completions" / "csum",
               "zsh": SHARE / "zsh" / "site-functions" / "_csum",
               "fish": SHARE / "fish" / "vendor_completions.d" / "csum.fish"}
MAN_PAGE = SHARE / "man" / "man1" / "csum.1"


def render(shell: str) -> str:
    """The completion script of ``shell`` for csum's parser."""
    from csum.cli.parser import build

    if shell == "fish":
        return _fish(build())
    import shtab

    return shtab.complete(build(), shell=shell)


def _fish(parser: argparse.ArgumentParser) -> str:
    """fish completions (``complete -c csum ...``): the commands, then each command's options and choices."""
    lines = ["# fish completions of csum, made by tools/gen_cli_docs.py from csum's argument parser", ""]
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in commands._choices_actions}
    for name in commands.choices:
        lines.append(f"complete -c csum -f -n __fish_use_subcommand -a {name} -d {_quote(helps.get(name) or name)}")
    lines += _fish_options(parser, "__fish_use_subcommand")
    for name, command in commands.choices.items():
        lines += _fish_options(command, f"'__fish_seen_subcommand_from {name}'")
    return "\n".join(lines) + "\n"


def _fish_options(parser: argparse.ArgumentParser, condition: str) -> list[str]:
    out = []
    for action in parser._actions:
        longs = [o[2:] for o in action.option_strings if o.startswith("--")]
        shorts = [o[1:] for o in action.option_strings if len(o) == 2]
        if not longs and not shorts:
            continue
        words = [f"-l {o}" for o in longs] + [f"-s {o}" for o in shorts]
        if action.nargs != 0:
            words.append("-r")
            if action.choices:
                words.append(f"-f -a {_quote(' '.join(map(str, action.choices)))}")
        if action.help and action.help != argparse.SUPPRESS:
            words.append(f"-d {_quote(_short(action.help))}")
        out.append(f"complete -c csum -n {condition} {' '.join(words)}")
    return out


def _short(text: str, width: int = 60) -> str:
    """A help text's first clause, cut at a word within ``width`` characters (fish shows one line per option)."""
    first = text.split(";")[0]
    return first if len(first) <= width else first[: first.rfind(" ", 0, width - 3)] + "..."


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def build_man(outdir: Path) -> Path:
    """Build csum.1 with Sphinx's man builder into ``outdir``."""
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "man", str(ROOT / "docs"), str(outdir)], check=True)
    return outdir / "csum.1"


def main(argv: list[str]) -> int:
    stale = []
    for shell, path in COMPLETIONS.items():
        text = render(shell)
        if argv == ["--check"]:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if argv != ["--check"]:
        with tempfile.TemporaryDirectory() as tmp:
            MAN_PAGE.parent.mkdir(parents=True, exist_ok=True)
            MAN_PAGE.write_bytes(build_man(Path(tmp)).read_bytes())
    if stale:
        print(f"stale (run python tools/gen_cli_docs.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
