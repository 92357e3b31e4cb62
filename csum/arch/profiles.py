"""Architecture profiles: TOML facts from arch_profiles/ plus a registered algorithm.

A profile is what a user selects by name (``csum.profile("arm64")``): byte
order, word size, which kernel code computes ``csum_partial`` there, and the
kernel releases in which each implementation was in force. Each TOML file is
checked against :data:`SCHEMA`, which rejects unknown keys. Profiles are read
from the installed package (``csum.arch_profiles``), from the repository's
``arch_profiles/`` in a source checkout, and from directories listed in the
``CSUM_PROFILE_PATH`` environment variable (``os.pathsep``-separated).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from dataclasses import dataclass
from typing import Any, Iterator

from ..core import diff
from ..core.arith import swab16
from ..core.inputs import as_view, check_align, check_choice, check_str, check_uint
from ..core.ones import csum_fold
from ..core.partial import ip_fast_csum
from ..core.primitives import TCPUDP_NOFOLD, ipv6_magic
from ..core.pseudo import Address, _addr
from ..engine import fast_path
from ..errors import Code, CsumTypeError, CsumValueError
from ..types import Sum16, Wsum
from . import PartialFn, algorithm

__all__ = ["Implementation", "Profile", "RESULTS", "SCHEMA", "parse_profile", "profile", "profile_for_machine",
           "profile_names", "reload_profiles"]

#: The ``result`` fact of an implementation: what width its ``csum_partial`` u32 has
#: (tests/arch/test_profile_facts.py checks each profile's behaviour against it).
RESULTS = {
    "folded16": "the bytes' sum is folded to 16 bits, then the seed is added end-around (lib/checksum.c): "
                "at most 0xffff with seed 0, a u32 once a seed is passed",
    "folded16-seeded": "the seed is added before the fold: every result is at most 0xffff (parisc)",
    "unfolded32": "an unfolded 32-bit end-around sum: above 0xffff for some inputs even with seed 0",
}
_TOP_KEYS = {"name": str, "aliases": list, "endian": str, "word_size": int, "description": str,
             "net_ip_align": int, "csum_tcpudp_nofold": str, "implementation": list, "uname": list}
_IMPL_KEYS = {"algorithm": str, "since": str, "until": str, "csum_partial": str, "result": str,
              "alignment_sensitive": bool, "sources": list, "notes": str}
_REQUIRED_TOP = {"name", "endian", "word_size", "implementation"}
_REQUIRED_IMPL = {"algorithm", "csum_partial", "result", "alignment_sensitive", "sources"}
_CHOICES: dict[str, set[Any]] = {"endian": {"little", "big"}, "word_size": {32, 64}, "net_ip_align": {0, 2},
            "csum_tcpudp_nofold": set(TCPUDP_NOFOLD),
            "csum_partial": {"arch", "lib/checksum.c", "lib/checksum.c+arch do_csum"},
            "result": set(RESULTS)}
#: The schema, for documentation: every key a profile TOML may hold and its type.
SCHEMA = {"profile": _TOP_KEYS, "implementation": _IMPL_KEYS, "choices": _CHOICES}


#: The methods a C function of csum/engine/_speedups.c answers first, given the profile's shape.
_FAST_METHODS = {"csum_partial": "partial", "bpf_csum_diff": "csum_diff", "bpf_csum_diff_legacy": "csum_diff_legacy",
                 "inet_proto_csum_replace16": "inet_proto_csum_replace16"}


def _release(text: str, name: str) -> tuple[int, ...]:
    check_str(text, name, "a kernel release like '5.17' (a str)")
    try:
        parts = tuple(int(p) for p in text.split("-")[0].split(".")[:3])
    except ValueError:
        raise CsumValueError(f"{name} must be a kernel release like '5.17' or '6.13.2', got {text!r}",
                             code=Code.BAD_RELEASE) from None
    if len(parts) < 2:
        raise CsumValueError(f"{name} must be a kernel release like '5.17', got {text!r}", code=Code.BAD_RELEASE)
    return parts


@dataclass(frozen=True)
class Implementation:
    """One kernel implementation of ``csum_partial`` and the releases it was in force."""

    algorithm: str
    csum_partial: str
    result: str
    alignment_sensitive: bool
    sources: tuple[str, ...]
    since: str = ""
    until: str = ""
    notes: str = ""

    def covers(self, release: tuple[int, ...]) -> bool:
        """True if this implementation was the one in kernel ``release``."""
        lo = _release(self.since, "since") if self.since else (0,)
        hi = _release(self.until, "until") if self.until else None
        return lo <= release[: len(lo)] and (hi is None or release[: len(hi)] <= hi)


@dataclass(frozen=True)
class Profile:
    """An architecture's ``csum_partial`` (one implementation of it) and the BPF helpers built on it."""

    name: str
    aliases: tuple[str, ...]
    endian: str
    word_size: int
    description: str
    implementation: Implementation
    implementations: tuple[Implementation, ...]
    path: str
    #: ``NET_IP_ALIGN`` (include/linux/skbuff.h default 2; 0 where the arch overrides it): the
    #: bytes a driver reserves before the Ethernet header, so ``skb->data`` sits at this
    #: offset mod 8 on most receive paths and in BPF_PROG_TEST_RUN (net/bpf/test_run.c).
    net_ip_align: int = 2
    #: Which model of ``csum_tcpudp_nofold`` this arch's code follows (csum/core/primitives.py).
    tcpudp_nofold: str = "lib/checksum.c"
    #: The ``uname -m`` strings of kernels this profile models (key ``uname``); with the byte
    #: order, they map a running machine to its profile (:func:`profile_for_machine`).
    uname: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # C answers first where it has this algorithm's shape (csum.engine.fast_path): per instance, since the
        # shape is the profile's. The checked methods below answer the rest and raise csum's errors.
        for method, c_function in _FAST_METHODS.items():
            checked = getattr(self, method)
            fast = fast_path(c_function, self.implementation.algorithm)(checked)
            if fast is not checked:
                object.__setattr__(self, method, fast)

    def __reduce__(self) -> tuple[type[Profile], tuple[Any, ...]]:
        """Pickled as its fields (the fast paths are made again by ``__post_init__``)."""
        return type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    @property
    def _partial(self) -> PartialFn:
        return algorithm(self.implementation.algorithm)

    def csum_partial(self, buf: object, seed: Wsum = Wsum(0), *, align: int = 0) -> Wsum:
        """The u32 this architecture's kernel ``csum_partial`` returns (as that CPU holds it)."""
        view = as_view(buf, "buf")
        return self._partial(view, check_uint(seed, 32, "seed"), check_align(align))  # type: ignore[return-value]

    def bpf_csum_diff(self, frm: object, to: object, seed: Wsum = Wsum(0), *, frm_align: int = 0,
                      to_align: int = 0) -> int:
        """net/core/filter.c ``bpf_csum_diff`` (Linux >= 6.13) on this architecture.

        ``frm_align``/``to_align``: where the buffers sit (address mod 8), since this
        helper reads them in place; see :func:`csum.core.diff.csum_diff`.
        """
        return diff.csum_diff(self._partial, frm, to, seed, frm_align=frm_align, to_align=to_align)

    def bpf_csum_diff_legacy(self, frm: object, to: object, seed: Wsum = Wsum(0)) -> int:
        """net/core/filter.c ``bpf_csum_diff`` (Linux <= 6.12) on this architecture; -22 on bad sizes."""
        return diff.csum_diff_legacy(self._partial, frm, to, seed)

    def inet_proto_csum_replace16(self, sum16: Sum16, frm: object, to: object) -> Sum16:
        """net/core/utils.c ``inet_proto_csum_replace16`` (non-CHECKSUM_PARTIAL) with this arch's ``csum_partial``.

        ``sum16``: the checksum field as this CPU holds it; ``frm``/``to``: the old and new 16 bytes.
        """
        return diff.inet_proto_csum_replace16(self._partial, sum16, frm, to)  # type: ignore[return-value]

    def csum_tcpudp_nofold(self, saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Wsum:
        """This arch's ``csum_tcpudp_nofold``: the IPv4 pseudo-header added to ``wsum``, unfolded, as the CPU holds it.

        ``saddr``/``daddr``: the 4 address bytes (network order) or an address;
        ``length`` a u32 and ``proto`` a u8, host order. See csum/arch/primitives.py.
        """
        sa = int.from_bytes(_addr(saddr, 4, "saddr"), self.endian)  # type: ignore[arg-type]
        da = int.from_bytes(_addr(daddr, 4, "daddr"), self.endian)  # type: ignore[arg-type]
        return TCPUDP_NOFOLD[self.tcpudp_nofold](sa, da, check_uint(length, 32, "length"), check_uint(proto, 8, "proto"),  # type: ignore[return-value]
                                                check_uint(wsum, 32, "wsum"), self.endian)  # type: ignore[arg-type]

    def csum_tcpudp_magic(self, saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Sum16:
        """``csum_fold(csum_tcpudp_nofold(...))`` on this arch (the complemented 16-bit value as the CPU holds it)."""
        return csum_fold(self.csum_tcpudp_nofold(saddr, daddr, length, proto, wsum))

    def csum_fold(self, wsum: Wsum) -> Sum16:
        """This arch's ``csum_fold``: every form gives the bits of include/asm-generic/checksum.h."""
        return csum_fold(wsum)

    def ip_fast_csum(self, iph: object, ihl: int) -> Sum16:
        """This arch's ``ip_fast_csum`` of an ``ihl``-word IPv4 header, as the CPU holds the result.

        Every arch's form is an end-around sum of the header's native words, folded and
        complemented: big-endian CPUs hold the byte-swapped value (tests/vectors/primitives).
        """
        value = ip_fast_csum(iph, ihl)
        return value if self.endian == "little" else swab16(value)  # type: ignore[return-value]

    def csum_ipv6_magic(self, saddr: Address, daddr: Address, length: int, proto: int, wsum: Wsum = Wsum(0)) -> Sum16:
        """This arch's ``csum_ipv6_magic`` (net/ipv6/ip6_checksum.c or the arch's own), as the CPU holds it.

        Every form (x86_64's adcq chain, s390's 64-bit sum, the generic 32-bit one) is a canonical
        end-around sum folded by csum_fold (csum/core/primitives.py ``ipv6_magic``).
        """
        return ipv6_magic(_addr(saddr, 16, "saddr"), _addr(daddr, 16, "daddr"), check_uint(length, 32, "length"),  # type: ignore[return-value]
                          check_uint(proto, 8, "proto"), check_uint(wsum, 32, "wsum"), self.endian)  # type: ignore[arg-type]

    def at(self, kernel: str, arg: str = "kernel") -> Profile:
        """The same architecture as its kernel ``kernel`` (e.g. "5.10") computed it (``arg``: the argument's name
        in the caller's errors)."""
        release = _release(kernel, arg)
        for impl in self.implementations:
            if impl.covers(release):
                return dataclasses.replace(self, implementation=impl)
        raise CsumValueError(f"profile {self.name!r} has no implementation for kernel {kernel} ({arg})",
                             code=Code.BAD_RELEASE)


def _check_keys(table: dict[str, Any], allowed: dict[str, type], required: set[str], where: str) -> None:
    unknown = set(table) - set(allowed)
    if unknown:
        raise CsumValueError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}",
                             code=Code.BAD_PROFILE)
    missing = required - set(table)
    if missing:
        raise CsumValueError(f"{where}: missing key(s) {sorted(missing)}", code=Code.BAD_PROFILE)
    for key, value in table.items():
        if not isinstance(value, allowed[key]):
            raise CsumValueError(f"{where}: {key} must be {allowed[key].__name__}, got {type(value).__name__}",
                                 code=Code.BAD_PROFILE)
        if key in _CHOICES and value not in _CHOICES[key]:
            raise CsumValueError(f"{where}: {key} must be one of {sorted(_CHOICES[key])}, got {value!r}",
                                 code=Code.BAD_PROFILE)


