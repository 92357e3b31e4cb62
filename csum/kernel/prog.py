"""Run a user's compiled tc or XDP program on packets with the running kernel and tell the truth about what it did.

:func:`load` opens a BPF ELF object with the system's libbpf (maps, globals and relocations included;
:mod:`csum.kernel.libbpf`) as a test harness does: no map is pinned or reused from bpffs, a legacy section
gets its type from ``type=``, maps (:attr:`Program.maps`) and ``.rodata`` / ``.data`` / ``.bss`` globals
(``globals=``) are seeded, and the ``struct __sk_buff`` fields a tc test run takes (``ctx=``: mark, priority,
ingress_ifindex, ifindex) are passed in.

:meth:`Program.run` runs the program once on a packet through BPF_PROG_TEST_RUN (net/bpf/test_run.c), at
whatever length it leaves it, and judges every checksum of the output on its own (:mod:`csum.kernel.verdict`);
a tc program runs a second time on a CHECKSUM_COMPLETE skb (BPF_F_TEST_SKB_CHECKSUM_COMPLETE), where the kernel
reports an ``skb->csum`` the program left stale. Each broken field gets a cause that is reproduced, not
guessed (:func:`csum.rewrite.mistakes.reproduce`, narrowed by the helper calls the program makes), or the
plain statement that no simulated mistake gives what the program stored. Test runs never make a
CHECKSUM_PARTIAL skb (egress with checksum offload, veth): :data:`PARTIAL_NOTE` says what that hides.

Needs Linux, root (or CAP_BPF + CAP_NET_ADMIN) and libbpf.so.1.
"""

from __future__ import annotations

import errno
import platform
import struct
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from ..core.partial import internet_checksum
from ..core.inputs import as_view, check_instance, check_list, check_path, check_str
from ..errors import Code, CsumError, CsumValueError
from ..explain.causes import what
from ..explain.header import NOT_UPDATED
from ..bpf.flags import BPF_F_PSEUDO_HDR
from ..explain.program import align, explain_program
from ..layers import layout as parse
from ..layers.table import ETH_IPV4, ETH_IPV6
from ..rewrite.mistakes import SKB_CSUM as SKB_FIELD
from ..rewrite.mistakes import Evidence, Finding, Mistake, added_header, reproduce
from . import seed
from .insn import helper_calls
from .libbpf import KIND_TYPES, BpfObject, LibbpfError, MapInfo, ProgramInfo
from .syscall import (
    BPF_F_TEST_SKB_CHECKSUM_COMPLETE,
    SKB_CTX_FIELDS,
    SKB_CTX_SIZE,
    SYSCALL_NR,
    Bpf,
    BpfError,
    test_run,
)
from .verdict import BROKEN, KEPT_BAD, OK, Check, action, judge

# helper_evidence, judge_run, open_object and skb_ctx are csum's own plumbing (csum.kernel.qemu.prog runs a program
# in a booted kernel with them), not public API
__all__ = ["PARTIAL_NOTE", "SKB_CSUM", "Check", "LibbpfError", "Map", "Program", "Run", "Summary", "ethernet", "load",
           "summarize", "verify_frame"]

#: ``Check.layer`` of the CHECKSUM_COMPLETE run's verdict on a tc program.
SKB_CSUM = "skb->csum"
#: What a tc program's test runs cannot show.
PARTIAL_NOTE = ("test runs make CHECKSUM_NONE and CHECKSUM_COMPLETE skbs only, never CHECKSUM_PARTIAL (egress with "
                "checksum offload, veth): there the L4 checksum field holds the pseudo-header sum for the NIC to "
                "finish, and only bpf_l4_csum_replace with BPF_F_PSEUDO_HDR (for addresses) keeps it right; a "
                "checksum the program computes itself, or an address change without the flag, breaks such packets "
                "unseen here (csum.skb.Skb.checksum_partial models them)")
