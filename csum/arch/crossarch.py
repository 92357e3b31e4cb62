"""One input through every profile: what each architecture's kernel returns, side by side.

Values are compared two ways. *Bits*: a profile's u32 equals the reference of
its byte order (``generic`` for little-endian CPUs, ``generic-be`` for big-endian
ones). *Field*: folded to 16 bits (``csum_from32to16``) and laid out in memory in
the CPU's byte order (:func:`field16`), the two bytes a checksum field would get;
that is how results from CPUs of different byte orders can be compared (the Row
attributes ``same_wire_as_generic`` / ``homogenized_same_wire``, named for the
bytes on the wire, are this comparison).

``align`` is where the input sits (its address mod 8): the profile's
``csum_partial`` and the homogenized ``bpf_csum_diff`` (which reads its buffers in
place) get it; the legacy helper copies the input to its aligned scratch
buffer first. ``homogenized_align_dependent`` says whether the homogenized
helper would give another result with the input at some other address, pushed
(``to``) or pulled (``from``, where the 0x0000/0xffff corner lives).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..core.arith import M32, from32to16
from ..core.inputs import as_view, check_align, check_choice, check_instance, check_list, check_uint
from ..errors import Code, CsumValueError
from ..types import Wsum
from . import FUNCTIONS
from .profiles import Profile, profile, profile_named, profile_names

__all__ = ["FUNCTIONS", "FunctionRow", "REFERENCE", "Row", "align_dependence", "compare", "compare_function",
           "field16"]

REFERENCE = {"little": "generic", "big": "generic-be"}


def field16(value: int, endian: str) -> bytes:
    """The two bytes in memory of ``csum_from32to16(value)`` on a CPU of byte order ``endian``.

    ``value`` is a u32 as that CPU's register holds it (a ``Wsum`` or ``Sum16``, never a
    :data:`csum.types.WireSum`); the result is the checksum field's bytes, wire order.
    """
    value = check_uint(value, 32, "value")
    endian = check_choice(endian, ("little", "big"), "endian", Code.BAD_BYTEORDER)
    return from32to16(value).to_bytes(2, endian)  # type: ignore[arg-type]


def _chosen(profiles: list[str] | None) -> list[Profile]:
    """The profiles named in ``profiles`` (all of them for None), each name checked as ``profiles[i]``."""
    if profiles is None:
        return [profile(n) for n in profile_names()]
    return [profile_named(n, None, f"profiles[{i}]") for i, n in enumerate(check_list(profiles, "profiles"))]



@dataclass(frozen=True)
class Row:
    """One profile's results for the compared input (``bpf_csum_diff`` pushes the input as ``to``)."""

    profile: str
    endian: str
    csum_partial: int
    legacy_diff: int
    homogenized_diff: int
    same_bits_as_reference: bool
    same_wire_as_generic: bool
    legacy_same_as_reference: bool
    homogenized_same_wire: bool
    align: int = 0
    homogenized_align_dependent: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def align_dependence(p: Profile, frm: object, to: object, seed: Wsum) -> dict[int, list[tuple[int, int]]]:
    """Homogenized ``bpf_csum_diff`` at every (frm_align, to_align) pair: {result: [pairs giving it]}."""
    check_instance(p, Profile, "p")
    frm, to, seed = as_view(frm, "frm"), as_view(to, "to"), check_uint(seed, 32, "seed")
    out: dict[int, list[tuple[int, int]]] = {}
    for fa in range(8):
        for ta in range(8):
            out.setdefault(p.bpf_csum_diff(frm, to, seed, frm_align=fa, to_align=ta), []).append((fa, ta))
    return out


