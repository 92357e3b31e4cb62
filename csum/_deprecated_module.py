"""The one mechanism for a module path kept for one release after a rename (csum/profile.py, csum/compare.py).

A shim module calls :func:`forward` with its new home: every attribute read from the old
module (``from csum.profile import Profile``) warns with a DeprecationWarning naming the
new module and returns the new module's object. :class:`Package` keeps the import system
from rebinding ``csum.profile``/``csum.compare`` (functions) to the shim modules.
"""

from __future__ import annotations

import importlib
import types
import warnings
from typing import Callable

#: Old module name (under csum) -> its new home.
RENAMED = {"profile": "profiles", "compare": "crossarch"}


def forward(old: str) -> Callable[[str], object]:
    """The ``__getattr__`` of the shim module ``csum.<old>``: warn, then read from the renamed module."""
    new = f"csum.{RENAMED[old]}"

    def __getattr__(name: str) -> object:
        module = importlib.import_module(new)
        if name == "__all__":  # ``from csum.<old> import *``: the public names the module had
            value: object = [n for n in vars(module) if not n.startswith("_")]
        elif name.startswith("__"):  # tools probing dunders (__wrapped__, __path__ ...): not a use
            raise AttributeError(f"module 'csum.{old}' has no attribute {name!r}")
        else:
            value = getattr(module, name)
        warnings.warn(f"the module csum.{old} is deprecated (renamed {new}; csum.{old} is the function): "
                      f"import {name} from {new}", DeprecationWarning, stacklevel=2)
        return value

    return __getattr__


class Package(types.ModuleType):
    """The ``csum`` package's module type: importing a renamed module's shim leaves the function in place."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in RENAMED and isinstance(value, types.ModuleType):
            return  # the import system binding csum.<old> to its shim: csum.<old> stays the function
        super().__setattr__(name, value)
