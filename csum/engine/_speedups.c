/*
 * csum.engine._speedups: the optional C accelerator of csum's engine (csum/engine/__init__.py).
 *
 * It sums bytes and does one's-complement arithmetic (csum/engine/_arith.c/.h, which hold the arithmetic
 * and its proofs, linked into every extension); this file only takes Python arguments apart and builds results. There is no profile
 * logic beyond a shape code (which csum_partial arithmetic, csum.engine.SHAPES), no message and no call
 * back into Python. Two kinds of function:
 *
 * - ones_sum_many and ones_sum_blocked, whose callers check first: they raise Python's own
 *   TypeError/ValueError for anything else.
 * - Everything else answers one call of a public csum function for the arguments it takes, and returns
 *   NotImplemented (no error set) for any other, whatever the reason: another type (an int subclass, a
 *   non-contiguous buffer), a value out of range, a keyword it does not know, a call a BpfMisuse check
 *   looks at. A FastPath (below) pairs each with the checked Python function, which then answers: the
 *   same bits, csum's errors and warnings. The tests compare the two on every shape and corner.
 *
 * Module state: one flag, whether FastPaths try their C function at all (set_fast_paths), which
 * csum.engine sets when it binds an engine; nothing else.
 * csum/engine/native.py holds the pure-Python twins of ones_sum/ones_sum_many, csum/engine/_speedups.pyi
 * every signature.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#include "_arith.h"

/* Release the GIL for buffers at least this large. */
#define NOGIL_BYTES ((Py_ssize_t)1 << 16)

static PyObject *str_little, *str_big;
/* This module (the self of its functions), for FastPath to know its own functions. */
static PyObject *module_object;

/* ---- arguments ---------------------------------------------------------------------------------- */

/* The parameter names of the public functions, interned at import (a call's keywords usually are). */
enum { A_BUF, A_SEED, A_ALIGN, A_FRM, A_TO, A_FRM_ALIGN, A_TO_ALIGN, A_SUM16, A_OLD, A_NEW, A_PKT, A_OFFSET, A_FLAGS,
       A_IP_SUMMED, N_NAMES };
static const char *const name_text[N_NAMES] = {"buf", "seed", "align", "frm", "to", "frm_align", "to_align", "sum16",
                                               "old", "new", "pkt", "offset", "flags", "ip_summed"};
static PyObject *names[N_NAMES];

/* A call bound to a signature: sig lists its parameters (name indices), the first npos positional-or-keyword,
 * the rest keyword-only, the first nreq required. 1 with out[i] the argument for sig[i] (NULL: absent), or 0
 * where Python would bind it otherwise or refuse it (too many, unknown or repeated keywords, one missing). */
static int bind(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const int *sig, int npos, int nreq,
                int nall, PyObject **out)
{
    if (nargs > npos || (kwnames == NULL && nargs < nreq))
        return 0;
    for (int i = 0; i < nall; i++)
        out[i] = i < nargs ? args[i] : NULL;
    if (kwnames == NULL)
        return 1;
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = -1;
        for (int i = 0; i < nall && j < 0; i++)
            if (key == names[sig[i]])
                j = i;
        for (int i = 0; i < nall && j < 0; i++)
            if (PyUnicode_Check(key) && PyUnicode_Compare(key, names[sig[i]]) == 0)
                j = i;
        if (j < 0 || out[j] != NULL)
            return 0;
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++)
        if (out[i] == NULL)
            return 0;
    return 1;
}

/* 1 with *v = o for an exact int in 0..max (an absent argument: 0), else 0 with no error set. */
static int get_uint(PyObject *o, uint64_t max, uint64_t *v)
{
    if (o == NULL) {
        *v = 0;
        return 1;
    }
    if (!PyLong_CheckExact(o))
        return 0;
    unsigned long long x = PyLong_AsUnsignedLongLong(o);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();  /* negative, or past 64 bits */
        return 0;
    }
    if (x > max)
        return 0;
    *v = x;
    return 1;
}

