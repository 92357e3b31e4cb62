"""``csum.crossarch``: the public path of :mod:`csum.arch.crossarch` (its ``__all__``)."""

from .arch.crossarch import *  # noqa: F403
from .arch.crossarch import __all__  # noqa: F401
