"""Deprecated (one release): this module is now :mod:`csum.profiles`; ``csum.profile`` is the function.

``from csum.profile import X`` still works and warns (csum/_deprecated_module.py).
"""

from ._deprecated_module import forward as _forward

__getattr__ = _forward("profile")
del _forward
