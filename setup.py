"""Build the optional C accelerators csum._speedups (summing) and csum._cwalk (the capture checker's fast
walker); all metadata lives in pyproject.toml.

``optional=True``: without a C compiler the extension is skipped and csum runs
on its numpy / pure-Python engines (csum/_engine.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("csum._speedups", sources=["csum/_speedups.c"], optional=True),
                   Extension("csum._cwalk", sources=["csum/_cwalk.c"], optional=True)])
