"""``csum prog --debian``: a user's tc/XDP object run on a real kernel of another release or architecture, booted
under QEMU, and judged exactly as on the running kernel.

* :func:`prepare` opens the object on the host (no root needed), chooses the program as :func:`csum.prog.load`
  does, and turns ``--map/--global/--ctx`` into bytes: the initial value of each ``.rodata``/``.data``/``.bss``
  map holding a global that was set, the encoded map entries, the ``struct __sk_buff`` of a tc run.
* :func:`plan_text` is the plan of csum's loader (``loader.c``: libbpf linked statically, the initramfs's
  ``/init``); the object itself lies beside it under its own file name, so the guest's libbpf loads the user's real
  instructions, maps and relocations. The guest probes its ``bpf_csum_diff`` (legacy or homogenized), loads the
  object, seeds the maps and runs every packet through BPF_PROG_TEST_RUN (a tc program a second time on a
  CHECKSUM_COMPLETE skb), in one boot.
* :func:`parse_log` reads the console back; :func:`judge_log` judges every output with
  :func:`csum.kernel.prog.judge_run`, the function that judges the running kernel's. A guest log is also the test data
  format: ``tests/vectors/qemu-prog`` holds guests' logs (``#`` header lines naming the boot) that the suite
  replays without booting.
* :func:`boot` boots one kernel, :func:`record` keeps its answers and :func:`replay` judges them again;
  :mod:`csum.kernel.differ` compares kernels.

A big-endian guest (s390x) gets the object of ``--object-be FILE``: the same source compiled with ``clang -target
bpfeb``, whose instructions and constants are in the guest's byte order (libbpf refuses an object of the other
order). The host reads the program, its maps and the helper calls from the little-endian object, and checks only
that ``FILE`` is a big-endian BPF ELF object; without it, or with ``--map/--global/--ctx`` values (encoded
little-endian), a big-endian kernel is not booted and :func:`big_endian_finding` is that kernel's finding, never a
pass.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...errors import EINVAL, Code, CsumValueError
from .. import seed
from ..libbpf import KIND_TYPES, PERCPU_MAPS
from ..differ import KernelResult
from ..prog import Run, helper_evidence, judge_run, open_object, skb_ctx
from ...rewrite.mistakes import Evidence
from . import guest
from .check import detect_profile
from .loader import build_loader
from .plan import GuestLog as PlanLog

#: The initramfs's own files, which an object may not be named.
_RESERVED = frozenset({"init", "plan.txt", "dev", "proc", "sys"})
#: include/uapi/asm-generic/errno.h: EBADMSG, what a CHECKSUM_COMPLETE test run answers for a stale skb->csum.
EBADMSG = 74


@dataclass(frozen=True)
class Prepared:
    """A user's object and everything its guest run needs, as bytes."""

    path: str
    data: bytes
    program: str
    section: str
    kind: str
    #: enum bpf_prog_type the guest's libbpf sets (``--type``), 0 to keep libbpf's own.
    prog_type: int
    inits: tuple[tuple[str, bytes], ...]
    entries: tuple[tuple[str, bytes, bytes], ...]
    ctx: bytes | None
    evidence: Evidence | None
    #: Maps the object asks libbpf to pin (LIBBPF_PIN_BY_NAME): loaded fresh in the guest, not pinned.
    pinned: tuple[str, ...] = ()
    #: The big-endian object (``--object-be``: clang -target bpfeb) a big-endian guest loads, None when not given.
    data_be: bytes | None = None


#: include/uapi/linux/elf-em.h: EM_BPF; the ELF header's EI_DATA for a big-endian object (ELFDATA2MSB).
EM_BPF, ELFDATA2MSB = 247, 2


