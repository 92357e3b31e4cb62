"""Packet rewrite (NAT) with incremental checksum updates, as the kernel's helpers make them: one packet
(:mod:`.packet`), the tc/XDP program that makes the same change on a kernel (:mod:`.program`), and whole captures
rewritten by :class:`~csum.rewrite.rules.Rules` (:mod:`.rules`, :mod:`.apply`, :mod:`.capture`).

``csum.rewrite`` is :mod:`.packet`'s public names, :class:`Rules` and :func:`rewrite_capture` (imported on first
use: it brings the capture reader, and numpy with it).
"""

from typing import TYPE_CHECKING

from . import packet as _packet
from .packet import *  # noqa: F403
from .rules import Rules

if TYPE_CHECKING:
    from .capture import RewriteResult, rewrite_capture

__all__ = [*_packet.__all__, "Rules", "RewriteResult", "rewrite_capture"]


def __getattr__(name: str) -> object:
    """``rewrite_capture`` and ``RewriteResult``, from :mod:`.capture`, on first use."""
    if name in ("rewrite_capture", "RewriteResult"):
        from . import capture

        return getattr(capture, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
