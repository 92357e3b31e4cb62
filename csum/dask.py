"""``csum.dask``: the public path of :mod:`csum.capture.dask` (its ``__all__``)."""

from .capture.dask import *  # noqa: F403
from .capture.dask import __all__  # noqa: F401