def read_object_be(path: str) -> bytes:
    """The bytes of ``--object-be``'s file, which must be a big-endian BPF ELF object (``clang -target bpfeb``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CsumValueError(f"--object-be: cannot read {path}: {exc.strerror}", code=Code.BAD_VALUE) from None
    if data[:4] != b"\x7fELF" or len(data) < 20:
        raise CsumValueError(f"--object-be: {path} is not an ELF object", code=Code.BAD_VALUE)
    if data[5] != ELFDATA2MSB or int.from_bytes(data[18:20], "big") != EM_BPF:
        raise CsumValueError(f"--object-be: {path} is not a big-endian BPF object (build it with clang -target "
                             "bpfeb)", code=Code.BAD_VALUE)
    return data


def big_endian_finding(prep: Prepared, debian_arch: str) -> str | None:
    """Why ``prep`` cannot run on a big-endian ``debian_arch`` guest (that kernel's finding), None when it can."""
    if prep.data_be is None:
        return (f"not run on {debian_arch}: a big-endian kernel needs a big-endian object (clang -target bpfeb), "
                "given with --object-be FILE")
    if prep.inits or prep.entries or prep.ctx is not None:
        return (f"not run on {debian_arch}: --map/--global/--ctx values are encoded little-endian; seeding a "
                "big-endian guest is not supported")
    return None


def prepare(path: str, *, section: str | None = None, prog: str | None = None, type: str | None = None,
            maps: Mapping[str, Mapping[Any, seed.Value] | Iterable[Any]] | None = None,
            globals: Mapping[str, seed.Value] | None = None, ctx: Mapping[str, seed.Value] | None = None,
            object_be: str | None = None) -> Prepared:
    """The object ``path`` with its program chosen and ``maps``/``globals``/``ctx`` encoded, as
    :func:`csum.prog.load` takes them; raises its errors (unknown program, map, global, ctx field).
    ``object_be``: the same program built for big-endian guests (:func:`read_object_be`)."""
    obj, info, kind = open_object(path, section=section, prog=prog, type=type, map_names=maps or {},
                                  globals=globals)
    try:
        known = obj.globals()
        inits = []
        for name in dict.fromkeys(known[g].map for g in globals or {}):
            value = obj.initial_value(name)
            if value is not None:
                inits.append((name, value))
        sizes = {m.name: m for m in obj.maps}
        entries = []
        for name, items in (maps or {}).items():
            m = sizes[name]
            for key, value in seed.entries(items, f"map {name}"):
                v = seed.encode(value, m.value_size, f"map {name} value")
                entries.append((name, seed.encode(key, m.key_size, f"map {name} key"),
                                v.ljust((m.value_size + 7) & ~7, b"\0") if m.map_type in PERCPU_MAPS else v))
        context = skb_ctx(kind, ctx)
        code = obj.insns(info.name)
        evidence = helper_evidence(code) if code else None
        pinned = tuple(m.name for m in obj.maps if m.pin_path)
    finally:
        obj.close()
    with open(path, "rb") as f:
        data = f.read()
    return Prepared(path, data, info.name, info.section, kind, KIND_TYPES[type] if type else 0, tuple(inits),
                    tuple(entries), context, evidence, pinned,
                    None if object_be is None else read_object_be(object_be))


def guest_name(prep: Prepared) -> str:
    """The object's file name in the guest's root directory: its own, since libbpf names the object's internal maps
    (``NAME.rodata`` ...) after it, and ``init`` seeds them by those names."""
    name = Path(prep.path).name
    if name in _RESERVED or not name or any(c.isspace() for c in name):
        raise CsumValueError(f"{prep.path}: give the object another file name (not {', '.join(sorted(_RESERVED))}, "
                             "no spaces) to run it under QEMU", code=Code.BAD_VALUE)
    return name


def plan_text(prep: Prepared, frames: list[tuple[int, bytes]]) -> str:
    """The loader's plan (see ``loader.c``) for ``prep`` and the (index, frame) pairs ``frames``."""
    lines = [f"obj /{guest_name(prep)}", f"prog {prep.program} {prep.prog_type}"]
    lines += [f"init {name} {value.hex()}" for name, value in prep.inits]
    lines.append("load")
    lines += [f"map {name} {key.hex()} {value.hex()}" for name, key, value in prep.entries]
    if prep.ctx is not None:
        lines.append(f"ctx {prep.ctx.hex()}")
    lines += [f"pkt {i} {frame.hex()}" for i, frame in frames]
    return "\n".join(lines) + "\n"


@dataclass
class GuestLog:
    """What the loader printed, parsed (the ``#`` header lines of a recorded log as ``header``)."""

    header: dict[str, str] = field(default_factory=dict)
    uname: tuple[str, ...] = ()
    probe: int | None = None
    opened: int | None = None
    loaded: int | None = None
    log: list[str] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)
    results: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    errors: dict[int, int] = field(default_factory=dict)
    complete: dict[int, int] = field(default_factory=dict)
    done: bool = False
    #: The input frames of a recorded log (``IN`` lines: what the guest was given).
    inputs: dict[int, bytes] = field(default_factory=dict)
    #: Why the kernel was not booted (:func:`big_endian_finding`), None when it was.
    refused: str | None = None
    #: ``/proc/cpuinfo``'s lines and riscv_hwprobe's answers (key -> value): what chooses the profile.
    cpuinfo: list[str] = field(default_factory=list)
    hwprobe: dict[int, int] = field(default_factory=dict)

    @property
    def release(self) -> str:
        return self.uname[1] if len(self.uname) > 1 else ""

    @property
    def machine(self) -> str:
        return self.uname[3] if len(self.uname) > 3 else ""

    def profile_name(self, order: Literal["little", "big"]) -> str | None:
        """The csum profile of the guest's CPU as kernel-check chooses it (riscv64 with Zbb: the Zbb fold), None when
        the log has no ``CPU`` lines (the architecture's own profile then)."""
        if not self.cpuinfo:
            return None
        return detect_profile(PlanLog(uname=self.uname, cpuinfo=self.cpuinfo, hwprobe=self.hwprobe), order)

    @property
    def csum_diff_kind(self) -> str:
        """"legacy" (a 1-byte ``from`` got -EINVAL), "homogenized", or "unknown" (the probe did not run)."""
        return "unknown" if self.probe is None else "legacy" if self.probe == -EINVAL else "homogenized"

    def lines(self) -> list[str]:
        """The log as the loader printed it (what :func:`parse_log` reads back)."""
        out = [f"UNAME {'|'.join(self.uname)}"] + [f"CPU {line}" for line in self.cpuinfo]
        out += [f"HWPROBE {k} {v}" for k, v in self.hwprobe.items()]
        if self.probe is not None:
            out.append(f"PROBE {self.probe}")
        if self.opened is not None:
            out.append(f"OPEN {self.opened}")
        out += [f"{k} {v}" for k, v in self.status.items()]
        if self.loaded is not None:
            out.append(f"LOAD {self.loaded}")
        out += [f"LOG {line}" for line in self.log]
        for i in sorted({*self.results, *self.errors}):
            if i in self.results:
                retval, data = self.results[i]
                out.append(f"RES {i} {retval} {data.hex()}")
            else:
                out.append(f"ERR {i} {self.errors[i]}")
            if i in self.complete:
                out.append(f"CPL {i} {self.complete[i]}")
        return out + (["DONE"] if self.done else [])


