/*
 * csum.engine._cwalk: the C walker (optional; csum/layers/accel.py binds it, csum/layers/inet.py and csum/capture/report.py use it).
 *
 * It walks the common stacks (below) and, for a packet made only of what it walks, reports every
 * checksum field as csum/layers/check.py's evaluate() would: layer, header offset, stored,
 * computed, ok, reason (ok, mismatch, negative-zero, offload; udp-no-checksum, udp6-zero-checksum and
 * udp6-zero-tunnel for a UDP checksum of 0; needs-reassembly and non-first-fragment for an outer IPv4 fragment or an
 * IPv6 one; partial-quote for the transport field of a datagram an ICMP error quotes the start of), field offset,
 * path and depth. verify() does it for one packet and returns csum.layers.check.Result
 * objects; fast_check() does it for a chunk of a capture: the codes of packets whose every checksum passes
 * (protocol code + DEPTH * depth, in packet order; + NA for a later fragment's transport layer, counted n/a, + NONE
 * for a UDP checksum legitimately absent), the Results of packets with a failing field (not fragments), and -1
 * ("ask the Python walker") for the rest. Anything it does not walk (an unusual layer, an option that moves the
 * pseudo-header but a Home Address or a routing header of type 0, 2 or 4, an ICMP error with an RFC 4884 extension, a
 * fragment of a datagram it does not reassemble: see datagrams() below) goes to csum/layers, the reference; tests/layers/test_layers_c.py
 * checks that every Result from here equals the Python walker's in all nine fields, tests/capture/test_pcap.py that
 * the capture reports with and without this file are equal.
 *
 * Every protocol fact (numbers, header layouts, link types, the fields judged, the names of layers, path parts and
 * reasons) comes from csum/layers/table.py through _cwalk_table.h, which tools/gen_cwalk_table.py generates (CT_*
 * names; tests/layers/test_cwalk_table.py fails when the header and the table differ). Walked: link types of kind
 * ethernet, ethertype (fixed header, EtherType at an offset), ip and BSD family words; VLAN tags, MPLS label stacks
 * (IPv4, IPv6, or a pseudowire's Ethernet), PPPoE sessions (their Length bounding the PPP frame; the protocol field
 * compressed or not); IPv4 with options other than source routes, and AH; IPv6 with every extension header the
 * Python walker walks (hop-by-hop, destination options with a Home Address but no Jumbo Payload, routing headers of
 * types 0, 2 and 4 live or used up and of any type used up, AH, Mobility, HIP, Shim6); IP-in-IP and 6in4; GRE (its
 * checksum, then IPv4, IPv6, or Ethernet by transparent bridging or ERSPAN I/II/III); TCP, UDP (with its checksum or
 * without; VXLAN, Geneve, GTP-U and GTPv0 T-PDUs, GRE-in-UDP inside), ICMP and ICMPv6, an error with the datagram it
 * quotes (whole: every checksum judged; its start only: the IPv4 header's judged, the transport one partial-quote);
 * outer IPv4
 * fragments of TCP, UDP and ICMP datagrams and outer IPv6 fragments of TCP, UDP and ICMPv6 ones, reassembled within
 * the chunk (the fragments still pending from earlier chunks placed in front of it) as csum/layers/reassembly.py does.
 * A length field that bounds a payload (IP's, UDP's, PPPoE's, GTP's) bounds what is walked inside; a payload that
 * runs past it goes to the Python walker (which reports it malformed).
 *
 * In rows mode (two more arguments), fast_check() writes every field of every packet it judges as a fixed-width row
 * (_rows.h: the Result's values, the addresses of the IP header above the field) for csum/capture/rows.py, fragments of
 * the datagrams it reassembles included, and finish_rows() compacts them and sets their frame, time and names;
 * format_rows() (_rowtext.c) writes rows as JSON Lines or CSV.
 *
 * pcap_records() and pcap_times() are csum/capture/pcap.py's pcap record walk (record headers only, no protocol facts).
 *
 * Every sum and fold (a field's covered bytes, the pseudo-header, a reassembled header's checksum) is _arith.h's
 * (csum/engine/_arith.c/.h, linked into this extension): this file folds and sums nothing itself
 * (tests/engine/test_c_arith.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stddef.h>
#include <structmember.h>

#include "_arith.h"
#include "_cwalk_table.h"
#include "_encap.h"
#include "_ipheaders.h"
#include "_rows.h"

/* The codes fast_check writes: layer code + DEPTH * depth, plus NA ("n/a": a later fragment's transport layer) or
 * NONE ("none": UDP sent without a checksum); else "ok". A packet with a failing field has each field's code plus
 * BAD or OFFLOAD for a failing one written as REPORTED - code (below -2), so tally() counts its fields too. */
#define DEPTH 16
#define NA 256
#define NONE 512
#define BAD 1024
#define OFFLOAD 2048
#define REPORTED (-2)
/* ip_layer's answer for an outer IPv4 fragment (its own header judged): the datagram decides. */
#define FRAGMENT 2
#define SLOTS 6
/* ip_layer's `ethertype` for a bare IP layer: the version nibble says which. */
#define ANY_IP ENCAP_ANY_IP

/* The outer IP header of a packet, as far as fragment reassembly needs it (filled by ip_layer at depth 0). */
#define KEY CT_REASSEMBLY_KEY_BYTES
typedef struct {
    int reached;            /* the walk got to an outer IP header: 4 or 6 (0: it stopped in front of it) */
    int frag;               /* the outer IPv4 header, or its IPv6 Fragment header, has M set or an offset */
    /* how csum/layers/reassembly.py keys fragments: version, source, destination, identification and, for IPv4,
     * the protocol (zeros after) */
    uint8_t key[KEY];
    unsigned proto;         /* the datagram's protocol (IPv6: the Fragment header's next header) */
    Py_ssize_t l3, ihl, dlen;  /* ihl: the bytes in front of the fragment's data (IPv6: up to the Fragment header's end) */
    unsigned offset, more;
    uint64_t link, path;    /* the path in front of the IP header, and up to the fragment's data (rows) */
} outer_t;

/* Why a field got its verdict: RS_* (_cwalk_table.h), csum.layers.reasons.Reason members once bind() ran.
 * Path tokens T_* (5 bits each, outer first); a link layer's token is T_LINK + its name's index in CT_LINK_NAMES.
 * A path holds 12 tokens: PUSH adds one, or hands the packet to the Python walker when the path is full. */
#define PATH(path, token) (((path) << 5) | (token))
#define FULL(path) (((path) >> 55) != 0)
#define PUSH(path, token)          \
    do {                           \
        if (FULL(path))            \
            return 0;              \
        path = PATH(path, token);  \
    } while (0)
/* Encapsulations walked into (csum/layers/table.py MAX_DEPTH; a code holds depths up to 15). */
#define MAX_DEPTH CT_MAX_DEPTH

/* One checksum field found: what csum.layers.check.evaluate reports for it (offsets from the packet start).
 * ok -1: not verifiable here (computed None; field -1: None, stored too). */
typedef struct {
    int code, depth, reason, ok;
    Py_ssize_t header, field;
    unsigned stored, computed;
    uint64_t path;
    Py_ssize_t ip;          /* the IP header the field is under (its version in ipv; 0: none), for rows() */
    int ipv;
} rec_t;

typedef struct {
    const uint8_t *b;
    int16_t *codes;
    int n;
    outer_t *outer;
    int report;             /* 0: give up on a failing checksum; 1: record it (see judge) */
    int bad;                /* a recorded field fails */
    rec_t *recs;            /* SLOTS records (not initialized: the first n are set) */
    int frag6;              /* report an IPv6 fragment's transport field (verify(); the capture reassembles) */
    Py_ssize_t ip;          /* the innermost IP header walked into so far, its version in ipv (0: none yet) */
    int ipv;
    Py_ssize_t len;         /* the bytes captured (an ICMP error's quote may reach past its message) */
} walk_t;

static inline unsigned be16(const uint8_t *p) { return ((unsigned)p[0] << 8) | p[1]; }

static inline uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int emit(walk_t *w, int code, int depth)
{
    if (w->n >= SLOTS || depth >= DEPTH)
        return 0;
    w->codes[w->n++] = (int16_t)(code + DEPTH * depth);
    return 1;
}

/* How judge treats a stored 0 (csum/layers/check.py evaluate, Zero.UDP): not UDP; UDP over IPv4 (none, RFC 768);
 * over IPv6 (bad, RFC 8200 8.1); over IPv6 on a tunnel port (none, RFC 6935). */
enum { NOT_UDP, UDP4, UDP6, UDP6_TUNNEL };

/* The verdict on the field at `field` of the header at `header` (csum/layers/check.py evaluate for the
 * protocols walked here): the checksum covers [header, end) (`field` even from `header`); `ps` is the
 * pseudo-header's sum (0: none), `ps0` the same with length 0 (transmit offload's other form); `udp`: how a stored
 * 0 is read, and a computed 0 is sent as 0xffff. A failing field ends the walk unless w->report. Returns 0 to hand
 * the packet to the Python walker. */
static int judge(walk_t *w, int code, int depth, Py_ssize_t header, Py_ssize_t field, Py_ssize_t end, uint64_t ps,
                 uint64_t ps0, int offload, int udp, uint64_t path)
{
    if (w->n >= SLOTS)
        return 0;
    const uint8_t *b = w->b;
    uint64_t rest = csum_ones16_without(b + header, (uint64_t)(end - header), (uint64_t)(field - header));
    unsigned stored = be16(b + field), r = (unsigned)csum_reduce(rest + ps, 16), computed = r ^ M16;
    if (udp && computed == 0)
        computed = CSUM_MANGLED_0;
    int pass = csum_reduce((uint64_t)r + stored, 16) == M16, reason, absent = 0;
    if (udp && stored == 0) {
        reason = udp == UDP4 ? RS_UDP_NO_CHECKSUM : udp == UDP6_TUNNEL ? RS_UDP6_ZERO_TUNNEL : RS_UDP6_ZERO;
        pass = absent = reason != RS_UDP6_ZERO;
    } else if (pass) {
        reason = stored == M16 && computed == 0 ? RS_NEGATIVE_ZERO : RS_OK;
    } else if (offload && (stored == csum_reduce(ps, 16) || stored == csum_reduce(ps0, 16))) {
        reason = RS_OFFLOAD;
    } else {
        reason = RS_MISMATCH;
    }
    if (!pass) {
        if (!w->report)
            return 0;
        w->bad = 1;
    }
    rec_t *rec = w->recs + w->n;
    rec->code = code;
    rec->depth = depth;
    rec->reason = reason;
    rec->ok = pass;
    rec->header = header;
    rec->field = field;
    rec->stored = stored;
    rec->computed = computed;
    rec->path = path;
    rec->ip = w->ip;
    rec->ipv = w->ipv;
    return emit(w, code + (absent ? NONE : 0), depth);
}

static int ip_layer(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, unsigned ethertype, uint64_t path);
static int quoted(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path);

/* The transport field of a datagram only partly here (csum/layers/walk.py partial), for `reason`: a later fragment
 * has none (RS_NON_FIRST_FRAGMENT), the first one's is not verifiable alone (RS_NEEDS_REASSEMBLY), nor is that of an
 * ICMP error's quote of the datagram's start (RS_PARTIAL_QUOTE, counted n/a), their stored value reported when the
 * field is here. The datagram's transport header starts at `at`, the bytes here end at `stop`. */
