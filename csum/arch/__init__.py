"""Registry of ``csum_partial`` algorithms, one per kernel implementation.

An algorithm is ``fn(view, seed, align) -> u32``: a validated byte view, the
32-bit seed as the CPU holds it, and the buffer's offset from an 8-byte
boundary. A profile TOML names its algorithm; a user adding a new architecture
drops in a TOML file and, if the algorithm is new, registers one function::

    @csum.arch.register("myarch")
    def myarch_csum_partial(view, seed, align): ...

An algorithm may also have a vectorized form over numpy rows (csum/batch.py registers
its own with :func:`register_vectorized`); the one registry holds both.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

from ..core.diff import PartialFn
from ..errors import Code, CsumValueError

#: A vectorized form: (uint8 rows (N, L), uint64 seeds (N,), align) -> uint64 u32 sums (N,), or None
#: where it has no vectorized path (that alignment); csum.batch then runs the scalar algorithm.
VectorFn = Callable[[Any, Any, int], Any]

#: The primitives of a profile :func:`csum.crossarch.compare_function` (``csum compare --function``) compares,
#: besides csum_partial.
FUNCTIONS = ("csum_tcpudp_nofold", "csum_tcpudp_magic", "csum_ipv6_magic", "ip_fast_csum", "csum_fold")

_ALGORITHMS: dict[str, PartialFn] = {}
_VECTORIZED: dict[str, VectorFn] = {}


def register(name: str) -> Callable[[PartialFn], PartialFn]:
    """Decorator: make ``fn`` available to profiles as ``algorithm = "<name>"``."""

    def wrap(fn: PartialFn) -> PartialFn:
        if name in _ALGORITHMS and _ALGORITHMS[name] is not fn:
            raise CsumValueError(f"algorithm {name!r} is already registered", code=Code.DUPLICATE)
        _ALGORITHMS[name] = fn
        return fn

    return wrap


def register_vectorized(name: str) -> Callable[[VectorFn], VectorFn]:
    """Decorator: the vectorized form of the registered algorithm ``name`` (the same bits per row)."""

    def wrap(fn: VectorFn) -> VectorFn:
        algorithm(name)  # unknown-algorithm error for a form of nothing
        if name in _VECTORIZED and _VECTORIZED[name] is not fn:
            raise CsumValueError(f"vectorized form of {name!r} is already registered", code=Code.DUPLICATE)
        _VECTORIZED[name] = fn
        return fn

    return wrap


def vectorized(name: str) -> VectorFn | None:
    """The vectorized form registered for algorithm ``name``, or None."""
    return _VECTORIZED.get(name)


def algorithm(name: str) -> PartialFn:
    """The registered algorithm called ``name``."""
    _load_builtin()
    try:
        return _ALGORITHMS[name]
    except KeyError:
        known = ", ".join(sorted(_ALGORITHMS))
        raise CsumValueError(f"unknown algorithm {name!r}; registered: {known}", code=Code.UNKNOWN_ALGORITHM) from None


def algorithm_names() -> list[str]:
    """Names of every registered algorithm."""
    _load_builtin()
    return sorted(_ALGORITHMS)


def _load_builtin() -> None:
    """Import every module of this package once: each registers its algorithms."""
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded.append(True)


_loaded: list[bool] = []
