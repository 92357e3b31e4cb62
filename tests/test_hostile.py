"""Every public function, fed hostile arguments: a right answer or a ``CsumError`` naming the argument (issue 26).

For each function of the public surface (``__all__`` of ``csum`` and of each public module, docs/design.md
"Public paths", plus :class:`csum.Profile`'s methods, :class:`csum.Checksum` and :class:`csum.skb.Skb`),
:data:`SPECS` holds one valid call and the kind of each argument. Each argument in turn is replaced by a
hostile value (None, str, float, bool, negative and huge ints, numpy scalars of every dtype, numpy arrays of
wrong shape/dtype, odd-length bytes, memoryviews, objects whose ``__index__``/``__len__`` raise, nested lists)
with the others left valid, and the call must either

* raise a :class:`csum.errors.CsumError` whose message names the argument, when the value has no valid
  equivalent for that argument's kind; or
* return the same result as the call with the equivalent valid value, when it has one (``np.uint16(5)``
  for an int argument is ``5``; a memoryview or a uint8 array of bytes for a buffer is those bytes).

Never another exception, never silence. The expected results come from csum itself on the equivalent
plain value (the equivalence is the property under test; the plain values' answers are tested against
scapy/RFC oracles in the modules' own tests).

:data:`POOL` is the fixed list run on every argument of every function (the floor: more than the
issue's 602 calls); :func:`test_hostile_property` adds hypothesis-drawn values (random ints, text,
floats, numpy scalars of random dtype and value, numpy arrays of random dtype and shape).

Measured before the fixes of issue 26 (this module's fixed pool run against main at c72cdd4): 4,257 of the
14,404 pool calls failed, on 210 of the 554 (function, argument) pairs: 1,153 accepted a wrong value, 1,331
refused an equivalent (numpy integers as ints above all), 1,442 raised another exception than a CsumError
(TypeError, AttributeError, IndexError, numpy's "truth value is ambiguous" ...) and 331 raised one whose
message did not name the argument. The named tests at the end are the issue's own examples.

Left out, with the reason (:data:`EXCLUDED`): functions with side effects (the running kernel, files,
a Dask cluster, global state) and classes whose constructors are records filled by csum itself.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import ipaddress
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

import csum
import csum.batch
import csum.crossarch
import csum.dask
import csum.inet
import csum.layers
import csum.pcap
import csum.profiles
import csum.prog
import csum.rewrite
import csum.scan
import csum.skb
import csum.testing
from csum.errors import Code, CsumError

UDP4 = bytes(IP(src="192.0.2.1", dst="192.0.2.2", ttl=9) / UDP(sport=1, dport=2) / b"data")
FRAME = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2", ttl=9)
              / TCP(sport=1000, dport=80) / b"payload!")
FRAME6 = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
               / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=53, dport=5353) / b"abc")
pytestmark = pytest.mark.filterwarnings("ignore::csum.errors.BpfMisuse")  # hostile flags are misuse too
NONE = object()  # "no valid equivalent": the call must raise a CsumError naming the argument


# --- argument kinds: what a value is equivalent to, for that argument ----------------------------------------------

def _int_of(value: Any) -> Any:
    """``value`` as a Python int when it is an int or a numpy integer scalar (never a bool), else NONE."""
    if isinstance(value, (bool, np.bool_, np.timedelta64)):  # a timedelta64 is a numpy "integer", not a number
        return NONE
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    return NONE


@dataclasses.dataclass(frozen=True)
class Int:
    """An int in ``lo..hi`` (numpy integer scalars are ints)."""

    lo: int
    hi: int

    def equiv(self, value: Any) -> Any:
        v = _int_of(value)
        return v if v is not NONE and self.lo <= v <= self.hi else NONE


def U(bits: int) -> Int:
    return Int(0, (1 << bits) - 1)


@dataclasses.dataclass(frozen=True)
class Buf:
    """A C-contiguous bytes-like object of one of ``sizes`` bytes (any, when empty): equivalent to its bytes.

    A numpy scalar (datetime64 and timedelta64 too, whose buffer is 1-D) or a 0-d array is a number, not a buffer;
    numpy's ``bytes_`` is a ``bytes``."""

    sizes: tuple[int, ...] = ()
    writable: bool = False

    def equiv(self, value: Any) -> Any:
        if isinstance(value, np.bytes_):
            return self.equiv(bytes(value))
        if isinstance(value, (str, np.generic)) or getattr(value, "ndim", 1) == 0:
            return NONE
        try:
            view = memoryview(value)
        except TypeError:
            return NONE
        if not view.c_contiguous or (self.writable and view.readonly):
            return NONE
        data = view.tobytes()
        if self.sizes and len(data) not in self.sizes:
            return NONE
        return bytearray(data) if self.writable else data


@dataclasses.dataclass(frozen=True)
class Either:
    """One of several kinds (the first that has an equivalent)."""

    kinds: tuple[Any, ...]

    def equiv(self, value: Any) -> Any:
        for kind in self.kinds:
            v = kind.equiv(value)
            if v is not NONE:
                return v
        return NONE


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of a set of values (strs, ints compared by value)."""

    values: tuple[Any, ...]

    def equiv(self, value: Any) -> Any:
        if isinstance(value, str):
            return str(value) if value in self.values else NONE
        v = _int_of(value)
        return v if v is not NONE and v in self.values else NONE


class Bool:
    """True or False (numpy's bool too); never a str, an int or None."""

    @staticmethod
    def equiv(value: Any) -> Any:
        return bool(value) if isinstance(value, (bool, np.bool_)) else NONE


class Str:
    """Any str."""

    @staticmethod
    def equiv(value: Any) -> Any:
        return str(value) if isinstance(value, str) else NONE


class Exact:
    """Only the valid value itself (a Profile, a list of Fields ...): anything in the pool is refused."""

    def __init__(self, *ok: Any) -> None:
        self.ok = ok

    def equiv(self, value: Any) -> Any:
        return value if any(value is o for o in self.ok) else NONE


@dataclasses.dataclass(frozen=True)
class Row:
    """``n`` ints of ``bits`` bits, one per packet (a list, tuple or 1-D integer array): the list of them."""

    n: int
    bits: int = 32

    def equiv(self, value: Any) -> Any:
        if not isinstance(value, (list, tuple, np.ndarray)) or getattr(value, "ndim", 1) != 1 \
                or len(value) != self.n:
            return NONE
        if isinstance(value, np.ndarray) and value.dtype.kind not in "iu":
            return NONE
        items = [U(self.bits).equiv(v) for v in value]
        return NONE if any(v is NONE for v in items) else items


class Packets2d:
    """A 2-D uint8 numpy array (one packet per row)."""

    @staticmethod
    def equiv(value: Any) -> Any:
        ok = isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim == 2
        return value if ok else NONE


@dataclasses.dataclass(frozen=True)
class Seq:
    """Any iterable (not a str or a buffer) of ``kind``: equivalent to the list of its items' equivalents."""

    kind: Any

    def equiv(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, bytearray, memoryview, np.generic)):  # np.void iterates, as nothing
            return NONE
        try:
            items = [self.kind.equiv(v) for v in value]
        except Exception:  # noqa: BLE001  (not iterable, or its __iter__ raises)
            return NONE
        return NONE if any(v is NONE for v in items) else items


@dataclasses.dataclass(frozen=True)
class Addr:
    """An IPv4 (4) or IPv6 (16) address: its text, an ipaddress object or its bytes; IPv4 also a __be32 int."""

    size: int
    be32: bool = True

    def equiv(self, value: Any) -> Any:
        if isinstance(value, (str, ipaddress.IPv4Address, ipaddress.IPv6Address)):
            try:
                packed = ipaddress.ip_address(value).packed
            except ValueError:
                return NONE
            return packed if len(packed) == self.size else NONE
        if self.size == 4 and self.be32 and U(32).equiv(value) is not NONE:
            return int(value).to_bytes(4, "little")
        return Buf((self.size,)).equiv(value)


