/*
 * csum/engine/_encap.h: how csum's C reads the encapsulation headers, shared by the C walker (_cwalk.c) and the C
 * rewriter (_rewrite.c) so that both read each one the one way csum/layers/walk.py and csum/layers/tunnels.py do
 * (the reference): an MPLS label stack, a PPPoE session, GRE, Geneve, a GTP T-PDU. Each function is pure: it reads
 * the header at `at` (its room ending at `stop`) and says where the payload starts, where it ends and what it is (an
 * EtherType: CT_ETH_IPV4, CT_ETH_IPV6, CT_ETH_TEB for an Ethernet frame, CT_ETH_MPLS; or ENCAP_ANY_IP, the version
 * nibble decides); 0 for a header csum leaves to the Python walker. What to do with the payload (the next layer, the
 * path) is the caller's. Protocol numbers and layouts come from _cwalk_table.h (csum/layers/table.py). Every read
 * lies in [at, stop).
 */
#ifndef CSUM_ENCAP_H
#define CSUM_ENCAP_H

#include <Python.h>
#include <stdint.h>

#include "_cwalk_table.h"

/* The payload's kind when its first nibble says IPv4 or IPv6 (a GTP T-PDU's): no EtherType has it. */
#define ENCAP_ANY_IP 0x10000

/* What an encapsulation header carries: its payload [inner, end), of kind `next`; GRE's checksum present (`csum`,
 * its field at the header's CT_GRE_FIELD) and an ERSPAN header walked past (`erspan`). */
typedef struct {
    Py_ssize_t inner, end;
    unsigned next;
    int csum, erspan;
} encap_t;

static inline unsigned encap_be16(const uint8_t *p) { return ((unsigned)p[0] << 8) | p[1]; }

/* The EtherType of a payload the dispatch tables name by layer id (an IP packet, MPLS, an Ethernet frame); 0 for
 * another. */
static inline unsigned encap_ethertype(int layer)
{
    switch (layer) {
    case L_IPV4:
        return CT_ETH_IPV4;
    case L_IPV6:
        return CT_ETH_IPV6;
    case L_MPLS:
        return CT_ETH_MPLS;
    case L_ETH:
        return CT_ETH_TEB;
    default:
        return 0;
    }
}

/* An MPLS label stack (RFC 3032; csum/layers/walk.py h_mpls): the labels to the bottom of the stack, then IPv4 or
 * IPv6 by the first nibble, or an RFC 4385 control word and an Ethernet frame (RFC 4448). */
static inline int encap_mpls(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, encap_t *e)
{
    for (int bottom = 0; !bottom; at += CT_MPLS_LABEL) {
        if (at + CT_MPLS_LABEL > stop)
            return 0;
        bottom = b[at + CT_MPLS_BOTTOM_AT] & 1;
    }
    if (at >= stop)
        return 0;
    e->end = stop;
    e->csum = e->erspan = 0;
    e->inner = at;
    int layer = ct_next_mpls_nibble(b[at] >> 4);  /* table "mpls.nibble" */
    if (layer == L_PW) {
        e->inner = at + CT_MPLS_CONTROL_WORD;
        layer = L_ETH;
    }
    e->next = encap_ethertype(layer);
    return e->next != 0;
}

/* A PPPoE session (RFC 2516; csum/layers/walk.py h_pppoe): its Length bounds the PPP frame (one that runs past the
 * room is the Python walker's: malformed); a 1- or 2-byte PPP protocol (RFC 1661 6.5), then IPv4, IPv6 or MPLS. */
static inline int encap_pppoe(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, encap_t *e)
{
    if (at + CT_PPPOE_HDR_SIZE > stop)
        return 0;
    Py_ssize_t end = at + CT_PPPOE_HDR_SIZE + encap_be16(b + at + CT_PPPOE_HDR_LENGTH), pos = at + CT_PPPOE_HDR_SIZE;
    if (end > stop || pos >= end)
        return 0;
    unsigned proto = b[pos];
    if (proto & 1) {
        pos += 1;
    } else {
        if (pos + 2 > end)
            return 0;
        proto = encap_be16(b + pos);
        pos += 2;
    }
    e->inner = pos;
    e->end = end;
    e->csum = e->erspan = 0;
    e->next = encap_ethertype(ct_next_ppp_protocol(proto));  /* table "ppp.protocol" */
    return e->next != 0;
}

