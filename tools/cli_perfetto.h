/* cli_perfetto.h — `mlprof export --perfetto` and `--pprof-heap`
 * (cli_perfetto.c). */
#ifndef MLPROF_CLI_PERFETTO_H
#define MLPROF_CLI_PERFETTO_H

/* Export `trace` as a Perfetto protobuf trace (default output
 * TRACE.pftrace; a name ending in .gz is gzip'ed). Returns a CLI_* code. */
int cli_export_perfetto(const char *trace, const char *out_path, int quiet);

/* Export the allocation sites of `trace` as a gzip'd pprof heap profile
 * (default output TRACE.heap.pb.gz). Returns a CLI_* code. */
int cli_export_pprof_heap(const char *trace, const char *out_path, int quiet);

#endif
