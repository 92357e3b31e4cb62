/*
 * csum/engine/_ipheaders.h: how csum's C reads the IP headers' own structure, shared by the C walker (_cwalk.c) and
 * the C rewriter (_rewrite.c) so that both walk a header the one way csum/layers/walk.py does (its twin, the
 * reference): IPv4 options and IPv6 hop-by-hop / destination options (RFC 791 3.1, RFC 8200 4.2), the final
 * destination a routing header names (RFC 8200 4.4, RFC 8754), the size of an IPv6 extension header. Protocol
 * numbers and layouts come from _cwalk_table.h (csum/layers/table.py). Every read lies in [at, end) as the caller
 * gives it.
 */
#ifndef CSUM_IPHEADERS_H
#define CSUM_IPHEADERS_H

#include <Python.h>
#include <stdint.h>

#include "_cwalk_table.h"

/* The options of an IPv4 header or an IPv6 hop-by-hop / destination options header: 0 (the Python walker's) for a
 * malformed one, a source route, a Jumbo Payload; a Home Address option (16 bytes, RFC 6275 6.3) sets *src to its
 * address where `src` is given (destination options), else is the Python walker's too. */
static inline int options_ok(const uint8_t *b, Py_ssize_t at, Py_ssize_t end, int v6, Py_ssize_t *src)
{
    while (at < end) {
        unsigned kind = b[at];
        if (kind == CT_IPOPT_END && !v6)
            return 1;
        if ((kind == CT_IPV6_TLV_PAD1 && v6) || (kind == CT_IPOPT_NOOP && !v6)) {
            at++;
            continue;
        }
        if (at + 2 > end)
            return 0;
        Py_ssize_t size = v6 ? b[at + 1] + 2 : b[at + 1];
        if (size < 2 || at + size > end)
            return 0;
        if (v6 && kind == CT_HOME_ADDRESS_OPTION && src != NULL && size == 2 + CT_IPV6HDR_ADDR_SIZE) {
            *src = at + 2;
            src = NULL;  /* the first one counts (csum/layers/walk.py ipv6_option) */
        } else if (v6 ? (kind == CT_JUMBO_OPTION || kind == CT_HOME_ADDRESS_OPTION) : CT_IS_SOURCE_ROUTE(kind)) {
            return 0;
        }
        at += size;
    }
    return 1;
}

/* The final destination a routing header with Segments Left names (csum/layers/walk.py routing_destination): its
 * last address (types 0, 2) or Segment List[0] (4, RFC 8754); -1 for another type (the Python walker's). */
static inline Py_ssize_t routing_destination(const uint8_t *b, Py_ssize_t at, Py_ssize_t size)
{
    unsigned kind = b[at + CT_IPV6_RT_TYPE];
    if (size < CT_ROUTING_ADDRESSED)
        return -1;
    if (CT_IS_ROUTING_LAST(kind))
        return at + size - CT_IPV6HDR_ADDR_SIZE;
    return kind == CT_ROUTING_SRH ? at + CT_SRH_SEGMENT0_AT : -1;
}

/* The size of the IPv6 extension header ``nh`` at ``at`` (its first 8 bytes there): a fragment header's fixed 8, AH's
 * in 4-byte units (RFC 4302 2.2), the others' in 8-byte units (RFC 8200 4.3). */
static inline Py_ssize_t ipv6_ext_size(const uint8_t *b, Py_ssize_t at, unsigned nh)
{
    return nh == CT_FRAGMENT ? CT_FRAG_HDR_SIZE
           : nh == CT_AH     ? ((Py_ssize_t)b[at + 1] + CT_AH_BIAS) * CT_AH_UNIT
                             : ((Py_ssize_t)b[at + 1] + 1) * CT_IPV6_EXT_UNIT;
}

#endif
