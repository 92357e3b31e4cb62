"""Why a checksum got its verdict: one enum of reasons and the five statuses they map to."""

from __future__ import annotations

from enum import StrEnum
from types import SimpleNamespace


class Status(StrEnum):
    """A checksum field's verdict (``csum verify --format jsonl``'s ``status``)."""

    OK = "ok"
    BAD = "bad"
    #: The field holds exactly the pseudo-header sum: transmit checksum offload (CHECKSUM_PARTIAL) left it
    #: for the NIC to finish; the capture was taken on the sending host before the NIC (include/linux/skbuff.h).
    OFFLOAD = "offload"
    #: The checksum is legitimately absent (UDP 0 over IPv4, RFC 768; RFC 6935/6936 tunnels over IPv6).
    NONE = "none"
    #: Not verifiable from this packet (the reason says why).
    NA = "n/a"


class Reason(StrEnum):
    """``Result.reason``: compares equal to its string value."""

    OK = "ok"
    MISMATCH = "mismatch"
    #: Stored 0xffff where 0x0000 is computed: the same number in one's complement, so receivers accept it,
    #: but a full computation never yields it (RFC 1624 section 3); eqn. 2 updates do.
    NEGATIVE_ZERO = "negative-zero"
    #: A PIM Register whose checksum covers the whole message (RFC 7761 4.9 says accept it too).
    WHOLE_REGISTER = "whole-register"
    #: Right, in a BIG TCP / TSO super-packet (IPv4 total length 0 or IPv6 payload length 0 without a Jumbo
    #: Payload option): taken at its captured length (Linux >= 6.3 BIG TCP, net/ipv4/ip_output.c).
    SUPER_PACKET = "super-packet"
    OFFLOAD = "offload"
    UDP_NO_CHECKSUM = "udp-no-checksum"            # stored 0 over IPv4: not computed by the sender (RFC 768)
    UDP6_ZERO = "udp6-zero-checksum"               # stored 0 over IPv6: invalid (RFC 8200 section 8.1)
    UDP6_ZERO_ALLOWED = "udp6-zero-allowed"        # stored 0 over IPv6 accepted by the caller (RFC 6936)
    UDP6_ZERO_TUNNEL = "udp6-zero-tunnel"          # stored 0 over IPv6 on a tunnel port csum walks (RFC 6935)
    NON_FIRST_FRAGMENT = "non-first-fragment"      # no transport header in this fragment
    NEEDS_REASSEMBLY = "needs-reassembly"          # first fragment: the checksum covers bytes not here
    UNKNOWN_DESTINATION = "unknown-final-destination"  # routing header type whose final address csum cannot read
    NOT_CAPTURED = "not-captured"                  # covered bytes beyond the snap length
    PARTIAL_QUOTE = "partial-quote"                # an ICMP error quotes only the start of the datagram
    ENCRYPTED = "encrypted"                        # ESP: the transport header is encrypted
    CRYPTO_AUTH = "cryptographic-authentication"   # OSPFv2 with cryptographic authentication: no checksum
    BAD_LENGTH = "bad-length"                      # the protocol's own length field does not fit
    BAD_COVERAGE = "bad-coverage"                  # UDP-Lite / DCCP coverage outside the packet
    REASSEMBLY_FAILED = "reassembly-failed"        # fragments overlap inconsistently or never complete
    NO_CHECKSUM = "no-checksum"                    # stored 0 where 0 means "not computed" (PGM, RFC 3208 8)


#: Reasons of a passing check that mean "no checksum here" rather than "right checksum".
ABSENT = frozenset({Reason.UDP_NO_CHECKSUM, Reason.UDP6_ZERO_ALLOWED, Reason.UDP6_ZERO_TUNNEL, Reason.NO_CHECKSUM})


def status(ok: bool | None, reason: Reason) -> Status:
    """The status a (ok, reason) pair stands for."""
    if ok is None:
        return _NA
    if ok:
        return _NONE if reason in ABSENT else _OK
    return _OFFLOAD if reason is _R_OFFLOAD else _BAD


# bound once: an Enum class attribute costs ~1 us per lookup on CPython 3.11 (see R below)
_NA, _NONE, _OK, _OFFLOAD, _BAD, _R_OFFLOAD = Status.NA, Status.NONE, Status.OK, Status.OFFLOAD, Status.BAD, \
    Reason.OFFLOAD


#: Reason's members as plain attributes, for the per-packet code (an Enum class attribute costs ~1 us on
#: CPython 3.11, a namespace attribute ~40 ns).
R = SimpleNamespace(**Reason.__members__)
