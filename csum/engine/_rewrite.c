/*
 * csum.engine._rewrite: a capture's packets rewritten by a set of rules, every checksum updated incrementally.
 *
 * The reference is csum/rewrite/apply.py (the Python editor over the Python walker); this file takes the common
 * stacks only (csum/rewrite/fast.py says which) and declines every other packet, before touching it, to that
 * reference. For the packets it takes it makes the same helper arithmetic in the same order, so the bytes are the
 * same: bpf_csum_diff (Linux >= 6.13, generic csum_partial), bpf_l3_csum_replace and bpf_l4_csum_replace of
 * net/core/filter.c on a CHECKSUM_NONE skb (net/core/utils.c inet_proto_csum_replace*, include/net/checksum.h
 * csum_replace2/4, csum_replace_by_diff, csum_fold), each change of a tunnelled packet carried into the tunnel's
 * UDP checksum with BPF_F_MARK_MANGLED_0. The protocol numbers, EtherTypes, ports and checksum field offsets come
 * from csum/layers/table.py through Plan(facts=...); the IPv4/IPv6/Ethernet header layouts (RFC 791, RFC 8200,
 * IEEE 802.3) are those csum/layers/walk.py reads.
 *
 * Input is hostile: every read is bounded by the packet's captured length, every record by the chunk's size.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int version, oldlen, newlen;
    uint8_t old[16], new_[16];
} Map;

typedef struct {
    PyObject_HEAD
    /* facts */
    int eth_ipv4, eth_ipv6, tcp, udp, icmp, icmpv6, tcp_f, udp_f, icmp_f, icmpv6_f;
    int hbh, dstopt, hao, jumbo, vxlan, tos, ttl_off;
    uint8_t tpid[65536 / 8], tunnel[65536 / 8], icmp_err[256], icmpv6_err[256], srcroute[256];
    /* rules */
    Map *src, *dst;
    int nsrc, ndst;
    int (*ports)[3];
    int nports;
    int ttl, dscp, ecn, tclass, flow, level;
    uint8_t (*mac_src)[13], (*mac_dst)[13]; /* [0]: has old; [1..6] old; [7..12] new */
    int nmac_src, nmac_dst;
    int (*vlan)[2];
    int nvlan;
    PyObject *anon;
    /* the anonymized addresses seen: open addressing, 17-byte keys (length + address) */
    uint8_t *cache;
    size_t cache_used;
} Plan;

#define CACHE_SLOTS (1u << 16)
#define SLOT 33 /* 1 used/len byte + 16 key + 16 value */

#define BIT(set, i) ((set)[(i) >> 3] & (1u << ((i) & 7)))
#define SETBIT(set, i) ((set)[(i) >> 3] |= (uint8_t)(1u << ((i) & 7)))

static int get_int(PyObject *facts, const char *name, int *out)
{
    PyObject *v = PyDict_GetItemString(facts, name);
    if (v == NULL) {
        PyErr_Format(PyExc_KeyError, "facts: missing %s", name);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *out = (int)x;
    return 0;
}

static int get_set(PyObject *facts, const char *name, uint8_t *set, int limit)
{
    PyObject *v = PyDict_GetItemString(facts, name);
    if (v == NULL || !PyList_Check(v)) {
        PyErr_Format(PyExc_KeyError, "facts: missing list %s", name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
        long x = PyLong_AsLong(PyList_GET_ITEM(v, i));
        if (x < 0 || x >= limit) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "facts: %s out of range", name);
            return -1;
        }
        SETBIT(set, x);
    }
    return 0;
}

static int get_bytes(PyObject *o, uint8_t *out, Py_ssize_t size, int allow_empty)
{
    if (!PyBytes_Check(o) || !(PyBytes_GET_SIZE(o) == size || (allow_empty && PyBytes_GET_SIZE(o) == 0))) {
        PyErr_SetString(PyExc_ValueError, "Plan: wrong-sized bytes");
        return -1;
    }
    if (PyBytes_GET_SIZE(o))
        memcpy(out, PyBytes_AS_STRING(o), (size_t)size);
    return (int)PyBytes_GET_SIZE(o);
}

