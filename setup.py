"""Build the optional C accelerator csum._speedups; all metadata lives in pyproject.toml.

``optional=True``: without a C compiler the extension is skipped and csum runs
on its numpy / pure-Python engines (csum/_engine.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("csum._speedups", sources=["csum/_speedups.c"], optional=True)])
