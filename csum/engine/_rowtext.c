/*
 * format_rows() of csum.engine._cwalk: rows (_rows.h) as JSON Lines or CSV text, for csum verify --format jsonl / csv
 * (csum/capture/rowtext.py, which also holds the pure-Python twin this must equal: tests/capture/test_rows.py and the
 * rowtext fuzz target), with the columns the caller chooses (--fields) and a file column (several inputs, Parquet).
 *
 * No protocol facts and no names are written here: the protocol, path, reason, status and file texts come from the
 * caller, already encoded for the format (JSON strings with their quotes, CSV fields quoted where they need it).
 * Numbers are written as json.dumps writes them; addresses as Python's ipaddress writes them (IPv6 in RFC 5952's
 * compressed form: the longest run of two or more zero groups, the first of equal ones, becomes "::").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_rows.h"

static char *put(char *p, const char *s, Py_ssize_t n)
{
    memcpy(p, s, (size_t)n);
    return p + n;
}

#define PUT(p, literal) put(p, literal, (Py_ssize_t)sizeof(literal) - 1)

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

static const char HEX[] = "0123456789abcdef";

/* 0x%04x */
static char *put_hex16(char *p, unsigned v)
{
    *p++ = '0';
    *p++ = 'x';
    for (int shift = 12; shift >= 0; shift -= 4)
        *p++ = HEX[(v >> shift) & 15];
    return p;
}

/* %x: no leading zeros */
static char *put_hex(char *p, unsigned v)
{
    int shift = 12;
    while (shift > 0 && !((v >> shift) & 15))
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        *p++ = HEX[(v >> shift) & 15];
    return p;
}

/* seconds.nanoseconds, nine digits (tshark's frame.time_epoch) */
static char *put_time(char *p, int64_t t)
{
    int64_t sec = t / 1000000000, ns = t % 1000000000;
    if (ns < 0)
        sec -= 1, ns += 1000000000;
    p = put_i64(p, sec);
    *p++ = '.';
    for (int64_t unit = 100000000; unit; unit /= 10)
        *p++ = (char)('0' + (ns / unit) % 10);
    return p;
}

static char *put_address(char *p, int version, const uint8_t *a)
{
    if (version == 4) {
        for (int k = 0; k < 4; k++) {
            if (k)
                *p++ = '.';
            p = put_u64(p, a[k]);
        }
        return p;
    }
    unsigned g[8];
    int best = -1, best_len = 0;
    for (int k = 0; k < 8; k++)
        g[k] = ((unsigned)a[2 * k] << 8) | a[2 * k + 1];
    for (int k = 0; k < 8;) {
        int j = k;
        while (j < 8 && g[j] == 0)
            j++;
        if (j - k > best_len)
            best = k, best_len = j - k;
        k = j > k ? j : k + 1;
    }
    if (best_len < 2)
        best = -1;
    for (int k = 0; k < 8; k++) {
        if (k == best) {
            *p++ = ':';
            if (k == 0)
                *p++ = ':';
            k += best_len - 1;
            continue;
        }
        p = put_hex(p, g[k]);
        if (k < 7)
            *p++ = ':';
    }
    return p;
}

/* The bytes of item k of a list of bytes, checked. */
static int text(PyObject *list, Py_ssize_t k, const char **s, Py_ssize_t *n)
{
    if (k < 0 || k >= PyList_GET_SIZE(list)) {
        PyErr_Format(PyExc_ValueError, "format_rows: name index %zd out of range", k);
        return -1;
    }
    PyObject *item = PyList_GET_ITEM(list, k);
    if (!PyBytes_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "format_rows: names must be bytes");
        return -1;
    }
    *s = PyBytes_AS_STRING(item);
    *n = PyBytes_GET_SIZE(item);
    return 0;
}

