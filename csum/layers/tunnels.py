"""The walker's mobile, wireless and overlay encapsulations, and the packets other protocols carry as data.

Handlers of :class:`csum.layers.walk._Walker` (:data:`HANDLERS`): each ``h_<name>`` is the layer ``<name>`` of
:data:`csum.layers.table.UDP_TUNNELS`, :data:`~csum.layers.table.UDP_EMBEDDED` and
:data:`~csum.layers.table.TCP_EMBEDDED` (every fact from :mod:`csum.layers.table`, with its RFC or vendor
document). A length field that bounds a payload bounds the walk below it (GTP's, L2TP's); a payload that runs past
it is malformed.

Embedded packets (an sFlow sample's packet header, an OpenFlow packet-in's frame) are copies, not traffic: each is
walked by a walker of its own over its bytes (the packet's length on the wire as the record gives it, so a
sampled header cut short is reported ``not-captured``), at one depth more, and its fields marked ``embedded``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import table as T

if TYPE_CHECKING:
    from .walk import _Walker


def _u32(w: _Walker, at: int) -> int:
    return int.from_bytes(w.b[at : at + 4], "big")


def h_gre_udp(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 8086 GRE-in-UDP: the GRE header right after UDP's; GRE stands at UDP's depth, its payload one deeper."""
    w.gre(at, end, depth - 1, path)


