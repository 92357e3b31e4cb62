/*
 * csum/engine/_explain.c: the single-mistake hypotheses of one wrong checksum field, computed at once: the C twin of
 * csum/explain/hypotheses.py ``alone`` (csum/explain/sums.py arithmetic, odd_byte, padding, lengths and
 * named_lengths; csum/explain/header.py guesses), the reference. csum/explain/quick.py drives it and names each hit
 * through the reference's own texts; tests/explain/test_quick.py compares the two on every hypothesis, hit or not.
 *
 * Every value is the Python's: the covered bytes' plain sums as 16- and 32-bit words are taken once (the checksum
 * field's two bytes taken out of them), and each hypothesis is that sum adjusted (another pseudo-header length,
 * the padding's words added, the odd byte's taken out), then reduced the way the mistake reduces it. Sums and
 * folds are _arith.h's. Nothing is read outside the buffer: every offset the caller gives is checked against it,
 * and an argument out of range gives None (the caller then runs the Python).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_arith.h"
#include "_cwalk_table.h"
#include "_walk.h"

/* The hypotheses, in the order csum/explain/hypotheses.py alone yields them (csum/explain/quick.py VARIANTS). */
enum { H_NOT_COMPLEMENTED, H_BYTE_ORDER, H_SINGLE_FOLD16, H_SINGLE_FOLD32, H_CARRY_LOST16, H_CARRY_LOST32, H_ODD_BYTE,
       H_PADDING_COUNTED, H_PADDING, H_LENGTH_FULL, H_LENGTH_PARTIAL, H_TTL, H_TOS };

/* The longest IPv4 header: its IHL field's largest value (4 bits) in its units. */
#define IPV4_MAX_HEADER (15 * CT_IHL_UNIT)

/* The flags argument's bits (csum/explain/quick.py). */
enum { F_UDP = 1, F_MORE = 2, F_TCP = 4, F_IPV4 = 8, F_IP = 16, F_V6 = 32, F_L4 = 64, F_PSEUDO = 128 };

/* The most hypotheses one call gives: arithmetic's 6, the odd byte, padding's 2, two per named length (7), the TTL
 * and the ECN's 2. */
enum { MAX_HITS = 26 };

typedef struct {
    PyObject *out;
    int64_t want, right;  /* want < 0: every hypothesis; else only those storing want and not right */
    int n;                /* the hits appended */
    char variants[MAX_HITS];  /* their variants, in order (wrong_all's signature of the hits) */
    int full;                 /* a hit past MAX_HITS: the signature is cut, so wrong_all declines the packet */
} hits_t;