static int get_shape(PyObject *o, int *shape)
{
    uint64_t v;
    if (!get_uint(o, N_SHAPES - 1, &v))
        return 0;
    *shape = (int)v;
    return 1;
}

/* A buffer's bytes: exact bytes (and, for writing, exact bytearray) directly, anything else through the buffer
 * protocol (C-contiguous). A bytearray is only taken directly where the GIL stays held, as for a writable
 * packet: nothing can resize it during the call. */
typedef struct {
    unsigned char *p;
    Py_ssize_t n;
    int held;
    Py_buffer view;
} bytes_t;

/* Whether o, whose buffer is v, is a number rather than bytes: a 0-d buffer, or an object whose ndim is 0 (a
 * numpy datetime64/timedelta64 scalar exports 1-D bytes). The rule of csum/core/inputs.py as_view. */
static int is_number(PyObject *o, const Py_buffer *v)
{
    if (v->ndim == 0)
        return 1;
    if (PyBytes_Check(o) || PyByteArray_Check(o) || PyMemoryView_Check(o))
        return 0;
    PyObject *ndim = PyObject_GetAttrString(o, "ndim");
    if (ndim == NULL) {
        PyErr_Clear();
        return 0;
    }
    int zero = PyLong_CheckExact(ndim) && PyLong_AsLong(ndim) == 0;
    Py_DECREF(ndim);
    return zero;
}

/* 1 with b filled, else 0 with no error set. */
static int get_bytes(PyObject *o, bytes_t *b, int writable)
{
    b->held = 0;
    if (o == NULL)
        return 0;
    if (!writable && PyBytes_CheckExact(o)) {
        b->p = (unsigned char *)PyBytes_AS_STRING(o);
        b->n = PyBytes_GET_SIZE(o);
        return 1;
    }
    if (writable && PyByteArray_CheckExact(o)) {
        b->p = (unsigned char *)PyByteArray_AS_STRING(o);
        b->n = PyByteArray_GET_SIZE(o);
        return 1;
    }
    if (PyObject_GetBuffer(o, &b->view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (is_number(o, &b->view)) { /* a numpy scalar or 0-d array is a number: the Python body refuses it */
        PyBuffer_Release(&b->view);
        return 0;
    }
    b->p = b->view.buf;
    b->n = b->view.len;
    b->held = 1;
    return 1;
}

static void put_bytes(bytes_t *b)
{
    if (b->held)
        PyBuffer_Release(&b->view);
}

/* A field value of bpf_l3/l4_csum_replace (csum/bpf/helpers.py _field_value): an exact int in 0..2**64-1, or
 * exact bytes/bytearray of 2 or 4 bytes read little-endian. 1 with *v, else 0 with no error set. */
static int get_field(PyObject *o, uint64_t *v)
{
    if (PyBytes_CheckExact(o) || PyByteArray_CheckExact(o)) {
        Py_ssize_t n = PyBytes_CheckExact(o) ? PyBytes_GET_SIZE(o) : PyByteArray_GET_SIZE(o);
        const unsigned char *p = (const unsigned char *)(PyBytes_CheckExact(o) ? PyBytes_AS_STRING(o)
                                                                               : PyByteArray_AS_STRING(o));
        if (n != 2 && n != 4)
            return 0;
        *v = 0;
        for (Py_ssize_t i = n; i-- > 0;)
            *v = *v << 8 | p[i];
        return 1;
    }
    return get_uint(o, UINT64_MAX, v);
}

#define DECLINE Py_RETURN_NOTIMPLEMENTED

/* ---- sums --------------------------------------------------------------------------------------- */

/* 0 little, 1 big; -1 with ValueError set for anything else. */
static int parse_order(PyObject *o)
{
    if (o == str_little)
        return 0;
    if (o == str_big)
        return 1;
    if (PyUnicode_Check(o)) {
        if (PyUnicode_CompareWithASCIIString(o, "little") == 0)
            return 0;
        if (PyUnicode_CompareWithASCIIString(o, "big") == 0)
            return 1;
    }
    PyErr_SetString(PyExc_ValueError, "byteorder");
    return -1;
}

/* 8, 16, 32 or 64; -1 with ValueError set for anything else. */
static int parse_width(PyObject *o)
{
    if (PyLong_CheckExact(o)) {
        int overflow;
        long v = PyLong_AsLongAndOverflow(o, &overflow);
        if (!overflow && (v == 8 || v == 16 || v == 32 || v == 64))
            return (int)v;
    }
    PyErr_SetString(PyExc_ValueError, "width");
    return -1;
}

static uint64_t sum_maybe_nogil(const unsigned char *p, Py_ssize_t n, int big, uint64_t block)
{
    uint64_t s;
    if (n >= NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        s = csum_sum64(p, (uint64_t)n, big, block);
        Py_END_ALLOW_THREADS
    } else {
        s = csum_sum64(p, (uint64_t)n, big, block);
    }
    return s;
}

/* Canonical sum of args[0] (a C-contiguous buffer) in words of args[1] bits, byte order args[2];
 * NotImplemented, with no error set, for arguments of any other kind. */
static PyObject *sum_buffer(PyObject *const *args, uint64_t block)
{
    int width = parse_width(args[1]);
    int big = width < 0 ? -1 : parse_order(args[2]);
    bytes_t b;
    if (big < 0 || !get_bytes(args[0], &b, 0)) {
        PyErr_Clear();  /* not a buffer, not contiguous, another width or byte order */
        DECLINE;
    }
    uint64_t s = sum_maybe_nogil(b.p, b.n, big, block);
    put_bytes(&b);
    return PyLong_FromUnsignedLongLong(csum_reduce(s, width));
}

/* ones_sum(buf, width, byteorder[, name]) -> int, or NotImplemented for arguments it does not sum
 * (name, the caller's argument name, is for the checked function csum.engine pairs this with). */
static PyObject *ones_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs < 3 || nargs > 4 || kwnames != NULL)
        DECLINE;
    return sum_buffer(args, CSUM_BLOCK_BYTES);
}

