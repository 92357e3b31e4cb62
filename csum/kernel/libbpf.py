"""The system's libbpf (libbpf.so.1) through ctypes: open a BPF ELF object, pick a program, load it.

libbpf does what a compiled object needs: it creates its maps (``.maps``, ``.rodata``/``.data``/``.bss``
globals), applies relocations and CO-RE, and loads the programs (tools/lib/bpf/libbpf.h, libbpf >= 1.0
error convention: NULL/negative return and errno). Its log lines (the verifier's among them) are
collected through ``libbpf_set_print`` so that a rejected program's error says why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from dataclasses import dataclass

from ..errors import CsumError, LibbpfError

#: enum bpf_prog_type values csum prog runs (include/uapi/linux/bpf.h).
PROG_TYPES = {3: "tc", 4: "tc", 6: "xdp"}

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
                ("libbpf_set_print", vp, [_PRINT]),
            ):
                getattr(lib, fn).restype = res
                getattr(lib, fn).argtypes = args
            lib.libbpf_set_print(_print_cb)
            _lib = lib
    return _lib


class BpfObject:
    """An opened (not yet loaded) BPF ELF object; :meth:`load` loads one program of it and returns its fd."""

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

    def programs(self) -> list[ProgramInfo]:
        """The object's programs in ELF order."""
        lib = self._lib
        return [ProgramInfo(name, lib.bpf_program__section_name(p).decode(), lib.bpf_program__type(p))
                for name, p in self._progs.items()]

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