def parse_profile(text: str, path: str) -> Profile:
    """Parse and validate one profile TOML document; the newest implementation is selected."""
    import tomllib  # here, not at the top: the commands that use no profile do not pay for it (tests/test_startup.py)

    text, path = check_str(text, "text"), check_str(path, "path")

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CsumValueError(f"{path}: not valid TOML: {exc}", code=Code.BAD_PROFILE) from None
    _check_keys(data, _TOP_KEYS, _REQUIRED_TOP, path)
    impls = []
    for i, table in enumerate(data["implementation"]):
        _check_keys(table, _IMPL_KEYS, _REQUIRED_IMPL, f"{path}: implementation[{i}]")
        for key in ("since", "until"):
            if table.get(key):
                _release(table[key], f"{path}: implementation[{i}].{key}")
        algorithm(table["algorithm"])
        impls.append(Implementation(**{**table, "sources": tuple(table["sources"])}))
    if not impls:
        raise CsumValueError(f"{path}: needs at least one [[implementation]]", code=Code.BAD_PROFILE)
    current = [impl for impl in impls if not impl.until]
    if len(current) != 1:
        raise CsumValueError(f"{path}: exactly one implementation must have no 'until' (the current one)",
                             code=Code.BAD_PROFILE)
    return Profile(data["name"], tuple(data.get("aliases", ())), data["endian"], data["word_size"],
                   data.get("description", ""), current[0], tuple(impls), path, data.get("net_ip_align", 2),
                   data.get("csum_tcpudp_nofold", "lib/checksum.c"), tuple(data.get("uname", ())))


