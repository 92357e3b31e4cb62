/*
 * csum._speedups: the optional C accelerator of csum's summing engine (csum/_engine.py).
 *
 * It only sums bytes: the canonical one's-complement sum of a buffer read as
 * 8/16/32/64-bit words in a given byte order (RFC 1071 section 2, the
 * primitive under every kernel csum_partial that csum models). There is no
 * profile logic and there are no messages here: whatever this file does not
 * handle (an object that is not a C-contiguous buffer, another width, another
 * byte order) is handed to the pure-Python engine registered with
 * set_fallback(), which validates, raises csum's errors and computes.
 *
 * Arithmetic. A buffer is read as 64-bit words w (little-endian: the bytes as
 * stored; big-endian: byte-reversed), the last one zero-padded at its
 * high-address end. Each w is split into hi = w >> 32 and lo = w & 0xffffffff
 * and the two halves are added, without carries, into two 64-bit accumulators.
 *
 * Bound (why the accumulators cannot overflow): a block holds at most
 * BLOCK_BYTES = 2**34 bytes, i.e. at most 2**31 words, so each accumulator
 * ends the block at most 2**31 * (2**32 - 1) < 2**63 < 2**64. Buffers larger
 * than a block (more than 16 GiB) are summed block by block.
 *
 * Each block's exact integer sum is T = lo_sum + hi_sum * 2**32. It is added
 * into a running 64-bit end-around-carry sum S (mod 2**64 - 1, where 2**64 = 1):
 * hi_sum * 2**32 is congruent to hi_sum rotated left by 32 bits, because a
 * rotation by k bits is a multiplication by 2**k mod 2**64 - 1. An end-around
 * add of two values is 0 only when both are 0 (a + b = 2**64 wraps to 0 and
 * the carry makes it 1), and rotations keep 0 and non-0 apart, so S is the
 * canonical 64-bit sum: 0 only for an all-zero buffer, else 1..2**64-1.
 * Every width w in {8, 16, 32} divides 64, so 2**w - 1 divides 2**64 - 1 and
 * the canonical w-bit sum is (S - 1) % (2**w - 1) + 1 for S != 0, and 0 for S == 0.
 * Reading the whole buffer as one integer N gives N mod (2**w - 1) the same
 * way, which is what the pure-Python engine computes: the two agree exactly.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define BLOCK_BYTES ((uint64_t)1 << 34)
/* Release the GIL for buffers at least this large. */
#define NOGIL_BYTES ((Py_ssize_t)1 << 16)

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__)) && __GNUC__ >= 6
#define CSUM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CSUM_CLONES
#endif

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

#if PY_BIG_ENDIAN
#define AS_LE(w) __builtin_bswap64(w)
#define AS_BE(w) (w)
#else
#define AS_LE(w) (w)
#define AS_BE(w) __builtin_bswap64(w)
#endif

/* Sums of the low and high 32-bit halves of n / 8 whole 64-bit words (n <= BLOCK_BYTES). */
CSUM_CLONES static void lanes_le(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = 0, b = 0;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = AS_LE(load64(p + 8 * i));
        a += w & 0xffffffffu;
        b += w >> 32;
    }
    *lo = a;
    *hi = b;
}

CSUM_CLONES static void lanes_be(const unsigned char *p, uint64_t nwords, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = 0, b = 0;
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t w = AS_BE(load64(p + 8 * i));
        a += w & 0xffffffffu;
        b += w >> 32;
    }
    *lo = a;
    *hi = b;
}

static inline uint64_t add_ea64(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r + (r < a);
}

static inline uint64_t rot32(uint64_t x)
{
    return (x << 32) | (x >> 32);
}

/* Canonical 64-bit one's-complement sum of p[0:n] as 64-bit words, `block` bytes per block. */
static uint64_t sum64(const unsigned char *p, uint64_t n, int big, uint64_t block)
{
    uint64_t s = 0, lo, hi;
    uint64_t whole = n & ~(uint64_t)7;
    for (uint64_t done = 0; done < whole;) {
        uint64_t len = whole - done < block ? whole - done : block;
        if (big)
            lanes_be(p + done, len / 8, &lo, &hi);
        else
            lanes_le(p + done, len / 8, &lo, &hi);
        s = add_ea64(add_ea64(s, lo), rot32(hi));
        done += len;
    }
    if (n & 7) {
        unsigned char tail[8] = {0};
        memcpy(tail, p + whole, (size_t)(n & 7));
        uint64_t w = big ? AS_BE(load64(tail)) : AS_LE(load64(tail));
        s = add_ea64(s, w);
    }
    return s;
}

static inline uint64_t reduce(uint64_t s, int width)
{
    if (width == 64 || s == 0)
        return s;
    uint64_t m = ((uint64_t)1 << width) - 1;
    return (s - 1) % m + 1;
}

static PyObject *fallback;     /* pure-Python ones_sum(view, width, byteorder, name) */
static int forced;             /* 1: hand every call to the fallback (engine selection, tests) */
static PyObject *str_little, *str_big;

/* 0 little, 1 big, -1 anything else. */
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
    return -1;
}

