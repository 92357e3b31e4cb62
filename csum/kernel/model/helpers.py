"""The BPF helpers a modelled tc or XDP program calls, answered with csum's own models of them (one place for each
fact: :mod:`csum.bpf.helpers` and :class:`csum.skb.Skb` for the checksum helpers, the profile's
``bpf_csum_diff``), as net/core/filter.c and kernel/bpf/helpers.c behave in the release modelled:

* ``bpf_csum_diff``: the legacy helper (Linux <= 6.12: the architecture's unfolded ``csum_partial`` of a scratch
  buffer) or the homogenized one (>= 6.13: folded, read in place, so the buffers' alignment counts);
* ``bpf_l4_csum_replace`` takes BPF_F_IPV6 since 6.16 (-EINVAL before);
* ``bpf_l3_csum_replace``, ``bpf_l4_csum_replace``, ``bpf_skb_store_bytes``, ``bpf_csum_update``,
  ``bpf_csum_level`` on the skb in the state the run made (CHECKSUM_NONE, or CHECKSUM_COMPLETE as
  BPF_F_TEST_SKB_CHECKSUM_COMPLETE makes it); ``bpf_skb_load_bytes``, ``bpf_skb_pull_data``;
* ``bpf_xdp_adjust_head`` / ``bpf_xdp_adjust_tail`` within the bounds every architecture's test run allows
  (a move whose answer depends on the architecture's ``sizeof(struct xdp_frame)`` or page size is not modelled);
* maps (:mod:`csum.kernel.model.maps`), ``bpf_redirect``, ``bpf_ktime_get_ns`` (a fixed time),
  ``bpf_get_smp_processor_id`` (CPU 0), ``bpf_trace_printk`` (its length).

Every other helper is not modelled: the run stops with "cannot model: helper NAME (ID)".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...bpf.flags import BPF_F_IPV6
from ...errors import Code, CsumValueError
from ...skb import Skb
from ...types import Wsum
from .ctx import cannot

if TYPE_CHECKING:
    from ...arch.profiles import Profile
    from .maps import Map
    from .vm import Memory, Region, Vm

__all__ = ["HELPER_NAMES", "Helpers", "Packet"]

M32, M64 = 0xFFFFFFFF, (1 << 64) - 1
#: enum bpf_func_id (include/uapi/linux/bpf.h) -> name, for the helpers named in messages.
HELPER_NAMES = {
    1: "bpf_map_lookup_elem", 2: "bpf_map_update_elem", 3: "bpf_map_delete_elem", 4: "bpf_probe_read",
    5: "bpf_ktime_get_ns", 6: "bpf_trace_printk", 7: "bpf_get_prandom_u32", 8: "bpf_get_smp_processor_id",
    9: "bpf_skb_store_bytes", 10: "bpf_l3_csum_replace", 11: "bpf_l4_csum_replace", 12: "bpf_tail_call",
    13: "bpf_clone_redirect", 18: "bpf_skb_vlan_push", 19: "bpf_skb_vlan_pop", 20: "bpf_skb_get_tunnel_key",
    21: "bpf_skb_set_tunnel_key", 23: "bpf_redirect", 25: "bpf_perf_event_output", 26: "bpf_skb_load_bytes",
    28: "bpf_csum_diff", 31: "bpf_skb_change_proto", 32: "bpf_skb_change_type", 34: "bpf_get_hash_recalc",
    38: "bpf_skb_change_tail", 39: "bpf_skb_pull_data", 40: "bpf_csum_update", 43: "bpf_skb_change_head",
    44: "bpf_xdp_adjust_head", 50: "bpf_skb_adjust_room", 51: "bpf_redirect_map", 54: "bpf_xdp_adjust_meta",
    65: "bpf_xdp_adjust_tail", 69: "bpf_fib_lookup", 125: "bpf_ktime_get_boot_ns", 130: "bpf_ringbuf_output",
    135: "bpf_csum_level", 181: "bpf_loop", 189: "bpf_xdp_load_bytes", 190: "bpf_xdp_store_bytes",
}
#: The time ``bpf_ktime_get_ns`` and ``bpf_ktime_get_boot_ns`` give in the model: 1 s after boot, on every call.
KTIME_NS = 1_000_000_000
#: include/uapi/linux/pkt_cls.h and bpf.h: the actions bpf_redirect returns; BPF_F_INGRESS.
TC_ACT_SHOT, TC_ACT_REDIRECT, XDP_ABORTED, XDP_REDIRECT, BPF_F_INGRESS = 2, 7, 0, 4, 1
ETH_HLEN, EINVAL, EFAULT, ENOMEM = 14, 22, 14, 12
#: XDP buffer bounds every architecture's test run allows (net/bpf/test_run.c: XDP_PACKET_HEADROOM 256 before the
#: data, a frame of at least a 4 KiB page less ``skb_shared_info``): a head kept at least this far from the buffer's
#: start, and an end at most this far into it, are inside on every architecture.
XDP_HEADROOM, XDP_SAFE_HEAD, XDP_SAFE_END = 256, 64, 3584
_FORMAT = re.compile(rb"%([-+ #0]*)(\d*)(hh|h|ll|l)?([diuxXc%])")


class Packet:
    """The packet of one run: its region and, for tc, the :class:`csum.skb.Skb` whose ``data`` the region is; for
    XDP the indexes of ``data`` and ``data_end`` in the region's buffer."""

    def __init__(self, region: Region, address: int, skb: Skb | None, data: int, end: int) -> None:
        self.region, self.address, self.skb, self.head, self.tail = region, address, skb, data, end

    def _base(self) -> int:
        return self.address - self.region.start

    def data(self) -> int:
        return self._base() + self.region.start + self.head

    def data_end(self) -> int:
        return self._base() + self.region.start + (len(self.skb.data) if self.skb is not None else self.tail)

    def data_meta(self) -> int:
        return self.data()

    def bytes(self) -> bytes:
        if self.skb is not None:
            return bytes(self.skb.data)
        return bytes(self.region.buf[self.head:self.tail])

    def move(self, head: int, tail: int) -> None:
        self.head, self.tail = head, tail
        self.region.lo, self.region.hi = head, tail