_NETWORK = 14  # where a test run's skb->csum starts: after the Ethernet header (eth_type_trans)
_ETHER = bytes.fromhex("020000000001020000000002")
_ETH_P = {4: ETH_IPV4.to_bytes(2, "big"), 6: ETH_IPV6.to_bytes(2, "big")}
#: enum bpf_func_id (include/uapi/linux/bpf.h) of the helpers whose calls narrow a cause.
_HELPERS = {9: "bpf_skb_store_bytes", 10: "bpf_l3_csum_replace", 11: "bpf_l4_csum_replace", 28: "bpf_csum_diff",
            40: "bpf_csum_update", 135: "bpf_csum_level"}


def ethernet(packet: bytes) -> bytes:
    """``packet`` (bytes-like) as an Ethernet frame: bare IPv4/IPv6 (version nibble 4 or 6 and no Ethernet type) gets
    a header."""
    packet = as_view(packet, "packet").tobytes()
    try:
        parse(memoryview(packet), "ethernet")
        return packet
    except CsumValueError:
        version = packet[0] >> 4 if packet else 0
        return _ETHER + _ETH_P[version] + packet if version in _ETH_P else packet


def verify_frame(frame: bytes) -> list[Check]:
    """Deprecated: every checksum of an Ethernet frame, judged against itself (``judge(frame, frame)``); [] for a
    frame that is not IP. :meth:`Program.run` judges an output against its input; :func:`csum.inet.verify` checks
    one packet."""
    warnings.warn("csum.prog.verify_frame is deprecated: use csum.inet.verify, or Program.run's checks",
                  DeprecationWarning, stacklevel=2)
    frame = as_view(frame, "frame").tobytes()
    return judge(frame, frame).checks


class Run(NamedTuple):
    """What one packet gave: the program's return value, the output packet and its checks, and the verdict.

    ``action``: TC_ACT_OK, XDP_PASS ...; ``dropped``: the packet goes nowhere (not judged); ``changed``: the
    output's bytes differ from the input's; ``error``: why the output does not parse; ``stale``: a tc
    program's CHECKSUM_COMPLETE run found skb->csum stale (None: not run, XDP or Linux < 6.11); ``finding``:
    what reproducing its mistakes found (None when nothing was broken); ``removed``: the input's checksum
    layers the output no longer has.
    """

    retval: int
    packet: bytes
    results: list[Check]
    action: str = ""
    dropped: bool = False
    changed: bool = False
    error: str | None = None
    stale: bool | None = None
    finding: Finding | None = None
    removed: tuple[str, ...] = ()

    @property
    def broken(self) -> list[Check]:
        """The checks the program broke (and skb->csum, and an output that no longer parses)."""
        return [c for c in self.results if c.status == BROKEN]


class Map:
    """A loaded map of the program's object: ``map[key] = value`` (bpf_map__update_elem), ``map[key]``, ``key in map``.

    Keys and values as :mod:`csum.kernel.seed` encodes them (bytes, ints stored little-endian, addresses ...).
    """

    def __init__(self, obj: BpfObject, info: MapInfo) -> None:
        self._obj, self.info = obj, info

    @property
    def name(self) -> str:
        return self.info.name

    def _key(self, key: seed.Value) -> bytes:
        return seed.encode(key, self.info.key_size, f"map {self.name} key")

    def __setitem__(self, key: seed.Value, value: seed.Value) -> None:
        self._obj.map_update(self.name, self._key(key), seed.encode(value, self.info.value_size,
                                                                     f"map {self.name} value"))

    def __getitem__(self, key: seed.Value) -> bytes:
        found = self._obj.map_lookup(self.name, self._key(key))
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return self._obj.map_lookup(self.name, self._key(key)) is not None

    def update(self, items: Mapping[Any, seed.Value] | Iterable[Any]) -> None:
        """Set every (key, value) of ``items`` (a mapping, pairs, or bpftool's {"key":, "value":} entries)."""
        for key, value in seed.entries(items, f"map {self.name}"):
            self[key] = value


