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
        assert _broken_anchors(tmp_path / builder) == []


def _broken_anchors(site: Path) -> list[str]:
    """Every link of the built site to an anchor of one of its own pages (``page.html#id``, ``#id``) whose page has
    no element with that id."""
    ids: dict[Path, set[str]] = {}
    pages = [p for p in site.rglob("*.html") if "_modules" not in p.parts]
    for page in pages:
        ids[page.resolve()] = set(re.findall(r'\bid="([^"]+)"', page.read_text(errors="replace")))
    broken = []
    for page in pages:
        for href in re.findall(r'href="([^"#:]*)#([^"]+)"', page.read_text(errors="replace")):
            target = (page.parent / href[0]).resolve() if href[0] else page.resolve()
            if target in ids and href[1] not in ids[target]:
                broken.append(f"{page.relative_to(site)}: {href[0]}#{href[1]}")
    return broken


def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (what MyST's myst_heading_anchors gives too): lower case, markup
    and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", heading.strip())
    return re.sub(r"[^\w\- ]", "", text.replace("`", "").lower()).replace(" ", "-")


def _markdown_anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page: its headings' slugs (a repeated one numbered -1, -2 ...) and MyST targets."""
    found, seen, fenced = set(), {}, False
    for line in page.read_text().splitlines():
        fenced ^= line.startswith("```")
        heading = None if fenced else re.match(r"#{1,6} (.*)", line)
        if heading:
            slug = _github_slug(heading.group(1))
            found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
        found.update(re.findall(r"^\(([\w-]+)\)=", line))
    return found


def test_markdown_anchors_resolve():
    """Every link from the README, the CHANGELOG or a docs page to an anchor of a Markdown page (``page.md#anchor``,
    ``#anchor``) names a heading or target of that page, as GitHub renders the files (the built site is checked by
    test_site_builds_without_a_warning)."""
    broken = []
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)", page.read_text()):
            path = (page.parent / target).resolve() if target else page
            if path.suffix == ".md" and anchor not in _markdown_anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {target}#{anchor}")
    assert broken == []
