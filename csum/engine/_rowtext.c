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

/* The columns a line may hold, in the order of csum.capture.rowtext.ALL_COLUMNS; the first five are the packet's
 * (the same for each of its fields). */
enum { COL_FILE, COL_FRAME, COL_TIME, COL_SRC, COL_DST, COL_PROTOCOL, COL_PATH, COL_DEPTH, COL_OFFSET, COL_STORED,
       COL_COMPUTED, COL_STATUS, COL_REASON, COL_COUNT };
#define PACKET_COLUMN(c) ((c) <= COL_DST)

/* What every line is written with: the format, the file column's text and the lists of names. */
typedef struct {
    int csv;
    const char *file;
    Py_ssize_t file_len;
    PyObject *names, *reasons, *statuses;
} fmt_t;

/* Item k of the list of bytes ``list`` at p; NULL with an exception when k or the item is wrong. */
static char *put_name(char *p, PyObject *list, Py_ssize_t k)
{
    const char *s;
    Py_ssize_t n;
    if (text(list, k, &s, &n) < 0)
        return NULL;
    return put(p, s, n);
}

static char *put_null(char *p, const fmt_t *f)
{
    return f->csv ? p : PUT(p, "null");
}

/* An address column: quoted in JSON, null when the row has no IP layer. */
static char *put_address_value(char *p, const fmt_t *f, const row_t *r, const unsigned char *addr)
{
    if (r->ipver != 4 && r->ipver != 6)
        return put_null(p, f);
    if (!f->csv)
        *p++ = '"';
    p = put_address(p, r->ipver, addr);
    if (!f->csv)
        *p++ = '"';
    return p;
}

/* A checksum value column: "0x1234" quoted in JSON, null when missing (negative). */
static char *put_checksum_value(char *p, const fmt_t *f, int32_t value)
{
    if (value < 0)
        return put_null(p, f);
    if (!f->csv)
        *p++ = '"';
    p = put_hex16(p, (unsigned)value);
    if (!f->csv)
        *p++ = '"';
    return p;
}

/* Column c of row r at p, after its key in JSON; NULL with an exception for a name index out of range. */
static char *put_column(char *p, const fmt_t *f, int c, const row_t *r)
{
#define KEY(name)                               \
    if (!f->csv)                                \
        p = PUT(p, "\"" name "\": ")  /* a constant length: inlined */
    switch (c) {
    case COL_FILE:
        KEY("file");
        return put(p, f->file, f->file_len);
    case COL_FRAME:
        KEY("frame");
        return put_i64(p, r->frame);
    case COL_TIME:
        KEY("time");
        return r->time == INT64_MIN ? put_null(p, f) : put_time(p, r->time);
    case COL_SRC:
        KEY("src");
        return put_address_value(p, f, r, r->src);
    case COL_DST:
        KEY("dst");
        return put_address_value(p, f, r, r->dst);
    case COL_PROTOCOL:
        KEY("protocol");
        return put_name(p, f->names, r->layer);
    case COL_PATH:
        KEY("path");
        return put_name(p, f->names, r->path);
    case COL_DEPTH:
        KEY("depth");
        return put_u64(p, r->depth);
    case COL_OFFSET:
        KEY("offset");
        return r->field < 0 ? put_null(p, f) : put_i64(p, r->field);
    case COL_STORED:
        KEY("stored");
        return put_checksum_value(p, f, r->stored);
    case COL_COMPUTED:
        KEY("computed");
        return put_checksum_value(p, f, r->computed);
    case COL_STATUS:
        KEY("status");
        return put_name(p, f->statuses, r->status);
    default:
        KEY("reason");
        return put_name(p, f->reasons, r->reason);
    }
#undef KEY
}

/* The bytes ``given`` as column ids into columns (each at most once; file only with a file): their count, or -1 with
 * an exception. */