def helper_evidence(code: bytes) -> Evidence:
    """The checksum helpers ``code`` calls -> the constants their flags take (None: not known at a call site)."""
    found: dict[str, frozenset[int] | None] = {}
    for call in helper_calls(code):
        name = _HELPERS.get(call.helper)
        if name is None:
            continue
        had = found.get(name, frozenset())
        found[name] = None if had is None or call.r5 is None else had | call.r5
    return found


def _cause(check: Check, finding: Finding, key: int, kind: str) -> tuple[str, tuple[str, ...]]:
    """The text of a broken check's cause and the ids named for it."""
    named = [(m.value, m.what, (m.tc if kind == "tc" else m.xdp) or "") for m in finding.fields.get(key, ())]
    named += [(cause, f"{what(cause)}: {detail}", "") for cause, detail in finding.explained.get(key, ())]
    if named:
        note = f" ({finding.note})" if finding.note and finding.fields.get(key) else ""
        if len(named) == 1:
            _, text, fix = named[0]
            return f"reproduced: {text}{note}" + (f"; fix: {fix}" if fix else ""), (named[0][0],)
        texts = "; or ".join(text + (f" (fix: {fix})" if fix else "") for _, text, fix in named)
        return f"reproduced by each of ({len(named)}; this packet cannot tell them apart): {texts}", \
            tuple(n[0] for n in named)
    if finding.mistakes:
        return "not reproduced for this field (the mistakes reproduced elsewhere in the packet leave it right)", ()
    note = finding.note or "no simulated mistake gives these bytes"
    if {check.stored, check.expected} == {0, 0xFFFF}:
        note += ("; 0x0000 vs 0xffff: the same sum in one's complement, which incremental updates (RFC 1624 "
                 "eqn. 3, the kernel's helpers) leave where a full computation stores the other")
    return f"not reproduced: {note}", ()


def judge_run(kind: str, frame: bytes, retval: int, out: bytes, stale: bool | None,
              evidence: Evidence | None) -> Run:
    """The :class:`Run` of a test run of a ``kind`` ("tc"/"xdp") program that returned ``retval`` and left ``out``
    from ``frame``; ``stale``: the CHECKSUM_COMPLETE run's verdict (None: not run); ``evidence``: the checksum
    helpers the program calls (:attr:`Program.evidence`). Every test run is judged here, on the running kernel or
    a booted one (:mod:`csum.kernel.qemu.prog`)."""
    name, dropped = action(kind, retval)
    if dropped:
        return Run(retval, out, [], name, True, out != frame, stale=stale)
    judged = judge(frame, out)
    checks = list(judged.checks)
    if judged.error is not None:
        checks.append(Check("packet", 0, None, None, False, judged.error,
                            status=BROKEN if judged.error_breaks else KEPT_BAD))
    if stale is not None:
        checks.append(Check(SKB_CSUM, 14, None, None, not stale, "stale" if stale else "ok",
                            status=BROKEN if stale else OK))
    finding = None
    if any(c.status == BROKEN and c.layer != "packet" for c in checks):
        finding = _find(kind, frame, out, checks, stale, evidence)
        checks = [_explain(c, finding, kind) for c in checks]
    return Run(retval, out, checks, name, False, out != frame, judged.error, stale, finding,
               tuple(judged.removed))