/* 8, 16, 32 or 64; -1 for anything else (no error set). */
static int parse_width(PyObject *o)
{
    if (!PyLong_CheckExact(o))
        return -1;
    int overflow;
    long v = PyLong_AsLongAndOverflow(o, &overflow);
    if (overflow || (v != 8 && v != 16 && v != 32 && v != 64))
        return -1;
    return (int)v;
}

static PyObject *delegate(PyObject *const *args, Py_ssize_t nargs)
{
    if (fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "csum._speedups: no fallback registered");
        return NULL;
    }
    return PyObject_Vectorcall(fallback, args, (size_t)nargs, NULL);
}

/* ones_sum(buf, width, byteorder[, name]) -> int */
static PyObject *ones_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (forced || nargs < 3 || nargs > 4)
        return delegate(args, nargs);
    int width = parse_width(args[1]);
    int big = parse_order(args[2]);
    if (width < 0 || big < 0)
        return delegate(args, nargs);
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return delegate(args, nargs);
    }
    uint64_t s;
    if (view.len >= NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        s = sum64(view.buf, (uint64_t)view.len, big, BLOCK_BYTES);
        Py_END_ALLOW_THREADS
    } else {
        s = sum64(view.buf, (uint64_t)view.len, big, BLOCK_BYTES);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(reduce(s, width));
}

/* ones_sum_blocked(buf, width, byteorder, block) -> int: as ones_sum with a smaller block (a
 * multiple of 8), so tests can exercise the block-combining step on small inputs. */
static PyObject *ones_sum_blocked(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4)
        return delegate(args, nargs < 3 ? nargs : 3);
    int width = parse_width(args[1]);
    int big = parse_order(args[2]);
    unsigned long long block = PyLong_AsUnsignedLongLong(args[3]);
    if (block == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    if (width < 0 || big < 0 || block == 0 || block % 8 || block > BLOCK_BYTES)
        return delegate(args, 3);
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return delegate(args, 3);
    }
    uint64_t s = sum64(view.buf, (uint64_t)view.len, big, block);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(reduce(s, width));
}

static int get_int64s(PyObject *o, Py_buffer *v, int writable)
{
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (v->itemsize != 8) {
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> int
 *
 * out[i] = canonical sum of buf[offsets[i] : offsets[i] + lengths[i]]. offsets and lengths are
 * contiguous 8-byte integer buffers (int64), out a writable one (uint64) of the same count.
 * Returns -1 when every row was summed, else the index of the first row outside the buffer
 * (rows before it are filled); returns None, with nothing written, when the arguments are not of
 * that form. The caller (csum/batch.py) validates first and words any error.
 */
static PyObject *ones_sum_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6)
        Py_RETURN_NONE;
    int width = parse_width(args[4]);
    int big = parse_order(args[5]);
    if (width < 0 || big < 0)
        Py_RETURN_NONE;
    Py_buffer buf, offs, lens, out;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (get_int64s(args[1], &offs, 0) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    if (get_int64s(args[2], &lens, 0) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&offs);
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    if (get_int64s(args[3], &out, 1) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&lens);
        PyBuffer_Release(&offs);
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    Py_ssize_t count = offs.len / 8, bad = -1;
    if (lens.len / 8 != count || out.len / 8 != count) {
        PyBuffer_Release(&out);
        PyBuffer_Release(&lens);
        PyBuffer_Release(&offs);
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
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
        r[i] = reduce(sum64(base + o[i], (uint64_t)l[i], big, BLOCK_BYTES), width);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&out);
    PyBuffer_Release(&lens);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(bad);
}

/* set_fallback(fn, forced) -> None: register the pure-Python engine; forced=True sends every call to it. */
static PyObject *set_fallback(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_fallback(fn, forced)");
        return NULL;
    }
    int f = PyObject_IsTrue(args[1]);
    if (f < 0)
        return NULL;
    Py_INCREF(args[0]);
    Py_XSETREF(fallback, args[0]);
    forced = f;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"ones_sum", (PyCFunction)(void (*)(void))ones_sum, METH_FASTCALL,
     "ones_sum(buf, width, byteorder[, name]) -> canonical one's-complement sum (see csum._engine)."},
    {"ones_sum_blocked", (PyCFunction)(void (*)(void))ones_sum_blocked, METH_FASTCALL,
     "ones_sum_blocked(buf, width, byteorder, block) -> ones_sum with a smaller block size (tests)."},
    {"ones_sum_many", (PyCFunction)(void (*)(void))ones_sum_many, METH_FASTCALL,
     "ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> -1 or first bad row; None if unusable."},
    {"set_fallback", (PyCFunction)(void (*)(void))set_fallback, METH_FASTCALL,
     "set_fallback(fn, forced) -> None: the pure-Python engine for what C does not handle."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "csum._speedups", "C accelerator for csum._engine: sums bytes, nothing else.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    str_little = PyUnicode_InternFromString("little");
    str_big = PyUnicode_InternFromString("big");
    if (str_little == NULL || str_big == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "BLOCK_BYTES_LOG2", 34) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
