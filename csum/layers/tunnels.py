"""The walker's tunnels: GRE (over IP and over UDP) and what it carries (ERSPAN), the UDP tunnels of table
"udp.port" (VXLAN, VXLAN-GPE, Geneve, GTP, CAPWAP, AYIYA, Teredo, LISP, L2TP) and NSH.

Each handler ``h_<name>`` registers under the layer ``<name>`` of :data:`csum.layers.table.DISSECTORS`
(csum/layers/dissect.py); every fact comes from :mod:`csum.layers.table`, with its RFC or vendor document. A length
field that bounds a payload bounds the walk below it (GTP's, L2TP's); a payload that runs past it is malformed.
"""

from __future__ import annotations

from ..errors import Code
from . import table as T
from .dissect import Walker, _Bad, carries, handles
from .link import ethertype, h_eth, h_ppp, is_wlan_data, wlan
from .reasons import R
from .stack import Field, IPLayer


def _u32(w: Walker, at: int) -> int:
    return int.from_bytes(w.b[at : at + 4], "big")


@handles("gre-udp")
def h_gre_udp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 8086 GRE-in-UDP: the GRE header right after UDP's; GRE stands at UDP's depth, its payload one deeper."""
    gre(w, at, end, depth - 1, path)


@handles("gtp")
def h_gtp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """The GTP-U port: GTPv1-U (3GPP TS 29.281 5) or GTPv0 (GSM 09.60 6)."""
    _gtp(w, at, end, depth, path, True)


@handles("gtp-prime")
def h_gtp_prime(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """The GTPv0 / GTP' port (3GPP TS 32.295): a GTPv0 header (Wireshark's packet-gtp.c reads only that there)."""
    _gtp(w, at, end, depth, path, False)


def _gtp(w: Walker, at: int, end: int, depth: int, path: str, v1: bool) -> None:
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


@handles("capwap")
def h_capwap(w: Walker, at: int, end: int, depth: int, path: str) -> None:
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
        h_eth(w, frame, end, depth, path)
        return
    if (word >> T.CAPWAP_WBID_SHIFT) & T.CAPWAP_FIELD_MASK != T.CAPWAP_WBID_80211:
        w.stack.notes.append(f"{path}: a CAPWAP binding other than IEEE 802.11 is not walked")
        return
    w.need(frame + 2, "802.11 header", end)
    first, second = w.b[frame], w.b[frame + 1]
    fc, flags = (second, first) if is_wlan_data(second) or not is_wlan_data(first) else (first, second)
    w.need(frame + 24, "802.11 header", end)
    wlan(w, frame, end, depth, f"{path}/wlan", fc, flags)


@handles("ayiya")
def h_ayiya(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """draft-massar-v6ops-ayiya 5: 8 bytes, the identity and the signature; a forwarded packet after them."""
    b = w.b
    w.need(at + T.AYIYA_HLEN, "AYIYA header", end)
    if b[at + 2] & 0x0F != T.AYIYA_FORWARD:
        return
    name = T.AYIYA_PROTOCOLS.get(b[at + T.AYIYA_NEXT_HEADER])
    if name is None:
        w.not_ip(f"AYIYA next header {b[at + T.AYIYA_NEXT_HEADER]} at offset {at + T.AYIYA_NEXT_HEADER}")
    size = T.AYIYA_HLEN + (1 << (b[at] >> 4)) + (b[at + 1] >> 4) * T.AYIYA_SIG_UNIT
    w.need(at + size, "AYIYA identity and signature", end)
    w.dispatch(name, at + size, end, depth, f"{path}/ayiya")


@handles("teredo")
def h_teredo(w: Walker, at: int, end: int, depth: int, path: str) -> None:
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


@handles("lisp")
def h_lisp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 9300 5.3: the LISP data header, then an IPv4 or IPv6 packet."""
    w.need(at + T.LISP_HLEN, "LISP header", end)
    w.dispatch("ip", at + T.LISP_HLEN, end, depth, f"{path}/lisp")


@handles("l2tp")
def h_l2tp(w: Walker, at: int, end: int, depth: int, path: str) -> None:
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
    h_ppp(w, pos, end, depth, path)