def _find(kind: str, frame: bytes, out: bytes, checks: list[Check], stale: bool | None,
          evidence: Evidence | None) -> Finding:
    """What reproduces the broken checks: csum.rewrite's re-made change with each mistake injected (same length),
    the checksum of an added IPv4 header, and the explainer (csum.explain.program) for every broken field neither
    accounts for (a checksum computed from scratch, a resized or translated packet)."""
    finding = _reproduce(kind, frame, out, checks, stale, evidence)
    if evidence is not None and "bpf_csum_update" in evidence and \
            Mistake.DIRECT_WRITE in finding.fields.get(SKB_FIELD, ()):
        finding = replace(finding, note="; ".join(filter(None, (finding.note, _CSUM_UPDATE_NOTE))))
    todo = {c.field for c in checks if c.status == BROKEN and c.field is not None and c.layer != SKB_CSUM}
    explained = {}
    for at, causes in explain_program(frame, out, todo).items():
        had = {m.value for m in finding.fields.get(at, ())}
        # where a mistake of the table is reproduced, the explainer adds the slips of a checksum computed from scratch
        # that give the same bytes, not an IPv4 header field changed without an update: the symptom the reproduced
        # mistake (a helper's size bits ...) explains
        extra = tuple((c, d) for c, d in causes if c not in had and not (had and c in NOT_UPDATED))
        if extra:
            explained[at] = extra
    if stale and not todo and SKB_FIELD not in finding.fields and _translated_unmoved(frame, out, evidence):
        note = "the translation's pseudo-header change, which the TCP/UDP/ICMP checksum took, never moved skb->csum"
        return replace(finding, mistakes=(*finding.mistakes, Mistake.PSEUDO_HDR_MISSING), note=note,
                       fields={**finding.fields, SKB_FIELD: (Mistake.PSEUDO_HDR_MISSING,)})
    if stale and SKB_FIELD not in finding.fields and todo and todo <= explained.keys() and \
            _stale_by_fields(frame, out, [c for c in checks if c.field in todo]):
        named = dict.fromkeys(c for at in sorted(todo) for c, _ in explained[at])
        explained[SKB_FIELD] = tuple((c, "skb->csum left stale by the wrong checksum alone: with the right value "
                                      "the output sums as the input did, so no update had to move skb->csum, and "
                                      "the wrong value is off the sum skb->csum holds") for c in named)
    return replace(finding, explained=explained) if explained else finding


#: What a stale skb->csum says of a program that writes directly and calls bpf_csum_update.
_CSUM_UPDATE_NOTE = ("the program calls bpf_csum_update: the diff it gives does not move skb->csum by the bytes it "
                     "wrote (taken the wrong way round, bpf_csum_diff(new, n, old, n, 0), or short of a byte written)")


def _translated_unmoved(frame: bytes, out: bytes, evidence: Evidence | None) -> bool:
    """Whether a right packet's stale skb->csum is BPF_F_PSEUDO_HDR missing: the program translated IPv4 <-> IPv6
    (bpf_skb_change_proto), so its L4 checksum, right, was moved for a new pseudo-header, a change that moves the
    packet's sum and that only BPF_F_PSEUDO_HDR (or bpf_csum_update) moves skb->csum for; and the program calls
    bpf_l4_csum_replace only with flags known without the bit, and never bpf_csum_update."""
    if evidence is None or "bpf_csum_update" in evidence:
        return False
    flags = evidence.get("bpf_l4_csum_replace")
    if not flags or any(f & BPF_F_PSEUDO_HDR for f in flags):
        return False
    return align(frame, out).kind == "translated"


def _stale_by_fields(frame: bytes, out: bytes, wrong: list[Check]) -> bool:
    """Whether a stale skb->csum follows from the ``wrong`` checksums alone: with their expected values, the
    output's sum from the network header on (what skb->csum covers in a test run) is the input's, and as it is, it
    is not (a program whose other updates move skb->csum by nothing, as replaces without BPF_F_PSEUDO_HDR and stores
    of balanced bytes do, leaves exactly that stale)."""
    fixed = bytearray(out)
    for c in wrong:
        if c.expected is None or c.field is None:
            return False
        fixed[c.field:c.field + 2] = c.expected.to_bytes(2, "big")
    was = internet_checksum(frame[_NETWORK:])
    return _same_sum(internet_checksum(bytes(fixed[_NETWORK:])), was) and \
        not _same_sum(internet_checksum(out[_NETWORK:]), was)


def _same_sum(a: int, b: int) -> bool:
    """Two complemented 16-bit sums equal in one's complement (0 and 0xffff are both zero)."""
    return a == b or {a, b} == {0, 0xFFFF}


