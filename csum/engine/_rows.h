/*
 * One row per checksum field, as csum/capture/rows.py lays it out (its ROW dtype: tests/capture/test_rows.py checks
 * that its offsets are ROW_LAYOUT's, which csum.engine._cwalk exports from this struct).
 *
 * _cwalk.c rows() fills the walk's fields (packet .. dst) for the packets it walks; csum/capture/rows.py fills frame,
 * time, layer, path, reason and status for every row (its own rows too), and _rowtext.c format_rows() writes them as
 * JSON Lines or CSV.
 */
#ifndef CSUM_ROWS_H
#define CSUM_ROWS_H

#include <stdint.h>

typedef struct {
    int64_t frame;      /* the frame number, from 1 (tshark's frame.number) */
    int64_t time;       /* the packet's timestamp in nanoseconds since the epoch; INT64_MIN: none recorded */
    uint64_t key;       /* _cwalk.c's path key (5-bit tokens, outer first) */
    int32_t packet;     /* the packet's position in the chunk walked */
    int32_t header;     /* where the checksummed header starts in the packet */
    int32_t field;      /* where the checksum field starts in the packet; -1: not in this packet */
    int32_t stored;     /* the field as sent, big-endian; -1: none */
    int32_t computed;   /* what a sender stores there; -1: not computable */
    int32_t layer;      /* the protocol's name: an index into csum/capture/rows.py's names */
    int32_t path;       /* the path's name: the same */
    uint8_t code;       /* _cwalk.c's layer code */
    uint8_t depth;      /* 0 for the outer IP layer, +1 per tunnel or ICMP quote */
    uint8_t rs;         /* _cwalk.c's reason code (RS_*) */
    int8_t ok;          /* 1, 0, -1 (not applicable) */
    uint8_t reason;     /* csum.layers.Reason, by its position in the enum */
    uint8_t status;     /* csum.layers.Status, the same */
    uint8_t ipver;      /* 4, 6, or 0: no IP header above the field */
    uint8_t pad;
    uint8_t src[16];    /* that IP header's source address (IPv4: the first 4 bytes) */
    uint8_t dst[16];    /* its destination */
} row_t;

PyObject *format_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

#endif
