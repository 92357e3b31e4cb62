"""``csum prog OBJ --model ARCH:RELEASE``: a user's tc/XDP program run without a kernel, by csum's own models of
the architecture and release, and judged exactly as a kernel's runs are (:func:`csum.kernel.prog.judge_run`).

The object's own instructions run in an eBPF interpreter (:mod:`.vm`) over a flat memory of the packet, the
context, the stacks and the maps (:mod:`.maps`), linked as libbpf links them (:mod:`.elf`, :mod:`.link`; the
maps and globals as libbpf opens them, no root needed). Every helper call is answered by csum's model of that
helper on that architecture and release (:mod:`.helpers`), as BPF_PROG_TEST_RUN would answer it
(net/bpf/test_run.c): a tc program runs on a CHECKSUM_NONE skb, then on a CHECKSUM_COMPLETE one whose
``skb->csum`` is checked afterwards, as the running kernel's runs are.

Whatever is not modelled (a helper, an instruction, a context field, a map type) stops that packet's run: its
verdict is "cannot model: WHAT", never a pass, and the kernel's result says so.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...arch.profiles import Profile, profile, profile_for_machine
from ...errors import Code, CsumValueError
from ...skb import Skb
from .. import seed
from ..differ import KernelResult
from ..prog import Run, helper_evidence, judge_run, open_object, skb_ctx
from ..syscall import SKB_CTX_FIELDS
from ..verdict import UNJUDGED, Check
from . import elf as elf_reader
from .ctx import LOOPBACK_IFINDEX, Ctx, cannot, ethertype
from .helpers import XDP_HEADROOM, XDP_SAFE_END, Helpers, Packet
from .link import check_core, link
from .maps import Map
from .vm import Memory, Vm

__all__ = ["ARCHES", "CANNOT", "RELEASES", "Model", "model_kernel", "parse"]

#: The Debian architectures (the words of ``--debian``) and the ``uname -m`` of their kernels, which chooses
#: csum's profile of them (:func:`csum.profiles.profile_for_machine`) with the byte order.
ARCHES = {"amd64": ("x86_64", "little"), "i386": ("i686", "little"), "arm64": ("aarch64", "little"),
          "armhf": ("armv7l", "little"), "ppc64el": ("ppc64le", "little"), "s390x": ("s390x", "big"),
          "riscv64": ("riscv64", "little"), "mips64el": ("mips64", "little"), "mipsel": ("mips", "little"),
          "loong64": ("loongarch64", "little")}
#: The Debian releases (the words of ``--debian``) and the kernel release each ships (unstable: the one booted for
#: tests/vectors/qemu-prog); a release number (``6.6``) is taken as it is.
RELEASES = {"bookworm": "6.1", "trixie": "6.12", "unstable": "7.2", "sid": "7.2"}
#: The action of a packet the model cannot run.
CANNOT = "cannot model"
SOURCE = "csum's model: an eBPF interpreter with csum's helper models, no kernel ran it"


def parse(text: str) -> tuple[str, str, str, Profile]:
    """``ARCH:RELEASE`` -> (Debian architecture, the release word, the kernel release "6.1", the profile); raises
    CsumValueError naming --model and the valid words."""
    arch, _, word = text.partition(":")
    arch = {"x86_64": "amd64", "aarch64": "arm64", "i686": "i386"}.get(arch, arch)
    release = RELEASES.get(word, word)
    parts = release.split(".")
    if arch not in ARCHES or len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise CsumValueError(f"--model {text!r}: give ARCH:RELEASE with ARCH one of {', '.join(sorted(ARCHES))} and "
                             f"RELEASE one of {', '.join(RELEASES)} or a kernel release like 6.6", code=Code.BAD_VALUE)
    machine, order = ARCHES[arch]
    name = profile_for_machine(machine, order)
    assert name is not None
    return arch, word, release, profile(name, kernel=release)


def _cannot(frame: bytes, why: str) -> Run:
    return Run(0, frame, [Check("packet", 0, None, None, None, why, status=UNJUDGED)], CANNOT, False, False, why)


class Model:
    """A program of the object ``path`` (chosen and seeded as :func:`csum.prog.load` does) on ``arch`` (a profile as
    of ``release``, "6.1"); :meth:`run` runs one frame. Raises CsumValueError for an object that is not a BPF ELF
    object, and "cannot model" ones (code ``not-modelled``) for one the model cannot link at all."""

    def __init__(self, path: str, arch: Profile, release: str, *, section: str | None = None,
                 prog: str | None = None, type: str | None = None,
                 maps: Mapping[str, Mapping[Any, seed.Value] | Iterable[Any]] | None = None,
                 globals: Mapping[str, seed.Value] | None = None, ctx: Mapping[str, seed.Value] | None = None) -> None:
        self.arch = arch
        major, minor = (int(p) for p in release.split("."))
        self.release = (major, minor)
        data = Path(path).read_bytes()
        self.elf = elf = elf_reader.read(path, data)
        if elf.order != arch.endian:
            raise cannot(f"a {elf.order}-endian object on {arch.name}, a {arch.endian}-endian CPU (build it with "
                         f"clang -target {'bpfeb' if arch.endian == 'big' else 'bpfel'})")
        obj, info, self.kind = open_object(path, section=section, prog=prog, type=type, map_names=maps or {},
                                           globals=globals)
        try:
            code = obj.insns(info.name)
            self.evidence = helper_evidence(code) if code else None
            self.info = info
            context = skb_ctx(self.kind, ctx)
            infos = list(obj.maps)
            initial = {m.name: obj.initial_value(m.name) if m.internal else None for m in infos}
        finally:
            obj.close()
        check_core(elf)
        if self.kind == "tc" and arch.endian != "little":
            raise cannot(f"a tc program on {arch.name}: csum.skb.Skb models the skb helpers of little-endian CPUs")
        self.memory = memory = Memory(elf.order)
        self.maps = {m.name: Map(m, memory, initial[m.name], read_only=m.internal and ".rodata" in m.name)
                     for m in infos}
        refs = {name: memory.add(bytearray(), f"map {name}'s reference") for name in self.maps}
        for name, items in (maps or {}).items():
            m = self.maps[name]
            for key, value in seed.entries(items, f"map {name}"):
                rc = m.update(seed.encode(key, m.info.key_size, f"map {name} key"),
                              seed.encode(value, m.info.value_size, f"map {name} value"), 0)
                if rc:
                    raise CsumValueError(f"map {name}: the model cannot seed it ({rc})", code=Code.BAD_VALUE)
        sym = elf.function(info.name)
        if sym is None:
            raise cannot(f"program {info.name}: no function symbol in the object")
        self._entry = (sym.shndx, sym.value // 8)
        code_, calls = link(elf, sym.shndx, refs.get, self._data_address)
        self.helpers = Helpers(self.kind, arch, self.release, memory, {refs[n]: m for n, m in self.maps.items()})
        self.vm = Vm(code_, calls, memory, self.helpers)
        self._values = self._ctx_values(context)
        self._ctx = Ctx(self.kind, dict(self._values), elf.order, self)
        self._ctx_address = memory.add(bytearray(192 if self.kind == "tc" else 24), "the context", ctx=self._ctx)
        self._packet_address = memory.add(bytearray(), "the packet")

    def _data_address(self, section: str, offset: int) -> int | None:
        for name, m in self.maps.items():
            if m.info.internal and (name == section or (name.endswith(section) and "." not in name[:-len(section)])):
                return m.lookup(bytes(4)) + offset if m.modelled else None
        return None

    def _ctx_values(self, context: bytes | None) -> dict[str, int]:
        if self.kind == "xdp":
            return {"ingress_ifindex": LOOPBACK_IFINDEX}
        given = {n: struct.unpack_from("<I", context, at)[0] for n, at in SKB_CTX_FIELDS.items()} if context else {}
        if given.get("ifindex", 0) > LOOPBACK_IFINDEX:
            raise cannot(f"ctx ifindex {given['ifindex']} (a test run needs a device of that index)")
        given["ifindex"] = LOOPBACK_IFINDEX
        return given

    # the context's pointers, read through Ctx
    def data(self) -> int:
        return self._packet.data()

    def data_end(self) -> int:
        return self._packet.data_end()

    def data_meta(self) -> int:
        return self._packet.data_meta()

    def _go(self, frame: bytes, skb: Skb | None) -> tuple[int, bytes]:
        region = self.memory.region(self._packet_address)
        if skb is not None:
            region.buf, region.start, region.lo, region.hi = skb.data, skb.align, 0, len(skb.data)
            self._packet = Packet(region, (self._packet_address & ~7) | skb.align, skb, 0, len(frame))
            self._ctx.values = {**self._values, "len": len(frame),
                                "protocol": int.from_bytes(ethertype(frame).to_bytes(2, "big"), self.elf.order)}
        else:
            if XDP_HEADROOM + len(frame) > XDP_SAFE_END:
                raise cannot(f"an XDP frame of {len(frame)} bytes (a test run's frame size depends on the "
                             "architecture's page size)")
            region.buf, region.start = bytearray(4096), 0
            region.buf[XDP_HEADROOM:XDP_HEADROOM + len(frame)] = frame
            self._packet = Packet(region, self._packet_address & ~7, None, XDP_HEADROOM, XDP_HEADROOM + len(frame))
            self._packet.move(XDP_HEADROOM, XDP_HEADROOM + len(frame))
            self._ctx.values = dict(self._values)
        self._ctx.cb[:] = bytes(20)
        self.helpers.packet = self._packet
        retval = self.vm.run(self._entry[0], self._entry[1], self._ctx_address) & 0xFFFFFFFF
        return retval, self._packet.bytes()

    def run(self, frame: bytes) -> Run:
        """One frame through the program, judged; a tc program runs again on a CHECKSUM_COMPLETE skb."""
        try:
            if self.kind == "tc":
                align = self.arch.net_ip_align
                retval, out = self._go(frame, Skb(frame, arch=self.arch, align=align))
                complete = Skb.checksum_complete(frame, arch=self.arch, align=align)
                self._go(frame, complete)
                stale: bool | None = not complete.csum_valid()
            else:
                retval, out = self._go(frame, None)
                stale = None
        except CsumValueError as exc:
            if exc.code != Code.NOT_MODELLED:
                raise
            return _cannot(frame, str(exc))
        return judge_run(self.kind, frame, retval, out, stale, self.evidence)


def model_kernel(text: str, path: str, frames: list[tuple[int, bytes]], *, profile_name: str | None = None,
                 **options: Any) -> KernelResult:
    """The :class:`csum.kernel.differ.KernelResult` of ``--model ARCH:RELEASE`` (``text``) on ``frames``; options as
    :class:`Model` takes them; ``profile_name``: a CPU variant's csum profile instead of the architecture's own (as a
    booted guest's /proc/cpuinfo chooses it: riscv64 with Zbb). A packet the model cannot run makes the result's
    error, as an object that does not load on a kernel does."""
    arch, word, release, prof = parse(text)
    if profile_name is not None:
        prof = profile(profile_name, kernel=release)
    machine = ARCHES[arch][0]
    kind = "legacy" if tuple(int(p) for p in release.split(".")) < (6, 13) else "homogenized"
    name = f"model {arch}:{word}"
    try:
        model = Model(path, prof, release, **options)
    except CsumValueError as exc:
        if exc.code != Code.NOT_MODELLED:
            raise
        return KernelResult(name, arch, machine, release, kind, {}, str(exc), SOURCE, model=True)
    runs = {i: model.run(frame) for i, frame in frames}
    failed = [r.error for r in runs.values() if r.action == CANNOT]
    error = None
    if failed:
        first = dict.fromkeys(failed)
        error = f"{CANNOT} {len(failed)} of {len(runs)} packets: " + "; ".join(str(w).removeprefix(f"{CANNOT}: ")
                                                                              for w in first)
    return KernelResult(name, arch, machine, release, kind, runs, error, SOURCE, model=True)
