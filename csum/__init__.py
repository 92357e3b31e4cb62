"""csum: the Internet checksum as the Linux kernel computes it, on every architecture.

Generic functions follow lib/checksum.c and include/net/checksum.h on a
little-endian CPU; :func:`profile` selects an architecture's own code.
"""

import importlib
from typing import TYPE_CHECKING

from .arch.generic import generic_le as _generic_le
from .bpf.helpers import (
    BPF_F_HDR_FIELD_MASK,
    BPF_F_IPV6,
    BPF_F_MARK_ENFORCE,
    BPF_F_MARK_MANGLED_0,
    BPF_F_PSEUDO_HDR,
    bpf_l3_csum_replace,
    bpf_l4_csum_replace,
)
from .core import diff as _diff
from .core.ones import (
    CSUM_MANGLED_0,
    csum16_add,
    csum16_sub,
    csum_add,
    csum_block_add,
    csum_block_sub,
    csum_fold,
    csum_fold_bytes,
    csum_neg,
    csum_replace2,
    csum_replace4,
    csum_replace_by_diff,
    csum_shift,
    csum_sub,
    csum_unfold,
    from32to16,
    from64to32,
)
from .core.partial import GENERIC_LE as _GENERIC_LE
from .core.partial import (
    csum_partial,
    do_csum,
    internet_checksum,
    internet_checksum_bytes,
    ip_compute_csum,
    ip_compute_csum_bytes,
    ip_fast_csum,
    ip_fast_csum_bytes,
    verify_checksum,
)
from .core.pseudo import (
    csum_ipv6_magic,
    csum_ipv6_magic_bytes,
    csum_tcpudp_magic,
    csum_tcpudp_magic_bytes,
    csum_tcpudp_nofold,
)
from .core.stream import Checksum, internet_checksum_iov
from .engine import fast_path
from .errors import CsumError, CsumTypeError, CsumValueError
from .types import Sum16, Wsum

__version__ = "0.1.0"


@fast_path("inet_proto_csum_replace16", _GENERIC_LE)
def inet_proto_csum_replace16(sum16: Sum16, frm: object, to: object) -> Sum16:
    """net/core/utils.c ``inet_proto_csum_replace16`` (non-CHECKSUM_PARTIAL) with generic csum_partial.

    ``sum16``: the checksum field as a little-endian CPU holds it; ``frm``/``to``: the old and new
    16 bytes. :meth:`Profile.inet_proto_csum_replace16` uses another architecture's ``csum_partial``.
    """
    return _diff.inet_proto_csum_replace16(_generic_le, sum16, frm, to)  # type: ignore[return-value]


@fast_path("csum_diff", _GENERIC_LE)
def bpf_csum_diff(frm: object, to: object, seed: Wsum = Wsum(0), *, frm_align: int = 0, to_align: int = 0) -> int:
    """net/core/filter.c ``bpf_csum_diff`` (Linux >= 6.13, homogenized) with generic csum_partial.

    The aligns (address mod 8 of each buffer) are accepted for symmetry with
    :meth:`Profile.bpf_csum_diff`; generic ``csum_partial`` does not depend on them.
    """
    return _diff.csum_diff(_generic_le, frm, to, seed, frm_align=frm_align, to_align=to_align)


@fast_path("csum_diff_legacy", _GENERIC_LE)
def bpf_csum_diff_legacy(frm: object, to: object, seed: Wsum = Wsum(0)) -> int:
    """net/core/filter.c ``bpf_csum_diff`` (Linux <= 6.12, scratch buffer) with generic csum_partial; -22 on bad sizes."""
    return _diff.csum_diff_legacy(_generic_le, frm, to, seed)


#: The public modules, imported on first attribute access: each wing's face (csum/<name>.py re-exports a wing's
#: module) and the wings users import whole. Decided once (docs/design.md "Public paths").
_SUBMODULES = ("batch", "crossarch", "dask", "inet", "kernel", "layers", "pcap", "profiles", "prog", "rewrite",
               "scan", "skb")

__all__ = [
    "bpf_csum_diff", "bpf_csum_diff_legacy", "BPF_F_HDR_FIELD_MASK", "BPF_F_IPV6", "BPF_F_MARK_ENFORCE",
    "BPF_F_MARK_MANGLED_0", "BPF_F_PSEUDO_HDR", "bpf_l3_csum_replace", "bpf_l4_csum_replace", "Checksum", "compare",
    "csum16_add", "csum16_sub", "csum_add", "csum_block_add", "csum_block_sub", "csum_fold", "csum_fold_bytes",
    "csum_ipv6_magic", "csum_ipv6_magic_bytes", "CSUM_MANGLED_0", "csum_neg", "csum_partial", "csum_replace2",
    "csum_replace4", "csum_replace_by_diff", "csum_shift", "csum_sub", "csum_tcpudp_magic",
    "csum_tcpudp_magic_bytes", "csum_tcpudp_nofold", "csum_unfold", "CsumError", "CsumTypeError", "CsumValueError",
    "do_csum", "from32to16", "from64to32", "inet_proto_csum_replace16", "internet_checksum",
    "internet_checksum_bytes", "internet_checksum_iov", "ip_compute_csum", "ip_compute_csum_bytes", "ip_fast_csum",
    "ip_fast_csum_bytes", "Profile", "profile", "profile_names", "verify_checksum",
    # modules imported with the package
    "bpf", "errors", "types",
    # submodules, imported on first attribute access (or by ``from csum import *``)
    *_SUBMODULES,
]


#: Names bound on first use, with the module that holds them: the profiles load TOML files and the comparison
#: builds on them, which ``csum --version`` and the capture commands never need (tests/test_startup.py).
_LAZY = {"compare": "arch.crossarch", "Profile": "arch.profiles", "profile": "arch.profiles",
         "profile_names": "arch.profiles"}

if TYPE_CHECKING:
    from .arch.crossarch import compare
    from .arch.profiles import Profile, profile, profile_names


def __getattr__(name: str) -> object:
    """``csum.batch``, ``csum.rewrite`` ...: the submodule, imported on first use; ``csum.profile`` and the other
    :data:`_LAZY` names: bound on first use."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

