"""csum/__init__.py: the public names."""

import subprocess
import sys


def test_public_surface_lists_every_name_and_submodule():
    """``from csum import *`` binds every ``__all__`` name in a fresh interpreter (submodules such as
    csum.batch and csum.rewrite included, imported on first use) without a warning."""
    code = ("import warnings; warnings.simplefilter('error'); import csum; ns = {}; "
            "exec('from csum import *', ns); import types; "
            "assert all(n in ns for n in csum.__all__), [n for n in csum.__all__ if n not in ns]; "
            "assert isinstance(ns['batch'], types.ModuleType) and callable(ns['profile'])")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