def _reproduce(kind: str, frame: bytes, out: bytes, checks: list[Check], stale: bool | None,
               evidence: Evidence | None) -> Finding:
    if len(frame) == len(out):
        return reproduce(frame, out, kind=kind, stale=stale, evidence=evidence)  # type: ignore[arg-type]
    fields: dict[int, tuple[Mistake, ...]] = {}
    notes = []
    for c in checks:
        if c.status == BROKEN and c.was is None and c.layer == "ipv4" and c.field is not None:
            found = added_header(out, c.offset)
            fields.update(found.fields)
            notes.append(found.note)
    named = tuple(dict.fromkeys(m for ms in fields.values() for m in ms))
    note = "; ".join(n for n in notes if n) or \
        f"the program changed the length ({len(frame)} -> {len(out)} bytes); csum reproduces updates of " \
        "packets it does not resize, and the checksums of headers it adds"
    return Finding(named, fields, note)


def _explain(check: Check, finding: Finding, kind: str) -> Check:
    if check.status != BROKEN or check.layer == "packet":
        return check
    key = SKB_FIELD if check.layer == SKB_CSUM else check.field
    text, named = _cause(check, finding, -2 if key is None else key, kind)
    return replace(check, cause=text, mistakes=named)


class Program:
    """A loaded tc or XDP program of a user's object; use as a context manager or call :meth:`close`."""

    def __init__(self, obj: BpfObject, info: ProgramInfo, fd: int, kind: str, ctx: bytes | None = None) -> None:
        self._obj, self.info, self.fd, self._kind, self._ctx = obj, info, fd, kind, ctx
        self._bpf = Bpf(SYSCALL_NR.get(_machine(), 0))
        self._complete: bool | None = None
        #: The object's maps by name, loaded (seed them with ``maps[name][key] = value``).
        self.maps: dict[str, Map] = {m.name: Map(obj, m) for m in obj.maps}
        #: Maps the object asked libbpf to pin (LIBBPF_PIN_BY_NAME): loaded fresh here, not pinned, not reused.
        self.unpinned: tuple[MapInfo, ...] = tuple(m for m in obj.maps if m.pin_path)
        code = obj.insns(info.name)
        #: The checksum helpers the program calls and the flags they take (what narrows a cause); None when libbpf
        #: no longer holds the instructions (then no mistake is ruled out by them).
        self.evidence: Evidence | None = helper_evidence(code) if code else None

    @property
    def kind(self) -> str:
        """"tc" or "xdp"."""
        return self._kind

    def retval_name(self, retval: int) -> str:
        """TC_ACT_OK, XDP_PASS ... for a return value."""
        return action(self.kind, retval)[0]

    def _test_run(self, frame: bytes, flags: int) -> tuple[int, bytes]:
        ctx = (self._ctx or bytes(SKB_CTX_SIZE)) if self.kind == "tc" else None
        try:
            return test_run(self._bpf, self.fd, frame, ctx=ctx, flags=flags)
        except BpfError as exc:
            if exc.errno == errno.EINVAL and len(frame) < 14:
                raise CsumValueError(f"packet: {len(frame)} bytes is shorter than an Ethernet header",
                                     code=Code.TRUNCATED) from None
            raise

    def _stale(self, frame: bytes) -> bool | None:
        """The CHECKSUM_COMPLETE run's verdict: True when the kernel found skb->csum stale (EBADMSG)."""
        if self._complete is False:
            return None
        try:
            self._test_run(frame, BPF_F_TEST_SKB_CHECKSUM_COMPLETE)
        except BpfError as exc:
            if exc.errno == errno.EINVAL and self._complete is None:
                self._complete = False  # Linux < 6.11: no CHECKSUM_COMPLETE test runs
                return None
            if exc.errno != errno.EBADMSG:
                raise
            self._complete = True
            return True
        self._complete = True
        return False

    def run(self, packet: bytes) -> Run:
        """Run the program on ``packet`` (an Ethernet frame; bare IP gets a header) and judge the output.

        tc programs also run on a CHECKSUM_COMPLETE skb; its verdict is the last check, layer "skb->csum"
        (omitted for dropped packets and on kernels without the flag).
        """
        frame = ethernet(bytes(packet))
        retval, out = self._test_run(frame, 0)
        stale = self._stale(frame) if self.kind == "tc" else None
        return judge_run(self.kind, frame, retval, out, stale, self.evidence)

    def broken(self, packet: bytes, run: Run | None = None) -> list[Check]:
        """The checks ``run`` (default: :meth:`run` of ``packet``) found broken, each with its cause."""
        return (run if run is not None else self.run(packet)).broken

    def close(self) -> None:
        """Unload the program and free the object's maps."""
        self._obj.close()

    def __enter__(self) -> Program:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Summary:
    """What a series of runs comes to: packets run, changed, dropped, broken (any check broken), kept bad,
    unjudged checks, for each mistake the broken packets it was reproduced on, and the broken packets no mistake
    reproduces."""

    packets: int
    changed: int
    dropped: int
    broken: int
    kept_bad: int
    unjudged: int
    causes: tuple[tuple[str, int], ...]
    unexplained: int

    @property
    def named(self) -> tuple[str, ...]:
        """The mistakes reproduced on every broken packet (the program's, when there is one)."""
        return tuple(m for m, n in self.causes if n == self.broken) if self.broken else ()

    def line(self) -> str:
        """"N of M packets changed, K dropped, B broken"."""
        return f"{self.changed} of {self.packets} packets changed, {self.dropped} dropped, {self.broken} broken"