_RES = re.compile(r"RES (\d+) (\d+) ([0-9a-f]*)$")
_IN = re.compile(r"IN (\d+) ([0-9a-f]+)$")
_NUM = re.compile(r"(ERR|CPL) (\d+) (-?\d+)$")
_STATUS = re.compile(r"(PROG|INIT|MAP) (\S+) (-?\d+)$")


def parse_log(text: str) -> GuestLog:
    """Parse the loader's console log (or a recorded one); lines the kernel mangled are skipped (their packets
    count as missing)."""
    log = GuestLog()
    for raw in text.replace("\r", "").split("\n"):
        line = raw.strip()
        if raw.startswith("# "):
            key, _, value = raw[2:].partition(": ")
            log.header.setdefault(key, value)
        elif m := _IN.match(line):
            log.inputs[int(m[1])] = bytes.fromhex(m[2])
        elif m := _RES.search(line):
            log.results[int(m[1])] = (int(m[2]), bytes.fromhex(m[3]))
        elif m := _NUM.search(line):
            (log.errors if m[1] == "ERR" else log.complete)[int(m[2])] = int(m[3])
        elif m := _STATUS.match(line):
            log.status[f"{m[1]} {m[2]}"] = int(m[3])
        elif raw.startswith("CPU "):
            log.cpuinfo.append(raw[4:].rstrip())
        elif m := re.fullmatch(r"HWPROBE (\d+) (\d+)", line):
            log.hwprobe[int(m[1])] = int(m[2])
        elif line.startswith("UNAME "):
            log.uname = tuple(line[6:].split("|"))
        elif m := re.fullmatch(r"(PROBE|OPEN|LOAD) (-?\d+)", line):
            number = int(m[2])
            if m[1] == "PROBE":
                log.probe = number
            elif m[1] == "OPEN":
                log.opened = number
            else:
                log.loaded = number
        elif line.startswith("LOG "):
            log.log.append(line[4:])
        elif line == "DONE":
            log.done = True
    return log


def load_error(log: GuestLog, program: str) -> str | None:
    """Why the object did not load on the guest's kernel (its finding), None when it did."""
    from os import strerror

    release = log.release or "the guest's kernel"
    if log.refused is not None:
        return log.refused
    if log.opened:
        return f"libbpf cannot open the object on {release}: {strerror(-log.opened)}"
    if log.loaded is None:
        return f"the loader never reached the load on {release} (the console log ends first)"
    if log.loaded:
        lines = [line.strip().removeprefix("libbpf: ") for line in log.log if line.strip()]
        helper = next((m for line in lines if (m := re.search(r"(unknown func \S+|invalid func \S+)", line))), None)
        why = helper[1] if helper else lines[-1] if lines else strerror(-log.loaded)
        return f"does not load on {release}: {why}"
    bad = {k: v for k, v in log.status.items() if v and not k.startswith("PROG")}
    if bad:
        return f"seeding failed on {release}: " + ", ".join(f"{k}: {strerror(-v)}" for k, v in bad.items())
    return None


