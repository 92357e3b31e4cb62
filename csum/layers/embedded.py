"""Packets other protocols carry as data: an sFlow sample's packet header (table "udp.port"), an OpenFlow
packet-in's frame (table "tcp.port").

Embedded packets are copies, not traffic: each is walked by a walker of its own over its bytes (the packet's length
on the wire as the record gives it, so a sampled header cut short is reported ``not-captured``), at one depth more,
and its fields marked ``embedded``. Table "sflow.header" names a sample's first layer.
"""

from __future__ import annotations

from . import table as T
from .dissect import Walker, handles


def _u32(w: Walker, at: int) -> int:
    return int.from_bytes(w.b[at : at + 4], "big")


def embed(w: Walker, kind: str, at: int, stop: int, wire: int, depth: int, path: str) -> None:
    """Walk the packet carried as data from ``at`` to ``stop``, ``wire`` bytes long when it was sent (at least
    its bytes here), in a walker of its own whose fields are ``embedded``; its problems are notes here."""
    if depth > T.MAX_DEPTH:
        w.stack.notes.append(f"{path}: more than {T.MAX_DEPTH} encapsulations, not walked further")
        return
    sub = Walker(w.b[: min(stop, w.n)], max(at + wire, stop), False, True)
    sub.walk_embedded(kind, at, depth, path)
    w.stack.fields += sub.stack.fields
    w.stack.ips += sub.stack.ips
    w.stack.notes += sub.stack.notes


@handles("sflow")
def h_sflow(w: Walker, at: int, end: int, depth: int, path: str) -> None:
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


def _sflow_items(w: Walker, pos: int, count: int, stop: int) -> list[tuple[int, int]]:
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


def _sflow_header(w: Walker, at: int, length: int, depth: int, path: str) -> None:
    """A raw packet header record's packet (header protocol, frame length, stripped, header length, bytes)."""
    kind = T.SFLOW_HEADER_PROTOCOLS.get(_u32(w, at))
    size = _u32(w, at + 12)
    if kind is None or size > length - T.SFLOW_RECORD_HLEN:
        return
    start = at + T.SFLOW_RECORD_HLEN
    embed(w, kind, start, start + size, _u32(w, at + 4) - _u32(w, at + 8), depth + 1, path)


@handles("openflow")
def h_openflow(w: Walker, at: int, end: int, depth: int, path: str) -> None:
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


def _packet_in_data(w: Walker, version: int, at: int, stop: int) -> int | None:
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
