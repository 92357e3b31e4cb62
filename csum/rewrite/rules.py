"""What a capture rewrite changes: :class:`Rules`, built in Python, from ``csum rewrite``'s options or a TOML file.

Every rule is checked when the rules are made, so a capture is never read with a rule that cannot apply: an
unparsable rule, a map between address families, two prefixes of one direction that overlap, a port mapped twice
raise :class:`csum.errors.CsumValueError` naming the rule (code ``bad-rule``, ``bad-address`` or ``overlapping-rules``).

Address maps are prefix maps as NETMAP and nftables' ``snat ip prefix to`` make them (net/netfilter/nft_nat.c,
``nf_nat_range2`` with NF_NAT_RANGE_NETMAP): the address keeps its host bits below the new prefix's length and
takes the new prefix's network bits; a host (``/32``, ``/128``, no length) maps to one address. ``map_ip`` applies to
source and destination addresses, ``map_src`` / ``map_dst`` to one of them; an address that no map matches is
anonymized when a Crypto-PAn key is given (:mod:`.cryptopan`), else kept. Rules apply to every IP header the level
selects (``outer``: the outermost; ``inner``: every header inside it, tunnelled or quoted by an ICMP error; ``all``),
each field as it stands in that header, but that the datagram an ICMP/ICMPv6 error quotes went the other way: there
``map_src`` applies to the quoted destination and ``map_dst`` to the quoted source, as a source or destination NAT
rewrites a quote (csum/rewrite/apply.py).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Union

from ..errors import Code, CsumValueError
from ..layers import table
from .cryptopan import CryptoPAn

__all__ = ["Level", "PortMap", "PrefixMap", "Rules"]

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
Level = Literal["outer", "inner", "all"]
LEVELS = ("outer", "inner", "all")
#: Port maps name a protocol (``tcp:80=8080``) or apply to every protocol with ports.
_PORT_PROTOCOLS = {"tcp": table.TCP, "udp": table.UDP, "udplite": table.UDPLITE, "dccp": table.DCCP}
#: The MTUs ``truncate`` takes: RFC 791's 68 bytes every IPv4 module forwards, up to the largest IP length field.
MIN_MTU, MAX_MTU = 68, 65535
_MAC = re.compile(r"^[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}$")


def _bad(rule: str, why: str, code: Code = Code.BAD_RULE) -> CsumValueError:
    return CsumValueError(f"rule {rule!r}: {why}", code=code)


def _pair(rule: object, name: str) -> tuple[str, str]:
    if isinstance(rule, (tuple, list)) and len(rule) == 2 and all(isinstance(x, (str, int)) for x in rule):
        return str(rule[0]).strip(), str(rule[1]).strip()
    if isinstance(rule, str) and rule.count("=") == 1:
        old, new = rule.split("=")
        return old.strip(), new.strip()
    raise _bad(str(rule), f"a {name} rule is OLD=NEW (or a pair)")


@dataclass(frozen=True)
class PrefixMap:
    """``old`` -> ``new``: an address in ``old`` keeps its bits below ``new``'s prefix length."""

    old: Network
    new: Network

    @classmethod
    def parse(cls, rule: object) -> PrefixMap:
        text = rule if isinstance(rule, str) else "=".join(map(str, rule)) if isinstance(rule, (tuple, list)) \
            else repr(rule)
        old, new = _pair(rule, "address map")
        try:
            a, b = ipaddress.ip_network(old, strict=False), ipaddress.ip_network(new, strict=False)
        except ValueError as exc:
            raise _bad(text, f"not an address or CIDR prefix ({exc})") from None
        if a.version != b.version:
            raise _bad(text, f"maps an IPv{a.version} prefix to an IPv{b.version} one", Code.BAD_ADDRESS)
        return cls(a, b)

    def apply(self, address: int) -> int:
        """The mapped address (an int of the family's width)."""
        host = int(self.new.hostmask)
        return int(self.new.network_address) | (address & host)

    def __str__(self) -> str:
        return f"{self.old}={self.new}"