/* ones_sum_blocked(buf, width, byteorder, block) -> int: as ones_sum with a smaller block (a
 * multiple of 8), so tests can exercise the block-combining step on small inputs. */
static PyObject *ones_sum_blocked(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "ones_sum_blocked(buf, width, byteorder, block)");
        return NULL;
    }
    unsigned long long block = PyLong_AsUnsignedLongLong(args[3]);
    if (block == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    if (block == 0 || block % 8 || block > CSUM_BLOCK_BYTES) {
        PyErr_SetString(PyExc_ValueError, "block");
        return NULL;
    }
    return sum_buffer(args, block);
}

static int get_int64s(PyObject *o, Py_buffer *v, int writable)
{
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (v->itemsize != 8) {
        PyBuffer_Release(v);
        PyErr_SetString(PyExc_TypeError, "offsets, lengths and out must hold 8-byte integers");
        return -1;
    }
    return 0;
}

/* ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> None
 *
 * out[i] = canonical sum of buf[offsets[i] : offsets[i] + lengths[i]]. offsets and lengths are
 * contiguous 8-byte integer buffers (int64), out a writable one (uint64) of the same count.
 * A row outside the buffer raises ValueError (rows before it are filled); the caller
 * (csum/batch.py) validates first and words any error.
 */
