"""What the guest runs and what it printed: the runner's plan and console log, as data.

:func:`make_cases` draws reproducible cases; :func:`plan_text` turns them
into the runner's plan (see ``runner.c`` for the line format), once per JIT
setting; :func:`parse_log` reads the console log back into a :class:`GuestLog`.
Nothing here boots anything, so all of it is unit-tested on the host.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Literal

from ... import bpf
from ...core.arith import canonical
from ..check import EDGE_SEEDS, _pattern
from . import programs

#: Stack programs built: every skew 0..7 occurs once for ``from`` and once for ``to``.
STACK_SKEWS = ((0, 0), (1, 3), (2, 6), (3, 2), (4, 4), (5, 7), (6, 1), (7, 5))
#: JIT settings tried, in order (the interpreter first).
JIT_MODES = ("0", "1")


@dataclass(frozen=True)
class DiffCase:
    """``bpf_csum_diff(frm, to, seed)`` with ``frm``/``to`` at packet offsets ``frm_off``/``to_off``.

    ``where`` is ``pkt`` (pointers into the packet) or ``stack_F_T`` (copied to the stack first).
    """

    id: str
    where: str
    frm: bytes
    to: bytes
    seed: int
    frm_off: int
    to_off: int

    def packet(self) -> bytes:
        """The test packet: filler (0x5a) with ``frm`` and ``to`` at their offsets."""
        pkt = bytearray(b"\x5a" * programs.PACKET_SIZE)
        pkt[self.frm_off:self.frm_off + len(self.frm)] = self.frm
        pkt[self.to_off:self.to_off + len(self.to)] = self.to
        return bytes(pkt)


@dataclass(frozen=True)
class ReplaceCase:
    """``bpf_l3_csum_replace`` / ``bpf_l4_csum_replace(skb, offset, frm, to, flags)`` on ``packet``."""

    id: str
    helper: Literal["l3", "l4"]
    packet: bytes
    offset: int
    frm: int
    to: int
    flags: int


Case = DiffCase | ReplaceCase

_L4_FLAG_SETS = (0, bpf.BPF_F_PSEUDO_HDR, bpf.BPF_F_MARK_MANGLED_0, bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0,
                 bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE,
                 bpf.BPF_F_PSEUDO_HDR | bpf.BPF_F_MARK_MANGLED_0 | bpf.BPF_F_MARK_ENFORCE)


def _zero_sum_bytes(rng: random.Random, size: int) -> bytes:
    """Random bytes whose 16-bit ones'-complement sum is 0xffff (the zero corner), ``size`` even >= 2."""
    data = bytearray(rng.randbytes(size - 2))
    total = canonical(sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)), 16)
    return bytes(data) + (0xFFFF - total).to_bytes(2, "big")


