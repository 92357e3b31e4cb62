"""Run a user's compiled tc or XDP program on packets with the running kernel and check what it did to the checksums.

:func:`load` opens a BPF ELF object with the system's libbpf (maps, ``.rodata`` globals and relocations
included; :mod:`csum.kernel.libbpf`) and loads one program of type SCHED_CLS/SCHED_ACT ("tc") or XDP.
:meth:`Program.run` runs it once on a packet through BPF_PROG_TEST_RUN (net/bpf/test_run.c) and checks
every checksum of the output; a tc program runs a second time on a CHECKSUM_COMPLETE skb
(BPF_F_TEST_SKB_CHECKSUM_COMPLETE), where the kernel reports an ``skb->csum`` the program left stale
(a pseudo-header change without BPF_F_PSEUDO_HDR, an IPv6 diff without BPF_F_IPV6, a store without
BPF_F_RECOMPUTE_CSUM): bytes that are right while the stack would still drop the packet.
:meth:`Program.broken` lists the checks a program broke (right in the input, wrong in the output)
with the likely cause where the numbers tell it.

Needs Linux, root (or CAP_BPF + CAP_NET_ADMIN) and libbpf.so.1.
"""

from __future__ import annotations

import errno
import platform
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..core.arith import from32to16, sub16, swab16
from ..core.partial import csum_partial
from ..errors import Code, CsumError, CsumValueError
from ..layers import inet
from ..layers import layout as parse
from .libbpf import BpfObject, LibbpfError, ProgramInfo
from .syscall import BPF_F_TEST_SKB_CHECKSUM_COMPLETE, SYSCALL_NR, Bpf, BpfError, test_run

__all__ = ["SKB_CSUM", "Check", "LibbpfError", "Program", "Run", "ethernet", "load", "verify_frame"]

#: Returned for the CHECKSUM_COMPLETE run's verdict: ``Check.layer``.
SKB_CSUM = "skb->csum"
_ETHER = bytes.fromhex("020000000001020000000002")
_ETH_P = {4: b"\x08\x00", 6: b"\x86\xdd"}
_RETVALS = {"tc": {0: "TC_ACT_OK", 2: "TC_ACT_SHOT", 7: "TC_ACT_REDIRECT", -1: "TC_ACT_UNSPEC"},
            "xdp": {0: "XDP_ABORTED", 1: "XDP_DROP", 2: "XDP_PASS", 3: "XDP_TX", 4: "XDP_REDIRECT"}}


@dataclass(frozen=True)
class Check:
    """One checksum of an output packet: as :class:`csum.inet.Result`, plus ``cause``, the likely cause of a
    wrong one where csum can tell. ``layer`` "skb->csum" is the CHECKSUM_COMPLETE run's verdict."""

    layer: str
    offset: int
    stored: int | None
    expected: int | None
    ok: bool | None
    reason: str
    cause: str | None = None


class Run(NamedTuple):
    """What one packet gave: the program's return value, the output packet and its checks."""

    retval: int
    packet: bytes
    results: list[Check]


def verify_frame(frame: bytes) -> list[Check]:
    """Every checksum of an Ethernet frame (:func:`csum.inet.verify`); [] for a frame that is not IP."""
    try:
        found = inet.verify(frame, link="ethernet")
    except CsumValueError:
        return []
    return [Check(r.layer, r.offset, r.stored, r.computed, r.ok, r.reason) for r in found]


def ethernet(packet: bytes) -> bytes:
    """``packet`` as an Ethernet frame: bare IPv4/IPv6 (version nibble 4 or 6 and no Ethernet type) gets a header."""
    try:
        parse(memoryview(packet), "ethernet")
        return packet
    except CsumValueError:
        version = packet[0] >> 4 if packet else 0
        return _ETHER + _ETH_P[version] + packet if version in _ETH_P else packet


def _be_sum(data: bytes) -> int:
    """One's-complement 16-bit sum of ``data`` as big-endian words (csum_partial sums little-endian ones)."""
    return swab16(from32to16(csum_partial(data)))


