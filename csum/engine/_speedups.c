/*
 * csum.engine._speedups: the optional C accelerator of csum's summing engine (csum/engine/__init__.py).
 *
 * It only sums bytes: the canonical one's-complement sum of a buffer read as
 * 8/16/32/64-bit words in a given byte order (RFC 1071 section 2, the
 * primitive under every kernel csum_partial that csum models). There is no
 * profile logic, no call back into Python and no module state. ones_sum returns
 * NotImplemented for arguments it does not take (an object that is not a
 * C-contiguous buffer, another width, another byte order): csum/engine/__init__.py then
 * runs its checks, which raise csum's errors. ones_sum_many, whose caller checks
 * first, raises Python's own TypeError/ValueError instead.
 * csum/engine/native.py holds the pure-Python twins of both functions, and
 * csum/engine/_speedups.pyi their signatures.
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
#include <structmember.h>
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

static PyObject *str_little, *str_big;

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

/* Canonical sum of args[0] (a C-contiguous buffer) in words of args[1] bits, byte order args[2];
 * NotImplemented, with no error set, for arguments of any other kind. */
static PyObject *sum_buffer(PyObject *const *args, uint64_t block)
{
    int width = parse_width(args[1]);
    int big = width < 0 ? -1 : parse_order(args[2]);
    Py_buffer view;
    if (big < 0 || PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();  /* not a buffer, not contiguous, another width or byte order */
        Py_RETURN_NOTIMPLEMENTED;
    }
    uint64_t s;
    if (view.len >= NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        s = sum64(view.buf, (uint64_t)view.len, big, block);
        Py_END_ALLOW_THREADS
    } else {
        s = sum64(view.buf, (uint64_t)view.len, big, block);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(reduce(s, width));
}

/* ones_sum(buf, width, byteorder[, name]) -> int, or NotImplemented for arguments it does not sum
 * (name, the caller's argument name, is for the checked function csum.engine pairs this with). */
static PyObject *ones_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 3 || nargs > 4)
        Py_RETURN_NOTIMPLEMENTED;
    return sum_buffer(args, BLOCK_BYTES);
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
    if (block == 0 || block % 8 || block > BLOCK_BYTES) {
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
        r[i] = reduce(sum64(base + o[i], (uint64_t)l[i], big, BLOCK_BYTES), width);
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

/* partial16le(buf, seed=0, *, align=0) -> int, or NotImplemented
 *
 * lib/checksum.c csum_partial on a little-endian CPU, for the arguments that cannot fail a
 * check: buf a C-contiguous buffer, seed an int in 0..0xffffffff, align an int in 0..7 (which
 * cannot change the generic sum). The canonical 16-bit little-endian sum plus seed, end-around
 * in 32 bits. Anything else returns NotImplemented (no error, no message): the caller
 * (a FastPath, below) then runs the checked Python function.
 */
static PyObject *partial16le(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs < 1 || nargs > 2 || nkw > 1)
        Py_RETURN_NOTIMPLEMENTED;
    uint64_t seed = 0;
    if (nargs == 2) {
        if (!PyLong_CheckExact(args[1]))
            Py_RETURN_NOTIMPLEMENTED;
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(args[1], &overflow);
        if (overflow || v < 0 || v > 0xffffffffLL)
            Py_RETURN_NOTIMPLEMENTED;
        seed = (uint64_t)v;
    }
    if (nkw == 1) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, 0), *align = args[nargs];
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "align") != 0 ||
            !PyLong_CheckExact(align))
            Py_RETURN_NOTIMPLEMENTED;
        int overflow;
        long a = PyLong_AsLongAndOverflow(align, &overflow);
        if (overflow || a < 0 || a > 7)
            Py_RETURN_NOTIMPLEMENTED;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    uint64_t s;
    if (view.len >= NOGIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        s = sum64(view.buf, (uint64_t)view.len, 0, BLOCK_BYTES);
        Py_END_ALLOW_THREADS
    } else {
        s = sum64(view.buf, (uint64_t)view.len, 0, BLOCK_BYTES);
    }
    PyBuffer_Release(&view);
    uint64_t r = reduce(s, 16) + seed;
    return PyLong_FromUnsignedLongLong((r & 0xffffffffu) + (r >> 32));
}