def _profile_files() -> Iterator[tuple[str, str]]:
    from importlib import resources  # as tomllib above
    from pathlib import Path

    try:
        root = resources.files("csum.arch_profiles")
        entries = [(e.name, e) for e in root.iterdir()]
    except (ModuleNotFoundError, FileNotFoundError):
        entries = []
    if not any(name.endswith(".toml") for name, _ in entries):
        # a source checkout, or an editable install whose mapping points at a tree that is gone (a moved clone):
        # the profiles beside the package, where pyproject.toml's package-dir takes them from
        source = Path(__file__).resolve().parent.parent.parent / "arch_profiles"
        entries = [(p.name, p) for p in source.iterdir()] if source.is_dir() else []
    for name, entry in sorted(entries):
        if name.endswith(".toml"):
            yield str(entry), entry.read_text(encoding="utf-8")
    for directory in filter(None, os.environ.get("CSUM_PROFILE_PATH", "").split(os.pathsep)):
        for path in sorted(Path(directory).glob("*.toml")):
            yield str(path), path.read_text(encoding="utf-8")


@functools.cache
def _registry() -> dict[str, Profile]:
    by_name: dict[str, Profile] = {}
    for path, text in _profile_files():
        prof = parse_profile(text, path)
        if prof.name in by_name:
            raise CsumValueError(f"{path}: profile {prof.name!r} is already defined by {by_name[prof.name].path}",
                                 code=Code.BAD_PROFILE)
        by_name[prof.name] = prof
    return by_name


