"""One program on many kernels: what ``csum prog OBJ.o --debian RELEASE ARCH ... [--qemu ARCH --kernel IMAGE]
[--model ARCH:RELEASE ...]`` runs, callable from Python as ``csum.prog``'s :func:`across_kernels`.

The running kernel (:func:`csum.kernel.prog.load`), Debian's kernels or one's own booted under QEMU
(:mod:`csum.kernel.qemu.prog`) and csum's models of other architectures and releases (:mod:`csum.kernel.model`) each
run the program on the same frames; the results per kernel, then the packets whose output differs between kernels,
with the cause (:mod:`csum.kernel.differ`).
"""

from __future__ import annotations

import hashlib
import platform
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import LibbpfError
from .prog import PARTIAL_NOTE
from .prog_run import Packets, check_states, state_doc, states_fail, states_of

__all__ = ["Across", "Target", "across_kernels", "targets"]


class Target(NamedTuple):
    """A kernel to boot under QEMU: its name in the report, Debian architecture, image, what it is (``package``), the
    sha256 of its package or its own, and the CLI options that name it (for a recorded boot's command line)."""

    name: str
    arch: str
    image: Path
    package: str
    sha256: str
    how: list[str]


@dataclass(frozen=True)
class _Program:
    """How to load the program and record its boots: csum.kernel.prog.load's arguments, and what the guests need."""

    path: str
    section: str | None
    prog: str | None
    type: str | None
    maps: Mapping[str, Any]
    globals: Mapping[str, Any]
    ctx: Mapping[str, Any]
    object_be: str | None
    command: Sequence[str]


def targets(debian: Sequence[tuple[str, str]] = (), qemu: tuple[str, str | Path] | None = None) -> list[Target]:
    """Every kernel to boot: each (release, architecture) of ``debian`` fetched (once, cached), then ``qemu``'s
    (architecture, kernel image) when given."""
    from .qemu import guest

    out = []
    for suite, arch_name in debian:
        fetched = guest.fetch_debian(suite, guest.arch(arch_name).debian)
        out.append(Target(f"{suite} {fetched.arch}", fetched.arch, fetched.image,
                          f"{fetched.package} {fetched.version} (Debian {fetched.suite}, {fetched.arch})",
                          fetched.deb_sha256, ["--debian", suite, fetched.arch]))
    if qemu is not None:
        arch, image = guest.arch(qemu[0]).debian, Path(qemu[1])
        out.append(Target(f"{image.name} {arch}", arch, image, f"{image.name} (--kernel)",
                          hashlib.sha256(image.read_bytes()).hexdigest(), ["--qemu", arch, "--kernel", image.name]))
    return out


def _running(frames: list[tuple[int, bytes]], p: _Program) -> Any:
    """The running kernel's result; its error says why it did not run (no root, no BPF, the object's load)."""
    from .. import kernel
    from .differ import KernelResult
    from .prog import load

    machine, release = platform.machine(), platform.release()
    if not kernel.available():
        return KernelResult("running", "", machine, release, "unknown", {},
                            f"not run here: {kernel.why_unavailable()}", "the running kernel")
    kind = kernel.running_profile().csum_diff_kind
    try:
        with load(p.path, section=p.section, prog=p.prog, type=p.type, maps=p.maps, globals=p.globals,
                  ctx=p.ctx) as program:
            runs = {i: program.run(frame) for i, frame in frames}
    except LibbpfError as exc:
        return KernelResult("running", "", machine, release, kind, {},
                            f"does not load on {release}: {str(exc).splitlines()[0]}", "the running kernel")
    return KernelResult("running", "", machine, release, kind, runs, None, "the running kernel")


def _booted(target: Target, prep: Any, packets: Packets, p: _Program, timeout: float,
            save_vectors: str | None) -> Any:
    """One boot of ``target`` judged; with ``save_vectors``, the guest's answers written to
    DIR/ARCH-KERNEL.txt."""
    from .differ import KernelResult
    from .qemu import guest
    from .qemu import prog as qprog

    a = guest.arch(target.arch)
    frames = packets.frames
    booted = qprog.boot(a.debian, target.image, prep, frames, timeout=timeout)
    log = booted.log
    if save_vectors is not None and log.refused is None:
        import tempfile

        from ..capture.output import write_text

        provenance = {"package": target.package,
                      "deb sha256" if "Debian" in target.package else "kernel sha256": target.sha256,
                      "object": _object_line(p, prep, a.order),
                      "program": f"{prep.program} (section {prep.section}, {prep.kind})", "packets": packets.source,
                      "command": shlex.join(["csum", "prog", Path(p.path).name, *target.how, *p.command])}
        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / "log.txt"
            qprog.record(staged, booted, frames, provenance)
            write_text(Path(save_vectors) / f"{a.debian}-{log.release or 'unknown'}.txt", staged.read_text(),
                       "--save-vectors")
    error = qprog.load_error(log, prep.program)
    runs = {} if error else qprog.judge_log(prep, frames, log)
    missing = len(frames) - len(runs)
    if not error and missing:
        error = f"{missing} of {len(frames)} packets have no answer in the console log"
    return KernelResult(target.name, a.debian, log.machine or a.debian, log.release or "unknown", log.csum_diff_kind,
                        runs, error, target.package, None if log.refused else booted.seconds,
                        log.profile_name(a.order))


def _object_line(p: _Program, prep: Any, order: str) -> str:
    """The object the guest loaded: ``OBJ.o (sha256 ...)``, or a big-endian guest's ``object_be`` file."""
    name, data = (p.object_be, prep.data_be) if order == "big" else (p.path, prep.data)
    return f"{Path(str(name)).name} (sha256 {hashlib.sha256(data).hexdigest()})"


