"""The walker's core: its state over one packet, the bounds every handler checks, and the registries that bind the
layer names of :data:`csum.layers.table.DISSECTORS` to their handlers.

A handler registers under the layer name the table gives its protocol, the way a Wireshark dissector registers in
its parent's dissector table (``dissector_add_uint("ethertype", 0x0800, ip_handle)``): :func:`handles` for a layer
reached from a frame (``(walker, at, end, depth, path)``: its header starts at ``at``, its encapsulation ends at
``end``), :func:`carries` for a layer an IP header's protocol names (``(walker, ip, proto, at, stop, depth, path)``),
:func:`link_kind` for a capture link type's kind that reads the link row. The handler modules (link, ip, transport,
tunnels, embedded) register when csum/layers/walk.py imports them; a parent follows an edge by looking its key up in
the table and calling :meth:`Walker.dispatch` (or :meth:`Walker.carry`) with the child's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NoReturn, TypeVar

from ..errors import Code
from . import table as T
from .stack import Field, IPLayer, Stack

if TYPE_CHECKING:
    Handler = Callable[..., None]  # (walker, at, end, depth, path[, quote]) -> None
    Carried = Callable[["Walker", IPLayer, int, int, int, int, str], None]
    LinkHandler = Callable[["Walker", T.LinkType, int, int, str], None]
    F = TypeVar("F", bound=Callable[..., None])

#: Layer name -> its handler (a frame's layers), see :func:`handles`.
LAYERS: dict[str, Handler] = {}
#: Layer name of table "ip.proto" -> its handler, see :func:`carries`.
CARRIED: dict[str, Carried] = {}
#: Link kind of table "link.type" that reads its link row (header length, protocol word) -> its handler.
LINK_KINDS: dict[str, LinkHandler] = {}


def _register(registry: dict[str, Any], names: tuple[str, ...]) -> Callable[[F], F]:
    def add(fn: F) -> F:
        for name in names:
            assert name not in registry, f"layer {name} registered twice"
            registry[name] = fn
        return fn
    return add


def handles(*names: str) -> Callable[[F], F]:
    """Register a frame layer's handler under ``names`` (table.DISSECTORS' child layer names)."""
    return _register(LAYERS, names)


def carries(*names: str) -> Callable[[F], F]:
    """Register the handler of what an IP header carries, under ``names`` (table.IP_PROTOCOLS' layer names)."""
    return _register(CARRIED, names)


def link_kind(*names: str) -> Callable[[F], F]:
    """Register the handler of a link kind (table.LINKTYPES' ``kind``) that reads its row."""
    return _register(LINK_KINDS, names)


class _Bad(Exception):
    """A malformed header: ends the walk (strict: raised as CsumValueError with ``code``)."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Cut(Exception):
    """The captured bytes end here (the snap length)."""


class Walker:
    """One packet's walk: its bytes ``b`` (``n`` captured), its length on the wire, the :class:`Stack` it fills."""

    __slots__ = ("b", "n", "wire", "stack", "strict", "embedded", "known")

    def __init__(self, buf: memoryview, wire: int, strict: bool, embedded: bool = False) -> None:
        self.b, self.n, self.wire, self.strict, self.embedded = buf, len(buf), wire, strict, embedded
        self.stack = Stack()
        self.known = 0  # layers recognised beyond a port's guess: an IP header (ip.py), a length read (bounded)

    def u16(self, at: int) -> int:
        b = self.b
        return (b[at] << 8) | b[at + 1]

    def need(self, end: int, what: str, bound: int | None = None) -> None:
        """``what`` ends at ``end``: within ``bound`` (its encapsulation's end) and the packet, else malformed; past
        the captured bytes but within the packet's length: cut by the snap length (:class:`_Cut`)."""
        if bound is not None:
            self.inside(end, bound, what)
        if end > self.n:
            if end <= self.wire:
                raise _Cut
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {end} bytes, packet has {self.wire}")

    def inside(self, stop: int, end: int, what: str) -> None:
        """Malformed when ``what`` runs to ``stop``, past ``end``: the end its encapsulation gives it, when that is
        before the packet's."""
        if stop > end and end < self.wire:
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {stop} bytes, its encapsulation ends at {end}")

    def has(self, end: int) -> str:
        """How a truncation message names ``end``, where a layer's bytes must stop: the packet's end, or its
        encapsulation's."""
        return f"packet has {end}" if end >= self.wire else f"its encapsulation ends at {end}"

    def bounded(self, what: str, stop: int, end: int) -> int:
        """``stop``, the end a length field of ``what`` gives its payload, when the encapsulation holds it (one that
        does not is malformed, also under a port's guess: the header was read as that protocol's)."""
        if stop > end:
            self.known += 1
            raise _Bad(Code.TRUNCATED, f"packet: truncated: {what} needs {stop} bytes, its encapsulation ends at {end}")
        return stop

    def emit(self, f: Field) -> None:
        if self.embedded:
            f.embedded = True
        self.stack.fields.append(f)

    def stored_or_none(self, at: int) -> int | None:
        return at if at + 2 <= self.n else None

    def not_ip(self, what: str) -> NoReturn:
        raise _Bad(Code.NOT_IP, f"packet: {what}")

    def dispatch(self, kind: str, at: int, end: int, depth: int, path: str) -> None:
        """Follow an edge to the layer ``kind`` at ``at`` (its encapsulation ending at ``end``)."""
        LAYERS[kind](self, at, end, depth, path)

    def carry(self, ip: IPLayer, proto: int, at: int, stop: int, depth: int, path: str) -> None:
        """Follow table "ip.proto" from ``ip`` (or an AH header in it): what protocol ``proto`` at ``at`` holds, its
        datagram ending at ``stop``. A protocol no entry names holds nothing csum checks."""
        name = T.IP_PROTOCOLS.get(proto)
        if name is not None:
            CARRIED[name](self, ip, proto, at, stop, depth, path)

    def inner(self, kind: str, at: int, end: int, depth: int, path: str, guessed: bool = False) -> None:
        """Walk an encapsulated layer: its problems end this branch only; a malformed one (not merely not IP) is
        :attr:`Stack.inner_malformed`: the checksums it holds are not judged, and that is said. ``guessed``: the
        layer is known by a port only; a payload that fails before an IP header or a length field in it is not that
        protocol's (a note: no checksum of it went unjudged)."""
        if depth > T.MAX_DEPTH:
            self.stack.notes.append(f"{path}: more than {T.MAX_DEPTH} encapsulations, not walked further")
            return
        entered = self.known
        try:
            self.dispatch(kind, at, end, depth, path)
        except _Bad as exc:
            self.stack.notes.append(f"{path}: {exc}")
            if guessed and self.known == entered:
                return
            if exc.code != Code.NOT_IP and self.stack.inner_malformed is None:  # not IP inside: nothing to judge
                self.stack.inner_malformed = (exc.code, f"inside {path}: {str(exc).removeprefix('packet: ')}", at)

    def walk_embedded(self, kind: str, at: int, depth: int, path: str) -> None:
        """Walk an embedded packet (this walker's whole job, see csum.layers.embedded): a cut ends it quietly, a
        malformed layer is a note."""
        try:
            self.dispatch(kind, at, self.wire, depth, path)
        except _Cut:
            pass
        except _Bad as exc:
            self.stack.notes.append(f"{path}: embedded packet: {exc}")
