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


def test_no_module_is_hidden_by_a_package_attribute():
    """Every module csum/<m>.py (but the two deprecated shims) is what ``csum.<m>`` names once
    imported: no function of the package shadows a module (issue 14: csum.profile and csum.compare did)."""
    _run("import importlib, pkgutil, sys, csum\n"
         "names = [m.name for m in pkgutil.iter_modules(csum.__path__) if m.name not in ('profile', 'compare')]\n"
         "assert {'profiles', 'crossarch'} <= set(names), names\n"
         "for name in names:\n"
         "    importlib.import_module('csum.' + name)\n"
         "    assert getattr(csum, name) is sys.modules['csum.' + name], name\n"
         "import csum.profiles as p, csum.crossarch as c\n"
         "assert p.__name__ == 'csum.profiles' and c.__name__ == 'csum.crossarch'")


def test_old_module_paths_warn_and_leave_the_functions_in_place():
    """``from csum.profile import Profile`` / ``from csum.compare import Row`` (the modules before the
    rename) still work for one release, warn with a DeprecationWarning attributed to the importing
    line, name the new module, and leave ``csum.profile`` / ``csum.compare`` the callable functions."""
    _run("import warnings, csum, csum.profiles, csum.crossarch\n"
         "with warnings.catch_warnings(record=True) as seen:\n"
         "    warnings.simplefilter('always')\n"
         "    from csum.profile import Profile, profile_names\n"
         "    from csum.compare import Row, compare\n"
         "    import csum.profile, csum.compare\n"
         "assert [w.category for w in seen] == [DeprecationWarning] * 4, [str(w.message) for w in seen]\n"
         "assert all(w.filename == '<string>' for w in seen), [w.filename for w in seen]\n"
         "assert 'import Profile from csum.profiles' in str(seen[0].message), seen[0].message\n"
         "assert 'import Row from csum.crossarch' in str(seen[2].message), seen[2].message\n"
         "assert Profile is csum.profiles.Profile and Row is csum.crossarch.Row and compare is csum.crossarch.compare\n"
         "assert profile_names is csum.profiles.profile_names\n"
         "assert csum.profile is csum.profiles.profile and csum.compare is csum.crossarch.compare\n"
         "assert csum.profile('aarch64').name == 'arm64'\n"
         "assert [r.profile for r in csum.compare(b'ab', 0, ['generic'])] == ['generic']\n"
         "import importlib; assert importlib.import_module('csum.profile').__name__ == 'csum.profile'\n"
         "assert callable(csum.profile) and not isinstance(csum.profile, type(csum))")


def test_old_module_path_star_import():
    """``from csum.profile import *`` binds the public names the module had (with DeprecationWarnings), and a
    dunder probe (``__wrapped__``, as inspect does) is an AttributeError without a warning."""
    _run("import warnings, csum\n"
         "with warnings.catch_warnings(record=True) as seen:\n"
         "    warnings.simplefilter('always')\n"
         "    ns = {}\n"
         "    exec('from csum.profile import *', ns)\n"
         "    import sys; assert not hasattr(sys.modules['csum.profile'], '__wrapped__')\n"
         "assert seen and {w.category for w in seen} == {DeprecationWarning}, [str(w.message) for w in seen]\n"
         "assert not any('__wrapped__' in str(w.message) for w in seen)\n"
         "assert ns['Profile'] is csum.profiles.Profile and ns['parse_profile'] is csum.profiles.parse_profile\n"
         "assert ns['profile'] is csum.profile and callable(csum.profile)")


def test_old_module_paths_unknown_name():
    """A name the renamed module does not have is an ImportError from the old path too (no warning hides it)."""
    _run("import warnings; warnings.simplefilter('error')\n"
         "try:\n"
         "    from csum.profile import no_such_name\n"
         "except ImportError as exc:\n"
         "    assert 'no_such_name' in str(exc), exc\n"
         "else:\n"
         "    raise AssertionError('imported')")


def _api_section() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    return text.split("\n## API overview\n", 1)[1].split("\n## ", 1)[0]


def _resolve(dotted: str) -> object:
    import importlib

    import csum

    obj, path = csum, "csum"
    for part in dotted.split("."):
        path += "." + part
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(path)
    return obj


def test_readme_api_section_names_exist():
    """Every ``csum.NAME[.ATTR]`` the README's API section shows, every name its ``from csum... import``
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


def test_every_public_name_is_documented_in_the_readme_api_section():
    """Each name in ``csum.__all__`` appears in the README's API section (the section lists the surface)."""
    import re

    import csum

    words = set(re.findall(r"\b\w+\b", _api_section()))
    assert [name for name in csum.__all__ if name not in words] == []
