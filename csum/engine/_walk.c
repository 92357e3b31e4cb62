/*
 * csum/engine/_walk.c: the C walker (its types and entry points: _walk.h), linked into csum.engine._cwalk (the
 * checker) and csum.engine._rewrite (the rewriter), so that verify, fix and rewrite walk a packet the one way.
 *
 * It walks the common stacks (below) and finds every checksum field of a packet made only of what it walks, as
 * csum/layers/walk.py and csum/layers/tunnels.py (the reference) find them; judging (walk_t.judge) each field as
 * csum/layers/check.py's evaluate() would: layer, header offset, stored, computed, ok, reason (ok, mismatch,
 * negative-zero, offload; udp-no-checksum, udp6-zero-checksum and udp6-zero-tunnel for a UDP checksum of 0;
 * needs-reassembly and non-first-fragment for an outer IPv4 fragment or an IPv6 one; partial-quote for the transport
 * field of a datagram an ICMP error quotes the start of), field offset, path and depth; and, where asked, describing
 * every IP layer (ip_t) for the rewriter. Anything it does not walk (an unusual layer, an option that moves the
 * pseudo-header but a Home Address or a routing header of type 0, 2 or 4; for the checker, an ICMP error with an RFC
 * 4884 extension, whose own checksum it does not judge: the rewriter walks its quote, bounded by the extension)
 * makes it answer 0: the Python walker's.
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
 * outer IPv4 and IPv6 fragments of TCP, UDP and ICMP/ICMPv6 datagrams (handed to the caller: FRAGMENT). A length
 * field that bounds a payload (IP's, UDP's, PPPoE's, GTP's) bounds what is walked inside; a payload that runs past it
 * goes to the Python walker (which reports it malformed).
 *
 * Every sum and fold (a field's covered bytes, the pseudo-header) is _arith.h's: this file folds and sums nothing
 * itself (tests/engine/test_c_arith.py). Input is hostile: every read lies within the packet's captured length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_arith.h"
#include "_cwalk_table.h"
#include "_encap.h"
#include "_ipheaders.h"
#include "_walk.h"

static int emit(walk_t *w, int code, int depth)
{
    if (w->n >= w->slots || depth >= DEPTH)
        return 0;
    w->codes[w->n++] = (int16_t)(code + DEPTH * depth);
    return 1;
}

/* A later fragment's transport layer, counted n/a: its code, and a record of no field. */
static int emit_na(walk_t *w, int code, int depth)
{
    if (w->n < w->slots && w->recs != NULL) {
        w->recs[w->n].field = w->recs[w->n].end = -1;
        w->recs[w->n].header = -1;
    }
    return emit(w, code | NA, depth);
}

/* How judge treats a stored 0 (csum/layers/check.py evaluate, Zero.UDP): not UDP; UDP over IPv4 (none, RFC 768);
 * over IPv6 (bad, RFC 8200 8.1); over IPv6 on a tunnel port (none, RFC 6935). */
enum { NOT_UDP, UDP4, UDP6, UDP6_TUNNEL };

/* The IP layer walked into last (the one a field found now belongs to), or NULL when the caller takes none. */
static inline ip_t *last_ip(walk_t *w) { return w->ips != NULL && w->nips ? w->ips + w->nips - 1 : NULL; }

/* A new IP layer at `at` (of `version`, at `depth`; `quote`: an ICMP error's quote) in w->ips where the caller takes
 * them: 0 when there is no room left (the walk stops: the Python walker's). */
static int new_ip(walk_t *w, Py_ssize_t at, int version, int depth, int quote)
{
    if (w->ips == NULL)
        return 1;
    if (w->nips >= w->maxips)
        return 0;
    ip_t *ip = w->ips + w->nips++;
    memset(ip, 0, sizeof *ip);
    ip->l3 = at;
    ip->version = version;
    ip->depth = depth;
    ip->quote = quote;
    ip->l4 = -1;
    ip->src = ip->dst = -1;
    return 1;
}

/* The IPv6 layer walked into last: its network headers end at `l4start` (protocol `nh` there), its datagram at
 * `stop` (`cut`: a quote of its start), its pseudo-header's addresses at `src`, `dst`; `fragment` as ip_t's. */
