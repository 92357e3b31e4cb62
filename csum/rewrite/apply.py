"""One captured packet through a set of :class:`~csum.rewrite.rules.Rules`: the Python engine of ``csum rewrite``.

The packet is walked once (:func:`csum.layers.walk`, with its length on the wire so a packet cut by the snap length
is walked as far as it was captured); every IP header the rules' level selects gets its changes through the same
editor as :func:`csum.rewrite.rewrite` (:class:`csum.rewrite.packet.Editor`: the emulated ``bpf_l3_csum_replace`` /
``bpf_l4_csum_replace`` of net/core/filter.c, every change carried into each enclosing checksum), without the
recorded calls and skb shadow a capture has no use for. So every checksum is updated incrementally: one that was
right stays right, one that was wrong stays wrong by the same residual, a transmit-offload partial sum (status
``offload`` of csum.layers.evaluate) is updated as on a CHECKSUM_PARTIAL skb and stays the partial sum of the new
pseudo-header, a UDP 0 over IPv4 stays 0 and a UDP result of 0 is stored as 0xffff.

A checksum a change should reach but that is not in the packet (cut by the snap length, encrypted by ESP) is left
as it is and counted with its reason (:class:`Outcome`); so is a whole packet csum cannot walk (an unsupported
link type, a malformed outer header), which is copied unchanged. Changes are made on a copy: a packet is written
back whole or not at all. The address rules also map what a replay announces: IPv4 ARP's sender and target
protocol addresses (no checksum covers them) and IPv6 Neighbor Discovery's addresses, targets and those its options
hold (through the editor: the ICMPv6 checksum is updated like the others). csum/engine/_rewrite.c answers the
common stacks the same way (csum/rewrite/fast.py).
"""

from __future__ import annotations

from ..arch.profiles import profile
from ..errors import CsumError
from ..layers import IPLayer, Stack, evaluate, table, walk
from ..layers.reasons import Reason
from .outcome import Outcome
from .packet import Editor, FieldChange, edited
from .rules import Rules
from ..layers.table import ADDR_SIZES, LINKTYPE_ETHERNET

__all__ = ["apply", "link_ethertype"]

_GENERIC = profile("generic")


class _Counting(Editor):
    """The editor, noting which checksum fields its replaces reach."""

    touched: set[int]

    def _replace(self, helper: str, offset: int, frm: int, to: int, flags: int, carries: int | None = None) -> None:
        self.touched.add(offset)
        super()._replace(helper, offset, frm, to, flags, carries)


def _link_layer(data: bytearray, rules: Rules) -> None:
    """MAC and VLAN rules on an Ethernet frame's outer header (no checksum covers it)."""
    for at, source in ((table.ETH_DST, False), (table.ETH_SRC, True)):
        if (rules.mac_src if source else rules.mac_dst) and len(data) >= at + 6:
            data[at:at + 6] = rules.mac(bytes(data[at:at + 6]), source)
    at = table.ETH_TYPE
    while rules.vlan_retag and len(data) >= at + table.VLAN_TAG_LEN and \
            int.from_bytes(data[at:at + 2], "big") in table.VLAN_TPIDS:
        tci = int.from_bytes(data[at + 2:at + 4], "big")
        vid = rules.vlan(tci & table.VLAN_VID_MASK)
        data[at + 2:at + 4] = ((tci & ~table.VLAN_VID_MASK) | vid).to_bytes(2, "big")
        at += table.VLAN_TAG_LEN


def link_ethertype(data: bytes | bytearray, linktype: int) -> tuple[int, int] | None:
    """Where the innermost EtherType of a frame's link header is and where its payload starts: on Ethernet (past its
    VLAN tags) and the link types whose header ends with an EtherType (Linux cooked ...); None on the others."""
    link = table.LINKTYPES.get(linktype)
    if linktype == LINKTYPE_ETHERNET:
        at, payload = table.ETH_TYPE, table.ETHHDR.size
    elif link is not None and link.kind == "ethertype":
        at, payload = link.at, link.header
    else:
        return None
    while len(data) >= at + 2 and int.from_bytes(data[at:at + 2], "big") in table.VLAN_TPIDS:
        at, payload = payload + table.VLAN_TAG_LEN - 2, payload + table.VLAN_TAG_LEN  # the tag's TCI, its EtherType
    return at, payload


def _arp(data: bytearray, linktype: int, rules: Rules) -> None:
    """IPv4 ARP's sender and target protocol addresses (RFC 826) mapped as a source and a destination address, on
    the link types of :func:`link_ethertype`; as ``tcprewrite --pnat`` maps them. No checksum covers them."""
    found = link_ethertype(data, linktype)
    if found is None:
        return
    at, arp = found
    if len(data) < arp + table.ARP_HLEN or int.from_bytes(data[at:at + 2], "big") != table.ETH_ARP or \
            int.from_bytes(data[arp + table.ARP_PRO:arp + table.ARP_PRO + 2], "big") != table.ETH_IPV4 or \
            data[arp + table.ARP_PLN] != table.IPHDR.addr_size:
        return
    hln, pln = data[arp + table.ARP_HLN], table.IPHDR.addr_size
    sender = arp + table.ARP_HLEN + hln
    for where, source in ((sender, True), (sender + pln + hln, False)):
        if len(data) >= where + pln:
            data[where:where + pln] = rules.address(bytes(data[where:where + pln]), source)