/* FastPath(fast, slow): a callable that returns fast(*args, **kwargs) unless that is
 * NotImplemented, else slow(*args, **kwargs). Composed once at import (csum/core/partial.py), never
 * changed; it keeps a Python frame off the call floor. Attributes (functools.update_wrapper)
 * live in its __dict__, so inspect.signature and help() show the slow function's. */
typedef struct {
    PyObject_HEAD
    PyObject *fast, *slow, *dict;
    vectorcallfunc vectorcall;
} FastPath;

static PyObject *fastpath_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastPath *f = (FastPath *)self;
    PyObject *r = PyObject_Vectorcall(f->fast, args, nargsf, kwnames);
    if (r != Py_NotImplemented)
        return r;
    Py_DECREF(r);
    return PyObject_Vectorcall(f->slow, args, nargsf, kwnames);
}

static PyObject *fastpath_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fast, *slow;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "FastPath(fast, slow)");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "FastPath", 2, 2, &fast, &slow))
        return NULL;
    if (!PyCallable_Check(fast) || !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "FastPath(fast, slow): both must be callable");
        return NULL;
    }
    FastPath *f = (FastPath *)type->tp_alloc(type, 0);
    if (f == NULL)
        return NULL;
    Py_INCREF(fast);
    Py_INCREF(slow);
    f->fast = fast;
    f->slow = slow;
    f->vectorcall = fastpath_vectorcall;
    return (PyObject *)f;
}

static int fastpath_traverse(FastPath *f, visitproc visit, void *arg)
{
    Py_VISIT(f->fast);
    Py_VISIT(f->slow);
    Py_VISIT(f->dict);
    return 0;
}

static int fastpath_clear(FastPath *f)
{
    Py_CLEAR(f->fast);
    Py_CLEAR(f->slow);
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
    .tp_doc = "FastPath(fast, slow): fast(*args, **kwargs) unless NotImplemented, else slow(*args, **kwargs).",
    .tp_traverse = (traverseproc)fastpath_traverse,
    .tp_clear = (inquiry)fastpath_clear,
    .tp_members = fastpath_members,
    .tp_getset = fastpath_getset,
    .tp_methods = fastpath_methods,
    .tp_descr_get = fastpath_get,
    .tp_dictoffset = offsetof(FastPath, dict),
    .tp_new = fastpath_new,
};

static PyMethodDef methods[] = {
    {"ones_sum", (PyCFunction)(void (*)(void))ones_sum, METH_FASTCALL,
     "ones_sum(buf, width, byteorder[, name]) -> canonical one's-complement sum, or NotImplemented."},
    {"ones_sum_blocked", (PyCFunction)(void (*)(void))ones_sum_blocked, METH_FASTCALL,
     "ones_sum_blocked(buf, width, byteorder, block) -> ones_sum with a smaller block size (tests)."},
    {"ones_sum_many", (PyCFunction)(void (*)(void))ones_sum_many, METH_FASTCALL,
     "ones_sum_many(buf, offsets, lengths, out, width, byteorder) -> None: each row's sum into out."},
    {"partial16le", (PyCFunction)(void (*)(void))partial16le, METH_FASTCALL | METH_KEYWORDS,
     "partial16le(buf, seed=0, *, align=0) -> generic csum_partial (little-endian), or NotImplemented."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "csum.engine._speedups", "C accelerator for csum.engine: sums bytes, nothing else.", -1,
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
    if (PyType_Ready(&FastPathType) < 0 || PyModule_AddObjectRef(m, "FastPath", (PyObject *)&FastPathType) < 0 ||
        PyModule_AddIntConstant(m, "BLOCK_BYTES_LOG2", 34) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
