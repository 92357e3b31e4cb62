"""The documentation cannot drift: every example on its pages (docs/**/*.md and README.md) runs here, the files
generated from the argument parser are current, and the site builds (HTML and the man page) without a warning.

A page's ```pycon blocks are one doctest session (ELLIPSIS, NORMALIZE_WHITESPACE); its ```console blocks run in
bash after them, in the same scratch directory (the page's Python examples may write the files its shell examples
read), ``csum`` being ``python -m csum`` of this checkout: each ``$ command`` line's output must be the lines shown
under it (``...`` stands for any text). Expected outputs are what a reader is told, so a change of behaviour fails
here until the page says so.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])
_FENCE = re.compile(r"^```(pycon|console)\n(.*?)^```$", re.S | re.M)


def _blocks(page: Path, kind: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(page.read_text(encoding="utf-8")) if lang == kind]


def _pages_with_examples() -> list[Path]:
    return [p for p in PAGES if _blocks(p, "pycon") or _blocks(p, "console")]


def _matches(expected: str, got: str) -> bool:
    checker = doctest.OutputChecker()
    return checker.check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


@pytest.mark.parametrize("page", _pages_with_examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, tmp_path, monkeypatch):
    """Each Python example gives the output shown; each shell command prints what the page says it prints."""
    monkeypatch.chdir(tmp_path)
    text = "\n".join(_blocks(page, "pycon"))
    if text:
        test = doctest.DocTestParser().get_doctest(text, {"__name__": "__docs__"}, page.name, str(page), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out: list[str] = []
        runner.run(test, out=out.append)
        assert runner.failures == 0, "".join(out)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "120"}
    for block in _blocks(page, "console"):
        steps = re.split(r"^\$ ", block, flags=re.M)[1:]
        for step in steps:
            command, _, expected = step.partition("\n")
            run = subprocess.run(["bash", "-c", f'csum() {{ "{sys.executable}" -m csum "$@"; }}\n{command}'],
                                 capture_output=True, text=True, env=env, timeout=300)
            got = run.stdout + run.stderr
            assert _matches(expected, got), f"{page.name}: $ {command}\nexpected:\n{expected}\ngot:\n{got}"


def test_completions_are_current():
    """share/'s bash, zsh and fish completions are what tools/gen_cli_docs.py makes of csum's argument parser now."""
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_cli_docs.py"), "--check"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_every_page_is_in_the_site():
    """Every page under docs/ is reachable from the site's index (a page outside every toctree is a warning that
    fails the CI build; this says which page)."""
    index = (ROOT / "docs" / "index.md").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        name = page.relative_to(ROOT / "docs").with_suffix("").as_posix()
        assert name == "index" or name in index or any(
            name.rsplit("/", 1)[-1] in p.read_text() for p in (ROOT / "docs").rglob("*.md") if p != page), name


@pytest.mark.parametrize("builder", ["html", "man"])
def test_site_builds_without_a_warning(builder, tmp_path):
    """``python -m sphinx -W --keep-going -b BUILDER docs OUT`` succeeds and prints no warning or error at all: -W
    fails the build on Sphinx's own warnings, and the output is searched too for the docutils messages
    ("(WARNING/2)", "(ERROR/3)") that a directive's nested parse prints without going through Sphinx's logging."""
    for module in ("sphinx", "myst_parser", "sphinxarg"):
        pytest.importorskip(module, reason=f"{module} is not installed (the [docs] extra)")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder,
                          str(ROOT / "docs"), str(tmp_path / builder)],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    problems = [line for line in (run.stdout + run.stderr).splitlines()
                if re.search(r"WARNING|ERROR|\((?:INFO/1|WARNING/2|ERROR/3|SEVERE/4)\)", line)]
    assert problems == [], "\n".join(problems)
    if builder == "man":
        built = (tmp_path / builder / "csum.1").read_text(encoding="utf-8")
        page = built.replace("\\-", "-")   # roff's hyphens
        assert "kernel-check" in page and "exit codes:" in page
        committed = (ROOT / "share" / "man" / "man1" / "csum.1").read_text(encoding="utf-8")
        undated = [re.sub(r'^(\.TH "CSUM" "1") "[^"]*"', r"\1", text, flags=re.M) for text in (built, committed)]
        assert undated[0] == undated[1], "share/man/man1/csum.1 is stale: run python tools/gen_cli_docs.py"
    else:
        assert (tmp_path / builder / "verify.html").exists() and (tmp_path / builder / "_images" / "throughput.png").exists()
