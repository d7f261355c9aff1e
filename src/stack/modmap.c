/* modmap.c — the loaded-module map and the writer-side emission of stacks.
 *
 * The writer thread lists the loaded ELF modules with dl_iterate_phdr (path,
 * load bias, address range of the PT_LOAD segments, GNU build id) and writes
 * the whole map as PROF_CHUNK_MODULES whenever it changed (dlopen/dlclose),
 * then writes the stacks interned since the last cycle as PROF_CHUNK_STACKS.
 * Both bodies are encoded by the trace's codec (trace/rec_stacks.h). The
 * module prof__mod_stack registers that writer hook, so memory profiling
 * and CPU sampling share one stack table in the trace.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/producer.h"
#include "stack.h"
#include "trace/rec_stacks.h"

int prof__stack_encode_new(prof__buf *b, uint32_t max_count);

typedef struct scan {
  prof__rec_list *mods;
  prof__tw *tw;    /* where a full part of the list goes */
  int rc;
  uint32_t count;
  unsigned long long adds, subs;
} scan;

static unsigned long long seen_adds, seen_subs;
static int map_written;

/* The module's GNU build id into m (none: left empty). */
static void find_build_id(prof__rec_module *m, const struct dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    size_t left = ph->p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      size_t name_sz = (nh->n_namesz + 3u) & ~3u, desc_sz = (nh->n_descsz + 3u) & ~3u;
      size_t total = sizeof *nh + name_sz + desc_sz;
      if (total > left) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
          memcmp(p + sizeof *nh, "GNU", 4) == 0) {
        m->build_id = p + sizeof *nh + name_sz;
        m->build_id_len = nh->n_descsz;
        return;
      }
      p += total;
      left -= total;
    }
  }
}

static int on_module(struct dl_phdr_info *info, size_t size, void *arg) {
  scan *s = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    s->adds = info->dlpi_adds;
    s->subs = info->dlpi_subs;
  }
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    if (ph->p_vaddr < lo) lo = ph->p_vaddr;
    if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
  }
  if (hi <= lo) return 0;
  char exe[4096];
  const char *path = info->dlpi_name;
  if (!path || !*path) { /* the main program */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    path = exe;
  }
  prof__rec_module m = {.path = path,
                        .path_len = strlen(path),
                        .bias = (uint64_t)info->dlpi_addr,
                        .start = (uint64_t)(info->dlpi_addr + lo),
                        .size = (uint64_t)(hi - lo)};
  find_build_id(&m, info);
  prof__rec_modules_put(s->mods, &m);
  if (!s->rc && s->mods->b.len >= PROF_REC_LIST_PART) s->rc = prof__rec_list_write(s->mods, s->tw, PROF_CHUNK_MODULES);
  return 0;
}

/* The loader's load/unload counters, from the first module only: a cheap
 * test (no path, no build id) run every cycle before the full listing. */
static int on_first_module(struct dl_phdr_info *info, size_t size, void *arg) {
  scan *s = arg;
  if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) return 0;
  s->adds = info->dlpi_adds;
  s->subs = info->dlpi_subs;
  s->count = 1;
  return 1; /* stop after one */
}

/* Write the module map if it changed since the last write (when the loader
 * does not count loads and unloads, only the first map is written). A
 * large map goes out in several chunks: a later map replaces nothing. */
static int emit_modules(prof__tw *tw) {
  scan quick = {0};
  dl_iterate_phdr(on_first_module, &quick);
  if (map_written && (!quick.count || (quick.adds == seen_adds && quick.subs == seen_subs))) return 0;
  prof__rec_list mods = {{0}, 0};
  scan probe = {.mods = &mods, .tw = tw};
  dl_iterate_phdr(on_module, &probe);
  int rc = probe.rc ? probe.rc : prof__rec_list_write(&mods, tw, PROF_CHUNK_MODULES);
  if (!rc) {
    map_written = 1;
    seen_adds = probe.adds;
    seen_subs = probe.subs;
  }
  prof__rec_list_free(&mods);
  return rc;
}

int prof__stack_emit(prof__tw *tw) {
  if (!tw) return PROF_EINVAL;
  if (!prof__stack_any()) return 0; /* nothing to resolve yet: no map */
  int rc = emit_modules(tw);
  for (int round = 0; !rc && round < 64; round++) {
    prof__buf b = {0};
    int n = prof__stack_encode_new(&b, 4096);
    if (n < 0) rc = n;
    else if (n > 0) rc = prof__tw_chunk(tw, PROF_CHUNK_STACKS, b.p, b.len);
    prof__buf_free(&b);
    if (n <= 0) break;
  }
  return rc;
}

/* ---- the module: one writer hook for everyone's stacks -------------------- */

static int hook_added;
static uint64_t lost_reported;

static void stack_hook(prof__tw *tw, int final, void *arg) {
  (void)arg;
  if (!tw) return;
  prof__stack_emit(tw);
  uint64_t lost = prof__stack_lost();
  if (final && lost != lost_reported) {
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)lost);
    prof__meta_add("stacks.lost", v);
    lost_reported = lost;
  }
}

static int stack_start(void) {
  prof__stack_lib_init(); /* libunwind's set-up, here on prof_init's thread (unwind.c) */
  if (!hook_added && prof__writer_hook_add(stack_hook, NULL) == 0) hook_added = 1;
  return hook_added ? 0 : PROF_ENOMEM;
}

static size_t stack_header(prof__kv *kv, size_t max) {
  if (max < 1) return 0;
  kv[0].key = "stacks.unwinder";
#if defined(MLPROF_HAVE_LIBUNWIND)
  kv[0].value = "libunwind";
#else
  kv[0].value = "none";
#endif
  return 1;
}

const prof__module prof__mod_stack = {.name = "stack", .header = stack_header, .start = stack_start};