@dataclass(frozen=True)
class PortMap:
    """Port ``old`` -> ``new`` in the headers of ``proto`` (an IP protocol number; None: TCP, UDP, UDP-Lite, DCCP)."""

    proto: int | None
    old: int
    new: int

    @classmethod
    def parse(cls, rule: object) -> PortMap:
        text = str(rule)
        proto: int | None = None
        if isinstance(rule, str) and ":" in rule:
            name, rule = rule.split(":", 1)
            proto = _PORT_PROTOCOLS.get(name.strip().lower())
            if proto is None:
                raise _bad(text, f"unknown protocol {name!r} (one of {', '.join(_PORT_PROTOCOLS)})")
        try:
            old, new = _pair(rule, "port map")
        except CsumValueError:
            raise _bad(text, "a port map rule is [tcp|udp|udplite|dccp:]OLD=NEW") from None
        try:
            a, b = int(old, 10), int(new, 10)
        except ValueError:
            raise _bad(text, "ports are decimal numbers") from None
        if not (0 <= a <= 0xFFFF and 0 <= b <= 0xFFFF):
            raise _bad(text, "ports are 0..65535")
        return cls(proto, a, b)


def _int(value: object, name: str, lo: int, hi: int) -> int:
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            raise _bad(f"{name}={value}", "not a number") from None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _bad(f"{name}={value}", f"{name} is a number in {lo}..{hi}")
    return value


def _mac(value: object, name: str) -> bytes:
    if not isinstance(value, str) or not _MAC.match(value.strip()):
        raise _bad(f"{name}={value}", "a MAC address is six hex bytes (02:00:5e:00:53:01)")
    return bytes.fromhex(value.strip().replace(":", "").replace("-", ""))


def _macs(value: object, name: str) -> tuple[tuple[bytes | None, bytes], ...]:
    """A MAC rule: ``MAC`` (every frame) or ``OLD=NEW`` (frames with OLD), one or a list."""
    out: list[tuple[bytes | None, bytes]] = []
    for rule in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(rule, tuple) and len(rule) == 2 and isinstance(rule[1], bytes):  # already parsed
            out.append(rule)
        elif isinstance(rule, str) and "=" in rule:
            old, new = _pair(rule, name)
            out.append((_mac(old, name), _mac(new, name)))
        else:
            out.append((None, _mac(rule, name)))
    olds = [old for old, _ in out]
    if len(set(olds)) != len(olds) or (None in olds and len(olds) > 1):
        raise _bad(f"{name}={value}", "sets the same MAC address twice", Code.OVERLAPPING_RULES)
    return tuple(out)


def _check_overlaps(maps: Iterable[PrefixMap], what: str) -> None:
    seen: list[PrefixMap] = []
    for m in maps:
        for other in seen:
            if m.old.version == other.old.version and m.old.overlaps(other.old):
                raise CsumValueError(f"rules {str(other)!r} and {str(m)!r}: the {what} prefixes overlap",
                                     code=Code.OVERLAPPING_RULES)
        seen.append(m)


def _key(value: object) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        key = bytes(value)
    elif isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
        key = bytes.fromhex(value.strip())
    else:
        raise _bad("anonymize=...", "the Crypto-PAn key is 32 bytes: 64 hex digits")
    if len(key) != 32:
        raise _bad("anonymize=...", f"the Crypto-PAn key is 32 bytes, got {len(key)}")
    return key