static void ipv6_noted(walk_t *w, Py_ssize_t l4start, Py_ssize_t stop, Py_ssize_t src, Py_ssize_t dst, unsigned nh,
                       int cut, int fragment)
{
    ip_t *ip = last_ip(w);
    if (ip == NULL)
        return;
    ip->hdr_end = ip->l3 + CT_IPV6HDR_SIZE;
    ip->l4start = l4start;
    ip->end = stop;
    ip->src = src;
    ip->dst = dst;
    ip->proto = (int)nh;
    ip->cut = cut;
    ip->fragment = fragment;
}

/* Field `code` recorded with its verdict (w->recs, where the walk keeps records; ok -1: not verifiable here) and its
 * code emitted, plus `flag` (NONE: a UDP checksum legitimately 0; NA: a field counted n/a; else 0). */
static inline __attribute__((always_inline)) int verdict(walk_t *w, int code, int depth, Py_ssize_t header,
                                                         Py_ssize_t field, Py_ssize_t end, unsigned stored,
                                                         unsigned computed, int pass, int reason, int flag,
                                                         uint64_t path)
{
    if (w->recs != NULL) {
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
        rec->end = end;
    }
    return emit(w, code + flag, depth);
}

/* The field at `field` of the header at `header`, recorded; without w->judge, found only (ok, as the rewriter reads
 * the stack: it checks nothing). */
static int found(walk_t *w, int code, int depth, Py_ssize_t header, Py_ssize_t field, Py_ssize_t end, uint64_t path)
{
    return verdict(w, code, depth, header, field, end, be16(w->b + field), 0, 1, RS_OK, 0, path);
}

/* judge's verdict on a field that does not pass at once (a stored 0 or 0xffff, or a sum that is not the stored
 * value): out of line and cold, so that the common case inlined into judge's three callers stays small. */
static __attribute__((noinline, cold)) int judge_rest(walk_t *w, int code, int depth, Py_ssize_t header,
                                                      Py_ssize_t field, Py_ssize_t end, uint64_t addrs,
                                                      uint64_t proto, uint64_t ps, int offload, int udp,
                                                      unsigned stored, uint64_t path)
{
    int pass, reason, absent = 0;
    /* A UDP checksum of 0 legitimately absent (RFC 768 over IPv4; RFC 6935 on a tunnel port over IPv6) passes
     * whatever its datagram sums to, and a walk that keeps no records (the checker's first pass: only the codes)
     * never reads the computed value: nothing to sum (VXLAN's and Geneve's outer datagrams, most of a tunnel's
     * bytes). */
    if (udp && stored == 0 && udp != UDP6 && w->recs == NULL)
        return emit(w, code + NONE, depth);
    const uint8_t *b = w->b;
    uint64_t ps0 = csum_add_ea64(addrs, proto);  /* the pseudo-header's sum without the length */
    uint64_t rest = csum_ones16_without(b + header, (uint64_t)(end - header), (uint64_t)(field - header));
    unsigned r = (unsigned)csum_reduce(csum_add_ea64(rest, ps), 16), computed = r ^ M16;
    if (udp && computed == 0)
        computed = CSUM_MANGLED_0;
    pass = csum_fold_to((uint64_t)r + stored, 16) == M16;  /* two 16-bit values: two folds */
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
    return verdict(w, code, depth, header, field, end, stored, computed, pass, reason, absent ? NONE : 0, path);
}

/* The verdict on the field at `field` of the header at `header` (csum/layers/check.py evaluate for the
 * protocols walked here): the checksum covers [header, end) (`field` even from `header`); the pseudo-header is
 * `addrs` (its two addresses' 64-bit end-around sum, csum_addr_sum64's), `proto` and `length` (what its length adds,
 * csum_pseudo_length's), all 0 for none: their sum with the length is csum_pseudo's, without it transmit offload's
 * other form, each reduced (csum_reduce) only for a field that does not pass at once; `udp`: how a stored 0 is read,
 * and a computed 0 is sent as 0xffff. A failing field ends the walk unless w->report. Returns 0 to hand the packet to
 * the Python walker. Inlined into its three callers (one per field: no call of 12 arguments), the common case only
 * (judge_rest: the others). */
