"""Write the shell completions of ``csum`` (bash, zsh) from its argument parser, with shtab.

    python tools/gen_cli_docs.py           # rewrite docs/completion/csum.bash and docs/completion/_csum
    python tools/gen_cli_docs.py --check   # exit 1 if the committed files differ (tests/test_docs.py)

The man page csum(1) comes from the same parser through the docs (``python -m sphinx -b man docs build/man``:
docs/reference/cli.md renders ``csum.cli.parser.build``). Install a completion by sourcing the bash file, or
putting ``_csum`` on zsh's ``fpath``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "completion"
FILES = {"bash": OUT / "csum.bash", "zsh": OUT / "_csum"}


def render(shell: str) -> str:
    """The completion script of ``shell`` for csum's parser."""
    import shtab

    from csum.cli.parser import build

    return shtab.complete(build(), shell=shell)


def main(argv: list[str]) -> int:
    stale = []
    for shell, path in FILES.items():
        text = render(shell)
        if argv == ["--check"]:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
    if stale:
        print(f"stale (run python tools/gen_cli_docs.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
