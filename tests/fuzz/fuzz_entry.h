/* fuzz_entry.h — the one function the libFuzzer target (fuzz_main.c) and
 * the plain replay driver (replay.c) share: take bytes as a trace file and
 * run the reader, the analyzer and every report and export writer on it. */
#ifndef MLPROF_FUZZ_ENTRY_H
#define MLPROF_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

/* Write `data` to a trace file in a private temporary directory and run
 * everything over it; outputs go to memory or into that directory, which
 * is removed at exit. Returns 1 when the analyzer accepted the bytes as a
 * trace, 0 when it refused them (never crashes, by contract). */
int mlprof_fuzz_trace(const uint8_t *data, size_t size);

#endif
