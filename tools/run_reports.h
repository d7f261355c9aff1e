/* run_reports.h — the list of traces the program of `mlprof run` wrote
 * (run_reports.c). */
#ifndef MLPROF_RUN_REPORTS_H
#define MLPROF_RUN_REPORTS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct run_list {
  int fd;         /* the unlinked list file; -1: none */
  char env[4200]; /* the value of MLPROF_RUN_TRACES for the program */
} run_list;

/* Make the list; 0, or -1 when there is none (then the launcher falls back
 * to the path it chose itself). */
int run_list_open(run_list *l);
/* The paths process `pid` announced as `kind` ("trace" or "capture"), in
 * order, each once; free with run_list_free. */
size_t run_list_traces(const run_list *l, pid_t pid, const char *kind, char ***out);
void run_list_free(char **v, size_t n);
void run_list_close(run_list *l);

#endif