static Py_ssize_t longest(PyObject *list)
{
    Py_ssize_t most = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); k++) {
        PyObject *item = PyList_GET_ITEM(list, k);
        if (PyBytes_Check(item) && PyBytes_GET_SIZE(item) > most)
            most = PyBytes_GET_SIZE(item);
    }
    return most;
}

#define NAME(list, k)                            \
    do {                                         \
        const char *s_;                          \
        Py_ssize_t n_;                           \
        if (text(list, k, &s_, &n_) < 0)         \
            goto fail;                           \
        p = put(p, s_, n_);                      \
    } while (0)

/* The columns a line may hold, in the order of csum.capture.rowtext.ALL_COLUMNS; the first five are the packet's
 * (the same for each of its fields). */
enum { COL_FILE, COL_FRAME, COL_TIME, COL_SRC, COL_DST, COL_PROTOCOL, COL_PATH, COL_DEPTH, COL_OFFSET, COL_STORED,
       COL_COMPUTED, COL_STATUS, COL_REASON, COL_COUNT };
#define PACKET_COLUMN(c) ((c) <= COL_DST)

/* format_rows(rows, csv, names, reasons, statuses, file, columns) -> bytes: one line per row (row_t, _rows.h), JSON
 * objects of the columns named by the bytes ``columns`` (ids of the enum above, each at most once, in the order
 * given) or, with csv, those values comma-separated (a missing one empty). names, reasons, statuses: lists of bytes,
 * the texts of the rows' layer and path, reason and status indexes; file: the file column's text (bytes, encoded for
 * the format), or None when ``columns`` has no file column. */