@dataclasses.dataclass(frozen=True)
class Optional_:
    """None (the default) or ``kind``."""

    kind: Any

    def equiv(self, value: Any) -> Any:
        return None if value is None else self.kind.equiv(value)


LINK = Either((Choice(("auto", "ethernet", "ether", "ip")), Int(0, (1 << 31) - 1)))
PROFILE_NAME = Choice(tuple(csum.profile_names()) + ("amd64", "aarch64"))
RELEASE = Choice(("5.10", "6.6", "4.19"))


# --- the functions -----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Spec:
    """One function: a valid call (``args`` made fresh for each call) and each argument's kind."""

    fn: Callable[..., Any]
    args: Callable[[], dict[str, Any]]
    kinds: dict[str, Any]
    positional: tuple[str, ...] = ()

    def call(self, args: dict[str, Any]) -> Any:
        pos = [args[n] for n in self.positional]
        return self.fn(*pos, **{k: v for k, v in args.items() if k not in self.positional})


def _spec(fn: Callable[..., Any], positional: str, **kinds: tuple[Any, Any]) -> Spec:
    """``kinds``: name -> (valid value or a zero-argument factory marked by :func:`fresh`, kind)."""
    kinds = {n: (v, Exact(v) if isinstance(k, Exact) and not k.ok else k) for n, (v, k) in kinds.items()}

    def args() -> dict[str, Any]:
        return {n: (v.make() if isinstance(v, fresh) else v) for n, (v, _) in kinds.items()}
    return Spec(fn, args, {n: k for n, (_, k) in kinds.items()}, tuple(positional.split()))


