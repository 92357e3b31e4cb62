"""``csum.scan``: the public path of :mod:`csum.capture.scan` (its ``__all__``)."""

from .capture.scan import *  # noqa: F403
from .capture.scan import __all__  # noqa: F401