PyObject *format_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_Check(args[2]) || !PyList_Check(args[3]) || !PyList_Check(args[4]) ||
        !(args[5] == Py_None || PyBytes_Check(args[5])) || !PyBytes_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "format_rows(rows, csv, names, reasons, statuses, file, columns): names are "
                        "lists, file bytes or None, columns bytes");
        return NULL;
    }
    int csv = PyObject_IsTrue(args[1]);
    if (csv < 0)
        return NULL;
    PyObject *names = args[2], *reasons = args[3], *statuses = args[4];
    const unsigned char *given = (const unsigned char *)PyBytes_AS_STRING(args[6]);
    Py_ssize_t ncolumns = PyBytes_GET_SIZE(args[6]), lead = 0;
    unsigned char columns[COL_COUNT];  /* a copy the text written cannot alias: kept in registers */
    int seen[COL_COUNT] = {0};
    for (Py_ssize_t j = 0; j < ncolumns; j++) {
        if (j >= COL_COUNT || given[j] >= COL_COUNT || seen[given[j]]++ ||
            (given[j] == COL_FILE && args[5] == Py_None)) {
            PyErr_SetString(PyExc_ValueError, "format_rows: columns must be distinct column ids (file needs a file)");
            return NULL;
        }
        columns[j] = given[j];
    }
    while (lead < ncolumns && PACKET_COLUMN(columns[lead]))
        lead++;
    const char *file = args[5] == Py_None ? "" : PyBytes_AS_STRING(args[5]);
    Py_ssize_t file_len = args[5] == Py_None ? 0 : PyBytes_GET_SIZE(args[5]);
    Py_buffer v;
    if (PyObject_GetBuffer(args[0], &v, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *out = NULL;
    if (v.itemsize != (Py_ssize_t)sizeof(row_t) || v.len % (Py_ssize_t)sizeof(row_t)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: rows must be row_t records");
        PyBuffer_Release(&v);
        return NULL;
    }
    Py_ssize_t n = v.len / (Py_ssize_t)sizeof(row_t);
    Py_ssize_t line = 330 + 2 * longest(names) + longest(reasons) + longest(statuses);
    if (file_len > PY_SSIZE_T_MAX - line || (n && n > PY_SSIZE_T_MAX / (line + file_len))) {
        PyErr_NoMemory();
        PyBuffer_Release(&v);
        return NULL;
    }
    line += file_len;
    out = PyBytes_FromStringAndSize(NULL, n * line);
    if (out == NULL) {
        PyBuffer_Release(&v);
        return NULL;
    }
    char *start = PyBytes_AS_STRING(out), *p = start;
    const row_t *rows = v.buf;
#define NULL_VALUE() (csv ? p : PUT(p, "null"))
    const char *last = NULL;  /* the line before, and how long its packet's columns (and the separator after) are */
    Py_ssize_t shared = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const row_t *r = rows + i, *q = r - 1;
        Py_ssize_t j = 0;
        if (last != NULL && lead && r->frame == q->frame && r->time == q->time && r->ipver == q->ipver &&
            !memcmp(r->src, q->src, sizeof r->src) && !memcmp(r->dst, q->dst, sizeof r->dst)) {
            memmove(p, last, (size_t)shared);  /* the same packet's next field: the same start */
            last = p;
            p += shared;
            j = lead;
        } else {
            last = p;
            if (!csv)
                *p++ = '{';
        }
        for (; j < ncolumns; j++) {
            if (j == lead)
                shared = p - last;  /* the packet's columns and the separator after them */
            int c = columns[j];
#define KEY(name)                               \
    if (!csv)                                   \
        p = PUT(p, "\"" name "\": ")  /* a constant length: inlined */
            switch (c) {
            case COL_FILE:
                KEY("file");
                p = put(p, file, file_len);
                break;
            case COL_FRAME:
                KEY("frame");
                p = put_i64(p, r->frame);
                break;
            case COL_TIME:
                KEY("time");
                p = r->time == INT64_MIN ? NULL_VALUE() : put_time(p, r->time);
                break;
            case COL_SRC:
            case COL_DST:
                if (c == COL_SRC) {
                    KEY("src");
                } else {
                    KEY("dst");
                }
                if (r->ipver != 4 && r->ipver != 6) {
                    p = NULL_VALUE();
                    break;
                }
                if (!csv)
                    *p++ = '"';
                p = put_address(p, r->ipver, c == COL_DST ? r->dst : r->src);
                if (!csv)
                    *p++ = '"';
                break;
            case COL_PROTOCOL:
                KEY("protocol");
                NAME(names, r->layer);
                break;
            case COL_PATH:
                KEY("path");
                NAME(names, r->path);
                break;
            case COL_DEPTH:
                KEY("depth");
                p = put_u64(p, r->depth);
                break;
            case COL_OFFSET:
                KEY("offset");
                p = r->field < 0 ? NULL_VALUE() : put_i64(p, r->field);
                break;
            case COL_STORED:
            case COL_COMPUTED: {
                if (c == COL_STORED) {
                    KEY("stored");
                } else {
                    KEY("computed");
                }
                int32_t value = c == COL_STORED ? r->stored : r->computed;
                if (value < 0) {
                    p = NULL_VALUE();
                    break;
                }
                if (!csv)
                    *p++ = '"';
                p = put_hex16(p, (unsigned)value);
                if (!csv)
                    *p++ = '"';
                break;
            }
            case COL_STATUS:
                KEY("status");
                NAME(statuses, r->status);
                break;
            default:
                KEY("reason");
                NAME(reasons, r->reason);
                break;
            }
#undef KEY
            if (j + 1 < ncolumns) {
                *p++ = ',';
                if (!csv)
                    *p++ = ' ';
            }
        }
        if (lead == ncolumns)
            shared = p - last;
        if (csv && p == last)
            p = PUT(p, "\"\"");  /* one empty value: "" (as Python's csv module writes it), not an empty line */
        if (!csv)
            *p++ = '}';
        *p++ = '\n';
    }
#undef NULL_VALUE
    PyBuffer_Release(&v);
    if (_PyBytes_Resize(&out, p - start) < 0)
        return NULL;
    return out;
fail:
    PyBuffer_Release(&v);
    Py_DECREF(out);
    return NULL;
}