static int partial(walk_t *w, unsigned proto, int v4, Py_ssize_t at, Py_ssize_t stop, int depth, int reason,
                   uint64_t path)
{
    int code, token;
    Py_ssize_t field;
    if (proto == CT_TCP) {
        code = C_TCP, token = T_TCP, field = CT_TCP_FIELD;
    } else if (proto == CT_UDP) {
        code = C_UDP, token = T_UDP, field = CT_UDP_FIELD;
    } else if ((proto == CT_ICMP && v4) || (proto == CT_ICMPV6 && !v4)) {
        code = v4 ? C_ICMP : C_ICMPV6, token = v4 ? T_ICMP : T_ICMPV6, field = v4 ? CT_ICMP_FIELD : CT_ICMPV6_FIELD;
    } else {
        return 0;
    }
    if (w->n >= SLOTS)
        return 0;
    PUSH(path, token);
    rec_t *t = w->recs + w->n;
    t->code = code;
    t->depth = depth;
    t->header = at;
    t->path = path;
    t->ok = -1;
    t->field = -1;
    t->reason = reason;
    t->ip = w->ip;
    t->ipv = w->ipv;
    if (reason != RS_NON_FIRST_FRAGMENT && at + field + 2 <= stop) {
        t->field = at + field;
        t->stored = be16(w->b + at + field);
        if (reason == RS_PARTIAL_QUOTE && proto == CT_UDP && t->stored == 0)
            return 0;  /* the start of a datagram sent without a checksum (RFC 768): the Python walker's verdict */
    }
    return emit(w, code + (reason == RS_PARTIAL_QUOTE ? NA : 0), depth);
}

static int mpls_layer(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path);
static int pppoe_layer(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path);

/* What an EtherType `value` names (table "ethertype", csum/layers/link.py ethertype), its payload from `at` to
 * `stop`: VLAN tags walked past, then IPv4, IPv6, an MPLS label stack or a PPPoE session; L_NONE: the Python walker. */
static int ethertype_layer(walk_t *w, unsigned value, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    const uint8_t *b = w->b;
    int layer;
    while ((layer = ct_next_ethertype(value)) == L_VLAN) {
        if (at + CT_ETHHDR_VLAN_SIZE > stop)
            return 0;
        PUSH(path, T_VLAN);
        value = be16(b + at + CT_ETHHDR_VLAN_SIZE - 2);
        at += CT_ETHHDR_VLAN_SIZE;
    }
    switch (layer) {
    case L_MPLS:
        return mpls_layer(w, at, stop, depth, path);
    case L_PPPOE:
        return pppoe_layer(w, at, stop, depth, path);
    case L_IPV4:
    case L_IPV6:
        return ip_layer(w, at, stop, depth, value, path);
    default:
        return 0;
    }
}

/* An Ethernet frame (csum/layers/walk.py h_ethernet), the link layer's or inside a tunnel, its path part `token`. */
static int eth_layer(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path, int token)
{
    if (at + CT_ETHHDR_SIZE > stop)
        return 0;
    PUSH(path, token);
    return ethertype_layer(w, be16(w->b + at + CT_ETHHDR_PROTO), at + CT_ETHHDR_SIZE, stop, depth, path);
}

/* An MPLS label stack (RFC 3032; csum/layers/walk.py h_mpls), then IPv4 or IPv6 by the first nibble, or an RFC 4385
 * control word and an Ethernet frame (RFC 4448). */
static int mpls_layer(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    encap_t e;
    PUSH(path, T_MPLS);
    if (!encap_mpls(w->b, at, stop, &e))
        return 0;
    if (e.next != CT_ETH_TEB)
        return ip_layer(w, e.inner, stop, depth, e.next, path);
    return eth_layer(w, e.inner, stop, depth, path, T_ETH);
}

/* A PPPoE session (RFC 2516; csum/layers/walk.py h_pppoe): its Length bounds the PPP frame (one that runs past the
 * frame is the Python walker's: malformed); a 1- or 2-byte PPP protocol (RFC 1661 6.5), then IPv4, IPv6 or MPLS. */
static int pppoe_layer(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    encap_t e;
    if (!encap_pppoe(w->b, at, stop, &e))
        return 0;
    PUSH(path, T_PPPOE);
    PUSH(path, T_PPP);
    if (e.next != CT_ETH_MPLS)
        return ip_layer(w, e.inner, e.end, depth, e.next, path);
    return mpls_layer(w, e.inner, e.end, depth, path);
}

/* GRE (csum/layers/walk.py gre: RFC 2784, RFC 2890 key and sequence number): its optional checksum over the
 * GRE header and payload (no pseudo-header), then IPv4, IPv6, Ethernet (transparent bridging 0x6558, ERSPAN
 * types I, II and III) inside. Routing present, version 1 (PPTP) and other payloads: the Python walker. */
static int gre(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    encap_t e;
    if (depth + 1 > MAX_DEPTH || !encap_gre(w->b, at, stop, &e))
        return 0;
    PUSH(path, T_GRE);
    if (e.csum && !judge(w, C_GRE, depth, at, at + CT_GRE_FIELD, stop, 0, 0, 0, NOT_UDP, path))
        return 0;
    if (e.next != CT_ETH_TEB)
        return ip_layer(w, e.inner, stop, depth + 1, e.next, path);
    if (e.erspan)
        PUSH(path, T_ERSPAN);
    return eth_layer(w, e.inner, stop, depth + 1, path, T_ETH);
}

/* Geneve (RFC 8926; csum/layers/walk.py h_geneve): 8 bytes and the options, then Ethernet, IPv4 or IPv6 by its
 * protocol type. */
static int geneve(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    encap_t e;
    if (!encap_geneve(w->b, at, stop, &e))
        return 0;
    PUSH(path, T_GENEVE);
    if (e.next == CT_ETH_TEB)
        return eth_layer(w, e.inner, stop, depth, path, T_ETH);
    return ip_layer(w, e.inner, stop, depth, e.next, path);
}

/* A GTP T-PDU (csum/layers/tunnels.py gtp): GTPv1-U (3GPP TS 29.281 5; `v1`: the GTP-U port) or GTPv0 (GSM 09.60 6),
 * its Length bounding the IPv4 or IPv6 packet inside. Other messages and versions: the Python walker. */
static int gtp(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path, int v1)
{
    encap_t e;
    if (!encap_gtp(w->b, at, stop, v1, &e))
        return 0;
    PUSH(path, T_GTP);
    return ip_layer(w, e.inner, e.end, depth, ANY_IP, path);
}

/* What a UDP datagram at `at` to `stop` carries, by its destination port (table "udp.port", csum/layers/transport.py
 * _udp): VXLAN, Geneve, GTP or GRE-in-UDP one level deeper; else nothing (1). */
static int udp_payload(walk_t *w, unsigned port, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    Py_ssize_t inner = at + CT_UDP_MIN;
    int layer = ct_next_udp_port(port);
    if (layer == L_GRE_UDP)  /* GRE stands at UDP's depth (RFC 8086) */
        return gre(w, inner, stop, depth, path);
    if (depth + 1 > MAX_DEPTH)
        return 0;
    if (layer == L_NONE)
        return 1;
    switch (layer) {
    case L_VXLAN:  /* VXLAN, then Ethernet */
        PUSH(path, T_VXLAN);
        return eth_layer(w, inner + CT_VXLAN_HLEN, stop, depth + 1, path, T_ETH);
    case L_GENEVE:
        return geneve(w, inner, stop, depth + 1, path);
    case L_GTP:
    case L_GTP_PRIME:
        return gtp(w, inner, stop, depth + 1, path, layer == L_GTP);
    default:
        return 0;
    }
}

/* Whether the ICMP error at `at` (its message ending at `stop`) holds its quote alone, no RFC 4884 extension after
 * it, as csum/layers/walk.py quote decides: an extension follows the quote length the message gives (at least 128
 * bytes) when an extension header of version 2 fits there; without a length, the walker looks for an old sender's
 * extension after a 128-byte quote (left to it whenever such a header is there). */
static int quote_alone(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, int v4)
{
    uint64_t lengthed = v4 ? CT_ICMP_ERRORS_LENGTHED : CT_ICMPV6_ERRORS_LENGTHED;
    Py_ssize_t length_at = at + (v4 ? CT_ICMP_ERRORS_LENGTH_AT : CT_ICMPV6_ERRORS_LENGTH_AT);
    if (!((lengthed >> b[at]) & 1) || length_at >= stop)
        return 1;
    Py_ssize_t length = b[length_at] * (v4 ? CT_ICMP_ERRORS_LENGTH_UNIT : CT_ICMPV6_ERRORS_LENGTH_UNIT);
    Py_ssize_t ext = at + CT_ICMP_QUOTE + (length ? length : CT_ICMP_EXT_MIN_QUOTE);
    return !((length == 0 || length >= CT_ICMP_EXT_MIN_QUOTE) && ext + CT_ICMP_EXT_HLEN <= stop &&
             b[ext] >> 4 == CT_ICMP_EXT_VERSION);
}

/* A protocol with the Internet checksum the C walker judges (its csum/layers/table.py entry): its layer code, field
 * offset, path token, pseudo-header, offload, UDP zero rule (table.UDP_ENTRY's Zero.UDP), whether it is an ICMP error
 * quoting a datagram, and a UDP datagram's destination port. */
typedef struct {
    int code, token, pseudo, offload, udp, quote;
    Py_ssize_t field;
    unsigned port;
} l4_t;

/* A TCP header of `len` bytes at `at`: 0 for a malformed one or OpenFlow's ports (the Python walker's). */
static int tcp_l4(const uint8_t *b, Py_ssize_t at, Py_ssize_t len, l4_t *l)
{
    if (len < CT_TCP_MIN || len <= CT_TCP_DOFF_AT || (b[at + CT_TCP_DOFF_AT] >> 4) * 4 < CT_TCP_MIN ||
        (b[at + CT_TCP_DOFF_AT] >> 4) * 4 > len || CT_TCP_EMBEDDED(be16(b + at)) || CT_TCP_EMBEDDED(be16(b + at + 2)))
        return 0;
    *l = (l4_t){C_TCP, T_TCP, CT_TCP_PSEUDO, CT_TCP_OFFLOAD, NOT_UDP, 0, CT_TCP_FIELD, 0};
    return 1;
}

/* A UDP datagram of `len` bytes at `at`: 0 for a length that is not the IP payload's, or a tunnel or embedded packet
 * the C walker leaves to the Python walker (table.C_EDGES "udp.port"). */
static int udp_l4(const uint8_t *b, Py_ssize_t at, Py_ssize_t len, int v4, l4_t *l)
{
    if (len < CT_UDP_MIN || be16(b + at + CT_UDP_LEN) != len)
        return 0;
    unsigned port = be16(b + at + 2), source = be16(b + at);
    if (CT_UDP_TUNNEL_ELSEWHERE(port) || (source < port && CT_UDP_TUNNEL_BY_SOURCE(source)))
        return 0;
    int udp = v4 ? UDP4 : ct_next_udp_port(port) != L_NONE ? UDP6_TUNNEL : UDP6;
    *l = (l4_t){C_UDP, T_UDP, CT_UDP_PSEUDO, CT_UDP_OFFLOAD, udp, 0, CT_UDP_FIELD, port};
    return 1;
}

/* An ICMP (`v4`) or ICMPv6 message at `at` to `stop`: 0 when short, or when an RFC 4884 extension (or an old
 * sender's) may follow an error's quote (the Python walker's). */
