"""``csum kernel-check --qemu``: a real kernel of another architecture as the judge of csum's emulation.

:func:`evaluate` compares a parsed guest log with the profile's emulation
(detected from the guest by :func:`detect_profile`, or forced); every
disagreement becomes a :class:`QemuMismatch` that names the exact call,
including where the buffers sat. :func:`write_vectors` / :func:`read_vectors`
keep a boot's observations as committed test vectors (tests/vectors/qemu),
which the test suite replays against the emulation on every run.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Literal, cast

from ... import bpf
from ...arch.profiles import Profile, profile, profile_for_machine
from ...errors import EINVAL
from ...types import Wsum
from . import guest
from .plan import Case, DiffCase, GuestLog, ReplaceCase


def _s64(lo: int, hi: int) -> int:
    value = hi << 32 | lo
    return value - (1 << 64) if value >> 63 else value


def _s32(value: int) -> int:
    return value - (1 << 32) if value >> 31 else value


def cpu_features(log: GuestLog) -> dict[str, str]:
    """The /proc/cpuinfo facts that select a checksum code path (riscv ISA string, s390 facilities, CPU model)."""
    out: dict[str, str] = {}
    for line in log.cpuinfo:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key in ("isa", "ISA", "features", "Features", "cpu", "cpu model", "model name", "Model Name", "Processor",
                   "CPU part", "vendor_id", "machine") \
                and key not in out:
            out[key] = value
    if log.machine.startswith("s390"):
        out["vector facility (vx)"] = "yes" if re.search(r"\bvx\b", out.get("features", "")) else "no"
    if log.machine.startswith("riscv"):
        isa = out.get("isa", "")
        out["zbb"] = "yes" if re.search(r"_zbb(_|$)", isa) else "no"
        # riscv_hwprobe MISALIGNED_SCALAR_PERF (key 9; older kernels: CPUPERF_0, key 5): 3 = fast.
        perf = log.hwprobe.get(9, log.hwprobe.get(5))
        out["fast unaligned access"] = "unknown" if perf is None else "yes" if perf & 7 == 3 else "no"
    return out


def release_version(release: str) -> str:
    """``"7.2.13+deb14-armmp"`` -> ``"7.2"`` (what :func:`csum.profile` takes as ``kernel=``)."""
    match = re.match(r"(\d+)\.(\d+)", release)
    if not match:
        raise ValueError(f"not a kernel release: {release!r}")
    return f"{match.group(1)}.{match.group(2)}"


def detect_profile(log: GuestLog, order: Literal["little", "big"]) -> str:
    """The csum profile name for the guest: uname -m on a CPU of byte ``order`` (big- and little-endian MIPS
    both say ``mips``), refined by CPU features (riscv Zbb, fast unaligned access)."""
    machine = log.machine
    name = "arm" if machine.startswith("armv") else profile_for_machine(machine, order) or machine
    features = cpu_features(log)
    if name == "riscv64" and features.get("zbb") == "yes":
        # Slow unaligned access: Debian's 7.2 build (the one booted) folds misaligned sums in C;
        # --profile riscv64-zbb selects a build whose misaligned path has the Zbb fold too.
        fast = features["fast unaligned access"] == "yes"
        name = "riscv64-zbb-fast-unaligned" if fast else "riscv64-zbb-cfold-misaligned"
    return name


def csum_diff_kind(log: GuestLog) -> str:
    """"legacy" when the probe (a 1-byte ``from``) got -EINVAL, else "homogenized"."""
    for key, res in log.results.items():
        if key.endswith(":probe"):
            return "legacy" if _s64(res.cb[0], res.cb[1]) == -EINVAL else "homogenized"
    raise ValueError("the guest log has no probe result")


@dataclass(frozen=True)
class Observation:
    """One kernel answer, with what the emulation needs to replay it."""

    jit: str
    case: Case
    value: int
    frm_align: int = 0
    to_align: int = 0
    data: bytes = b""


@dataclass(frozen=True)
class QemuMismatch:
    """A case where the booted kernel and the emulation disagree, as a reproducible call."""

    jit: str
    call: str
    kernel: str
    emulated: str
    reproduce: str


@dataclass
class QemuReport:
    """Outcome of one boot: the guest, the profile compared, counts, and every mismatch."""

    arch: str
    kernel_image: str
    release: str
    machine: str
    profile: str
    csum_diff_kind: str
    cpu: dict[str, str]
    jit: dict[str, str]
    alignments: dict[str, list[int]]
    cases: dict[str, int] = field(default_factory=dict)
    missing: int = 0
    #: diff cases whose emulated result changes if the buffers are assumed 8-byte aligned.
    alignment_dependent: int = 0
    mismatches: list[QemuMismatch] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.missing

    def format_text(self) -> str:
        lines = [
            f"kernel-check --qemu {self.arch}: {self.kernel_image}",
            f"  guest: Linux {self.release} ({self.machine}); bpf_csum_diff {self.csum_diff_kind}; "
            f"compared with profile {self.profile}",
            "  cpu: " + "; ".join(f"{k}: {v}" for k, v in self.cpu.items()),
            "  jit: " + ", ".join(f"bpf_jit_enable={k}: {v}" for k, v in self.jit.items()),
            "  buffer addresses mod 8 seen: " + "; ".join(f"{k} {v}" for k, v in self.alignments.items()),
            "  cases: " + ", ".join(f"{k} {v}" for k, v in self.cases.items())
            + (f"; {self.missing} MISSING from the log" if self.missing else ""),
            f"  diff cases whose result depends on the buffers' addresses: {self.alignment_dependent}",
            "  result: " + ("all agree" if not self.mismatches else f"{len(self.mismatches)} MISMATCHES"),
        ]
        for m in self.mismatches:
            lines.append(f"  [jit {m.jit}] {m.call}: kernel {m.kernel}, emulated {m.emulated}\n      {m.reproduce}")
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "ok": self.ok}, indent=2)


def observations(log: GuestLog, cases: list[Case]) -> tuple[list[Observation], int]:
    """Pair each case with the kernel's answer (per JIT setting); returns them and the count missing."""
    found, missing = [], 0
    for jit in sorted({key.split(":")[0] for key in (*log.results, *log.errors)}):
        for case in cases:
            res = log.results.get(f"{jit}:{case.id}")
            if res is None or (isinstance(case, DiffCase) and res.retval):
                missing += 1
                continue
            if isinstance(case, DiffCase):
                found.append(Observation(jit, case, _s64(res.cb[0], res.cb[1]), res.cb[2] & 7, res.cb[3] & 7))
            else:
                found.append(Observation(jit, case, _s32(res.retval), data=res.data))
    return found, missing