def _diff_cases(rng: random.Random, n: int) -> list[DiffCase]:
    out: list[DiffCase] = [DiffCase("probe", "pkt", b"\0", b"", 0, 0, programs.TO_BASE)]

    def add(where: str, frm: bytes, to: bytes, seed: int, fa: int, ta: int) -> None:
        out.append(DiffCase(f"d{len(out)}", where, frm, to, seed, fa, programs.TO_BASE + ta))

    # The zero corner at every pair of offsets: frm == to, and zero-sum buffers, in the packet and on the stack.
    for fa in range(8):
        for ta in range(8):
            size = rng.choice((2, 4, 6, 8, 12, 16, 20, 40))
            data = _zero_sum_bytes(rng, size) if rng.randrange(2) else rng.randbytes(size)
            add("pkt", data, data, rng.choice(EDGE_SEEDS), fa, ta)
            add("pkt", b"", _zero_sum_bytes(rng, size), 0, fa, ta)
    # Where the address changes the result: a 32-bit sum that is exactly 0xffffffff at one
    # alignment and only congruent to it at another (all-ones buffers, "from" alone or with a
    # seed), so ~csum_partial() is 0x0000 at one and 0xffff at the other.
    for size in (2, 4, 6, 8, 12, 16, 20, 40):
        for fa in range(8):
            ones = b"\xff" * size
            add("pkt", ones, b"", rng.choice((0, 0xFFFFFFFF)), fa, rng.randrange(8))
            add("pkt", b"", ones, 0xFFFFFFFF, rng.randrange(8), fa)
            add("pkt", ones, bytes(size), 0, fa, rng.randrange(8))
    for sf, st in STACK_SKEWS:
        where = f"stack_{sf}_{st}"
        for size in (4, 8, 16, 20):
            add(where, b"\xff" * size, b"", 0, rng.randrange(8), rng.randrange(8))
    for sf, st in STACK_SKEWS:
        where = f"stack_{sf}_{st}"
        for _ in range(4):
            data = _zero_sum_bytes(rng, rng.choice((4, 8, 16, 20)))
            add(where, data, data, 0, rng.randrange(8), rng.randrange(8))
            add(where, b"", data, 0, rng.randrange(8), rng.randrange(8))
    while len(out) < n:
        if rng.randrange(4):
            where, limit = "pkt", programs.MAX_PKT
        else:
            sf, st = rng.choice(STACK_SKEWS)
            where, limit = f"stack_{sf}_{st}", programs.MAX_STACK
        sizes = [rng.choice((0, 1, 2, 3, 4, 7, 8, 16, 20, 40, 64, limit)) if rng.randrange(2)
                 else rng.randrange(limit + 1) for _ in range(2)]
        frm, to = _pattern(rng, sizes[0]), _pattern(rng, sizes[1])
        seed = rng.choice(EDGE_SEEDS) if rng.randrange(2) else rng.getrandbits(32)
        add(where, frm, to, seed, rng.randrange(8), rng.randrange(8))
    return out