static int icmp_l4(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, int v4, l4_t *l)
{
    uint64_t errors = v4 ? CT_ICMP_ERRORS : CT_ICMPV6_ERRORS;
    if (stop - at < (v4 ? CT_ICMP_MIN : CT_ICMPV6_MIN))
        return 0;
    int quote = b[at] < 64 && (errors >> b[at]) & 1;  /* an error that quotes a datagram (RFC 792, RFC 4443) */
    if (quote && !quote_alone(b, at, stop, v4))
        return 0;
    if (v4)
        *l = (l4_t){C_ICMP, T_ICMP, CT_ICMP_PSEUDO, CT_ICMP_OFFLOAD, NOT_UDP, quote, CT_ICMP_FIELD, 0};
    else
        *l = (l4_t){C_ICMPV6, T_ICMPV6, CT_ICMPV6_PSEUDO, CT_ICMPV6_OFFLOAD, NOT_UDP, quote, CT_ICMPV6_FIELD, 0};
    return 1;
}

/* The checksum of `l` at `at` over the datagram to `stop` (csum/layers/transport.py checksummed), then what the
 * message carries: an ICMP error's quote, a UDP tunnel. */
static int checksummed(walk_t *w, const l4_t *l, unsigned proto, Py_ssize_t at, Py_ssize_t stop, int v4,
                       Py_ssize_t src, Py_ssize_t dst, int depth, uint64_t path)
{
    const uint8_t *b = w->b;
    Py_ssize_t len = stop - at;
    uint64_t ps = 0, ps0 = 0;
    if (l->pseudo) {
        Py_ssize_t size = v4 ? CT_IPHDR_ADDR_SIZE : CT_IPV6HDR_ADDR_SIZE;
        ps0 = csum_pseudo(b + src, b + dst, (uint64_t)size, 0, proto);
        ps = ps0 + csum_pseudo_length((uint64_t)len);
    }
    PUSH(path, l->token);
    if (!judge(w, l->code, depth, at, at + l->field, stop, ps, ps0, l->offload, l->udp, path))
        return 0;
    if (l->quote)
        return quoted(w, at + CT_ICMP_QUOTE, stop, depth, path);
    return l->code == C_UDP ? udp_payload(w, l->port, at, stop, depth, path) : 1;
}

/* What an IP header carries (table "ip.proto", csum/layers/transport.py upper): IP in IP and 6in4 one level deeper,
 * GRE, IPv4's AH walked past (RFC 4302), or a checksummed protocol; L_NONE: the Python walker (0). */
static int transport(walk_t *w, unsigned proto, Py_ssize_t at, Py_ssize_t stop, int v4, Py_ssize_t src,
                     Py_ssize_t dst, int depth, uint64_t path)
{
    const uint8_t *b = w->b;
    int layer = ct_next_ip_proto(proto), ok;
    l4_t l;
    switch (layer) {
    case L_IPV4:
    case L_IPV6:
        if (depth + 1 > MAX_DEPTH)
            return 0;
        return ip_layer(w, at, stop, depth + 1, layer == L_IPV4 ? CT_ETH_IPV4 : CT_ETH_IPV6, path);
    case L_GRE:
        return gre(w, at, stop, depth, path);
    case L_AH: {
        Py_ssize_t size = v4 && stop - at >= 2 ? ((Py_ssize_t)b[at + 1] + CT_AH_BIAS) * CT_AH_UNIT : 0;
        if (!size || at + size > stop)
            return 0;
        PUSH(path, T_AH);
        return transport(w, b[at], at + size, stop, v4, src, dst, depth, path);
    }
    case L_TCP:
        ok = tcp_l4(b, at, stop - at, &l);
        break;
    case L_UDP:
        ok = udp_l4(b, at, stop - at, v4, &l);
        break;
    case L_ICMP:
    case L_ICMPV6:
        ok = (layer == L_ICMP) == v4 && icmp_l4(b, at, stop, v4, &l);
        break;
    default:
        return 0;
    }
    return ok ? checksummed(w, &l, proto, at, stop, v4, src, dst, depth, path) : 0;
}

/* An IPv4 header at `at` (its datagram within `end`; `o`: the packet's outer header, at depth 0): its checksum, then
 * the transport layer; an outer fragment's key and place in its datagram go to `o` (FRAGMENT). */
static int ipv4_layer(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, outer_t *o, int quote, uint64_t path)
{
    const uint8_t *b = w->b;
    if (end - at < CT_IPHDR_SIZE)
        return 0;
    Py_ssize_t ihl = (b[at] & 15) * 4, total = be16(b + at + CT_IPHDR_TOT_LEN);
    unsigned frag = be16(b + at + CT_IPHDR_FRAG_OFF) & (CT_IP_MF | CT_IP_OFFSET), proto = b[at + CT_IPHDR_PROTOCOL];
    if (o != NULL && frag) {  /* known even when the packet fails below: its key stays with Python */
        o->frag = 1;
        o->key[0] = 4;
        memcpy(o->key + 1, b + at + CT_IPHDR_SADDR, 2 * CT_IPHDR_ADDR_SIZE);
        memcpy(o->key + 1 + 2 * CT_IPHDR_ADDR_SIZE, b + at + CT_IPHDR_ID, 2);
        o->key[3 + 2 * CT_IPHDR_ADDR_SIZE] = o->proto = proto;
    }
    if (ihl < CT_IPHDR_SIZE || total < ihl || ihl > end - at || (total > end - at && !quote) ||
        (frag && (o == NULL || quote)))
        return 0;
    PUSH(path, T_IPV4);
    if (!options_ok(b, at + CT_IPHDR_SIZE, at + ihl, 0, NULL) ||
        !judge(w, C_IPV4, depth, at, at + CT_IPV4_FIELD, at + ihl, 0, 0, 0, NOT_UDP, path))
        return 0;
    if (frag) {
        if (proto != CT_TCP && proto != CT_UDP && proto != CT_ICMP)
            return 0;
        o->l3 = at;
        o->ihl = ihl;
        o->dlen = total - ihl;
        o->offset = (frag & CT_IP_OFFSET) * CT_FRAG_UNIT;
        o->more = (frag & CT_IP_MF) != 0;
        if (o->offset && !emit(w, (proto == CT_TCP ? C_TCP : proto == CT_UDP ? C_UDP : C_ICMP) | NA, depth))
            return 0;
        o->path = path;
        return FRAGMENT;
    }
    if (total > end - at)  /* a quote of the datagram's start */
        return partial(w, proto, 1, at + ihl, end, depth, RS_PARTIAL_QUOTE, path);
    return transport(w, proto, at + ihl, at + total, 1, at + CT_IPHDR_SADDR, at + CT_IPHDR_DADDR, depth, path);
}

/* The Fragment header at `pos` of an outer IPv6 fragment whose header is at `at` (its payload ending at `stop`;
 * `word`: the header's offset and M flag): the datagram's key and this fragment's place in it go to `o`; FRAGMENT,
 * or 0 for a datagram of a protocol csum does not reassemble in C. */
static int ipv6_outer_fragment(walk_t *w, outer_t *o, Py_ssize_t at, Py_ssize_t pos, Py_ssize_t stop, unsigned word,
                               int depth, uint64_t path)
{
    const uint8_t *b = w->b;
    o->frag = 1;
    o->key[0] = 6;
    memcpy(o->key + 1, b + at + CT_IPV6HDR_SADDR, 2 * CT_IPV6HDR_ADDR_SIZE);
    memcpy(o->key + 1 + 2 * CT_IPV6HDR_ADDR_SIZE, b + pos + CT_FRAG_HDR_IDENTIFICATION, 4);
    o->proto = b[pos];
    o->l3 = at;
    o->ihl = pos + CT_FRAG_HDR_SIZE - at;
    o->dlen = stop - pos - CT_FRAG_HDR_SIZE;
    o->offset = word & CT_IP6_OFFSET;
    o->more = word & CT_IP6_MF;
    if (o->proto != CT_TCP && o->proto != CT_UDP && o->proto != CT_ICMPV6)
        return 0;
    if (o->offset && !emit(w, (o->proto == CT_TCP ? C_TCP : o->proto == CT_UDP ? C_UDP : C_ICMPV6) | NA, depth))
        return 0;
    o->path = path;
    return FRAGMENT;
}

/* An IPv6 header at `at` (its datagram within `end`; `o`: the packet's outer header, at depth 0): its extension
 * headers (RFC 8200 4, RFC 7045), then the transport layer or a fragment's. */
static int ipv6_layer(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, outer_t *o, int quote, uint64_t path)
{
    const uint8_t *b = w->b;
    if (end - at < CT_IPV6HDR_SIZE)
        return 0;
    Py_ssize_t plen = be16(b + at + CT_IPV6HDR_PAYLOAD_LEN), pos = at + CT_IPV6HDR_SIZE, stop = pos + plen;
    Py_ssize_t src = at + CT_IPV6HDR_SADDR, dst = at + CT_IPV6HDR_DADDR;
    unsigned nh = b[at + CT_IPV6HDR_NEXTHDR];
    int cut = stop > end;  /* a quote of the datagram's start */
    if (plen == 0 || (cut && !quote))
        return 0;
    if (cut)
        stop = end;
    PUSH(path, T_IPV6);
    int fragment = 0, seen = 0;  /* fragment 1: first, 2: later (RFC 8200 4.5; 0 with seen: atomic, RFC 6946) */
    while (CT_IS_IPV6_EXT(nh) && (nh != CT_FRAGMENT || w->frag6 || o != NULL)) {  /* RFC 8200 4, RFC 7045 */
        if (pos + CT_IPV6_EXT_UNIT > stop)
            return 0;
        Py_ssize_t size = ipv6_ext_size(b, pos, nh);
        if (pos + size > stop)
            return 0;
        if (nh == CT_FRAGMENT) {
            unsigned word = be16(b + pos + CT_FRAG_HDR_FRAG_OFF);
            if (seen++ || quote)
                return 0;  /* a second fragment header, a quoted fragment: the Python walker */
            fragment = word & CT_IP6_OFFSET ? 2 : word & CT_IP6_MF;
            if (fragment && !w->frag6)  /* an outer fragment of a capture: the datagram decides */
                return ipv6_outer_fragment(w, o, at, pos, stop, word, depth, path);
        } else if (nh == CT_ROUTING) {
            if (b[pos + CT_IPV6_RT_SEGMENTS_LEFT] && (dst = routing_destination(b, pos, size)) < 0)
                return 0;  /* a routing type whose final destination csum does not read: the Python walker */
        } else if (nh == CT_AH) {
            PUSH(path, T_AH);
        } else if ((nh == CT_HOP_BY_HOP || nh == CT_DEST_OPTS) &&
                   !options_ok(b, pos + 2, pos + size, 1, nh == CT_DEST_OPTS ? &src : NULL)) {
            return 0;
        }
        nh = b[pos];
        pos += size;
        if (fragment == 2)
            break;  /* fragment data follows, not headers */
    }
    if (fragment)
        return partial(w, nh, 0, pos, stop, depth, fragment == 2 ? RS_NON_FIRST_FRAGMENT : RS_NEEDS_REASSEMBLY, path);
    if (cut)
        return partial(w, nh, 0, pos, stop, depth, RS_PARTIAL_QUOTE, path);
    return transport(w, nh, pos, stop, 0, src, dst, depth, path);
}

/* An IP header at `at` of the kind `ethertype` names (ANY_IP: the version nibble decides), its datagram within
 * `end`: ipv4_layer or ipv6_layer, the outer header's version and path noted at depth 0. */