def h_gtp(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """The GTP-U port: GTPv1-U (3GPP TS 29.281 5) or GTPv0 (GSM 09.60 6)."""
    _gtp(w, at, end, depth, path, True)


def h_gtp_prime(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """The GTPv0 / GTP' port (3GPP TS 32.295): a GTPv0 header (Wireshark's packet-gtp.c reads only that there)."""
    _gtp(w, at, end, depth, path, False)


def _gtp(w: _Walker, at: int, end: int, depth: int, path: str, v1: bool) -> None:
    """A T-PDU's IPv4 or IPv6 packet, bounded by GTP's Length; other messages carry no packet."""
    h, b = T.GTP_HDR, w.b
    path += "/gtp"
    w.need(at + 1, "GTP header", end)
    flags = b[at]
    version = flags >> T.GTP_VERSION_SHIFT
    if version == 0:
        size = h.v0_size
    elif version == 1 and v1 and flags & T.GTP_PT:
        size = h.size
    else:
        w.stack.notes.append(f"{path}: GTP version {version} (flags {flags:#04x}) is not walked")
        return
    w.need(at + size, "GTP header", end)
    if b[at + h.type] != T.GTP_TPDU:
        return
    length = w.u16(at + h.length)
    stop = w.bounded(f"GTP Length {length}", at + size + length, end)
    pos = at + size
    if version == 1 and flags & T.GTP_OPTIONAL_FLAGS:
        pos += h.optional
        w.need(pos, "GTP optional fields", stop)
        following = b[pos - 1] if flags & T.GTP_E else 0
        while following:  # extension headers, each ending with the next one's type
            w.need(pos + 1, "GTP extension header", stop)
            units = b[pos] * h.ext_unit
            if not units:
                w.not_ip(f"GTP extension header of length 0 at offset {pos}")
            w.need(pos + units, "GTP extension header", stop)
            pos, following = pos + units, b[pos + units - 1]
    w.dispatch("ip", pos, stop, depth, path)


def h_capwap(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 5415 4.3 CAPWAP data: its header (HLEN words), then an IEEE 802.11 frame (T set, WBID 1: RFC 5416) or
    an IEEE 802.3 one (T clear). The 802.11 Frame Control field is read byte-swapped, as Cisco's access points
    send it (Wireshark's capwap.swap_frame_control, on by default), unless only the unswapped one is a data
    frame's. DTLS-protected and fragmented frames are not walked."""
    path += "/capwap"
    w.need(at + 4, "CAPWAP header", end)
    word = _u32(w, at)
    if word >> 24 != T.CAPWAP_PREAMBLE or word & T.CAPWAP_F:
        w.stack.notes.append(f"{path}: a DTLS-protected or fragmented CAPWAP frame is not walked")
        return
    size = ((word >> T.CAPWAP_HLEN_SHIFT) & T.CAPWAP_FIELD_MASK) * T.CAPWAP_UNIT
    if size < T.CAPWAP_MIN_HLEN:
        w.not_ip(f"CAPWAP HLEN of {size} bytes at offset {at}")
    w.need(at + size, "CAPWAP header", end)
    frame = at + size
    if not word & T.CAPWAP_T:
        w.h_eth(frame, end, depth, path)
        return
    if (word >> T.CAPWAP_WBID_SHIFT) & T.CAPWAP_FIELD_MASK != T.CAPWAP_WBID_80211:
        w.stack.notes.append(f"{path}: a CAPWAP binding other than IEEE 802.11 is not walked")
        return
    w.need(frame + 2, "802.11 header", end)
    first, second = w.b[frame], w.b[frame + 1]
    fc, flags = (second, first) if w.is_wlan_data(second) or not w.is_wlan_data(first) else (first, second)
    w.need(frame + 24, "802.11 header", end)
    w.wlan(frame, end, depth, f"{path}/wlan", fc, flags)


def h_ayiya(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """draft-massar-v6ops-ayiya 5: 8 bytes, the identity and the signature; a forwarded packet after them."""
    b = w.b
    w.need(at + T.AYIYA_HLEN, "AYIYA header", end)
    if b[at + 2] & 0x0F != T.AYIYA_FORWARD:
        return
    name = {T.IPIP: "ipv4", T.IPV6_IN: "ipv6"}.get(b[at + T.AYIYA_NEXT_HEADER])
    if name is None:
        w.not_ip(f"AYIYA next header {b[at + T.AYIYA_NEXT_HEADER]} at offset {at + T.AYIYA_NEXT_HEADER}")
    size = T.AYIYA_HLEN + (1 << (b[at] >> 4)) + (b[at + 1] >> 4) * 4
    w.need(at + size, "AYIYA identity and signature", end)
    w.dispatch(name, at + size, end, depth, f"{path}/ayiya")


def h_teredo(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 4380 5.1.1: an IPv6 packet, maybe after an Authentication and an Origin indication."""
    pos = at
    w.need(pos + 2, "Teredo header", end)
    if w.u16(pos) == T.TEREDO_AUTH:
        w.need(pos + 4, "Teredo authentication", end)
        pos += T.TEREDO_AUTH_FIXED + w.b[pos + 2] + w.b[pos + 3]
        w.need(pos + 2, "Teredo authentication", end)
    if w.u16(pos) == T.TEREDO_ORIGIN:
        pos += T.TEREDO_ORIGIN_SIZE
    w.dispatch("ipv6", pos, end, depth, f"{path}/teredo")


def h_lisp(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 9300 5.3: the LISP data header, then an IPv4 or IPv6 packet."""
    w.need(at + T.LISP_HLEN, "LISP header", end)
    w.dispatch("ip", at + T.LISP_HLEN, end, depth, f"{path}/lisp")


def h_l2tp(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 2661 3.1 L2TPv2 data message: flags and version, the Length (when L is set: it bounds the message),
    the tunnel and session ids, Ns and Nr (S), the offset padding (O); then a PPP frame. Control messages and
    other versions carry no packet."""
    path += "/l2tp"
    w.need(at + 2, "L2TP header", end)
    flags = w.u16(at)
    if flags & T.L2TP_VERSION_MASK != T.L2TP_V2 or flags & T.L2TP_T:
        return
    pos = at + 2
    if flags & T.L2TP_L:
        w.need(pos + 2, "L2TP Length", end)
        length = w.u16(pos)
        end = w.bounded(f"L2TP Length {length}", at + length, end)
        pos += 2
    pos += 4 + (4 if flags & T.L2TP_S else 0)
    if flags & T.L2TP_O:
        w.need(pos + 2, "L2TP Offset Size", end)
        pos += 2 + w.u16(pos)
    w.need(pos, "L2TP header", end)
    w.h_ppp(pos, end, depth, path)


# --- embedded packets ----------------------------------------------------------------------


def embed(w: _Walker, kind: str, at: int, stop: int, wire: int, depth: int, path: str) -> None:
    """Walk the packet carried as data from ``at`` to ``stop``, ``wire`` bytes long when it was sent (at least
    its bytes here), in a walker of its own whose fields are ``embedded``; its problems are notes here."""
    if depth > T.MAX_DEPTH:
        w.stack.notes.append(f"{path}: more than {T.MAX_DEPTH} encapsulations, not walked further")
        return
    sub = type(w)(w.b[: min(stop, w.n)], max(at + wire, stop), False, True)
    sub.walk_embedded(kind, at, depth, path)
    w.stack.fields += sub.stack.fields
    w.stack.ips += sub.stack.ips
    w.stack.notes += sub.stack.notes


def h_sflow(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """sFlow version 5 (sflow.org sflow_version_5.txt): every raw packet header record of every flow sample is an
    embedded packet, its frame length (less the bytes stripped) its length on the wire."""
    path += "/sflow"
    stop = min(end, w.n)
    if at + T.SFLOW_HLEN > stop or _u32(w, at) != T.SFLOW_VERSION:
        return
    address = T.SFLOW_ADDRESS.get(_u32(w, at + 4))
    if address is None:
        return
    pos = at + T.SFLOW_HLEN + address + T.SFLOW_AFTER_ADDRESS
    for sample, size in _sflow_items(w, pos, _u32(w, pos - 4) if pos <= stop else 0, stop):
        fixed = T.SFLOW_FLOW_SAMPLES.get(_u32(w, sample))
        if fixed is not None and fixed <= size:
            body = sample + T.SFLOW_ITEM
            for record, length in _sflow_items(w, body + fixed, _u32(w, body + fixed - 4), body + size):
                if _u32(w, record) == T.SFLOW_RAW_HEADER and length >= T.SFLOW_RECORD_HLEN:
                    _sflow_header(w, record + T.SFLOW_ITEM, length, depth, path)


def _sflow_items(w: _Walker, pos: int, count: int, stop: int) -> list[tuple[int, int]]:
    """(start, data length) of each of the ``count`` samples or records (format, length, data) from ``pos`` that
    fit before ``stop``."""
    items: list[tuple[int, int]] = []
    while len(items) < count and pos + T.SFLOW_ITEM <= stop:
        length = _u32(w, pos + 4)
        if pos + T.SFLOW_ITEM + length > stop:
            break
        items.append((pos, length))
        pos += T.SFLOW_ITEM + length
    return items


def _sflow_header(w: _Walker, at: int, length: int, depth: int, path: str) -> None:
    """A raw packet header record's packet (header protocol, frame length, stripped, header length, bytes)."""
    kind = T.SFLOW_HEADER_PROTOCOLS.get(_u32(w, at))
    size = _u32(w, at + 12)
    if kind is None or size > length - T.SFLOW_RECORD_HLEN:
        return
    start = at + T.SFLOW_RECORD_HLEN
    embed(w, kind, start, start + size, _u32(w, at + 4) - _u32(w, at + 8), depth + 1, path)


def h_openflow(w: _Walker, at: int, end: int, depth: int, path: str) -> None:
    """The OpenFlow messages a TCP segment holds whole (a message continued in the next segment is not walked:
    csum does not reassemble TCP); each packet-in's frame is an embedded packet, its total_len its length."""
    path += "/openflow"
    stop = min(end, w.n)
    while at + T.OPENFLOW_HLEN <= stop:
        version, length = w.b[at], w.u16(at + 2)
        if length < T.OPENFLOW_HLEN or at + length > stop:
            return
        if w.b[at + 1] == T.OPENFLOW_PACKET_IN:
            data = _packet_in_data(w, version, at, at + length)
            if data is not None:
                embed(w, "eth", data, at + length, w.u16(at + 12), depth + 1, path)
        at += length


def _packet_in_data(w: _Walker, version: int, at: int, stop: int) -> int | None:
    """Where the frame of the packet-in message at ``at`` starts (OpenFlow 1.0, 1.3-1.5), None for another
    version or a match that does not fit."""
    if version == T.OPENFLOW_10:
        data = at + T.OPENFLOW_10_DATA
    elif version in T.OPENFLOW_MATCH_VERSIONS and at + T.OPENFLOW_MATCH_AT + 4 <= stop:
        unit = T.OPENFLOW_MATCH_UNIT
        match = -(-w.u16(at + T.OPENFLOW_MATCH_AT + 2) // unit) * unit
        data = at + T.OPENFLOW_MATCH_AT + match + T.OPENFLOW_MATCH_PAD
    else:
        return None
    return data if data <= stop else None


#: Layer name -> handler, for csum.layers.walk's dispatch.
HANDLERS = {name[2:].replace("_", "-"): fn for name, fn in list(globals().items()) if name.startswith("h_")}
