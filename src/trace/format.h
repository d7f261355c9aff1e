/* format.h — byte layout constants of the `.mlpt` file shared by the writer
 * and the reader (docs/trace-format.md is the prose version). */
#ifndef PROF_TRACE_FORMAT_H
#define PROF_TRACE_FORMAT_H

#define PROF_CHUNK_MAGIC 0x4b434c4du /* "MLCK" little-endian */
#define PROF_CHUNK_HDR 20            /* magic, type, codec, reserved, raw, stored, crc */
#define PROF_CODEC_RAW 0
#define PROF_CODEC_ZSTD 1
#define PROF_MAX_CHUNK (256u << 20)  /* largest raw or stored payload the format allows */
/* Largest payload (raw, and so stored) mlprof writes in one chunk: the
 * writer cuts its strings, thread records and event blocks into chunks of
 * at most this, and producers' own chunks stay below it (GPU records are
 * cut at 4 MiB, stacks at 4096 a chunk). A reader refuses a larger chunk
 * (unless MLPROF_READ_MAX_MB=0), so one chunk never takes more memory than
 * this. docs/trace-format.md states it. */
#define PROF_CHUNK_RAW_MAX (8u << 20)
#define PROF_MAX_HEADER (1u << 20)   /* largest header key/value area accepted */

/* Event flag bits (second byte of an encoded event). */
#define PROF_EVF_CAT 0x01
#define PROF_EVF_A 0x02
#define PROF_EVF_B 0x04
#define PROF_EVF_AUX 0x08
/* Version 2: `a` (present) is an svarint delta from the previous
 * delta-coded `a` of the same block (0 at the block's start). The writer
 * uses it for the addresses of ALLOC and FREE events. */
#define PROF_EVF_ADELTA 0x10
#define PROF_EVF_KNOWN_V1 0x0f
#define PROF_EVF_KNOWN 0x1f

static inline void prof__le32(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}
static inline unsigned prof__rd32(const unsigned char *p) {
  return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
}
#endif
