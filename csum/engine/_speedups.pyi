"""Signatures of the C accelerator csum/engine/_speedups.c (arithmetic: _arith.c; pure-Python twins of the sums:
csum/engine/native.py; of the helpers: the functions a FastPath pairs each with)."""

from collections.abc import Callable
from types import NotImplementedType
from typing import Any, Literal

from typing_extensions import Buffer

BLOCK_BYTES_LOG2: int
#: The csum_partial shapes, by the name of the csum/arch algorithm each computes; a shape is its index here.
SHAPES: tuple[str, ...]

def ones_sum(buf: object, width: object, byteorder: object, name: str = ..., /) -> int | NotImplementedType:
    """The canonical ``width``-bit sum of ``buf`` (a C-contiguous buffer; width 8/16/32/64, byte order
    little/big), or NotImplemented for anything else; ``name`` is ignored."""

def ones_sum_blocked(buf: Buffer, width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"],
                     block: int, /) -> int | NotImplementedType:
    """:func:`ones_sum` summing ``block`` bytes (a multiple of 8) per accumulator block (tests)."""

def ones_sum_many(buf: Buffer, offsets: Buffer, lengths: Buffer, out: Buffer,
                  width: Literal[8, 16, 32, 64], byteorder: Literal["little", "big"], /) -> None:
    """``out[i]`` = :func:`ones_sum` of ``buf[offsets[i] : offsets[i] + lengths[i]]`` (int64 offsets and
    lengths, uint64 out, one count); ValueError for a row outside ``buf``."""

# Each function below answers the call of the public function named in its docstring for the arguments it takes
# and returns NotImplemented (no error set) for any other; a FastPath then calls the checked function.

def internet_checksum(buf: object) -> int | NotImplementedType:
    """csum.internet_checksum."""

def internet_checksum_bytes(buf: object) -> bytes | NotImplementedType:
    """csum.internet_checksum_bytes."""

def partial(shape: int, buf: object, seed: object = ..., *, align: object = ...) -> int | NotImplementedType:
    """csum.csum_partial and Profile.csum_partial: csum_partial of shape ``shape``."""

def csum_diff(shape: int, frm: object, to: object, seed: object = ..., *, frm_align: object = ...,
              to_align: object = ...) -> int | NotImplementedType:
    """csum.bpf_csum_diff and Profile.bpf_csum_diff (Linux >= 6.13) over shape ``shape``."""

def csum_diff_legacy(shape: int, frm: object, to: object, seed: object = ...) -> int | NotImplementedType:
    """csum.bpf_csum_diff_legacy and Profile.bpf_csum_diff_legacy for the sizes the scratch buffer takes."""

def inet_proto_csum_replace16(shape: int, sum16: object, frm: object, to: object) -> int | NotImplementedType:
    """csum.inet_proto_csum_replace16 and Profile.inet_proto_csum_replace16 over shape ``shape``."""

def csum_replace2(sum16: object, old: object, new: object) -> int | NotImplementedType:
    """csum.csum_replace2."""

def csum_replace4(sum16: object, frm: object, to: object) -> int | NotImplementedType:
    """csum.csum_replace4."""

def l3_csum_replace(pkt: object, offset: object, frm: object, to: object, flags: object) -> int | NotImplementedType:
    """csum.bpf_l3_csum_replace (pkt patched in place), except the calls a BpfMisuse check looks at."""

def l4_csum_replace(pkt: object, offset: object, frm: object, to: object, flags: object, *,
                    ip_summed: object = ...) -> int | NotImplementedType:
    """csum.bpf_l4_csum_replace (pkt patched in place), except the calls a BpfMisuse check looks at."""

def set_fast_paths(on: object, /) -> bool:
    """Whether every FastPath tries its C function (csum.engine binds it with the engine); the previous setting."""

class FastPath:
    """``fast([first, ]*args, **kwargs)`` unless that returns NotImplemented or fast paths are off, else
    ``slow(*args, **kwargs)``."""

    fast: Callable[..., Any]
    slow: Callable[..., Any]
    first: Any

    def __init__(self, fast: Callable[..., Any], slow: Callable[..., Any], first: Any = ..., /) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