def _pseudo_sum(frame: bytes) -> int | None:
    try:
        lay = parse(memoryview(frame), "ethernet")
    except CsumValueError:
        return None
    size = 4 if lay.version == 4 else 16
    words = frame[lay.pseudo_saddr:lay.pseudo_saddr + size]
    if lay.pseudo_daddr is not None:
        words += frame[lay.pseudo_daddr:lay.pseudo_daddr + size]
    return _be_sum(words + (lay.l4_len or 0).to_bytes(4, "big"))


def _diff(a: int, b: int) -> int:
    """a - b in one's-complement 16-bit arithmetic, with -0 taken as 0."""
    d = sub16(a, b)
    return 0 if d == 0xFFFF else d


def _cause(check: Check, before: bytes, after: bytes) -> str | None:
    """The likely cause of a wrong checksum, from the numbers (None when they tell nothing)."""
    s, e = check.stored, check.expected
    if check.reason == inet.UDP6_ZERO:
        return ("stored 0 on UDP/IPv6, where 0 is illegal (RFC 8200 8.1): BPF_F_MARK_ENFORCE missing next to "
                "BPF_F_MARK_MANGLED_0 (it updates a 0 and stores a computed 0 as 0xffff)")
    if s is None or e is None:
        return None
    if {s, e} == {0, 0xFFFF}:
        return "0x0000 vs 0xffff: the same sum in one's complement, but receivers (and RFC 1624 eqn. 3) tell them apart"
    off = _diff(s, e)  # stored - expected, as checksums; the sums differ by the opposite
    pseudo_before, pseudo_after = _pseudo_sum(before), _pseudo_sum(after)
    if check.layer in ("tcp", "udp", "icmpv6") and pseudo_before is not None and pseudo_after is not None:
        change = _diff(pseudo_after, pseudo_before)
        if change and off in (change, _diff(0, change)):
            return ("off by exactly the pseudo-header change (the addresses): the L4 checksum was not updated for "
                    "it; BPF_F_PSEUDO_HDR missing, or the address stored without bpf_l4_csum_replace")
    for value, words in ((off, "big-endian"), (swab16(off), "little-endian")):  # the sum as the CPU loaded it
        if value in (1, 2, 3, 0xFFFE, 0xFFFD, 0xFFFC):
            return (f"off by {min(value, 0xFFFF - value)} in {words} words: a single fold of a wide sum (the "
                    "carries above bit 15 cut off); fold until no carry is left")
    return None


def _stale_cause(before: bytes, after: bytes) -> str:
    try:
        lay_in, lay_out = parse(memoryview(before), "ethernet"), parse(memoryview(after), "ethernet")
    except CsumValueError:
        return "bytes changed without skb->csum following: bpf_skb_store_bytes without BPF_F_RECOMPUTE_CSUM?"
    moved = _pseudo_sum(before) != _pseudo_sum(after)
    if moved and lay_out.version == 4 and lay_in.pseudo:
        return ("an address in the pseudo-header changed: bpf_l4_csum_replace without BPF_F_PSEUDO_HDR leaves "
                "skb->csum stale (or with BPF_F_IPV6 on IPv4)")
    if moved and lay_out.version == 6:
        return ("an IPv6 address changed: a size-0 pseudo-header diff needs BPF_F_IPV6 (Linux >= 6.16), a "
                "size-2/4 pseudo-header replace on IPv6 needs a store with BPF_F_RECOMPUTE_CSUM to put it right")
    return ("bytes not balanced by a checksum patch changed (an IPv6 hop limit, a MAC, a payload byte) without "
            "BPF_F_RECOMPUTE_CSUM on the store, or a checksum was written directly")