class fresh:
    """A valid value made anew for each call (a packet edited in place)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def _pkt() -> bytearray:
    return bytearray(FRAME)


P = csum.profile("x86_64")
PBE = csum.profile("s390x")
W32, W16, BE16, BE32 = (0x1234ABCD, U(32)), (0x1C46, U(16)), (0x5000, U(16)), (0x010200C0, U(32))
DATA = (UDP4, Buf())
SEED = (7, U(32))
ALIGN = (0, Int(0, 7))
ADDR4 = ("192.0.2.1", Addr(4))
ADDR6 = ("2001:db8::1", Addr(16))
PSEUDO = dict(saddr=ADDR4, daddr=("192.0.2.2", Addr(4)), length=(12, U(32)), proto=(17, U(8)), wsum=SEED)
PSEUDO6 = dict(saddr=ADDR6, daddr=("2001:db8::2", Addr(16)), length=(12, U(32)), proto=(17, U(8)), wsum=SEED)
FIELD = Either((U(64), Buf((2, 4))))
FLAGS = (0x12, U(64))
FIELDS = csum.layers.walk(memoryview(FRAME)).fields


def _checksum_update(chunk: Any) -> int:
    c = csum.Checksum(b"abc")
    c.update(chunk)
    return c.value


SPECS: dict[str, Spec] = {
    "csum.csum_partial": _spec(csum.csum_partial, "buf", buf=DATA, seed=SEED, align=ALIGN),
    "csum.do_csum": _spec(csum.do_csum, "buf", buf=DATA),
    "csum.internet_checksum": _spec(csum.internet_checksum, "buf", buf=DATA),
    "csum.internet_checksum_bytes": _spec(csum.internet_checksum_bytes, "buf", buf=DATA),
    "csum.ip_compute_csum": _spec(csum.ip_compute_csum, "buf", buf=DATA),
    "csum.ip_compute_csum_bytes": _spec(csum.ip_compute_csum_bytes, "buf", buf=DATA),
    "csum.verify_checksum": _spec(csum.verify_checksum, "buf", buf=DATA),
    "csum.ip_fast_csum": _spec(csum.ip_fast_csum, "iph ihl", iph=(UDP4[:20], Buf()), ihl=(5, Int(5, 5))),
    "csum.ip_fast_csum_bytes": _spec(csum.ip_fast_csum_bytes, "iph ihl", iph=(UDP4[:20], Buf()), ihl=(5, Int(5, 5))),
    "csum.internet_checksum_iov": _spec(csum.internet_checksum_iov, "buffers",
                                        buffers=([UDP4[:3], UDP4[3:]], Seq(Buf()))),
    "csum.csum_add": _spec(csum.csum_add, "a b", a=W32, b=SEED),
    "csum.csum_sub": _spec(csum.csum_sub, "a b", a=W32, b=SEED),
    "csum.csum16_add": _spec(csum.csum16_add, "csum addend", csum=W16, addend=BE16),
    "csum.csum16_sub": _spec(csum.csum16_sub, "csum addend", csum=W16, addend=BE16),
    "csum.csum_block_add": _spec(csum.csum_block_add, "csum csum2 offset", csum=W32, csum2=SEED,
                                 offset=(3, U(63))),
    "csum.csum_block_sub": _spec(csum.csum_block_sub, "csum csum2 offset", csum=W32, csum2=SEED,
                                 offset=(3, U(63))),
    "csum.csum_shift": _spec(csum.csum_shift, "wsum offset", wsum=W32, offset=(3, U(63))),
    "csum.csum_fold": _spec(csum.csum_fold, "wsum", wsum=W32),
    "csum.csum_fold_bytes": _spec(csum.csum_fold_bytes, "wsum", wsum=W32),
    "csum.csum_neg": _spec(csum.csum_neg, "wsum", wsum=W32),
    "csum.csum_unfold": _spec(csum.csum_unfold, "sum16", sum16=W16),
    "csum.from32to16": _spec(csum.from32to16, "x", x=W32),
    "csum.from64to32": _spec(csum.from64to32, "x", x=(0x1234ABCD5678, U(64))),
    "csum.csum_replace2": _spec(csum.csum_replace2, "sum16 old new", sum16=W16, old=BE16, new=(0x5100, U(16))),
    "csum.csum_replace4": _spec(csum.csum_replace4, "sum16 frm to", sum16=W16, frm=BE32, to=(0x020200C0, U(32))),
    "csum.csum_replace_by_diff": _spec(csum.csum_replace_by_diff, "sum16 diff", sum16=W16, diff=SEED),
    "csum.csum_tcpudp_nofold": _spec(csum.csum_tcpudp_nofold, "saddr daddr length proto", **PSEUDO),
    "csum.csum_tcpudp_magic": _spec(csum.csum_tcpudp_magic, "saddr daddr length proto", **PSEUDO),
    "csum.csum_tcpudp_magic_bytes": _spec(csum.csum_tcpudp_magic_bytes, "saddr daddr length proto", **PSEUDO),
    "csum.csum_ipv6_magic": _spec(csum.csum_ipv6_magic, "saddr daddr length proto", **PSEUDO6),
    "csum.csum_ipv6_magic_bytes": _spec(csum.csum_ipv6_magic_bytes, "saddr daddr length proto", **PSEUDO6),
    "csum.bpf_csum_diff": _spec(csum.bpf_csum_diff, "frm to seed", frm=(b"abcd", Buf()), to=(b"efgh", Buf()),
                                seed=SEED, frm_align=ALIGN, to_align=ALIGN),
    "csum.bpf_csum_diff_legacy": _spec(csum.bpf_csum_diff_legacy, "frm to seed", frm=(b"abcd", Buf()),
                                       to=(b"efgh", Buf()), seed=SEED),
    "csum.inet_proto_csum_replace16": _spec(csum.inet_proto_csum_replace16, "sum16 frm to", sum16=W16,
                                            frm=(bytes(range(16)), Buf((16,))), to=(bytes(16), Buf((16,)))),
    "csum.bpf_l3_csum_replace": _spec(csum.bpf_l3_csum_replace, "pkt offset frm to flags",
                                      pkt=(fresh(_pkt), Buf(writable=True)), offset=(24, U(32)),
                                      frm=(b"\x0a\x00", FIELD), to=(b"\x0b\x00", FIELD), flags=(2, U(64))),
    "csum.bpf_l4_csum_replace": _spec(csum.bpf_l4_csum_replace, "pkt offset frm to flags",
                                      pkt=(fresh(_pkt), Buf(writable=True)), offset=(50, U(32)),
                                      frm=(b"\x03\xe8", FIELD), to=(b"\x03\xe9", FIELD), flags=(2, U(64)),
                                      ip_summed=(0, Int(0, 3))),
    "csum.profile": _spec(csum.profile, "name", name=("x86_64", PROFILE_NAME),
                          kernel=("5.10", Optional_(RELEASE))),
    "csum.compare": _spec(csum.compare, "buf", buf=(UDP4[:8], Buf()), seed=SEED,
                          profiles=(["x86_64", "s390x"], Optional_(Seq(PROFILE_NAME))), align=ALIGN),
    "csum.Checksum": _spec(csum.Checksum, "data", data=DATA, seed=SEED),
    "csum.Checksum.update": _spec(_checksum_update, "chunk", chunk=(b"de", Buf())),
    "csum.batch.internet_checksums": _spec(csum.batch.internet_checksums, "packets2d",
                                           packets2d=(np.frombuffer(UDP4[:8], np.uint8).reshape(2, 4),
                                                      Packets2d)),
    "csum.batch.internet_checksums_ragged": _spec(csum.batch.internet_checksums_ragged, "buf offsets lengths",
                                                  buf=DATA, offsets=([0, 4], Row(2, 63)), lengths=([4, 8], Row(2, 63))),
    "csum.batch.csum_partials": _spec(csum.batch.csum_partials, "packets2d",
                                      packets2d=(np.frombuffer(UDP4[:8], np.uint8).reshape(2, 4), Packets2d),
                                      seed=(7, Either((U(32), Row(2)))), profile=("x86_64", PROFILE_NAME),
                                      kernel=(None, Optional_(RELEASE)), align=ALIGN),
    "csum.crossarch.field16": _spec(csum.crossarch.field16, "value endian", value=W32,
                                    endian=("little", Choice(("little", "big")))),
    "csum.crossarch.compare_function": _spec(csum.crossarch.compare_function, "function",
                                             function=("csum_tcpudp_magic", Choice(csum.crossarch.FUNCTIONS)),
                                             data=(UDP4[:20], Buf()), seed=SEED, saddr=(bytes(4), Addr(4)),
                                             daddr=(bytes([1, 2, 3, 4]), Addr(4)), length=(12, U(32)),
                                             proto=(17, U(8)), profiles=(["x86_64", "s390x"], Optional_(Seq(PROFILE_NAME)))),
    "csum.crossarch.align_dependence": _spec(csum.crossarch.align_dependence, "p frm to seed", p=(P, Exact(P)),
                                             frm=(b"abcd", Buf()), to=(b"efgh", Buf()), seed=SEED),
    "csum.inet.verify": _spec(csum.inet.verify, "packet", packet=(FRAME, Buf()), link=("auto", LINK),
                              udp6_zero_ok=(False, Bool)),
    "csum.inet.compute": _spec(csum.inet.compute, "packet layer", packet=(FRAME, Buf()),
                               layer=("tcp", Optional_(Choice(("tcp", "ipv4")))), link=("auto", LINK)),
    "csum.layers.walk": _spec(csum.layers.walk, "buf", buf=(FRAME, Buf()), link=("auto", LINK),
                              wire_len=(None, Optional_(Int(0, (1 << 63) - 1))), strict=(False, Bool)),
    "csum.layers.layout": _spec(csum.layers.layout, "buf", buf=(FRAME, Buf()), link=("auto", LINK)),
    "csum.layers.verify_stack": _spec(csum.layers.verify_stack, "buf fields", buf=(FRAME, Buf()),
                                      fields=(FIELDS, Seq(Exact(*FIELDS))), udp6_zero_ok=(False, Bool)),
    "csum.layers.corrections": _spec(csum.layers.corrections, "buf fields", buf=(FRAME, Buf()),
                                     fields=(FIELDS, Seq(Exact(*FIELDS))), every=(False, Bool), embedded=(False, Bool)),
    "csum.layers.protocol_name": _spec(csum.layers.protocol_name, "proto", proto=(17, U(8))),
    "csum.rewrite.rewrite": _spec(csum.rewrite.rewrite, "packet", packet=(FRAME, Buf()),
                                  saddr=("10.0.0.5", Optional_(Addr(4, be32=False))), sport=(2000, Optional_(U(16))),
                                  dport=(None, Optional_(U(16))), decrement_ttl=(True, Bool),
                                  link=("auto", LINK), inplace=(False, Bool), arch=("generic", Either((PROFILE_NAME, Exact(P))))),
    "csum.rewrite.set_field": _spec(csum.rewrite.set_field, "packet offset new", packet=(FRAME, Buf()),
                                    offset=(36, Int(0, len(FRAME) - 2)), new=(b"\x00\x07", Buf((2, 4))),
                                    pseudo_header=(False, Bool),
                                    link=("auto", LINK), inplace=(False, Bool)),
    "csum.pcap.parse": _spec(csum.pcap.parse, "data", data=(csum.pcap.to_bytes([FRAME]), Buf())),
    "csum.pcap.to_bytes": _spec(csum.pcap.to_bytes, "frames", frames=([FRAME], Seq(Buf())),
                                linktype=(1, U(32))),
    "csum.profiles.profile_for_machine": _spec(csum.profiles.profile_for_machine, "machine",
                                               machine=("x86_64", Str),
                                               byteorder=("little", Choice(("little", "big")))),
    "csum.skb.Skb": _spec(csum.skb.Skb, "data", data=(FRAME, Buf()), ip_summed=(0, Int(0, 3)), csum=SEED,
                          csum_level=(0, Int(0, 3)), network_offset=(14, Int(0, len(FRAME))), align=ALIGN,
                          arch=("generic", Either((PROFILE_NAME, Exact(P))))),
}

_GEN = csum._generic_le  # the generic csum_partial as csum.bpf's helpers take it (a PartialFn)
_CAP = csum.pcap.parse(csum.pcap.to_bytes([FRAME]))
_PATCH = (40 + 24, b"\x0b\x00")
_STACK = csum.layers.walk(memoryview(FRAME))
SPECS.update({
    "csum.layers.evaluate": _spec(csum.layers.evaluate, "buf f", buf=(FRAME, Buf()), f=(FIELDS[0], Exact()),
                                  udp6_zero_ok=(False, Bool)),
    "csum.layers.outer_layer": _spec(csum.layers.outer_layer, "stack", stack=(_STACK, Exact())),
    "csum.pcap.patched": _spec(csum.pcap.patched, "capture patches", capture=(_CAP, Exact()),
                               patches=([_PATCH], Seq(Exact(_PATCH)))),
    "csum.batch.ones_sums": _spec(csum.batch.ones_sums, "packets2d",
                                  packets2d=(np.frombuffer(UDP4[:8], np.uint8).reshape(2, 4), Packets2d),
                                  width=(32, Choice((16, 32))), byteorder=("big", Choice(("little", "big")))),
    "csum.batch.ones_sums_ragged": _spec(csum.batch.ones_sums_ragged, "buf offsets lengths", buf=DATA,
                                         offsets=([0, 4], Row(2, 63)), lengths=([4, 8], Row(2, 63)),
                                         width=(32, Choice((16, 32))), byteorder=("big", Choice(("little", "big")))),
    "csum.bpf.csum_diff": _spec(csum.bpf.csum_diff, "partial frm to seed", partial=(_GEN, Exact()),
                                frm=(b"abcd", Buf()), to=(b"efgh", Buf()), seed=SEED, frm_align=ALIGN,
                                to_align=ALIGN),
    "csum.bpf.csum_diff_legacy": _spec(csum.bpf.csum_diff_legacy, "partial frm to seed", partial=(_GEN, Exact()),
                                       frm=(b"abcd", Buf()), to=(b"efgh", Buf()), seed=SEED),
    "csum.bpf.inet_proto_csum_replace16": _spec(csum.bpf.inet_proto_csum_replace16, "partial sum16 frm to",
                                                partial=(_GEN, Exact()), sum16=W16,
                                                frm=(bytes(range(16)), Buf((16,))), to=(bytes(16), Buf((16,)))),
    "csum.bpf.l3_csum_replace_at": _spec(csum.bpf.l3_csum_replace_at, "pkt offset frm to flags",
                                         pkt=(fresh(_pkt), Buf(writable=True)), offset=(24, U(32)),
                                         frm=(b"\x0a\x00", FIELD), to=(b"\x0b\x00", FIELD), flags=(2, U(64)),
                                         misuse=(False, Bool)),
    "csum.bpf.l4_csum_replace_skb": _spec(csum.bpf.l4_csum_replace_skb, "pkt offset frm to flags ip_summed skb_csum",
                                          pkt=(fresh(_pkt), Buf(writable=True)), offset=(50, U(32)),
                                          frm=(b"\x03\xe8", FIELD), to=(b"\x03\xe9", FIELD), flags=(2, U(64)),
                                          ip_summed=(0, Int(0, 3)), skb_csum=SEED, misuse=(False, Bool)),
})

#: Profile methods, on a little- and a big-endian profile.
for _p in (P, PBE):
    _n = f"Profile({_p.name})"
    SPECS.update({
        f"{_n}.csum_partial": _spec(_p.csum_partial, "buf", buf=DATA, seed=SEED, align=ALIGN),
        f"{_n}.csum_fold": _spec(_p.csum_fold, "wsum", wsum=W32),
        f"{_n}.ip_fast_csum": _spec(_p.ip_fast_csum, "iph ihl", iph=(UDP4[:20], Buf()), ihl=(5, Int(5, 5))),
        f"{_n}.csum_tcpudp_nofold": _spec(_p.csum_tcpudp_nofold, "saddr daddr length proto", **PSEUDO),
        f"{_n}.csum_tcpudp_magic": _spec(_p.csum_tcpudp_magic, "saddr daddr length proto", **PSEUDO),
        f"{_n}.csum_ipv6_magic": _spec(_p.csum_ipv6_magic, "saddr daddr length proto", **PSEUDO6),
        f"{_n}.bpf_csum_diff": _spec(_p.bpf_csum_diff, "frm to seed", frm=(b"abcd", Buf()), to=(b"efgh", Buf()),
                                     seed=SEED, frm_align=ALIGN, to_align=ALIGN),
        f"{_n}.bpf_csum_diff_legacy": _spec(_p.bpf_csum_diff_legacy, "frm to seed", frm=(b"abcd", Buf()),
                                            to=(b"efgh", Buf()), seed=SEED),
        f"{_n}.inet_proto_csum_replace16": _spec(_p.inet_proto_csum_replace16, "sum16 frm to", sum16=W16,
                                                 frm=(bytes(range(16)), Buf((16,))), to=(bytes(16), Buf((16,)))),
        f"{_n}.at": _spec(_p.at, "kernel", kernel=("5.10", RELEASE)),
    })

# --- the functions that read or write files, and the strategies of csum.testing (issue 33) -----------------------
#: Their files live here; calls run with it as the working directory, so a hostile name ("x", "5") is a file there.
_DIR = Path(tempfile.mkdtemp(prefix="csum-hostile-"))
atexit.register(shutil.rmtree, _DIR, True)
_CAPTURE = str(_DIR / "in.pcap")
Path(_CAPTURE).write_bytes(csum.pcap.to_bytes([FRAME, FRAME6]))
_PROFILE_TOML = (Path(__file__).parents[1] / "arch_profiles" / "x86_64.toml").read_text()


class PathName:
    """A file name: a str without a NUL, or an ``os.PathLike``: its str."""

    @staticmethod
    def equiv(value: Any) -> Any:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        return str(value) if isinstance(value, str) and "\0" not in value else NONE


class Callable_:
    """Anything callable (None is the kind :class:`Optional_` adds)."""

    @staticmethod
    def equiv(value: Any) -> Any:
        return value if callable(value) else NONE


class _LocalClient:
    """A dask.distributed Client's map and gather, run here (what csum.dask.verify_files uses of a client)."""

    @staticmethod
    def map(fn: Callable[..., Any], items: list[Any], pure: bool = True, **kw: Any) -> list[Any]:
        return [fn(item, **kw) for item in items]

    @staticmethod
    def gather(futures: list[Any]) -> list[Any]:
        return futures


