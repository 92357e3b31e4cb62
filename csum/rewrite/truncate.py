"""``csum rewrite --mtu N --truncate``: a frame whose layer 3 is longer than N bytes cut to N, as ``tcprewrite
--mtu N --mtu-trunc`` cuts it (tcpreplay's src/tcpedit/edit_packet.c ``untrunc_packet``), with its lengths and
checksums following.

A frame longer on the wire than its link header and N bytes is cut to that length (its captured bytes too, where
it had more). Its outer IP header then says what is left: the IPv4 Total Length or the IPv6 Payload Length (a
datagram that already ended within the N bytes keeps its lengths: only bytes after it, an Ethernet trailer, go),
and a UDP datagram's Length. Every checksum is updated incrementally, as the address rules update them
(:class:`csum.rewrite.packet.Editor`): the IPv4 header checksum and the pseudo-header's length through the editor,
the bytes cut off taken out of the transport checksum as bpf_l4_csum_replace takes out a changed word. So a right
checksum stays right, a wrong one keeps its residual, a transmit-offload partial sum becomes the partial sum of
the new pseudo-header, a UDP 0 over IPv4 stays 0.

Left as they were, and counted: the transport checksum of a fragment (``fragment``: it covers the whole
datagram, which now misses the bytes cut off) and of a frame captured short of the cut (``not-captured``: the bytes
to take out are not there), and the packets inside a tunnel, whose lengths still count the bytes cut off
(``not-captured``: the output holds them only in part). A frame csum cannot walk but whose link header it knows
(ARP, other EtherTypes, a malformed IP header) is cut without more, as tcprewrite cuts it; one on a link type csum
does not walk is left whole. (:func:`csum.rewrite.apply.apply`, which every packet goes through first, counts those
as ``malformed`` and ``unsupported``.)
"""

from __future__ import annotations

from .. import engine
from ..arch.profiles import profile
from ..layers import IPLayer, Stack, evaluate, table, walk
from ..layers.reasons import Reason
from ..capture import pcap
from .apply import apply, link_ethertype
from .outcome import Outcome
from .rules import Rules
from .packet import Editor, FieldChange, edited

__all__ = ["truncate", "truncate_chunk"]

_GENERIC = profile("generic")


def _word_sum(data: bytes | bytearray, odd: bool) -> int:
    """The 16-bit ones' complement sum of ``data`` as it lies in a checksum's words (:func:`csum.engine.ones_sum`
    of big-endian words): starting at an odd distance from the covered bytes' start when ``odd``."""
    return engine.ones_sum((b"\0" if odd else b"") + bytes(data), 16, "big")


def truncate(data: bytearray, linktype: int, mtu: int, wire_len: int, out: Outcome) -> int:
    """Cut ``data`` (a frame's captured bytes on ``linktype``, ``wire_len`` bytes on the wire) to ``mtu`` bytes of
    layer 3 and update its lengths and checksums (see the module docstring), in place; the new length on the wire.
    What was left alone is added to ``out``."""
    stack = walk(memoryview(data), linktype, wire_len=wire_len)
    ip = stack.ips[0] if stack.ips and stack.malformed is None and stack.unsupported is None else None
    link = link_ethertype(data, linktype)
    l3 = ip.l3 if ip is not None else None if link is None else link[1]
    if l3 is None:
        return wire_len
    cut = l3 + mtu
    if wire_len <= cut:
        return wire_len
    if ip is not None and ip.end > cut:
        _shorten(data, stack, ip, cut, out)
        # a tunnel's packets: their lengths and checksums still count the bytes cut off
        out.left_alone[Reason.NOT_CAPTURED.value] += sum(x.depth > 0 and not x.copy and x.end > cut for x in stack.ips)
    del data[cut:]
    return cut


def _shorten(data: bytearray, stack: Stack, ip: IPLayer, cut: int, out: Outcome) -> None:
    """The outer IP datagram ``ip`` ending at ``cut``: its lengths and checksums (the bytes are cut by the caller)."""
    layer, l4, _ = edited(stack, ip, stack.link)
    view = memoryview(data)
    partial = frozenset(f.at for f in stack.fields if f.entry.offload and f.at is not None
                        and evaluate(view, f).reason is Reason.OFFLOAD)
    view.release()
    reach = len(data)
    if l4 is not None and (l4.at is None or l4.at + 2 > reach):
        layer.l4_csum = None
    if layer.fragment != "none" and layer.l4_csum is not None:
        out.left_alone["fragment"] += 1
        layer.l4_csum = None
    removed = None
    if layer.l4_csum is not None and l4 is not None:
        spans = [(max(s, cut), e) for s, e in l4.covers if e > cut]
        if any(e > reach for _, e in spans):
            out.left_alone[Reason.NOT_CAPTURED.value] += 1
            layer.l4_csum = None
        else:
            start = l4.covers[0][0]
            removed = [_word_sum(data[s:e], bool((s - start) & 1)) for s, e in spans]
    editor = Editor(data, layer, _GENERIC, record=False)
    editor.partial = partial
    if ip.version == 4:
        new_len = cut - ip.l3
        editor.field(FieldChange(ip.l3 + table.IPHDR.tot_len, new_len.to_bytes(2, "big"), pseudo_header=True))
    else:
        new_len = cut - ip.l3 - table.IPV6HDR.size
        editor.field(FieldChange(ip.l3 + table.IPV6HDR.payload_len, new_len.to_bytes(2, "big"), pseudo_header=True))
    if layer.l4_csum is not None and l4 is not None and layer.l4 is not None:
        if l4.entry.cover is table.COVER.LENGTH_FIELD and layer.l4 + l4.entry.length_at + 2 <= cut:  # UDP's Length
            at = layer.l4 + l4.entry.length_at
            editor.field(FieldChange(at, (cut - layer.l4).to_bytes(2, "big")))
        for word in removed or ():
            editor.l4_word(word, 0)


def truncate_chunk(chunk: pcap.Capture, rules: Rules) -> tuple[pcap.Capture, Outcome]:
    """``chunk`` with every packet rewritten by ``rules`` and cut to ``rules.truncate`` bytes of layer 3, its
    records resized (:func:`csum.capture.pcap.resized`), and what happened. Every packet goes through the Python
    engine (:func:`csum.rewrite.apply.apply`): csum/engine/_rewrite.c rewrites packets in place, at their length."""
    assert rules.truncate is not None
    out = Outcome()
    packets: list[bytes | None] = []
    wires: list[int] = []
    for i, (_, cap, orig, link, _) in enumerate(chunk.records()):
        new = apply(chunk.packet(i), link, rules, orig, out)
        data = bytearray(chunk.packet(i) if new is None else new)
        wire = truncate(data, link, rules.truncate, orig, out)
        if wire != orig or len(data) != cap:
            out.truncated += 1
            out.changed += new is None
            packets.append(bytes(data))
        else:
            packets.append(new)
        wires.append(wire)
    return pcap.resized(chunk, packets, wires), out
