"""One program on several kernels: each kernel's runs, and every packet whose output differs between them, with the
cause reproduced by replaying the program's helper calls with each kernel's helper model.

A :class:`KernelResult` is one kernel's answers (the running kernel's, or a booted one's: csum.kernel.qemu.prog),
judged by :func:`csum.kernel.prog.judge_run`. :func:`differences` compares the outputs packet by packet: every checksum
field whose stored value differs is a :class:`Differ`, and so is a different action. Its cause is replayed, not
guessed. Two program shapes are replayed: one sums a header (IPv4) or a whole ICMP message with
``bpf_csum_diff(NULL, 0, header, len, 0)`` and stores the result folded once, ``~((csum & 0xffff) + (csum >> 16))``
(the kernel's own XDP samples did) (:func:`replay_fold_once`); the other (:func:`replay_sum_carry`, with the input
frames) calls ``bpf_csum_diff(old, 4, new, 4, 0)`` once per rewritten 32-bit word of the IPv4 header, adds the
results in plain 32-bit arithmetic (a carry out of bit 31 is lost), adds the old checksum with an end-around carry
and folds fully (examples/bpf/xdp_icmp_nat_diff_carry.c). Each kernel's ``bpf_csum_diff`` is :func:`csum.profile`
of its architecture and release (or :attr:`KernelResult.profile_name`, chosen from a guest's /proc/cpuinfo: riscv64
with Zbb), legacy (Linux <= 6.12: the architecture's ``csum_partial``, an unfolded 32-bit sum on x86_64, i386, armhf,
mips, ppc64el and s390x, 0xffffXXXX for sums >= 0x8000 on riscv64 with Zbb, folded on arm64) or homogenized (>= 6.13:
folded everywhere), as its probe found. When a replay gives every kernel's stored bytes, the cause names the helper and the values (both
shapes, when both do: the outputs cannot tell them apart); otherwise the cause says it was not reproduced, with the
facts that are known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..arch.profiles import profile, profile_for_machine
from ..errors import CsumValueError
from ..rewrite.mistakes import Evidence
from ..types import Wsum
from .prog import Run, Summary, summarize

#: The layers whose checksum the replay sums from the header's first byte (IPv4: the header; ICMP: the message).
_REPLAYED = ("ipv4", "icmp")


@dataclass(frozen=True)
class KernelResult:
    """One kernel's runs of the program.

    ``name``: how the user named it ("running", "bookworm amd64"); ``machine``/``release``: its uname -m and -r;
    ``csum_diff_kind``: "legacy", "homogenized" or "unknown" (its bpf_csum_diff, probed); ``runs``: packet index ->
    run; ``error``: why the object did not load there (that kernel's finding), else None; ``source``: the kernel's
    package or "the running kernel"; ``seconds``: the boot's wall time (None for the running kernel); ``model``: csum's
    model of the architecture and release (csum.kernel.model), not a kernel.
    """

    name: str
    debian_arch: str
    machine: str
    release: str
    csum_diff_kind: str
    runs: dict[int, Run]
    error: str | None = None
    source: str = ""
    seconds: float | None = None
    #: The csum profile of the kernel's CPU where its features choose one (a booted guest's /proc/cpuinfo: riscv64
    #: with Zbb), None for the architecture's own (by ``machine``).
    profile_name: str | None = None
    model: bool = False

    @property
    def label(self) -> str:
        """``x86_64 6.1.0-50-amd64`` (``model x86_64 6.1`` for csum's model): how reports name the kernel."""
        return f"{'model ' if self.model else ''}{self.machine} {self.release}"

    @property
    def summary(self) -> Summary:
        return summarize(self.runs.values())

    def helper(self) -> Callable[[bytes, bytes, int], int] | None:
        """This kernel's ``bpf_csum_diff(from, to, seed)`` as csum models it, None when csum has no model of it."""
        name = self.profile_name or profile_for_machine(self.machine, "little") or \
            profile_for_machine(self.machine, "big")
        if name is None or self.csum_diff_kind == "unknown":
            return None
        try:
            p = profile(name, kernel=".".join(self.release.split(".")[:2]))
        except CsumValueError:
            return None
        if self.csum_diff_kind == "legacy":
            return lambda frm, to, seed: p.bpf_csum_diff_legacy(frm, to, Wsum(seed))
        return lambda frm, to, seed: p.bpf_csum_diff(frm, to, Wsum(seed))

    def byteorder(self) -> str:
        name = profile_for_machine(self.machine, "little")
        return "little" if name is not None else "big"


@dataclass(frozen=True)
class Differ:
    """A packet whose output differs between kernels: ``field`` ("ipv4 checksum at 24", "action"), its value on
    each kernel (by label) and the cause."""

    index: int
    field: str
    values: dict[str, str]
    cause: str


def _fold_once(csum: int) -> int:
    return ~((csum & 0xFFFF) + (csum >> 16)) & 0xFFFF


def _fold(csum: int) -> int:
    while csum >> 16:
        csum = (csum & 0xFFFF) + (csum >> 16)
    return ~csum & 0xFFFF


def _region(run: Run, layer: str, offset: int) -> bytes | None:
    """The bytes the replayed program sums: the IPv4 header, or the ICMP message to the IPv4 total length."""
    data = run.packet
    if layer == "ipv4":
        return data[offset:offset + 4 * (data[offset] & 15)]
    ip = next((c.offset for c in run.results if c.layer == "ipv4"), None)
    if ip is None:
        return None
    return data[offset:ip + int.from_bytes(data[ip + 2:ip + 4], "big")]


def replay_fold_once(kernels: list[KernelResult], index: int, layer: str, offset: int, field: int) -> str | None:
    """The cause, when replaying ``bpf_csum_diff`` over the field's header with each kernel's model and folding
    once gives every kernel's stored bytes and the lost carry is what sets them apart; else None."""
    if layer not in _REPLAYED:
        return None
    seen: dict[tuple[int, str], list[str]] = {}
    lost = []
    for k in kernels:
        helper, run = k.helper(), k.runs[index]
        region = _region(run, layer, offset)
        if helper is None or region is None or not region:
            return None
        at = field - offset
        zeroed = region[:at] + b"\0\0" + region[at + 2:]
        csum = helper(b"", zeroed, 0)
        if csum < 0:
            return None
        once = _fold_once(csum).to_bytes(2, k.byteorder())  # type: ignore[arg-type]
        if run.packet[field:field + 2] != once:
            return None
        lost.append(_fold(csum) != _fold_once(csum))
        seen.setdefault((csum, k.csum_diff_kind), []).append(k.label)
    if not any(lost) or all(lost):
        return None
    said: list[str] = []
    unfolded: list[str] = []
    folded: list[str] = []
    for (csum, kind), labels in seen.items():
        if kind == "legacy":
            (unfolded if csum > 0xFFFF else folded).extend(label.split()[-2] for label in labels)
        wrong = _fold(csum) != _fold_once(csum)
        said.append(f"on {', '.join(labels)} ({kind}) it returns {csum:#x}"
                    + (f" (unfolded 32-bit): one fold leaves {(csum & 0xFFFF) + (csum >> 16):#x}, whose carry out of "
                       "bit 15 is lost" if wrong else " (a 16-bit sum: one fold is enough)" if csum <= 0xFFFF else
                       " (unfolded 32-bit, but one fold leaves no carry here)"))
    return (f"reproduced: the program sums the {layer} {'header' if layer == 'ipv4' else 'message'} with "
            "bpf_csum_diff and folds the result once; replayed with each kernel's helper model, "
            + "; ".join(said) + ". Before 6.13 bpf_csum_diff returns the architecture's own csum_partial"
            + (f", unfolded here on {', '.join(dict.fromkeys(unfolded))}" if unfolded else "")
            + (f", folded on {', '.join(dict.fromkeys(folded))}" if folded else "")
            + "; since 6.13 a 16-bit sum everywhere. Fix: fold until no carry is left (csum_fold)")


def _u32_sum(values: list[int]) -> tuple[int, bool]:
    """``values`` added as a BPF program adds ``__u32`` values, and whether a carry out of bit 31 was dropped."""
    total = sum(values)
    return total & 0xFFFFFFFF, total > 0xFFFFFFFF


def replay_sum_carry(kernels: list[KernelResult], index: int, offset: int, field: int, frame: bytes) -> str | None:
    """The cause, when replaying one ``bpf_csum_diff(old, 4, new, 4, 0)`` per rewritten 32-bit word of the IPv4
    header at ``offset`` of ``frame`` (its checksum at ``field``) with each kernel's model, the results added in 32
    bits, the old checksum added with its carry and the sum folded fully, gives every kernel's stored bytes and a
    carry out of bit 31 lost on some kernels but not all; else None."""
    size = 4 * (frame[offset] & 15) if len(frame) > offset else 0
    old, at = frame[offset:offset + size], field - offset
    words = [w for w in range(0, size, 4) if not w <= at < w + 4]  # the checksum's word (TTL, protocol) must stay
    seen: dict[tuple[tuple[int, ...], str], list[str]] = {}
    lost = []
    for k in kernels:
        helper, out = k.helper(), k.runs[index].packet[offset:offset + size]
        if helper is None or len(out) != size or size < 20 or out[at - 2:at] != old[at - 2:at]:
            return None
        changed = [w for w in words if out[w:w + 4] != old[w:w + 4]]
        results = [helper(old[w:w + 4], out[w:w + 4], 0) for w in changed]
        if len(results) < 2 or any(r < 0 for r in results):
            return None
        total, carried = _u32_sum(results)
        check = int.from_bytes(old[at:at + 2], k.byteorder())  # type: ignore[arg-type]
        total += ~check & 0xFFFF
        total = (total & 0xFFFFFFFF) + (total >> 32)
        if k.runs[index].packet[field:field + 2] != _fold(total).to_bytes(2, k.byteorder()):  # type: ignore[arg-type]
            return None
        lost.append(carried)
        seen.setdefault((tuple(results), k.csum_diff_kind), []).append(k.label)
    if not any(lost) or all(lost):
        return None
    said = []
    for (got, kind), labels in seen.items():
        total, carried = _u32_sum(list(got))
        said.append(f"on {', '.join(labels)} ({kind}) they return {', '.join(f'{r:#x}' for r in got)}"
                    + (f", whose 32-bit sum {sum(got):#x} carries out of bit 31: the program keeps {total:#x} "
                       "and the carry is lost" if carried else f", whose 32-bit sum {total:#x} does not carry"))
    return (f"reproduced: the program calls bpf_csum_diff once per rewritten 32-bit word of the ipv4 header "
            f"({len(changed)} calls), adds the results in 32-bit arithmetic and folds the sum fully; replayed with "
            "each kernel's helper model, " + "; ".join(said) + ". Before 6.13 bpf_csum_diff returns the "
            "architecture's own csum_partial, an unfolded 32-bit sum on some architectures; since 6.13 a 16-bit sum "
            "everywhere. Fix: chain the calls through bpf_csum_diff's seed argument, or add with an end-around "
            "carry (csum_add)")


def _one_cause(found_by: list[str]) -> str | None:
    """The cause the replays found; when both program shapes give every kernel's bytes, both, since the outputs do
    not tell which shape the program has."""
    if len(found_by) < 2:
        return found_by[0] if found_by else None
    return ("reproduced by either of two program shapes, which these outputs do not tell apart: (1) "
            + found_by[0].removeprefix("reproduced: ") + "; or (2) " + found_by[1].removeprefix("reproduced: "))


def _facts(kernels: list[KernelResult], evidence: Evidence | None) -> str:
    kinds = {k.label: k.csum_diff_kind for k in kernels}
    calls = evidence is None or "bpf_csum_diff" in evidence
    text = "bpf_csum_diff on " + ", ".join(f"{label}: {kind}" for label, kind in kinds.items())
    return text + ("; the program calls bpf_csum_diff" if evidence is not None and calls else "")


def _zero_note(layer: str, values: set[int]) -> str:
    notes = []
    if values == {0, 0xFFFF} or {0, 0xFFFF} <= values:
        notes.append("0x0000 and 0xffff are the same sum in one's complement (+0 and -0), which an incremental "
                     "update (RFC 1624 eqn. 3) keeps where a full computation stores the other")
    if layer == "udp" and 0 in values:
        notes.append("a UDP checksum of 0 means 'no checksum' (RFC 768): the receiver checks nothing")
    return "; ".join(notes)


def differences(kernels: list[KernelResult], evidence: Evidence | None,
                inputs: Mapping[int, bytes] | None = None) -> list[Differ]:
    """Every packet whose output differs between the kernels that ran it (the ones that loaded the object);
    ``inputs``: the input frames by index (the replays that need the packet before the program)."""
    ran = [k for k in kernels if k.error is None]
    out: list[Differ] = []
    if len(ran) < 2:
        return out
    for index in sorted(set.intersection(*(set(k.runs) for k in ran))):
        runs = {k.label: k.runs[index] for k in ran}
        if len({r.packet for r in runs.values()}) == 1 and len({r.action for r in runs.values()}) == 1:
            continue
        if len({r.action for r in runs.values()}) > 1:
            out.append(Differ(index, "action", {label: r.action for label, r in runs.items()},
                              "the program returns another action on these kernels (a helper's result or an error "
                              "it checks differs); not replayed"))
            continue
        fields: dict[tuple[str, int], dict[str, tuple[int, int | None]]] = {}
        for label, r in runs.items():
            for c in r.results:
                if c.field is not None and c.stored is not None:
                    fields.setdefault((c.layer, c.field), {})[label] = (c.offset, c.stored)
        found = False
        for (layer, at), seen in fields.items():
            stored = {v[1] for v in seen.values()}
            if len(seen) != len(runs) or len(stored) == 1:
                continue
            found = True
            offset = next(iter(seen.values()))[0]
            frame = (inputs or {}).get(index)
            found_by = [c for c in (replay_fold_once(ran, index, layer, offset, at),
                                    replay_sum_carry(ran, index, offset, at, frame)
                                    if frame is not None and layer == "ipv4" else None) if c]
            cause = _one_cause(found_by) or \
                f"not reproduced by replaying bpf_csum_diff with each kernel's model ({_facts(ran, evidence)})"
            note = _zero_note(layer, {v for v in stored if v is not None})
            out.append(Differ(index, f"{layer} checksum at {at}", {label: f"{v[1]:#06x}" for label, v in seen.items()},
                              cause + (f"; {note}" if note else "")))
        if not found:
            out.append(Differ(index, "bytes", {label: r.packet.hex() for label, r in runs.items()},
                              "the outputs differ outside the checksum fields; not replayed"))
    return out