static int get_maps(PyObject *list, Map **out, int *n)
{
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "Plan: maps must be a list");
        return -1;
    }
    *n = (int)PyList_GET_SIZE(list);
    *out = PyMem_Calloc((size_t)*n + 1, sizeof(Map));
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < *n; i++) {
        PyObject *t = PyList_GET_ITEM(list, i), *o, *nw;
        Map *m = &(*out)[i];
        if (!PyArg_ParseTuple(t, "iSiSi", &m->version, &o, &m->oldlen, &nw, &m->newlen))
            return -1;
        if (get_bytes(o, m->old, 16, 0) < 0 || get_bytes(nw, m->new_, 16, 0) < 0)
            return -1;
        int bits = m->version == 4 ? 32 : 128;
        if (m->oldlen < 0 || m->oldlen > bits || m->newlen < 0 || m->newlen > bits) {
            PyErr_SetString(PyExc_ValueError, "Plan: bad prefix length");
            return -1;
        }
    }
    return 0;
}

static int get_macs(PyObject *list, uint8_t (**out)[13], int *n)
{
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "Plan: MACs must be a list");
        return -1;
    }
    *n = (int)PyList_GET_SIZE(list);
    *out = PyMem_Calloc((size_t)*n + 1, 13);
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < *n; i++) {
        PyObject *o, *nw;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "SS", &o, &nw))
            return -1;
        int has = get_bytes(o, (*out)[i] + 1, 6, 1);
        if (has < 0 || get_bytes(nw, (*out)[i] + 7, 6, 0) < 0)
            return -1;
        (*out)[i][0] = has != 0;
    }
    return 0;
}