static int ip_layer(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, unsigned ethertype, uint64_t path)
{
    const uint8_t *b = w->b;
    if (at >= end)
        return 0;
    unsigned version = b[at] >> 4;
    if ((ethertype == CT_ETH_IPV4 && version != 4) || (ethertype == CT_ETH_IPV6 && version != 6) ||
        (ethertype != CT_ETH_IPV4 && ethertype != CT_ETH_IPV6 && ethertype != ANY_IP))
        return 0;
    outer_t *o = depth == 0 ? w->outer : NULL;
    if (o != NULL) {
        o->reached = version == 4 ? 4 : 6;
        o->link = path;
    }
    w->ip = at;
    w->ipv = version == 4 ? 4 : 6;
    if (version == 4)
        return ipv4_layer(w, at, end, depth, o, 0, path);
    return version == 6 ? ipv6_layer(w, at, end, depth, o, 0, path) : 0;
}

/* The datagram an ICMP error at depth `depth` quotes, from `at` to its message's end `stop` (csum/layers/walk.py
 * quote, h_ipv4 / h_ipv6 with quote): one level deeper, its IPv4 header's checksum judged, its transport layer
 * judged when the quote holds the whole datagram, else reported partial-quote; nothing for a quote that is no IP. */
static int quoted(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    if (at >= stop || depth >= MAX_DEPTH)
        return 1;
    const uint8_t *b = w->b;
    unsigned version = b[at] >> 4;
    if (version != 4 && version != 6)
        return 1;
    /* a header the capture cut (not one the message ends inside of: the Python walker's) is no layer */
    Py_ssize_t head = version == 4 ? CT_IPHDR_SIZE : CT_IPV6HDR_SIZE;
    if (at + head > w->len || (version == 4 && (b[at] & 15) * 4 >= CT_IPHDR_SIZE && at + (b[at] & 15) * 4 > w->len))
        return 1;
    w->ip = at;
    w->ipv = (int)version;
    if (version == 4)
        return ipv4_layer(w, at, stop, depth + 1, NULL, 1, path);
    return ipv6_layer(w, at, stop, depth + 1, NULL, 1, path);
}

/* The link layer of CT_LINKS[index] (its path token: T_LINK + its name's index). */
static int link_layer(walk_t *w, Py_ssize_t len, Py_ssize_t index)
{
    const uint8_t *b = w->b;
    const ct_link_t *row = CT_LINKS + index;
    Py_ssize_t header = row->header, at = row->at;
    int kind = row->kind;
    uint64_t path = T_LINK + row->name;
    if (kind == K_IP)
        return ip_layer(w, 0, len, 0, ANY_IP, 0);
    if (path >= T_COUNT)
        return 0;
    if (kind == K_FAMILY) {  /* the family word in the capturing host's byte order or the network's */
        if (len < header)
            return 0;
        uint32_t le = b[0] | (b[1] << 8) | (b[2] << 16) | ((uint32_t)b[3] << 24), be = be32(b);
        uint32_t fam = (CT_FAMILY_IPV4(le) || CT_FAMILY_IPV6(le)) ? le : be;
        if (CT_FAMILY_IPV4(fam))
            return ip_layer(w, header, len, 0, CT_ETH_IPV4, path);
        if (CT_FAMILY_IPV6(fam))
            return ip_layer(w, header, len, 0, CT_ETH_IPV6, path);
        return 0;
    }
    if (kind == K_ETHERTYPE) {
        if (len < header)
            return 0;
        return ethertype_layer(w, be16(b + at), header, len, 0, path);
    }
    if (kind != K_ETHERNET)
        return 0;
    return eth_layer(w, 0, len, 0, 0, (int)path);
}

static int get(PyObject *o, Py_buffer *v, int writable, Py_ssize_t itemsize)
{
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (itemsize > 1 && (v->itemsize != itemsize || v->len % itemsize)) {
        PyBuffer_Release(v);
        PyErr_SetString(PyExc_TypeError, "fast_check: wrong item size");
        return -1;
    }
    return 0;
}

/* Fragments: the datagrams whose every fragment is in this chunk, reassembled here, exactly where
 * csum/layers/reassembly.py's Reassembler would complete them (fragments keyed by source, destination,
 * identification and protocol, in packet order; whole once the first fragment and the last are here
 * with no hole). Only a datagram the Python Reassembler would treat the same way is judged here:
 * - nothing may stop in front of the outer IP header (`unknown`: it could be a fragment of any datagram);
 * - a key with any fragment this file does not pass (its own header, a cut packet, an overlap, a datagram
 *   left open at the end, a rebuilt datagram with anything but one plain TCP/UDP/ICMP checksum, a piece
 *   `window` packets or more after its datagram's first: the Reassembler's expiry) goes to Python from that
 *   datagram on, for the rest of the chunk;
 * - the Reassembler never evicts a pending datagram either way: at no point may more than `budget` be open,
 *   counting each datagram judged here from its first piece to its last, each key handed to Python from its
 *   first piece to the end of the chunk and every IPv6 packet handed to Python as one more throughout;
 *   beyond that every fragment goes to Python.
 * Every fragment left undecided is handed to Python (codes[0] = -1). `closed` receives the keys of the
 * datagrams judged here (KEY bytes each) and `peak` that count at its highest when there are any, else 0:
 * csum/capture/stitch.py needs both to join chunks checked apart. */
typedef struct {
    Py_ssize_t first, last;  /* the open datagram's fragments: a list through `next`, in packet order */
    int used, declined;
    Py_ssize_t total;        /* end of the last fragment once seen, else -1 */
} dgram_t;

/* A packet of the chunk whose outer IP header is a fragment: its number in the chunk, that header, and whether its
 * datagram decides it (state 1) or the Python walker does (0). fast_check keeps only these, in packet order. */
typedef struct {
    Py_ssize_t i;
    outer_t o;
    int8_t state;
} frag_t;

/* A chunk being judged by fast_check: its columns (see fast_check), what the walk of its packets found, and the
 * fragments kept for datagrams(). */
typedef struct {
    const uint8_t *data;
    Py_ssize_t len, n;
    const int64_t *off, *cap, *link, *index;
    const int8_t *todo;
    int16_t *out;
    row_t *rows;            /* rows mode: SLOTS per packet, count[i] of them used; else NULL */
    int8_t *count;
    PyObject *reported;     /* (i, [Result, ...]) of each packet with a failing field (not in rows mode) */
    int64_t last_link;      /* the link type of the packet before, and its row of CT_LINKS */
    Py_ssize_t last_row;
    int unknown, unknown6;  /* a packet the walk stopped in front of its outer IP header, of an IPv6 one */
    Py_ssize_t v6;          /* packets to the Python walker whose outer header is IPv6 */
    frag_t *frags;
    Py_ssize_t nfrags, room;
} chunk_t;

/* The reassembly of a chunk's fragments (datagrams()): a table row per key, each fragment's row and the next
 * fragment of its open datagram (by number in chunk_t.frags), the keys of the datagrams judged. */
typedef struct {
    chunk_t *c;
    dgram_t *table;
    Py_ssize_t mask, *slot, *next;
    uint8_t *scratch, *keys;
    Py_ssize_t open, declined, judged;
} reasm_t;