/* GRE (csum/layers/walk.py gre: RFC 2784, RFC 2890 key and sequence number): its optional checksum over the GRE
 * header and payload (no pseudo-header), then IPv4, IPv6, or Ethernet by transparent bridging (0x6558) or ERSPAN
 * types I, II and III (a type III platform sub-header walked past too). Routing present, version 1 (PPTP) and other
 * payloads: the Python walker. */
static inline int encap_gre(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, encap_t *e)
{
    if (at + CT_GRE_HLEN > stop)
        return 0;
    unsigned flags = b[at], proto = encap_be16(b + at + CT_TUNNEL_DEMUX_AT);
    if ((flags & CT_GRE_ROUTING) || (b[at + 1] & CT_GRE_VERSION))
        return 0;
    Py_ssize_t inner = at + CT_GRE_HLEN + CT_GRE_WORD * (!!(flags & CT_GRE_CSUM) + !!(flags & CT_GRE_KEY) +
                                                         !!(flags & CT_GRE_SEQ));
    if (inner > stop)
        return 0;
    e->end = stop;
    e->csum = (flags & CT_GRE_CSUM) != 0;
    e->erspan = 0;
    e->inner = inner;
    int layer = ct_next_gre_proto(proto);  /* table "gre.proto" */
    switch (layer) {
    case L_ERSPAN:
        e->next = CT_ETH_TEB;
        if (!(flags & CT_GRE_SEQ))  /* ERSPAN type I: the frame right after GRE */
            return 1;
        e->erspan = 1;  /* type II */
        e->inner = inner + CT_ERSPAN2_HLEN;
        return 1;
    case L_ERSPAN3:  /* type III, maybe a platform sub-header */
        if (inner + CT_ERSPAN3_HLEN > stop)
            return 0;
        e->next = CT_ETH_TEB;
        e->erspan = 1;
        e->inner = inner + CT_ERSPAN3_HLEN + ((b[inner + CT_ERSPAN3_O_AT] & 1) ? CT_ERSPAN3_PLATFORM : 0);
        return 1;
    default:
        e->next = encap_ethertype(layer);
        return e->next != 0;
    }
}

/* Geneve (RFC 8926; csum/layers/walk.py h_geneve): 8 bytes and the options, then what its protocol type names. */
static inline int encap_geneve(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, encap_t *e)
{
    if (at + CT_GENEVE_HLEN > stop)
        return 0;
    Py_ssize_t size = CT_GENEVE_HLEN + (b[at] & CT_GENEVE_OPT_LEN) * CT_GENEVE_UNIT;
    if (at + size > stop)
        return 0;
    e->inner = at + size;
    e->end = stop;
    e->next = encap_be16(b + at + CT_GENEVE_PROTOCOL);
    e->csum = e->erspan = 0;
    return 1;
}

/* A GTP T-PDU (csum/layers/tunnels.py gtp): GTPv1-U (3GPP TS 29.281 5; `v1`: on the GTP-U port, with its extension
 * headers) or GTPv0 (GSM 09.60 6), its Length bounding the IPv4 or IPv6 packet inside. Other messages and versions:
 * the Python walker. */
static inline int encap_gtp(const uint8_t *b, Py_ssize_t at, Py_ssize_t stop, int v1, encap_t *e)
{
    if (at + 1 > stop)
        return 0;
    unsigned flags = b[at], version = flags >> CT_GTP_VERSION_SHIFT;
    Py_ssize_t size;
    if (version == 0)
        size = CT_GTP_HDR_V0_SIZE;
    else if (version == 1 && v1 && (flags & CT_GTP_PT))
        size = CT_GTP_HDR_SIZE;
    else
        return 0;
    if (at + size > stop || b[at + CT_GTP_HDR_TYPE] != CT_GTP_TPDU)
        return 0;
    Py_ssize_t end = at + size + encap_be16(b + at + CT_GTP_HDR_LENGTH), pos = at + size;
    if (end > stop)
        return 0;
    if (version == 1 && (flags & CT_GTP_OPTIONAL_FLAGS)) {
        pos += CT_GTP_HDR_OPTIONAL;
        if (pos > end)
            return 0;
        for (unsigned next = (flags & CT_GTP_E) ? b[pos - 1] : 0; next;) {  /* extension headers */
            Py_ssize_t units = pos + 1 <= end ? b[pos] * CT_GTP_HDR_EXT_UNIT : 0;
            if (!units || pos + units > end)
                return 0;
            next = b[pos + units - 1];
            pos += units;
        }
    }
    e->inner = pos;
    e->end = end;
    e->next = ENCAP_ANY_IP;
    e->csum = e->erspan = 0;
    return 1;
}

#endif