static inline __attribute__((always_inline)) int judge(walk_t *w, int code, int depth, Py_ssize_t header,
                                                       Py_ssize_t field, Py_ssize_t end, uint64_t addrs,
                                                       uint64_t proto, uint64_t length, int offload, int udp,
                                                       uint64_t path)
{
    if (w->n >= w->slots)
        return 0;
    if (!w->judge)
        return found(w, code, depth, header, field, end, path);
    unsigned stored = be16(w->b + field);
    /* The common case first: a stored value other than 0 and 0xffff that passes is the computed one (the rest's
     * canonical sum r is 0xffff - stored, the only value in 1..0xfffe congruent to it), an OK. */
    uint64_t ps = csum_add_ea64(addrs, proto + length);  /* the pseudo-header's sum, csum_pseudo's (mod 0xffff) */
    if (__builtin_expect(stored != 0 && stored != M16 &&
                         csum_ones16_with(w->b + header, (uint64_t)(end - header), ps) == M16, 1))
        return verdict(w, code, depth, header, field, end, stored, stored, 1, RS_OK, 0, path);
    return judge_rest(w, code, depth, header, field, end, addrs, proto, ps, offload, udp, stored, path);
}


static int quoted(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path);

/* The transport field of a datagram only partly here (csum/layers/walk.py partial), for `reason`: a later fragment
 * has none (RS_NON_FIRST_FRAGMENT), the first one's is not verifiable alone (RS_NEEDS_REASSEMBLY), nor is that of an
 * ICMP error's quote of the datagram's start (RS_PARTIAL_QUOTE, counted n/a), their stored value reported when the
 * field is here. The datagram's transport header starts at `at`, the bytes here end at `stop`. */
int walk_partial(walk_t *w, unsigned proto, int v4, Py_ssize_t at, Py_ssize_t stop, int depth, int reason,
                   uint64_t path)
{
    int code, token, pseudo;
    Py_ssize_t field;
    if (proto == CT_TCP) {
        code = C_TCP, token = T_TCP, field = CT_TCP_FIELD, pseudo = CT_TCP_PSEUDO;
    } else if (proto == CT_UDP) {
        code = C_UDP, token = T_UDP, field = CT_UDP_FIELD, pseudo = CT_UDP_PSEUDO;
    } else if ((proto == CT_ICMP && v4) || (proto == CT_ICMPV6 && !v4)) {
        code = v4 ? C_ICMP : C_ICMPV6, token = v4 ? T_ICMP : T_ICMPV6, field = v4 ? CT_ICMP_FIELD : CT_ICMPV6_FIELD;
        pseudo = v4 ? CT_ICMP_PSEUDO : CT_ICMPV6_PSEUDO;
    } else {
        return 0;
    }
    if (w->n >= w->slots)
        return 0;
    PUSH(path, token);
    ip_t *ip = last_ip(w);
    if (ip != NULL) {
        ip->l4 = w->n;
        ip->pseudo = pseudo;
    }
    int here = reason != RS_NON_FIRST_FRAGMENT && at + field + 2 <= stop;  /* the field is in these bytes */
    unsigned stored = here ? be16(w->b + at + field) : 0;
    if (here && w->judge && reason == RS_PARTIAL_QUOTE && proto == CT_UDP && stored == 0)
        return 0;  /* the start of a datagram sent without a checksum (RFC 768): the Python walker's verdict */
    /* computed: none, ok is -1 (set so that no reader meets an unset value) */
    return verdict(w, code, depth, at, here ? at + field : -1, -1, stored, 0, -1, reason,
                   reason == RS_PARTIAL_QUOTE ? NA : 0, path);
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
        return walk_ip(w, at, stop, depth, value, path);
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
        return walk_ip(w, e.inner, stop, depth, e.next, path);
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
        return walk_ip(w, e.inner, e.end, depth, e.next, path);
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
    if (e.csum && !judge(w, C_GRE, depth, at, at + CT_GRE_FIELD, stop, 0, 0, 0, 0, NOT_UDP, path))
        return 0;
    if (e.next != CT_ETH_TEB)
        return walk_ip(w, e.inner, stop, depth + 1, e.next, path);
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
    return walk_ip(w, e.inner, stop, depth, e.next, path);
}