class Program:
    """A loaded tc or XDP program of a user's object; use as a context manager or call :meth:`close`."""

    def __init__(self, obj: BpfObject, info: ProgramInfo, fd: int) -> None:
        self._obj, self.info, self.fd = obj, info, fd
        self._bpf = Bpf(SYSCALL_NR.get(_machine(), 0))
        self._complete: bool | None = None

    @property
    def kind(self) -> str:
        """"tc" or "xdp"."""
        return self.info.kind or "?"

    def retval_name(self, retval: int) -> str:
        """TC_ACT_OK, XDP_PASS ... for a return value."""
        signed = retval - (1 << 32) if retval >> 31 else retval
        return _RETVALS[self.kind].get(signed, str(signed))

    def _test_run(self, frame: bytes, flags: int) -> tuple[int, bytes]:
        ctx = bytes(192) if self.kind == "tc" else None
        try:
            return test_run(self._bpf, self.fd, frame, ctx=ctx, flags=flags)
        except BpfError as exc:
            if exc.errno == errno.EINVAL and len(frame) < 14:
                raise CsumValueError(f"packet: {len(frame)} bytes is shorter than an Ethernet header",
                                     code=Code.TRUNCATED) from None
            raise

    def run(self, packet: bytes) -> Run:
        """Run the program on ``packet`` (an Ethernet frame; bare IP gets a header): (retval, output, checks).

        tc programs also run on a CHECKSUM_COMPLETE skb; its verdict is the last check, layer "skb->csum"
        (ok False: the kernel found skb->csum stale, EBADMSG; omitted on kernels without the flag).
        """
        frame = ethernet(bytes(packet))
        retval, out = self._test_run(frame, 0)
        results = verify_frame(out)
        if self.kind == "tc" and self._complete is not False:
            try:
                self._test_run(frame, BPF_F_TEST_SKB_CHECKSUM_COMPLETE)
                self._complete = True
                results.append(Check(SKB_CSUM, 14, None, None, True, inet.OK))
            except BpfError as exc:
                if exc.errno == errno.EINVAL and self._complete is None:
                    self._complete = False  # Linux < 6.11: no CHECKSUM_COMPLETE test runs
                elif exc.errno == errno.EBADMSG:
                    results.append(Check(SKB_CSUM, 14, None, None, False, "stale", _stale_cause(frame, out)))
                else:
                    raise
        return Run(retval, out, results)

    def broken(self, packet: bytes, run: Run | None = None) -> list[Check]:
        """The checks of ``run`` (default: :meth:`run` of ``packet``) that were right in the input and are wrong
        in the output, each with its likely cause."""
        frame = ethernet(bytes(packet))
        run = run if run is not None else self.run(frame)
        right_before = [(c.layer, c.ok) for c in verify_frame(frame)]
        found = []
        for i, check in enumerate(run.results):
            if check.ok is not False:
                continue
            if check.layer != SKB_CSUM and not (i < len(right_before) and right_before[i] == (check.layer, True)):
                continue  # wrong already in the input, or a layer the input did not have
            found.append(check if check.cause else replace(check, cause=_cause(check, frame, run.packet)))
        return found

    def close(self) -> None:
        """Unload the program and free the object's maps."""
        self._obj.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _machine() -> str:
    return platform.machine()


def load(path: str, *, section: str | None = None, prog: str | None = None) -> Program:
    """Load one tc/XDP program of the BPF ELF object ``path`` (by ``section`` or function name ``prog``; with
    neither, the object's only tc/XDP program). Raises CsumError with libbpf's and the verifier's words."""
    if _machine() not in SYSCALL_NR:
        raise CsumError(f"running programs needs Linux on x86_64 or aarch64, not {_machine()}")
    obj = BpfObject(path)
    try:
        infos = obj.programs()
        runnable = [p for p in infos if p.kind]
        if prog is not None:
            chosen = [p for p in infos if p.name == prog]
            what = f"no program named {prog!r}"
        elif section is not None:
            chosen = [p for p in infos if p.section == section]
            what = f"no program in section {section!r}"
        else:
            chosen, what = runnable, "no tc or XDP program"
        listing = ", ".join(f"{p.name} (section {p.section}, {p.kind or f'type {p.prog_type}'})" for p in infos)
        if not chosen:
            raise CsumValueError(f"{path}: {what}; it has: {listing or 'no programs'}", code=Code.NO_PROGRAM)
        if len(chosen) > 1:
            raise CsumValueError(f"{path}: {len(chosen)} programs match, pick one with --prog/--section (prog=, "
                                 f"section=): {listing}", code=Code.AMBIGUOUS)
        info = chosen[0]
        if not info.kind:
            raise CsumValueError(f"{path}: program {info.name} (section {info.section}) is of type {info.prog_type}, "
                                 "not tc (SCHED_CLS/SCHED_ACT) or XDP", code=Code.BAD_TYPE)
        fd = obj.load(info.name)
    except BaseException:
        obj.close()
        raise
    return Program(obj, info, fd)