def emulate(p: Profile, kind: str, obs: Observation) -> tuple[int, bytes]:
    """What csum says the kernel returns for ``obs`` (value, and the packet for replace cases)."""
    case = obs.case
    if isinstance(case, DiffCase):
        if kind == "legacy":
            return p.bpf_csum_diff_legacy(case.frm, case.to, Wsum(case.seed)), b""
        return p.bpf_csum_diff(case.frm, case.to, Wsum(case.seed), frm_align=obs.frm_align, to_align=obs.to_align), b""
    pkt = bytearray(case.packet)
    helper = bpf.bpf_l3_csum_replace if case.helper == "l3" else bpf.bpf_l4_csum_replace
    return helper(pkt, case.offset, case.frm, case.to, case.flags), bytes(pkt)


def _fmt(value: int) -> str:
    return f"{value:#x}" if value >= 0 else f"{value}"


def _mismatch(p: Profile, kind: str, obs: Observation, want: tuple[int, bytes]) -> QemuMismatch:
    case = obs.case
    if isinstance(case, DiffCase):
        call = (f"{case.where}: bpf_csum_diff(from={case.frm.hex() or '-'} @{obs.frm_align} mod 8, "
                f"to={case.to.hex() or '-'} @{obs.to_align} mod 8, seed={case.seed:#x})")
        repro = (f"csum diff --profile {p.name} --from '{case.frm.hex()}' --to '{case.to.hex()}' --seed {case.seed:#x}"
                 + (f" --from-align {obs.frm_align} --to-align {obs.to_align}" if kind == "homogenized" else ""))
        return QemuMismatch(obs.jit, call, _fmt(obs.value), _fmt(want[0]), repro)
    call = (f"bpf_{case.helper}_csum_replace(pkt={case.packet.hex()}, {case.offset}, {case.frm:#x}, {case.to:#x}, "
            f"{case.flags:#x})")
    return QemuMismatch(obs.jit, call, f"rc {obs.value} pkt {obs.data.hex()}", f"rc {want[0]} pkt {want[1].hex()}",
                        f"python -c \"import csum; p = bytearray.fromhex('{case.packet.hex()}'); print(csum.bpf_"
                        f"{case.helper}_csum_replace(p, {case.offset}, {case.frm:#x}, {case.to:#x}, {case.flags:#x}), "
                        f"p.hex())\"")


