/* export_perfetto_stacks.c — CPU samples in the Perfetto export: each
 * SAMPLE event of the report's clock (CPU, else wall) with a call stack is
 * a PerfSample packet (pid, tid, callstack iid) at the sample's time.
 *
 * A call stack is interned the first time a sample uses it, in that
 * sample's packet: its frames as prof__an_stack_frames() gives them
 * (inlined functions as frames of their own, Python frames resolved,
 * mlprof's own frames dropped, a run of them at the leaf one "[mlprof]"
 * frame), each frame with its function name, source file and line, and the
 * mapping of the module it lies in (path, address range, build id); frames
 * outside every recorded module (Python, unresolved) share one mapping,
 * "[unmapped]". Frames are interned by function, file, line and mapping.
 */
#include <stdlib.h>
#include <string.h>

#include "mlprof.h"
#include "analyze/export/export_perfetto_int.h"
#include "analyze/sections/stacks/sec_stacks.h"
#include "analyze/sections/stacks/symbols.h"

#define PF_STACK_MAX 512

static void interned_str(pf *p, pf_interner *t, unsigned field, const char *s, size_t n, uint64_t *iid) {
  int fresh;
  *iid = prof__pf_intern(t, s, n, &fresh);
  if (!*iid) p->err = PROF_ENOMEM;
  else if (fresh) prof__pf_interned_str(p, field, *iid, s, n);
}

/* Mapping path components ("usr", "lib", "libc.so.6"), interned. */
static void map_paths(pf *p, const char *path) {
  while (path && *path) {
    while (*path == '/') path++;
    size_t n = strcspn(path, "/");
    if (!n) break;
    uint64_t iid;
    interned_str(p, &p->paths, PF_IN_MAPPING_PATHS, path, n, &iid);
    if (iid) prof__exp_pb_varint(&p->msg, PF_MAP_PATHS, iid);
    path += n;
  }
}

/* Write Mapping `iid` (module iid - 1, or the "[unmapped]" one) if not yet. */
static void mapping(pf *p, const prof__stacks_st *st, uint64_t iid) {
  if (iid >= p->nmaps || p->maps_sent[iid]) return;
  p->maps_sent[iid] = 1;
  p->msg.len = 0;
  prof__exp_pb_varint(&p->msg, PF_MAP_IID, iid);
  if (st && iid - 1 < st->nmods) {
    const prof__an_module *md = &st->mods[iid - 1];
    if (md->build_id_len) {
      uint64_t b;
      interned_str(p, &p->builds, PF_IN_BUILD_IDS, (const char *)md->build_id, md->build_id_len, &b);
      if (b) prof__exp_pb_varint(&p->msg, PF_MAP_BUILD_ID, b);
    }
    prof__exp_pb_varint(&p->msg, PF_MAP_START, md->start);
    prof__exp_pb_varint(&p->msg, PF_MAP_END, md->start + md->size);
    map_paths(p, md->path);
  } else {
    map_paths(p, "[unmapped]");
  }
  prof__exp_pb_bytes(&p->intern, PF_IN_MAPPINGS, p->msg.p, p->msg.len);
}

/* The mapping iid of address pc and its offset in that mapping. */
static uint64_t mapping_of(const prof__stacks_st *st, uintptr_t pc, uint64_t *rel) {
  size_t n = st ? st->nmods : 0;
  if (!prof__pc_is_python(pc))
    for (size_t i = n; i-- > 0;)
      if (pc >= st->mods[i].start && pc - st->mods[i].start < st->mods[i].size) {
        *rel = pc - st->mods[i].start;
        return i + 1;
      }
  *rel = (uint64_t)pc & ~(uint64_t)PROF_PYFRAME_TAG;
  return n + 1;
}

