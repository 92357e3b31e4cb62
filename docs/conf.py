"""Sphinx configuration of csum's documentation (MyST Markdown pages; the API and CLI references generated).

Built in CI with warnings as errors: ``python -m sphinx -W --keep-going -b html docs build/docs``; the man page
with ``-b man`` (``build/man/csum.1``). Every example on the pages runs in the test suite
(tests/test_docs.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# argparse wraps the usage lines sphinx-argparse renders at the terminal's width: one width, so that the committed
# man page (share/man/man1/csum.1, tests/test_docs.py) is the same from every shell
os.environ["COLUMNS"] = "80"

import csum  # noqa: E402

project = "csum"
author = "the csum developers"
copyright = "csum's authors (MIT)"
release = version = csum.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode", "sphinxarg.ext"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "undoc-members": False}


def _render_list(items: list, markdown_help: bool, settings: object = None) -> list:
    """sphinx-argparse's ``render_list`` (it parses every help text as reStructuredText), but a text of several lines
    (the exit-code epilogs of ``verify`` and ``fix``, laid out for ``--help`` by RawDescriptionHelpFormatter) is
    shown as it is, a literal block, instead of being misread as indented reStructuredText."""
    from docutils import nodes

    if not markdown_help and items and all(isinstance(item, str) and "\n" in item.strip() for item in items):
        return [nodes.literal_block(item, item) for item in items]
    return _sphinxarg_render_list(items, markdown_help, settings)


import sphinxarg.ext  # noqa: E402

_sphinxarg_render_list = sphinxarg.ext.render_list
sphinxarg.ext.render_list = _render_list

# Furo: a reading column with the page's own contents beside it, light and dark, readable on a phone; its column is
# widened (_static/csum.css) so that the coverage, benchmark and error tables and the transcripts fit a 1280-px window
html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["csum.css"]
html_title = f"csum {release}"

#: ``sphinx-build -b man``: csum(1) from the CLI reference (generated from the argument parser).
man_pages = [("reference/cli", "csum", "the Internet checksum as each Linux architecture computes it",
              [author], 1)]