/* A GTP T-PDU (csum/layers/tunnels.py gtp): GTPv1-U (3GPP TS 29.281 5; `v1`: the GTP-U port) or GTPv0 (GSM 09.60 6),
 * its Length bounding the IPv4 or IPv6 packet inside. Other messages and versions: the Python walker. */
static int gtp(walk_t *w, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path, int v1)
{
    encap_t e;
    if (!encap_gtp(w->b, at, stop, v1, &e))
        return 0;
    PUSH(path, T_GTP);
    return walk_ip(w, e.inner, e.end, depth, ANY_IP, path);
}

/* What a UDP datagram at `at` to `stop` carries, by its destination port (table "udp.port", csum/layers/transport.py
 * _udp): VXLAN, Geneve, GTP or GRE-in-UDP one level deeper; else, or when it is empty, nothing (1). */
static int udp_payload(walk_t *w, unsigned port, Py_ssize_t at, Py_ssize_t stop, int depth, uint64_t path)
{
    Py_ssize_t inner = at + CT_UDP_MIN;
    int layer = ct_next_udp_port(port);
    if (layer == L_NONE || inner == stop)  /* a datagram that carries nothing further: judged at any depth */
        return 1;
    if (layer == L_GRE_UDP)  /* GRE stands at UDP's depth (RFC 8086) */
        return gre(w, inner, stop, depth, path);
    if (depth + 1 > MAX_DEPTH)
        return 0;
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

/* Where the RFC 4884 extension structure of the ICMP error at `at` (its message ending at `stop`) starts, as
 * csum/layers/transport.py quote finds it; 0 for none (the quote runs to `stop`). It follows the quote length the
 * message gives (at least 128 bytes) when an extension header of version 2 fits there; without a length (RFC 4884
 * 5.5: an old sender's), after a 128-byte quote whose datagram ends inside it, zeros after it. */
static Py_ssize_t icmp_extension(const walk_t *w, Py_ssize_t at, Py_ssize_t stop, int v4)
{
    const uint8_t *b = w->b;
    uint64_t lengthed = v4 ? CT_ICMP_ERRORS_LENGTHED : CT_ICMPV6_ERRORS_LENGTHED;
    Py_ssize_t length_at = at + (v4 ? CT_ICMP_ERRORS_LENGTH_AT : CT_ICMPV6_ERRORS_LENGTH_AT);
    if (!((lengthed >> b[at]) & 1) || length_at >= w->len)
        return 0;
    Py_ssize_t start = at + CT_ICMP_QUOTE, room = stop < w->len ? stop : w->len;
    Py_ssize_t length = b[length_at] * (v4 ? CT_ICMP_ERRORS_LENGTH_UNIT : CT_ICMPV6_ERRORS_LENGTH_UNIT);
    int guessed = length == 0;
    if (guessed)
        length = CT_ICMP_EXT_MIN_QUOTE;
    if (start + length + CT_ICMP_EXT_HLEN > room || length < CT_ICMP_EXT_MIN_QUOTE ||
        b[start + length] >> 4 != CT_ICMP_EXT_VERSION)
        return 0;
    if (guessed) {  /* padded_quote: the quoted datagram ends inside the 128 bytes, zeros after it */
        unsigned version = b[start] >> 4;
        Py_ssize_t size;
        if (version == 4 && start + CT_IPHDR_TOT_LEN + 2 <= w->len)
            size = be16(b + start + CT_IPHDR_TOT_LEN);
        else if (version == 6 && start + CT_IPV6HDR_PAYLOAD_LEN + 2 <= w->len)
            size = CT_IPV6HDR_SIZE + be16(b + start + CT_IPV6HDR_PAYLOAD_LEN);
        else
            return 0;
        if (size > length)
            return 0;
        for (Py_ssize_t k = start + size; k < start + length; k++)
            if (b[k])
                return 0;
    }
    return start + length;
}

/* A protocol with the Internet checksum the C walker judges (its csum/layers/table.py entry): its layer code, field
 * offset, path token, pseudo-header, offload, UDP zero rule (table.UDP_ENTRY's Zero.UDP), whether it is an ICMP error
 * quoting a datagram (where its quote ends: qend), and a UDP datagram's destination port. */
typedef struct {
    int code, token, pseudo, offload, udp, quote;
    Py_ssize_t field;
    unsigned port;
    Py_ssize_t qend;
} l4_t;

/* A TCP header of `len` bytes at `at`: 0 for a malformed one or a payload on OpenFlow's ports (the Python walker's). */
static int tcp_l4(const uint8_t *b, Py_ssize_t at, Py_ssize_t len, l4_t *l)
{
    Py_ssize_t doff = len > CT_TCP_DOFF_AT ? (b[at + CT_TCP_DOFF_AT] >> 4) * CT_TCP_DOFF_UNIT : 0;
    if (len < CT_TCP_MIN || doff < CT_TCP_MIN || doff > len ||
        (doff < len && (CT_TCP_EMBEDDED(be16(b + at)) || CT_TCP_EMBEDDED(be16(b + at + CT_TUNNEL_DEMUX_AT)))))
        return 0;
    *l = (l4_t){C_TCP, T_TCP, CT_TCP_PSEUDO, CT_TCP_OFFLOAD, NOT_UDP, 0, CT_TCP_FIELD, 0, 0};
    return 1;
}

/* A UDP datagram of `len` bytes at `at`: 0 for a length that is not the IP payload's, or a tunnel or embedded packet
 * the C walker leaves to the Python walker (table.C_EDGES "udp.port"). */
static int udp_l4(const uint8_t *b, Py_ssize_t at, Py_ssize_t len, int v4, l4_t *l)
{
    if (len < CT_UDP_MIN || be16(b + at + CT_UDP_LEN) != len)
        return 0;
    unsigned port = be16(b + at + CT_TUNNEL_DEMUX_AT), source = be16(b + at);
    if (CT_UDP_TUNNEL_ELSEWHERE(port) || (source < port && CT_UDP_TUNNEL_BY_SOURCE(source)))
        return 0;
    int udp = v4 ? UDP4 : ct_next_udp_port(port) != L_NONE ? UDP6_TUNNEL : UDP6;
    *l = (l4_t){C_UDP, T_UDP, CT_UDP_PSEUDO, CT_UDP_OFFLOAD, udp, 0, CT_UDP_FIELD, port, 0};
    return 1;
}

/* An ICMP (`v4`) or ICMPv6 message at `at` to `stop`: 0 when short, or for the checker (w->judge) when an RFC 4884
 * extension follows an error's quote (its own checksum: the Python walker's). */
static int icmp_l4(const walk_t *w, Py_ssize_t at, Py_ssize_t stop, int v4, l4_t *l)
{
    const uint8_t *b = w->b;
    if (stop - at < (v4 ? CT_ICMP_MIN : CT_ICMPV6_MIN))
        return 0;
    /* an error that quotes a datagram (RFC 792, RFC 4443): tables "icmp.type", "icmpv6.type" */
    int layer = v4 ? ct_next_icmp_type(b[at]) : ct_next_icmpv6_type(b[at]);
    int quote = layer == L_ICMP_QUOTE || layer == L_ICMPV6_QUOTE;
    Py_ssize_t ext = quote ? icmp_extension(w, at, stop, v4) : 0;
    if (ext && w->judge)
        return 0;
    if (v4)
        *l = (l4_t){C_ICMP, T_ICMP, CT_ICMP_PSEUDO, CT_ICMP_OFFLOAD, NOT_UDP, quote, CT_ICMP_FIELD, 0, 0};
    else
        *l = (l4_t){C_ICMPV6, T_ICMPV6, CT_ICMPV6_PSEUDO, CT_ICMPV6_OFFLOAD, NOT_UDP, quote, CT_ICMPV6_FIELD, 0, 0};
    l->qend = ext ? ext : stop;
    return 1;
}

/* The checksum of `l` at `at` over the datagram to `stop` (csum/layers/transport.py checksummed), then what the
 * message carries: an ICMP error's quote, a UDP tunnel. */
static int checksummed(walk_t *w, const l4_t *l, unsigned proto, Py_ssize_t at, Py_ssize_t stop, int v4,
                       Py_ssize_t src, Py_ssize_t dst, int depth, uint64_t path)
{
    const uint8_t *b = w->b;
    Py_ssize_t len = stop - at;
    uint64_t addrs = 0, pproto = 0, plength = 0;  /* the pseudo-header's parts (judge) */
    if (l->pseudo && w->judge) {
        uint64_t size = v4 ? CT_IPHDR_ADDR_SIZE : CT_IPV6HDR_ADDR_SIZE;
        addrs = csum_add_ea64(csum_addr_sum64(b + src, size, 1), csum_addr_sum64(b + dst, size, 1));
        pproto = proto;
        plength = csum_pseudo_length((uint64_t)len);
    }
    PUSH(path, l->token);
    if (!judge(w, l->code, depth, at, at + l->field, stop, addrs, pproto, plength, l->offload, l->udp, path))
        return 0;
    ip_t *ip = last_ip(w);
    if (ip != NULL) {
        ip->l4 = w->n - 1;
        ip->pseudo = l->pseudo;
        ip->quoting = l->quote;
    }
    if (l->quote)
        return quoted(w, at + CT_ICMP_QUOTE, l->qend, depth, path);
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
        return walk_ip(w, at, stop, depth + 1, layer == L_IPV4 ? CT_ETH_IPV4 : CT_ETH_IPV6, path);
    case L_GRE:
        return gre(w, at, stop, depth, path);
    case L_AH: {
        Py_ssize_t size = v4 && stop - at >= 2 ? ((Py_ssize_t)b[at + 1] + CT_AH_BIAS) * CT_AH_UNIT : 0;
        if (!size || at + size > stop)
            return 0;
        PUSH(path, T_AH);
        if (last_ip(w) != NULL)
            last_ip(w)->ah = 1;
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
        ok = (layer == L_ICMP) == v4 && icmp_l4(w, at, stop, v4, &l);
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
    Py_ssize_t ihl = (b[at] & 15) * CT_IHL_UNIT, total = be16(b + at + CT_IPHDR_TOT_LEN);
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
        !judge(w, C_IPV4, depth, at, at + CT_IPV4_FIELD, at + ihl, 0, 0, 0, 0, NOT_UDP, path))
        return 0;
    ip_t *ip = last_ip(w);
    if (ip != NULL) {
        ip->hdr_end = ip->l4start = at + ihl;
        ip->cut = total > end - at;
        ip->end = ip->cut ? end : at + total;
        ip->src = at + CT_IPHDR_SADDR;
        ip->dst = at + CT_IPHDR_DADDR;
        ip->proto = (int)proto;
        ip->fragment = frag ? ((frag & CT_IP_OFFSET) ? 2 : 1) : 0;
    }
    if (frag) {
        int known = proto == CT_TCP || proto == CT_UDP || proto == CT_ICMP;
        if (!known && w->judge)  /* (a datagram the checker does not reassemble; any one the rewriter takes) */
            return 0;
        o->l3 = at;
        o->ihl = ihl;
        o->dlen = total - ihl;
        o->offset = (frag & CT_IP_OFFSET) * CT_FRAG_UNIT;
        o->more = (frag & CT_IP_MF) != 0;
        if (o->offset && known && !emit_na(w, proto == CT_TCP ? C_TCP : proto == CT_UDP ? C_UDP : C_ICMP, depth))
            return 0;
        o->path = path;
        return FRAGMENT;
    }
    if (total > end - at)  /* a quote of the datagram's start */
        return walk_partial(w, proto, 1, at + ihl, end, depth, RS_PARTIAL_QUOTE, path);
    return transport(w, proto, at + ihl, at + total, 1, at + CT_IPHDR_SADDR, at + CT_IPHDR_DADDR, depth, path);
}

/* The Fragment header at `pos` of an outer IPv6 fragment whose header is at `at` (its payload ending at `stop`;
 * `word`: the header's offset and M flag): the datagram's key and this fragment's place in it go to `o`; FRAGMENT,
 * or, for the checker (w->judge), 0 for a datagram of a protocol csum does not reassemble in C. */
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
    int known = o->proto == CT_TCP || o->proto == CT_UDP || o->proto == CT_ICMPV6;
    if (!known && w->judge)  /* (a datagram the checker does not reassemble; any one the rewriter takes) */
        return 0;
    if (o->offset && known && !emit_na(w, o->proto == CT_TCP ? C_TCP : o->proto == CT_UDP ? C_UDP : C_ICMPV6, depth))
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
            if (fragment && !w->frag6) {  /* an outer fragment of a capture: the datagram decides */
                ipv6_noted(w, pos + CT_FRAG_HDR_SIZE, stop, src, dst, b[pos], 0, fragment);
                return ipv6_outer_fragment(w, o, at, pos, stop, word, depth, path);
            }
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
    ipv6_noted(w, pos, stop, src, dst, nh, cut, fragment);
    if (fragment)
        return walk_partial(w, nh, 0, pos, stop, depth, fragment == 2 ? RS_NON_FIRST_FRAGMENT : RS_NEEDS_REASSEMBLY, path);
    if (cut)
        return walk_partial(w, nh, 0, pos, stop, depth, RS_PARTIAL_QUOTE, path);
    return transport(w, nh, pos, stop, 0, src, dst, depth, path);
}

