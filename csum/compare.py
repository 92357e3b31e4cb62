"""Deprecated (one release): this module is now :mod:`csum.crossarch`; ``csum.compare`` is the function.

``from csum.compare import X`` still works and warns (csum/_deprecated_module.py).
"""

from ._deprecated_module import forward as _forward

__getattr__ = _forward("compare")
del _forward