static uint64_t frame_iid(pf *p, const prof__stacks_st *st, const prof__frame *f) {
  uint64_t rel, map = mapping_of(st, f->pc, &rel), name, file = 0;
  const char *fn = f->func ? f->func : "?";
  interned_str(p, &p->funcs, PF_IN_FUNCTION_NAMES, fn, strlen(fn), &name);
  if (f->file) interned_str(p, &p->files, PF_IN_SOURCE_PATHS, f->file, strlen(f->file), &file);
  uint64_t key[4] = {name, file, map, (uint64_t)(f->line > 0 ? f->line : 0)};
  int fresh;
  uint64_t iid = prof__pf_intern(&p->frames, key, sizeof key, &fresh);
  if (!iid || !name) {
    p->err = PROF_ENOMEM;
    return 0;
  }
  if (!fresh) return iid;
  mapping(p, st, map);
  p->msg.len = 0;
  prof__exp_pb_varint(&p->msg, PF_FR_IID, iid);
  prof__exp_pb_varint(&p->msg, PF_FR_NAME, name);
  prof__exp_pb_varint(&p->msg, PF_FR_MAPPING, map);
  prof__exp_pb_varint(&p->msg, PF_FR_REL_PC, rel);
  if (file) prof__exp_pb_varint(&p->msg, PF_FR_SOURCE, file);
  if (f->line > 0) prof__exp_pb_varint(&p->msg, PF_FR_LINE, (uint64_t)f->line);
  if (f->python) prof__exp_pb_varint(&p->msg, PF_FR_KIND, PF_FR_KIND_INTERPRETED);
  prof__exp_pb_bytes(&p->intern, PF_IN_FRAMES, p->msg.p, p->msg.len);
  return iid;
}

/* The callstack iid of stack `id` (the id itself), interned in the packet
 * being built on first use; 0 for a stack without frames. */
static uint64_t stack_iid(pf *p, uint32_t id) {
  if (prof__u64map_get(&p->stacks_sent, id)) return id;
  const prof__frame *fr[PF_STACK_MAX];
  int d = prof__an_stack_frames(p->an, id, fr, PF_STACK_MAX, 1);
  if (d <= 0) return 0;
  prof__stacks_st *st = prof__an_section(p->an, "stacks");
  if (!p->maps_sent) {
    p->nmaps = (st ? st->nmods : 0) + 2;
    p->maps_sent = calloc(p->nmaps, 1);
    if (!p->maps_sent) {
      p->err = PROF_ENOMEM;
      return 0;
    }
  }
  uint64_t ids[PF_STACK_MAX];
  for (int i = d - 1, k = 0; i >= 0; i--) ids[k++] = frame_iid(p, st, fr[i]); /* outermost first */
  prof__buf cs = {0};
  prof__exp_pb_varint(&cs, PF_CS_IID, id);
  for (int k = 0; k < d; k++) prof__exp_pb_varint(&cs, PF_CS_FRAMES, ids[k]); /* repeated, not packed */
  prof__exp_pb_msg(&p->intern, PF_IN_CALLSTACKS, &cs);
  if (prof__u64map_add(&p->stacks_sent, id, 1)) p->err = PROF_ENOMEM;
  return p->err ? 0 : id;
}

void prof__pf_sample(pf *p, uint32_t tid, const prof__event *ev) {
  if (!ev->name) return; /* no stack: nothing to show */
  prof__pf_pkt_begin(p, ev->ts);
  uint64_t cs = stack_iid(p, ev->name);
  if (!cs) return;
  p->msg.len = 0; /* the interning above used msg: the sample is built after it */
  prof__exp_pb_varint(&p->msg, PF_PS_PID, (uint64_t)p->pid);
  prof__exp_pb_varint(&p->msg, PF_PS_TID, tid);
  prof__exp_pb_varint(&p->msg, PF_PS_CALLSTACK, cs);
  prof__exp_pb_varint(&p->msg, PF_PS_CPU_MODE, PF_CPU_MODE_USER);
  prof__exp_pb_bytes(&p->pkt, PF_PKT_PERF_SAMPLE, p->msg.p, p->msg.len);
  p->needs_state = 1;
  prof__pf_pkt_end(p);
  p->st.samples++;
}

void prof__pf_stacks_free(pf *p) {
  prof__u64map_free(&p->stacks_sent);
  prof__pf_interner_free(&p->funcs);
  prof__pf_interner_free(&p->files);
  prof__pf_interner_free(&p->paths);
  prof__pf_interner_free(&p->builds);
  prof__pf_interner_free(&p->frames);
  free(p->maps_sent);
  p->maps_sent = NULL;
}