@carries("gre")
def carried_gre(w: Walker, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
    """GRE over IP (IP protocol 47)."""
    gre(w, at, stop, depth, path)


def gre(w: Walker, at: int, stop: int, depth: int, path: str) -> None:
    """GRE (RFC 2784, RFC 2890 key and sequence; version 1 is PPTP's, RFC 2637): its optional checksum, then
    the payload by protocol type (Aruba's IEEE 802.11 frames: table.GRE_WLAN)."""
    path += "/gre"
    w.need(at + T.GRE_HLEN, "GRE header", stop)
    flags, version, proto = w.b[at], w.b[at + 1] & T.GRE_VERSION, w.u16(at + 2)
    checksum, key, seq = flags & T.GRE_CSUM, flags & T.GRE_KEY, flags & T.GRE_SEQ
    if flags & T.GRE_ROUTING:
        w.stack.notes.append(f"{path}: GRE with routing present (RFC 1701) is not walked")
        return
    size = T.GRE_HLEN + T.GRE_WORD * (bool(checksum) + bool(key) + bool(seq))
    if version == 1:
        size += 4 if w.b[at + 1] & 0x80 else 0  # PPTP acknowledgment number
    if checksum:
        na = R.NOT_CAPTURED if stop > w.n else None
        field = at + T.GRE_ENTRY.field
        w.emit(Field(T.GRE_ENTRY, path, depth, at, field if field + 2 <= w.n else None, ((at, stop),), na=na))
    w.need(at + size, "GRE header", stop)
    payload = at + size
    if version == 1:
        w.inner("ppp", payload, stop, depth + 1, path)
    elif proto == T.ETH_ERSPAN2 and not seq:  # ERSPAN type I: Ethernet right after the GRE header
        w.inner("eth", payload, stop, depth + 1, path)
    else:
        name = T.GRE_PROTOCOLS.get(proto)
        if name is None:
            w.stack.notes.append(f"{path}: GRE protocol {proto:#06x} is not walked")
            return
        w.inner(name, payload, stop, depth + 1, path)


@handles("erspan")
def h_erspan(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """ERSPAN type II: an 8-byte header, then the mirrored Ethernet frame."""
    h_eth(w, at + T.ERSPAN2_HLEN, end, depth, path + "/erspan")


@handles("erspan3")
def h_erspan3(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """ERSPAN type III: 12 bytes, 8 more with the platform sub-header (O bit), then Ethernet."""
    w.need(at + T.ERSPAN3_HLEN, "ERSPAN type III header")
    size = T.ERSPAN3_HLEN + (T.ERSPAN3_PLATFORM if w.b[at + T.ERSPAN3_O_AT] & 1 else 0)
    h_eth(w, at + size, end, depth, path + "/erspan")


@handles("vxlan")
def h_vxlan(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    w.need(at + T.VXLAN_HLEN, "VXLAN header")
    h_eth(w, at + T.VXLAN_HLEN, end, depth, path + "/vxlan")


@handles("vxlan-gpe")
def h_vxlan_gpe(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """draft-ietf-nvo3-vxlan-gpe: flags, 2 reserved bytes, Next Protocol, VNI; no P flag: Ethernet as VXLAN."""
    w.need(at + 8, "VXLAN-GPE header")
    path += "/vxlan-gpe"
    name = T.NEXT_PROTOCOLS.get(w.b[at + 3]) if w.b[at] & 0x04 else "eth"
    if name is None:
        w.not_ip(f"VXLAN-GPE next protocol {w.b[at + 3]} at offset {at + 3}")
    w.dispatch(name, at + 8, end, depth, path)


@handles("nsh")
def h_nsh(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 8300 Network Service Header: base header (length in 4-byte words), service path, context; then
    the Next Protocol's packet."""
    w.need(at + 8, "NSH header")
    size = (w.b[at + 1] & 0x3F) * 4
    if size < 8:
        raise _Bad(Code.BAD_LENGTH, f"packet: NSH length {size} bytes at offset {at} is below its 8-byte header")
    w.need(at + size, "NSH header")
    name = T.NEXT_PROTOCOLS.get(w.b[at + 3])
    if name is None:
        w.not_ip(f"NSH next protocol {w.b[at + 3]} at offset {at + 3}")
    w.dispatch(name, at + size, end, depth, path + "/nsh")


@handles("geneve")
def h_geneve(w: Walker, at: int, end: int, depth: int, path: str) -> None:
    """RFC 8926: 8 bytes + options (length in 4-byte words), protocol type an EtherType."""
    w.need(at + T.GENEVE_HLEN, "Geneve header", end)
    size = T.GENEVE_HLEN + (w.b[at] & T.GENEVE_OPT_LEN) * T.GENEVE_UNIT
    w.need(at + size, "Geneve options", end)
    where = at + T.GENEVE_PROTOCOL
    ethertype(w, w.u16(where), where, at + size, end, depth, path + "/geneve")
