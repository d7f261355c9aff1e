/* pb.h — the protobuf wire format, written into a prof__buf: the one
 * encoder shared by the pprof exporters (export_pprof*.c), the TensorBoard
 * event writer (export_tb.c) and the Perfetto exporter (export_perfetto*.c). Fields are appended in call order; an
 * allocation failure sets the buffer's oom flag (trace/trace.h).
 */
#ifndef MLPROF_ANALYZE_PB_H
#define MLPROF_ANALYZE_PB_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Wire types. */
enum { PROF_PB_VARINT = 0, PROF_PB_I64 = 1, PROF_PB_LEN = 2, PROF_PB_I32 = 5 };

/* The key of `field` with wire type `wire`. */
void prof__exp_pb_tag(prof__buf *b, unsigned field, unsigned wire);
/* A varint field (uint64, int64 as two's complement, bool, enum). */
void prof__exp_pb_varint(prof__buf *b, unsigned field, uint64_t v);
/* A double (fixed 64-bit, little-endian) field. */
void prof__exp_pb_f64(prof__buf *b, unsigned field, double v);
/* A fixed64 field (8 bytes, little-endian). */
void prof__exp_pb_fixed64(prof__buf *b, unsigned field, uint64_t v);
/* A float (fixed 32-bit, little-endian) field. */
void prof__exp_pb_f32(prof__buf *b, unsigned field, float v);
/* A length-delimited field: bytes, a string or an encoded message. */
void prof__exp_pb_bytes(prof__buf *b, unsigned field, const void *p, size_t n);
/* The message built in `m` as field `field` of b; frees m (its oom flag
 * carries over to b). */
void prof__exp_pb_msg(prof__buf *b, unsigned field, prof__buf *m);

#endif