/* A hash of a datagram key, eight bytes at a time (a multiply and a shift mixing each word in). */
static uint64_t key_hash(const uint8_t *k)
{
    uint64_t h = 0, word;
    int i = 0;
    for (; i + 8 <= KEY; i += 8) {
        memcpy(&word, k + i, 8);
        h = (h ^ word) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; i < KEY; i++)
        h = (h ^ k[i]) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

/* The fragments from `f` on, through `next`, to the Python walker. */
static void hand_over(chunk_t *c, Py_ssize_t f, const Py_ssize_t *next)
{
    for (; f >= 0; f = next[f]) {
        c->frags[f].state = 0;
        c->out[c->frags[f].i * SLOTS] = -1;
    }
}

/* One field's row (_rows.h) for fast_check's rows: what make_result() makes of it, and the addresses of the IP header
 * above it, read from the packet `b`. */
static void put_row(row_t *o, const rec_t *r, const uint8_t *b, Py_ssize_t packet)
{
    memset(o, 0, sizeof *o);
    o->key = r->path;
    o->packet = (int32_t)packet;
    o->header = (int32_t)r->header;
    o->field = (int32_t)r->field;
    o->stored = r->field < 0 ? -1 : (int32_t)r->stored;
    o->computed = r->ok < 0 ? -1 : (int32_t)r->computed;
    o->code = (uint8_t)r->code;
    o->depth = (uint8_t)r->depth;
    o->rs = (uint8_t)r->reason;
    o->ok = (int8_t)r->ok;
    o->ipver = (uint8_t)r->ipv;
    if (r->ipv == 4) {
        memcpy(o->src, b + r->ip + CT_IPHDR_SADDR, CT_IPHDR_ADDR_SIZE);
        memcpy(o->dst, b + r->ip + CT_IPHDR_DADDR, CT_IPHDR_ADDR_SIZE);
    } else if (r->ipv == 6) {
        memcpy(o->src, b + r->ip + CT_IPV6HDR_SADDR, CT_IPV6HDR_ADDR_SIZE);
        memcpy(o->dst, b + r->ip + CT_IPV6HDR_DADDR, CT_IPV6HDR_ADDR_SIZE);
    }
}

/* The tokens of a path key. */
static int path_tokens(uint64_t path)
{
    int n = 0;
    for (; path; path >>= 5)
        n++;
    return n;
}

/* Whether the pieces of the open datagram of `k` tile [0, total) in offset order, each used once: 1 (yes, `*head`
 * the first piece's fragment), 0 (a hole: not whole yet), -1 (an overlap, a piece past the end, too long: Python). */
static int tiled(const reasm_t *r, const dgram_t *k, Py_ssize_t *head)
{
    const frag_t *fr = r->c->frags;
    const Py_ssize_t *next = r->next;
    Py_ssize_t count = 0;
    *head = -1;
    for (Py_ssize_t f = k->first; f >= 0; f = next[f], count++) {
        if (fr[f].o.offset == 0)
            *head = f;
        if (fr[f].o.offset + fr[f].o.dlen > 65535)
            return -1;  /* the Reassembler's "too long" */
    }
    if (*head < 0 || k->total < 0)
        return 0;
    Py_ssize_t reach = 0, done = 0;
    for (; done < count; done++) {
        Py_ssize_t at = -1;
        for (Py_ssize_t f = k->first; f >= 0; f = next[f])
            if ((Py_ssize_t)fr[f].o.offset == reach && (at < 0 || fr[f].o.dlen > fr[at].o.dlen))
                at = f;
        if (at < 0)
            return 0;  /* a hole: wait for the piece */
        for (Py_ssize_t f = k->first; f >= 0; f = next[f])
            if (f != at && (Py_ssize_t)fr[f].o.offset < reach + fr[at].o.dlen &&
                (Py_ssize_t)fr[f].o.offset + fr[f].o.dlen > reach)
                return -1;
        reach += fr[at].o.dlen;
        if (reach >= k->total) {
            done++;
            break;
        }
    }
    if (reach < k->total)
        return 0;
    return reach > k->total || done != count ? -1 : 1;
}

/* The open datagram of `k` when it is whole: 1 (judged, counted), 0 (not whole yet), -1 (to Python). */
static int whole(reasm_t *r, dgram_t *k)
{
    chunk_t *c = r->c;
    Py_ssize_t hf;
    int t = tiled(r, k, &hf);
    if (t <= 0)
        return t;
    const outer_t *h = &c->frags[hf].o;
    Py_ssize_t head = c->frags[hf].i, size = h->ihl + k->total;
    if (size > 65535)
        return -1;
    uint8_t *scratch = r->scratch;
    const uint8_t *ip = c->data + c->off[head] + h->l3;
    int v4 = h->key[0] == 4;
    memcpy(scratch, ip, h->ihl);
    if (v4) {  /* total length; not a fragment (DF kept); a valid header checksum, so the walk below goes on */
        scratch[CT_IPHDR_TOT_LEN] = (uint8_t)(size >> 8);
        scratch[CT_IPHDR_TOT_LEN + 1] = (uint8_t)size;
        scratch[CT_IPHDR_FRAG_OFF] &= CT_IP_DF >> 8;
        scratch[CT_IPHDR_FRAG_OFF + 1] = 0;
        scratch[CT_IPHDR_CHECK] = scratch[CT_IPHDR_CHECK + 1] = 0;
        unsigned s = (unsigned)csum_ones(scratch, (uint64_t)h->ihl, 16, 1) ^ M16;
        scratch[CT_IPHDR_CHECK] = (uint8_t)(s >> 8);
        scratch[CT_IPHDR_CHECK + 1] = (uint8_t)s;
    } else {  /* payload length; the Fragment header (the head's last bytes) made atomic: offset 0, M 0 */
        uint8_t *fh = scratch + h->ihl - CT_FRAG_HDR_SIZE;
        scratch[CT_IPV6HDR_PAYLOAD_LEN] = (uint8_t)((size - CT_IPV6HDR_SIZE) >> 8);
        scratch[CT_IPV6HDR_PAYLOAD_LEN + 1] = (uint8_t)(size - CT_IPV6HDR_SIZE);
        fh[CT_FRAG_HDR_FRAG_OFF] = fh[CT_FRAG_HDR_FRAG_OFF + 1] = 0;
    }
    for (Py_ssize_t f = k->first; f >= 0; f = r->next[f]) {
        const outer_t *o = &c->frags[f].o;
        memcpy(scratch + h->ihl + o->offset, c->data + c->off[c->frags[f].i] + o->l3 + o->ihl, o->dlen);
    }
    int16_t codes[SLOTS] = {0};
    rec_t recs[SLOTS];
    walk_t w = {scratch, codes, 0, NULL, 0, 0, recs, 1, 0, 0, size};
    if (ip_layer(&w, 0, size, 0, v4 ? CT_ETH_IPV4 : CT_ETH_IPV6, 0) != 1 || w.n != (v4 ? 2 : 1))
        return -1;  /* a tunnel, an ICMP error, a failing or absent checksum: the Python walker */
    if (recs[w.n - 1].field + 2 > h->ihl + h->dlen)
        return -1;  /* the field sits in another fragment: reported there, by the Python walker */
    int16_t *mine = c->out + head * SLOTS;
    int used = 0;
    while (used < SLOTS && mine[used])
        used++;
    if (used == SLOTS)
        return -1;
    mine[used] = codes[w.n - 1];
    if (c->rows != NULL) {  /* the head's needs-reassembly row becomes the datagram's field, placed in the head */
        rec_t d = recs[w.n - 1];
        d.header += h->l3;
        d.field += h->l3;
        d.path = (h->link << (5 * path_tokens(d.path))) | d.path;
        d.ip = h->l3;
        d.ipv = v4 ? 4 : 6;
        for (int j = 0; j < SLOTS; j++)
            if (c->rows[head * SLOTS + j].rs == RS_NEEDS_REASSEMBLY) {
                put_row(c->rows + head * SLOTS + j, &d, c->data + c->off[head], head);
                break;
            }
    }
    return 1;
}

/* A key whose fragments go to Python from now on: its open datagram's pieces and fragment `f` handed over. */
static void decline(reasm_t *r, dgram_t *k, Py_ssize_t f)
{
    if (!k->declined) {
        if (k->first >= 0)
            r->open--;
        k->declined = 1;
        r->declined++;
        hand_over(r->c, k->first, r->next);
    }
    hand_over(r->c, f, r->next);
}

/* One table row per key (open addressing): slot[f] for each fragment f, every row's datagram empty. */
static void key_rows(reasm_t *r)
{
    const chunk_t *c = r->c;
    for (Py_ssize_t f = 0; f < c->nfrags; f++) {
        const uint8_t *key = c->frags[f].o.key;
        Py_ssize_t h = key_hash(key) & r->mask;
        while (r->table[h].used && memcmp(c->frags[r->table[h].first].o.key, key, KEY))
            h = (h + 1) & r->mask;
        if (!r->table[h].used) {
            r->table[h].used = 1;
            r->table[h].first = f;  /* for the comparison only; reset below */
        }
        r->slot[f] = h;
        r->next[f] = -1;
    }
    for (Py_ssize_t h = 0; h <= r->mask; h++)
        r->table[h].first = r->table[h].last = r->table[h].total = -1;
}

/* Fragment `f` into its datagram (`window`: the Reassembler's expiry, in packets), which it may complete. */
static void place(reasm_t *r, Py_ssize_t f, Py_ssize_t window)
{
    chunk_t *c = r->c;
    const frag_t *fr = c->frags + f;
    dgram_t *k = r->table + r->slot[f];
    if (c->unknown || (c->unknown6 && fr->o.key[0] == 6) || k->declined || !fr->state ||
        (k->first >= 0 && c->index[fr->i] - c->index[c->frags[k->first].i] >= window)) {
        decline(r, k, f);
        return;
    }
    if (k->first < 0) {
        k->first = f;
        r->open++;
    } else {
        r->next[k->last] = f;
    }
    k->last = f;
    if (!fr->o.more)
        k->total = fr->o.offset + fr->o.dlen;
    int got = whole(r, k);
    if (got < 0) {
        decline(r, k, f);
    } else if (got > 0) {
        for (Py_ssize_t j = k->first; j >= 0; j = r->next[j])
            c->frags[j].state = 0;
        memcpy(r->keys + r->judged++ * KEY, fr->o.key, KEY);
        k->first = k->last = k->total = -1;
        r->open--;
    }
}

static int datagrams(chunk_t *c, Py_ssize_t budget, Py_ssize_t window, PyObject **closed, Py_ssize_t *peak_out)
{
    Py_ssize_t m = c->nfrags;
    *peak_out = 0;
    if (!m)
        return (*closed = PyBytes_FromStringAndSize(NULL, 0)) == NULL ? -1 : 0;
    Py_ssize_t size = 16;
    while (size < 2 * m)
        size <<= 1;
    reasm_t r = {c, PyMem_Calloc(size, sizeof(dgram_t)), size - 1, PyMem_Malloc(m * sizeof(Py_ssize_t)),
                 PyMem_Malloc(m * sizeof(Py_ssize_t)), PyMem_Malloc(65536 + 64), PyMem_Malloc(m * KEY), 0, 0, 0};
    int rc = 0;
    if (r.table == NULL || r.slot == NULL || r.next == NULL || r.scratch == NULL || r.keys == NULL) {
        rc = -1;
        goto done;
    }
    key_rows(&r);
    Py_ssize_t peak = 0;
    for (Py_ssize_t f = 0; f < m; f++) {
        place(&r, f, window);
        if (r.open + r.declined + c->v6 > peak)
            peak = r.open + r.declined + c->v6;
    }
    for (Py_ssize_t h = 0; h < size; h++)  /* datagrams the chunk ends inside */
        if (r.table[h].used && !r.table[h].declined && r.table[h].first >= 0)
            hand_over(c, r.table[h].first, r.next);
    if (peak > budget) {  /* the Reassembler could evict: every fragment to Python */
        for (Py_ssize_t f = 0; f < m; f++)
            c->out[c->frags[f].i * SLOTS] = -1;
        r.judged = 0;
    }
    *peak_out = r.judged ? peak : 0;
    if ((*closed = PyBytes_FromStringAndSize((const char *)r.keys, r.judged * KEY)) == NULL)
        rc = -1;
done:
    PyMem_Free(r.table);
    PyMem_Free(r.slot);
    PyMem_Free(r.next);
    PyMem_Free(r.scratch);
    PyMem_Free(r.keys);
    return rc;
}

/* --- Results: csum.layers.check.Result objects made here (bind() gives the class and the names) --------- */

enum { RF_LAYER, RF_OFFSET, RF_STORED, RF_COMPUTED, RF_OK, RF_REASON, RF_FIELD, RF_PATH, RF_DEPTH, RF_COUNT };
static const char *const result_fields[RF_COUNT] = {"layer", "offset", "stored", "computed", "ok", "reason",
                                                   "field", "path", "depth"};
static PyTypeObject *result_type;
static Py_ssize_t result_slot[RF_COUNT];
static PyObject *layer_names[C_COUNT], *reasons[RS_COUNT], *tokens[T_COUNT], *paths;

static PyObject *path_string(uint64_t key)
{
    PyObject *k = PyLong_FromUnsignedLongLong(key), *found;
    if (k == NULL)
        return NULL;
    found = PyDict_GetItemWithError(paths, k);
    if (found != NULL || PyErr_Occurred()) {
        Py_DECREF(k);
        Py_XINCREF(found);
        return found;
    }
    int t[13], n = 0;
    for (; key && n < 13; key >>= 5)
        t[n++] = (int)(key & 31);
    PyObject *parts = PyList_New(0), *sep = PyUnicode_FromString("/"), *s = NULL;
    if (parts != NULL && sep != NULL) {
        int k2 = n - 1;
        for (; k2 >= 0; k2--)
            if (tokens[t[k2]] == Py_None || PyList_Append(parts, tokens[t[k2]]) < 0)
                break;
        if (k2 < 0 && (s = PyUnicode_Join(sep, parts)) != NULL && PyDict_SetItem(paths, k, s) < 0)
            Py_CLEAR(s);
        if (k2 >= 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "_cwalk: path token without a name");
    }
    Py_XDECREF(parts);
    Py_XDECREF(sep);
    Py_DECREF(k);
    return s;
}

static PyObject *make_result(const rec_t *r)
{
    PyObject *v[RF_COUNT] = {NULL};
    v[RF_LAYER] = layer_names[r->code];
    Py_INCREF(v[RF_LAYER]);
    v[RF_OFFSET] = PyLong_FromSsize_t(r->header);
    v[RF_STORED] = r->field < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(r->stored);
    v[RF_COMPUTED] = r->ok < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(r->computed);
    v[RF_OK] = r->ok < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(r->ok);
    v[RF_REASON] = reasons[r->reason];
    Py_INCREF(v[RF_REASON]);
    v[RF_FIELD] = r->field < 0 ? Py_NewRef(Py_None) : PyLong_FromSsize_t(r->field);
    v[RF_PATH] = path_string(r->path);
    v[RF_DEPTH] = PyLong_FromLong(r->depth);
    PyObject *obj = NULL;
    int k = 0;
    for (; k < RF_COUNT && v[k] != NULL; k++)
        ;
    if (k == RF_COUNT)
        obj = result_type->tp_alloc(result_type, 0);
    if (obj == NULL) {
        for (k = 0; k < RF_COUNT; k++)
            Py_XDECREF(v[k]);
        return NULL;
    }
    for (k = 0; k < RF_COUNT; k++)  /* the slots of a frozen dataclass: set once, as its __init__ would */
        *(PyObject **)((char *)obj + result_slot[k]) = v[k];
    return obj;
}

static PyObject *make_results(const walk_t *w)
{
    PyObject *list = PyList_New(w->n);
    for (int k = 0; list != NULL && k < w->n; k++) {
        PyObject *r = make_result(w->recs + k);
        if (r == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, r);
    }
    return list;
}

/* bind(Result, Reason): the class of the Results made here (a frozen dataclass with slots: csum.layers.check) and
 * the enum whose values name the reasons (csum.layers.reasons); the layer, path and reason names come from
 * _cwalk_table.h. */
static PyObject *bind(PyObject *self, PyObject *args)
{
    PyObject *type, *reason;
    if (!PyArg_ParseTuple(args, "O!O", &PyType_Type, &type, &reason))
        return NULL;
    PyTypeObject *t = (PyTypeObject *)type;
    for (int k = 0; k < RF_COUNT; k++) {
        result_slot[k] = -1;
        for (PyMemberDef *m = t->tp_members; m != NULL && m->name != NULL; m++)
            if (!strcmp(m->name, result_fields[k]) && m->type == T_OBJECT_EX)
                result_slot[k] = m->offset;
        if (result_slot[k] < 0) {
            PyErr_Format(PyExc_TypeError, "_cwalk.bind: %s has no slot %s", t->tp_name, result_fields[k]);
            return NULL;
        }
    }
    PyObject *why[RS_COUNT] = {NULL};
    for (int k = 0; k < RS_COUNT; k++)
        if ((why[k] = PyObject_CallFunction(reason, "s", CT_REASONS[k])) == NULL) {
            for (int j = 0; j < k; j++)
                Py_DECREF(why[j]);
            return NULL;
        }
    for (int k = 0; k < RS_COUNT; k++)
        Py_XSETREF(reasons[k], why[k]);
    Py_INCREF(type);
    Py_XSETREF(result_type, t);
    Py_XSETREF(paths, PyDict_New());
    if (paths == NULL)
        return NULL;
    Py_RETURN_NONE;
}

/* The names of _cwalk_table.h as interned strings (LAYERS, tokens), once, at import. */
static int names_init(void)
{
    for (int k = 1; k < C_COUNT; k++)
        if ((layer_names[k] = PyUnicode_InternFromString(CT_LAYERS[k])) == NULL)
            return -1;
    for (int k = 0; k < T_COUNT; k++) {
        const char *name = k == 0           ? NULL
                           : k < T_LINK        ? CT_TOKENS[k]
                           : k - T_LINK < CT_NLINK_NAMES ? CT_LINK_NAMES[k - T_LINK]
                                                         : NULL;
        tokens[k] = name == NULL ? Py_NewRef(Py_None) : PyUnicode_InternFromString(name);
        if (tokens[k] == NULL)
            return -1;
    }
    return 0;
}

/* Whether an IP header at `at` has version 4 or 6 and lengths that fit (csum/layers/walk.py _fits). */
static int fits(const uint8_t *b, Py_ssize_t len, Py_ssize_t at)
{
    if (len <= at)
        return 0;
    unsigned version = b[at] >> 4;
    Py_ssize_t ihl = (b[at] & 15) * 4;
    if (version == 4) {
        if (len < at + CT_IPHDR_SIZE)
            return 0;
        Py_ssize_t total = be16(b + at + CT_IPHDR_TOT_LEN);
        return CT_IPHDR_SIZE <= ihl && ihl <= total && total <= len - at;
    }
    return version == 6 && len >= at + CT_IPV6HDR_SIZE &&
           at + CT_IPV6HDR_SIZE + (Py_ssize_t)be16(b + at + CT_IPV6HDR_PAYLOAD_LEN) <= len;
}

/* link="auto" as csum/layers/walk.py _auto decides it: 1 (Ethernet carrying IP), 101 (bare IP), or -1 where the
 * answer needs a layer this file does not walk (MPLS, PPPoE: the Python walker decides). */
static int64_t auto_link(const uint8_t *b, Py_ssize_t len)
{
    Py_ssize_t at = CT_ETHHDR_PROTO;
    while (len >= at + 2 && CT_IS_VLAN(be16(b + at)))
        at += CT_ETHHDR_VLAN_SIZE;
    if (len >= at + 3) {
        unsigned ethertype = be16(b + at), version = b[at + 2] >> 4;
        if (((ethertype == CT_ETH_IPV4 && version == 4) || (ethertype == CT_ETH_IPV6 && version == 6)) &&
            (fits(b, len, at + 2) || !fits(b, len, 0)))
            return 1;
        if ((ethertype == CT_ETH_MPLS || ethertype == CT_ETH_MPLS_MC || ethertype == CT_ETH_PPPOE_SESSION) &&
            !fits(b, len, 0))
            return 1;
    }
    return fits(b, len, 0) ? 101 : -1;
}

/* The row of CT_LINKS for capture link type `linktype`, or -1 for a link type this file does not walk. */
static Py_ssize_t link_row(int64_t linktype)
{
    for (Py_ssize_t k = 0; k < CT_NLINKS; k++)
        if (CT_LINKS[k].number == linktype)
            return k;
    return -1;
}

/* verify(packet, linktype) -> [Result, ...] for every checksum of one whole packet (linktype -1: "auto"), or
 * None when it holds anything this file does not walk (the Python walker answers: csum/layers/inet.py). */
static PyObject *verify(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || result_type == NULL) {
        PyErr_SetString(PyExc_TypeError, nargs != 2 ? "verify takes 2 arguments" : "_cwalk.bind() was not called");
        return NULL;
    }
    int64_t linktype = PyLong_AsLongLong(args[1]);
    if (linktype == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(args[0], &v, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *b = v.buf;
    PyObject *result = Py_None;
    if (linktype == -1)
        linktype = auto_link(b, v.len);
    Py_ssize_t index = linktype < 0 ? -1 : link_row(linktype);
    if (index >= 0) {
        int16_t codes[SLOTS];
        outer_t outer = {0};
        rec_t recs[SLOTS];
        walk_t w = {b, codes, 0, &outer, 1, 0, recs, 1, 0, 0, v.len};
        int r = link_layer(&w, v.len, index);
        if (r == FRAGMENT) {  /* an outer IPv4 fragment: recs[0] is its header (a later one's NA code undone) */
            w.n = 1;
            r = partial(&w, outer.proto, 1, outer.l3 + outer.ihl, outer.l3 + outer.ihl + outer.dlen, 0,
                        outer.offset ? RS_NON_FIRST_FRAGMENT : RS_NEEDS_REASSEMBLY, recs[0].path);
        }
        if (r == 1)
            result = make_results(&w);
    }
    PyBuffer_Release(&v);
    if (result == Py_None)
        Py_INCREF(result);
    return result;
}

/* A fragment's own fields as verify() reports them (its IPv4 header, then its transport field: needs-reassembly or
 * non-first-fragment), in place of the codes of fast_check's walk; 0 when there is no room. */
static int fragment_rows(walk_t *w, const outer_t *o)
{
    int v4 = o->reached == 4;
    w->n = v4 ? 1 : 0;
    return partial(w, o->proto, v4, o->l3 + o->ihl, o->l3 + o->ihl + o->dlen, 0,
                   o->offset ? RS_NON_FIRST_FRAGMENT : RS_NEEDS_REASSEMBLY, o->path);
}

/* The rows of a walked packet (SLOTS of them at `rows`, the unused ones zeroed); their number. */
static int fill_rows(row_t *rows, const walk_t *w, Py_ssize_t packet)
{
    for (int k = 0; k < w->n; k++)
        put_row(rows + k, w->recs + k, w->b, packet);
    memset(rows + w->n, 0, (SLOTS - w->n) * sizeof *rows);
    return w->n;
}

/* Fragment `o` of packet i kept for datagrams() (`state`: its datagram decides it); -1 out of memory. */
static int keep_fragment(chunk_t *c, Py_ssize_t i, const outer_t *o, int state)
{
    if (c->nfrags == c->room) {
        Py_ssize_t room = c->room ? 2 * c->room : 64;
        frag_t *more = PyMem_Realloc(c->frags, room * sizeof(frag_t));
        if (more == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->frags = more;
        c->room = room;
    }
    frag_t *f = c->frags + c->nfrags++;
    f->i = i;
    f->o = *o;
    f->state = (int8_t)state;
    return 0;
}

/* The walk of packet i (fast_check): r (1: every field found, FRAGMENT, 0: to Python) with w's records; its rows. */
static int walk_packet(chunk_t *c, Py_ssize_t i, walk_t *w)
{
    if (c->link[i] != c->last_link) {
        c->last_link = c->link[i];
        c->last_row = link_row(c->link[i]);
    }
    int r = 0;
    if (c->off[i] >= 0 && c->cap[i] >= 0 && c->off[i] + c->cap[i] <= c->len && c->last_row >= 0)
        r = link_layer(w, c->cap[i], c->last_row);
    if (r == FRAGMENT && w->bad)
        r = 0;
    if (c->rows != NULL) {
        c->count[i] = 0;
        if (r == FRAGMENT && c->todo[i] && !fragment_rows(w, w->outer))
            r = 0;  /* no room for its rows: the Python walker's, and its datagram's with it */
        if (c->todo[i] && (r == 1 || r == FRAGMENT))
            c->count[i] = (int8_t)fill_rows(c->rows + i * SLOTS, w, i);
    }
    return r;
}

/* Packet i of fast_check: its codes in out[i] (or -1, or REPORTED - codes and its Results), a fragment kept; -1 on a
 * Python error. */
static int check_packet(chunk_t *c, Py_ssize_t i)
{
    int16_t *codes = c->out + i * SLOTS;
    memset(codes, 0, SLOTS * sizeof *codes);
    outer_t o;
    memset(&o, 0, offsetof(outer_t, key) + KEY);  /* what is read of a packet that is no fragment; a key's zeros */
    rec_t recs[SLOTS];
    walk_t w = {c->data + c->off[i], codes, 0, &o, 1, 0, recs, 0, 0, 0, c->cap[i]};
    int r = walk_packet(c, i, &w), todo = c->todo[i];
    if (r == 1 && w.bad && todo) {
        for (int k = 0; k < w.n; k++) {  /* codes[k] is recs[k]'s (emit), counted as its Result's status */
            int code = recs[k].ok < 0 ? codes[k] | NA : codes[k];
            codes[k] = (int16_t)(REPORTED - code - (recs[k].ok ? 0 : recs[k].reason == RS_OFFLOAD ? OFFLOAD : BAD));
        }
        if (c->rows == NULL) {
            PyObject *results = make_results(&w), *item = NULL;
            if (results == NULL || (item = Py_BuildValue("nN", i, results)) == NULL ||
                PyList_Append(c->reported, item) < 0) {
                Py_XDECREF(item);
                return -1;
            }
            Py_DECREF(item);
        }
    } else if (!(r == FRAGMENT && todo) && (r != 1 || !todo)) {
        codes[0] = -1;
        c->unknown |= !o.reached;
        c->unknown6 |= o.reached == 6 && !o.frag;  /* maybe a fragment of any IPv6 datagram */
    }
    c->v6 += o.reached == 6 && codes[0] < 0;
    return o.frag ? keep_fragment(c, i, &o, r == FRAGMENT && todo) : 0;
}

/* The buffers of fast_check's arguments (see there) into v (`*held` of them got) and c; -1 with an exception set. */
static int chunk_args(PyObject *const *args, Py_ssize_t nargs, Py_buffer *v, int *held, chunk_t *c)
{
    const Py_ssize_t sizes[9] = {1, 8, 8, 8, 2, 1, 8, (Py_ssize_t)sizeof(row_t), 1};
    int want = nargs == 11 ? 9 : 7;
    for (*held = 0; *held < want; ++*held)
        if (get(args[*held < 7 ? *held : *held + 2], &v[*held], *held == 4 || *held >= 7, sizes[*held]) < 0)
            return -1;
    Py_ssize_t n = v[1].len / 8;
    *c = (chunk_t){v[0].buf, v[0].len, n, v[1].buf, v[2].buf, v[3].buf, v[6].buf, v[5].buf, v[4].buf,
                   want == 9 ? v[7].buf : NULL, want == 9 ? v[8].buf : NULL, NULL, -1, -1, 0, 0, 0, NULL, 0, 0};
    if (v[2].len / 8 != n || v[3].len / 8 != n || v[4].len != n * SLOTS * 2 || v[5].len != n || v[6].len / 8 != n ||
        (c->rows != NULL && (v[7].len != n * SLOTS * (Py_ssize_t)sizeof(row_t) || v[8].len != n))) {
        PyErr_SetString(PyExc_ValueError, "fast_check: inconsistent array sizes");
        return -1;
    }
    return 0;
}

/* fast_check(data, offsets, caplens, linktypes, out, todo, indices, budget, window[, rows, count])
 *     -> ([(i, [Result, ...]), ...], closed, peak):
 * out is int16 (n, SLOTS); todo is int8 (n): packets to judge (the others, cut by the snap length, still key their
 * fragments). out[i] lists the codes of a packet whose every checksum passes; -1 in out[i][0]: to the Python walker;
 * below -2: a packet with a failing checksum (not a fragment), out[i] its codes written REPORTED - (code + BAD or
 * OFFLOAD for a failing field, NA for one not verifiable), all of its Results in the returned list. indices is int64
 * (n): the packets' numbers in the capture (the pending fragments of earlier chunks may come first); budget and
 * window: the Reassembler's limits; closed and peak: what datagrams() says of the datagrams judged here.
 * With rows (row_t, _rows.h: SLOTS per packet) and count (int8, n), every packet judged here (passing or not, the
 * fragments of the datagrams reassembled here too) gets its fields as rows at rows[i * SLOTS], count[i] of them
 * (0: the Python walker's), and no Results are made: csum/capture/rows.py takes them from there. */
static PyObject *fast_check(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 && nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "fast_check takes 9 or 11 arguments");
        return NULL;
    }
    if (result_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "_cwalk.bind() was not called");
        return NULL;
    }
    Py_ssize_t budget = PyLong_AsSsize_t(args[7]), window = PyLong_AsSsize_t(args[8]);
    if ((budget == -1 || window == -1) && PyErr_Occurred())
        return NULL;
    Py_buffer v[9];
    chunk_t c;
    int got = 0;
    PyObject *result = NULL, *closed = NULL;
    if (chunk_args(args, nargs, v, &got, &c) == 0 && (c.reported = PyList_New(0)) != NULL) {
        Py_ssize_t i = 0, peak = 0;
        while (i < c.n && check_packet(&c, i) == 0)
            i++;
        if (i == c.n && datagrams(&c, budget, window, &closed, &peak) < 0 && !PyErr_Occurred())
            PyErr_NoMemory();
        if (closed != NULL) {
            for (i = 0; c.rows != NULL && i < c.n; i++)
                if (c.out[i * SLOTS] == -1)
                    c.count[i] = 0;  /* to the Python walker after all: its rows are Python's */
            result = Py_BuildValue("ONn", c.reported, closed, peak);
        }
        Py_DECREF(c.reported);
        PyMem_Free(c.frags);
    }
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return result;
}