@functools.cache
def _aliases() -> dict[str, str]:
    table = {}
    for prof in _registry().values():
        table[prof.name.lower()] = prof.name
        for alias in prof.aliases:
            table[alias.lower()] = prof.name
    return table


def profile_names() -> list[str]:
    """Names of every known profile."""
    return sorted(_registry())


def profile(name: str, kernel: str | None = None) -> Profile:
    """The profile called ``name`` (or one of its aliases), optionally as kernel release ``kernel`` had it."""
    return profile_named(name, kernel)


def as_profile(value: str | Profile, arg: str = "arch") -> Profile:
    """``value`` (argument ``arg``) if it is a :class:`Profile`, else the profile it names (``arch="x86_64"``)."""
    return value if isinstance(value, Profile) else profile_named(value, None, arg)


def profile_named(name: str, kernel: str | None = None, arg: str = "name", kernel_arg: str = "kernel") -> Profile:
    """:func:`profile`, for a function whose arguments for ``name`` and ``kernel`` are called ``arg`` and
    ``kernel_arg`` (``csum.batch.csum_partials(profile=...)``): its errors name them."""
    check_str(name, arg, "a profile name (a str)")
    canonical_name = _aliases().get(name.lower())
    if canonical_name is None:
        raise CsumValueError(f"unknown profile {name!r} ({arg}); known: {', '.join(profile_names())}",
                             code=Code.UNKNOWN_PROFILE)
    prof = _registry()[canonical_name]
    return prof if kernel is None else prof.at(kernel, kernel_arg)


def profile_for_machine(machine: str, byteorder: str = sys.byteorder) -> str | None:
    """The profile whose TOML ``uname`` list holds ``machine`` (``uname -m``) on a CPU of ``byteorder``.

    The byte order tells apart profiles sharing a machine string (``mips`` is reported by
    both big- and little-endian MIPS kernels). None when no profile models that machine on
    that byte order (e.g. ``mips64`` on a big-endian CPU: only the little-endian mips64el exists).
    """
    check_str(machine, "machine", "a machine name like 'x86_64' (a str)")
    check_choice(byteorder, ("little", "big"), "byteorder", Code.BAD_BYTEORDER)
    found = [p.name for p in _registry().values() if machine in p.uname and p.endian == byteorder]
    return found[0] if len(found) == 1 else None


def reload_profiles() -> None:
    """Forget the loaded profiles (after changing ``CSUM_PROFILE_PATH`` or registering algorithms)."""
    _registry.cache_clear()
    _aliases.cache_clear()
