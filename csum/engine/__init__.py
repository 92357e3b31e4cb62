"""The engine: the one place where bytes become a one's-complement sum, and the only importer of csum's C.

Every checksum in csum reduces to one primitive, :func:`ones_sum`: the
*canonical* ``width``-bit one's-complement sum of a buffer read as ``width``-bit
words in a given byte order, the last word zero-padded. Canonical means what an
end-around-carry accumulator of that width produces when it starts at zero:
0 only when every byte is 0, otherwise a value in 1..2**width-1. Because
``2**width == 1 (mod 2**width - 1)``, that sum is the whole buffer read as one
integer, reduced mod ``2**width - 1`` (RFC 1071 section 2: the sum is
independent of word grouping and, up to a byte swap, of byte order).

Three engines compute it, each an :class:`Engine` of two functions with one
signature (csum/engine/_speedups.pyi):

* ``c``: the optional extension ``csum.engine._speedups`` (csum/engine/_speedups.c, built at
  install when a compiler is present) sums 64-bit words, for every size;
* ``numpy`` and ``python``: the twins in csum/engine/native.py (Python ints; numpy
  reductions for long buffers in the ``numpy`` one).

One of them is bound here once, at import (MarkupSafe's shape): ``CSUM_ENGINE``
= ``c``, ``numpy`` or ``python`` forces one, unset or ``auto`` takes the best
available, and :data:`ENGINE` names it (``csum --version`` prints it). Nothing in
csum switches it later; tests and benchmarks run a block under another engine
with :func:`use`, the one switch, or call the :data:`ENGINES` objects directly. An
engine's ``ones_sum`` returns NotImplemented for arguments it does not sum;
:func:`ones_sum` then raises csum's error (csum/core/inputs.py) naming the
caller's argument.

With the extension built, :func:`ones_sum` and the public functions users call in
loops (``csum_partial``, ``internet_checksum``, ``bpf_csum_diff`` in both forms and
every profile's, ``bpf_l3/l4_csum_replace``, ``csum_replace2/4``,
``inet_proto_csum_replace16``) are ``_speedups.FastPath`` objects (:func:`fast_path`):
C answers the calls it takes with no Python frame, the checked Python function the
rest; under another engine they all take the Python function.

The same switch decides the C walker ``csum.engine._cwalk`` (csum/engine/_cwalk.c): :data:`cwalk` is the
extension when it is built and :data:`ENGINE` is ``c``, else None, and every user of the C walker reads
``csum.engine.cwalk`` when it runs (so a test that sets it to None checks the Python walker alone); so do the
rewriter ``csum.engine._rewrite`` (:data:`crewrite`) and the explainer's hypotheses ``csum.engine._explain``
(:data:`cexplain`, csum/explain/quick.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, Literal, NamedTuple, TypeVar

from ..core.inputs import as_view
from ..errors import Code, CsumEngineError, CsumValueError
from . import native
from .native import NUMPY_MIN_BYTES, WIDTHS

__all__ = ["CEXPLAIN", "CREWRITE", "CWALK", "ENGINE", "ENGINES", "Engine", "NUMPY_MIN_BYTES", "SHAPES", "ByteOrder",
           "cexplain", "crewrite", "cwalk", "fast_path", "ones_sum", "ones_sum_many", "use"]

ByteOrder = Literal["little", "big"]


class Engine(NamedTuple):
    """One way of summing bytes: the two functions of csum/_speedups.pyi."""

    name: str
    #: ``(buf, width, byteorder[, name]) -> int``: the canonical ``width``-bit sum of ``buf``, or
    #: NotImplemented for arguments the engine does not sum.
    ones_sum: Callable[..., Any]
    #: ``(buf, offsets, lengths, out, width, byteorder) -> None``: each row's sum into ``out``
    #: (the C one's stub takes only the literal widths and byte orders the caller has checked).
    ones_sum_many: Callable[[Any, Any, Any, Any, Any, Any], None]


try:
    from . import _speedups
except ImportError:  # built without a compiler: numpy / pure Python only
    _speedups = None  # type: ignore[assignment]
try:
    from . import _cwalk
except ImportError:  # built without a compiler: the Python walker answers everything
    _cwalk = None  # type: ignore[assignment]
try:
    from . import _rewrite
except ImportError:  # built without a compiler: csum.rewrite.apply rewrites every packet of a capture
    _rewrite = None  # type: ignore[assignment]
try:
    from . import _explain
except ImportError:  # built without a compiler: csum.explain tries every hypothesis in Python
    _explain = None  # type: ignore[assignment]


def _engines() -> dict[str, Engine]:
    found = {}
    if _speedups is not None:
        found["c"] = Engine("c", _speedups.ones_sum, _speedups.ones_sum_many)
    found["numpy"] = Engine("numpy", native.numpy_ones_sum, native.numpy_ones_sum_many)
    found["python"] = Engine("python", native.ones_sum, native.ones_sum_many)
    return found


#: Every engine this installation has, fastest first (tests and bench/ run each of them).
ENGINES: dict[str, Engine] = _engines()


def _choose(wanted: str) -> str:
    wanted = wanted.strip().lower() or "auto"
    if wanted == "auto":
        return next(iter(ENGINES))
    if wanted not in ("c", "numpy", "python"):
        raise CsumEngineError(f"CSUM_ENGINE must be one of auto, c, numpy, python; got {wanted!r}")
    if wanted not in ENGINES:
        raise CsumEngineError("CSUM_ENGINE=c but the C extension csum.engine._speedups is not built "
                              "(reinstall with a C compiler, or use one of auto, numpy, python)")
    return wanted


#: The C walker csum/engine/_cwalk.c where it is built, whatever the engine: csum/layers/accel.py binds it to
#: the protocol table at import. Read :data:`cwalk` to walk.
CWALK: ModuleType | None = _cwalk
#: The capture rewriter csum/engine/_rewrite.c where it is built, whatever the engine. Read :data:`crewrite`.
CREWRITE: ModuleType | None = _rewrite
#: The ``csum_partial`` shapes C computes (csum/engine/_arith.c), by the name of the algorithm csum/arch
#: registers for each (empty where the extension is not built): the small integer a shaped fast path passes.
#: The explainer's hypotheses csum/engine/_explain.c where it is built, whatever the engine. Read :data:`cexplain`.
CEXPLAIN: ModuleType | None = _explain
SHAPES: dict[str, int] = {} if _speedups is None else {name: i for i, name in enumerate(_speedups.SHAPES)}

# The engine-dependent bindings, all made by _bind (at import, and by use()):
#: Which engine sums bytes (``c``, ``numpy`` or ``python``), chosen at import; ``csum --version`` prints it.
ENGINE: str
_sum: Callable[..., Any]
#: The C walker csum/engine/_cwalk.c (None where it is not built or ENGINE is not ``c``): read it when it is
#: needed, never copy it.
cwalk: ModuleType | None
#: The capture rewriter csum/engine/_rewrite.c (None where it is not built or ENGINE is not ``c``):
#: csum/rewrite/fast.py drives it; read it when it is needed, never copy it.
crewrite: ModuleType | None
#: The explainer's hypotheses csum/engine/_explain.c (None where it is not built or ENGINE is not ``c``):
#: csum/explain/quick.py drives it.
cexplain: ModuleType | None
#: The bound engine's row sums (csum/batch.py): arguments checked by the caller.
ones_sum_many: Callable[[Any, Any, Any, Any, Any, Any], None]


def _bind(name: str) -> None:
    """Bind engine ``name``: every engine-dependent binding of csum at once."""
    global ENGINE, _sum, cwalk, crewrite, cexplain, ones_sum_many
    ENGINE, _sum, ones_sum_many = name, ENGINES[name].ones_sum, ENGINES[name].ones_sum_many
    cwalk, crewrite, cexplain = (CWALK, CREWRITE, CEXPLAIN) if name == "c" else (None, None, None)
    if _speedups is not None:
        _speedups.set_fast_paths(name == "c")


_bind(_choose(os.environ.get("CSUM_ENGINE", "auto")))


@contextlib.contextmanager
def use(name: str) -> Iterator[Engine]:
    """Tests and benchmarks only: run the block with engine ``name`` bound, then bind the one before again.

    The one switch: :data:`ENGINE`, the summing function behind :func:`ones_sum`, :data:`ones_sum_many`,
    :data:`cwalk`, :data:`crewrite` and every C fast path (:func:`fast_path`; they take their Python function under another
    engine) change together, so csum runs as if imported with ``CSUM_ENGINE=name``. Nothing in csum calls
    it; it is not thread-safe (it rebinds module globals for the whole process).
    """
    before = ENGINE
    _bind(_choose(name))
    try:
        yield ENGINES[ENGINE]
    finally:
        _bind(before)


F = TypeVar("F", bound=Callable[..., Any])


def fast_path(name: str, shape: str | None = None) -> Callable[[F], F]:
    """Decorator: the C function ``name`` of csum/engine/_speedups.c answers first, the decorated one after it.

    The result is a ``_speedups.FastPath``: it returns the C function's result unless
    that is NotImplemented (an argument it does not take, whatever the reason), then
    calls the decorated, checked Python function, which gives the same bits and
    raises csum's errors. No Python frame runs on the fast path. ``shape`` names a
    csum/arch algorithm: the C function then gets its :data:`SHAPES` code as first
    argument, and the function is returned unchanged where C has no such shape; so it
    is where the extension is not built. Under another engine than ``c`` (at import, or
    inside :func:`use`) every FastPath calls the Python function directly.
    tests/engine/test_fast_paths.py checks each pair agrees.
    """
    def bind(slow: F) -> F:
        if _speedups is None or (shape is not None and shape not in SHAPES):
            return slow
        first = () if shape is None else (SHAPES[shape],)
        return functools.update_wrapper(_speedups.FastPath(getattr(_speedups, name), slow, *first), slow)  # type: ignore

    return bind


@fast_path("ones_sum")
def ones_sum(buf: Any, width: int, byteorder: ByteOrder, name: str = "view") -> int:
    """The canonical ``width``-bit one's-complement sum of ``buf`` on the bound engine.

    ``buf`` is any C-contiguous bytes-like object, read as ``width``-bit words
    (8, 16, 32 or 64) in ``byteorder`` ("little": each word least significant
    byte first); a trailing partial word is zero-padded at its high-address end.
    Anything else raises csum's error naming the argument ``name``.
    """
    total = _sum(buf, width, byteorder)
    if total is NotImplemented:  # the checks raise; an exporter that only refused a C-contiguous view is summed
        check_word(width, byteorder)
        return native.ones_sum(as_view(buf, name), width, byteorder)
    return total


def check_word(width: object, byteorder: object) -> None:
    """The word shapes every engine sums: ``width`` 8/16/32/64 bits, ``byteorder`` little or big."""
    if width.__class__ is not int or width not in WIDTHS:
        raise CsumValueError(f"width must be 8, 16, 32 or 64, got {width!r}", code=Code.BAD_WIDTH)
    if byteorder != "little" and byteorder != "big":
        raise CsumValueError(f"byteorder must be 'little' or 'big', got {byteorder!r}", code=Code.BAD_BYTEORDER)