/* chunk_columns(offsets, caplens, origlens, first, base) -> (indices, bases, todo, cut): what csum/capture/fastpath.py's
 * Batch adds to a chunk's int64 columns, without numpy: each packet's number in the capture (first + i) and file
 * offset (base + offsets[i]), whether it was captured whole (todo, int8: caplens[i] == origlens[i]), and the numbers
 * of the packets the snap length cut (caplens[i] < origlens[i]); the int64 columns as bytes. */
static PyObject *chunk_columns(PyObject *self, PyObject *args)
{
    Py_buffer v[3];
    long long first, base;
    if (!PyArg_ParseTuple(args, "y*y*y*LL", &v[0], &v[1], &v[2], &first, &base))
        return NULL;
    PyObject *cols[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
    Py_ssize_t n = v[0].len / 8, cut = 0;
    const int64_t *off = v[0].buf, *caps = v[1].buf, *origs = v[2].buf;
    if (v[0].len % 8 || v[1].len != n * 8 || v[2].len != n * 8) {
        PyErr_SetString(PyExc_ValueError, "chunk_columns: inconsistent array sizes");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        cut += caps[i] < origs[i];
    if (!(cols[0] = PyBytes_FromStringAndSize(NULL, n * 8)) || !(cols[1] = PyBytes_FromStringAndSize(NULL, n * 8)) ||
        !(cols[2] = PyBytes_FromStringAndSize(NULL, n)) || !(cols[3] = PyBytes_FromStringAndSize(NULL, cut * 8)))
        goto done;
    int64_t *index = (int64_t *)PyBytes_AS_STRING(cols[0]), *bases = (int64_t *)PyBytes_AS_STRING(cols[1]);
    int64_t *cuts = (int64_t *)PyBytes_AS_STRING(cols[3]);
    int8_t *todo = (int8_t *)PyBytes_AS_STRING(cols[2]);
    for (Py_ssize_t i = 0; i < n; i++) {
        index[i] = first + i;
        bases[i] = base + off[i];
        todo[i] = caps[i] == origs[i];
        if (caps[i] < origs[i])
            *cuts++ = first + i;
    }
    result = Py_BuildValue("OOOO", cols[0], cols[1], cols[2], cols[3]);
done:
    for (int k = 0; k < 4; k++)
        Py_XDECREF(cols[k]);
    for (int k = 0; k < 3; k++)
        PyBuffer_Release(&v[k]);
    return result;
}

/* tally(out, todo) -> (counts, fast, walk) after fast_check: counts, [(code, fields), ...] of the codes of the
 * packets among todo (int8) whose every checksum passes (out[i][0] > 0) and of those with a failing one (out[i][0]
 * below -2: each field's code + BAD, OFFLOAD, NA or NONE), in code order; fast, how many passing packets; walk, the
 * int64 numbers in the chunk (as bytes) of the packets left to the Python walker (not in todo, or out[i][0] 0 or
 * -1). */
static PyObject *tally(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "tally takes 2 arguments");
        return NULL;
    }
    Py_buffer v[2];
    if (get(args[0], &v[0], 0, 2) < 0)
        return NULL;
    if (get(args[1], &v[1], 0, 1) < 0) {
        PyBuffer_Release(&v[0]);
        return NULL;
    }
    PyObject *result = NULL, *walk = NULL, *counts = NULL;
    Py_ssize_t n = v[1].len, fast = 0, left = 0;
    const int16_t *out = v[0].buf;
    const int8_t *todo = v[1].buf;
    int64_t seen[2 * OFFLOAD] = {0};
    if (v[0].len != n * SLOTS * 2) {
        PyErr_SetString(PyExc_ValueError, "tally: inconsistent array sizes");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        left += !todo[i] || (out[i * SLOTS] <= 0 && out[i * SLOTS] > REPORTED);
    if ((walk = PyBytes_FromStringAndSize(NULL, left * 8)) == NULL || (counts = PyList_New(0)) == NULL)
        goto done;
    int64_t *to = (int64_t *)PyBytes_AS_STRING(walk);
    for (Py_ssize_t i = 0; i < n; i++) {
        const int16_t *codes = out + i * SLOTS;
        if (!todo[i] || (codes[0] <= 0 && codes[0] > REPORTED)) {
            *to++ = i;
        } else if (codes[0] > 0) {  /* the codes are packed from the first slot on (emit, whole) */
            fast++;
            for (int k = 0; k < SLOTS && codes[k] > 0; k++)
                seen[codes[k] & (2 * NONE - 1)]++;
        } else {  /* a packet with a failing field: every field counted, its Results listed by fast_check */
            for (int k = 0; k < SLOTS && codes[k] <= REPORTED; k++)
                seen[(REPORTED - codes[k]) & (2 * OFFLOAD - 1)]++;
        }
    }
    for (int code = 1; code < 2 * OFFLOAD; code++) {
        PyObject *item = seen[code] ? Py_BuildValue("iL", code, (long long)seen[code]) : NULL;
        if (seen[code] && (item == NULL || PyList_Append(counts, item) < 0)) {
            Py_XDECREF(item);
            goto done;
        }
        Py_XDECREF(item);
    }
    result = Py_BuildValue("OnO", counts, fast, walk);
done:
    Py_XDECREF(walk);
    Py_XDECREF(counts);
    PyBuffer_Release(&v[0]);
    PyBuffer_Release(&v[1]);
    return result;
}

/* finish_rows(slots, count, indices, times, layers, reasons, statuses) -> n: fast_check's rows (count[i] of them at
 * slots[i * SLOTS]) moved to the front of slots, in packet order, each with its frame number (indices[i] + 1), time
 * (times[i]), and its layer, reason and status as the caller numbers them: layers (int32, by layer code), reasons
 * (uint8, by RS_* code), statuses (uint8, by (ok + 1) * the caller's reason count + the caller's reason). */
static PyObject *finish_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "finish_rows takes 7 arguments");
        return NULL;
    }
    Py_buffer v[7];
    const Py_ssize_t sizes[7] = {(Py_ssize_t)sizeof(row_t), 1, 8, 8, 4, 1, 1};
    int got = 0;
    for (; got < 7; got++)
        if (get(args[got], &v[got], got == 0, sizes[got]) < 0)
            break;
    PyObject *result = NULL;
    if (got == 7) {
        row_t *rows = v[0].buf;
        const int8_t *count = v[1].buf;
        const int64_t *index = v[2].buf, *times = v[3].buf;
        const int32_t *layers = v[4].buf;
        const uint8_t *reasons = v[5].buf, *statuses = v[6].buf;
        Py_ssize_t n = v[1].len, made = 0, nreasons = v[6].len / 3;
        if (v[0].len != n * SLOTS * (Py_ssize_t)sizeof(row_t) || v[2].len != n * 8 || v[3].len != n * 8 ||
            v[4].len != C_COUNT * 4 || v[5].len != RS_COUNT || v[6].len != 3 * nreasons) {
            PyErr_SetString(PyExc_ValueError, "finish_rows: inconsistent array sizes");
        } else {
            for (Py_ssize_t i = 0; i < n; i++)
                for (int k = 0; k < count[i] && k < SLOTS; k++) {
                    row_t *o = rows + made++;
                    if (o != rows + i * SLOTS + k)
                        *o = rows[i * SLOTS + k];
                    o->frame = index[i] + 1;
                    o->time = times[i];
                    o->layer = layers[o->code];
                    o->reason = reasons[o->rs];
                    o->status = o->reason < nreasons ? statuses[(o->ok + 1) * nreasons + o->reason] : 0;
                }
            result = PyLong_FromSsize_t(made);
        }
    }
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return result;
}

