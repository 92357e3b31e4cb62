"""The BPF checksum helpers of net/core/filter.c (:mod:`.helpers`), the socket buffer model behind them
(:mod:`.skb`) and the warnings for calls the kernel accepts but that are almost surely wrong (:mod:`.misuse`).

``csum.bpf`` is :mod:`.helpers`' public names.
"""

from .helpers import *  # noqa: F403
from .helpers import __all__  # noqa: F401