static PyObject *ones_sum_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "ones_sum_many(buf, offsets, lengths, out, width, byteorder)");
        return NULL;
    }
    int width = parse_width(args[4]);
    if (width < 0)
        return NULL;
    int big = parse_order(args[5]);
    if (big < 0)
        return NULL;
    Py_buffer buf, offs, lens, out;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (get_int64s(args[1], &offs, 0) < 0)
        goto no_offs;
    if (get_int64s(args[2], &lens, 0) < 0)
        goto no_lens;
    if (get_int64s(args[3], &out, 1) < 0)
        goto no_out;
    Py_ssize_t count = offs.len / 8, bad = -1;
    if (lens.len / 8 != count || out.len / 8 != count) {
        PyErr_SetString(PyExc_ValueError, "offsets, lengths and out must have the same length");
        goto fail;
    }
    const unsigned char *base = buf.buf;
    const int64_t *o = offs.buf, *l = lens.buf;
    uint64_t *r = out.buf, size = (uint64_t)buf.len;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        if (o[i] < 0 || l[i] < 0 || (uint64_t)o[i] > size || (uint64_t)l[i] > size - (uint64_t)o[i]) {
            bad = i;
            break;
        }
        r[i] = csum_ones(base + o[i], (uint64_t)l[i], width, big);
    }
    Py_END_ALLOW_THREADS
    if (bad >= 0)
        PyErr_Format(PyExc_ValueError, "row %zd lies outside buf", bad);
fail:
    PyBuffer_Release(&out);
no_out:
    PyBuffer_Release(&lens);
no_lens:
    PyBuffer_Release(&offs);
no_offs:
    PyBuffer_Release(&buf);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* The RFC 1071 checksum of the call's one argument, buf (csum/core/partial.py internet_checksum: ~ the
 * big-endian 16-bit sum), or -1 where the call is not one C takes. */
static long wire_checksum(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int sig[] = {A_BUF};
    PyObject *a[1];
    bytes_t b;
    if (!bind(args, nargs, kwnames, sig, 1, 1, 1, a) || !get_bytes(a[0], &b, 0))
        return -1;
    uint64_t s = sum_maybe_nogil(b.p, b.n, 1, CSUM_BLOCK_BYTES);
    put_bytes(&b);
    return (long)(csum_reduce(s, 16) ^ M16);
}

/* internet_checksum(buf) -> int. */
static PyObject *internet_checksum(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    long v = wire_checksum(args, nargs, kwnames);
    if (v < 0)
        DECLINE;
    return PyLong_FromLong(v);
}

/* internet_checksum_bytes(buf) -> bytes: the same value as the two bytes of the field, in network order. */
static PyObject *internet_checksum_bytes(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    long v = wire_checksum(args, nargs, kwnames);
    if (v < 0)
        DECLINE;
    char field[2] = {(char)(v >> 8), (char)v};
    return PyBytes_FromStringAndSize(field, 2);
}

/* ---- the shaped helpers: args[0] is the shape (csum.engine.SHAPES), prepended by a FastPath ---------- */

/* partial(shape, buf, seed=0, *, align=0) -> int: csum_partial of that shape (csum/arch/). */
static PyObject *partial(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int sig[] = {A_BUF, A_SEED, A_ALIGN};
    PyObject *a[3];
    uint64_t seed, align;
    int shape;
    bytes_t b;
    if (nargs < 1 || !get_shape(args[0], &shape) || !bind(args + 1, nargs - 1, kwnames, sig, 2, 1, 3, a) ||
        !get_uint(a[1], M32, &seed) || !get_uint(a[2], 7, &align) || !get_bytes(a[0], &b, 0))
        DECLINE;
    uint32_t r;
    if (b.n >= NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        r = csum_shape_partial(shape, b.p, (uint64_t)b.n, (uint32_t)seed, (unsigned)align);
        Py_END_ALLOW_THREADS
    } else {
        r = csum_shape_partial(shape, b.p, (uint64_t)b.n, (uint32_t)seed, (unsigned)align);
    }
    put_bytes(&b);
    return PyLong_FromUnsignedLong(r);
}

/* csum_diff(shape, frm, to, seed=0, *, frm_align=0, to_align=0) -> int: bpf_csum_diff (Linux >= 6.13), and
 * csum_diff_legacy(shape, frm, to, seed=0) -> int: bpf_csum_diff (Linux <= 6.12) for the sizes it accepts (each
 * a multiple of 4, together at most the scratch buffer; the -EINVAL of other sizes is the Python's). One body,
 * so the two forms differ by what the kernel's differ by: the scratch copy. */