def agrees(p: Profile, kind: str, obs: Observation) -> tuple[bool, tuple[int, bytes]]:
    """Whether the emulation gives the kernel's answer for ``obs``, and the emulation's answer."""
    want = emulate(p, kind, obs)
    if isinstance(obs.case, DiffCase):
        return want[0] == obs.value, want
    return want == (obs.value, obs.data), want


def evaluate(log: GuestLog, cases: list[Case], *, arch: str, kernel_image: str, forced_profile: str | None = None,
             provenance: dict[str, str] | None = None) -> QemuReport:
    """Compare every answer in ``log`` with the emulation of the guest's profile."""
    kind = csum_diff_kind(log)
    name = forced_profile or detect_profile(log, guest.arch(arch).order)
    p = profile(name, kernel=release_version(log.release))
    obs, missing = observations(log, cases)
    jit = {mode: ("set" if rc == 0 else f"not settable (errno {-rc})") for mode, rc in log.jit_set.items()}
    report = QemuReport(arch, kernel_image, log.release, log.machine, p.name, kind, cpu_features(log), jit, {},
                        missing=missing, provenance=dict(provenance or {}))
    seen: dict[str, set[int]] = {}
    for o in obs:
        kind_key = o.case.where if isinstance(o.case, DiffCase) else o.case.helper
        group = "diff pkt" if kind_key == "pkt" else "diff stack" if kind_key.startswith("stack") else kind_key
        report.cases[group] = report.cases.get(group, 0) + 1
        if isinstance(o.case, DiffCase):
            side = "pkt" if o.case.where == "pkt" else "stack"
            seen.setdefault(f"{side} from", set()).add(o.frm_align)
            seen.setdefault(f"{side} to", set()).add(o.to_align)
        ok, want = agrees(p, kind, o)
        if isinstance(o.case, DiffCase) and (o.frm_align or o.to_align):
            aligned = Observation(o.jit, o.case, o.value)
            report.alignment_dependent += emulate(p, kind, aligned)[0] != want[0]
        if not ok:
            report.mismatches.append(_mismatch(p, kind, o, want))
    report.alignments = {k: sorted(v) for k, v in sorted(seen.items())}
    return report


# --- committed vectors -----------------------------------------------------------------------------------

def _merged(obs: list[Observation]) -> Iterator[tuple[str, Observation]]:
    """Observations equal across JIT settings are written once, with the settings joined ("0,1")."""
    groups: dict[tuple, list[str]] = {}
    first: dict[tuple, Observation] = {}
    for o in obs:
        key = (o.case, o.value, o.frm_align, o.to_align, o.data)
        groups.setdefault(key, []).append(o.jit)
        first.setdefault(key, o)
    for key, jits in groups.items():
        yield ",".join(jits), first[key]


