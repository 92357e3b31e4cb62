"""``csum.rewrite``: the public path of :mod:`csum.layers.rewrite` (its ``__all__``)."""

from .layers.rewrite import *  # noqa: F403
from .layers.rewrite import __all__  # noqa: F401
