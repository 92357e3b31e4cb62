/*
 * csum.engine._cwalk: the C checker (optional; csum/layers/accel.py binds it, csum/layers/inet.py and csum/capture/report.py use it).
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
 * ("ask the Python walker") for the rest; check_chunk() does what fast_check() does without rows and counts the
 * verdicts as it goes, in one pass (csum/capture/fastpath.py c_fast). Anything it does not walk (an unusual layer,
 * an option that moves the pseudo-header but a Home Address or a routing header of type 0, 2 or 4, an ICMP error with an RFC 4884 extension, a
 * fragment of a datagram it does not reassemble: see datagrams() below) goes to csum/layers, the reference; tests/layers/test_layers_c.py
 * checks that every Result from here equals the Python walker's in all nine fields, tests/capture/test_pcap.py that
 * the capture reports with and without this file are equal.
 *
 * The walk itself is csum/engine/_walk.c's (the one C walker, _walk.h; linked into csum.engine._rewrite too): it
 * says which stacks are walked. This file judges as it walks (walk_t.judge), reassembles outer IPv4 and IPv6
 * fragments of TCP, UDP and ICMP/ICMPv6 datagrams within the chunk (the fragments still pending from earlier chunks
 * placed in front of it) as csum/layers/reassembly.py does, and makes the Results and rows. Its protocol facts come
 * from csum/layers/table.py through _cwalk_table.h (tests/layers/test_cwalk_table.py).
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
#include "_walk.h"

/* fast_check's codes (_walk.h: layer code + DEPTH * depth, plus NA or NONE; else "ok"): a packet with a failing field
 * has each field's code plus BAD or OFFLOAD for a failing one written as REPORTED - code (below -2), so tally()
 * counts its fields too. */
#define BAD 1024
#define OFFLOAD 2048
#define REPORTED (-2)

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
    Py_ssize_t head, count;  /* its last fragment at offset 0 (-1: none yet), and how many it has */
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
    const int64_t *off, *cap, *link, *index;  /* index: NULL in check_chunk (index_of) */
    const int8_t *todo;      /* NULL in check_chunk: a packet is judged when captured whole (todo_of) */
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
    /* check_chunk: the original lengths, the numbers of the `nfront` packets carried in front of the chunk (the
     * chunk's own are first, first + 1, ...), and the verdicts counted as the packets are judged (tally_packet) */
    const int64_t *orig, *front;
    Py_ssize_t nfront;
    int64_t first;
    int64_t *seen;
    Py_ssize_t fast, nwalk, ncut;  /* ncut: the packets after the front the snap length cut (tally_packet) */
    int64_t *walk;
} chunk_t;

/* Whether packet i of the chunk is judged (captured whole). */
static inline int todo_of(const chunk_t *c, Py_ssize_t i)
{
    return c->todo != NULL ? c->todo[i] : c->cap[i] == c->orig[i];
}

/* Packet i's number in the capture. */
static inline int64_t index_of(const chunk_t *c, Py_ssize_t i)
{
    return c->index != NULL ? c->index[i] : i < c->nfront ? c->front[i] : c->first + (i - c->nfront);
}

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
 * the first piece's fragment), 0 (a hole, or the first or the last piece not here: not whole yet), -1 (an overlap, a
 * piece past the end: Python; a piece too long was declined as place() put it in). */
static int tiled(const reasm_t *r, const dgram_t *k, Py_ssize_t *head)
{
    const frag_t *fr = r->c->frags;
    const Py_ssize_t *next = r->next;
    Py_ssize_t count = k->count;
    *head = k->head;
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
    walk_t w = {.b = scratch, .codes = codes, .recs = recs, .frag6 = 1, .len = size, .slots = SLOTS, .judge = 1};
    if (walk_ip(&w, 0, size, 0, v4 ? CT_ETH_IPV4 : CT_ETH_IPV6, 0) != 1 || w.n != (v4 ? 2 : 1))
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

/* One table row per key (open addressing): slot[f] for each fragment f, every row of a key empty (the table comes
 * zeroed: only the rows of this chunk's keys are set, and datagrams() zeroes them again at its end). */
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
    for (Py_ssize_t f = 0; f < c->nfrags; f++) {
        dgram_t *k = r->table + r->slot[f];
        k->first = k->last = k->total = k->head = -1;  /* (count, declined: 0 as the table came) */
    }
}

