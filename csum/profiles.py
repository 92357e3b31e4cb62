"""``csum.profiles``: the public path of :mod:`csum.arch.profiles` (its ``__all__``)."""

from .arch.profiles import *  # noqa: F403
from .arch.profiles import __all__  # noqa: F401
