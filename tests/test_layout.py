"""docs/design.md's "never" rules, checked on the source: which wing imports which, who imports csum's C, where
the public paths lead. The source is read with ast (every import statement, function-level ones included)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import csum

SRC = Path(csum.__file__).resolve().parent
#: docs/design.md "What may import what": the wings, lowest first.
ORDER = ["engine", "core", "arch", "layers", "bpf", "capture", "rewrite", "explain", "kernel", "cli"]
#: The floor every wing stands on.
FLOOR = {"csum.errors", "csum.types"}
#: The two modules of core the engine stands on.
ENGINE_BASE = {"csum.core.arith", "csum.core.inputs"}
C_EXTENSIONS = {"_speedups", "_cwalk", "_rewrite"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(module: str) -> list[tuple[str, int]]:
    """(imported module or name's module, line) for every import in ``module``, relative ones resolved."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.append((full if full in MODULES or alias.name in C_EXTENSIONS else base, node.lineno))
    return out


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ORDER else None


def test_the_wings_are_folders():
    """Every wing of docs/design.md is a package of csum, and the top level holds only the floor, the toolbox and
    the public faces (no internal module lives at the top)."""
    assert all((SRC / wing / "__init__.py").exists() for wing in ORDER)
    top = sorted(p.stem for p in SRC.glob("*.py"))
    assert top == ["__init__", "__main__", "batch", "crossarch", "dask", "errors", "inet", "pcap", "profiles", "prog",
                   "pytest_plugin", "scan", "skb", "testing", "types"], top


def test_only_the_engine_imports_c():
    """No module outside csum/engine/ imports _speedups or _cwalk, by import statement or by name."""
    offenders = []
    for module, path in MODULES.items():
        if module.startswith("csum.engine"):
            continue
        offenders += [f"{module}:{line}" for name, line in _imports(module) if name.rpartition(".")[2] in C_EXTENSIONS]
        offenders += [f"{module}: {m}" for m in re.findall(r"['\"]csum(?:\.engine)?\._(?:speedups|cwalk|rewrite)['\"]",
                                                           path.read_text())]
    assert not offenders, offenders


def test_core_imports_no_other_wing():
    """core/ imports only core, the engine it sums on, and the floor."""
    bad = [(m, name, line) for m in MODULES if _wing(m) == "core" for name, line in _imports(m)
           if name.startswith("csum") and _wing(name) not in ("core", "engine") and name not in FLOOR]
    assert not bad, bad


def test_the_engine_stands_on_core_arith_and_inputs_only():
    bad = [(m, name, line) for m in MODULES if _wing(m) == "engine" for name, line in _imports(m)
           if name.startswith("csum") and _wing(name) != "engine" and name not in FLOOR | ENGINE_BASE]
    assert not bad, bad


def test_no_wing_imports_from_a_wing_above_it():
    """The order of docs/design.md: engine < core < arch < layers < bpf < capture < rewrite < explain < kernel < cli (the
    engine's base in core aside); arch and layers do not import each other."""
    bad = []
    for module in MODULES:
        here = _wing(module)
        if here is None:
            continue
        for name, line in _imports(module):
            there = _wing(name)
            if there is None or there == here or (here == "engine" and name in ENGINE_BASE):
                continue
            if ORDER.index(there) > ORDER.index(here) or {here, there} == {"arch", "layers"}:
                bad.append(f"{module}:{line} imports {name}")
    assert not bad, bad


def test_the_floor_imports_no_wing():
    """csum.errors and csum.types import nothing of csum."""
    for module in FLOOR:
        assert not [name for name, _ in _imports(module) if name.startswith("csum")], module


PUBLIC = ["csum", "csum.batch", "csum.bpf", "csum.crossarch", "csum.dask", "csum.errors", "csum.inet", "csum.kernel",
          "csum.layers", "csum.pcap", "csum.prog", "csum.profiles", "csum.rewrite", "csum.scan", "csum.schemas",
          "csum.skb", "csum.testing", "csum.types"]


@pytest.mark.parametrize("path", PUBLIC)
def test_every_public_path_imports(path):
    """docs/design.md's public paths import, and their ``__all__`` names exist."""
    module = importlib.import_module(path)
    assert [name for name in getattr(module, "__all__", []) if not hasattr(module, name)] == []


def test_a_face_is_its_wing_module():
    """A public face (csum/inet.py ...) holds no code of its own: it re-exports one wing module's ``__all__``, and
    the names are the same objects."""
    faces = {"inet": "csum.layers.inet", "pcap": "csum.capture.pcap", "scan": "csum.capture.scan",
             "dask": "csum.capture.dask", "profiles": "csum.arch.profiles", "crossarch": "csum.arch.crossarch",
             "skb": "csum.bpf.skb", "prog": "csum.kernel.programs"}
    for face, home in faces.items():
        public, real = importlib.import_module(f"csum.{face}"), importlib.import_module(home)
        assert public.__all__ == real.__all__ and all(getattr(public, n) is getattr(real, n) for n in real.__all__)
        body = ast.parse((SRC / f"{face}.py").read_text()).body
        assert all(isinstance(node, (ast.ImportFrom, ast.Expr)) for node in body), face


def _type_only_lines(module: str) -> set[int]:
    """The lines of ``module``'s ``if TYPE_CHECKING:`` blocks (imports for annotations, never run)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING"
                                         or getattr(test, "attr", None) == "TYPE_CHECKING"):
            lines.update(n.lineno for n in ast.walk(node) if hasattr(n, "lineno"))
    return lines


def test_no_import_cycles():
    """No two modules of csum import each other, directly or through others (issue 31: the three cycles that
    deferred imports only escaped are gone): every import counts, function-level ones included, but not those under
    ``if TYPE_CHECKING:``, which never run. Each module's cycle is found by a depth-first walk of the import graph."""
    graph = {m: {name for name, line in _imports(m) if name in MODULES and name != m and line not in skip}
             for m in MODULES for skip in [_type_only_lines(m)]}
    cycles = []
    for start in sorted(graph):
        path, seen, todo = [], set(), [(start, iter(sorted(graph[start])))]
        while todo:
            node, following = todo[-1]
            if not path or path[-1] != node:
                path.append(node)
            nxt = next(following, None)
            if nxt is None:
                todo.pop()
                path.pop()
            elif nxt == start:
                cycles.append(" -> ".join([*path, start]))
                break
            elif nxt not in seen:
                seen.add(nxt)
                todo.append((nxt, iter(sorted(graph[nxt]))))
    assert cycles == []
