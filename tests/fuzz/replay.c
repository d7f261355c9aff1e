/* replay.c — runs the fuzz entry (fuzz_entry.c) over files without
 * libFuzzer: every file named, and every file in every directory named
 * (the seed corpus and the crashing inputs kept as regression cases). A
 * crash, a sanitizer report or a hang fails the ctest that runs it.
 *   fuzz_replay DIR_OR_FILE...
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_entry.h"

static int replay_file(const char *path, size_t *accepted) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open '%s'\n", path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      uint8_t *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  fclose(f);
  if (!buf) return -1;
  *accepted += (size_t)mlprof_fuzz_trace(buf, len);
  free(buf);
  return 0;
}


int main(int argc, char **argv) {
  size_t files = 0, accepted = 0;
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "fuzz_replay: no such file or directory '%s'\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad |= replay_file(argv[i], &accepted) != 0;
      files++;
      continue;
    }
    struct dirent **ents;
    int n = scandir(argv[i], &ents, NULL, alphasort);
    for (int k = 0; k < n; k++) {
      char p[PATH_MAX];
      snprintf(p, sizeof p, "%s/%s", argv[i], ents[k]->d_name);
      if (ents[k]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
        bad |= replay_file(p, &accepted) != 0;
        files++;
      }
      free(ents[k]);
    }
    free(ents);
  }
  fprintf(stderr, "fuzz_replay: %zu inputs replayed, %zu read as traces\n", files, accepted);
  return bad || files == 0;
}
