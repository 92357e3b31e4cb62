"""Packet rewrite (NAT) with incremental checksum updates, as the kernel's helpers make them: one packet
(:mod:`.packet`), the tc/XDP program that makes the same change on a kernel (:mod:`.program`), and whole captures
rewritten by :class:`~csum.rewrite.rules.Rules` (:mod:`.rules`, :mod:`.apply`, :mod:`.capture`).

``csum.rewrite`` is :mod:`.packet`'s public names, :class:`Rules` and :func:`rewrite_capture`, each module imported
on first use: ``csum rewrite`` of a capture the C engine rewrites whole needs neither the one-packet editor nor the
Python walker behind it (tests/test_startup.py).
"""

import importlib
from typing import TYPE_CHECKING

from .rules import Rules

if TYPE_CHECKING:
    from .capture import RewriteResult, rewrite_capture
    from .packet import (Address, Call, CsumDiffCall, CsumReplaceCall, FieldChange, Rewrite, StoreBytesCall, rewrite,
                         set_field)

#: The names bound on first use, with the module that holds them (:mod:`.packet`'s ``__all__``, which
#: tests/rewrite/test_rewrite_imports.py holds this to, and :mod:`.capture`'s).
_LAZY = {**dict.fromkeys(("Address", "Call", "CsumDiffCall", "CsumReplaceCall", "FieldChange", "Rewrite",
                          "StoreBytesCall", "rewrite", "set_field"), "packet"),
         "RewriteResult": "capture", "rewrite_capture": "capture"}

__all__ = [*_LAZY, "Rules"]


def __getattr__(name: str) -> object:
    """:mod:`.packet`'s names and :mod:`.capture`'s, from their module on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