@dataclass
class Across:
    """What :func:`across_kernels` found: the program (``prep``: csum.kernel.qemu.prog's Prepared), each kernel's
    :class:`csum.kernel.differ.KernelResult`, the checksum states judged on each (by label), the packets whose
    output differs between kernels, and the notes a reader needs."""

    path: str
    prep: Any
    source: str
    kernels: list[Any]
    states: dict[str, list[Any]]
    differs: list[Any]
    notes: list[str]
    states_asked: bool

    @property
    def failed(self) -> bool:
        """A kernel that could not run it (for a reason other than not being here), a broken packet, a failing
        checksum state, or outputs that differ: ``csum prog`` exits 1."""
        return any(k.error and not k.error.startswith("not run here") or any(r.broken for r in k.runs.values())
                   for k in self.kernels) or any(states_fail(f) for f in self.states.values()) or bool(self.differs)

    def as_json(self) -> dict[str, Any]:
        """The body of ``csum prog --json`` across kernels (schema ``prog-kernels``)."""
        prep = self.prep
        return {"object": self.path, "program": prep.program, "section": prep.section, "type": prep.kind,
                "source": self.source, "notes": self.notes,
                "kernels": [_kernel_doc(k, self.states[k.label], self.states_asked) for k in self.kernels],
                "differs": [{"index": d.index, "field": d.field, "values": d.values, "cause": d.cause}
                            for d in self.differs]}


def _kernel_doc(k: Any, found: list[Any], asked: bool) -> dict[str, Any]:
    s = k.summary
    broken = sorted(i for i, r in k.runs.items() if r.broken)
    states = {"csum_states": [state_doc(st) for st in found]} if asked else {}
    release = k.name.split()[0] if "Debian" in k.source else "running" if not k.debian_arch else None
    if k.model:
        release = k.name.partition(":")[2]
    return {**states, "name": k.name, "arch": k.machine, "release": release,
            "kernel": k.label if k.model else k.release, "model": k.model, "source": k.source,
            "csum_diff": k.csum_diff_kind, "error": k.error,
            "boot_seconds": None if k.seconds is None else round(k.seconds, 1),
            "packets": s.packets, "changed": s.changed, "dropped": s.dropped, "broken_packets": s.broken,
            "kept_bad_packets": s.kept_bad, "unjudged": s.unjudged, "causes": dict(s.causes), "named": list(s.named),
            "unexplained": s.unexplained, "broken": broken}


def across_kernels(path: str, packets: Packets, *, section: str | None = None, prog: str | None = None,
                   type: str | None = None, maps: Mapping[str, Any] | None = None,
                   globals: Mapping[str, Any] | None = None, ctx: Mapping[str, Any] | None = None,
                   object_be: str | None = None, boots: Sequence[Target] = (), models: Sequence[str] = (),
                   csum_states: Sequence[str] = (), timeout: float = 1200.0, save_vectors: str | None = None,
                   command: Sequence[str] = (), states_name: str = "csum_states") -> Across:
    """The program of the object ``path`` run on ``packets`` by the running kernel, each of ``boots``
    (:func:`targets`; ``object_be``: the same program built for big-endian kernels; ``timeout``: seconds a boot may
    take; ``save_vectors``: a directory for each guest's answers; ``command``: the options that chose and seeded the
    program, for their recorded command line) and each model of ``models`` ("ARCH:RELEASE"), judged in each
    checksum state of ``csum_states`` too (tc only: else CsumValueError naming ``states_name``)."""
    from .differ import differences
    from .model import model_kernel
    from .qemu import prog as qprog

    maps, globals, ctx = dict(maps or {}), dict(globals or {}), dict(ctx or {})
    p = _Program(path, section, prog, type, maps, globals, ctx, object_be, tuple(command))
    prep = qprog.prepare(path, section=section, prog=prog, type=type, maps=maps, globals=globals, ctx=ctx,
                         object_be=object_be)
    check_states(csum_states, path, prep.program, prep.kind, states_name)
    frames = packets.frames
    kernels = [_running(frames, p)]
    kernels += [_booted(target, prep, packets, p, timeout, save_vectors) for target in boots]
    kernels += [model_kernel(text, path, frames, section=section, prog=prog, type=type, maps=maps, globals=globals,
                             ctx=ctx) for text in models]
    inputs = dict(frames)
    found = {k.label: states_of(csum_states, [(i, inputs[i], r) for i, r in sorted(k.runs.items())],
                                prep.evidence) if k.runs else [] for k in kernels}
    differs = differences(kernels, prep.evidence, inputs)
    notes = []
    if prep.pinned:
        notes.append("maps the object asks to pin (LIBBPF_PIN_BY_NAME), loaded fresh on every kernel, not pinned and "
                     "not reused: " + ", ".join(prep.pinned))
    if not any(r.changed or r.dropped for k in kernels for r in k.runs.values()):
        notes.append("the program changed no packet and dropped none on any kernel, so nothing it does was tested (a "
                     "program that needs its maps or globals seeded does nothing without them: --map, --global)")
    if prep.kind == "tc" and not any(st.state == "partial" for f in found.values() for st in f):
        notes.append(PARTIAL_NOTE + "; a kernel without BPF_F_TEST_SKB_CHECKSUM_COMPLETE (before 6.11, where not "
                     "backported) makes no CHECKSUM_COMPLETE run, and skb->csum is not judged there")
    return Across(path, prep, packets.source, kernels, found, differs, notes, bool(csum_states))
