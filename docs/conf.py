"""Sphinx configuration of csum's documentation (MyST Markdown pages; the API and CLI references generated).

Built in CI with warnings as errors: ``python -m sphinx -W --keep-going -b html docs build/docs``; the man page
with ``-b man`` (``build/man/csum.1``). Every example on the pages runs in the test suite
(tests/test_docs.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"csum {release}"

#: ``sphinx-build -b man``: csum(1) from the CLI reference (generated from the argument parser).
man_pages = [("reference/cli", "csum", "the Internet checksum as each Linux architecture computes it",
              [author], 1)]
