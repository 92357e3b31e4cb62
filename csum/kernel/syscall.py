"""bpf(2) through ctypes: BPF_PROG_LOAD, BPF_PROG_TEST_RUN and array maps, from kernel/bpf/syscall.c.

``union bpf_attr`` (include/uapi/linux/bpf.h) is filled by byte offset; the
kernel zero-fills what a shorter attr leaves out. Test runs go through
net/bpf/test_run.c (``bpf_prog_test_run_skb``), which builds an skb from
``data_in`` and a ``struct __sk_buff`` from ``ctx_in``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from ..errors import BpfError, CsumError

#: bpf(2) syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h).
SYSCALL_NR = {"x86_64": 321, "aarch64": 280}

BPF_MAP_CREATE, BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM = 0, 1, 2
BPF_PROG_LOAD = 5
BPF_PROG_TEST_RUN = 10
BPF_PROG_TYPE_SCHED_CLS = 3
BPF_MAP_TYPE_ARRAY = 2
#: BPF_PROG_TEST_RUN flag: the test skb is CHECKSUM_COMPLETE (skb->csum summed from the network header);
#: after the run net/bpf/test_run.c sums the packet again and fails with EBADMSG when the folded values differ.
BPF_F_TEST_SKB_CHECKSUM_COMPLETE = 1 << 2

#: ``sizeof(struct __sk_buff)`` and the offsets csum.kernel uses in it.
SKB_CTX_SIZE = 192
SKB_CB = 48  # __u32 cb[5]
SKB_DATA = 76
SKB_DATA_END = 80
#: ``struct __sk_buff`` fields a tc test run takes from the context (net/bpf/test_run.c convert___skb_to_skb):
#: name -> offset of its __u32 (include/uapi/linux/bpf.h). ``protocol`` is not among them: the kernel sets it from
#: the frame's EtherType (eth_type_trans).
SKB_CTX_FIELDS = {"mark": 8, "priority": 32, "ingress_ifindex": 36, "ifindex": 40}
#: Offsets in ``union bpf_attr``'s ``test`` struct: ``retval`` (then ``data_size_in`` at 8, ``data_size_out`` at 12).
TEST_RETVAL = 4

_LOG_SIZE = 1 << 20
_LICENSE = ctypes.create_string_buffer(b"GPL")


class Bpf:
    """The bpf(2) system call of this process, for one syscall number."""

    def __init__(self, nr: int) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._syscall.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_ulong]
        self._nr = nr
        self._close = libc.close

    def call(self, cmd: int, attr: ctypes.Array) -> int:
        """``bpf(cmd, &attr, sizeof attr)``; returns the result or raises OSError."""
        ret = self._syscall(self._nr, cmd, ctypes.addressof(attr), ctypes.sizeof(attr))
        if ret < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return ret

    def prog_load(self, insns: bytes, name: str) -> int:
        """Load a BPF_PROG_TYPE_SCHED_CLS program; on rejection retry with a log and raise :class:`BpfError`."""
        code = ctypes.create_string_buffer(insns, len(insns))
        attr = ctypes.create_string_buffer(128)
        struct.pack_into(
            "<IIQQ", attr, 0, BPF_PROG_TYPE_SCHED_CLS, len(insns) // 8,
            ctypes.addressof(code), ctypes.addressof(_LICENSE),
        )
        struct.pack_into("16s", attr, 48, name.encode()[:15])
        try:
            return self.call(BPF_PROG_LOAD, attr)
        except OSError as first:
            if first.errno == errno.EPERM:
                raise BpfError(f"BPF_PROG_LOAD of {name} failed", errno=first.errno) from None
            log = ctypes.create_string_buffer(_LOG_SIZE)
            struct.pack_into("<IIQ", attr, 24, 1, _LOG_SIZE, ctypes.addressof(log))
            try:
                return self.call(BPF_PROG_LOAD, attr)
            except OSError as again:
                raise BpfError(f"BPF_PROG_LOAD of {name} rejected", errno=again.errno or 0,  # call() sets errno
                               log=log.value.decode(errors="replace")) from first

    def close_fd(self, fd: int) -> None:
        """close(2) a program or map fd."""
        self._close(fd)

    def array_map(self, value_size: int) -> int:
        """BPF_MAP_CREATE of a one-entry BPF_MAP_TYPE_ARRAY (u32 key 0) with ``value_size``-byte values."""
        attr = ctypes.create_string_buffer(72)
        struct.pack_into("<IIII", attr, 0, BPF_MAP_TYPE_ARRAY, 4, value_size, 1)
        try:
            return self.call(BPF_MAP_CREATE, attr)
        except OSError as exc:
            raise BpfError("BPF_MAP_CREATE of an array map failed", errno=exc.errno or 0) from None

    def map_write(self, fd: int, value: ctypes.Array) -> None:
        """BPF_MAP_UPDATE_ELEM of key 0 with the whole ``value`` buffer."""
        self._map_elem(BPF_MAP_UPDATE_ELEM, fd, value)

    def map_read(self, fd: int, value: ctypes.Array) -> None:
        """BPF_MAP_LOOKUP_ELEM of key 0 into ``value``."""
        self._map_elem(BPF_MAP_LOOKUP_ELEM, fd, value)

    def _map_elem(self, cmd: int, fd: int, value: ctypes.Array) -> None:
        key = ctypes.c_uint32(0)
        attr = ctypes.create_string_buffer(32)
        struct.pack_into("<IIQQQ", attr, 0, fd, 0, ctypes.addressof(key), ctypes.addressof(value), 0)
        try:
            self.call(cmd, attr)
        except OSError as exc:
            raise BpfError("a BPF map access failed", errno=exc.errno or 0) from None


def test_run(bpf: Bpf, prog_fd: int, data: bytes, *, ctx: bytes | None = None, flags: int = 0,
             headroom: int = 512) -> tuple[int, bytes]:
    """One BPF_PROG_TEST_RUN of ``prog_fd`` on ``data`` (optionally a context); returns (retval, output packet).

    The output is as long as the kernel says (``test.data_size_out``, written by net/bpf/test_run.c
    ``bpf_test_finish``): a program that grows or shrinks the packet comes back at its new length. The
    buffer first has ``headroom`` bytes beyond the input; when the kernel reports ENOSPC (the output did not
    fit) it has written the whole size, and the run is repeated with a buffer that holds it. Raises
    :class:`BpfError` with the kernel's errno (EBADMSG: stale skb->csum under
    :data:`BPF_F_TEST_SKB_CHECKSUM_COMPLETE`).
    """
    capacity = len(data) + headroom
    retval, size_out, out = _test_run_once(bpf, prog_fd, data, ctx, flags, capacity)
    if size_out > capacity:
        capacity = size_out
        retval, size_out, out = _test_run_once(bpf, prog_fd, data, ctx, flags, capacity)
        if size_out > capacity:
            raise BpfError(f"BPF_PROG_TEST_RUN of a {len(data)}-byte packet: the output grew past the "
                           f"{capacity} bytes the kernel asked for", errno=errno.ENOSPC)
    return retval, out[:size_out]


def _test_run_once(bpf: Bpf, prog_fd: int, data: bytes, ctx: bytes | None, flags: int,
                   capacity: int) -> tuple[int, int, bytes]:
    data_in = ctypes.create_string_buffer(data, len(data))
    out = ctypes.create_string_buffer(capacity)
    ctx_in = ctypes.create_string_buffer(ctx, len(ctx)) if ctx else None
    ctx_out = ctypes.create_string_buffer(len(ctx)) if ctx else None
    attr = ctypes.create_string_buffer(80)
    struct.pack_into(
        "<IIIIQQIIIIQQI", attr, 0, prog_fd, 0, len(data), capacity, ctypes.addressof(data_in), ctypes.addressof(out),
        1, 0, len(ctx) if ctx else 0, len(ctx) if ctx else 0, ctypes.addressof(ctx_in) if ctx_in else 0,
        ctypes.addressof(ctx_out) if ctx_out else 0, flags)
    try:
        bpf.call(BPF_PROG_TEST_RUN, attr)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise BpfError(f"BPF_PROG_TEST_RUN of a {len(data)}-byte packet failed", errno=exc.errno or 0) from None
    retval, size_out = struct.unpack_from("<I4xI", attr, TEST_RETVAL)
    return retval, size_out, out.raw


class SkbRun:
    """Reusable BPF_PROG_TEST_RUN buffers: packet in/out and a ``struct __sk_buff`` in/out.

    ``cb[0..4]`` of the context carries arguments in and results out, since
    net/bpf/test_run.c copies ``cb`` both ways (convert___skb_to_skb and back).
    """

    def __init__(self, bpf: Bpf, capacity: int) -> None:
        self._bpf = bpf
        buffers = [ctypes.create_string_buffer(size) for size in (capacity, capacity, SKB_CTX_SIZE, SKB_CTX_SIZE)]
        self._ptrs = tuple(ctypes.addressof(b) for b in buffers)
        #: Byte views of the packet buffers (slicing a memoryview is much faster than a ctypes array).
        self.data_in, self.data_out, self.ctx_in, self.ctx_out = (memoryview(b).cast("B") for b in buffers)
        self._attr = ctypes.create_string_buffer(80)

    def run(self, prog_fd: int, size_in: int, cb: tuple[int, ...], *, size_out: int = 0, flags: int = 0) -> int:
        """Run ``prog_fd`` once on ``data_in[:size_in]`` with ``cb``; returns the program's u32 retval.

        ``size_out`` bytes of the resulting packet land in ``data_out`` (0: not copied). ``flags``:
        BPF_PROG_TEST_RUN flags (:data:`BPF_F_TEST_SKB_CHECKSUM_COMPLETE`). A failed run raises
        :class:`BpfError` with the kernel's errno (EBADMSG: a stale skb->csum).
        """
        struct.pack_into("<5I", self.ctx_in, SKB_CB, *cb, *(0,) * (5 - len(cb)))
        data_in, data_out, ctx_in, ctx_out = self._ptrs
        struct.pack_into(
            "<IIIIQQIIIIQQ", self._attr, 0, prog_fd, 0, size_in, size_out, data_in,
            data_out if size_out else 0, 1, 0, SKB_CTX_SIZE, SKB_CTX_SIZE, ctx_in, ctx_out,
        )
        struct.pack_into("<I", self._attr, 64, flags)
        try:
            self._bpf.call(BPF_PROG_TEST_RUN, self._attr)
        except OSError as exc:
            raise BpfError(f"BPF_PROG_TEST_RUN of a {size_in}-byte packet failed", errno=exc.errno or 0) from None
        return struct.unpack_from("<I", self._attr, 4)[0]

    def cb_out(self) -> tuple[int, ...]:
        """``cb[0..4]`` of the context after the last run."""
        return struct.unpack_from("<5I", self.ctx_out, SKB_CB)