def summarize(runs: Iterable[Run]) -> Summary:
    """The :class:`Summary` of ``runs`` (:class:`Run` records, as :meth:`Program.run` returns them)."""
    runs = check_list(runs, "runs")
    for i, run in enumerate(runs):
        check_instance(run, Run, f"runs[{i}]")
    causes: Counter[str] = Counter()
    unexplained = 0
    for run in runs:
        if run.broken and run.finding is not None:
            causes.update(run.finding.causes)
            unexplained += not run.finding.causes
    return Summary(len(runs), sum(r.changed for r in runs), sum(r.dropped for r in runs),
                   sum(bool(r.broken) for r in runs),
                   sum(any(c.status == KEPT_BAD for c in r.results) for r in runs),
                   sum(c.status == "unjudged" for r in runs for c in r.results),
                   tuple((str(m), n) for m, n in causes.most_common()), unexplained)


def _machine() -> str:
    return platform.machine()


def skb_ctx(kind: str, ctx: Mapping[str, seed.Value] | None) -> bytes | None:
    """A ``struct __sk_buff`` with the fields a tc test run takes from ``ctx``."""
    if not ctx:
        return None
    if kind != "tc":
        raise CsumValueError("ctx: only tc programs take a context here (struct __sk_buff)", code=Code.BAD_VALUE)
    buf = bytearray(SKB_CTX_SIZE)
    for name, value in ctx.items():
        if name not in SKB_CTX_FIELDS:
            why = " (the kernel sets it from the frame's EtherType, eth_type_trans)" if name == "protocol" else ""
            raise CsumValueError(f"ctx: {name!r} is not a field the kernel's test run takes{why}; it takes "
                                 f"{', '.join(SKB_CTX_FIELDS)}", code=Code.BAD_VALUE)
        struct.pack_into("<I", buf, SKB_CTX_FIELDS[name], int.from_bytes(seed.encode(value, 4, f"ctx {name}"),
                                                                            "little"))
    return bytes(buf)


def _choose(path: str, infos: list[ProgramInfo], section: str | None, prog: str | None,
            kind: str | None) -> ProgramInfo:
    if prog is not None:
        chosen, what = [p for p in infos if p.name == prog], f"no program named {prog!r}"
    elif section is not None:
        chosen, what = [p for p in infos if p.section == section], f"no program in section {section!r}"
    else:
        chosen = [p for p in infos if p.kind or (kind is not None and p.prog_type == 0)] or \
            [p for p in infos if p.prog_type == 0]  # an untyped (legacy) section: say how to give its type
        what = "no tc or XDP program"
    listing = ", ".join(f"{p.name} (section {p.section}, {p.kind or f'type {p.prog_type}'})" for p in infos)
    if not chosen:
        raise CsumValueError(f"{path}: {what}; it has: {listing or 'no programs'}", code=Code.NO_PROGRAM)
    if len(chosen) > 1:
        raise CsumValueError(f"{path}: {len(chosen)} programs match, pick one with --prog/--section (prog=, "
                             f"section=): {listing}", code=Code.AMBIGUOUS)
    info = chosen[0]
    if kind is None and not info.kind:
        hint = (" libbpf >= 1.0 gives no type to legacy section names (SEC(\"xdp_prog\"), SEC(\"classifier/x\")): "
                "name the type with --type xdp|tc (type=)") if info.prog_type == 0 else ""
        raise CsumValueError(f"{path}: program {info.name} (section {info.section}) is of type {info.prog_type}, "
                             f"not tc (SCHED_CLS/SCHED_ACT) or XDP;{hint}", code=Code.PROG_TYPE)
    return info


