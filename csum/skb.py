"""``csum.skb``: the public path of :mod:`csum.bpf.skb` (its ``__all__``)."""

from .bpf.skb import *  # noqa: F403
from .bpf.skb import __all__  # noqa: F401