def _in_dir(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called with :data:`_DIR` as the working directory."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with contextlib.chdir(_DIR):
            return fn(*args, **kwargs)
    return call


def _drawn(make: Callable[..., Any]) -> Callable[..., Any]:
    """A strategy factory of csum.testing as a function of its arguments to three examples drawn with seed 0 (two
    strategies are the same when they draw the same)."""
    def call(*args: Any, **kwargs: Any) -> list[Any]:
        strategy = make(*args, **kwargs)
        out: list[Any] = []

        @hypothesis.seed(0)
        @settings(max_examples=3, database=None, deadline=None, suppress_health_check=list(hypothesis.HealthCheck),
                  phases=[hypothesis.Phase.generate])
        @given(strategy)
        def draw(value: Any) -> None:
            out.append(value)

        draw()
        return out
    return call


def _verify_frame(frame: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return csum.prog.verify_frame(frame)


_SCAN = csum.scan.scan(_CAPTURE)
_SCAN_OPTIONS = csum.scan.ScanOptions()
_JOBS = Int(1, 4 * len(os.sched_getaffinity(0)))
_CHUNK = (4096, Int(1, 1 << 30))
_OPTIONAL_CALLABLE = (None, Optional_(Callable_))
_PAYLOAD = (100, Int(0, csum.testing.MAX_PAYLOAD))
#: Specs run with the fixed pool only: hypothesis's text could name "-" (standard input or output), and the
#: strategies of csum.testing cannot be drawn from inside a test that hypothesis runs.
POOL_ONLY = {"csum.prog.sample_frames", "csum.scan.scan", "csum.scan.to_arrow", "csum.scan.to_pandas", "csum.pcap.read",
             "csum.rewrite.rewrite_capture", "csum.dask.verify_files", "csum.dask.to_dataframe"} | {
    f"csum.testing.{n}" for n in ("seeds", "u16s", "u32s", "aligns", "buffers", "field_changes", "chunked", "packets",
                                  "frames", "sample_packets")}
SPECS.update({
    "csum.scan.scan": _spec(_in_dir(csum.scan.scan), "name", name=(_CAPTURE, PathName), jobs=(1, _JOBS),
                            chunk_bytes=_CHUNK, sink=(None, Optional_(Exact())), keep_patches=(False, Bool),
                            progress=_OPTIONAL_CALLABLE, each=_OPTIONAL_CALLABLE, keep=(None, Optional_(Int(0, 2**63 - 1))),
                            transform=_OPTIONAL_CALLABLE, fix_embedded=(False, Bool), hosts=(False, Bool),
                            table=_OPTIONAL_CALLABLE, collect=_OPTIONAL_CALLABLE,
                            options=(None, Optional_(Exact(_SCAN_OPTIONS)))),
    # the options object checks each field as scan's keyword of the same name is checked
    "csum.scan.ScanOptions": _spec(csum.scan.ScanOptions, "", jobs=(1, _JOBS), chunk_bytes=_CHUNK,
                                   sink=(None, Optional_(Exact())), keep_patches=(False, Bool),
                                   progress=_OPTIONAL_CALLABLE, each=_OPTIONAL_CALLABLE,
                                   keep=(None, Optional_(Int(0, 2**63 - 1))), transform=_OPTIONAL_CALLABLE,
                                   fix_embedded=(False, Bool), hosts=(False, Bool), table=_OPTIONAL_CALLABLE,
                                   collect=_OPTIONAL_CALLABLE),
    "csum.scan.merged": _spec(csum.scan.merged, "scans", scans=([_SCAN], Seq(Exact(_SCAN))), name=("total", Str)),
    "csum.scan.to_arrow": _spec(_in_dir(csum.scan.to_arrow), "name", name=(_CAPTURE, PathName),
                                chunk_bytes=(None, Optional_(Int(1, 1 << 30)))),
    "csum.scan.to_pandas": _spec(_in_dir(csum.scan.to_pandas), "name", name=(_CAPTURE, PathName),
                                 chunk_bytes=(None, Optional_(Int(1, 1 << 30)))),
    "csum.pcap.read": _spec(_in_dir(csum.pcap.read), "path", path=(_CAPTURE, PathName), progress=_OPTIONAL_CALLABLE),
    "csum.rewrite.rewrite_capture": _spec(_in_dir(csum.rewrite.rewrite_capture), "src dst rules",
                                          src=(_CAPTURE, PathName), dst=("out.pcap", PathName),
                                          rules=(csum.rewrite.Rules(), Exact()), fix=(False, Bool), jobs=(1, _JOBS),
                                          chunk_bytes=_CHUNK, follow_symlinks=(False, Bool),
                                          progress=_OPTIONAL_CALLABLE),
    "csum.dask.verify_files": _spec(_in_dir(csum.dask.verify_files), "files client", files=([_CAPTURE], Seq(PathName)),
                                    client=(_LocalClient(), Exact()), chunk_bytes=_CHUNK),
    "csum.dask.to_dataframe": _spec(_in_dir(lambda files, **kw: csum.dask.to_dataframe(files, **kw).compute()), "files",
                                    files=([_CAPTURE], Seq(PathName)), chunk_bytes=_CHUNK),
    "csum.profiles.parse_profile": _spec(csum.profiles.parse_profile, "text path",
                                         text=(_PROFILE_TOML, Str), path=("x86_64.toml", Str)),
    "csum.prog.ethernet": _spec(csum.prog.ethernet, "packet", packet=(UDP4, Buf())),
    "csum.prog.verify_frame": _spec(_verify_frame, "frame", frame=(FRAME, Buf())),
    "csum.prog.summarize": _spec(csum.prog.summarize, "runs", runs=([], Seq(Exact()))),
    "csum.prog.sample_frames": _spec(csum.prog.sample_frames, "", count=(5, Int(1, 1_000_000)),
                                     seed=(0, Int(0, (1 << 64) - 1))),
    "csum.testing.seeds": _spec(_drawn(csum.testing.seeds), ""),
    "csum.testing.u16s": _spec(_drawn(csum.testing.u16s), ""),
    "csum.testing.u32s": _spec(_drawn(csum.testing.u32s), ""),
    "csum.testing.aligns": _spec(_drawn(csum.testing.aligns), ""),
    "csum.testing.buffers": _spec(_drawn(csum.testing.buffers), "", min_size=(0, Int(0, 1 << 20)),
                                  max_size=(20, Int(0, 1 << 20))),
    "csum.testing.field_changes": _spec(_drawn(csum.testing.field_changes), "width", width=(2, Int(1, 16))),
    "csum.testing.chunked": _spec(_drawn(csum.testing.chunked), "", data=(None, Optional_(Exact())),
                                  max_chunks=(5, Int(1, 10_000))),
    "csum.testing.packets": _spec(_drawn(csum.testing.packets), "", versions=((4, 6), Seq(Choice((4, 6)))),
                                  max_payload=_PAYLOAD),
    "csum.testing.frames": _spec(_drawn(csum.testing.frames), "", max_payload=_PAYLOAD),
    "csum.testing.sample_packets": _spec(csum.testing.sample_packets, "n", n=(2, Int(0, 1_000_000)),
                                         seed=(0, U(64)), max_payload=_PAYLOAD),
    "csum.testing.assert_checksums_ok": _spec(csum.testing.assert_checksums_ok, "packet", packet=(FRAME, Buf()),
                                              link=("auto", LINK), udp6_zero_ok=(False, Bool)),
})

#: What the hostile test leaves out, and why.
EXCLUDED = {
    "csum.kernel": "the running kernel through bpf(2) (side effects, privileges): tests/kernel",
    "csum.prog.load": "loads a user's BPF object into the running kernel: tests/kernel (its argument checks: "
                      "test_prog_load_checks_its_arguments)",
    "csum.prog.judge_program": "loads a user's BPF object into the running kernel (csum prog): tests/kernel",
    "csum.prog.across_kernels": "boots kernels under QEMU and loads a user's BPF object (csum prog --debian/--qemu/"
                                "--model): tests/kernel",
    "csum.prog.targets": "downloads Debian kernel packages (csum prog --debian): tests/kernel",
    "csum.profiles.reload_profiles": "global state (no arguments)",
    "csum.profile_names": "no arguments",
    "csum.profiles.profile_names": "no arguments",
    "csum.profiles.profile": "the function csum.profile (its spec)",
    "csum.crossarch.compare": "the function csum.compare (its spec)",
    "records": "dataclasses csum fills itself (Row, Result, Field, Stack, Scan, Capture ...): no checking of "
               "their fields",
}


class BadIndex:
    """An object whose ``__index__`` (and ``__int__``) raise: an int-like that is not one."""

    def __index__(self) -> int:
        raise RuntimeError("no index")

    __int__ = __index__


class BadLen:
    """An object whose ``__len__`` and ``__iter__`` raise."""

    def __len__(self) -> int:
        raise RuntimeError("no len")

    def __iter__(self) -> Any:
        raise RuntimeError("no iter")


_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
           np.float32, np.float64, np.complex64, np.bool_]

#: The fixed hostile pool: every value on every argument of every function.
POOL: list[Any] = [
    None, "", "5", "x", 1.0, 5.5, math.nan, math.inf, 1j, True, False, -1, 2**64, 2**70, -2**70, 10**40,
    *(t(5) for t in _DTYPES), np.int64(-1), np.uint64(2**64 - 1), np.array(5), np.arange(3),
    np.zeros((2, 2), np.uint8), np.zeros(0, np.uint8), np.arange(4, dtype=np.uint16), np.arange(8, dtype=np.uint8)[::2],
    np.array(["a", "b"]), b"\x01", b"\x01\x02\x03", b"", bytearray(b"\x00" * 20), memoryview(b"ab"),
    memoryview(b"abcdef")[::2], np.datetime64(5, "s"), np.timedelta64(5, "s"), np.datetime64("2020-01-01"),
    np.bytes_(b"ab"), np.void(b"abcd"), np.str_("5"), BadIndex(), BadLen(), [1, 2, 3], [[1, 2], [3]], [b"ab", None], (b"a",), {}, object(),
]


# --- the property -----------------------------------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001  (a comparison that raises is not the same)
        pass
    return repr(a) == repr(b)


#: What a function may raise besides a CsumError, for a value whose equivalent raises the same: a file that cannot be
#: read (OSError, as documented), a packet whose checksums are wrong (csum.testing.assert_checksums_ok).
DOCUMENTED = (OSError, AssertionError)


def _outcome(spec: Spec, arg: str, value: Any) -> tuple[type, Any] | None:
    """The class and code (errno, message) of the CsumError (or :data:`DOCUMENTED` error) the call with ``arg=value``
    raises, None when it returns."""
    args = spec.args()
    args[arg] = value
    try:
        spec.call(args)
    except CsumError as exc:
        return type(exc), exc.code
    except DOCUMENTED as exc:
        return type(exc), getattr(exc, "errno", None) or str(exc)
    return None


def _check(spec: Spec, arg: str, value: Any) -> str | None:
    """None when the call with ``arg=value`` behaves; else what went wrong, one line."""
    kind = spec.kinds[arg]
    want = kind.equiv(value)
    args = spec.args()
    args[arg] = value
    try:
        got = spec.call(args)
    except CsumError as exc:
        if want is not NONE:  # refused for its contents (a packet too short ...): so must its equivalent be
            if _outcome(spec, arg, want) != (type(exc), exc.code):
                return f"refused an equivalent of {want!r:.40}: {exc}"
            return None
        if arg not in str(exc):
            return f"CsumError without the argument's name: {exc}"
        return None
    except DOCUMENTED as exc:
        if want is not NONE and _outcome(spec, arg, want) == (type(exc), getattr(exc, "errno", None) or str(exc)):
            return None
        return f"raised {type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001  (the finding)
        return f"raised {type(exc).__name__}: {exc}"
    if want is NONE:
        return f"accepted, returned {got!r:.60}"
    args = spec.args()
    args[arg] = want
    expected = spec.call(args)
    if not _same(got, expected):
        return f"returned {got!r:.60}, the equivalent {want!r:.30} gives {expected!r:.60}"
    return None


def _cases() -> list[tuple[str, str]]:
    return [(name, arg) for name, spec in SPECS.items() for arg in spec.kinds]


def _short(value: Any) -> str:
    return f"{type(value).__name__}({value!r:.30})".replace("\n", " ")


@pytest.mark.parametrize(("name", "arg"), _cases(), ids=[f"{n}-{a}" for n, a in _cases()])
def test_hostile_pool(name: str, arg: str) -> None:
    """Every value of :data:`POOL` as ``arg`` of ``name``: an equivalent's answer or a CsumError naming ``arg``."""
    spec = SPECS[name]
    failures = [f"{name}({arg}={_short(v)}): {why}" for v in POOL if (why := _check(spec, arg, v)) is not None]
    assert not failures, "\n".join(failures)


def test_valid_calls_work() -> None:
    """Each spec's valid call returns (the table itself is right: a broken spec would make every case moot)."""
    for name, spec in SPECS.items():
        spec.call(spec.args())
        for arg, kind in spec.kinds.items():
            assert kind.equiv(spec.args()[arg]) is not NONE, f"{name}: the valid {arg} is not of its own kind"


def test_surface_covered() -> None:
    """Every public function of every public module (csum, csum.bpf, each of csum's submodules, csum.testing) is in
    SPECS or EXCLUDED by its full public name (a new public function must join this test)."""
    import importlib
    import inspect

    covered = set(SPECS) | set(EXCLUDED)
    missing = []
    for path in ["csum", "csum.bpf", "csum.testing", *(f"csum.{m}" for m in csum._SUBMODULES)]:
        if path in EXCLUDED:
            continue
        mod = importlib.import_module(path)
        names = getattr(mod, "__all__", None) or [n for n, o in vars(mod).items() if not n.startswith("_")
                                                   and getattr(o, "__module__", None) == path]
        for attr in names:
            obj = getattr(mod, attr)
            if inspect.isfunction(obj) and f"{path}.{attr}" not in covered:
                missing.append(f"{path}.{attr}")
    assert not missing, f"public functions without a hostile spec or an exclusion: {missing}"


_scalars = st.sampled_from(_DTYPES).flatmap(lambda t: hnp.from_dtype(np.dtype(t)).map(lambda v, t=t: t(v)))
HOSTILE = st.one_of(
    st.integers(), st.integers(min_value=-2**70, max_value=2**70), st.text(max_size=8), st.floats(),
    st.binary(max_size=24), st.booleans(), st.none(), _scalars,
    hnp.arrays(st.sampled_from(_DTYPES), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)),
    st.lists(st.integers(-3, 300), max_size=4), st.sampled_from(POOL),
)


