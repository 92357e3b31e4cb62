"""``csum.prog``: the public path of :mod:`csum.kernel.prog` (its ``__all__``)."""

from .kernel.prog import *  # noqa: F403
from .kernel.prog import __all__  # noqa: F401