def judge_log(prep: Prepared, frames: list[tuple[int, bytes]], log: GuestLog) -> dict[int, Run]:
    """Every packet the guest ran, judged with :func:`csum.kernel.prog.judge_run` (index -> run); a tc program's
    CHECKSUM_COMPLETE run: 0 -> fresh, -EBADMSG -> stale, -EINVAL -> not run (the kernel lacks the flag)."""
    out = {}
    for i, frame in frames:
        if i not in log.results:
            continue
        retval, data = log.results[i]
        rc = log.complete.get(i) if prep.kind == "tc" else None
        stale = None if rc is None or rc not in (0, -EBADMSG) else rc == -EBADMSG
        out[i] = judge_run(prep.kind, frame, retval, data, stale, prep.evidence)
    return out


@dataclass
class Booted:
    """One boot: the parsed log, the console text, the qemu command, how the loader was built, wall seconds."""

    log: GuestLog
    text: str
    command: list[str]
    loader: str
    seconds: float


def boot(arch: str, kernel: Path, prep: Prepared, frames: list[tuple[int, bytes]], *, timeout: float = 1200.0,
         log_path: Path | None = None) -> Booted:
    """Boot ``kernel`` (Debian architecture ``arch``) under QEMU with the loader, the object (a big-endian guest:
    ``prep.data_be``) and ``frames``; raises CsumValueError naming the Debian package of a missing qemu or cross
    compiler. A big-endian guest that cannot run the program is not booted: its log's ``refused`` says why (no
    command line)."""
    a = guest.arch(arch)
    data = prep.data
    if a.order == "big":
        refused = big_endian_finding(prep, a.debian)
        if refused is not None:
            return Booted(GuestLog(uname=("Linux", "", "", a.debian), refused=refused), "", [], "", 0.0)
        data = prep.data_be  # type: ignore[assignment]
    guest.qemu_version(a)
    loader = build_loader(a)
    start = time.monotonic()
    text, command = guest.boot(a, kernel, plan_text(prep, frames), timeout=timeout, log=log_path, init=loader,
                               files={guest_name(prep): data}, marker="CSUM-LOADER")
    return Booted(parse_log(text), text, command, loader.note, time.monotonic() - start)


def record(path: Path, booted: Booted, frames: list[tuple[int, bytes]], provenance: Mapping[str, str]) -> None:
    """Write a boot's log (the kernel's answers, not csum's) with a header naming the boot and the input frames
    (``IN INDEX HEX``), as test data that :func:`parse_log` reads back."""
    head = [f"# {k}: {v}" for k, v in provenance.items()]
    head += [f"# qemu command: {shlex.join(booted.command)}", f"# loader: {booted.loader}",
             f"# boot seconds: {booted.seconds:.1f}",
             "# lines: IN INDEX FRAME (the input); RES INDEX RETVAL OUTPUT (BPF_PROG_TEST_RUN); CPL INDEX RC (the "
             "CHECKSUM_COMPLETE run); PROBE RC (bpf_csum_diff of a 1-byte from: -22 on the legacy helper)"]
    inputs = [f"IN {i} {frame.hex()}" for i, frame in frames]
    path.write_text("\n".join(head + inputs + booted.log.lines()) + "\n")


_PROGRAM = re.compile(r"(\S+) \(section (\S+), (tc|xdp)\)$")


def replay(path: Path, evidence: Evidence | None = None) -> KernelResult:
    """A boot recorded by :func:`record` (``csum prog --debian ... --save-vectors``), judged again without booting:
    the kernel's own outputs, csum's verdicts. ``evidence``: the checksum helpers the program calls (narrows the
    causes; None: nothing ruled out)."""
    log = parse_log(path.read_text())
    found = _PROGRAM.match(log.header.get("program", ""))
    if found is None:
        raise CsumValueError(f"{path}: no '# program: NAME (section S, tc|xdp)' header line", code=Code.BAD_VALUE)
    prep = Prepared(path.name, b"", found[1], found[2], found[3], 0, (), (), None, evidence)
    frames = sorted(log.inputs.items())
    arch = log.header.get("package", "").rpartition(", ")[2].rstrip(")")
    runs = judge_log(prep, frames, log)
    return KernelResult(path.stem, arch, log.machine, log.release, log.csum_diff_kind, runs,
                        load_error(log, found[1]), log.header.get("package", ""),
                        profile_name=log.profile_name(guest.arch(arch).order) if arch in guest.ARCHES else None)