/* path(key) -> the path string of a rows() path key ("eth/ipv4/udp/vxlan/eth/ipv4/tcp"). */
static PyObject *path(PyObject *self, PyObject *arg)
{
    if (paths == NULL) {
        PyErr_SetString(PyExc_TypeError, "_cwalk.bind() was not called");
        return NULL;
    }
    uint64_t key = PyLong_AsUnsignedLongLong(arg);
    if (key == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    return path_string(key);
}

/* pcap_records(data, pos, big_endian, most, header=16, swap=0, cut_lo=0, cut_hi=0, fcs=0) -> (offsets, caplens,
 * origlens, end): the pcap record walk of csum/capture/pcap.py's _PcapWalker.walk in C (int64 columns as bytes).
 * Records have `header` bytes of header (16; 24 in the modified format), the captured and original lengths at 8 and
 * 12 (`swap` 1: the other way round; 2: the other way round where the captured one would be the larger). It stops at
 * the first record whose header does not fit, whose data runs past the buffer or which announces more than `most`
 * bytes; `end` is that record's offset, and the caller says why from the bytes there. A record of more than `cut_lo`
 * and at most `cut_hi` captured bytes is reported with `cut_lo` of them; then `fcs` bytes (a frame check sequence at
 * the end of the frame) are taken off the original length and the captured bytes beyond it. */
static inline uint32_t u32(const uint8_t *h, int big)
{
    return big ? ((uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3])
               : ((uint32_t)h[3] << 24 | h[2] << 16 | h[1] << 8 | h[0]);
}

/* The (captured, original) lengths of the record header at h, as pcap_records reads them. */
static inline void pcap_lengths(const uint8_t *h, int big, int swap, uint32_t *incl, uint32_t *orig)
{
    uint32_t a = u32(h + 8, big), b = u32(h + 12, big);
    if (swap == 1 || (swap == 2 && a > b)) {
        *incl = b;
        *orig = a;
    } else {
        *incl = a;
        *orig = b;
    }
}

/* The three int64 columns of pcap_records resized to `n` items; -1 (and NULLs) when out of memory. */
static int grow(PyObject **cols, Py_ssize_t n)
{
    int rc = 0;
    for (int k = 0; k < 3; k++)
        if (cols[k] != NULL && _PyBytes_Resize(&cols[k], n * 8) < 0)
            rc = -1;
    return rc;
}

static PyObject *pcap_records(PyObject *self, PyObject *args)
{
    Py_buffer v;
    Py_ssize_t pos, most, header = 16, cut_lo = 0, cut_hi = 0, fcs = 0;
    int big, swap = 0;
    if (!PyArg_ParseTuple(args, "y*npn|ninnn", &v, &pos, &big, &most, &header, &swap, &cut_lo, &cut_hi, &fcs))
        return NULL;
    if (header < 16 || cut_lo < 0 || cut_hi < 0 || fcs < 0) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_ValueError, "pcap_records: header must be at least 16, cut and fcs not negative");
        return NULL;
    }
    const uint8_t *b = v.buf;
    Py_ssize_t size = v.len, n = 0, p = pos;
    uint32_t incl, orig;
    if (p < 0)
        p = size;
    /* one pass: the columns sized for records of 64 bytes, doubled when more come, cut to size at the end */
    Py_ssize_t room = (p < size ? (size - p) / (header + 64) : 0) + 16;
    PyObject *cols[3] = {NULL, NULL, NULL}, *result = NULL;
    for (int k = 0; k < 3; k++)
        if (!(cols[k] = PyBytes_FromStringAndSize(NULL, room * 8)))
            goto done;
    for (; p + header <= size; n++) {
        pcap_lengths(b + p, big, swap, &incl, &orig);
        if (incl > (uint64_t)most || p + header + (Py_ssize_t)incl > size)
            break;
        if (n == room && grow(cols, room *= 2) < 0)
            goto done;
        int64_t cap = incl, wire = orig;
        if (cap > cut_lo && cap <= cut_hi)
            cap = cut_lo;
        if (fcs) {
            wire = wire > fcs ? wire - fcs : 0;
            if (cap > wire)
                cap = wire;
        }
        ((int64_t *)PyBytes_AS_STRING(cols[0]))[n] = p + header;
        ((int64_t *)PyBytes_AS_STRING(cols[1]))[n] = cap;
        ((int64_t *)PyBytes_AS_STRING(cols[2]))[n] = wire;
        p += header + incl;
    }
    if (grow(cols, n) < 0)
        goto done;
    result = Py_BuildValue("OOOn", cols[0], cols[1], cols[2], p);
