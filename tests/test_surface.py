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


def _run(code: str) -> None:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def _api_section() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parent.parent / "docs" / "api-overview.md").read_text(encoding="utf-8")


def _resolve(dotted: str) -> object:
    import importlib

    import csum

    obj, path = csum, "csum"
    for part in dotted.split("."):
        path += "." + part
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(path)
    return obj


def test_api_overview_names_exist():
    """Every ``csum.NAME[.ATTR]`` docs/api-overview.md shows, every name its ``from csum... import``
    lines import, and every ``p.METHOD`` of a profile and ``c.ATTR`` of a Checksum exists in the code."""
    import dataclasses
    import re

    import csum

    section = _api_section()
    refs = set(re.findall(r"\bcsum\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)", section))
    assert len(refs) > 40, refs
    missing = []
    for ref in sorted(refs):
        try:
            _resolve(ref)
        except (AttributeError, ImportError):
            missing.append(ref)
    for module, names in re.findall(r"^from (csum(?:\.\w+)*) import ([\w, ]+)", section, re.M):
        missing += [f"{module}.{n.strip()}" for n in names.split(",")
                    if not hasattr(_resolve(module[5:]) if module != "csum" else csum, n.strip())]
    for var, owner in (("p", csum.Profile), ("c", csum.Checksum)):
        attrs = set(re.findall(rf"(?<![\w.]){var}\.([A-Za-z_]\w*)", section))
        assert attrs, var
        fields = {f.name for f in dataclasses.fields(owner)} if dataclasses.is_dataclass(owner) else set()
        missing += [f"{owner.__name__}.{a}" for a in sorted(attrs) if not hasattr(owner, a) and a not in fields]
    assert not missing, missing


def test_every_public_name_is_in_the_api_overview():
    """Each name in ``csum.__all__`` appears in docs/api-overview.md (the page lists the surface)."""
    import re

    import csum

    words = set(re.findall(r"\b\w+\b", _api_section()))
    assert [name for name in csum.__all__ if name not in words] == []