static int Plan_init(Plan *self, PyObject *args, PyObject *kwds)
{
    PyObject *facts, *src, *dst, *ports, *msrc, *mdst, *vlan, *anon;
    if (!PyArg_ParseTuple(args, "O!OOOiiiiiOOOiO", &PyDict_Type, &facts, &src, &dst, &ports, &self->ttl,
                          &self->dscp, &self->ecn, &self->tclass, &self->flow, &msrc, &mdst, &vlan, &self->level,
                          &anon))
        return -1;
    struct { const char *name; int *at; } ints[] = {
        {"eth_ipv4", &self->eth_ipv4}, {"eth_ipv6", &self->eth_ipv6}, {"tcp", &self->tcp}, {"udp", &self->udp},
        {"icmp", &self->icmp}, {"icmpv6", &self->icmpv6}, {"tcp_field", &self->tcp_f}, {"udp_field", &self->udp_f},
        {"icmp_field", &self->icmp_f}, {"icmpv6_field", &self->icmpv6_f}, {"hop_by_hop", &self->hbh},
        {"dest_opts", &self->dstopt}, {"home_address", &self->hao}, {"jumbo", &self->jumbo},
        {"vxlan_port", &self->vxlan}, {"ipv4_tos", &self->tos}, {"ipv4_ttl", &self->ttl_off}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (get_int(facts, ints[i].name, ints[i].at) < 0)
            return -1;
    if (get_set(facts, "vlan_tpids", self->tpid, 65536) < 0 || get_set(facts, "udp_tunnels", self->tunnel, 65536) < 0
        || get_set(facts, "icmp_errors", self->icmp_err, 256) < 0
        || get_set(facts, "icmpv6_errors", self->icmpv6_err, 256) < 0
        || get_set(facts, "source_routes", self->srcroute, 256) < 0)
        return -1;
    if (get_maps(src, &self->src, &self->nsrc) < 0 || get_maps(dst, &self->dst, &self->ndst) < 0)
        return -1;
    if (!PyList_Check(ports) || !PyList_Check(vlan)) {
        PyErr_SetString(PyExc_TypeError, "Plan: ports and vlan must be lists");
        return -1;
    }
    self->nports = (int)PyList_GET_SIZE(ports);
    self->ports = PyMem_Calloc((size_t)self->nports + 1, sizeof *self->ports);
    self->nvlan = (int)PyList_GET_SIZE(vlan);
    self->vlan = PyMem_Calloc((size_t)self->nvlan + 1, sizeof *self->vlan);
    if (self->ports == NULL || self->vlan == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < self->nports; i++)
        if (!PyArg_ParseTuple(PyList_GET_ITEM(ports, i), "iii", &self->ports[i][0], &self->ports[i][1],
                              &self->ports[i][2]))
            return -1;
    for (int i = 0; i < self->nvlan; i++)
        if (!PyArg_ParseTuple(PyList_GET_ITEM(vlan, i), "ii", &self->vlan[i][0], &self->vlan[i][1]))
            return -1;
    if (get_macs(msrc, &self->mac_src, &self->nmac_src) < 0 || get_macs(mdst, &self->mac_dst, &self->nmac_dst) < 0)
        return -1;
    if (anon != Py_None) {
        if (!PyCallable_Check(anon)) {
            PyErr_SetString(PyExc_TypeError, "Plan: anonymize must be callable or None");
            return -1;
        }
        self->cache = PyMem_Calloc(CACHE_SLOTS, SLOT);
        if (self->cache == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        Py_INCREF(anon);
        self->anon = anon;
    }
    return 0;
}

static void Plan_dealloc(Plan *self)
{
    PyMem_Free(self->src);
    PyMem_Free(self->dst);
    PyMem_Free(self->ports);
    PyMem_Free(self->vlan);
    PyMem_Free(self->mac_src);
    PyMem_Free(self->mac_dst);
    PyMem_Free(self->cache);
    Py_XDECREF(self->anon);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "csum.engine._rewrite.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Plan_init,
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_doc = "A set of rules as the C engine applies them.",
};

/* --- include/net/checksum.h arithmetic (as csum/core/arith.py) ------------------------------------------------ */

static inline uint32_t add32(uint32_t a, uint32_t b)
{
    uint64_t r = (uint64_t)a + b;
    return (uint32_t)((r & 0xffffffffu) + (r >> 32));
}
static inline uint32_t sub32(uint32_t a, uint32_t b) { return add32(a, ~b); }
static inline uint32_t add16(uint32_t a, uint32_t b)
{
    uint32_t r = a + b;
    return (r & 0xffff) + (r >> 16);
}
static inline uint32_t sub16(uint32_t a, uint32_t b) { return add16(a, b ^ 0xffff); }
static inline uint32_t from32to16(uint32_t x)
{
    x += (x >> 16) | (x << 16);
    return x >> 16;
}
static inline uint32_t csum_fold(uint32_t x) { return from32to16(x) ^ 0xffff; }
static inline uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static inline uint32_t be16(const uint8_t *p) { return ((uint32_t)p[0] << 8) | p[1]; }
static inline uint32_t le32(const uint8_t *p) { return le16(p) | (le16(p + 2) << 16); }

/* lib/checksum.c do_csum of an even number of bytes on a little-endian CPU: canonical 16 bits. */
static uint32_t do_csum(const uint8_t *p, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; i += 2)
        s += le16(p + i);
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return s;
}

/* --- one packet --------------------------------------------------------------------------------------------- */

typedef struct {
    int version, l3, hdr_end, l4start, end, ip_csum, saddr, daddr, ttl, proto, l4, l4_csum, pseudo, later, depth;
    int encl_at, encl_start, encl_end;
    uint8_t news[2][16];
    int newsrc, newdst;
} Layer;

typedef struct {
    Plan *p;
    uint8_t *b;
    int n;
    uint32_t diff;
    int touched[32], ntouched;
} Ctx;

static void touch(Ctx *c, int at)
{
    for (int i = 0; i < c->ntouched; i++)
        if (c->touched[i] == at)
            return;
    if (c->ntouched < 32)
        c->touched[c->ntouched++] = at;
}

static void cover(Ctx *c, Layer *L, int offset, const uint8_t *old, const uint8_t *new_, int n, int isdiff);

/* bpf_l4_csum_replace on CHECKSUM_NONE (csum/bpf/helpers.py l4_csum_replace_skb). */
static void l4_replace(Ctx *c, Layer *L, int at, uint32_t f, uint32_t t, int size, int mangled0, int enforce)
{
    uint8_t old[2] = {c->b[at], c->b[at + 1]};
    uint32_t o = le16(old), nw;
    touch(c, at);
    if (!(mangled0 && !enforce && o == 0)) {
        uint32_t mask = size == 2 ? 0xffffu : 0xffffffffu;
        nw = size == 0 ? csum_fold(sub32(t, o)) : csum_fold(add32(sub32(o ^ 0xffffffffu, f & mask), t & mask));
        if (mangled0 && nw == 0)
            nw = 0xffff;
        c->b[at] = (uint8_t)nw;
        c->b[at + 1] = (uint8_t)(nw >> 8);
    }
    cover(c, L, at, old, c->b + at, 2, 0);
}

/* bpf_l3_csum_replace (csum/bpf/helpers.py l3_csum_replace_at). */
static void l3_replace(Ctx *c, Layer *L, int at, uint32_t f, uint32_t t, int size)
{
    uint8_t old[2] = {c->b[at], c->b[at + 1]};
    uint32_t o = le16(old), nw;
    touch(c, at);
    if (size == 0)
        nw = csum_fold(sub32(t, o));
    else if (size == 2)
        nw = add16(sub16(o ^ 0xffff, f & 0xffff), t & 0xffff) ^ 0xffff;
    else
        nw = csum_fold(add32(sub32(o ^ 0xffffffffu, f), t));
    c->b[at] = (uint8_t)nw;
    c->b[at + 1] = (uint8_t)(nw >> 8);
    cover(c, L, at, old, c->b + at, 2, 0);
}

/* Editor.cover: the change carried into the tunnel's UDP checksum (BPF_F_MARK_MANGLED_0, no pseudo-header). */
static void cover(Ctx *c, Layer *L, int offset, const uint8_t *old, const uint8_t *new_, int n, int isdiff)
{
    if (L->encl_at < 0 || L->encl_at == offset || offset < L->encl_start || offset >= L->encl_end)
        return;
    if (isdiff)
        l4_replace(c, L, L->encl_at, 0, c->diff, 0, 1, 0);
    else
        l4_replace(c, L, L->encl_at, n == 2 ? le16(old) : le32(old), n == 2 ? le16(new_) : le32(new_), n, 1, 0);
}

static void store(Ctx *c, Layer *L, int offset, const uint8_t *new_, int n, int isdiff)
{
    uint8_t old[16];
    memcpy(old, c->b + offset, (size_t)n);
    cover(c, L, offset, old, new_, n, isdiff);
    memcpy(c->b + offset, new_, (size_t)n);
}

static int udp_tunnel(Ctx *c, Layer *L) { return L->l4 >= 0 && BIT(c->p->tunnel, be16(c->b + L->l4 + 2)); }

static void l4_flags(Ctx *c, Layer *L, int *mangled0, int *enforce)
{
    *mangled0 = L->proto == c->p->udp;
    *enforce = *mangled0 && L->version == 6 && !udp_tunnel(c, L);
}

static void address(Ctx *c, Layer *L, int source, const uint8_t *new_)
{
    int off = source ? L->saddr : L->daddr, n = L->version == 4 ? 4 : 16, m0, en;
    c->diff = from32to16(sub32(do_csum(new_, n), do_csum(c->b + off, n)));
    if (L->l4_csum >= 0 && L->pseudo) {
        l4_flags(c, L, &m0, &en);
        l4_replace(c, L, L->l4_csum, 0, c->diff, 0, m0, en);
    }
    if (L->ip_csum >= 0)
        l3_replace(c, L, L->ip_csum, 0, c->diff, 0);
    store(c, L, off, new_, n, n > 4);
}

static void field(Ctx *c, Layer *L, int off, const uint8_t *new_, int n)
{
    if (off < L->l4start && L->ip_csum >= 0 && off < L->hdr_end)
        l3_replace(c, L, L->ip_csum, n == 2 ? le16(c->b + off) : le32(c->b + off), n == 2 ? le16(new_) : le32(new_), n);
    store(c, L, off, new_, n, 0);
}

static int map_address(Plan *p, const uint8_t *addr, int n, int source, uint8_t *out)
{
    Map *maps[2] = {p->src, p->dst};
    int counts[2] = {p->nsrc, p->ndst}, k = source ? 0 : 1, version = n == 4 ? 4 : 6;
    for (int i = 0; i < counts[k]; i++) {
        Map *m = &maps[k][i];
        if (m->version != version)
            continue;
        int match = 1;
        for (int bit = 0; bit < m->oldlen && match; bit += 8) {
            int bits = m->oldlen - bit >= 8 ? 8 : m->oldlen - bit;
            uint8_t mask = (uint8_t)(0xff << (8 - bits));
            match = (addr[bit / 8] & mask) == (m->old[16 - n + bit / 8] & mask);
        }
        if (!match)
            continue;
        for (int j = 0; j < n; j++) {
            int bit = j * 8, bits = m->newlen - bit >= 8 ? 8 : m->newlen - bit > 0 ? m->newlen - bit : 0;
            uint8_t mask = (uint8_t)(0xff << (8 - bits));
            out[j] = (uint8_t)((m->new_[16 - n + j] & mask) | (addr[j] & ~mask));
        }
        return 0;
    }
    if (p->anon == NULL) {
        memcpy(out, addr, (size_t)n);
        return 0;
    }
    uint32_t h = 2166136261u;
    for (int j = 0; j < n; j++)
        h = (h ^ addr[j]) * 16777619u;
    for (uint32_t i = 0;; i++) {
        uint8_t *slot = p->cache + (size_t)((h + i) & (CACHE_SLOTS - 1)) * SLOT;
        if (slot[0] == 0)
            break;
        if (slot[0] == n && memcmp(slot + 1, addr, (size_t)n) == 0) {
            memcpy(out, slot + 17, (size_t)n);
            return 0;
        }
    }
    PyObject *got = PyObject_CallFunction(p->anon, "y#", (const char *)addr, (Py_ssize_t)n);
    if (got == NULL)
        return -1;
    if (!PyBytes_Check(got) || PyBytes_GET_SIZE(got) != n) {
        Py_DECREF(got);
        PyErr_SetString(PyExc_ValueError, "anonymize returned an address of another size");
        return -1;
    }
    memcpy(out, PyBytes_AS_STRING(got), (size_t)n);
    Py_DECREF(got);
    if (p->cache_used >= CACHE_SLOTS / 2) {
        memset(p->cache, 0, (size_t)CACHE_SLOTS * SLOT);
        p->cache_used = 0;
    }
    for (uint32_t i = 0;; i++) {
        uint8_t *slot = p->cache + (size_t)((h + i) & (CACHE_SLOTS - 1)) * SLOT;
        if (slot[0] == 0) {
            slot[0] = (uint8_t)n;
            memcpy(slot + 1, addr, (size_t)n);
            memcpy(slot + 17, out, (size_t)n);
            p->cache_used++;
            return 0;
        }
    }
}

/* The transport header of a layer whose datagram is whole here; -1: decline. */
static int transport(Ctx *c, Layer *L, int *inner)
{
    Plan *p = c->p;
    const uint8_t *b = c->b;
    int at = L->l4start, avail = L->end - at;
    L->l4 = at;
    if (L->proto == p->tcp) {
        if (avail < 20 || at + 13 > c->n)
            return -1;
        int doff = (b[at + 12] >> 4) * 4;
        if (doff > avail)
            return -1;
        L->l4_csum = at + p->tcp_f;
        L->pseudo = 1;
    } else if (L->proto == p->udp) {
        if (avail < 8)
            return -1;
        int len = (int)be16(b + at + 4);
        if (len < 8 || len > avail)
            return -1;
        L->l4_csum = at + p->udp_f;
        L->pseudo = 1;
        int port = (int)be16(b + at + 2);
        if (BIT(p->tunnel, port)) {
            if (port != p->vxlan || L->depth > 0)
                return -1;
            *inner = 1;
        }
    } else if (L->proto == p->icmp && L->version == 4) {
        if (avail < 4 || BIT(p->icmp_err, b[at]))
            return -1;
        L->l4_csum = at + p->icmp_f;
        L->pseudo = 0;
    } else if (L->proto == p->icmpv6 && L->version == 6) {
        if (avail < 4 || BIT(p->icmpv6_err, b[at]))
            return -1;
        L->l4_csum = at + p->icmpv6_f;
        L->pseudo = 1;
    } else {
        return -1;
    }
    return 0;
}

/* Whether the layer's TCP/UDP field holds transmit offload's pseudo-header sum (csum/layers/check.py: with its
 * length or 0): such a field is updated as on a CHECKSUM_PARTIAL skb, which apply.py does; declined here. */
static int offload(Ctx *c, Layer *L)
{
    if (L->l4_csum < 0 || L->later || !(L->proto == c->p->tcp || L->proto == c->p->udp))
        return 0;
    int n = L->version == 4 ? 4 : 16;
    uint32_t s = (uint32_t)L->proto, stored = be16(c->b + L->l4_csum);
    for (int i = 0; i < n; i += 2)
        s += be16(c->b + L->saddr + i) + be16(c->b + L->daddr + i);
    uint32_t len = L->proto == c->p->udp ? be16(c->b + L->l4 + 4) : (uint32_t)(L->end - L->l4start);
    uint32_t with = s + (len >> 16) + (len & 0xffff);
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    while (with >> 16)
        with = (with & 0xffff) + (with >> 16);
    return stored == s || stored == with;
}

/* An IPv4 or IPv6 header at ``at`` (its datagram within ``end``), as csum/layers/walk.py reads it; -1: decline. */
static int ip_layer(Ctx *c, int at, int end, int depth, Layer *L, int *inner)
{
    Plan *p = c->p;
    const uint8_t *b = c->b;
    memset(L, 0, sizeof *L);
    L->depth = depth;
    L->ip_csum = L->l4 = L->l4_csum = L->encl_at = -1;
    if (at + 1 > c->n)
        return -1;
    if (b[at] >> 4 == 4) {
        int ihl = (b[at] & 15) * 4, total;
        if (at + 20 > c->n || ihl < 20 || at + ihl > c->n)
            return -1;
        total = (int)be16(b + at + 2);
        if (total < ihl || at + total > end)
            return -1;
        for (int i = at + 20; i < at + ihl;) {
            int t = b[i];
            if (t == 0)
                break;
            if (t == 1) {
                i++;
                continue;
            }
            if (i + 1 >= at + ihl || b[i + 1] < 2 || i + b[i + 1] > at + ihl || BIT(p->srcroute, t))
                return -1;
            i += b[i + 1];
        }
        int frag = (int)be16(b + at + 6), later = (frag & 0x1fff) != 0, first = !later && (frag & 0x2000);
        L->version = 4;
        L->l3 = at;
        L->hdr_end = L->l4start = at + ihl;
        L->end = at + total;
        L->ip_csum = at + 10;
        L->saddr = at + 12;
        L->daddr = at + 16;
        L->ttl = at + p->ttl_off;
        L->proto = b[at + 9];
        if (later) {
            L->later = 1;
            return depth == 0 ? 0 : -1;
        }
        if (first) {
            int f = L->proto == p->tcp ? p->tcp_f : L->proto == p->udp ? p->udp_f : L->proto == p->icmp ? p->icmp_f : -1;
            if (depth > 0 || f < 0 || L->l4start + f + 2 > L->end)
                return -1;
            L->l4 = L->l4start;
            L->l4_csum = L->l4start + f;
            L->pseudo = L->proto != p->icmp;
            return 0;
        }
        return transport(c, L, inner);
    }
    if (b[at] >> 4 != 6 || at + 40 > c->n)
        return -1;
    int plen = (int)be16(b + at + 4), nh = b[at + 6], q = at + 40, stop = at + 40 + plen;
    if (plen == 0 || stop > end)
        return -1;
    while (nh == p->hbh || nh == p->dstopt) {
        if (q + 2 > stop)
            return -1;
        int len = (b[q + 1] + 1) * 8;
        if (q + len > stop)
            return -1;
        for (int i = q + 2; i < q + len;) {
            if (b[i] == 0) {
                i++;
                continue;
            }
            if (i + 2 > q + len || i + 2 + b[i + 1] > q + len || b[i] == p->hao || b[i] == p->jumbo)
                return -1;
            i += 2 + b[i + 1];
        }
        nh = b[q];
        q += len;
    }
    L->version = 6;
    L->l3 = at;
    L->hdr_end = at + 40;
    L->l4start = q;
    L->end = stop;
    L->saddr = at + 8;
    L->daddr = at + 24;
    L->ttl = at + 7;
    L->proto = nh;
    return transport(c, L, inner);
}

/* An Ethernet header at ``at``: the offset of its IP header (up to two VLAN tags), or -1. */
static int ethernet(Ctx *c, int at, int *version)
{
    int n = c->n, tags = 0;
    if (at + 14 > n)
        return -1;
    at += 12;
    while (BIT(c->p->tpid, be16(c->b + at))) {
        if (++tags > 2 || at + 6 > n)
            return -1;
        at += 4;
    }
    int type = (int)be16(c->b + at);
    *version = type == c->p->eth_ipv4 ? 4 : type == c->p->eth_ipv6 ? 6 : 0;
    if (!*version || at + 3 > n || c->b[at + 2] >> 4 != *version)
        return -1;
    return at + 2;
}

static int selected(Plan *p, int depth) { return p->level == 2 || (p->level == 0) == (depth == 0); }

/* What apply.py's _layer does to one layer, after everything has been checked. */
static void edit_layer(Ctx *c, Layer *L)
{
    Plan *p = c->p;
    uint8_t *b = c->b;
    int n = L->version == 4 ? 4 : 16;
    if (L->newsrc)
        address(c, L, 1, L->news[0]);
    if (L->newdst)
        address(c, L, 0, L->news[1]);
    if (p->nports && (L->proto == p->tcp || L->proto == p->udp) && !L->later && L->l4 >= 0 && L->l4 + 4 <= c->n) {
        for (int i = 0; i < 4; i += 2) {
            int at = L->l4 + i, port = (int)be16(b + at), nw = port;
            for (int k = 0; k < p->nports; k++)
                if (p->ports[k][1] == port && (p->ports[k][0] < 0 || p->ports[k][0] == L->proto)) {
                    nw = p->ports[k][2];
                    break;
                }
            if (nw != port) {
                uint8_t v[2] = {(uint8_t)(nw >> 8), (uint8_t)nw}, old[2] = {b[at], b[at + 1]};
                int m0, en;
                if (L->l4_csum >= 0) {
                    l4_flags(c, L, &m0, &en);
                    l4_replace(c, L, L->l4_csum, le16(old), le16(v), 2, m0, en);
                }
                store(c, L, at, v, 2, 0);
            }
        }
    }
    (void)n;
    if (p->ttl != -1000) {
        int hop = p->ttl >= 0 ? p->ttl : b[L->ttl] + p->ttl;
        if (hop != b[L->ttl]) {
            int word = L->ttl - ((L->ttl - L->l3) & 1);
            uint8_t v[2] = {b[word], b[word + 1]};
            v[L->ttl - word] = (uint8_t)hop;
            field(c, L, word, v, 2);
        }
    }
    if (L->version == 4) {
        int tos = b[L->l3 + p->tos], nt = tos;
        if (p->dscp >= 0)
            nt = (p->dscp << 2) | (nt & 3);
        if (p->ecn >= 0)
            nt = (nt & ~3) | p->ecn;
        if (nt != tos) {
            uint8_t v[2] = {b[L->l3], (uint8_t)nt};
            field(c, L, L->l3, v, 2);
        }
        return;
    }
    uint32_t word = ((uint32_t)be16(b + L->l3) << 16) | be16(b + L->l3 + 2);
    int tc = (int)((word >> 20) & 0xff), label = (int)(word & 0xfffff);
    if (p->tclass >= 0)
        tc = p->tclass;
    if (p->dscp >= 0)
        tc = (p->dscp << 2) | (tc & 3);
    if (p->ecn >= 0)
        tc = (tc & ~3) | p->ecn;
    if (p->flow >= 0)
        label = p->flow;
    uint32_t nw = (word >> 28 << 28) | ((uint32_t)tc << 20) | (uint32_t)label;
    if (nw != word) {
        uint8_t v[4] = {(uint8_t)(nw >> 24), (uint8_t)(nw >> 16), (uint8_t)(nw >> 8), (uint8_t)nw};
        field(c, L, L->l3, v, 4);
    }
}

static void link_layer(Ctx *c)
{
    Plan *p = c->p;
    for (int side = 0; side < 2; side++) { /* the destination (0), then the source (6) */
        uint8_t (*macs)[13] = side ? p->mac_src : p->mac_dst;
        int count = side ? p->nmac_src : p->nmac_dst;
        uint8_t *mac = c->b + 6 * side;
        for (int i = 0; i < count; i++)
            if (!macs[i][0] || memcmp(macs[i] + 1, mac, 6) == 0) {
                memcpy(mac, macs[i] + 7, 6);
                break;
            }
    }
    for (int at = 12; p->nvlan && at + 4 <= c->n && BIT(p->tpid, be16(c->b + at)); at += 4) {
        int tci = (int)be16(c->b + at + 2), vid = tci & 0x0fff;
        for (int i = 0; i < p->nvlan; i++)
            if (p->vlan[i][0] == vid) {
                tci = (tci & ~0x0fff) | p->vlan[i][1];
                break;
            }
        c->b[at + 2] = (uint8_t)(tci >> 8);
        c->b[at + 3] = (uint8_t)tci;
    }
}

/* One packet: 1 rewritten, 0 declined (untouched), -1 Python error. */
static int one(Ctx *c, int linktype, int hop_ok)
{
    Plan *p = c->p;
    Layer layers[2];
    int nl = 0, inner = 0, version = 0, at;
    if (linktype == 1)
        at = ethernet(c, 0, &version);
    else if (linktype == 101 || linktype == 228 || linktype == 229)
        at = 0;
    else
        return 0;
    if (at < 0 || ip_layer(c, at, c->n, 0, &layers[0], &inner) < 0)
        return 0;
    nl = 1;
    if (inner) {
        Layer *o = &layers[0];
        int udp_end = o->l4 + (int)be16(c->b + o->l4 + 4), vx = o->l4 + 8, in_at, dummy = 0;
        if (vx + 8 > c->n)
            return 0;
        in_at = ethernet(c, vx + 8, &version);
        if (in_at < 0 || ip_layer(c, in_at, c->n, 1, &layers[1], &dummy) < 0 || dummy || layers[1].later)
            return 0;
        if ((in_at - o->l4) & 1)
            return 0;
        if (in_at < udp_end && in_at >= o->l4) {
            layers[1].encl_at = o->l4_csum;
            layers[1].encl_start = o->l4;
            layers[1].encl_end = udp_end;
        }
        nl = 2;
    }
    for (int i = 0; i < nl; i++) {
        Layer *L = &layers[i];
        if (offload(c, L))
            return 0;
        if (!selected(p, L->depth))
            continue;
        if (p->ttl < 0 && p->ttl != -1000 && c->b[L->ttl] + p->ttl < 0)
            return 0; /* left alone (ttl-expired): apply.py counts it */
        int n = L->version == 4 ? 4 : 16;
        if (p->nsrc || p->ndst || p->anon) {
            if (map_address(p, c->b + L->saddr, n, 1, L->news[0]) < 0 || map_address(p, c->b + L->daddr, n, 0,
                                                                                    L->news[1]) < 0)
                return -1;
            L->newsrc = memcmp(L->news[0], c->b + L->saddr, (size_t)n) != 0;
            L->newdst = memcmp(L->news[1], c->b + L->daddr, (size_t)n) != 0;
        }
    }
    (void)hop_ok;
    if (linktype == 1)
        link_layer(c);
    for (int i = 0; i < nl; i++)
        if (selected(p, layers[i].depth))
            edit_layer(c, &layers[i]);
    return 1;
}

static int view(PyObject *o, Py_buffer *v, int writable, const char *what)
{
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (!writable && v->len % 8) {
        PyBuffer_Release(v);
        PyErr_Format(PyExc_ValueError, "%s must be int64", what);
        return -1;
    }
    return 0;
}

static PyObject *rewrite(PyObject *mod, PyObject *args)
{
    PyObject *plan, *data, *offs, *caps, *origs, *links;
    if (!PyArg_ParseTuple(args, "O!OOOOO", &PlanType, &plan, &data, &offs, &caps, &origs, &links))
        return NULL;
    Py_buffer d, o, cp, og, lk;
    if (view(data, &d, 1, "data") < 0)
        return NULL;
    if (view(offs, &o, 0, "offsets") < 0) {
        PyBuffer_Release(&d);
        return NULL;
    }
    if (view(caps, &cp, 0, "caplens") < 0) {
        PyBuffer_Release(&d);
        PyBuffer_Release(&o);
        return NULL;
    }
    if (view(origs, &og, 0, "origlens") < 0) {
        PyBuffer_Release(&d);
        PyBuffer_Release(&o);
        PyBuffer_Release(&cp);
        return NULL;
    }
    if (view(links, &lk, 0, "linktypes") < 0) {
        PyBuffer_Release(&d);
        PyBuffer_Release(&o);
        PyBuffer_Release(&cp);
        PyBuffer_Release(&og);
        return NULL;
    }
    PyObject *declined = PyList_New(0), *result = NULL;
    Py_ssize_t count = o.len / 8;
    long long kept = 0, changed = 0;
    uint8_t *before = PyMem_Malloc(65536);
    if (declined == NULL || before == NULL || cp.len / 8 != count || og.len / 8 != count || lk.len / 8 != count) {
        if (declined != NULL && before != NULL)
            PyErr_SetString(PyExc_ValueError, "offsets, caplens, origlens and linktypes differ in length");
        else
            PyErr_NoMemory();
        goto done;
    }
    const int64_t *off = o.buf, *cap = cp.buf, *orig = og.buf, *lt = lk.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        int r = 0;
        if (off[i] >= 0 && cap[i] > 0 && cap[i] <= 65536 && cap[i] == orig[i] && off[i] + cap[i] <= d.len) {
            Ctx c = {(Plan *)plan, (uint8_t *)d.buf + off[i], (int)cap[i], 0, {0}, 0};
            memcpy(before, c.b, (size_t)c.n);
            r = one(&c, (int)lt[i], 1);
            if (r < 0)
                goto done;
            if (r) {
                kept += c.ntouched;
                changed += memcmp(before, c.b, (size_t)c.n) != 0;
            }
        }
        if (!r) {
            PyObject *idx = PyLong_FromSsize_t(i);
            if (idx == NULL || PyList_Append(declined, idx) < 0) {
                Py_XDECREF(idx);
                goto done;
            }
            Py_DECREF(idx);
        }
    }
    result = Py_BuildValue("OLL", declined, kept, changed);
done:
    PyMem_Free(before);
    Py_XDECREF(declined);
    PyBuffer_Release(&d);
    PyBuffer_Release(&o);
    PyBuffer_Release(&cp);
    PyBuffer_Release(&og);
    PyBuffer_Release(&lk);
    return result;
}

static PyMethodDef methods[] = {
    {"rewrite", rewrite, METH_VARARGS, "Rewrite the packets it takes in place: (declined, kept, changed)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "csum.engine._rewrite", "csum's capture rewriter in C.", -1, methods};

PyMODINIT_FUNC PyInit__rewrite(void)
{
    if (PyType_Ready(&PlanType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&PlanType);
    if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0) {
        Py_DECREF(&PlanType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