/* Fragment `f` into its datagram (`window`: the Reassembler's expiry, in packets), which it may complete. */
static void place(reasm_t *r, Py_ssize_t f, Py_ssize_t window)
{
    chunk_t *c = r->c;
    const frag_t *fr = c->frags + f;
    dgram_t *k = r->table + r->slot[f];
    if (c->unknown || (c->unknown6 && fr->o.key[0] == 6) || k->declined || !fr->state ||
        (k->first >= 0 && index_of(c, fr->i) - index_of(c, c->frags[k->first].i) >= window)) {
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
    k->count++;
    if (fr->o.offset == 0)
        k->head = f;
    if (!fr->o.more)
        k->total = fr->o.offset + fr->o.dlen;
    /* a piece reaching past 65535 bytes: the Reassembler's "too long" (every piece is looked at once, here) */
    int got = fr->o.offset + fr->o.dlen > 65535 ? -1 : whole(r, k);
    if (got < 0) {
        decline(r, k, f);
    } else if (got > 0) {
        for (Py_ssize_t j = k->first; j >= 0; j = r->next[j])
            c->frags[j].state = 0;
        memcpy(r->keys + r->judged++ * KEY, fr->o.key, KEY);
        k->first = k->last = k->total = k->head = -1;
        k->count = 0;
        r->open--;
    }
}

/* datagrams()'s table of keys, kept zeroed from one call to the next (each chunk's took a calloc of up to 300 KiB
 * and two passes over every row): a call takes it and gives it back with the rows it set zeroed again (NULL and 0
 * while taken: a call inside it, were there one, would allocate its own). */
static struct {
    dgram_t *rows;
    Py_ssize_t size;
} spare_table;

static int datagrams(chunk_t *c, Py_ssize_t budget, Py_ssize_t window, PyObject **closed, Py_ssize_t *peak_out)
{
    Py_ssize_t m = c->nfrags;
    *peak_out = 0;
    if (!m)
        return (*closed = PyBytes_FromStringAndSize(NULL, 0)) == NULL ? -1 : 0;
    Py_ssize_t size = 16;
    while (size < 2 * m)
        size <<= 1;
    dgram_t *table = spare_table.rows;
    Py_ssize_t held = spare_table.size;
    spare_table.rows = NULL;
    spare_table.size = 0;
    if (held < size) {
        PyMem_Free(table);
        table = PyMem_Calloc(size, sizeof(dgram_t));
        held = size;
    }
    reasm_t r = {c, table, size - 1, PyMem_Malloc(m * sizeof(Py_ssize_t)), PyMem_Malloc(m * sizeof(Py_ssize_t)),
                 PyMem_Malloc(65536 + 64), PyMem_Malloc(m * KEY), 0, 0, 0};
    int rc = 0, keys = 0;
    if (r.table == NULL || r.slot == NULL || r.next == NULL || r.scratch == NULL || r.keys == NULL) {
        rc = -1;
        goto done;
    }
    key_rows(&r);
    keys = 1;
    Py_ssize_t peak = 0;
    for (Py_ssize_t f = 0; f < m; f++) {
        place(&r, f, window);
        if (r.open + r.declined + c->v6 > peak)
            peak = r.open + r.declined + c->v6;
    }
    for (Py_ssize_t f = 0; f < m; f++) {  /* datagrams the chunk ends inside (each once: its row's first then -1) */
        dgram_t *k = r.table + r.slot[f];
        if (!k->declined && k->first >= 0) {
            hand_over(c, k->first, r.next);
            k->first = -1;
        }
    }
    if (peak > budget) {  /* the Reassembler could evict: every fragment to Python */
        for (Py_ssize_t f = 0; f < m; f++)
            c->out[c->frags[f].i * SLOTS] = -1;
        r.judged = 0;
    }
    *peak_out = r.judged ? peak : 0;
    if ((*closed = PyBytes_FromStringAndSize((const char *)r.keys, r.judged * KEY)) == NULL)
        rc = -1;
done:
    for (Py_ssize_t f = 0; keys && f < m; f++)  /* the table zeroed again for the next call */
        memset(r.table + r.slot[f], 0, sizeof(dgram_t));
    if (r.table != NULL && spare_table.rows == NULL) {  /* zero throughout when key_rows() was not reached */
        spare_table.rows = r.table;
        spare_table.size = held;
    } else {
        PyMem_Free(r.table);
    }
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

static PyObject *make_results_of(const rec_t *recs, int n)
{
    PyObject *list = PyList_New(n);
    for (int k = 0; list != NULL && k < n; k++) {
        PyObject *r = make_result(recs + k);
        if (r == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, k, r);
    }
    return list;
}

static PyObject *make_results(const walk_t *w)
{
    return make_results_of(w->recs, w->n);
}

/* A reported packet's records, kept by fast_check in a capsule until results() makes their Results (the CLI lists a
 * few of the bad fields: the rest are counted, never made). */
#define KEPT_NAME "csum.engine._cwalk.kept"
typedef struct {
    int n;
    rec_t recs[SLOTS];
} kept_t;

static void kept_free(PyObject *capsule)
{
    PyMem_Free(PyCapsule_GetPointer(capsule, KEPT_NAME));
}

static PyObject *keep_recs(const walk_t *w)
{
    kept_t *k = PyMem_Malloc(sizeof *k);
    if (k == NULL)
        return PyErr_NoMemory();
    k->n = w->n;
    memcpy(k->recs, w->recs, (size_t)w->n * sizeof *w->recs);
    PyObject *capsule = PyCapsule_New(k, KEPT_NAME, kept_free);
    if (capsule == NULL)
        PyMem_Free(k);
    return capsule;
}

/* results(kept) -> [Result, ...]: the Results of a packet fast_check reported (its capsule). */
static PyObject *results(PyObject *self, PyObject *arg)
{
    const kept_t *k = PyCapsule_GetPointer(arg, KEPT_NAME);
    if (k == NULL)
        return NULL;
    if (result_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "_cwalk.bind() was not called");
        return NULL;
    }
    return make_results_of(k->recs, k->n);
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
    Py_ssize_t ihl = (b[at] & 15) * CT_IHL_UNIT;
    if (version == 4) {
        if (len < at + CT_IPHDR_SIZE)
            return 0;
        Py_ssize_t total = be16(b + at + CT_IPHDR_TOT_LEN);
        return CT_IPHDR_SIZE <= ihl && ihl <= total && total <= len - at;
    }
    return version == 6 && len >= at + CT_IPV6HDR_SIZE &&
           at + CT_IPV6HDR_SIZE + (Py_ssize_t)be16(b + at + CT_IPV6HDR_PAYLOAD_LEN) <= len;
}

/* link="auto" as csum/layers/walk.py _auto decides it: Ethernet (carrying IP), bare IP, or -1 where the answer needs a
 * layer this file does not walk (MPLS, PPPoE: the Python walker decides). */
static int64_t auto_link(const uint8_t *b, Py_ssize_t len)
{
    Py_ssize_t at = CT_ETHHDR_PROTO;
    while (len >= at + 2 && CT_IS_VLAN(be16(b + at)))
        at += CT_ETHHDR_VLAN_SIZE;
    if (len >= at + 3) {
        unsigned ethertype = be16(b + at), version = b[at + 2] >> 4;
        if (((ethertype == CT_ETH_IPV4 && version == 4) || (ethertype == CT_ETH_IPV6 && version == 6)) &&
            (fits(b, len, at + 2) || !fits(b, len, 0)))
            return CT_LINKTYPE_ETHERNET;
        int layer = ct_next_ethertype(ethertype);
        if ((layer == L_MPLS || layer == L_PPPOE) && !fits(b, len, 0))
            return CT_LINKTYPE_ETHERNET;
    }
    return fits(b, len, 0) ? CT_LINKTYPE_RAW : -1;
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
    Py_ssize_t index = linktype < 0 ? -1 : walk_link_row(linktype);
    if (index >= 0) {
        int16_t codes[SLOTS];
        outer_t outer = {0};
        rec_t recs[SLOTS];
        walk_t w = {.b = b, .codes = codes, .outer = &outer, .report = 1, .recs = recs, .frag6 = 1, .len = v.len,
                    .slots = SLOTS, .judge = 1};
        int r = walk_link(&w, v.len, index);
        if (r == FRAGMENT) {  /* an outer IPv4 fragment: recs[0] is its header (a later one's NA code undone) */
            w.n = 1;
            r = walk_partial(&w, outer.proto, 1, outer.l3 + outer.ihl, outer.l3 + outer.ihl + outer.dlen, 0,
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
    return walk_partial(w, o->proto, v4, o->l3 + o->ihl, o->l3 + o->ihl + o->dlen, 0,
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
        c->last_row = walk_link_row(c->link[i]);
    }
    int r = 0;
    if (c->off[i] >= 0 && c->cap[i] >= 0 && c->off[i] + c->cap[i] <= c->len && c->last_row >= 0)
        r = walk_link(w, c->cap[i], c->last_row);
    if (r == FRAGMENT && w->bad)
        r = 0;
    if (c->rows != NULL) {
        c->count[i] = 0;
        if (r == FRAGMENT && todo_of(c, i) && !fragment_rows(w, w->outer))
            r = 0;  /* no room for its rows: the Python walker's, and its datagram's with it */
        if (todo_of(c, i) && (r == 1 || r == FRAGMENT))
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
    /* every field set one by one (no zeroing of the whole struct first); the records only where they are read:
     * rows; a packet with a failing field is walked again with them */
    walk_t w;
    w.b = c->data + c->off[i], w.codes = codes, w.outer = &o, w.recs = c->rows != NULL ? recs : NULL, w.ips = NULL;
    w.ip = 0, w.len = c->cap[i];
    w.n = 0, w.report = 1, w.bad = 0, w.frag6 = 0, w.ipv = 0, w.slots = SLOTS, w.judge = 1, w.nips = w.maxips = 0;
    int r = walk_packet(c, i, &w), todo = todo_of(c, i);
    if (r == 1 && w.bad && todo && w.recs == NULL) {
        /* the second walk starts where the first did: a walk that returns 1 changed only n, bad, ip, ipv and the
         * codes (frag6, nips, ips and the outer header as they were; no fragment: o.frag is 0); a new walk_t field
         * a walk changes is reset here too */
        memset(codes, 0, SLOTS * sizeof *codes);
        w.n = w.bad = w.ipv = 0;
        w.ip = 0;
        w.recs = recs;
        r = walk_link(&w, c->cap[i], c->last_row);
    }
    if (r == 1 && w.bad && todo) {
        for (int k = 0; k < w.n; k++) {  /* codes[k] is recs[k]'s (emit), counted as its Result's status */
            int code = recs[k].ok < 0 ? codes[k] | NA : codes[k];
            codes[k] = (int16_t)(REPORTED - code - (recs[k].ok ? 0 : recs[k].reason == RS_OFFLOAD ? OFFLOAD : BAD));
        }
        if (c->rows == NULL) {
            int bad = 0, offload = 0;
            for (int k = 0; k < w.n; k++) {
                bad += recs[k].ok == 0 && recs[k].reason != RS_OFFLOAD;
                offload += recs[k].ok == 0 && recs[k].reason == RS_OFFLOAD;
            }
            PyObject *kept = keep_recs(&w), *item = NULL;
            if (kept == NULL || (item = Py_BuildValue("nNii", i, kept, bad, offload)) == NULL ||
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
 *     -> ([(i, kept, bad, offload), ...], closed, peak):
 * out is int16 (n, SLOTS); todo is int8 (n): packets to judge (the others, cut by the snap length, still key their
 * fragments). out[i] lists the codes of a packet whose every checksum passes; -1 in out[i][0]: to the Python walker;
 * below -2: a packet with a failing checksum (not a fragment), out[i] its codes written REPORTED - (code + BAD or
 * OFFLOAD for a failing field, NA for one not verifiable), in the returned list with how many of its fields are bad
 * and offload and its records kept (`kept`: results(kept) makes their Results, when asked). indices is int64
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

/* Packet i's verdict counted (check_chunk), once the walk and datagrams() have decided it: its number in the chunk
 * added to c->walk when it is left to the Python walker (not captured whole, or out[i][0] 0 or -1); else its codes
 * counted in c->seen (code + NA or NONE of a passing packet, counted in c->fast; REPORTED - (code + BAD, OFFLOAD, NA
 * or NONE) of each field of a packet with a failing one, whose Results fast_check's list has). */
static inline void tally_packet(chunk_t *c, Py_ssize_t i)
{
    const int16_t *codes = c->out + i * SLOTS;
    if (!todo_of(c, i) || (codes[0] <= 0 && codes[0] > REPORTED)) {
        c->walk[c->nwalk++] = i;
        c->ncut += i >= c->nfront && c->cap[i] < c->orig[i];
    } else if (codes[0] > 0) {  /* the codes are packed from the first slot on (emit, whole) */
        c->fast++;
        for (int k = 0; k < SLOTS && codes[k] > 0; k++)
            c->seen[codes[k] & (2 * NONE - 1)]++;
    } else {
        for (int k = 0; k < SLOTS && codes[k] <= REPORTED; k++)
            c->seen[(REPORTED - codes[k]) & (2 * OFFLOAD - 1)]++;
    }
}

/* The (code, fields) pairs of the codes counted, in code order. */
static PyObject *code_counts(const int64_t *seen)
{
    PyObject *counts = PyList_New(0);
    for (int code = 1; counts != NULL && code < 2 * OFFLOAD; code++) {
        if (!seen[code])
            continue;
        PyObject *item = Py_BuildValue("iL", code, (long long)seen[code]);
        if (item == NULL || PyList_Append(counts, item) < 0)
            Py_CLEAR(counts);
        Py_XDECREF(item);
    }
    return counts;
}

/* The chunk's packets left to the Python walker, in packet order, as int64 bytes: c->walk (the packets that are no
 * fragment, counted as they were judged) merged with those of the fragments (counted after datagrams()). */
static PyObject *walk_list(chunk_t *c)
{
    Py_ssize_t own = c->nwalk;
    for (Py_ssize_t f = 0; f < c->nfrags; f++)
        tally_packet(c, c->frags[f].i);
    PyObject *walk = PyBytes_FromStringAndSize(NULL, c->nwalk * 8);
    if (walk == NULL)
        return NULL;
    int64_t *to = (int64_t *)PyBytes_AS_STRING(walk);
    const int64_t *a = c->walk, *b = c->walk + own, *a_end = c->walk + own, *b_end = c->walk + c->nwalk;
    while (a < a_end || b < b_end)
        *to++ = b == b_end || (a < a_end && *a < *b) ? *a++ : *b++;
    return walk;
}

/* check_chunk's working arrays (the codes, the packets left to Python, the fragments kept), kept from one call to the
 * next instead of allocated and freed for every chunk (a chunk's fragments alone took 500 KiB of copies as their
 * array doubled, each time). A call takes them (the spare then empty: a call inside it, were there one, would
 * allocate its own) and gives them back at its end. */
enum { SPARE_OUT, SPARE_WALK, SPARE_FRAGS, SPARES };
static struct {
    void *p;
    size_t size;
} spare[SPARES];

/* Spare k of at least `size` bytes (*size set to its size), taken; NULL when out of memory. */
static void *take_spare(int k, size_t *size)
{
    void *p = spare[k].p;
    if (p != NULL && spare[k].size >= *size) {
        *size = spare[k].size;
    } else {
        PyMem_Free(p);
        p = PyMem_Malloc(*size);
    }
    spare[k].p = NULL;
    spare[k].size = 0;
    return p;
}

/* Spare k given back (`p` of `size` bytes), or freed when a larger one is kept already. */
static void give_spare(int k, void *p, size_t size)
{
    if (spare[k].p == NULL) {
        spare[k].p = p;
        spare[k].size = size;
    } else {
        PyMem_Free(p);
    }
}

/* The numbers in the capture (int64, as bytes) of the chunk's packets after its front that the snap length cut:
 * c->ncut of them, once tally_packet has counted every packet (walk_list: the fragments last). */
static PyObject *cut_list(const chunk_t *c)
{
    PyObject *cut = PyBytes_FromStringAndSize(NULL, c->ncut * 8);
    if (cut == NULL)
        return NULL;
    int64_t *cuts = (int64_t *)PyBytes_AS_STRING(cut);
    for (Py_ssize_t i = c->nfront; c->ncut && i < c->n; i++)
        if (c->cap[i] < c->orig[i])
            *cuts++ = index_of(c, i);
    return cut;
}

/* check_chunk(data, offsets, caplens, origlens, linktypes, front, first, budget, window)
 *     -> (counts, fast, walk, reported, closed, peak, cut):
 * a chunk judged as fast_check judges it (without rows) and its verdicts counted in the same pass, in one call: a
 * packet is judged when captured whole (caplens[i] == origlens[i]); the numbers of the first len(front) packets
 * (int64) are `front` (the fragments carried in front of the chunk), the next ones first, first + 1, ... counts,
 * [(code, fields), ...]: the codes of the packets judged (passing or not), in code order; fast: how many passed;
 * walk: the int64 numbers in the chunk (as bytes) of the packets left to the Python walker; reported, closed and
 * peak: fast_check's; cut: the numbers in the capture (int64 as bytes) of the chunk's packets after `front` the snap
 * length cut (caplens[i] < origlens[i]). */
static PyObject *check_chunk(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "check_chunk takes 9 arguments");
        return NULL;
    }
    if (result_type == NULL) {
        PyErr_SetString(PyExc_TypeError, "_cwalk.bind() was not called");
        return NULL;
    }
    long long first = PyLong_AsLongLong(args[6]);
    Py_ssize_t budget = PyLong_AsSsize_t(args[7]), window = PyLong_AsSsize_t(args[8]);
    if ((first == -1 || budget == -1 || window == -1) && PyErr_Occurred())
        return NULL;
    Py_buffer v[6];
    const Py_ssize_t sizes[6] = {1, 8, 8, 8, 8, 8};
    int got = 0;
    for (; got < 6; got++)
        if (get(args[got], &v[got], 0, sizes[got]) < 0)
            break;
    PyObject *result = NULL, *closed = NULL, *counts = NULL, *walk = NULL, *cut = NULL;
    Py_ssize_t n = got == 6 ? v[1].len / 8 : 0, nfront = got == 6 ? v[5].len / 8 : 0, peak = 0;
    int64_t *seen = NULL;
    chunk_t c = {0};
    size_t out_size = 0, walk_size = 0, frags_size = 0;
    if (got < 6)
        goto done;
    if (v[2].len != n * 8 || v[3].len != n * 8 || v[4].len != n * 8 || nfront > n) {
        PyErr_SetString(PyExc_ValueError, "check_chunk: inconsistent array sizes");
        goto done;
    }
    c = (chunk_t){.data = v[0].buf, .len = v[0].len, .n = n, .off = v[1].buf, .cap = v[2].buf, .link = v[4].buf,
                  .orig = v[3].buf, .front = v[5].buf, .nfront = nfront, .first = first, .last_link = -1,
                  .last_row = -1};
    out_size = (size_t)(n ? n : 1) * SLOTS * sizeof *c.out;
    walk_size = (size_t)(n ? n : 1) * sizeof *c.walk;
    frags_size = ((size_t)n / 4 + 64) * sizeof *c.frags;  /* more when needed: keep_fragment */
    c.out = take_spare(SPARE_OUT, &out_size);  /* each row set as its packet is walked */
    c.walk = take_spare(SPARE_WALK, &walk_size);
    c.frags = take_spare(SPARE_FRAGS, &frags_size);
    c.room = c.frags == NULL ? 0 : (Py_ssize_t)(frags_size / sizeof *c.frags);
    seen = c.seen = PyMem_Calloc(2 * OFFLOAD, sizeof *c.seen);
    if (c.out == NULL || c.walk == NULL || c.frags == NULL || seen == NULL || (c.reported = PyList_New(0)) == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t i = 0;
    for (; i < n; i++) {
        Py_ssize_t kept = c.nfrags;
        if (check_packet(&c, i) < 0)
            break;
        if (c.nfrags == kept)  /* a fragment is counted once datagrams() has decided it */
            tally_packet(&c, i);
    }
    if (i < n)
        goto done;
    if (datagrams(&c, budget, window, &closed, &peak) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    if ((walk = walk_list(&c)) == NULL || (counts = code_counts(seen)) == NULL || (cut = cut_list(&c)) == NULL)
        goto done;
    result = Py_BuildValue("OnOOOnO", counts, c.fast, walk, c.reported, closed, peak, cut);
done:
    Py_XDECREF(counts);
    Py_XDECREF(walk);
    Py_XDECREF(cut);
    Py_XDECREF(closed);
    Py_XDECREF(c.reported);
    if (c.out != NULL)
        give_spare(SPARE_OUT, c.out, out_size);
    if (c.walk != NULL)
        give_spare(SPARE_WALK, c.walk, walk_size);
    if (c.frags != NULL)
        give_spare(SPARE_FRAGS, c.frags, (size_t)c.room * sizeof *c.frags);
    PyMem_Free(seen);
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
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

/* How far ahead of the record being read pcap_records asks for the file's bytes (__builtin_prefetch): the next
 * record's position depends on this one's length, so each header read waits for its cache line unless it was asked
 * for before (a third of the walk's time on a 2 MiB chunk without it). */
#define PREFETCH 2048

/* The pcap record walk of pcap_records: records from *pos up to `size` (or `room` of them) into off, caps and wires,
 * their number returned and *pos moved past them. Always inlined, so the common case (little-endian, nothing
 * swapped, cut or taken off: constants at the call) compiles to a loop of a few instructions a record. */
static inline __attribute__((always_inline)) Py_ssize_t
walk_records(const uint8_t *b, Py_ssize_t size, Py_ssize_t *pos, Py_ssize_t room, int64_t *off, int64_t *caps,
             int64_t *wires, int big, int swap, Py_ssize_t header, Py_ssize_t most, Py_ssize_t cut_lo,
             Py_ssize_t cut_hi, Py_ssize_t fcs)
{
    Py_ssize_t p = *pos, n = 0, ahead = p;
    uint32_t incl, orig;
    for (; n < room && p + header <= size; n++) {
        if (ahead < p)  /* past a record longer than PREFETCH: its lines are read already */
            ahead = p;
        for (; ahead < p + PREFETCH && ahead < size; ahead += 64)  /* every line up to PREFETCH ahead */
            __builtin_prefetch(b + ahead);
        pcap_lengths(b + p, big, swap, &incl, &orig);
        if (incl > (uint64_t)most || p + header + (Py_ssize_t)incl > size)
            break;
        int64_t cap = incl, wire = orig;
        if (cap > cut_lo && cap <= cut_hi)
            cap = cut_lo;
        if (fcs) {
            wire = wire > fcs ? wire - fcs : 0;
            if (cap > wire)
                cap = wire;
        }
        off[n] = p + header;
        caps[n] = cap;
        wires[n] = wire;
        p += header + incl;
    }
    *pos = p;
    return n;
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
    if (p < 0)
        p = size;
    /* the columns sized for records of 64 bytes, doubled when more come, cut to size at the end */
    Py_ssize_t room = (p < size ? (size - p) / (header + 64) : 0) + 16;
    /* the common files: little-endian, nothing swapped or taken off, with a snap length (most do) or without */
    int plain = !big && !swap && header == 16 && !fcs;
    PyObject *cols[3] = {NULL, NULL, NULL}, *result = NULL;
    for (int k = 0; k < 3; k++)
        if (!(cols[k] = PyBytes_FromStringAndSize(NULL, room * 8)))
            goto done;
    for (;;) {
        int64_t *off = (int64_t *)PyBytes_AS_STRING(cols[0]) + n, *caps = (int64_t *)PyBytes_AS_STRING(cols[1]) + n;
        int64_t *wires = (int64_t *)PyBytes_AS_STRING(cols[2]) + n;
        if (plain && !cut_hi)
            n += walk_records(b, size, &p, room - n, off, caps, wires, 0, 0, 16, most, 0, 0, 0);
        else if (plain)
            n += walk_records(b, size, &p, room - n, off, caps, wires, 0, 0, 16, most, cut_lo, cut_hi, 0);
        else
            n += walk_records(b, size, &p, room - n, off, caps, wires, big, swap, header, most, cut_lo, cut_hi, fcs);
        if (n < room)
            break;
        if (grow(cols, room *= 2) < 0)
            goto done;
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
    {"check_chunk", (PyCFunction)(void (*)(void))check_chunk, METH_FASTCALL,
     "check_chunk(data, offsets, caplens, origlens, linktypes, front, first, budget, window) -> (counts, fast, walk, "
     "reported, closed, peak, cut) (see csum/engine/_cwalk.c)."},
    {"results", results, METH_O, "results(kept) -> [Result, ...] of a packet fast_check reported."},
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