static PyObject *diff_helper(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int legacy)
{
    static const int sig[] = {A_FRM, A_TO, A_SEED, A_FRM_ALIGN, A_TO_ALIGN};
    PyObject *a[5];
    uint64_t seed, fa, ta;
    int shape;
    bytes_t f, t;
    if (nargs < 1 || !get_shape(args[0], &shape) || !bind(args + 1, nargs - 1, kwnames, sig, 3, 2, legacy ? 3 : 5, a) ||
        !get_uint(a[2], M32, &seed) || !get_uint(legacy ? NULL : a[3], 7, &fa) ||
        !get_uint(legacy ? NULL : a[4], 7, &ta) || !get_bytes(a[0], &f, 0))
        DECLINE;
    if (!get_bytes(a[1], &t, 0)) {
        put_bytes(&f);
        DECLINE;
    }
    PyObject *r = Py_NotImplemented;
    if (!legacy) {
        uint32_t v;
        if (f.n + t.n >= NOGIL_BYTES) {
            Py_BEGIN_ALLOW_THREADS
            v = csum_diff(shape, f.p, (uint64_t)f.n, t.p, (uint64_t)t.n, (uint32_t)seed, (unsigned)fa, (unsigned)ta);
            Py_END_ALLOW_THREADS
        } else {
            v = csum_diff(shape, f.p, (uint64_t)f.n, t.p, (uint64_t)t.n, (uint32_t)seed, (unsigned)fa, (unsigned)ta);
        }
        r = PyLong_FromUnsignedLong(v);
    } else if (!((f.n | t.n) & 3) && f.n + t.n <= SCRATCH_BYTES) {
        r = PyLong_FromUnsignedLong(csum_diff_legacy(shape, f.p, (uint64_t)f.n, t.p, (uint64_t)t.n, (uint32_t)seed));
    } else {
        Py_INCREF(r);
    }
    put_bytes(&t);
    put_bytes(&f);
    return r;
}

static PyObject *py_csum_diff(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return diff_helper(args, nargs, kwnames, 0);
}

static PyObject *py_csum_diff_legacy(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return diff_helper(args, nargs, kwnames, 1);
}

/* inet_proto_csum_replace16(shape, sum16, frm, to) -> int: net/core/utils.c, frm and to 16 bytes each. */
static PyObject *py_replace16(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int sig[] = {A_SUM16, A_FRM, A_TO};
    PyObject *a[3];
    uint64_t sum16;
    int shape;
    bytes_t f, t;
    if (nargs < 1 || !get_shape(args[0], &shape) || !bind(args + 1, nargs - 1, kwnames, sig, 3, 3, 3, a) ||
        !get_uint(a[0], M16, &sum16) || !get_bytes(a[1], &f, 0))
        DECLINE;
    if (!get_bytes(a[2], &t, 0)) {
        put_bytes(&f);
        DECLINE;
    }
    PyObject *r = Py_NotImplemented;
    if (f.n == 16 && t.n == 16)
        r = PyLong_FromUnsignedLong(inet_proto_csum_replace16(shape, (uint32_t)sum16, f.p, t.p));
    else
        Py_INCREF(r);
    put_bytes(&t);
    put_bytes(&f);
    return r;
}

/* ---- include/net/checksum.h on ints ------------------------------------------------------------- */

/* csum_replace2(sum16, old, new) -> int and csum_replace4(sum16, frm, to) -> int (csum/core/ones.py). */
static PyObject *replace(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const int *sig, uint64_t max,
                         uint32_t (*fn)(uint32_t, uint32_t, uint32_t))
{
    PyObject *a[3];
    uint64_t s, f, t;
    if (!bind(args, nargs, kwnames, sig, 3, 3, 3, a) || !get_uint(a[0], M16, &s) || !get_uint(a[1], max, &f) ||
        !get_uint(a[2], max, &t))
        DECLINE;
    return PyLong_FromUnsignedLong(fn((uint32_t)s, (uint32_t)f, (uint32_t)t));
}

static PyObject *py_csum_replace2(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int sig[] = {A_SUM16, A_OLD, A_NEW};
    return replace(args, nargs, kwnames, sig, M16, csum_replace2);
}