def _replace_cases(rng: random.Random, n: int) -> list[ReplaceCase]:
    out: list[ReplaceCase] = []
    corner = (0, 0xFFFF, 0xFFFFFFFF, 1, 0xFFFE)
    while len(out) < n:
        helper: Literal["l3", "l4"] = "l3" if rng.randrange(2) else "l4"
        pkt = bytearray(rng.randbytes(rng.randrange(16, 96)))
        offset = 2 * rng.randrange(7, len(pkt) // 2)
        if rng.randrange(3) == 0:
            pkt[offset:offset + 2] = rng.choice((b"\0\0", b"\xff\xff", b"\xff\xfe"))
        size = rng.choice((0, 2, 4))
        flags = size | (rng.choice(_L4_FLAG_SETS) if helper == "l4" else 0)
        mask = 0xFFFF if size == 2 else 0xFFFFFFFF
        frm = 0 if size == 0 else (rng.choice(corner) if rng.randrange(3) == 0 else rng.getrandbits(32)) & mask
        to = (rng.choice(corner) if rng.randrange(3) == 0 else rng.getrandbits(32)) & mask
        out.append(ReplaceCase(f"r{len(out)}", helper, bytes(pkt), offset, frm, to, flags))
    out.append(ReplaceCase(f"r{len(out)}", "l3", bytes(64), 13, 0, 1, 2))  # odd offset: -EFAULT
    out.append(ReplaceCase(f"r{len(out)}", "l3", bytes(64), 24, 0, 1, 3))  # size 3: -EINVAL
    return out


def make_cases(n_diff: int, n_replace: int, seed: int, *, replace: bool = True) -> list[Case]:
    """Reproducible cases from ``random.Random(seed)``: diff cases (zero corners first), then replace ones."""
    rng = random.Random(seed)
    cases: list[Case] = list(_diff_cases(rng, n_diff))
    if replace:
        cases += _replace_cases(rng, n_replace)
    return cases


def _programs(order: Literal["little", "big"]) -> dict[str, bytes]:
    progs = {"pkt": programs.diff_pkt(), "l3": programs.l3_replace(), "l4": programs.l4_replace()}
    progs.update({f"stack_{f}_{t}": programs.diff_stack(f, t) for f, t in STACK_SKEWS})
    return {name: programs.to_order(code, order) for name, code in progs.items()}


def _run_line(jit: str, case: Case) -> str:
    if isinstance(case, DiffCase):
        cb = (len(case.frm), len(case.to), case.seed, case.frm_off, case.to_off)
        return f"run {jit}:{case.id} {case.where} 0 {' '.join(map(str, cb))} {case.packet().hex()}"
    cb = (case.offset, case.frm, case.to, case.flags & 0xFFFFFFFF, case.flags >> 32)
    return f"run {jit}:{case.id} {case.helper} {len(case.packet)} {' '.join(map(str, cb))} {case.packet.hex()}"


def plan_text(cases: list[Case], order: Literal["little", "big"], jit_modes: tuple[str, ...] = JIT_MODES) -> str:
    """The runner's plan: for each JIT setting, set it, load every program, run every case."""
    progs = _programs(order)
    lines: list[str] = []
    for jit in jit_modes:
        lines.append(f"jit {jit}")
        lines += [f"prog {name} {code.hex()}" for name, code in progs.items()]
        lines += [_run_line(jit, c) for c in cases]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Result:
    """One ``RES`` line: the program's return value, ``cb[0..4]`` after the run, the packet it left."""

    retval: int
    cb: tuple[int, ...]
    data: bytes


@dataclass
class GuestLog:
    """What the runner printed, parsed."""

    uname: tuple[str, ...] = ()
    cpuinfo: list[str] = field(default_factory=list)
    jit_initial: str = ""
    hwprobe: dict[int, int] = field(default_factory=dict)
    jit_set: dict[str, int] = field(default_factory=dict)
    progs: dict[str, int] = field(default_factory=dict)
    verifier_log: list[str] = field(default_factory=list)
    results: dict[str, Result] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    done: bool = False

    @property
    def release(self) -> str:
        return self.uname[1] if len(self.uname) > 1 else ""

    @property
    def machine(self) -> str:
        return self.uname[3] if len(self.uname) > 3 else ""


_RES = re.compile(r"RES (\S+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) ?([0-9a-f]*)$")
_ERR = re.compile(r"ERR (\S+) (-\d+)$")


def parse_log(text: str) -> GuestLog:
    """Parse a console log; lines the kernel interleaved or mangled are skipped (their cases count as missing)."""
    log = GuestLog()
    for raw in text.replace("\r", "").split("\n"):
        line = raw.strip()
        if m := _RES.search(line):
            nums = tuple(int(x) for x in m.group(3, 4, 5, 6, 7))
            log.results[m.group(1)] = Result(int(m.group(2)), nums, bytes.fromhex(m.group(8)))
        elif m := _ERR.search(line):
            log.errors[m.group(1)] = int(m.group(2))
        elif line.startswith("UNAME "):
            log.uname = tuple(line[6:].split("|"))
        elif line.startswith("CPU "):
            log.cpuinfo.append(line[4:])
        elif line.startswith("HWPROBE "):
            parts = line.split()
            if len(parts) == 3 and parts[1].lstrip("-").isdigit():
                log.hwprobe[int(parts[1])] = int(parts[2])
        elif line.startswith("JIT-SET "):
            parts = line.split()
            if len(parts) == 3:
                log.jit_set[parts[1]] = int(parts[2])
        elif line.startswith("JIT "):
            log.jit_initial = line[4:]
        elif line.startswith("PROG "):
            parts = line.split()
            if len(parts) == 3:
                log.progs[parts[1]] = int(parts[2])
        elif line.startswith("LOG "):
            log.verifier_log.append(line[4:])
        elif line == "DONE":
            log.done = True
    return log
