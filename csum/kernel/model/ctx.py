"""The context a tc or XDP program reads, as BPF_PROG_TEST_RUN builds it: ``struct __sk_buff`` and
``struct xdp_md`` (include/uapi/linux/bpf.h), their fields' values in a test run (net/bpf/test_run.c
``bpf_prog_test_run_skb`` / ``bpf_prog_test_run_xdp``, ``convert___skb_to_skb``) and which of them a program may
write (net/core/filter.c ``tc_cls_act_is_valid_access``, ``xdp_is_valid_access``).

A load of ``data``, ``data_end`` or ``data_meta`` gives the whole pointer, whatever its width, as the verifier's
context rewrite (net/core/filter.c ``bpf_convert_ctx_access``) makes a 32-bit load of them a 64-bit one. A field
whose test-run value csum does not know (``pkt_type``, ``napi_id``, a socket's fields ...) is not modelled.
"""

from __future__ import annotations

from ...errors import Code, CsumValueError
from .elf import Order

__all__ = ["Ctx", "SKB_FIELDS", "XDP_FIELDS", "ethertype"]

#: struct __sk_buff: field -> (offset, size) for the fields modelled here.
SKB_FIELDS = {"len": (0, 4), "mark": (8, 4), "queue_mapping": (12, 4), "protocol": (16, 4), "vlan_present": (20, 4),
              "vlan_tci": (24, 4), "vlan_proto": (28, 4), "priority": (32, 4), "ingress_ifindex": (36, 4),
              "ifindex": (40, 4), "tc_index": (44, 4), "cb": (48, 20), "hash": (68, 4), "tc_classid": (72, 4),
              "data": (76, 4), "data_end": (80, 4), "data_meta": (140, 4), "tstamp": (152, 8)}
#: The fields a tc program may write (tc_cls_act_is_valid_access).
SKB_WRITABLE = frozenset({"mark", "queue_mapping", "priority", "tc_index", "cb", "tc_classid", "tstamp"})
#: struct xdp_md: field -> (offset, size).
XDP_FIELDS = {"data": (0, 4), "data_end": (4, 4), "data_meta": (8, 4), "ingress_ifindex": (12, 4),
              "rx_queue_index": (16, 4), "egress_ifindex": (20, 4)}
_POINTERS = ("data", "data_end", "data_meta")
#: include/uapi/linux/if_ether.h: the smallest EtherType; 802.3 frames below it (net/ethernet/eth.c).
_ETH_P_802_3_MIN, _ETH_P_802_3, _ETH_P_802_2 = 0x0600, 0x0001, 0x0004
#: The loopback device's ifindex, the device of a test run given none (net/bpf/test_run.c).
LOOPBACK_IFINDEX = 1


def cannot(what: str) -> CsumValueError:
    """The error of something the model does not model: "cannot model: WHAT"."""
    return CsumValueError(f"cannot model: {what}", code=Code.NOT_MODELLED)


def ethertype(frame: bytes) -> int:
    """net/ethernet/eth.c ``eth_type_trans``: ``skb->protocol`` (host-order value) of an Ethernet frame."""
    proto = int.from_bytes(frame[12:14], "big")
    if proto >= _ETH_P_802_3_MIN:
        return proto
    return _ETH_P_802_3 if frame[14:16] == b"\xff\xff" else _ETH_P_802_2


class Ctx:
    """One run's context: ``kind`` "tc"/"xdp", its fields' values (``values``: name -> int), the packet pointers
    (:meth:`pointers` answers them, since helpers move them) and the byte order of the program's CPU."""

    def __init__(self, kind: str, values: dict[str, int], order: Order, pointers: object) -> None:
        self.kind, self.order, self._pointers = kind, order, pointers
        self.fields = SKB_FIELDS if kind == "tc" else XDP_FIELDS
        self.cb = bytearray(20)
        self.values = values

    def _field(self, offset: int, size: int) -> tuple[str, int]:
        for name, (at, width) in self.fields.items():
            if at <= offset and offset + size <= at + width:
                return name, offset - at
        struct = "__sk_buff" if self.kind == "tc" else "xdp_md"
        raise cannot(f"a {size}-byte access to struct {struct} at offset {offset} (a field whose test-run value csum "
                     "does not know)")

    def load(self, offset: int, size: int) -> int:
        """The value a ``size``-byte load at ``offset`` gives."""
        name, at = self._field(offset, size)
        if name in _POINTERS:
            return getattr(self._pointers, name)()
        if name == "cb":
            return int.from_bytes(self.cb[at:at + size], self.order)
        width = self.fields[name][1]
        value = self.values.get(name, 0).to_bytes(width, self.order)
        return int.from_bytes(value[at:at + size], self.order)

    def store(self, offset: int, size: int, value: int) -> None:
        """A ``size``-byte store of ``value`` at ``offset``."""
        name, at = self._field(offset, size)
        if self.kind != "tc" or name not in SKB_WRITABLE:
            raise cannot(f"a write to the context's {name} (the verifier rejects it)")
        data = value.to_bytes(size, self.order)
        if name == "cb":
            self.cb[at:at + size] = data
            return
        width = self.fields[name][1]
        whole = bytearray(self.values.get(name, 0).to_bytes(width, self.order))
        whole[at:at + size] = data
        self.values[name] = int.from_bytes(whole, self.order)