static PyObject *py_csum_replace4(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const int sig[] = {A_SUM16, A_FRM, A_TO};
    return replace(args, nargs, kwnames, sig, M32, csum_replace4);
}

/* ---- bpf_l3/l4_csum_replace (csum/bpf/helpers.py) --------------------------------------------------- */

/* l3_csum_replace(pkt, offset, frm, to, flags) and l4_csum_replace(pkt, offset, frm, to, flags, *,
 * ip_summed=0) -> the helper's return code; pkt patched in place. Declined: any argument the Python checks
 * would refuse (then they raise), and the calls csum/bpf/misuse.py may warn about (then it warns). */
static PyObject *csum_replace_helper(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int l4)
{
    static const int sig[] = {A_PKT, A_OFFSET, A_FRM, A_TO, A_FLAGS, A_IP_SUMMED};
    PyObject *a[6];
    uint64_t offset, f, t, flags, ip_summed;
    bytes_t pkt;
    if (!bind(args, nargs, kwnames, sig, 5, 5, l4 ? 6 : 5, a) || !get_uint(a[1], M32, &offset) ||
        !get_field(a[2], &f) || !get_field(a[3], &t) || !get_uint(a[4], UINT64_MAX, &flags) ||
        !get_uint(l4 ? a[5] : NULL, 3, &ip_summed) || !get_bytes(a[0], &pkt, 1))
        DECLINE;
    long ret;
    int answered = l4 ? csum_l4_replace(pkt.p, (uint64_t)pkt.n, offset, f, t, flags, (int)ip_summed, &ret)
                      : csum_l3_replace(pkt.p, (uint64_t)pkt.n, offset, f, t, flags, &ret);
    put_bytes(&pkt);
    if (!answered)
        DECLINE;
    return PyLong_FromLong(ret);
}

static PyObject *l3_csum_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return csum_replace_helper(args, nargs, kwnames, 0);
}

static PyObject *l4_csum_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return csum_replace_helper(args, nargs, kwnames, 1);
}

/* ---- FastPath ----------------------------------------------------------------------------------- */

/* Whether FastPaths try their C function (set_fast_paths; csum.engine binds it with the engine). */
static int fast_paths_on = 1;

/* set_fast_paths(on) -> bool: every FastPath tries C (true) or goes straight to its Python function; the
 * previous setting. */
static PyObject *set_fast_paths(PyObject *self, PyObject *on)
{
    int value = PyObject_IsTrue(on);
    if (value < 0)
        return NULL;
    PyObject *before = PyBool_FromLong(fast_paths_on);
    fast_paths_on = value;
    return before;
}

/* FastPath(fast, slow[, first]): a callable that returns fast(*args, **kwargs) (fast(first, *args, **kwargs)
 * when first is given: a shape code) unless that is NotImplemented or fast paths are off, else
 * slow(*args, **kwargs). Composed once (csum.engine.fast_path), never changed; it keeps a Python frame off
 * the call floor. Attributes (functools.update_wrapper) live in its __dict__, so inspect.signature and help()
 * show the slow function's. */
typedef struct {
    PyObject_HEAD
    PyObject *fast, *slow, *first, *dict;
    vectorcallfunc vectorcall;
    /* fast's C function when it is one of this module's METH_FASTCALL | METH_KEYWORDS functions: called
     * directly, without the generic call's dispatch (NULL: through PyObject_Vectorcall). */
    _PyCFunctionFastWithKeywords cfunc;
} FastPath;

/* Room for the arguments of a call made with first prepended, when the caller left no slot before args. */
#define FIRST_STACK 8

static inline PyObject *fast_call(FastPath *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (f->cfunc != NULL)
        return f->cfunc(PyCFunction_GET_SELF(f->fast), args, nargs, kwnames);
    return PyObject_Vectorcall(f->fast, args, (size_t)nargs, kwnames);
}