def _ndp_addresses(data: bytearray, at: int, end: int) -> list[tuple[int, int, bool]]:
    """Where the Neighbor Discovery message at ``at`` (ending at ``end``, within the captured bytes) holds IPv6
    addresses: (offset, bytes, whether it names the message's source). Its fixed fields (table.NDP_ADDRESSES: a
    Neighbor Advertisement's target is the sender's own, the other targets and Redirect's destination name a
    destination), then its options (RFC 4861 4.6): what a Router
    Advertisement announces (table.NDP_OPT_ADDRESSES: prefixes, routes, DNS servers) counts as the sender's; the
    walk of the options stops at one of length 0 (RFC 4861 4.6: such a message is invalid) or one cut short. The
    packet a Redirected Header quotes went from the Redirect's destination to the Redirect's Destination Address:
    both its addresses name a destination, as the Redirect's own fields naming them do."""
    kind, size = data[at], table.IPV6HDR.addr_size
    found: list[tuple[int, int, bool]] = [
        (at + offset, size, kind == table.NDP_NEIGHBOR_ADVERT) for offset in table.NDP_ADDRESSES.get(kind, ())
        if at + offset + size <= end]
    option = at + table.NDP_OPTIONS_AT.get(kind, end - at)
    while option + 2 <= end:
        length = data[option + 1] * table.NDP_OPT_UNIT
        if not length or option + length > end:
            break
        if data[option] in table.NDP_OPT_ADDRESSES:
            first, step = table.NDP_OPT_ADDRESSES[data[option]]
            found += [(a, min(step, option + length - a), True) for a in range(option + first, option + length, step)]
        elif data[option] == table.NDP_OPT_REDIRECTED:
            quoted = option + table.NDP_OPT_REDIRECTED_DATA
            if quoted + table.IPV6HDR.size <= option + length and data[quoted] >> 4 == 6:
                found += [(quoted + table.IPV6HDR.saddr, size, False), (quoted + table.IPV6HDR.daddr, size, False)]
        option += length
    return found


def _ndp(editor: Editor, data: bytearray, layer: IPLayer, rules: Rules, back: bool) -> None:
    """Neighbor Discovery's addresses (:func:`_ndp_addresses`) mapped like the header's, through ``editor`` as
    4-byte fields of the ICMPv6 message (its checksum updated incrementally, and every enclosing one). A prefix of
    fewer than 16 bytes (a Route Information option's) is mapped as the address it starts. The transport checksum
    of a Redirected Header's quoted packet is left as it is (csum does not walk that quote). The layer holds its
    ICMPv6 header and checksum."""
    at = layer.l4
    assert at is not None
    for where, size, source in _ndp_addresses(data, at, min(layer.end, len(data))):
        old = bytes(data[where:where + size])
        new = rules.address(old.ljust(table.IPV6HDR.addr_size, b"\0"), source != back)[:size]
        for i in range(0, size, 4):
            if new[i:i + 4] != old[i:i + 4]:
                editor.field(FieldChange(where + i, new[i:i + 4]))


def _header(editor: Editor, data: bytearray, ip: IPLayer, rules: Rules, out: Outcome) -> None:
    """TTL / hop limit, DSCP / ECN / traffic class, flow label: whole 16-bit words, as :meth:`Editor.field` takes."""
    hop = rules.hop(data[ip.ttl])
    if hop is None:
        out.left_alone["ttl-expired"] += 1
    elif hop != data[ip.ttl]:
        word = ip.ttl - ((ip.ttl - ip.l3) & 1)
        new = bytearray(data[word:word + 2])
        new[ip.ttl - word] = hop
        editor.field(FieldChange(word, bytes(new)))
    if ip.version == 4:
        tos = data[ip.l3 + table.IPV4_TOS]
        new_tos = rules.traffic_class(tos, 4)
        if new_tos != tos:
            editor.field(FieldChange(ip.l3, bytes([data[ip.l3], new_tos])))
        return
    _, class_bits, label_bits = table.IPV6_FLOW_WORD_BITS
    word = int.from_bytes(data[ip.l3:ip.l3 + 4], "big")
    tclass, label = (word >> label_bits) & ((1 << class_bits) - 1), word & ((1 << label_bits) - 1)
    tclass = rules.traffic_class(tclass, 6)
    label = label if rules.flowlabel is None else rules.flowlabel
    now = (word >> (class_bits + label_bits) << (class_bits + label_bits)) | (tclass << label_bits) | label
    if now != word:
        editor.field(FieldChange(ip.l3, now.to_bytes(4, "big")))