def open_object(path: str, *, section: str | None = None, prog: str | None = None, type: str | None = None,
                map_names: Iterable[str] = (), globals: Mapping[str, seed.Value] | None = None
                ) -> tuple[BpfObject, ProgramInfo, str]:
    """Open the BPF ELF object ``path`` (not loaded: no root needed), choose its program as :func:`load` does, give
    it ``type``, check that every name of ``map_names`` is a map, and set ``globals``; (object, program, kind).
    The caller closes the object."""
    if type is not None and type not in KIND_TYPES:
        raise CsumValueError(f"type must be 'tc' or 'xdp', not {type!r}", code=Code.BAD_VALUE)
    obj = BpfObject(path)
    try:
        info = _choose(path, obj.programs(), section, prog, type)
        if type is not None:
            obj.set_type(info.name, type)
        names = [m.name for m in obj.maps]
        for name in map_names:
            if name not in names:
                raise CsumValueError(f"{path}: no map named {name!r}; it has: {', '.join(names) or 'none'}",
                                     code=Code.NO_MAP)
        known = obj.globals()
        for name, value in (globals or {}).items():
            if name not in known:
                raise CsumValueError(f"{path}: no global named {name!r}; it has: {', '.join(known) or 'none'}",
                                     code=Code.NO_MAP)
            obj.set_global(known[name], seed.encode(value, known[name].size, f"global {name}"))
    except BaseException:
        obj.close()
        raise
    return obj, info, type or info.kind or ""


def load(path: str, *, section: str | None = None, prog: str | None = None, type: str | None = None,
         maps: Mapping[str, Mapping[Any, seed.Value] | Iterable[Any]] | None = None,
         globals: Mapping[str, seed.Value] | None = None, ctx: Mapping[str, seed.Value] | None = None) -> Program:
    """Load one tc/XDP program of the BPF ELF object ``path`` (by ``section`` or function name ``prog``; with
    neither, the object's only tc/XDP program). Raises CsumError with libbpf's and the verifier's words.

    ``type``: "tc" or "xdp" for a program whose section libbpf does not type (legacy names); ``globals``: name ->
    value of ``.rodata`` / ``.data`` / ``.bss`` variables, set before load; ``maps``: name -> entries, set after
    load (see :mod:`csum.kernel.seed` for values); ``ctx``: tc context fields (mark, priority,
    ingress_ifindex, ifindex).
    """
    path = check_path(path, "path")
    for arg, text in (("section", section), ("prog", prog), ("type", type)):
        if text is not None:
            check_str(text, arg)
    for arg, table in (("maps", maps), ("globals", globals), ("ctx", ctx)):
        if table is not None:
            check_instance(table, Mapping, arg)
    if _machine() not in SYSCALL_NR:
        raise CsumError(f"running programs needs Linux on x86_64 or aarch64, not {_machine()}")
    obj, info, kind = open_object(path, section=section, prog=prog, type=type, map_names=maps or {}, globals=globals)
    try:
        context = skb_ctx(kind, ctx)
        fd = obj.load(info.name)
        program = Program(obj, info, fd, kind, context)
        for name, items in (maps or {}).items():
            program.maps[name].update(items)
    except BaseException:
        obj.close()
        raise
    return program