static PyObject *call_fast(FastPath *f, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (f->first == NULL)
        return fast_call(f, args, nargs, kwnames);
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *r;
    if (nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET) {  /* the caller lets args[-1] be used for this */
        PyObject **slot = (PyObject **)args - 1, *saved = *slot;
        *slot = f->first;
        r = fast_call(f, slot, nargs + 1, kwnames);
        *slot = saved;
        return r;
    }
    if (total >= FIRST_STACK)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *stack[FIRST_STACK];
    stack[0] = f->first;
    memcpy(stack + 1, args, (size_t)total * sizeof(PyObject *));
    return fast_call(f, stack, nargs + 1, kwnames);
}

static PyObject *fastpath_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastPath *f = (FastPath *)self;
    if (fast_paths_on) {
        PyObject *r = call_fast(f, args, nargsf, kwnames);
        if (r != Py_NotImplemented)
            return r;
        Py_DECREF(r);
    }
    return PyObject_Vectorcall(f->slow, args, nargsf, kwnames);
}

static PyObject *fastpath_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fast, *slow, *first = NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "FastPath(fast, slow[, first])");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "FastPath", 2, 3, &fast, &slow, &first))
        return NULL;
    if (!PyCallable_Check(fast) || !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "FastPath(fast, slow[, first]): fast and slow must be callable");
        return NULL;
    }
    FastPath *f = (FastPath *)type->tp_alloc(type, 0);
    if (f == NULL)
        return NULL;
    f->fast = Py_NewRef(fast);
    f->slow = Py_NewRef(slow);
    f->first = Py_XNewRef(first);
    f->vectorcall = fastpath_vectorcall;
    if (PyCFunction_Check(fast) && PyCFunction_GET_FLAGS(fast) == (METH_FASTCALL | METH_KEYWORDS) &&
        PyCFunction_GET_SELF(fast) == module_object)
        f->cfunc = (_PyCFunctionFastWithKeywords)(void (*)(void))PyCFunction_GET_FUNCTION(fast);
    return (PyObject *)f;
}

static int fastpath_traverse(FastPath *f, visitproc visit, void *arg)
{
    Py_VISIT(f->fast);
    Py_VISIT(f->slow);
    Py_VISIT(f->first);
    Py_VISIT(f->dict);
    return 0;
}

static int fastpath_clear(FastPath *f)
{
    Py_CLEAR(f->fast);
    Py_CLEAR(f->slow);
    Py_CLEAR(f->first);
    Py_CLEAR(f->dict);
    return 0;
}

