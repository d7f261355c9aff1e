/* cli_stacks.h — `mlprof export --folded | --pprof | --flamegraph FILE`:
 * exports of the sampled call stacks (cli_stacks.c). */
#ifndef MLPROF_CLI_STACKS_H
#define MLPROF_CLI_STACKS_H

/* Export the sampled stacks of `trace`: format 'f' (folded text, default
 * output TRACE.folded), 'p' (gzip'd pprof, default TRACE.pb.gz) or 's'
 * (SVG flame graph, output required). Returns a CLI_* code. */
int cli_export_stacks(const char *trace, int format, const char *out_path, int quiet);

#endif
