"""Why a program's same-length change left a checksum wrong, from the input and the output side by side.

``csum prog`` (:func:`csum.explain.program.explain_program`) tries these where :mod:`csum.rewrite.mistakes` cannot
re-make the change (csum.rewrite infers addresses, ports, TTL, ...; not a TCP option or an ICMP type), and on every
IPv4 header checksum a program computed:

* ``seed-not-complemented``: an incremental update (RFC 1624 eqn. 3, ``HC' = ~(~HC + ~m + m')``) started from the
  old checksum ``HC`` itself, not its complement: ``bpf_csum_diff(old, 4, new, 4, check)`` where ``~check`` is due;
* ``l4-field-not-updated``: a run of bytes the checksum covers (an option such as the MSS, an ICMP type) changed and
  the checksum not updated for it;
* ``l4-not-patched`` for one address of two: both addresses rewritten, the TCP/UDP checksum updated for one only;
* an IPv4 header whose length changed (an option inserted, as Cilium's DSR does) with its checksum updated for part
  of the change: the header length byte, one field (the total length), or the option's bytes left out
  (``ip-field-not-updated``, ``tot-len-not-updated``);
* ``coverage-short``: an IPv4 header checksum computed over the first bytes of the header only (a loop bounded by
  ``sizeof(struct iphdr)`` on a header with options, a ``bpf_csum_diff`` size short of the header), or a TCP/UDP
  checksum over the pseudo-header and the transport header alone (the payload, an encapsulated packet, left out);
* ``udp6-zero``: a UDP checksum over IPv6 left 0, "none", which IPv6 allows only for a tunnel whose endpoints enable
  zero-checksum mode for the port (RFC 8200 8.1, RFC 6935, RFC 6936): csum judges it wrong off the tunnel ports it
  knows.

Each is an exact simulation giving one value (:class:`csum.explain.sums.Guess`); the caller keeps those equal to the
stored bytes. Byte order does not matter: one's-complement sums commute with swapping the bytes of every word.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from ..core.arith import M16, canonical
from ..layers import Stack, Status
from ..layers import table as T
from ..layers.check import judge
from ..layers.walk import Field, IPLayer
from . import header, sums
from .flow import carrier
from .sums import Guess, Message

__all__ = ["changed", "regrown", "short", "short_l4", "udp6_zero"]


def changed(before: bytes, bstack: Stack, f: Field, m: Message) -> Iterator[Guess]:
    """The update slips for field ``f`` (its message ``m`` in the output) of a change of the same layout from
    ``before`` (walked: ``bstack``), where the input's field was right."""
    of = next((g for g in bstack.fields if g.at == f.at and g.entry is f.entry), None)
    if of is None or of.at is None or judge(memoryview(before), of).status is not Status.OK:
        return
    mb = sums.message(before, of, carrier(bstack, of))
    if mb is None or len(mb.data) != len(m.data) or mb.pseudo != m.pseudo:
        return
    old = int.from_bytes(before[of.at:of.at + 2], "big")
    right = sums.checksum(m.total())
    if right != old:
        wrong = canonical((right ^ M16) + 2 * old, 16) ^ M16
        yield Guess("seed-not-complemented", sums.stored_as(f, wrong), lambda: f"the update started from the old "
                    f"checksum {old:#06x} itself, not its complement {old ^ M16:#06x} (RFC 1624 eqn. 3 takes ~HC)",
                    sure=True)
    if f.entry.name != "ipv4":
        first = f.covers[0][0]
        inner = [(g.at - first, g.at - first + 2) for g in bstack.fields
                 if g is not of and g.at is not None and 0 <= g.at - first <= len(m.data) - 2]
        yield from _not_updated(f, m, mb, inner)
    if m.pseudo and m.src != mb.src and m.dst != mb.dst:
        yield from _one_address(f, m, mb)