done:
    for (int k = 0; k < 3; k++)
        Py_XDECREF(cols[k]);
    PyBuffer_Release(&v);
    return result;
}

/* pcap_times(data, offsets, header, big_endian, nanos) -> times: each record's timestamp in nanoseconds since the
 * epoch (int64 as bytes), read from its header, which starts `header` bytes before its offset (int64 column, from
 * pcap_records): seconds, then the microsecond fraction (`nanos`: nanosecond). */
static PyObject *pcap_times(PyObject *self, PyObject *args)
{
    Py_buffer v, o;
    Py_ssize_t header;
    int big, nanos;
    if (!PyArg_ParseTuple(args, "y*y*npp", &v, &o, &header, &big, &nanos))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = o.len / 8;
    const int64_t *offs = o.buf;
    const uint8_t *b = v.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (o.len % 8 || offs[i] < header || offs[i] > v.len) {
            PyErr_SetString(PyExc_ValueError, "pcap_times: an offset without a record header in front of it");
            goto done;
        }
    if ((result = PyBytes_FromStringAndSize(NULL, n * 8)) == NULL)
        goto done;
    int64_t *times = (int64_t *)PyBytes_AS_STRING(result), unit = nanos ? 1 : 1000;
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *h = b + offs[i] - header;
        times[i] = (int64_t)u32(h, big) * 1000000000 + (int64_t)u32(h + 4, big) * unit;
    }
done:
    PyBuffer_Release(&v);
    PyBuffer_Release(&o);
    return result;
}

static PyMethodDef methods[] = {
    {"fast_check", (PyCFunction)(void (*)(void))fast_check, METH_FASTCALL,
     "fast_check(data, offsets, caplens, linktypes, out, todo, indices, budget, window) -> (reported, closed, peak) "
     "(see csum/engine/_cwalk.c)."},
    {"chunk_columns", chunk_columns, METH_VARARGS,
     "chunk_columns(offsets, caplens, origlens, first, base) -> (indices, bases, todo, cut) (see csum/engine/_cwalk.c)."},
    {"tally", (PyCFunction)(void (*)(void))tally, METH_FASTCALL,
     "tally(out, todo) -> (counts, fast, walk): fast_check's verdicts counted (see csum/engine/_cwalk.c)."},
    {"verify", (PyCFunction)(void (*)(void))verify, METH_FASTCALL,
     "verify(packet, linktype) -> [Result, ...] or None (see csum/engine/_cwalk.c)."},
    {"bind", bind, METH_VARARGS,
     "bind(Result, Reason) -> None: the classes of the Results made here (see csum/engine/_cwalk.c)."},
    {"finish_rows", (PyCFunction)(void (*)(void))finish_rows, METH_FASTCALL,
     "finish_rows(slots, count, indices, times, layers, reasons, statuses) -> rows (see csum/engine/_cwalk.c)."},
    {"path", path, METH_O, "path(key) -> the path string of a rows() path key."},
    {"format_rows", (PyCFunction)(void (*)(void))format_rows, METH_FASTCALL,
     "format_rows(rows, csv, names, reasons, statuses, file, columns) -> bytes (see csum/engine/_rowtext.c)."},
    {"pcap_records", pcap_records, METH_VARARGS,
     "pcap_records(data, pos, big_endian, most, header=16, swap=0, cut_lo=0, cut_hi=0, fcs=0) -> (offsets, caplens, "
     "origlens, end) (see csum/engine/_cwalk.c)."},
    {"pcap_times", pcap_times, METH_VARARGS,
     "pcap_times(data, offsets, header, big_endian, nanos) -> times (see csum/engine/_cwalk.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "csum.engine._cwalk", NULL, -1, methods};

/* REASONS: the name of each reason code of rows() (RS_*, _cwalk_table.h). */
static int add_reasons(PyObject *m)
{
    PyObject *t = PyTuple_New(RS_COUNT);
    for (int k = 0; t != NULL && k < RS_COUNT; k++) {
        PyObject *name = PyUnicode_FromString(CT_REASONS[k]);
        if (name == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, k, name);
    }
    int rc = t == NULL ? -1 : PyModule_AddObjectRef(m, "REASONS", t);
    Py_XDECREF(t);
    return rc;
}

/* ROW_LAYOUT: (name, offset, size) of each field of row_t, for csum/capture/rows.py's dtype to be checked against. */
#define ROW_FIELD(name) Py_BuildValue("(snn)", #name, (Py_ssize_t)offsetof(row_t, name), \
                                      (Py_ssize_t)sizeof(((row_t *)0)->name))
static int add_layout(PyObject *m)
{
    PyObject *items[] = {ROW_FIELD(frame), ROW_FIELD(time), ROW_FIELD(key), ROW_FIELD(packet), ROW_FIELD(header),
                         ROW_FIELD(field), ROW_FIELD(stored), ROW_FIELD(computed), ROW_FIELD(layer), ROW_FIELD(path),
                         ROW_FIELD(code), ROW_FIELD(depth), ROW_FIELD(rs), ROW_FIELD(ok), ROW_FIELD(reason),
                         ROW_FIELD(status), ROW_FIELD(ipver), ROW_FIELD(src), ROW_FIELD(dst)};
    Py_ssize_t count = sizeof items / sizeof *items;
    int rc = -1;
    PyObject *t = PyTuple_New(count);
    for (Py_ssize_t k = 0; k < count; k++) {
        if (items[k] == NULL || t == NULL) {
            for (; k < count; k++)
                Py_XDECREF(items[k]);
            goto out;
        }
        PyTuple_SET_ITEM(t, k, items[k]);
    }
    rc = PyModule_AddObjectRef(m, "ROW_LAYOUT", t);
out:
    Py_XDECREF(t);
    return rc;
}

/* The module: its functions, and LAYERS (the layer name of each code fast_check writes: code % DEPTH, None for 0),
 * SLOTS (codes per packet), DEPTH (a code's depth unit), NA and NONE (the flags of a code counted "n/a" and "none")
 * KEY_BYTES (a closed datagram's key), ROW_BYTES and ROW_LAYOUT (row_t, _rows.h) and REASONS (the reason codes'
 * names). */
PyMODINIT_FUNC PyInit__cwalk(void)
{
    if (names_init() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module), *layers = PyTuple_New(C_COUNT);
    if (m == NULL || layers == NULL)
        goto fail;
    for (int k = 0; k < C_COUNT; k++)
        PyTuple_SET_ITEM(layers, k, Py_NewRef(k ? layer_names[k] : Py_None));
    if (PyModule_AddObjectRef(m, "LAYERS", layers) < 0 || PyModule_AddIntConstant(m, "SLOTS", SLOTS) < 0 ||
        PyModule_AddIntConstant(m, "NA", NA) < 0 || PyModule_AddIntConstant(m, "NONE", NONE) < 0 ||
        PyModule_AddIntConstant(m, "BAD", BAD) < 0 || PyModule_AddIntConstant(m, "OFFLOAD", OFFLOAD) < 0 ||
        PyModule_AddIntConstant(m, "DEPTH", DEPTH) < 0 || PyModule_AddIntConstant(m, "KEY_BYTES", KEY) < 0 ||
        PyModule_AddIntConstant(m, "ROW_BYTES", sizeof(row_t)) < 0 || add_layout(m) < 0 ||
        add_reasons(m) < 0)
        goto fail;
    Py_DECREF(layers);
    return m;
fail:
    Py_XDECREF(layers);
    Py_XDECREF(m);
    return NULL;
}
