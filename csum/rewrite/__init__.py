"""Packet rewrite (NAT) with incremental checksum updates, as the kernel's helpers make them: one packet
(:mod:`.packet`) and the tc/XDP program that makes the same change on a kernel (:mod:`.program`).

``csum.rewrite`` is :mod:`.packet`'s public names.
"""

from .packet import *  # noqa: F403
from .packet import __all__  # noqa: F401
