"""The maps of a modelled program: hash and array maps (and their per-CPU and LRU forms, one CPU), as
kernel/bpf/hashtab.c and kernel/bpf/arraymap.c answer ``bpf_map_lookup_elem``, ``bpf_map_update_elem`` and
``bpf_map_delete_elem``. A value lives in the model's memory, so the program reads and writes it through the
pointer a lookup returns; the maps keep their contents from packet to packet, as a loaded program's do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..libbpf import MapInfo
from .ctx import cannot

if TYPE_CHECKING:
    from .vm import Memory

__all__ = ["Map", "MODELLED"]

#: enum bpf_map_type (include/uapi/linux/bpf.h) modelled here: HASH, ARRAY, PERCPU_HASH, PERCPU_ARRAY, LRU_HASH,
#: LRU_PERCPU_HASH.
HASH, ARRAY, PERCPU_HASH, PERCPU_ARRAY, LRU_HASH, LRU_PERCPU_HASH = 1, 2, 5, 6, 9, 10
MODELLED = frozenset({HASH, ARRAY, PERCPU_HASH, PERCPU_ARRAY, LRU_HASH, LRU_PERCPU_HASH})
_ARRAYS = frozenset({ARRAY, PERCPU_ARRAY})
#: include/uapi/linux/bpf.h update flags and the errno values the map code returns.
BPF_ANY, BPF_NOEXIST, BPF_EXIST, BPF_F_LOCK = 0, 1, 2, 4
EINVAL, ENOENT, EEXIST, E2BIG = 22, 2, 17, 7


class Map:
    """One map of the object (``info`` as libbpf opened it); ``initial``: an internal map's value (its globals).

    ``read_only``: ``.rodata`` (frozen by libbpf: the program cannot write it)."""

    def __init__(self, info: MapInfo, memory: Memory, initial: bytes | None = None, read_only: bool = False) -> None:
        self.info, self._memory = info, memory
        self.modelled = info.map_type in MODELLED
        self._stride = (info.value_size + 7) & ~7
        self._values: dict[bytes, int] = {}
        if info.map_type in _ARRAYS and self.modelled:
            size = self._stride * info.max_entries
            if size > 1 << 26:
                self.modelled = False  # an array this big is not held in memory here
                return
            buf = bytearray(size)
            if initial is not None:
                buf[:len(initial)] = initial
            self._array = memory.add(buf, f"map {info.name}", writable=not read_only)

    def _check(self, what: str) -> None:
        if not self.modelled:
            raise cannot(f"{what} on map {self.info.name} (type {self.info.map_type}: csum models hash and array maps)")

    def _index(self, key: bytes) -> int:
        return int.from_bytes(key[:4], self._memory.order)

    def lookup(self, key: bytes) -> int:
        """``bpf_map_lookup_elem``: the value's address, 0 (NULL) when there is none."""
        self._check("bpf_map_lookup_elem")
        if self.info.map_type in _ARRAYS:
            i = self._index(key)
            return 0 if i >= self.info.max_entries else self._array + i * self._stride
        return self._values.get(key, 0)

    def update(self, key: bytes, value: bytes, flags: int) -> int:
        """``bpf_map_update_elem``: 0 or a negative errno."""
        self._check("bpf_map_update_elem")
        if flags & ~BPF_F_LOCK > BPF_EXIST:
            return -EINVAL
        if flags & BPF_F_LOCK:
            raise cannot(f"BPF_F_LOCK on map {self.info.name} (spin-locked values)")
        if self.info.map_type in _ARRAYS:
            i = self._index(key)
            if i >= self.info.max_entries:
                return -E2BIG
            if flags == BPF_NOEXIST:
                return -EEXIST
            self._memory.write(self._array + i * self._stride, value)
            return 0
        at = self._values.get(key)
        if at is not None and flags == BPF_NOEXIST:
            return -EEXIST
        if at is None and flags == BPF_EXIST:
            return -ENOENT
        if at is None:
            if len(self._values) >= self.info.max_entries:
                if self.info.map_type in (LRU_HASH, LRU_PERCPU_HASH):
                    raise cannot(f"an update of the full LRU map {self.info.name} (which entry it evicts)")
                return -E2BIG
            at = self._memory.add(bytearray(self._stride), f"map {self.info.name} value")
            self._values[key] = at
        self._memory.write(at, value)
        return 0

    def delete(self, key: bytes) -> int:
        """``bpf_map_delete_elem``: 0, -ENOENT, or -EINVAL on an array."""
        self._check("bpf_map_delete_elem")
        if self.info.map_type in _ARRAYS:
            return -EINVAL
        return 0 if self._values.pop(key, None) is not None else -ENOENT