/* One hypothesis storing `value`, with the numbers its text names: appended when it is wanted; -1 on error. */
static int hit(hits_t *h, int variant, uint64_t value, uint64_t a, uint64_t b, uint64_t c)
{
    if (h->want >= 0 && ((int64_t)value != h->want || (int64_t)value == h->right))
        return 0;
    PyObject *t = PyTuple_New(5);
    if (t == NULL)
        return -1;
    const uint64_t numbers[] = {(uint64_t)variant, value, a, b, c};
    for (int i = 0; i < 5; i++) {
        PyObject *item = PyLong_FromUnsignedLongLong(numbers[i]);
        if (item == NULL) {
            Py_DECREF(t);
            return -1;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    int r = PyList_Append(h->out, t);
    Py_DECREF(t);
    if (r == 0 && h->n < MAX_HITS)
        h->variants[h->n++] = (char)variant;
    else if (r == 0)
        h->full = 1;
    return r;
}

/* csum/explain/sums.py checksum: the complement of the canonical 16-bit sum. */
static inline uint64_t complement(uint64_t total)
{
    return csum_reduce(total, 16) ^ M16;
}

/* csum/explain/sums.py stored_as: a computed 0 sent as all ones where the field's zero rule says so (UDP). */
static inline uint64_t stored_as(int udp, uint64_t value)
{
    return value == 0 && udp ? M16 : value;
}

static inline uint64_t swap_bytes(uint64_t x)
{
    return ((x & 0xff) << 8) | (x >> 8);
}

/* A byte's weight in a plain sum of `bytes`-byte big-endian words, at offset i of the message. */
static inline unsigned place(uint64_t i, unsigned bytes)
{
    return 8 * (bytes - 1 - (unsigned)(i & (bytes - 1)));
}

/* sums.py arithmetic: not complemented, bytes swapped, one fold (16- and 32-bit words), carries lost. */
static int arithmetic(hits_t *h, int udp, uint64_t total, uint64_t plain32)
{
    uint64_t right = stored_as(udp, complement(total)), folded = csum_reduce(total, 16);
    if (hit(h, H_NOT_COMPLEMENTED, folded, folded, right, 0) < 0
        || hit(h, H_BYTE_ORDER, swap_bytes(right), right, 0, 0) < 0)
        return -1;
    uint64_t once = csum_fold_once(total, 16);
    if (once > M16 && hit(h, H_SINGLE_FOLD16, stored_as(udp, ~once & M16), total, once, 0) < 0)
        return -1;
    uint64_t wide = csum_reduce(plain32, 32), once32 = csum_fold_once(wide, 16);
    if (once32 > M16 && hit(h, H_SINGLE_FOLD32, stored_as(udp, ~once32 & M16), wide, once32, 0) < 0)
        return -1;
    if (total > M16 && hit(h, H_CARRY_LOST16, stored_as(udp, ~total & M16), total >> 16, 0, 0) < 0)
        return -1;
    uint64_t lost = plain32 >> 32;
    if (lost
        && hit(h, H_CARRY_LOST32, stored_as(udp, complement(csum_fold_once(plain32 & M32, 16))), lost, 0, 0) < 0)
        return -1;
    return 0;
}

/* sums.py lengths over named_lengths' list: each length the packet names, in the full checksum and in transmit
 * offload's pseudo-header sum (head: the pseudo-header's sum without its length). */
static int lengths(hits_t *h, int udp, uint64_t head, uint64_t data16, int64_t length, const int64_t *named, int n,
                   int64_t hdr)
{
    int64_t seen[8];
    int k_seen = 0;
    seen[k_seen++] = length;
    for (int k = 0; k < n; k++) {
        int64_t l = named[k], dup = 0;
        for (int j = 0; j < k_seen; j++)
            dup |= seen[j] == l;
        if (dup || l < 0 || l > (int64_t)M32)
            continue;
        seen[k_seen++] = l;
        uint64_t part = head + csum_pseudo_length((uint64_t)l);
        if (hit(h, H_LENGTH_FULL, stored_as(udp, complement(part + data16)), (uint64_t)l, (uint64_t)k,
                (uint64_t)hdr) < 0
            || hit(h, H_LENGTH_PARTIAL, csum_reduce(part, 16), (uint64_t)l, (uint64_t)k, (uint64_t)hdr) < 0)
            return -1;
    }
    return 0;
}

/* header.py guesses: the IPv4 header's checksum with the H_TTL one higher, or the ECN before a CE mark. */
static int header(hits_t *h, const uint8_t *b, Py_ssize_t l3, Py_ssize_t l3_end, Py_ssize_t at)
{
    uint8_t copy[IPV4_MAX_HEADER];
    Py_ssize_t n = l3_end - l3;
    memcpy(copy, b + l3, (size_t)n);
    copy[at - l3] = copy[at - l3 + 1] = 0;
    uint8_t ttl = copy[CT_IPHDR_TTL], tos = copy[CT_IPV4_TOS];
    if (ttl < 0xff) {
        copy[CT_IPHDR_TTL] = (uint8_t)(ttl + 1);
        if (hit(h, H_TTL, complement(csum_plain_words(copy, (uint64_t)n, 2, 0)), ttl + 1u, ttl, 0) < 0)
            return -1;
        copy[CT_IPHDR_TTL] = ttl;
    }
    if ((tos & 3) == 3) {
        for (uint8_t ecn = 1; ecn <= 2; ecn++) {
            copy[CT_IPV4_TOS] = (uint8_t)((tos & ~3) | ecn);
            if (hit(h, H_TOS, complement(csum_plain_words(copy, (uint64_t)n, 2, 0)), copy[CT_IPV4_TOS], tos, 0) < 0)
                return -1;
        }
    }
    return 0;
}

/* sums.py padding: the frame's npad bytes after the datagram (pad) summed with the segment (odd: its length is odd),
 * counted in the pseudo-header's length or not (the second only where a padding byte is not zero). */
static int padding(hits_t *h, int udp, const uint8_t *pad, uint64_t npad, uint64_t odd, uint64_t pseudo16,
                   uint64_t data16, uint64_t length)
{
    uint64_t padded = data16 + csum_plain_words(pad, npad, 2, (unsigned)odd);
    uint64_t counted = pseudo16 - csum_pseudo_length(length) + csum_pseudo_length(length + npad);
    if (hit(h, H_PADDING_COUNTED, stored_as(udp, complement(counted + padded)), npad, length, length + npad) < 0)
        return -1;
    int any = 0;
    for (uint64_t i = 0; i < npad && !any; i++)
        any = pad[i] != 0;
    if (any && hit(h, H_PADDING, stored_as(udp, complement(pseudo16 + padded)), npad, length, length + npad) < 0)
        return -1;
    return 0;
}

/* The pseudo-header's bytes (sums.py _pseudo) into p; its size. IPv4's (RFC 793): the addresses, a zero byte, the
 * protocol and a 16-bit length (sums.py writes a longer one in 32 bits); IPv6's (RFC 8200 section 8.1): the
 * addresses, a 32-bit length, three zero bytes and the next header. */
static Py_ssize_t pseudo_bytes(uint8_t *p, const uint8_t *src, const uint8_t *dst, Py_ssize_t size, int64_t length,
                               unsigned proto)
{
    memcpy(p, src, (size_t)size);
    memcpy(p + size, dst, (size_t)size);
    uint8_t *q = p + 2 * size;
    if (size == CT_IPHDR_ADDR_SIZE) {
        *q++ = 0;
        *q++ = (uint8_t)proto;
        if (length > (int64_t)M16) {
            *q++ = (uint8_t)(length >> 24);
            *q++ = (uint8_t)(length >> 16);
        }
        *q++ = (uint8_t)(length >> 8);
        *q++ = (uint8_t)length;
        return q - p;
    }
    *q++ = (uint8_t)(length >> 24);
    *q++ = (uint8_t)(length >> 16);
    *q++ = (uint8_t)(length >> 8);
    *q++ = (uint8_t)length;
    *q++ = 0;
    *q++ = 0;
    *q++ = 0;
    *q++ = (uint8_t)proto;
    return q - p;
}

enum { A_BUF, A_START, A_END, A_AT, A_SRC, A_DST, A_SIZE, A_LENGTH, A_PROTO, A_STORED, A_COMPUTED, A_FLAGS,
       A_PAD, A_IP_TOTAL, A_AFTER, A_MINIMUM, A_L3, A_L3_END, A_COUNT };

/* One call's arguments: the buffer and the integers (v[A_START] on). */
typedef struct {
    const uint8_t *b;
    int64_t len;
    int64_t v[A_COUNT];
} args_t;

/* The plain sums every hypothesis adjusts: the covered bytes' (the field's two bytes taken out) and the
 * pseudo-header's, as 16- and 32-bit words. */
typedef struct {
    const uint8_t *d;  /* the covered bytes */
    uint64_t n, rel;   /* their count, the field's offset among them */
    uint64_t data16, data32, pseudo16, pseudo32;
} sums_t;

/* Whether the pseudo-header's addresses and length are what the Python takes and in the buffer. */
static int pseudo_in_range(const args_t *a)
{
    const int64_t *v = a->v, size = v[A_SIZE];
    return (size == 4 || size == 16) && 0 <= v[A_SRC] && v[A_SRC] + size <= a->len && 0 <= v[A_DST]
           && v[A_DST] + size <= a->len && 0 <= v[A_LENGTH] && v[A_LENGTH] <= (int64_t)M32;
}

/* Whether the IPv4 header (l3 to l3_end) is a header's length, in the buffer, and holds the field. */
static int header_in_range(const args_t *a)
{
    const int64_t *v = a->v, l3 = v[A_L3], l3_end = v[A_L3_END], at = v[A_AT];
    return 0 <= l3 && l3 + CT_IPHDR_SIZE <= l3_end && l3_end - l3 <= IPV4_MAX_HEADER && l3_end <= a->len && l3 <= at
           && at + 2 <= l3_end;
}

/* Whether the call is one the Python covers, every offset in the buffer (else alone gives None). */
static int in_range(const args_t *a)
{
    const int64_t *v = a->v, start = v[A_START], end = v[A_END], at = v[A_AT];
    if (!(0 <= start && start <= end && end <= a->len && start <= at && at + 2 <= end
          && end - start < ((int64_t)1 << 32)))
        return 0;
    if ((v[A_FLAGS] & F_PSEUDO) && !pseudo_in_range(a))
        return 0;
    if (v[A_PAD] >= 0 && v[A_PAD] > a->len)
        return 0;
    return !(v[A_FLAGS] & F_IPV4) || header_in_range(a);
}

/* The sums of the field's message (sums.py Message.of). */
static void message_sums(const args_t *a, sums_t *m)
{
    const int64_t *v = a->v;
    m->n = (uint64_t)(v[A_END] - v[A_START]);
    m->rel = (uint64_t)(v[A_AT] - v[A_START]);
    m->d = a->b + v[A_START];
    const uint8_t *d = m->d;
    uint64_t rel = m->rel;
    m->data16 = csum_plain_words(d, m->n, 2, 0) - ((uint64_t)d[rel] << place(rel, 2))
                - ((uint64_t)d[rel + 1] << place(rel + 1, 2));
    m->data32 = csum_plain_words(d, m->n, 4, 0) - ((uint64_t)d[rel] << place(rel, 4))
                - ((uint64_t)d[rel + 1] << place(rel + 1, 4));
    uint8_t head[40];
    Py_ssize_t hn = (v[A_FLAGS] & F_PSEUDO) ? pseudo_bytes(head, a->b + v[A_SRC], a->b + v[A_DST],
                                                           (Py_ssize_t)v[A_SIZE], v[A_LENGTH], (unsigned)v[A_PROTO])
                                            : 0;
    m->pseudo16 = csum_plain_words(head, (uint64_t)hn, 2, 0);
    m->pseudo32 = csum_plain_words(head, (uint64_t)hn, 4, 0);
}

/* sums.py named_lengths: the lengths a sender might take from the packet, into named (7 at most); their count.
 * *hdr: the transport header's length (a TCP header's from its data offset, where that byte is covered). */
static int named_lengths(const args_t *a, const sums_t *m, int64_t *named, int64_t *hdr)
{
    const int64_t *v = a->v, length = v[A_LENGTH], flags = v[A_FLAGS];
    int k = 0;
    named[k++] = length <= (int64_t)M16 ? (int64_t)swap_bytes((uint64_t)length) : length;
    named[k++] = 0;
    if (flags & F_IP) {
        named[k++] = v[A_IP_TOTAL];
        if (flags & F_V6)
            named[k++] = v[A_IP_TOTAL] - CT_IPV6HDR_SIZE;
        if (flags & F_L4)
            named[k++] = v[A_AFTER];
    }
    *hdr = v[A_MINIMUM];
    if ((flags & F_TCP) && m->n > CT_TCP_DOFF_AT)
        *hdr = (int64_t)((m->rel <= CT_TCP_DOFF_AT && CT_TCP_DOFF_AT <= m->rel + 1) ? 0 : m->d[CT_TCP_DOFF_AT] >> 4)
               * CT_TCP_DOFF_UNIT;
    named[k++] = *hdr;
    named[k++] = length - *hdr;
    return k;
}

/* The hypotheses tried where the IP header is right (or there is no pseudo-header): the padding, the pseudo-header
 * lengths, the IPv4 header's fields (hypotheses.py alone after odd_byte). */
static int more(hits_t *h, const args_t *a, const sums_t *m)
{
    const int64_t *v = a->v, pad = v[A_PAD], length = v[A_LENGTH], flags = v[A_FLAGS];
    int pseudo = (flags & F_PSEUDO) != 0, udp = (flags & F_UDP) != 0;
    if (pad >= 0 && pseudo && pad < a->len
        && padding(h, udp, a->b + pad, (uint64_t)(a->len - pad), m->n & 1, m->pseudo16, m->data16,
                   (uint64_t)length) < 0)
        return -1;
    if (pseudo) {
        int64_t named[7], hdr;
        int k = named_lengths(a, m, named, &hdr);
        if (lengths(h, udp, m->pseudo16 - csum_pseudo_length((uint64_t)length), m->data16, length, named, k, hdr)
            < 0)
            return -1;
    }
    if ((flags & F_IPV4)
        && header(h, a->b, (Py_ssize_t)v[A_L3], (Py_ssize_t)v[A_L3_END], (Py_ssize_t)v[A_AT]) < 0)
        return -1;
    return 0;
}

/* Every hypothesis of the call, in hypotheses.py alone's order, into h; -1 on error. */
static int hypotheses(hits_t *h, const args_t *a)
{
    sums_t m;
    message_sums(a, &m);
    int udp = (a->v[A_FLAGS] & F_UDP) != 0;
    uint64_t total = m.pseudo16 + m.data16;
    if (arithmetic(h, udp, total, m.pseudo32 + m.data32) < 0)
        return -1;
    uint8_t last = (m.n - 1 == m.rel || m.n - 1 == m.rel + 1) ? 0 : m.d[m.n - 1];
    if ((m.n & 1) && last
        && hit(h, H_ODD_BYTE, stored_as(udp, complement(total - ((uint64_t)last << 8))), last, m.n, 0) < 0)
        return -1;
    return (a->v[A_FLAGS] & F_MORE) ? more(h, a, &m) : 0;
}

/* alone(buf, start, end, at, src, dst, size, length, proto, stored, computed, flags, pad, ip_total, after, minimum,
 * l3, l3_end) -> [(variant, value, a, b, c)] or None: see csum/explain/quick.py. */
static PyObject *alone(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != A_COUNT) {
        PyErr_SetString(PyExc_TypeError, "alone takes 18 arguments");
        return NULL;
    }
    args_t a;
    for (int k = A_START; k < A_COUNT; k++) {
        a.v[k] = PyLong_AsLongLong(args[k]);
        if (a.v[k] == -1 && PyErr_Occurred())
            return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[A_BUF], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    a.b = view.buf;
    a.len = view.len;
    PyObject *result;
    if (!in_range(&a)) {
        result = Py_NewRef(Py_None);
    } else {
        hits_t h = {PyList_New(0), a.v[A_STORED], a.v[A_COMPUTED], 0, {0}};
        result = h.out;
        if (h.out != NULL && hypotheses(&h, &a) < 0)
            Py_CLEAR(result);
    }
    PyBuffer_Release(&view);
    return result;
}

/* wrong()'s IP layers and records: as many as the checker's (SLOTS fields), the IP layers of a few tunnels. */
enum { WRONG_IPS = 8 };

/* The one failing field of a walked packet: its record's index, or -1 where there is not exactly one. */
static int one_failing(const walk_t *w)
{
    int k = -1;
    for (int i = 0; i < w->n; i++) {
        if (w->recs[i].ok == 0) {
            if (k >= 0)
                return -1;
            k = i;
        }
    }
    return k;
}

/* Whether record k is a TCP/UDP checksum wrong by a plain mismatch in the packet's one IP layer (not a fragment, a
 * quote, nor behind AH), its ports at its header: what wrong() explains (no other field covers a pseudo-header). */
static int plain_l4(const walk_t *w, int k)
{
    const rec_t *r = w->recs + k;
    const ip_t *ip = w->ips;
    if (r->reason != RS_MISMATCH || (r->code != C_TCP && r->code != C_UDP) || r->depth != 0 || r->end < 0
        || w->nips != 1)
        return 0;
    if (ip->depth != 0 || ip->quote || ip->quoting || ip->cut || ip->fragment || ip->ah || !ip->pseudo || ip->l4 != k
        || ip->l4start != r->header || ip->src < 0 || ip->dst < 0 || (ip->version != 4 && ip->version != 6))
        return 0;
    return 1;
}

/* The layer names of wrong_all's flow keys (csum/explain/flow.py FlowKey), made once. */
static PyObject *tcp_name, *udp_name;

/* One packet of wrong_all: None, or (the packet, field, header, end, l3, ip_end, flow key, residual, variants,
 * hits), made as a `cls` (a tuple or a subclass of it), for a packet whose one wrong field is the TCP/UDP checksum at `field` of its one IP layer (see plain_l4; the
 * IPv4 header's checksum right): the C walker's stack (csum/engine/_walk.c) and that field's hypotheses from the
 * packet alone that store its stored value (alone's, with the arguments csum/explain/quick.py would give; variants:
 * their variant numbers as bytes). The flow key is csum/explain/flow.py flow_key's: (version, the IP header's source
 * and destination addresses, protocol, source port, destination port, layer, depth 0). NULL on error. */
static PyObject *wrong_one(PyTypeObject *cls, PyObject *packet, const uint8_t *b, Py_ssize_t len, int64_t linktype,
                           int64_t field)
{
    Py_ssize_t index = linktype < 0 ? -1 : walk_link_row(linktype);
    int16_t codes[SLOTS];
    outer_t outer = {0};
    rec_t recs[SLOTS];
    ip_t ips[WRONG_IPS];
    walk_t w = {.b = b, .codes = codes, .outer = &outer, .report = 1, .recs = recs, .frag6 = 1, .len = len,
                .slots = SLOTS, .judge = 1, .ips = ips, .maxips = WRONG_IPS};
    int k = index >= 0 && walk_link(&w, len, index) == 1 ? one_failing(&w) : -1;
    if (k < 0 || !plain_l4(&w, k) || recs[k].field != field)
        return Py_NewRef(Py_None);
    const rec_t *r = recs + k;
    const ip_t *ip = ips;
    int tcp = r->code == C_TCP;
    args_t a = {.b = b, .len = len};
    int64_t *v = a.v;
    v[A_START] = r->header, v[A_END] = r->end, v[A_AT] = r->field, v[A_SRC] = ip->src, v[A_DST] = ip->dst;
    v[A_SIZE] = ip->version == 4 ? CT_IPHDR_ADDR_SIZE : CT_IPV6HDR_ADDR_SIZE, v[A_LENGTH] = r->end - r->header;
    v[A_PROTO] = tcp ? CT_TCP : CT_UDP, v[A_STORED] = r->stored, v[A_COMPUTED] = r->computed;
    v[A_FLAGS] = F_PSEUDO | F_MORE | F_IP | F_L4 | (tcp ? F_TCP : F_UDP) | (ip->version == 6 ? F_V6 : 0);
    v[A_PAD] = r->end == ip->end ? ip->end : -1, v[A_IP_TOTAL] = ip->end - ip->l3, v[A_AFTER] = ip->end - r->header;
    v[A_MINIMUM] = tcp ? CT_TCP_MIN : CT_UDP_MIN, v[A_L3] = v[A_L3_END] = 0;
    if (!in_range(&a))
        return Py_NewRef(Py_None);
    hits_t h = {PyList_New(0), r->stored, r->computed, 0, {0}};
    if (h.out == NULL || hypotheses(&h, &a) < 0) {
        Py_XDECREF(h.out);
        return NULL;
    }
    if (h.full) {  /* more hits than the signature holds: the Python path, whose decisions are not cached by it */
        Py_DECREF(h.out);
        return Py_NewRef(Py_None);
    }
    Py_ssize_t size = (Py_ssize_t)v[A_SIZE], saddr = ip->l3 + (ip->version == 4 ? CT_IPHDR_SADDR : CT_IPV6HDR_SADDR);
    Py_ssize_t daddr = ip->l3 + (ip->version == 4 ? CT_IPHDR_DADDR : CT_IPV6HDR_DADDR);
    uint64_t residual = csum_reduce((uint64_t)(r->stored ^ M16) + r->computed, 16);  /* csum/explain/flow.py's */
    PyObject *key = PyTuple_New(8);
    /* a tuple, or one of a subclass of tuple (wrong_all checks it), as tuple's own __new__ makes them */
    PyObject *out = key == NULL ? NULL : cls == &PyTuple_Type ? PyTuple_New(10) : cls->tp_alloc(cls, 10);
    if (out == NULL) {
        Py_XDECREF(key);
        Py_DECREF(h.out);
        return NULL;
    }
    PyObject *keys[] = {PyLong_FromLong(ip->version), PyBytes_FromStringAndSize((const char *)b + saddr, size),
                        PyBytes_FromStringAndSize((const char *)b + daddr, size), PyLong_FromLong(ip->proto),
                        PyLong_FromLong(be16(b + r->header)), PyLong_FromLong(be16(b + r->header + 2)),
                        Py_NewRef(tcp ? tcp_name : udp_name), PyLong_FromLong(0)};
    for (int i = 0; i < 8; i++)
        PyTuple_SET_ITEM(key, i, keys[i]);
    PyObject *items[] = {Py_NewRef(packet), PyLong_FromSsize_t(r->field), PyLong_FromSsize_t(r->header),
                         PyLong_FromSsize_t(r->end), PyLong_FromSsize_t(ip->l3), PyLong_FromSsize_t(ip->end), key,
                         PyLong_FromUnsignedLongLong(residual), PyBytes_FromStringAndSize(h.variants, h.n), h.out};
    for (int i = 0; i < 10; i++)
        PyTuple_SET_ITEM(out, i, items[i]);
    for (int i = 0; i < 10; i++)  /* an item not made (no memory): the error is set */
        if (items[i] == NULL || (i < 8 && keys[i] == NULL)) {
            Py_DECREF(out);
            return NULL;
        }
    return out;
}

/* The integer at i of a sequence (PySequence_Fast's items); -1 with an error set where it is not one. */
static int64_t item_int(PyObject *seq, Py_ssize_t i)
{
    return PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
}

/* wrong_all(packets, linktypes, fields[, cls]) -> [None or wrong_one's tuple], one per packet: csum/explain/fast.py
 * asks for a capture's wrong packets at once (fields: the offset of each one's wrong field as the check found it;
 * cls: a subclass of tuple the answers are made as, csum/explain/fast.py Wrong; else tuples). */
static PyObject *wrong_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3 && nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "wrong_all takes 3 or 4 arguments");
        return NULL;
    }
    PyTypeObject *cls = nargs == 4 ? (PyTypeObject *)args[3] : &PyTuple_Type;
    if (!PyType_Check((PyObject *)cls) || !PyType_IsSubtype(cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a subclass of tuple");
        return NULL;
    }
    PyObject *packets = PySequence_Fast(args[0], "packets must be a sequence");
    PyObject *links = packets == NULL ? NULL : PySequence_Fast(args[1], "linktypes must be a sequence");
    PyObject *fields = links == NULL ? NULL : PySequence_Fast(args[2], "fields must be a sequence");
    PyObject *out = NULL;
    if (fields == NULL)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(packets);
    if (PySequence_Fast_GET_SIZE(links) != n || PySequence_Fast_GET_SIZE(fields) != n) {
        PyErr_SetString(PyExc_ValueError, "packets, linktypes and fields must be as long");
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        int64_t link = item_int(links, i), field = item_int(fields, i);
        PyObject *packet = PySequence_Fast_GET_ITEM(packets, i);
        Py_buffer view;
        if (((link == -1 || field == -1) && PyErr_Occurred()) || PyObject_GetBuffer(packet, &view, PyBUF_SIMPLE) < 0) {
            Py_CLEAR(out);
            break;
        }
        PyObject *one = wrong_one(cls, packet, view.buf, view.len, link, field);
        PyBuffer_Release(&view);
        if (one == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, one);
    }
done:
    Py_XDECREF(packets);
    Py_XDECREF(links);
    Py_XDECREF(fields);
    return out;
}

static PyMethodDef methods[] = {
    {"alone", (PyCFunction)(void (*)(void))alone, METH_FASTCALL,
     "The single-mistake hypotheses of one field from the packet alone (csum/explain/quick.py), or None."},
    {"wrong_all", (PyCFunction)(void (*)(void))wrong_all, METH_FASTCALL,
     "Per packet, the stack facts and hypotheses of its one wrong TCP/UDP checksum (csum/explain/fast.py), or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "csum.engine._explain", NULL, -1, methods};

PyMODINIT_FUNC PyInit__explain(void)
{
    tcp_name = PyUnicode_InternFromString("tcp");
    udp_name = PyUnicode_InternFromString("udp");
    if (tcp_name == NULL || udp_name == NULL)
        return NULL;
    return PyModule_Create(&module);
}