@pytest.mark.parametrize(("name", "arg"), _cases(), ids=[f"{n}-{a}" for n, a in _cases()])
@settings(max_examples=15, deadline=None, database=None)
@given(value=HOSTILE)
def test_hostile_property(name: str, arg: str, value: Any) -> None:
    """Hypothesis-drawn hostile values: the same demand as :func:`test_hostile_pool` (not for :data:`POOL_ONLY`)."""
    if name in POOL_ONLY:
        return
    why = _check(SPECS[name], arg, value)
    assert why is None, f"{name}({arg}={_short(value)}): {why}"


# --- the examples, each by name -------------------------------------------------------------------------

def _raises(code: Code, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> CsumError:
    with pytest.raises(CsumError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code and name in str(info.value), (info.value.code, str(info.value))
    return info.value


def test_profile_kernel_float_is_refused() -> None:
    """``csum.profile("x86_64", kernel=5.10)`` raised AttributeError (a float has no ``split``)."""
    _raises(Code.BAD_TYPE, "kernel", csum.profile, "x86_64", kernel=5.10)
    _raises(Code.BAD_TYPE, "kernel", P.at, 5.10)


def test_field16_endian_and_range() -> None:
    """``field16(1, "middle")`` raised a plain ValueError; ``field16(2**40, "little")`` returned ``b"\\0\\0"``.

    The right answer for a u32 (``from32to16`` then the CPU's byte order) is checked by hand:
    0x0001fffe folds to 0xffff (0x0001 + 0xfffe), laid out either way as ff ff; 0x00010002 folds to 3."""
    _raises(Code.BAD_BYTEORDER, "endian", csum.crossarch.field16, 1, "middle")
    _raises(Code.OUT_OF_RANGE, "value", csum.crossarch.field16, 2**40, "little")
    assert csum.crossarch.field16(0x0001FFFE, "little") == b"\xff\xff"
    assert csum.crossarch.field16(np.uint32(0x00010002), "big") == b"\x00\x03"


def test_inet_verify_link_array() -> None:
    """``inet.verify(frame, link=np.arange(3))`` raised numpy's "truth value is ambiguous"."""
    _raises(Code.BAD_TYPE, "link", csum.inet.verify, FRAME, link=np.arange(3))
    assert csum.inet.verify(FRAME, link=np.int64(1)) == csum.inet.verify(FRAME, link=1)


def test_internet_checksum_iov_none() -> None:
    """``internet_checksum_iov(None)`` raised TypeError ('NoneType' object is not iterable)."""
    _raises(Code.BAD_TYPE, "buffers", csum.internet_checksum_iov, None)
    _raises(Code.NOT_A_BUFFER, "buffers[1]", csum.internet_checksum_iov, [b"ab", None])


def test_ragged_offsets_past_the_buffer() -> None:
    """Offsets past the buffer whose sum with the length wraps int64 reached the C engine, which raised a plain
    ValueError ("row 0 lies outside buf"); now the check refuses them first, as it does the plain case."""
    for offsets, lengths in (([2**63 - 1], [2]), ([5], [0]), ([0, 3], [4, 2])):
        _raises(Code.OUT_OF_RANGE, "past the end of buf", csum.batch.internet_checksums_ragged, b"abcd", offsets,
                lengths)
    assert list(csum.batch.internet_checksums_ragged(b"abcd", [4], [0])) == [0xFFFF]  # RFC 1071: ~0 of no bytes


def test_rewrite_decrement_ttl_string() -> None:
    """``rewrite(..., decrement_ttl="yes")`` decremented the TTL (any truthy value did); so did ``inplace="no"``
    edit in place. Bool keywords take True or False (numpy's bool too) and nothing else."""
    _raises(Code.BAD_TYPE, "decrement_ttl", csum.rewrite.rewrite, FRAME, decrement_ttl="yes")
    _raises(Code.BAD_TYPE, "inplace", csum.rewrite.rewrite, bytearray(FRAME), sport=7, inplace="no")
    _raises(Code.BAD_TYPE, "udp6_zero_ok", csum.inet.verify, FRAME6, udp6_zero_ok=1)
    done = csum.rewrite.rewrite(FRAME, decrement_ttl=np.bool_(True)).packet
    assert done[14 + 8] == 8 and done == csum.rewrite.rewrite(FRAME, decrement_ttl=True).packet  # TTL 9 -> 8


def test_numpy_scalars_are_numbers_not_buffers(every_engine: Any) -> None:
    """numpy scalars were summed as their 8 (or 2, 4) bytes in memory while numpy integers were refused as ints;
    now a numpy scalar (or 0-d array) is refused as a buffer on every engine, the C fast path included, and a
    numpy integer is the int it holds. Expected sums: the RFC 1071 model of tests/oracle.py."""
    from oracle import rfc1071_checksum

    for scalar in (np.uint64(5), np.uint16(5), np.float64(1.5), np.array(5)):
        _raises(Code.NOT_A_BUFFER, "buf", csum.internet_checksum, scalar)
        _raises(Code.NOT_A_BUFFER, "buf", csum.csum_partial, scalar)
        _raises(Code.NOT_A_BUFFER, "frm", csum.bpf_csum_diff, scalar, b"")
    assert csum.internet_checksum(np.frombuffer(UDP4, np.uint8)) == rfc1071_checksum(UDP4)
    assert csum.csum_fold(np.uint32(0x1234ABCD)) == csum.csum_fold(0x1234ABCD)
    assert csum.csum_partial(UDP4, np.uint32(7), align=np.int8(3)) == csum.csum_partial(UDP4, 7, align=3)
    assert csum.csum_tcpudp_magic("192.0.2.1", "192.0.2.2", np.uint16(12), np.uint8(17)) == \
        csum.csum_tcpudp_magic("192.0.2.1", "192.0.2.2", 12, 17)
    _raises(Code.BAD_TYPE, "seed", csum.csum_partial, UDP4, np.bool_(True))
    _raises(Code.BAD_TYPE, "wsum", csum.csum_fold, BadIndex())


# --- issue 33: the file-reading functions, the number of processes, numpy's time scalars -----------------------

def test_numpy_time_scalars_are_numbers_not_buffers(every_engine: Any) -> None:
    """numpy's datetime64 and timedelta64 scalars export a 1-D buffer of their 8 bytes (an int scalar's is 0-d),
    so 21 functions summed them as bytes on every engine; they are numbers (``ndim`` 0), refused as buffers."""
    for scalar in (np.datetime64(5, "s"), np.timedelta64(5, "s"), np.datetime64("2020-01-01")):
        assert memoryview(scalar).ndim == 1  # the trap itself (numpy's export)
        _raises(Code.NOT_A_BUFFER, "buf", csum.internet_checksum, scalar)
        _raises(Code.NOT_A_BUFFER, "buf", P.csum_partial, scalar)
        _raises(Code.NOT_A_BUFFER, "to", csum.bpf_csum_diff, b"", scalar)
        _raises(Code.BAD_TYPE, "seed", csum.csum_partial, b"ab", scalar)


def test_scan_of_a_directory_is_one_csum_error(tmp_path: Any) -> None:
    """``csum.scan.scan(DIR)`` raised IsADirectoryError; now a CsumValueError (not-a-capture) naming the directory."""
    import csum.scan

    err = _raises(Code.NOT_A_CAPTURE, str(tmp_path), csum.scan.scan, str(tmp_path))
    assert "is a directory" in str(err) and "\n" not in str(err)


def test_jobs_chunk_bytes_and_names_are_checked(tmp_path: Any) -> None:
    """scan, rewrite_capture: ``jobs=-1``, ``jobs=NaN`` and ``name=None`` were accepted (``jobs=2**70`` forked until
    stopped). ``jobs`` is 1 to 4 per usable core (os.sched_getaffinity counts them here)."""
    import csum.scan

    src = tmp_path / "in.pcap"
    src.write_bytes(csum.pcap.to_bytes([FRAME]))
    cap = 4 * len(os.sched_getaffinity(0))
    for jobs in (-1, 0, cap + 1, 2**70):
        err = _raises(Code.OUT_OF_RANGE, "jobs", csum.scan.scan, str(src), jobs=jobs)
        assert f"1..{cap}" in str(err)
        _raises(Code.OUT_OF_RANGE, "jobs", csum.rewrite.rewrite_capture, src, tmp_path / "out.pcap",
                csum.rewrite.Rules(), jobs=jobs)
    for jobs in (math.nan, 2.0, None, "2", True):
        _raises(Code.BAD_TYPE, "jobs", csum.scan.scan, str(src), jobs=jobs)
    _raises(Code.BAD_TYPE, "name", csum.scan.scan, None)
    _raises(Code.BAD_TYPE, "src", csum.rewrite.rewrite_capture, None, tmp_path / "out.pcap", csum.rewrite.Rules())
    _raises(Code.OUT_OF_RANGE, "chunk_bytes", csum.scan.scan, str(src), chunk_bytes=2**40)
    _raises(Code.BAD_TYPE, "scans", csum.scan.merged, None)
    _raises(Code.BAD_TYPE, "scans[0]", csum.scan.merged, [None])
    assert os.listdir(tmp_path) == ["in.pcap"]
    assert csum.scan.scan(src, jobs=np.int64(cap)).report.packets == 1


def test_ragged_too_long_for_memory_is_a_csum_error() -> None:
    """``offsets=range(2**40)`` raised a bare MemoryError from numpy; now a CsumValueError (too-large) naming it."""
    for fn in (csum.batch.internet_checksums_ragged, csum.batch.ones_sums_ragged):
        _raises(Code.TOO_LARGE, "offsets", fn, b"ab", range(2**40), [1])
        _raises(Code.TOO_LARGE, "lengths", fn, b"ab", [0], range(2**40))


def test_prog_load_checks_its_arguments(tmp_path: Any) -> None:
    """``csum.prog.load`` (excluded from the pool: it loads into the running kernel) checks its arguments before it
    opens anything: a path that is no file name, a section, program or type that is no str, maps/globals/ctx that
    are no mappings, each a CsumError naming the argument."""
    _raises(Code.BAD_TYPE, "path", csum.prog.load, None)
    _raises(Code.BAD_TYPE, "path", csum.prog.load, b"x.o")
    obj = str(tmp_path / "missing.o")
    for arg in ("section", "prog", "type"):
        _raises(Code.BAD_TYPE, arg, csum.prog.load, obj, **{arg: 5})
    for arg in ("maps", "globals", "ctx"):
        _raises(Code.BAD_TYPE, arg, csum.prog.load, obj, **{arg: [("a", 1)]})


# --- The command line, fed hostile files (issue 31 "Bad input") ---------------------------------------------------
#
# The rule for `verify`, `fix` and `rewrite`: a capture csum cannot read whole, or an output it will not write, is one
# stderr line `csum: ...` naming the argument, exit 2; the input is never modified; outputs are written atomically and
# only to regular files (nothing left behind on a refusal). Expected readings of the lying files come from libpcap's
# sf-pcap.c (a record longer than the file's snap length is cut to it) and pcapng's draft (each section has its own
# byte order and interfaces), the packets and their checksums from scapy.

_CLI_FRAME = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") / IP(src="10.0.0.1", dst="10.0.0.2")
                   / TCP(sport=1000, dport=80) / b"hello")


def _cli(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    from csum.cli import main

    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def _one_error_line(err: str, *names: str) -> None:
    """stderr is exactly one `csum: ` line, naming each of ``names``."""
    assert err.startswith("csum: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for name in names:
        assert name in err, (name, err)


def _lying_captures() -> dict[str, bytes]:
    """Captures whose headers lie, each with the exit code and the words its stderr line must hold."""
    from captures import epb, idb, pcap_bytes, shb

    good = pcap_bytes([_CLI_FRAME])
    return {
        # a record announcing 4 GiB - 1 captured bytes (libpcap: "invalid packet capture length")
        "caplen-4g.pcap": good + struct.pack("<IIII", 0, 0, 0xFFFFFFFF, 60) + _CLI_FRAME,
        # a caplen larger than the snap length and than what follows: the file ends inside the record
        "caplen-past-end.pcap": pcap_bytes([_CLI_FRAME], snaplen=20)[:24]
        + struct.pack("<IIII", 0, 0, 1000, 1000) + _CLI_FRAME,
        # an Enhanced Packet Block naming interface 5 (of 1), and 0xffffffff
        "interface-5.pcapng": shb() + idb(1) + epb(_CLI_FRAME, 5),
        "interface-max.pcapng": shb() + idb(1) + epb(_CLI_FRAME, 0xFFFFFFFF),
        # a second section of the other byte order whose packet names the first section's second interface: each
        # section has its own interfaces, the second only one
        "interface-of-the-other-section.pcapng": shb() + idb(1) + idb(1) + epb(_CLI_FRAME, 1)
        + shb(">") + idb(1, ">") + epb(_CLI_FRAME, 1, ">"),
    }


#: Each command's argv before IN (options first: argparse takes no positional after an option) and whether OUT follows.
_COMMANDS = {"verify": ([], False), "fix": ([], True), "rewrite": (["--ttl", "5"], True)}


def _argv(command: str, src: str, out: str) -> list[str]:
    options, with_out = _COMMANDS[command]
    return [command, *options, src, *([out] if with_out else [])]


@pytest.mark.parametrize("name", sorted(_lying_captures()))
@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_cli_lying_capture_is_one_line_exit_2(name: str, command: str, tmp_path: Any, capsys: Any) -> None:
    """A record that lies (4 GiB caplen, a caplen past the file's end, an interface id out of range, also one valid
    only in another section): one `csum:` line naming the file, exit 2, no OUT written by fix or rewrite (without
    --keep-going; rewrite used to write the frames before it rewritten and the rest copied: its unanonymized bytes);
    a truncated last record is exit 0 with a warning line, OUT the whole copy, as docs/verify.md "Exit codes" says.
    The input is unchanged."""
    data = _lying_captures()[name]
    src = tmp_path / name
    src.write_bytes(data)
    code, out, err = _cli(_argv(command, str(src), str(tmp_path / "out.pcap")), capsys)
    truncated = name == "caplen-past-end.pcap"
    assert code == (0 if truncated else 2), err
    _one_error_line(err, str(src))
    assert "left in the file" in err if truncated else "record at offset" in err
    assert src.read_bytes() == data
    out_written = truncated and command in ("fix", "rewrite")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, *(["out.pcap"] if out_written else [])])


def test_cli_sections_of_both_byte_orders_and_a_lying_snap_length(tmp_path: Any, capsys: Any) -> None:
    """A pcapng of a little-endian section then a big-endian one, each with its interface, reads as the two packets
    scapy built (TCP checksums right: verify 0). A pcap whose records are longer than its snap length of 20: libpcap
    (sf-pcap.c pcap_next_packet) keeps the first 20 bytes of each, so both packets are cut by the snap length, the
    IPv4 header not whole (n/a), verify exits 0 and fix writes IN unchanged."""
    from captures import epb, idb, pcap_bytes, shb

    both = tmp_path / "both.pcapng"
    both.write_bytes(shb() + idb(1) + epb(_CLI_FRAME) + shb(">") + idb(1, ">") + epb(_CLI_FRAME, 0, ">"))
    code, out, err = _cli(["--json", "verify", str(both)], capsys)
    doc = json.loads(out)
    assert (code, err, doc["packets"], doc["counts"]["tcp"]["ok"], doc["counts"]["ipv4"]["ok"]) == (0, "", 2, 2, 2)
    snap = tmp_path / "snap20.pcap"
    snap.write_bytes(pcap_bytes([_CLI_FRAME, _CLI_FRAME], snaplen=20))
    code, out, err = _cli(["--json", "verify", str(snap)], capsys)
    doc = json.loads(out)
    assert (code, doc["packets"], doc["cut_count"], doc["counts"]["ipv4"]["n/a"]) == (0, 2, 2, 2), doc
    code, out, err = _cli(["fix", str(snap), str(tmp_path / "fixed.pcap")], capsys)
    assert code == 0 and (tmp_path / "fixed.pcap").read_bytes() == snap.read_bytes()


def _outputs(tmp_path: Path, src: Path) -> dict[str, tuple[str, str]]:
    """OUT paths csum must refuse, each with the words of its line: the input itself (three spellings, a hard link),
    a directory, a symbolic link to the input, a FIFO, a character device (relative ones from ``tmp_path``'s parent)."""
    os.link(src, tmp_path / "hard.pcap")
    (tmp_path / "dir").mkdir()
    os.symlink(src.name, tmp_path / "link.pcap")
    os.mkfifo(tmp_path / "fifo")
    return {str(src): ("is the input",), str(tmp_path / "." / src.name): ("is the input",),
            os.path.join(tmp_path.name, src.name): ("is the input",), str(tmp_path / "hard.pcap"): ("is the input",),
            str(tmp_path / "dir"): ("is a directory",), str(tmp_path / "link.pcap"): ("symbolic link",),
            str(tmp_path / "fifo"): ("FIFO",), "/dev/null": ("character device",)}


_OUT_ARGS = {"fix": lambda src, out: ["fix", src, out], "rewrite": lambda src, out: ["rewrite", "--ttl", "5", src, out],
             "verify --out": lambda src, out: ["verify", "--format", "jsonl", "--out", out, src],
             "verify --html": lambda src, out: ["verify", "--html", out, src],
             "verify --annotate": lambda src, out: ["verify", "--explain", "--annotate", out, src]}


@pytest.mark.parametrize("follow", [False, True], ids=["", "follow-symlinks"])
@pytest.mark.parametrize("what", sorted(_OUT_ARGS))
def test_cli_refuses_outputs_that_are_not_new_regular_files(what: str, follow: bool, tmp_path: Any,
                                                            capsys: Any) -> None:
    """Every output argument (fix's and rewrite's OUT, verify's --out, --html, --annotate) refuses the input (however
    spelt, through a hard link, through a symbolic link even with --follow-symlinks), a directory, a FIFO, a device:
    exit 2, one line naming the path; the input unchanged and nothing new in the directory (fix's and rewrite's
    --force changes none of it)."""
    from captures import pcap_bytes

    src = tmp_path / "in.pcap"
    data = pcap_bytes([_CLI_FRAME, _CLI_FRAME[:-1] + b"!"])  # the second one's TCP checksum wrong
    src.write_bytes(data)
    refusals = _outputs(tmp_path, src)
    before = sorted(os.listdir(tmp_path))
    cwd = os.getcwd()
    os.chdir(tmp_path.parent)
    try:
        for out, words in refusals.items():
            if follow and "symbolic link" in words:
                words = ("is the input",)  # followed, the link's target is the input
            argv = _OUT_ARGS[what](str(src), out)
            argv[1:1] = (["--follow-symlinks"] + (["--force"] if what in ("fix", "rewrite") else [])) if follow else []
            code, _, err = _cli(argv, capsys)
            assert code == 2, (argv, err)
            _one_error_line(err, out, *words)
    finally:
        os.chdir(cwd)
    assert src.read_bytes() == data and sorted(os.listdir(tmp_path)) == before
    assert os.listdir(tmp_path / "dir") == []


def _run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "csum", *args], capture_output=True, timeout=120, **kwargs)


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_cli_fifo_and_dev_stdin_as_input(command: str, tmp_path: Any) -> None:
    """A FIFO and /dev/stdin (a pipe) as IN read as the regular file does: the same exit code, the same report but
    its first line (which names IN), the same bytes written (the second packet's TCP checksum wrong: verify 1, fix
    1 with it corrected, rewrite 0)."""
    from captures import pcap_bytes

    src = tmp_path / "in.pcap"
    src.write_bytes(pcap_bytes([_CLI_FRAME, _CLI_FRAME[:-1] + b"!"]))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def run(name: str, source: Path | str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        out = tmp_path / f"{name}.out"
        got = _run(_argv(command, str(source), str(out)), **kwargs)
        named = (str(out).encode(), b"OUT"), (str(source).encode(), b"IN")  # OUT first: IN may be its prefix
        return got.returncode, *(text.replace(*named[0]).replace(*named[1]) for text in (got.stdout, got.stderr))

    want = run("file", src)
    feeder = subprocess.Popen(["sh", "-c", f'cat "{src}" > "{fifo}"'])
    try:
        got_fifo = run("fifo", fifo)
    finally:
        feeder.kill()
        feeder.wait()
    with open(src, "rb") as pipe_in:
        cat = subprocess.Popen(["cat"], stdin=pipe_in, stdout=subprocess.PIPE)
        got_stdin = run("stdin", "/dev/stdin", stdin=cat.stdout)
        cat.wait(timeout=60)
    assert want[0] == {"verify": 1, "fix": 1, "rewrite": 0}[command], want
    for name, got in (("fifo", got_fifo), ("stdin", got_stdin)):
        assert got == want, name
        if _COMMANDS[command][1]:
            assert (tmp_path / f"{name}.out").read_bytes() == (tmp_path / "file.out").read_bytes()
