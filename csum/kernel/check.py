"""Cross-check csum's bpf_csum_diff emulation against the running kernel's (net/core/filter.c).

:func:`kernel_check` draws reproducible cases (edge patterns first, then random
ones from ``random.Random(seed)``), computes each with the emulation of the
running profile (``csum.profile(name).bpf_csum_diff`` on homogenized kernels,
``.bpf_csum_diff_legacy`` on legacy ones) and with :func:`csum.kernel.bpf_csum_diff`,
and reports every disagreement as a case that can be replayed.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator, TextIO

from .. import kernel
from ..types import Wsum

#: Sizes worth hitting on purpose: 0, odd, not multiples of 4, word and scratch-buffer edges, the maximum.
EDGE_SIZES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 20, 31, 32, 33, 40, 63, 64, 65,
              255, 256, 257, 511, 512, 513, 599, 600)
EDGE_SEEDS = (0, 1, 0xFFFF, 0x10000, 0xFFFFFFFF)
MAX_SIZE = 600

Case = tuple[bytes, bytes, int]


@dataclass(frozen=True)
class Mismatch:
    """One case where the kernel and the emulation disagree; replay with ``bytes.fromhex``."""

    frm: str
    to: str
    seed: int
    kernel: int
    emulated: int


@dataclass
class KernelCheckReport:
    """Outcome of :func:`kernel_check`: what ran where, how many cases, and the mismatches."""

    profile: str
    release: str
    csum_diff_kind: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every case agreed."""
        return not self.mismatches

    def format_text(self) -> str:
        """A short human-readable summary, one line per mismatch."""
        rate = self.cases / self.seconds if self.seconds else 0.0
        lines = [
            f"kernel-check: profile {self.profile}, kernel {self.release} ({self.csum_diff_kind} bpf_csum_diff), "
            f"seed {self.seed}",
            f"{self.cases} cases in {self.seconds:.2f} s ({rate:.0f}/s): "
            + ("all agree" if self.ok else f"{len(self.mismatches)} MISMATCHES"),
        ]
        lines += [f"  seed={m.seed:#x} kernel={m.kernel:#x} emulated={m.emulated:#x} "
                  f"frm={m.frm or '-'} to={m.to or '-'}" for m in self.mismatches]
        return "\n".join(lines)

    def to_json(self) -> str:
        """The report as a JSON object (mismatches as a list of objects)."""
        return json.dumps({**asdict(self), "ok": self.ok}, indent=2)


def _pattern(rng: random.Random, size: int) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(size)
    if kind == 1:
        return b"\xff" * size
    data = bytearray(rng.randbytes(size))
    if kind == 2 and size:  # a run of 0xff inside random bytes
        start = rng.randrange(size)
        end = rng.randrange(start, size) + 1
        data[start:end] = b"\xff" * (end - start)
    elif kind == 3:  # mostly 0xff, a few random bytes
        data = bytearray(b"\xff" * size)
        for _ in range(rng.randrange(3)):
            if size:
                data[rng.randrange(size)] = rng.randrange(256)
    return bytes(data)


def _size(rng: random.Random) -> int:
    pick = rng.randrange(4)
    if pick == 0:
        return rng.choice(EDGE_SIZES)
    if pick == 1:
        return 4 * rng.randrange(MAX_SIZE // 4 + 1)
    return rng.randrange(MAX_SIZE + 1)


def cases(n: int, seed: int) -> Iterator[Case]:
    """``n`` reproducible (frm, to, seed) cases: fixed corners first, then random draws from ``seed``."""
    corners: list[Case] = []
    for size in (0, 1, 3, 4, 7, 8, 512, 600):
        for byte in (b"\0", b"\xff"):
            for s in EDGE_SEEDS:
                corners += [(byte * size, b"", s), (b"", byte * size, s), (byte * size, byte * size, s)]
    corners += [(b"\xff" * 600, bytes(600), s) for s in EDGE_SEEDS]
    corners += [(bytes(600), b"\xff" * 600, s) for s in EDGE_SEEDS]
    yield from corners[:n]
    rng = random.Random(seed)
    for _ in range(n - len(corners)):
        frm, to = _pattern(rng, _size(rng)), _pattern(rng, _size(rng))
        s = rng.choice(EDGE_SEEDS) if rng.randrange(2) else rng.getrandbits(32)
        yield frm, to, s


def _emulation(profile: kernel.RunningProfile) -> Callable[[object, object, Wsum], int]:
    from ..arch.profiles import profile as select_profile

    emulated = select_profile(profile.name, kernel=f"{profile.version[0]}.{profile.version[1]}")
    return emulated.bpf_csum_diff if profile.csum_diff_kind == "homogenized" else emulated.bpf_csum_diff_legacy


def kernel_check(n: int = 2000, seed: int | None = None, *, progress: TextIO | None = None) -> KernelCheckReport:
    """Run ``n`` cases through the running kernel and the emulation of its profile.

    ``seed`` makes the random cases reproducible (a fresh one is drawn and reported when None).
    ``progress``, if given, gets a ``\\r``-updated count once the run has taken over a second.
    Raises :class:`csum.kernel.KernelUnavailable` when the kernel helpers cannot be called.
    """
    running = kernel.running_profile()
    emulate = _emulation(running)
    if seed is None:
        seed = random.SystemRandom().getrandbits(32)
    report = KernelCheckReport(running.name, running.release, running.csum_diff_kind, seed)
    start = last = time.monotonic()
    for frm, to, s in cases(n, seed):
        got, want = kernel.bpf_csum_diff(frm, to, s), emulate(frm, to, Wsum(s))
        report.cases += 1
        if got != want:
            report.mismatches.append(Mismatch(frm.hex(), to.hex(), s, got, want))
        now = time.monotonic()
        if progress is not None and now - start > 1 and now - last > 0.2:
            progress.write(f"\rkernel-check: {report.cases}/{n} cases, {len(report.mismatches)} mismatches")
            progress.flush()
            last = now
    report.seconds = time.monotonic() - start
    if progress is not None and last != start:
        progress.write("\n")
    return report
