"""IP fragment reassembly inside a capture, bounded, to verify the checksum of the whole datagram.

Fragments are keyed as receivers key them (RFC 791: source, destination, protocol,
identification; RFC 8200 4.5: source, destination, identification). A fragment inside a tunnel (GTP-U, VXLAN, GRE,
IP in IP, Geneve ...) is reassembled the same way, keyed by its own IP header's fields as Wireshark keys it, and also
by the tunnel it came through: the path of layers in front of it and the addresses of every IP header around it
(:func:`tunnel_of`), so that datagrams of private address spaces carried between different tunnel endpoints are
never mixed (a datagram whose fragments come through different endpoints is left unverified). Its results keep
the path and depth they have in the packet. When every byte from 0 to
the last fragment's end is present the datagram is rebuilt from the first fragment's headers
(IPv4: total length set, fragment field cleared; IPv6: the Fragment header turned into an atomic
fragment, RFC 6946, payload length set) and walked like any packet; each checksum found in the
fragmentable part is reported on the fragment that carries its field, at that fragment's offsets.
Overlapping fragments whose bytes differ (RFC 5722 forbids overlaps for IPv6; Linux drops both
cases, net/ipv4/ip_fragment.c, net/ipv6/reassembly.c) make the datagram unverifiable
(``reassembly-failed`` on each of its first fragments) as soon as the second one arrives, and that one
starts the next datagram under the key; so does a datagram longer than the 65,535 bytes IP allows. Memory is
bounded by :data:`MAX_DATAGRAMS` pending datagrams of at most 65535 bytes each; the oldest is given
up first. A datagram still incomplete when :data:`WINDOW` packets have passed since its first
fragment is given up too (left ``needs-reassembly``): Linux gives up after ``ipfrag_time``, 30 s
(net/ipv4/ip_fragment.c); a capture has packet numbers, not a clock csum trusts, and the rule keeps
what a checker holds back bounded.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import NamedTuple

from . import table as T
from .check import Result, judge
from .reasons import Reason
from .walk import IPLayer, walk

#: Datagrams being reassembled at once; beyond this the oldest is given up (left "needs-reassembly").
MAX_DATAGRAMS = 1024
#: Packets after its first fragment by which a datagram must be whole, else it is given up.
WINDOW = 65536
_MAX_DATAGRAM = 65535

#: Why a datagram whose every byte came cannot be verified: its fragments disagree, or it is longer than IP allows.
_FAILED = {"overlap": Reason.REASSEMBLY_FAILED, "too long": Reason.REASSEMBLY_FAILED}

#: How fragments are keyed: (IP version, source, destination, identification, IPv4 protocol or 0, the tunnel: b""
#: for an outer datagram, else :func:`tunnel_of`).
Key = tuple[int, bytes, bytes, int, int, bytes]


class _Piece:
    """One fragment's part of a datagram: its packet, offset in the datagram's fragmentable part, bytes, and where
    they start in the packet."""

    __slots__ = ("index", "offset", "data", "start")

    def __init__(self, index: int, offset: int, data: bytes, start: int) -> None:
        self.index, self.offset, self.data, self.start = index, offset, data, start


class _Datagram:
    """A datagram being reassembled."""

    __slots__ = ("pieces", "head", "head_index", "l3", "version", "total", "failed", "prefix", "repeats", "depth")

    def __init__(self, version: int = 4, depth: int = 0) -> None:
        self.pieces: list[_Piece] = []
        self.head: bytes | None = None  # the first fragment's bytes from the IP header to its data
        self.head_index = -1
        self.l3 = 0
        self.version = version
        self.total: int | None = None  # end of the last fragment, once seen
        self.failed: str | None = None
        self.prefix = ""  # the path of the first fragment's layers in front of IP
        self.repeats: list[int] = []  # packets repeating the first fragment byte for byte
        self.depth = depth  # the fragments' IP header's encapsulation depth (0: outer)


class Done(NamedTuple):
    """A datagram whose fate is known: its results by packet index (reassembled) or why it failed (given up:
    neither), and every packet holding one of its fragments (``pieces``); ``first``: the first fragment's packet,
    -1 when it never came; ``embedded``: (packet index, field offset) of the results that are an embedded packet's
    (csum.layers.walk Field.embedded); ``repeats``: the packets that repeat the first fragment byte for byte (a
    duplicate in the capture: the datagram's transport field is the first fragment's, reported once); ``depth``: the
    fragments' IP header's encapsulation depth (above 0: inside a tunnel, whose checksums may cover the fields)."""

    first: int
    results: dict[int, list[Result]]
    failed: Reason | None = None
    pieces: tuple[int, ...] = ()
    embedded: frozenset[tuple[int, int]] = frozenset()
    repeats: tuple[int, ...] = ()
    depth: int = 0


class Reassembler:
    """Collects the fragments of one capture; :meth:`add` returns the datagrams it completes or gives up.

    ``closed``: when asked for (``record``), the keys of every datagram completed or given up so far (a chunk
    checked on its own reports them; over a whole capture they would only grow); ``peak``: the most pending at once.
    """

    def __init__(self, record: bool = False) -> None:
        self.pending: OrderedDict[Key, _Datagram] = OrderedDict()
        self.closed: set[Key] | None = set() if record else None
        self.peak = 0

    def add(self, index: int, buf: memoryview, ip: IPLayer, cut: bool, prefix: str = "",
            tunnel: bytes = b"") -> list[Done]:
        """Add the fragment in packet ``index`` (its IP layer ``ip``, the outer one or one inside a tunnel;
        ``prefix``: the path of the layers in front of it, "eth/vlan/"; ``tunnel``: :func:`tunnel_of` for one inside
        a tunnel); return what completes or is given up (evicted, expired)."""
        size = T.ADDR_SIZES[ip.version]
        key = (ip.version, bytes(buf[ip.saddr : ip.saddr + size]), bytes(buf[ip.daddr : ip.daddr + size]), ip.frag_id,
               ip.proto if ip.version == 4 else 0, tunnel)
        out = self.expire(index)
        data = bytes(buf[ip.frag_data : ip.end])
        dgram = self.pending.get(key)
        if dgram is not None and self._conflicts(dgram, ip.frag_offset, data):
            del self.pending[key]  # the datagram can no longer complete: this fragment starts the next one
            self._close(key)
            dgram.failed = "overlap"
            out.append(self._finish(dgram, None))
            dgram = None
        if dgram is None:
            dgram = self.pending[key] = _Datagram(version=ip.version, depth=ip.depth)
            if len(self.pending) > MAX_DATAGRAMS:
                out.append(self._give_up(*self.pending.popitem(last=False)))
            self.peak = max(self.peak, len(self.pending))
        if cut or ip.frag_offset + len(data) > _MAX_DATAGRAM:
            dgram.failed = "cut" if cut else "too long"
        if ip.frag_offset == 0 and self._repeats_head(dgram, data):  # the field stays the first copy's
            dgram.repeats.append(index)
        elif ip.frag_offset == 0:
            dgram.head, dgram.head_index, dgram.l3 = bytes(buf[ip.l3 : ip.frag_data]), index, ip.l3
            dgram.prefix = prefix
        if not ip.frag_more:
            dgram.total = ip.frag_offset + len(data)
        dgram.pieces.append(_Piece(index, ip.frag_offset, data, ip.frag_data))
        whole = self._whole(dgram)
        if whole is not None:
            del self.pending[key]
            self._close(key)
            out.append(self._finish(dgram, whole))
        return out

    def expire(self, index: int) -> list[Done]:
        """Give up the datagrams whose first fragment is :data:`WINDOW` packets or more before packet ``index``
        (they are kept in the order their first fragment arrived)."""
        out = []
        while self.pending:
            key, dgram = next(iter(self.pending.items()))
            if index - dgram.pieces[0].index < WINDOW:
                break
            del self.pending[key]
            out.append(self._give_up(key, dgram))
        return out

    def flush(self) -> list[Done]:
        """Every datagram still pending (the capture ended): left unverified."""
        out = [self._give_up(*item) for item in self.pending.items()]
        self.pending.clear()
        return out

    def _close(self, key: Key) -> None:
        if self.closed is not None:
            self.closed.add(key)

    def _give_up(self, key: Key, dgram: _Datagram) -> Done:
        self._close(key)
        return Done(dgram.head_index, {}, pieces=tuple(p.index for p in dgram.pieces), repeats=tuple(dgram.repeats))

    @staticmethod
    def _repeats_head(dgram: _Datagram, data: bytes) -> bool:
        """Whether a first fragment's ``data`` is the datagram's first fragment's, byte for byte."""
        return dgram.head is not None and any(p.offset == 0 and p.index == dgram.head_index and p.data == data
                                              for p in dgram.pieces)

    @staticmethod
    def _conflicts(dgram: _Datagram, offset: int, data: bytes) -> bool:
        """Whether ``data`` at ``offset`` overlaps a piece already here with other bytes. Such a fragment ends the
        datagram (``reassembly-failed``: Linux discards the queue too, net/ipv4/inet_fragment.c
        inet_frag_queue_insert) and starts the next one under the key: a sender that reuses an identification
        after losing a datagram's other fragments (a generator, a replayed capture) sends exactly that."""
        end = offset + len(data)
        for p in dgram.pieces:
            lo, hi = max(offset, p.offset), min(end, p.offset + len(p.data))
            if lo < hi and data[lo - offset : hi - offset] != p.data[lo - p.offset : hi - p.offset]:
                return True
        return False

    @staticmethod
    def _whole(dgram: _Datagram) -> bytes | None:
        """The fragmentable part once every byte of it is here (the pieces agree wherever they overlap: add() ends
        a datagram at the first piece that does not)."""
        if dgram.total is None or dgram.head is None:
            return None
        pieces = sorted(dgram.pieces, key=lambda p: p.offset)
        whole, reach = bytearray(), 0
        for piece in pieces:
            if piece.offset > reach:
                return None  # a hole
            whole[piece.offset : piece.offset + len(piece.data)] = piece.data
            reach = max(reach, piece.offset + len(piece.data))
        return bytes(whole[: dgram.total]) if reach >= dgram.total else None

    @staticmethod
    def _finish(dgram: _Datagram, whole: bytes | None) -> Done:
        pieces = tuple(p.index for p in dgram.pieces)
        head = bytearray(dgram.head or b"")
        if whole is not None and len(head) - (0 if dgram.version == 4 else T.IPV6HDR.size) + len(whole) > _MAX_DATAGRAM:
            dgram.failed = "too long"  # Linux drops it too: "Oversized IP packet" (net/ipv4/ip_fragment.c)
        repeats = tuple(dgram.repeats)
        if whole is None or dgram.failed:
            return Done(dgram.head_index, {}, _FAILED.get(dgram.failed or ""), pieces, repeats=repeats)
        if dgram.version == 4:
            v4 = T.IPHDR
            head[v4.tot_len : v4.tot_len + 2] = (len(head) + len(whole)).to_bytes(2, "big")
            head[v4.frag_off : v4.frag_off + 2] = (int.from_bytes(head[v4.frag_off : v4.frag_off + 2], "big")
                                                   & T.IP_DF).to_bytes(2, "big")  # keep DF, clear MF and the offset
        else:
            v6, frag = T.IPV6HDR, T.FRAG_HDR
            head[v6.payload_len : v6.payload_len + 2] = (len(head) - v6.size + len(whole)).to_bytes(2, "big")
            at = len(head) - frag.size + frag.frag_off  # the Fragment header ends the head: offset 0, M = 0 (atomic)
            head[at : at + 2] = b"\0\0"
        packet = memoryview(bytes(head) + whole)
        stack = walk(packet, "ip")
        results: dict[int, list[Result]] = {}
        embedded = set()
        for f in stack.fields:
            if f.depth == 0 and f.entry.name == "ipv4" and f.header == 0:
                continue  # the rebuilt header is csum's, not the sender's
            r = judge(packet, f)
            index, shift = _locate(dgram, len(head), r.field if r.field is not None else r.offset)
            moved = dataclasses.replace(r, offset=r.offset + shift, path=dgram.prefix + r.path,
                                        field=None if r.field is None else r.field + shift, depth=r.depth + dgram.depth)
            results.setdefault(index, []).append(moved)
            if f.embedded and moved.field is not None:
                embedded.add((index, moved.field))
        return Done(dgram.head_index, results, pieces=pieces, embedded=frozenset(embedded), repeats=repeats,
                    depth=dgram.depth)


def tunnel_of(buf: memoryview, ip: IPLayer, around: list[IPLayer]) -> bytes:
    """What keys a fragment inside a tunnel besides its own IP header's fields: the walk's path to it, then the source
    and destination of each IP header ``around`` it (the stack's IP layers in front of ``ip``)."""
    parts = [ip.path.encode()]
    for outer in around:
        size = T.ADDR_SIZES[outer.version]
        parts += [bytes(buf[outer.saddr : outer.saddr + size]), bytes(buf[outer.daddr : outer.daddr + size])]
    return b"\0".join(parts)


def _locate(dgram: _Datagram, head_len: int, at: int) -> tuple[int, int]:
    """(packet index, shift) for an offset ``at`` in the rebuilt datagram: the fragment holding that byte."""
    if at < head_len:
        return dgram.head_index, dgram.l3
    data_at = at - head_len
    for piece in dgram.pieces:
        if piece.offset <= data_at < piece.offset + len(piece.data):
            return piece.index, piece.start - head_len - piece.offset
    return dgram.head_index, dgram.l3
