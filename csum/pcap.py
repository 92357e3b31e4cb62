"""``csum.pcap``: the public path of :mod:`csum.capture.pcap` (its ``__all__``)."""

from .capture.pcap import *  # noqa: F403
from .capture.pcap import __all__  # noqa: F401