static void fastpath_dealloc(FastPath *f)
{
    PyObject_GC_UnTrack(f);
    fastpath_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static PyObject *fastpath_get(PyObject *self, PyObject *obj, PyObject *type)
{
    Py_INCREF(self);  /* like a builtin function: no binding when stored on a class */
    return self;
}

static PyMemberDef fastpath_members[] = {
    {"fast", T_OBJECT, offsetof(FastPath, fast), READONLY, "the C function tried first"},
    {"slow", T_OBJECT, offsetof(FastPath, slow), READONLY, "the checked function run when fast declines"},
    {"first", T_OBJECT, offsetof(FastPath, first), READONLY, "the argument put before the call's (None: none)"},
    {NULL},
};

/* Pickled by reference, like the function it stands for (its __module__ and __qualname__). */
static PyObject *fastpath_reduce(PyObject *self, PyObject *unused)
{
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef fastpath_methods[] = {
    {"__reduce__", fastpath_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyGetSetDef fastpath_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict},
    {NULL},
};

static PyTypeObject FastPathType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "csum.engine._speedups.FastPath",
    .tp_basicsize = sizeof(FastPath),
    .tp_dealloc = (destructor)fastpath_dealloc,
    .tp_vectorcall_offset = offsetof(FastPath, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "FastPath(fast, slow[, first]): fast([first, ]*args, **kwargs) unless NotImplemented, "
              "else slow(*args, **kwargs).",
    .tp_traverse = (traverseproc)fastpath_traverse,
    .tp_clear = (inquiry)fastpath_clear,
    .tp_members = fastpath_members,
    .tp_getset = fastpath_getset,
    .tp_methods = fastpath_methods,
    .tp_descr_get = fastpath_get,
    .tp_dictoffset = offsetof(FastPath, dict),
    .tp_new = fastpath_new,
};

#define FAST(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc}

static PyMethodDef methods[] = {
    FAST("ones_sum", ones_sum, "ones_sum(buf, width, byteorder[, name]) -> canonical one's-complement sum, or NotImplemented."),
    {"ones_sum_blocked", (PyCFunction)(void (*)(void))ones_sum_blocked, METH_FASTCALL,
     "ones_sum_blocked(buf, width, byteorder, block) -> ones_sum with a smaller block size (tests)."},
    {"ones_sum_many", (PyCFunction)(void (*)(void))ones_sum_many, METH_FASTCALL,
     "ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> None: each row's sum into out."},
    FAST("internet_checksum", internet_checksum, "internet_checksum(buf) -> int, or NotImplemented."),
    FAST("internet_checksum_bytes", internet_checksum_bytes, "internet_checksum_bytes(buf) -> bytes, or NotImplemented."),
    FAST("partial", partial, "partial(shape, buf, seed=0, *, align=0) -> csum_partial of that shape, or NotImplemented."),
    FAST("csum_diff", py_csum_diff,
         "csum_diff(shape, frm, to, seed=0, *, frm_align=0, to_align=0) -> bpf_csum_diff (>= 6.13), or NotImplemented."),
    FAST("csum_diff_legacy", py_csum_diff_legacy,
         "csum_diff_legacy(shape, frm, to, seed=0) -> bpf_csum_diff (<= 6.12), or NotImplemented."),
    FAST("inet_proto_csum_replace16", py_replace16,
         "inet_proto_csum_replace16(shape, sum16, frm, to) -> int, or NotImplemented."),
    FAST("csum_replace2", py_csum_replace2, "csum_replace2(sum16, old, new) -> int, or NotImplemented."),
    FAST("csum_replace4", py_csum_replace4, "csum_replace4(sum16, frm, to) -> int, or NotImplemented."),
    FAST("l3_csum_replace", l3_csum_replace,
         "l3_csum_replace(pkt, offset, frm, to, flags) -> return code (pkt patched), or NotImplemented."),
    FAST("l4_csum_replace", l4_csum_replace,
         "l4_csum_replace(pkt, offset, frm, to, flags, *, ip_summed=0) -> return code (pkt patched), or NotImplemented."),
    {"set_fast_paths", set_fast_paths, METH_O,
     "set_fast_paths(on) -> bool: whether every FastPath tries its C function; the previous setting."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "csum.engine._speedups",
    "C accelerator for csum.engine: sums bytes and does one's-complement arithmetic, nothing else.", -1, methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    str_little = PyUnicode_InternFromString("little");
    str_big = PyUnicode_InternFromString("big");
    if (str_little == NULL || str_big == NULL)
        return NULL;
    for (int i = 0; i < N_NAMES; i++)
        if ((names[i] = PyUnicode_InternFromString(name_text[i])) == NULL)
            return NULL;
    PyObject *shapes = PyTuple_New(N_SHAPES);
    if (shapes == NULL)
        return NULL;
    for (int i = 0; i < N_SHAPES; i++) {
        PyObject *name = PyUnicode_FromString(csum_shape_names[i]);
        if (name == NULL) {
            Py_DECREF(shapes);
            return NULL;
        }
        PyTuple_SET_ITEM(shapes, i, name);
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL || PyModule_AddObjectRef(m, "SHAPES", shapes) < 0) {
        Py_DECREF(shapes);
        Py_XDECREF(m);
        return NULL;
    }
    Py_DECREF(shapes);
    module_object = m;
    if (PyType_Ready(&FastPathType) < 0 || PyModule_AddObjectRef(m, "FastPath", (PyObject *)&FastPathType) < 0 ||
        PyModule_AddIntConstant(m, "BLOCK_BYTES_LOG2", CSUM_BLOCK_BYTES_LOG2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
