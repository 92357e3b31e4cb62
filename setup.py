"""Build the optional C extensions of csum.engine: _speedups (summing), _cwalk (the capture checker's fast
walker, with the protocol table generated from csum/layers/table.py: csum/engine/_cwalk_table.h) and _rewrite
(csum rewrite's fast path, with the same generated table); all metadata lives in pyproject.toml.

``optional=True``: without a C compiler the extensions are skipped and csum runs on its numpy / pure-Python
engines and its Python walker (csum/engine/__init__.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("csum.engine._speedups", sources=["csum/engine/_speedups.c"], optional=True),
                   Extension("csum.engine._cwalk", sources=["csum/engine/_cwalk.c"],
                             depends=["csum/engine/_cwalk_table.h"], optional=True),
                   Extension("csum.engine._rewrite", sources=["csum/engine/_rewrite.c"],
                             depends=["csum/engine/_cwalk_table.h"], optional=True)])