def write_vectors(path: Path, report: QemuReport, obs: list[Observation]) -> None:
    """Write a boot's observations (the kernel's answers, not csum's) as a vector file."""
    head = [f"# {k}: {v}" for k, v in report.provenance.items()]
    head += [f"# uname: Linux {report.release} {report.machine}", f"# profile: {report.profile}",
             f"# kernel: {release_version(report.release)}", f"# csum_diff: {report.csum_diff_kind}",
             "# cpu: " + "; ".join(f"{k}: {v}" for k, v in report.cpu.items()),
             "# jit: " + ", ".join(f"bpf_jit_enable={k}: {v}" for k, v in report.jit.items()),
             "# buffer addresses mod 8 seen: " + "; ".join(f"{k} {v}" for k, v in report.alignments.items()),
             f"# agreement when booted: {sum(report.cases.values())} cases, {len(report.mismatches)} mismatches, "
             f"{report.alignment_dependent} diff cases depend on the buffers' addresses",
             "# columns: diff JITS WHERE FRM_ALIGN TO_ALIGN SEED RESULT FRM TO  (aligns measured in the guest: the"
             " buffers' addresses mod 8; RESULT the helper's s64 return)",
             "#          l3|l4 JITS OFFSET FROM TO FLAGS RC PACKET_IN PACKET_OUT  (hex; RC the helper's return)"]
    lines = []
    for jits, o in _merged(obs):
        c = o.case
        if isinstance(c, DiffCase):
            lines.append(f"diff {jits} {c.where} {o.frm_align} {o.to_align} {c.seed:08x} {o.value} "
                         f"{c.frm.hex() or '-'} {c.to.hex() or '-'}")
        else:
            lines.append(f"{c.helper} {jits} {c.offset} {c.frm:x} {c.to:x} {c.flags:x} {o.value} "
                         f"{c.packet.hex()} {o.data.hex()}")
    path.write_text("\n".join(head + lines) + "\n")


@dataclass(frozen=True)
class VectorFile:
    """A parsed vector file: its header fields and observations."""

    header: dict[str, str]
    observations: list[Observation]


def read_vectors(path: Path) -> VectorFile:
    """Parse a file written by :func:`write_vectors`."""
    header: dict[str, str] = {}
    obs: list[Observation] = []
    case: Case
    for n, line in enumerate(path.read_text().splitlines()):
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(": ")
            header.setdefault(key, value)
            continue
        f = line.split()
        if f[0] == "diff":
            frm, to = (bytes.fromhex(x) if x != "-" else b"" for x in f[7:9])
            case = DiffCase(f"v{n}", f[2], frm, to, int(f[5], 16), 0, 0)
            obs.append(Observation(f[1], case, int(f[6]), int(f[3]), int(f[4])))
        else:
            helper = cast(Literal["l3", "l4"], f[0])  # write_vectors wrote a ReplaceCase's helper here
            case = ReplaceCase(f"v{n}", helper, bytes.fromhex(f[7]), int(f[2]), int(f[3], 16), int(f[4], 16),
                               int(f[5], 16))
            obs.append(Observation(f[1], case, int(f[6]), data=bytes.fromhex(f[8])))
    return VectorFile(header, obs)


def kernel_check_qemu(arch_name: str, kernel: Path, *, n: int = 600, n_replace: int = 200, seed: int = 1,
                      forced_profile: str | None = None, timeout: float = 1800.0, log_path: Path | None = None,
                      provenance: dict[str, str] | None = None,
                      append_extra: str = "") -> tuple[QemuReport, list[Observation]]:
    """Boot ``kernel`` under QEMU with the runner, run the cases, and compare with the emulation.

    The l3/l4 replace cases run only on little-endian guests (csum's replace
    emulation takes ``from``/``to`` as a little-endian CPU's registers hold them).
    """
    from .plan import make_cases, parse_log, plan_text

    a = guest.arch(arch_name)
    cases = make_cases(n, n_replace, seed, replace=a.order == "little")
    text, command = guest.boot(a, kernel, plan_text(cases, a.order), timeout=timeout, log=log_path,
                               append_extra=append_extra)
    log = parse_log(text)
    if not log.results:
        raise ValueError(f"the guest ran no case (programs: {log.progs}; verifier: {' / '.join(log.verifier_log[-5:])})")
    prov = {**(provenance or {}), "qemu": guest.qemu_version(a), "qemu command": shlex.join(command),
            "runner": guest.build_runner(a).note,
            "cases": f"csum.kernel.qemu.plan.make_cases({n}, "
            f"{n_replace if a.order == 'little' else 0}, seed={seed})"}
    report = evaluate(log, cases, arch=a.debian, kernel_image=str(kernel), forced_profile=forced_profile,
                      provenance=prov)
    return report, observations(log, cases)[0]
