"""One exception family for csum; every member carries a stable ``code``.

Kernel-modelled BPF helpers do not raise for conditions the kernel reports by
value: they return the kernel's negative errno (see :data:`EINVAL`, :data:`EFAULT`).
"""

from __future__ import annotations

#: errno values returned (negated) by the emulated BPF helpers, as on Linux.
EINVAL = 22
EFAULT = 14


class CsumError(Exception):
    """Base class of every error csum raises on purpose."""

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class CsumTypeError(CsumError, TypeError):
    """An argument has the wrong type (a str where bytes are needed, a float ...)."""

    code = "bad-type"


class CsumValueError(CsumError, ValueError):
    """An argument has the right type but an invalid value (out of range, wrong width ...)."""

    code = "bad-value"
