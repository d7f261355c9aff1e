/* cli_ranks.h — the multi-rank side of `mlprof report` and `mlprof export`:
 * several traces, or a directory of them, give one merged report or one
 * Chrome trace with a process per rank (src/analyze/ranks/ranks.h). */
#ifndef MLPROF_CLI_RANKS_H
#define MLPROF_CLI_RANKS_H

/* Most trace arguments one command line may name (a directory holds any number). */
#define CLI_RANKS_MAX_ARGS 4096

/* 1 when the positional arguments ask for a merged run: more than one, or a directory. */
int cli_ranks_wanted(const char *const *pos, int npos);

/* When the arguments (a directory, say) hold exactly one trace: its path,
 * malloc'd, so the command gives that trace's own report; else NULL. */
char *cli_ranks_single(const char *const *pos, int npos);

/* `mlprof report` of several traces: format "text" or "json"; out_path NULL or "-" for stdout. */
int cli_ranks_report(const char *cmd, const char *const *pos, int npos, const char *format, const char *out_path);

/* `mlprof export --chrome` of several traces; out_path NULL: "merged.trace.json" in the working directory. */
int cli_ranks_export(const char *cmd, const char *const *pos, int npos, const char *out_path, int quiet);

#endif