class Helpers:
    """The helpers of one modelled program: ``kind`` "tc"/"xdp", the architecture's profile ``arch`` as of
    ``release`` ((major, minor)), the memory and the maps (address of each map's reference -> map)."""

    def __init__(self, kind: str, arch: Profile, release: tuple[int, int], memory: Memory,
                 maps: dict[int, Map]) -> None:
        self.kind, self.arch, self.release, self.memory, self.maps = kind, arch, release, memory, maps
        self.packet: Packet | None = None
        self._table: dict[int, Callable[..., int]] = {
            1: self.map_lookup_elem, 2: self.map_update_elem, 3: self.map_delete_elem, 5: self.ktime_get_ns,
            6: self.trace_printk, 8: self.get_smp_processor_id, 23: self.redirect, 28: self.csum_diff,
            125: self.ktime_get_ns}
        self._tc: dict[int, Callable[..., int]] = {
            9: self.skb_store_bytes, 10: self.l3_csum_replace, 11: self.l4_csum_replace,
            26: self.skb_load_bytes, 39: self.skb_pull_data, 40: self.csum_update, 135: self.csum_level}
        self._xdp: dict[int, Callable[..., int]] = {44: self.xdp_adjust_head, 65: self.xdp_adjust_tail}

    def __call__(self, helper: int) -> Callable[..., int]:
        found = self._table.get(helper) or (self._tc if self.kind == "tc" else self._xdp).get(helper)
        if found is None:
            name = HELPER_NAMES.get(helper, "")
            raise cannot(f"helper {name + ' ' if name else ''}({helper})")
        return found

    @property
    def skb(self) -> Skb:
        assert self.packet is not None and self.packet.skb is not None
        return self.packet.skb

    def _map(self, address: int) -> Map:
        found = self.maps.get(address)
        if found is None:
            raise cannot(f"a map helper on {address:#x}, which is no map")
        return found

    # maps and the rest

    def map_lookup_elem(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        m = self._map(r1)
        return m.lookup(self.memory.read(r2, m.info.key_size))

    def map_update_elem(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, *_: int) -> int:
        m = self._map(r1)
        return m.update(self.memory.read(r2, m.info.key_size), self.memory.read(r3, m.info.value_size), r4)

    def map_delete_elem(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        m = self._map(r1)
        return m.delete(self.memory.read(r2, m.info.key_size))

    def ktime_get_ns(self, vm: Vm, *_: int) -> int:
        return KTIME_NS

    def get_smp_processor_id(self, vm: Vm, *_: int) -> int:
        return 0

    def trace_printk(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, r5: int) -> int:
        """kernel/trace/bpf_trace.c ``bpf_trace_printk``: the formatted line's length (the line itself goes to the
        trace pipe, which the model has not)."""
        fmt = self.memory.read(r1, r2 & M32)
        if not fmt or fmt[-1] != 0:
            return -EINVAL
        fmt = fmt[:fmt.index(0)]
        args, out, at = [r3, r4, r5], 0, 0
        for m in _FORMAT.finditer(fmt):
            out += m.start() - at
            at = m.end()
            if m[4] == b"%":
                out += 1
                continue
            if not args:
                return -EINVAL
            value = args.pop(0)
            bits = 64 if m[3] in (b"l", b"ll") else 32
            value &= (1 << bits) - 1
            if m[4] in b"di":
                value -= (1 << bits) if value >> (bits - 1) else 0
            text = (f"%{m[1].decode()}{m[2].decode()}{'c' if m[4] == b'c' else m[4].decode().replace('i', 'd')}"
                    % (chr(value & 0xFF) if m[4] == b"c" else value))
            out += len(text)
        if b"%" in fmt[at:]:
            raise cannot("a bpf_trace_printk format csum does not read")
        return out + len(fmt) - at

    def redirect(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        """``bpf_redirect`` (tc) / ``bpf_xdp_redirect``: the action, as the test run reports it."""
        if self.kind == "tc":
            return TC_ACT_SHOT if r2 & ~BPF_F_INGRESS else TC_ACT_REDIRECT
        return XDP_ABORTED if r2 else XDP_REDIRECT

    def csum_diff(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, r5: int) -> int:
        """``bpf_csum_diff(from, from_size, to, to_size, seed)`` of the release: legacy before 6.13."""
        nfrom, nto, seed = r2 & M32, r4 & M32, Wsum(r5 & M32)
        if self.release < (6, 13):
            if (nfrom | nto) & 3 or nfrom + nto > 512:
                return -EINVAL
            frm, to = self.memory.read(r1, nfrom) if nfrom else b"", self.memory.read(r3, nto) if nto else b""
            return self.arch.bpf_csum_diff_legacy(frm, to, seed) & M64
        frm, to = self.memory.read(r1, nfrom) if nfrom else b"", self.memory.read(r3, nto) if nto else b""
        return self.arch.bpf_csum_diff(frm, to, seed, frm_align=r1 & 7, to_align=r3 & 7)

    # tc: the skb helpers, csum's Skb

    def skb_store_bytes(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, r5: int) -> int:
        return _skb(lambda: self.skb.bpf_skb_store_bytes(r2 & M32, self.memory.read(r3, r4 & M32), r5))

    def l3_csum_replace(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, r5: int) -> int:
        return _skb(lambda: self.skb.bpf_l3_csum_replace(r2 & M32, r3, r4, r5, misuse=False))

    def l4_csum_replace(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, r5: int) -> int:
        if r5 & BPF_F_IPV6 and self.release < (6, 16):
            return -EINVAL  # BPF_F_IPV6 is known since 6.16
        return _skb(lambda: self.skb.bpf_l4_csum_replace(r2 & M32, r3, r4, r5, misuse=False))

    def skb_load_bytes(self, vm: Vm, r1: int, r2: int, r3: int, r4: int, *_: int) -> int:
        """net/core/filter.c ``bpf_skb_load_bytes``: the bytes, or -EFAULT with the buffer zeroed."""
        offset, size, data = r2 & M32, r4 & M32, self.skb.data
        if offset > 0x7FFFFFFF or offset + size > len(data):
            self.memory.write(r3, bytes(size))
            return -EFAULT
        self.memory.write(r3, bytes(data[offset:offset + size]))
        return 0

    def skb_pull_data(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        """``bpf_skb_pull_data``: a test run's skb is linear, so only a length past its end fails (-ENOMEM)."""
        return -ENOMEM if r2 & M32 > len(self.skb.data) else 0

    def csum_update(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        return _skb(lambda: self.skb.bpf_csum_update(Wsum(r2 & M32))) & M64

    def csum_level(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        return _skb(lambda: self.skb.bpf_csum_level(r2)) & M64

    # XDP

    def xdp_adjust_head(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        """net/core/filter.c ``bpf_xdp_adjust_head``: move ``data`` by a signed ``offset``."""
        p = self.packet
        assert p is not None
        head = p.head + _s32(r2)
        if head > p.tail - ETH_HLEN or head < 0:
            return -EINVAL
        if head < XDP_SAFE_HEAD:
            raise cannot(f"bpf_xdp_adjust_head to {head} bytes from the buffer's start (allowed down to "
                         "sizeof(struct xdp_frame), which depends on the architecture)")
        p.move(head, p.tail)
        return 0

    def xdp_adjust_tail(self, vm: Vm, r1: int, r2: int, *_: int) -> int:
        """net/core/filter.c ``bpf_xdp_adjust_tail``: move ``data_end`` by a signed ``offset`` (grown bytes zeroed)."""
        p = self.packet
        assert p is not None
        tail = p.tail + _s32(r2)
        if tail < p.head + ETH_HLEN:
            return -EINVAL
        if tail > XDP_SAFE_END:
            raise cannot(f"bpf_xdp_adjust_tail to {tail} bytes into the buffer (the limit depends on the "
                         "architecture's page and skb_shared_info sizes)")
        if tail > p.tail:
            p.region.buf[p.tail:tail] = bytes(tail - p.tail)
        p.move(p.head, tail)
        return 0


def _s32(value: int) -> int:
    value &= M32
    return value - (1 << 32) if value >> 31 else value


def _skb(call: Callable[[], int]) -> int:
    """A :class:`csum.skb.Skb` helper's answer; a case it does not model is one the model does not."""
    try:
        return call() & M64
    except CsumValueError as exc:
        if exc.code == Code.NOT_MODELLED:
            raise cannot(str(exc)) from None
        raise