@dataclass(frozen=True)
class Rules:
    """A capture rewrite: which fields of which headers change, and to what (see the module docstring).

    Address and port rules are lists of ``OLD=NEW`` strings or (old, new) pairs; ``ttl`` sets the TTL / hop limit
    (0..255) or, negative, decrements it (-1: as a router does); ``dscp`` (0..63), ``ecn`` (0..3) set those bits of
    the IPv4 TOS byte and the IPv6 traffic class, ``tclass`` (0..255) the whole IPv6 traffic class, ``flowlabel``
    (0..0xfffff) the IPv6 flow label; ``mac_src`` / ``mac_dst``: a MAC for every frame or OLD=NEW, on the outer
    Ethernet header; ``vlan_retag``: VLAN ID OLD=NEW on its 802.1Q / 802.1ad tags; ``anonymize``: a 32-byte
    Crypto-PAn key (bytes or 64 hex digits) for the addresses no map matches; ``level``: outer, inner or all;
    ``truncate``: an MTU (68..65535): frames with more layer-3 bytes are cut to it (csum/rewrite/truncate.py).
    """

    map_ip: tuple[PrefixMap, ...] = ()
    map_src: tuple[PrefixMap, ...] = ()
    map_dst: tuple[PrefixMap, ...] = ()
    map_port: tuple[PortMap, ...] = ()
    ttl: int | None = None
    dscp: int | None = None
    ecn: int | None = None
    tclass: int | None = None
    flowlabel: int | None = None
    mac_src: tuple[tuple[bytes | None, bytes], ...] = ()
    mac_dst: tuple[tuple[bytes | None, bytes], ...] = ()
    vlan_retag: tuple[tuple[int, int], ...] = ()
    anonymize: bytes | None = None
    level: Level = "all"
    truncate: int | None = None
    _cryptopan: CryptoPAn | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = object.__setattr__
        for name in ("map_ip", "map_src", "map_dst"):
            put(self, name, tuple(m if isinstance(m, PrefixMap) else PrefixMap.parse(m) for m in _list(getattr(self, name))))
        put(self, "map_port", tuple(m if isinstance(m, PortMap) else PortMap.parse(m) for m in _list(self.map_port)))
        _check_overlaps(self.map_ip + self.map_src, "source")
        _check_overlaps(self.map_ip + self.map_dst, "destination")
        ports = [(m.proto, m.old) for m in self.map_port]
        for proto, old in ports:
            if ports.count((proto, old)) > 1 or (proto is not None and (None, old) in ports):
                raise CsumValueError(f"port {old} is mapped twice", code=Code.OVERLAPPING_RULES)
        if self.ttl is not None:
            put(self, "ttl", _int(self.ttl, "ttl", -255, 255))
        for name, hi in (("dscp", 63), ("ecn", 3), ("tclass", 255), ("flowlabel", 0xFFFFF)):
            if getattr(self, name) is not None:
                put(self, name, _int(getattr(self, name), name, 0, hi))
        if self.tclass is not None and (self.dscp is not None or self.ecn is not None):
            raise CsumValueError("tclass sets the whole traffic class: give it or dscp/ecn, not both",
                                 code=Code.OVERLAPPING_RULES)
        for name in ("mac_src", "mac_dst"):
            value = getattr(self, name)
            if value:
                put(self, name, _macs(value, name.replace("_", "-")))
        retag = []
        for rule in _list(self.vlan_retag):
            was, now = _pair(rule, "VLAN retag")
            retag.append((_int(was, "vlan", 0, table.VLAN_VID_MASK), _int(now, "vlan", 0, table.VLAN_VID_MASK)))
        if len({vid for vid, _ in retag}) != len(retag):
            raise CsumValueError("a VLAN ID is retagged twice", code=Code.OVERLAPPING_RULES)
        put(self, "vlan_retag", tuple(retag))
        if self.anonymize is not None:
            put(self, "anonymize", _key(self.anonymize))
            put(self, "_cryptopan", CryptoPAn(self.anonymize))
        if self.level not in LEVELS:
            raise _bad(f"level={self.level}", "level is outer, inner or all")
        if self.truncate is not None:
            put(self, "truncate", _int(self.truncate, "truncate", MIN_MTU, MAX_MTU))

    @classmethod
    def from_mapping(cls, doc: Mapping[str, Any], *, base: Path | None = None) -> Rules:
        """Rules from a TOML document's keys (``map-ip = ["10.0.0.0/8=192.168.0.0/16"]``, ``ttl = -1`` ...: the
        option names of ``csum rewrite`` without their dashes; an address or port map may also be a table
        ``OLD = "NEW"``); ``anonymize-key-file`` is read relative to ``base``."""
        kwargs: dict[str, Any] = {}
        for key, value in doc.items():
            name = str(key).replace("-", "_")
            if name == "anonymize_key_file":
                kwargs["anonymize"] = read_key(Path(base or ".") / str(value))
                continue
            if name == "anonymize_key":
                name = "anonymize"
            if name not in _FIELDS:
                raise CsumValueError(f"rules: unknown key {key!r} (one of {', '.join(_NAMES)})", code=Code.BAD_RULE)
            if isinstance(value, Mapping):
                value = [f"{k}={v}" for k, v in value.items()]
            kwargs[name] = value
        return cls(**kwargs)

    @classmethod
    def from_toml(cls, path: str | Path) -> Rules:
        """Rules from a TOML file (see :meth:`from_mapping`); OSError propagates, a bad file is ``bad-rule``."""
        import tomllib  # only for a rules file: ``csum rewrite`` with options alone starts without it

        path = Path(path)
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CsumValueError(f"rules file {str(path)!r} is not TOML: {exc}", code=Code.BAD_RULE) from None
        return cls.from_mapping(doc, base=path.parent)

    def merged(self, **changes: Any) -> Rules:
        """These rules with ``changes`` (lists added to this one's, other values replaced): a file plus options."""
        kwargs = {name: getattr(self, name) for name in _FIELDS}
        for name, value in changes.items():
            if name in ("map_ip", "map_src", "map_dst", "map_port", "mac_src", "mac_dst", "vlan_retag"):
                kwargs[name] = tuple(kwargs[name]) + tuple(_list(value))
            elif value is not None:
                kwargs[name] = value
        return Rules(**kwargs)

    # --- what the rules do to one field ---------------------------------------------------------------------------

    @property
    def changes_addresses(self) -> bool:
        return bool(self.map_ip or self.map_src or self.map_dst or self.anonymize)

    def address(self, packed: bytes, source: bool) -> bytes:
        """The new value of a source (``source``) or destination address, 4 or 16 network-order bytes."""
        version = 4 if len(packed) == 4 else 6
        value = int.from_bytes(packed, "big")
        for m in self.map_ip + (self.map_src if source else self.map_dst):
            if m.old.version == version and value & int(m.old.netmask) == int(m.old.network_address):
                return m.apply(value).to_bytes(len(packed), "big")
        if self._cryptopan is not None:
            return self._cryptopan.anonymize_packed(packed)
        return packed

    def port(self, proto: int, port: int) -> int:
        for m in self.map_port:
            if m.old == port and (m.proto is None or m.proto == proto):
                return m.new
        return port

    def hop(self, ttl: int) -> int | None:
        """The new TTL / hop limit (None: a decrement below 0, which a router would not forward: left as it is)."""
        if self.ttl is None or self.ttl >= 0:
            return ttl if self.ttl is None else self.ttl
        return ttl + self.ttl if ttl + self.ttl >= 0 else None

    def traffic_class(self, value: int, version: int) -> int:
        """The new IPv4 TOS / IPv6 traffic class byte."""
        if self.tclass is not None and version == 6:
            return self.tclass
        if self.dscp is not None:
            value = (self.dscp << 2) | (value & 3)
        if self.ecn is not None:
            value = (value & ~3) | self.ecn
        return value

    def mac(self, packed: bytes, source: bool) -> bytes:
        for old, new in self.mac_src if source else self.mac_dst:
            if old is None or old == packed:
                return new
        return packed

    def vlan(self, vid: int) -> int:
        return next((new for old, new in self.vlan_retag if old == vid), vid)

    def levels(self, depth: int) -> bool:
        """Whether the rules apply to an IP header at ``depth`` (0: the outermost)."""
        return self.level == "all" or (self.level == "outer") == (depth == 0)


def _list(value: object) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or (isinstance(value, tuple) and len(value) == 2 and all(
            isinstance(x, int) or (isinstance(x, str) and "=" not in x) for x in value)):
        return [value]  # one rule, or one (old, new) pair
    return list(value)  # type: ignore[call-overload]


def read_key(path: str | Path) -> bytes:
    """A Crypto-PAn key file: 32 raw bytes, or 64 hex digits (with surrounding white space)."""
    data = Path(path).read_bytes()
    if len(data) == 32:
        return data
    try:
        return _key(data.decode("ascii").strip())
    except UnicodeDecodeError:
        raise _bad(f"anonymize-key-file={path}", "the key file holds 32 bytes or 64 hex digits") from None


_FIELDS = [f for f in Rules.__dataclass_fields__ if not f.startswith("_")]
_NAMES = [f.replace("_", "-") for f in _FIELDS] + ["anonymize-key", "anonymize-key-file"]