/* An IP header at `at` of the kind `ethertype` names (ANY_IP: the version nibble decides), its datagram within
 * `end`: ipv4_layer or ipv6_layer, the outer header's version and path noted at depth 0. */
int walk_ip(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, unsigned ethertype, uint64_t path)
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
    if (!new_ip(w, at, version == 4 ? 4 : 6, depth, 0))
        return 0;
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
    Py_ssize_t ihl = (b[at] & 15) * CT_IHL_UNIT;
    if (at + head > w->len || (version == 4 && ihl >= CT_IPHDR_SIZE && at + ihl > w->len))
        return 1;
    if (!new_ip(w, at, (int)version, depth + 1, 1))
        return 0;
    w->ip = at;
    w->ipv = (int)version;
    if (version == 4)
        return ipv4_layer(w, at, stop, depth + 1, NULL, 1, path);
    return ipv6_layer(w, at, stop, depth + 1, NULL, 1, path);
}

/* The link layer of CT_LINKS[index] (its path token: T_LINK + its name's index). */
int walk_link(walk_t *w, Py_ssize_t len, Py_ssize_t index)
{
    const uint8_t *b = w->b;
    const ct_link_t *row = CT_LINKS + index;
    Py_ssize_t header = row->header, at = row->at;
    int kind = row->kind;  /* table "link.type" */
    uint64_t path = T_LINK + row->name;
    if (kind == L_IP)
        return walk_ip(w, 0, len, 0, ANY_IP, 0);
    if (path >= T_COUNT || len < header)
        return 0;
    switch (kind) {
    case L_FAMILY_HOST:
    case L_FAMILY_NET: {  /* the family word in the capturing host's byte order or the network's */
        uint32_t le = b[0] | (b[1] << 8) | (b[2] << 16) | ((uint32_t)b[3] << 24), be = be32(b);
        uint32_t fam = (CT_FAMILY_IPV4(le) || CT_FAMILY_IPV6(le)) ? le : be;
        if (CT_FAMILY_IPV4(fam))
            return walk_ip(w, header, len, 0, CT_ETH_IPV4, path);
        if (CT_FAMILY_IPV6(fam))
            return walk_ip(w, header, len, 0, CT_ETH_IPV6, path);
        return 0;
    }
    case L_ETHERTYPE:
        return ethertype_layer(w, be16(b + at), header, len, 0, path);
    case L_ETHERNET:
        return eth_layer(w, 0, len, 0, 0, (int)path);
    default:
        return 0;
    }
}

Py_ssize_t walk_link_row(int64_t linktype)
{
    for (Py_ssize_t k = 0; k < CT_NLINKS; k++)
        if (CT_LINKS[k].number == linktype)
            return k;
    return -1;
}
