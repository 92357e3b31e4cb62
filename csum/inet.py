"""``csum.inet``: the public path of :mod:`csum.layers.inet` (its ``__all__``)."""

from .layers.inet import *  # noqa: F403
from .layers.inet import __all__  # noqa: F401