def _runs(old: bytes, new: bytes, cuts: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """The [start, end) runs of positions where ``old`` and ``new`` differ, split at the positions in ``cuts``."""
    out: list[tuple[int, int]] = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        if out and out[-1][1] == i and i not in cuts:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _not_updated(f: Field, m: Message, mb: Message, inner: list[tuple[int, int]]) -> Iterator[Guess]:
    """The checksum as if some changed covered bytes had not changed, the pseudo-header as the output has it: each
    run of changed bytes, each group of runs close together (:func:`_clusters`), all of them, and each run's part in
    one 4-byte word of the coverage (a bpf_csum_diff
    window or size short of the change: ``diff-size-wrong``). ``inner``: the [start, end) of the checksum fields
    inside the coverage (an ICMP error's quote, a tunnel's inner packet): the field encloses them, the runs are split
    at them, the cause is ``outer-not-carried``, and the runs in them (their own changes) are tried together, as are
    the runs outside them; else ``l4-field-not-updated``."""
    runs = _runs(mb.data, m.data, frozenset(x for span in inner for x in span))
    name = f.entry.name.upper()
    cause = "outer-not-carried" if inner else "l4-field-not-updated"
    tries: list[tuple[str, list[tuple[int, int]]]] = [(_where(r, m, mb), [r]) for r in runs]
    tries += [(f"{_span((c[0][0], c[-1][1]))} of the {len(m.data)} it covers", c)
              for c in _clusters(runs, inner) if len(c) > 1 and len(c) < len(runs)]
    if len(runs) > 1:
        tries.append((f"any of the {len(runs)} changes of the bytes it covers", runs))
    sums_of = [r for r in runs if any(a <= r[0] and r[1] <= b for a, b in inner)]
    if sums_of and len(sums_of) < len(runs):
        rest = [r for r in runs if r not in sums_of]
        tries.append((f"the {len(sums_of)} enclosed checksums' own changes", sums_of))
        tries.append((f"the changes of the enclosed fields, only for the enclosed checksums' {len(sums_of)}", rest))
    for label, reverted in tries:
        value = _reverted(f, m, mb, reverted)
        yield Guess(cause, value, partial("the {} checksum not updated for {}".format, name, label), sure=True)
    for a, b in runs:
        words = [(max(a, w), min(b, w + 4)) for w in range(a - a % 4, b, 4)]
        for k, part in enumerate(words if len(words) > 1 else ()):
            counted = words[:k] + words[k + 1:]
            yield Guess("diff-size-wrong", _reverted(f, m, mb, [part]), partial(
                "the {} checksum updated with a bpf_csum_diff over the 4-byte words of {} only: {} left out (a "
                "size or window short of the change)".format, name, ", ".join(_span(p) for p in counted),
                _span(part)), sure=True)


def _clusters(runs: list[tuple[int, int]], inner: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The runs grouped where fewer than 4 unchanged bytes part them (one field whose old and new values share a
    byte, an address), never across an enclosed checksum field of ``inner``."""
    out: list[list[tuple[int, int]]] = []
    for r in runs:
        prev = out[-1][-1] if out else None
        if prev is not None and r[0] - prev[1] < 4 and not any(prev[1] <= a < r[1] for span in inner for a in span):
            out[-1].append(r)
        else:
            out.append([r])
    return out


def _span(r: tuple[int, int]) -> str:
    return f"byte {r[0]}" if r[1] - r[0] == 1 else f"bytes {r[0]}..{r[1] - 1}"


def _where(r: tuple[int, int], m: Message, mb: Message) -> str:
    return f"{_span(r)} of the {len(m.data)} it covers ({mb.data[r[0]:r[1]].hex()} -> {m.data[r[0]:r[1]].hex()})"


def _reverted(f: Field, m: Message, mb: Message, runs: list[tuple[int, int]]) -> int:
    """The field's checksum with the bytes of ``runs`` as the input had them."""
    data = bytearray(m.data)
    for a, b in runs:
        data[a:b] = mb.data[a:b]
    return sums.stored_as(f, sums.checksum(m.total(data16=sums.sum16(bytes(data)))))


def _one_address(f: Field, m: Message, mb: Message) -> Iterator[Guess]:
    """l4-not-patched for one address: both rewritten, the checksum updated for the other one only."""
    name = f.entry.name.upper()
    for stale, src, dst in (("source", mb.src, m.dst), ("destination", m.src, mb.dst)):
        old = mb.src if stale == "source" else mb.dst
        value = sums.stored_as(f, sums.checksum(m.moved(src, dst).total()))
        yield Guess("l4-not-patched", value, partial(
            "a stale pseudo-header for the {0} address {1}: both addresses rewritten, the {2} checksum updated for "
            "the other one only".format, stale, header.show(f"{stale} address", old), name), sure=True)


def short(buf: bytes, ip: IPLayer) -> Iterator[Guess]:
    """coverage-short: IPv4 header ``ip``'s checksum over its first k bytes only, for every even k from 4 to the
    header's length less 2 (a u16 loop or a bpf_csum_diff given the wrong size; 20 on a header with options)."""
    if ip.version != 4 or ip.ip_csum is None:
        return
    hl = ip.l3_header_end - ip.l3
    data = bytearray(buf[ip.l3:ip.l3_header_end])
    at = ip.ip_csum - ip.l3
    data[at:at + 2] = b"\0\0"
    for k in range(4, hl - 1, 2):
        value = sums.checksum(sums.sum16(bytes(data[:k])))
        yield Guess("coverage-short", value, partial(
            "the IPv4 header checksum over its first {} bytes only, not its {} (a loop or a bpf_csum_diff size "
            "short of the header)".format, k, hl), sure=True)


def regrown(new: bytes, old: bytes, at: int) -> Iterator[Guess]:
    """The header checksum of IPv4 header ``new`` (its checksum at ``at``), grown or shrunk from ``old`` (a right
    header), updated for all of the change but one part: the version/IHL byte, one field of
    :data:`csum.layers.table.IPV4_FIELDS`, the first word (IHL and total length), or the options' bytes (the bytes
    past the 20 of a header without options) as the old header had them."""
    fixed = T.IPV4_FIELDS[-1][1] + T.IPV4_FIELDS[-1][2]
    parts = [("the version/IHL byte", 0, 1, "ip-field-not-updated"),
             *((name, start, size, header.cause_of(name)) for name, start, size in T.IPV4_FIELDS),
             ("the first word (version/IHL and total length)", 0, 4, "ip-field-not-updated")]
    for name, start, size, cause in parts:
        was, now = old[start:start + size], new[start:start + size]
        if was == now:
            continue
        value = header.header_checksum(new[:start] + was + new[start + size:], at)
        yield Guess(cause, value, partial("the header checksum updated for the new length and options, not for {} "
                                          "({} -> {})".format, name, was.hex(), now.hex()), sure=True)
    options = new[fixed:] if len(old) == fixed else b""
    if options and any(options):
        value = header.header_checksum(new[:fixed] + bytes(len(options)), at)
        yield Guess("ip-field-not-updated", value, partial("the header checksum updated for the new length, not for "
                                                           "the {} bytes of options added".format, len(options)),
                    sure=True)


def short_l4(f: Field, m: Message) -> Iterator[Guess]:
    """coverage-short: a TCP/UDP/ICMPv6 checksum over the pseudo-header and the transport header alone, the
    pseudo-header length the segment's or the header's; an ICMP error's over its own header alone (the quote left
    out; summing the quoted IPv4 header too stores the same bytes: a right header sums to zero)."""
    size = _own_header(f, m)
    if not 0 < size < len(m.data) - 1:  # one byte after the header: odd-byte-dropped says it
        return
    data16 = sums.sum16(m.data[:size])
    name, rest = f.entry.name.upper(), len(m.data) - size
    if not m.pseudo:
        if size == T.ICMP_QUOTE:
            yield Guess("coverage-short", sums.checksum(data16), partial(
                "the {} checksum over its {}-byte header alone: the {} bytes of the quote after it left out".format,
                name, size, rest), sure=True)
        return
    for length in dict.fromkeys((m.length, size)):
        value = sums.stored_as(f, sums.checksum(m.total(length, data16)))
        yield Guess("coverage-short", value, partial(
            "the {} checksum over the pseudo-header (length {}) and its {}-byte header alone: the {} bytes after "
            "the header left out".format, name, length, size, rest), sure=True)


def _own_header(f: Field, m: Message) -> int:
    """The length of the header of field ``f``'s own at the start of ``m.data``: an ICMP/ICMPv6 error's up to its
    quote, else :func:`csum.explain.sums.transport_header`'s."""
    for proto, types in T.ICMP_QUOTES.items():
        if T.TRANSPORTS[proto] is f.entry:
            return T.ICMP_QUOTE if m.data and m.data[0] in types else sums.transport_header(f, m)
    return sums.transport_header(f, m)


def udp6_zero(f: Field, ip: IPLayer | None, stored: int, computed: int) -> Iterator[Guess]:
    """udp6-zero: UDP over IPv6 stored 0 where the checksum is not one that computes to 0 (that one is
    ``udp0-not-mangled``)."""
    if f.entry.name == "udp" and ip is not None and ip.version == 6 and stored == 0 and computed != M16:
        yield Guess("udp6-zero", 0, lambda: "the UDP checksum left 0 (none): IPv6 requires one unless the tunnel's "
                    "endpoints enable zero-checksum mode for this port (RFC 8200 8.1, RFC 6935)", sure=True)
