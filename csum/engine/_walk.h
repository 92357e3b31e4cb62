/*
 * csum/engine/_walk.h: the C walker (csum/engine/_walk.c), linked into the checker (_cwalk.c) and the rewriter
 * (_rewrite.c): the one C that walks a packet, the way csum/layers/walk.py and csum/layers/tunnels.py do (the
 * reference). A walk produces the packet's stack description in a walk_t: every checksum field found (rec_t: its
 * layer, the bytes it covers, its header, depth, path) and, where the caller asks for them (walk_t.ips), every IP
 * layer (ip_t: its header, where its transport part starts and its datagram ends, the pseudo-header's addresses, its
 * transport record, whether it is an ICMP error's quote or quotes one, a fragment). The checker judges the fields
 * as it walks (walk_t.judge: csum/layers/check.py evaluate); the rewriter edits the stack it gets.
 */
#ifndef CSUM_WALK_H
#define CSUM_WALK_H

#include <Python.h>
#include <stdint.h>

#include "_cwalk_table.h"
#include "_encap.h"

/* The walker's functions are each extension's own (not exported: no clash between modules). */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* The codes fast_check writes: layer code + DEPTH * depth, plus NA ("n/a": a later fragment's transport layer) or
 * NONE ("none": UDP sent without a checksum); else "ok". */
#define DEPTH 16
#define NA 256
#define NONE 512
/* walk_link's answer for an outer IPv4 or IPv6 fragment (its own header judged): the datagram decides. */
#define FRAGMENT 2
/* The checker's records per packet (fast_check's codes and rows). */
#define SLOTS 6
/* walk_ip's `ethertype` for a bare IP layer: the version nibble says which. */
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
    Py_ssize_t end;         /* the checksum covers [header, end); -1: a field not judged (partial, a fragment's) */
} rec_t;

/* One IP layer of the walk (walk_t.ips), offsets from the packet start: its header l3 (version 4 or 6) and where
 * its network header ends (IPv4: the IHL; IPv6: the fixed header); l4start: where its transport part starts (past
 * the options, extension headers, a fragment header); end: where its datagram ends in the packet; src, dst: the
 * pseudo-header's addresses (a Home Address option's, a routing header's final destination); proto: the protocol
 * after the network headers; l4: the index of its transport field's record (-1: none, a tunnel's carrier); pseudo:
 * that checksum covers the pseudo-header. depth: 0 outer, +1 per tunnel or quote; quote: the datagram an ICMP error
 * quotes (cut: only its start is here); quoting: an ICMP error (its quote, when walked, is the next layer);
 * fragment: 1 the first of an outer fragmented datagram, 2 a later one; ah: an IPv4 AH walked past. */
typedef struct {
    Py_ssize_t l3, hdr_end, l4start, end, src, dst;
    int version, depth, quote, cut, quoting, fragment, ah, proto, pseudo, l4;
} ip_t;

/* A walk of one packet (b, len: its bytes). codes, recs: `slots` of each, n used (recs NULL: a judging walk that
 * keeps the codes only, the checker's first pass over a packet). outer: the outer IP header (for reassembly; NULL:
 * none taken). judge: compute each field's verdict (0: only find the fields); report: a failing
 * field is recorded (bad set) rather than ending the walk; frag6: an IPv6 fragment's transport field is reported
 * (not handed to `outer`). ips: `maxips` IP layers recorded, nips used (NULL: none recorded). ip, ipv: the innermost
 * IP header walked into so far (0: none yet). */
typedef struct {            /* (the pointers and sizes first, the ints packed after: set up once a packet) */
    const uint8_t *b;
    int16_t *codes;
    outer_t *outer;
    rec_t *recs;
    ip_t *ips;
    Py_ssize_t ip;
    Py_ssize_t len;         /* the bytes captured (an ICMP error's quote may reach past its message) */
    int n, report, bad, frag6, ipv, slots, judge, nips, maxips;
} walk_t;

static inline unsigned be16(const uint8_t *p) { return ((unsigned)p[0] << 8) | p[1]; }

static inline uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* The link layer of CT_LINKS[index] and everything inside it, `len` bytes: 1 (every field found), FRAGMENT (an
 * outer fragment: w->outer says which), 0 (something the C walker does not walk: the Python walker's). */
int walk_link(walk_t *w, Py_ssize_t len, Py_ssize_t index);
/* An IP header at `at` of the kind `ethertype` names (ANY_IP: the version nibble decides), its datagram within
 * `end`, at `depth`, behind `path`: as walk_link. */
int walk_ip(walk_t *w, Py_ssize_t at, Py_ssize_t end, int depth, unsigned ethertype, uint64_t path);
/* The transport field of a datagram only partly here (a fragment's, a quote's start: `reason`), its transport
 * header at `at`, the bytes here ending at `stop`: 1 recorded, 0 not (no room, a protocol not walked). */
int walk_partial(walk_t *w, unsigned proto, int v4, Py_ssize_t at, Py_ssize_t stop, int depth, int reason,
                 uint64_t path);
/* The row of CT_LINKS for capture link type `linktype`, or -1 for a link type the walker does not walk. */
Py_ssize_t walk_link_row(int64_t linktype);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