def _row(p: Profile, view: memoryview, seed: Wsum, refs: dict[str, Profile], generic_field: bytes,
         generic_homog_field: bytes, align: int) -> Row:
    raw = p.csum_partial(view, seed, align=align)
    legacy = p.bpf_csum_diff_legacy(b"", view, seed)
    homog = p.bpf_csum_diff(b"", view, seed, to_align=align)
    pushed = {p.bpf_csum_diff(b"", view, seed, to_align=a) for a in range(8)}
    pulled = {p.bpf_csum_diff(view, b"", seed, frm_align=a) for a in range(8)}
    ref = refs[p.endian]
    return Row(
        profile=p.name,
        endian=p.endian,
        csum_partial=raw,
        legacy_diff=legacy,
        homogenized_diff=homog,
        same_bits_as_reference=raw == ref.csum_partial(view, seed),
        same_wire_as_generic=field16(raw, p.endian) == generic_field,
        legacy_same_as_reference=legacy == ref.bpf_csum_diff_legacy(b"", view, seed),
        homogenized_same_wire=field16(homog, p.endian) == generic_homog_field,
        align=align,
        homogenized_align_dependent=len(pushed) > 1 or len(pulled) > 1,
    )


def compare(buf: object, seed: Wsum = Wsum(0), profiles: list[str] | None = None, *, align: int = 0) -> list[Row]:
    """Run ``buf`` through each profile (all by default) and report raw, legacy and homogenized results.

    ``align``: the input's address mod 8 (0..7), as the kernel code would see it.

    The seed is given to every profile as the same u32 number; for a byte-order
    neutral seed use 0 (or a value whose bytes read the same both ways).
    """
    view = as_view(buf, "buf")
    seed = check_uint(seed, 32, "seed")
    align = check_align(align)
    chosen = _chosen(profiles)
    refs = {endian: profile(name) for endian, name in REFERENCE.items()}
    generic = refs["little"]
    generic_field = field16(generic.csum_partial(view, seed), "little")
    generic_homog_field = field16(generic.bpf_csum_diff(b"", view, seed), "little")
    return [_row(p, view, seed, refs, generic_field, generic_homog_field, align) for p in chosen]


@dataclass(frozen=True)
class FunctionRow:
    """One profile's value of one primitive (as that CPU holds it) and how it compares."""

    profile: str
    endian: str
    function: str
    value: int
    same_bits_as_reference: bool
    same_field_as_generic: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _field(function: str, value: int, endian: str) -> bytes:
    """The two bytes a checksum field gets from ``value`` on a CPU of byte order ``endian``."""
    return field16(value, endian) if function == "csum_tcpudp_nofold" else value.to_bytes(2, endian)  # type: ignore[arg-type]


def compare_function(function: str, *, data: object = b"", seed: Wsum = Wsum(0), saddr: bytes = bytes(4),
                     daddr: bytes = bytes(4), length: int = 0, proto: int = 0,
                     profiles: list[str] | None = None) -> list[FunctionRow]:
    """``function`` (one of :data:`FUNCTIONS`) on every profile: the pseudo-header functions take
    ``saddr, daddr, length, proto, seed`` (16-byte addresses for csum_ipv6_magic); ``ip_fast_csum`` takes ``data`` (``len(data) // 4`` words);
    ``csum_fold`` folds ``seed``."""
    function = check_choice(function, FUNCTIONS, "function", Code.BAD_FUNCTION)
    data, seed = as_view(data, "data"), check_uint(seed, 32, "seed")
    chosen = _chosen(profiles)

    def value(p: Profile) -> int:
        if function == "ip_fast_csum":
            return p.ip_fast_csum(data, len(data) // 4)
        if function == "csum_fold":
            return p.csum_fold(seed)
        fn = {"csum_tcpudp_nofold": p.csum_tcpudp_nofold, "csum_tcpudp_magic": p.csum_tcpudp_magic,
              "csum_ipv6_magic": p.csum_ipv6_magic}[function]
        return fn(saddr, daddr, length, proto, seed)

    refs = {endian: value(profile(name)) for endian, name in REFERENCE.items()}
    generic_field = _field(function, refs["little"], "little")
    rows = []
    for p in chosen:
        v = value(p)
        rows.append(FunctionRow(p.name, p.endian, function, v, v == refs[p.endian],
                                _field(function, v, p.endian) == generic_field))
    return rows
