"""The system's libbpf (libbpf.so.1) through ctypes: open a BPF ELF object, pick a program, load it.

libbpf does what a compiled object needs: it creates its maps (``.maps``, ``.rodata``/``.data``/``.bss``
globals), applies relocations and CO-RE, and loads the programs (tools/lib/bpf/libbpf.h, libbpf >= 1.0
error convention: NULL/negative return and errno). Its log lines (the verifier's among them) are
collected through ``libbpf_set_print`` so that a rejected program's error says why.

An object is loaded as a test harness loads it, not as a deployment: every map's pin path is cleared
before load (``bpf_map__set_pin_path(map, NULL)``), so a ``LIBBPF_PIN_BY_NAME`` map needs no bpffs, is
never reused from ``/sys/fs/bpf`` (a live program's map) and leaves nothing behind. A program whose
section libbpf >= 1.0 no longer recognises (``SEC("xdp_prog")``, ``SEC("classifier/x")``: type 0) can be
given its type (``bpf_program__set_type``); globals of ``.rodata`` / ``.data`` / ``.bss`` are found by name
in the object's BTF (``BTF_KIND_DATASEC``) and set before load (``bpf_map__set_initial_value``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from dataclasses import dataclass

from ..errors import LibbpfError

#: enum bpf_prog_type values csum prog runs (include/uapi/linux/bpf.h).
PROG_TYPES = {3: "tc", 4: "tc", 6: "xdp"}
#: The type ``--type`` / ``type=`` sets for a kind: BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_XDP.
KIND_TYPES = {"tc": 3, "xdp": 6}
#: include/uapi/linux/btf.h: BTF_KIND_VAR and BTF_KIND_DATASEC; ``struct btf_type`` is 12 bytes, a
#: ``struct btf_var_secinfo`` (type, offset, size) follows a DATASEC's header ``vlen`` times.
_BTF_KIND_VAR, _BTF_KIND_DATASEC = 14, 15
_BTF_TYPE = ctypes.c_uint32 * 3

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_log: list[str] = []
_PRINT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


@dataclass(frozen=True)
class ProgramInfo:
    """One program of an object: its function name, ELF section and ``enum bpf_prog_type``."""

    name: str
    section: str
    prog_type: int

    @property
    def kind(self) -> str | None:
        """"tc", "xdp", or None for a type csum prog does not run."""
        return PROG_TYPES.get(self.prog_type)


@dataclass(frozen=True)
class MapInfo:
    """One map of an object: name, ``enum bpf_map_type``, key/value sizes, entries; ``internal``: a
    ``.rodata`` / ``.data`` / ``.bss`` map of globals; ``pin_path``: where the object asked libbpf to pin it
    (``LIBBPF_PIN_BY_NAME``), which this loader does not do; None when it did not ask."""

    name: str
    map_type: int
    key_size: int
    value_size: int
    max_entries: int
    internal: bool
    pin_path: str | None


@dataclass(frozen=True)
class GlobalVar:
    """A global variable of an object: the internal map holding it, its offset there and its size."""

    name: str
    map: str
    offset: int
    size: int


def _printer(level: int, fmt: bytes, args: int) -> int:
    buf = ctypes.create_string_buffer(4096)
    _libc.vsnprintf(buf, len(buf), fmt, ctypes.c_void_p(args))
    _log.append(buf.value.decode(errors="replace"))
    del _log[:-200]
    return 0


_libc = ctypes.CDLL(None)
_libc.vsnprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]
_print_cb = _PRINT(_printer)


def library() -> ctypes.CDLL:
    """libbpf.so.1, with the signatures used here; raises LibbpfError when it is not installed."""
    global _lib
    with _lock:
        if _lib is None:
            name = ctypes.util.find_library("bpf") or "libbpf.so.1"
            try:
                lib = ctypes.CDLL(name, use_errno=True)
            except OSError as exc:
                raise LibbpfError(f"libbpf is not installed ({exc}); install libbpf1 (Debian/Ubuntu) or "
                                  "libbpf (Fedora)") from None
            vp, cp = ctypes.c_void_p, ctypes.c_char_p
            for fn, res, args in (
                ("bpf_object__open_file", vp, [cp, vp]), ("bpf_object__load", ctypes.c_int, [vp]),
                ("bpf_object__close", None, [vp]), ("bpf_object__next_program", vp, [vp, vp]),
                ("bpf_program__name", cp, [vp]), ("bpf_program__section_name", cp, [vp]),
                ("bpf_program__type", ctypes.c_int, [vp]), ("bpf_program__fd", ctypes.c_int, [vp]),
                ("bpf_program__set_autoload", ctypes.c_int, [vp, ctypes.c_bool]),
                ("bpf_program__set_type", ctypes.c_int, [vp, ctypes.c_int]),
                ("bpf_program__insns", vp, [vp]), ("bpf_program__insn_cnt", ctypes.c_size_t, [vp]),
                ("bpf_object__next_map", vp, [vp, vp]), ("bpf_map__name", cp, [vp]),
                ("bpf_map__type", ctypes.c_int, [vp]), ("bpf_map__key_size", ctypes.c_uint32, [vp]),
                ("bpf_map__value_size", ctypes.c_uint32, [vp]), ("bpf_map__max_entries", ctypes.c_uint32, [vp]),
                ("bpf_map__is_internal", ctypes.c_bool, [vp]), ("bpf_map__pin_path", cp, [vp]),
                ("bpf_map__set_pin_path", ctypes.c_int, [vp, cp]), ("bpf_map__fd", ctypes.c_int, [vp]),
                ("bpf_map__initial_value", vp, [vp, ctypes.POINTER(ctypes.c_size_t)]),
                ("bpf_map__set_initial_value", ctypes.c_int, [vp, vp, ctypes.c_size_t]),
                ("bpf_map__update_elem", ctypes.c_int, [vp, vp, ctypes.c_size_t, vp, ctypes.c_size_t, ctypes.c_uint64]),
                ("bpf_map__lookup_elem", ctypes.c_int, [vp, vp, ctypes.c_size_t, vp, ctypes.c_size_t, ctypes.c_uint64]),
                ("libbpf_num_possible_cpus", ctypes.c_int, []),
                ("bpf_object__btf", vp, [vp]), ("btf__find_by_name_kind", ctypes.c_int, [vp, cp, ctypes.c_int]),
                ("btf__type_by_id", ctypes.POINTER(_BTF_TYPE), [vp, ctypes.c_uint32]),
                ("btf__name_by_offset", cp, [vp, ctypes.c_uint32]),
                ("libbpf_set_print", vp, [_PRINT]),
            ):
                getattr(lib, fn).restype = res
                getattr(lib, fn).argtypes = args
            lib.libbpf_set_print(_print_cb)
            _lib = lib
    return _lib


#: enum bpf_map_type values whose value is per CPU (include/uapi/linux/bpf.h): PERCPU_HASH, PERCPU_ARRAY,
#: LRU_PERCPU_HASH, PERCPU_CGROUP_STORAGE. A lookup or update moves one value per possible CPU, each padded to 8.
PERCPU_MAPS = frozenset({5, 6, 10, 21})


class BpfObject:
    """An opened (not yet loaded) BPF ELF object; :meth:`load` loads one program of it and returns its fd.

    Opening clears every map's pin path (see the module docstring); :attr:`maps` says which asked for one.
    """

    def __init__(self, path: str) -> None:
        self._lib = library()
        self.path = path
        with _lock:
            _log.clear()
            ptr = self._lib.bpf_object__open_file(os.fsencode(path), None)
            err = ctypes.get_errno()
            log = "\n".join(_log)
        if not ptr:
            lines = [line.strip().removeprefix("libbpf: ") for line in log.splitlines() if line.strip()]
            why = lines[-1] if lines else (os.strerror(err) if 0 < err < 4000 else "not a BPF ELF object")
            raise LibbpfError(f"libbpf cannot open {path}: {why}")
        self._obj: int | None = ptr
        self._progs: dict[str, int] = {}
        prog = None
        while True:
            prog = self._lib.bpf_object__next_program(self._obj, prog)
            if not prog:
                break
            self._progs[self._lib.bpf_program__name(prog).decode()] = prog
        self._maps: dict[str, int] = {}
        infos = []
        m = None
        while True:
            m = self._lib.bpf_object__next_map(self._obj, m)
            if not m:
                break
            lib = self._lib
            name, pin = lib.bpf_map__name(m).decode(), lib.bpf_map__pin_path(m)
            infos.append(MapInfo(name, lib.bpf_map__type(m), lib.bpf_map__key_size(m), lib.bpf_map__value_size(m),
                                 lib.bpf_map__max_entries(m), bool(lib.bpf_map__is_internal(m)),
                                 None if pin is None else pin.decode(errors="replace")))
            if pin is not None:
                lib.bpf_map__set_pin_path(m, None)
            self._maps[name] = m
        #: The object's maps, as opened (``pin_path``: what the object asked for, not done here).
        self.maps: tuple[MapInfo, ...] = tuple(infos)

    def programs(self) -> list[ProgramInfo]:
        """The object's programs in ELF order."""
        lib = self._lib
        return [ProgramInfo(name, lib.bpf_program__section_name(p).decode(), lib.bpf_program__type(p))
                for name, p in self._progs.items()]

    def set_type(self, name: str, kind: str) -> None:
        """Give program ``name`` the type of ``kind`` ("tc": SCHED_CLS, "xdp": XDP) before load."""
        self._lib.bpf_program__set_type(self._progs[name], KIND_TYPES[kind])

    def insns(self, name: str) -> bytes:
        """Program ``name``'s instructions as libbpf holds them now (8 bytes each, ``struct bpf_insn``); after
        :meth:`load` they include the subprograms libbpf appended; b"" when libbpf no longer has them."""
        prog = self._progs[name]
        ptr, count = self._lib.bpf_program__insns(prog), self._lib.bpf_program__insn_cnt(prog)
        return ctypes.string_at(ptr, 8 * count) if ptr and count else b""

    def globals(self) -> dict[str, GlobalVar]:
        """The object's global variables by name (from its BTF: each internal map's ``BTF_KIND_DATASEC``)."""
        lib = self._lib
        btf = lib.bpf_object__btf(self._obj)
        found: dict[str, GlobalVar] = {}
        if not btf:
            return found
        for info in self.maps:
            if not info.internal:
                continue
            dots = [i for i, c in enumerate(info.name) if c == "."]
            for i in dots:  # "prefix.rodata": the section is a suffix starting at a dot
                sec_id = lib.btf__find_by_name_kind(btf, info.name[i:].encode(), _BTF_KIND_DATASEC)
                if sec_id > 0:
                    break
            else:
                continue
            sec = lib.btf__type_by_id(btf, sec_id)
            vlen = sec.contents[1] & 0xFFFF
            secinfo = ctypes.cast(ctypes.addressof(sec.contents) + 12, ctypes.POINTER(ctypes.c_uint32 * (3 * vlen)))
            words = list(secinfo.contents)
            for k in range(vlen):
                var_id, offset, size = words[3 * k:3 * k + 3]
                var = lib.btf__type_by_id(btf, var_id)
                if var and (var.contents[1] >> 24) & 0x1F == _BTF_KIND_VAR:
                    name = lib.btf__name_by_offset(btf, var.contents[0]).decode()
                    found[name] = GlobalVar(name, info.name, offset, size)
        return found

    def set_global(self, var: GlobalVar, value: bytes) -> None:
        """Set global ``var`` to ``value`` (exactly ``var.size`` bytes) in its map's initial value, before load."""
        m = self._maps[var.map]
        size = ctypes.c_size_t(0)
        ptr = self._lib.bpf_map__initial_value(m, ctypes.byref(size))
        if not ptr or var.offset + len(value) > size.value:
            raise LibbpfError(f"libbpf holds no initial value for {var.map} to set {var.name} in")
        data = bytearray(ctypes.string_at(ptr, size.value))
        data[var.offset:var.offset + len(value)] = value
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        if self._lib.bpf_map__set_initial_value(m, buf, len(data)):
            raise LibbpfError(f"libbpf cannot set {var.name} in {var.map} (already loaded?)")

    def initial_value(self, name: str) -> bytes | None:
        """The initial value libbpf holds for internal map ``name`` (its globals, as set), before load; None when
        it holds none."""
        size = ctypes.c_size_t(0)
        ptr = self._lib.bpf_map__initial_value(self._maps[name], ctypes.byref(size))
        return ctypes.string_at(ptr, size.value) if ptr else None

    def _value_size(self, name: str) -> tuple[int, int]:
        info = next(i for i in self.maps if i.name == name)
        if info.map_type in PERCPU_MAPS:
            return info.value_size, self._lib.libbpf_num_possible_cpus()
        return info.value_size, 1

    def map_update(self, name: str, key: bytes, value: bytes) -> None:
        """``bpf_map__update_elem`` of a loaded map (BPF_ANY); a per-CPU map gets ``value`` on every CPU."""
        size, cpus = self._value_size(name)
        whole = value if cpus == 1 else value.ljust((size + 7) & ~7, b"\0") * cpus
        kbuf, vbuf = ctypes.create_string_buffer(key, len(key)), ctypes.create_string_buffer(whole, len(whole))
        rc = self._lib.bpf_map__update_elem(self._maps[name], kbuf, len(key), vbuf, len(whole), 0)
        if rc:
            raise LibbpfError(f"libbpf cannot update map {name!r}: {os.strerror(-rc)}")

    def map_lookup(self, name: str, key: bytes) -> bytes | None:
        """``bpf_map__lookup_elem`` of a loaded map: the value (CPU 0's for a per-CPU map), None when absent."""
        size, cpus = self._value_size(name)
        stride = size if cpus == 1 else (size + 7) & ~7
        kbuf, vbuf = ctypes.create_string_buffer(key, len(key)), ctypes.create_string_buffer(stride * cpus)
        rc = self._lib.bpf_map__lookup_elem(self._maps[name], kbuf, len(key), vbuf, stride * cpus, 0)
        if rc == -2:  # -ENOENT
            return None
        if rc:
            raise LibbpfError(f"libbpf cannot look up map {name!r}: {os.strerror(-rc)}")
        return vbuf.raw[:size]

    def load(self, name: str) -> int:
        """Load the object with only program ``name`` (maps and relocations included); its fd."""
        for other, prog in self._progs.items():
            self._lib.bpf_program__set_autoload(prog, other == name)
        with _lock:
            _log.clear()
            rc = self._lib.bpf_object__load(self._obj)
            log = "".join(_log)
        if rc:
            tail = "\n".join(log.strip().splitlines()[-25:])
            why = "the verifier rejected it" if "PROG LOAD LOG" in log else os.strerror(-rc)
            raise LibbpfError(f"libbpf cannot load program {name!r} of {self.path}: {why}"
                              + (f"\nlibbpf log (last lines):\n{tail}" if tail else ""))
        return self._lib.bpf_program__fd(self._progs[name])

    def close(self) -> None:
        """Free the object, its maps and programs."""
        if self._obj:
            self._lib.bpf_object__close(self._obj)
            self._obj = None