def _travelled_back(stack: Stack, ip: IPLayer) -> bool:
    """Whether ``ip`` went the other way than the packet: it is inside an odd number of ICMP/ICMPv6 error quotes
    (each quotes a datagram sent towards the error's source). Netfilter's NAT rewrites a quote so
    (net/netfilter/nf_nat_proto.c ``nf_nat_icmp_reply_translation``: the inner packet gets the opposite manip):
    a source NAT changes the quoted destination, a destination NAT the quoted source."""
    quotes = {f.header + table.ICMP_QUOTE for f in stack.fields if f.entry in (table.ICMP_ENTRY, table.ICMPV6_ENTRY)}
    chain = [x for x in stack.ips if x.depth <= ip.depth and x.l3 <= ip.l3 < x.end]
    return sum(x.l3 in quotes for x in chain) % 2 == 1


def _layer(root: _Counting, data: bytearray, stack: Stack, ip: IPLayer, rules: Rules, out: Outcome) -> None:
    layer, l4, enclosing = edited(stack, ip, stack.link)
    back = rules.changes_addresses and _travelled_back(stack, ip)
    reach = len(data)
    if l4 is not None and (l4.at is None or l4.at + 2 > reach):  # the field is not here: it stays as it is
        layer.l4_csum = None
    editor = root.nested(layer, tuple(f for f in enclosing if f.at is not None and f.at + 2 <= reach))
    before = bytes(data)
    l4_needed = False
    if rules.changes_addresses:
        for which, source in (("saddr", True), ("daddr", False)):
            at = layer.saddr if source else layer.daddr
            old = bytes(data[at:at + ADDR_SIZES[layer.version]])
            new = rules.address(old, source != back)
            if new != old:
                in_pseudo = layer.saddr_in_pseudo if source else layer.daddr_in_pseudo
                l4_needed |= layer.pseudo and in_pseudo
                editor.address(which, new)
    if rules.changes_addresses and layer.proto == table.ICMPV6 and layer.version == 6 and layer.l4_csum is not None \
            and layer.fragment != "later" and layer.l4 is not None and layer.l4 < reach:
        _ndp(editor, data, layer, rules, back)
    if rules.map_port and layer.has_ports and layer.fragment != "later" and layer.l4 is not None \
            and layer.l4 + 4 <= reach:
        for i in (0, 2):
            at = layer.l4 + i
            port = int.from_bytes(data[at:at + 2], "big")
            new_port = rules.port(layer.proto, port)
            if new_port != port:
                l4_needed = True
                editor.port(at, new_port)
    _header(editor, data, layer, rules, out)
    # (a later fragment's L4 checksum is in the first fragment, which gets the same change)
    if l4_needed and layer.l4_csum is None and l4 is not None and layer.fragment != "later":
        reason = Reason.ENCRYPTED if l4.entry is table.ESP_ENTRY else (l4.na or Reason.NOT_CAPTURED)
        out.left_alone[reason.value] += 1
    if len(editor.enclosing) != len(enclosing) and data != before:
        out.left_alone[Reason.NOT_CAPTURED.value] += len(enclosing) - len(editor.enclosing)


def apply(packet: bytes | bytearray | memoryview, linktype: int, rules: Rules, wire_len: int | None = None,
          out: Outcome | None = None) -> bytes | None:
    """``packet`` (a capture's captured bytes on ``linktype``) rewritten by ``rules``: the new bytes, or None when
    nothing changed. ``wire_len``: its length on the wire. What happened is added to ``out``."""
    out = out if out is not None else Outcome()
    out.packets += 1
    data = bytearray(packet)
    if linktype == LINKTYPE_ETHERNET:
        _link_layer(data, rules)
    if rules.changes_addresses and rules.levels(0):
        _arp(data, linktype, rules)
    stack = walk(memoryview(data), linktype, wire_len=wire_len)
    if stack.unsupported is not None:
        out.left_alone["unsupported"] += 1
    elif stack.malformed is not None:  # a malformed outer header: its fields are not touched
        out.left_alone["malformed"] += 1
    elif stack.ips:
        before = bytes(data)
        root = _Counting(data, stack.ips[0], _GENERIC, record=False)
        root.touched = set()
        view = memoryview(data)
        root.partial = frozenset(f.at for f in stack.fields if f.entry.offload and f.at is not None
                                 and evaluate(view, f).reason is Reason.OFFLOAD)
        view.release()
        changes = Outcome()
        try:
            for ip in stack.ips:
                if rules.levels(ip.depth):
                    _layer(root, data, stack, ip, rules, changes)
        except CsumError as exc:  # a layout the editor refuses (a header at an odd distance from its checksum)
            data[:] = before
            out.left_alone[getattr(exc, "code", "unsupported")] += 1
        else:
            changes.kept = len(root.touched)
            out.update(Outcome(0, 0, changes.kept, 0, changes.left_alone))
    if data == packet:
        return None
    out.changed += 1
    return bytes(data)