static Py_ssize_t parse_columns(PyObject *given_bytes, int has_file, unsigned char columns[COL_COUNT])
{
    const unsigned char *given = (const unsigned char *)PyBytes_AS_STRING(given_bytes);
    Py_ssize_t ncolumns = PyBytes_GET_SIZE(given_bytes);
    int seen[COL_COUNT] = {0};
    for (Py_ssize_t j = 0; j < ncolumns; j++) {
        if (j >= COL_COUNT || given[j] >= COL_COUNT || seen[given[j]]++ || (given[j] == COL_FILE && !has_file)) {
            PyErr_SetString(PyExc_ValueError, "format_rows: columns must be distinct column ids (file needs a file)");
            return -1;
        }
        columns[j] = given[j];
    }
    return ncolumns;
}

static int same_packet(const row_t *r, const row_t *q)
{
    return r->frame == q->frame && r->time == q->time && r->ipver == q->ipver &&
           !memcmp(r->src, q->src, sizeof r->src) && !memcmp(r->dst, q->dst, sizeof r->dst);
}

/* The n rows' lines from start (room enough: see format_rows); the end, or NULL with an exception. */
static char *put_lines(char *p, const fmt_t *f, const row_t *rows, Py_ssize_t n, const unsigned char *columns,
                       Py_ssize_t ncolumns)
{
    Py_ssize_t lead = 0;
    while (lead < ncolumns && PACKET_COLUMN(columns[lead]))
        lead++;
    const char *last = NULL;  /* the line before, and how long its packet's columns (and the separator after) are */
    Py_ssize_t shared = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const row_t *r = rows + i;
        Py_ssize_t j = 0;
        if (last != NULL && lead && same_packet(r, r - 1)) {
            memmove(p, last, (size_t)shared);  /* the same packet's next field: the same start */
            last = p;
            p += shared;
            j = lead;
        } else {
            last = p;
            if (!f->csv)
                *p++ = '{';
        }
        for (; j < ncolumns; j++) {
            if (j == lead)
                shared = p - last;  /* the packet's columns and the separator after them */
            if ((p = put_column(p, f, columns[j], r)) == NULL)
                return NULL;
            if (j + 1 < ncolumns) {
                *p++ = ',';
                if (!f->csv)
                    *p++ = ' ';
            }
        }
        if (lead == ncolumns)
            shared = p - last;
        if (f->csv && p == last)
            p = PUT(p, "\"\"");  /* one empty value: "" (as Python's csv module writes it), not an empty line */
        if (!f->csv)
            *p++ = '}';
        *p++ = '\n';
    }
    return p;
}

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
    fmt_t f = {PyObject_IsTrue(args[1]), args[5] == Py_None ? "" : PyBytes_AS_STRING(args[5]),
               args[5] == Py_None ? 0 : PyBytes_GET_SIZE(args[5]), args[2], args[3], args[4]};
    if (f.csv < 0)
        return NULL;
    unsigned char columns[COL_COUNT];  /* a copy the text written cannot alias: kept in registers */
    Py_ssize_t ncolumns = parse_columns(args[6], args[5] != Py_None, columns);
    if (ncolumns < 0)
        return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(args[0], &v, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (v.itemsize != (Py_ssize_t)sizeof(row_t) || v.len % (Py_ssize_t)sizeof(row_t)) {
        PyErr_SetString(PyExc_ValueError, "format_rows: rows must be row_t records");
        PyBuffer_Release(&v);
        return NULL;
    }
    Py_ssize_t n = v.len / (Py_ssize_t)sizeof(row_t);
    Py_ssize_t line = 330 + 2 * longest(f.names) + longest(f.reasons) + longest(f.statuses);
    if (f.file_len > PY_SSIZE_T_MAX - line || (n && n > PY_SSIZE_T_MAX / (line + f.file_len))) {
        PyErr_NoMemory();
        PyBuffer_Release(&v);
        return NULL;
    }
    line += f.file_len;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * line);
    if (out == NULL) {
        PyBuffer_Release(&v);
        return NULL;
    }
    char *start = PyBytes_AS_STRING(out);
    char *end = put_lines(start, &f, v.buf, n, columns, ncolumns);
    PyBuffer_Release(&v);
    if (end == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    if (_PyBytes_Resize(&out, end - start) < 0)
        return NULL;
    return out;
}
