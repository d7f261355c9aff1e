/* pyframes.c — Python frames in CPU samples (CPython 3.11).
 *
 * Signal side (prof__pyframes_merge, called by the sampling handler): when
 * the process runs CPython, the handler finds the interrupted thread's
 * PyThreadState through the interpreter's own thread-specific key
 * (_PyRuntime.gilstate.autoTSSkey, a pthread key, so it works on any
 * thread, holding the GIL or not), walks its frame chain
 * (cframe->current_frame, previous, ...) with plain loads and no Python API
 * call, and records each frame as a tagged address: the code object's
 * address and the index of the frame's last instruction (symbols.h,
 * PROF_PYFRAME_TAG). Nothing is dereferenced that this thread does not own:
 * a frame inside the thread's data-stack chunks is read in place, any other
 * (a generator's frame) is copied with process_vm_readv, which fails
 * instead of faulting. The code object is not touched here. The native
 * stack is then rewritten: each native frame in _PyEval_EvalFrameDefault is
 * replaced by the Python frames that call of the evaluation loop runs (up
 * to and including the frame marked is_entry), innermost first, so Python
 * and native frames interleave as they call each other.
 *
 * Writer side (prof__pyframes_cycle): the writer looks at the stacks
 * interned since its last cycle and resolves every tagged address it has
 * not seen yet: it copies the code object with process_vm_readv, checks
 * that it is still a code object (its type is PyCode_Type), reads its file
 * name, qualified name and location table, finds the line of the recorded
 * instruction, and writes the new ones as one PROF_CHUNK_PYFRAMES chunk
 * (encoded by the trace's codec, trace/rec_stacks.h). A
 * code object freed before the writer saw it is left out (the analysis
 * shows "<python>"); one whose memory was reused by another code object in
 * between is named after the newer one (rare: a writer cycle is short).
 *
 * Struct layouts come from the interpreter's internal headers at build
 * time (python3.11-dev); a build without them, or a process running
 * another Python version (checked with Py_Version), has no Python frames.
 * MLPROF_PYTHON_FRAMES=0 turns the capture off.
 *
 * Forked children (prof__pyframes_remote, for cpu/workers.c): a fork of
 * this process runs the same interpreter at the same addresses, so the
 * Python frames of its main thread (the thread state of
 * _PyRuntime.interpreters.main whose native id is the child's pid) can be
 * read with process_vm_readv on the child from any thread, and the writer
 * resolves their code objects from the child's memory (code the child
 * compiled after the fork included).
 */
#if defined(MLPROF_HAVE_PYFRAMES)
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#undef MLPROF_HAVE_PYFRAMES /* the layouts below are 3.11's */
#endif
#endif

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/session.h"
#include "cpu/pyframes.h"
#include "stack/stack.h"
#include "trace/rec_stacks.h"

#define PYFRAME_TAG (1ull << 63)
#define CODE_MASK ((1ull << 47) - 1)
#define PY_MAX 128    /* Python frames read per sample */
#define CHUNKS_MAX 16 /* data-stack chunks of a thread looked at */

#if defined(MLPROF_HAVE_PYFRAMES)

/* A set of tagged addresses (open addressing, 0 empty), one thread's. */
typedef struct keyset {
  uint64_t *v;
  size_t cap, n;
} keyset;

static struct {
  int state;                     /* 0 not looked for, 1 found (handler may read), -1 off */
  const _PyRuntimeState *runtime;
  uintptr_t eval_lo, eval_hi;    /* _PyEval_EvalFrameDefault */
  uintptr_t code_type, unicode_type, bytes_type;
  uint32_t scanned;              /* writer: stacks looked at */
  keyset seen;                   /* writer: tagged addresses resolved */
  keyset described;              /* the workers' sampling thread: described from a child */
  uint64_t resolved, unresolved;
} P;

/* ---- reading memory that may be gone ------------------------------------- */

/* Copy n bytes at src of process pid, or fail (-1) where nothing is mapped. */
static int read_from(pid_t pid, void *dst, uintptr_t src, size_t n) {
  struct iovec l = {dst, n}, r = {(void *)src, n};
  return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The same in this process. The pid is asked each time: after fork() the
 * child must read its own memory. */
static int safe_read(void *dst, uintptr_t src, size_t n) { return read_from(getpid(), dst, src, n); }

/* ---- signal side ----------------------------------------------------------- */

typedef struct chunk_range {
  uintptr_t lo, hi;
} chunk_range;

static int in_chunks(const chunk_range *c, int n, uintptr_t p, size_t len) {
  for (int i = 0; i < n; i++)
    if (p >= c[i].lo && p + len <= c[i].hi && p + len > p) return 1;
  return 0;
}

/* The thread's frames as tagged addresses, innermost first; entry[i] set
 * for a frame that ends one call of the evaluation loop. */
static int python_frames(uint64_t *tag, uint8_t *entry, int max) {
  const _PyRuntimeState *rt = P.runtime;
  if (!rt->gilstate.autoTSSkey._is_initialized) return 0;
  const PyThreadState *ts = pthread_getspecific(rt->gilstate.autoTSSkey._key);
  if (!ts) return 0;
  const _PyCFrame *cf = ts->cframe;
  if (!cf) return 0;
  chunk_range ch[CHUNKS_MAX];
  int nch = 0;
  for (const _PyStackChunk *c = ts->datastack_chunk; c && nch < CHUNKS_MAX; c = c->previous) {
    ch[nch].lo = (uintptr_t)c;
    ch[nch].hi = (uintptr_t)c + c->size;
    nch++;
  }
  uintptr_t fp = (uintptr_t)cf->current_frame;
  int n = 0;
  while (fp && n < max) {
    _PyInterpreterFrame copy;
    const _PyInterpreterFrame *f;
    if (fp & 7) break;
    if (in_chunks(ch, nch, fp, sizeof copy)) {
      f = (const _PyInterpreterFrame *)fp;
    } else {
      if (safe_read(&copy, fp, sizeof copy) != 0) break;
      f = &copy;
    }
    uintptr_t code = (uintptr_t)f->f_code;
    if (!code || (code & 7) || code > CODE_MASK) break;
    intptr_t lasti = ((intptr_t)f->prev_instr - (intptr_t)(code + offsetof(PyCodeObject, co_code_adaptive))) /
                     (intptr_t)sizeof(_Py_CODEUNIT);
    uint64_t idx = lasti >= -1 && lasti < 0xfffe ? (uint64_t)(lasti + 1) : 0xffff;
    tag[n] = PYFRAME_TAG | idx << 47 | code;
    entry[n] = f->is_entry ? 1 : 0;
    n++;
    fp = (uintptr_t)f->previous;
  }
  return n;
}

int prof__pyframes_merge(uintptr_t *pcs, int depth, int max) {
  if (__atomic_load_n(&P.state, __ATOMIC_ACQUIRE) != 1 || depth <= 0) return depth;
  uint64_t tag[PY_MAX];
  uint8_t entry[PY_MAX];
  int np = python_frames(tag, entry, PY_MAX);
  if (!np) return depth;
  uintptr_t out[PROF_STACK_MAX_DEPTH];
  if (max > PROF_STACK_MAX_DEPTH) max = PROF_STACK_MAX_DEPTH;
  int n = 0, pi = 0;
  for (int i = 0; i < depth && n < max; i++) {
    uintptr_t a = i ? pcs[i] - 1 : pcs[i]; /* a return address points past its call */
    if (a >= P.eval_lo && a < P.eval_hi && pi < np) {
      while (pi < np && n < max) {
        out[n++] = (uintptr_t)tag[pi];
        if (entry[pi++]) break;
      }
      continue;
    }
    out[n++] = pcs[i];
  }
  while (pi < np && n < max) out[n++] = (uintptr_t)tag[pi++]; /* outer frames past a cut native stack */
  memcpy(pcs, out, (size_t)n * sizeof *pcs);
  return n;
}

/* ---- set-up ------------------------------------------------------------------ */

static uintptr_t sym(const char *name) { return (uintptr_t)dlsym(RTLD_DEFAULT, name); }

void prof__pyframes_init(void) {
  if (P.state) return;
  const char *env = prof__env("PYTHON_FRAMES");
  if (env && strcmp(env, "0") == 0) {
    P.state = -1;
    return;
  }
  const unsigned long *ver = (const unsigned long *)sym("Py_Version");
  uintptr_t rt = sym("_PyRuntime"), eval = sym("_PyEval_EvalFrameDefault");
  if (!ver || !rt || !eval) return; /* no Python in the process */
  if ((*ver >> 16) != (PY_VERSION_HEX >> 16)) {
    P.state = -1; /* another Python: its layouts are not the ones built in */
    return;
  }
  Dl_info info;
  const ElfW(Sym) *es = NULL;
  if (!dladdr1((void *)eval, &info, (void **)&es, RTLD_DL_SYMENT) || !es || !es->st_size) return;
  P.code_type = sym("PyCode_Type");
  P.unicode_type = sym("PyUnicode_Type");
  P.bytes_type = sym("PyBytes_Type");
  P.runtime = (const _PyRuntimeState *)rt;
  P.eval_lo = eval;
  P.eval_hi = eval + es->st_size;
  char probe = 0;
  if (!P.code_type || !P.unicode_type || !P.bytes_type || safe_read(&probe, (uintptr_t)&P, 1) != 0) {
    P.state = -1; /* no safe reads here (process_vm_readv refused): no Python frames */
    return;
  }
  __atomic_store_n(&P.state, 1, __ATOMIC_RELEASE);
}

int prof__pyframes_active(void) { return __atomic_load_n(&P.state, __ATOMIC_ACQUIRE) == 1; }

/* ---- writer side --------------------------------------------------------------- */

/* A str object's text as UTF-8 (malloc'd), NULL when it is not one. */
static char *read_str(pid_t pid, uintptr_t p) {
  PyCompactUnicodeObject u;
  if (!p || read_from(pid, &u, p, sizeof u) != 0 || (uintptr_t)u._base.ob_base.ob_type != P.unicode_type) return NULL;
  Py_ssize_t len = u._base.length;
  if (len < 0 || len > 4096) return NULL;
  char *s = malloc((size_t)len * 2 + 1);
  if (!s) return NULL;
  int ok = -1;
  if (u._base.state.compact && u._base.state.ascii) {
    ok = read_from(pid, s, p + sizeof(PyASCIIObject), (size_t)len);
    s[len] = 0;
  } else if (u._base.state.compact && u.utf8 && u.utf8_length >= 0 && u.utf8_length <= len * 2) {
    ok = read_from(pid, s, (uintptr_t)u.utf8, (size_t)u.utf8_length);
    s[u.utf8_length] = 0;
  } else if (u._base.state.compact && u._base.state.kind == PyUnicode_1BYTE_KIND) {
    unsigned char *raw = malloc((size_t)len + 1);
    if (raw && read_from(pid, raw, p + sizeof(PyCompactUnicodeObject), (size_t)len) == 0) {
      size_t w = 0;
      for (Py_ssize_t i = 0; i < len; i++) { /* Latin-1 to UTF-8 */
        if (raw[i] < 0x80) s[w++] = (char)raw[i];
        else {
          s[w++] = (char)(0xc0 | raw[i] >> 6);
          s[w++] = (char)(0x80 | (raw[i] & 0x3f));
        }
      }
      s[w] = 0;
      ok = 0;
    }
    free(raw);
  }
  if (ok != 0) {
    free(s);
    return NULL;
  }
  return s;
}

static unsigned lt_varint(const uint8_t **p, const uint8_t *end) {
  unsigned v = 0, shift = 0;
  while (*p < end) {
    uint8_t b = *(*p)++;
    v |= (unsigned)(b & 63) << shift;
    shift += 6;
    if (!(b & 64) || shift > 24) break;
  }
  return v;
}

static int lt_svarint(const uint8_t **p, const uint8_t *end) {
  unsigned v = lt_varint(p, end);
  return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* The line of instruction `lasti` (code units) from a 3.11 location table
 * (CPython's Objects/locations.md); first when none is recorded. */
static int line_at(const uint8_t *p, size_t n, int first, long lasti) {
  const uint8_t *end = p + n;
  int line = first;
  long addr = 0;
  if (lasti < 0) return first;
  while (p < end) {
    uint8_t b = *p++;
    int code = (b >> 3) & 15, len = (b & 7) + 1, has = 1;
    if (code == 15) has = 0;
    else if (code == 14) {
      line += lt_svarint(&p, end);
      lt_varint(&p, end);
      lt_varint(&p, end);
      lt_varint(&p, end);
    } else if (code == 13) line += lt_svarint(&p, end);
    else if (code >= 10) {
      line += code - 10;
      p += 2;
    } else p += 1;
    if (lasti >= addr && lasti < addr + len) return has ? line : first;
    addr += len;
  }
  return first;
}

/* Add key to set: 1 when new, 0 when there already, -1 out of memory. */
static int keyset_add(keyset *set, uint64_t key) {
  if ((set->n + 1) * 2 > set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 1024;
    uint64_t *v = calloc(cap, sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < set->cap; i++) {
      if (!set->v[i]) continue;
      size_t k = (size_t)(set->v[i] * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
      while (v[k]) k = (k + 1) & (cap - 1);
      v[k] = set->v[i];
    }
    free(set->v);
    set->v = v;
    set->cap = cap;
  }
  size_t k = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (set->cap - 1);
  while (set->v[k]) {
    if (set->v[k] == key) return 0;
    k = (k + 1) & (set->cap - 1);
  }
  set->v[k] = key;
  set->n++;
  return 1;
}

static void keyset_remove_all(keyset *set) {
  free(set->v);
  *set = (keyset){0};
}

static int seen_add(uint64_t key) { return keyset_add(&P.seen, key); }

/* The Python frames resolved in one cycle, written in parts. */
typedef struct frames_out {
  prof__rec_list l;
  prof__tw *tw;
} frames_out;

/* Read the code object of tagged address key in pid: d's file and name
 * (malloc'd), its line. 0, or -1 (nothing malloc'd) when it is not a code
 * object there (gone, freed, reading refused). Any thread. */
static int describe(pid_t pid, uint64_t key, prof__pyframe_desc *d) {
  uintptr_t code = (uintptr_t)(key & CODE_MASK);
  long idx = (long)((key >> 47) & 0xffff);
  PyCodeObject co;
  if (read_from(pid, &co, code, sizeof co) != 0 || (uintptr_t)co.ob_base.ob_base.ob_type != P.code_type) return -1;
  char *file = read_str(pid, (uintptr_t)co.co_filename), *name = read_str(pid, (uintptr_t)co.co_qualname);
  int line = co.co_firstlineno;
  PyBytesObject bh;
  uintptr_t lt = (uintptr_t)co.co_linetable;
  if (idx != 0xffff && lt && read_from(pid, &bh, lt, offsetof(PyBytesObject, ob_sval)) == 0 &&
      (uintptr_t)bh.ob_base.ob_base.ob_type == P.bytes_type && bh.ob_base.ob_size > 0 && bh.ob_base.ob_size < (1 << 20)) {
    uint8_t *tab = malloc((size_t)bh.ob_base.ob_size);
    if (tab && read_from(pid, tab, lt + offsetof(PyBytesObject, ob_sval), (size_t)bh.ob_base.ob_size) == 0)
      line = line_at(tab, (size_t)bh.ob_base.ob_size, co.co_firstlineno, idx - 1);
    free(tab);
  }
  if (!file || !name) {
    free(file);
    free(name);
    return -1;
  }
  *d = (prof__pyframe_desc){.key = key, .file = file, .name = name, .line = line};
  return 0;
}

/* Writer: one described frame into the cycle's records. */
static void put(const prof__pyframe_desc *d, frames_out *out) {
  prof__rec_pyframe f = {.key = d->key, .file = d->file, .file_len = strlen(d->file), .name = d->name,
                         .name_len = strlen(d->name), .line = d->line};
  prof__rec_pyframes_put(&out->l, &f);
  if (out->l.b.len >= PROF_REC_LIST_PART) prof__rec_list_write(&out->l, out->tw, PROF_CHUNK_PYFRAMES);
  P.resolved++;
}

static void resolve(pid_t pid, uint64_t key, frames_out *out) {
  prof__pyframe_desc d;
  if (describe(pid, key, &d) != 0) {
    P.unresolved++;
    return;
  }
  put(&d, out);
  free(d.file);
  free(d.name);
}

static void scan_stack(const uintptr_t *pcs, int depth, void *arg) {
  for (int i = 0; i < depth; i++)
    if (((uint64_t)pcs[i] & PYFRAME_TAG) && seen_add((uint64_t)pcs[i]) == 1) resolve(getpid(), (uint64_t)pcs[i], arg);
}

void prof__pyframes_cycle(prof__tw *tw, int final) {
  /* Never looks for Python here: dlsym takes the loader's lock, which a
   * thread unloading libmlprof (dlclose) holds while it waits for this
   * writer's last cycle. */
  if (P.state != 1 || !tw) return;
  frames_out out = {{{0}, 0}, tw};
  P.scanned = prof__stack_scan(P.scanned, scan_stack, &out);
  prof__rec_list_write(&out.l, tw, PROF_CHUNK_PYFRAMES);
  prof__rec_list_free(&out.l);
  if (final) {
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)P.resolved);
    prof__meta_add("cpu.python_frames", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)P.unresolved);
    prof__meta_add("cpu.python_frames_unresolved", v);
  }
}

/* ---- forked children (writer side) ------------------------------------------------ */

int prof__pyframes_remote(pid_t pid, uintptr_t *tags, int max) {
  if (__atomic_load_n(&P.state, __ATOMIC_ACQUIRE) != 1 || max <= 0) return 0;
  uintptr_t interp = 0, ts = 0, cf = 0, fp = 0;
  if (read_from(pid, &interp, (uintptr_t)P.runtime + offsetof(_PyRuntimeState, interpreters.main), sizeof interp))
    return errno == EPERM ? -1 : 0; /* refused (ptrace rules), or gone */
  if (!interp || read_from(pid, &ts, interp + offsetof(PyInterpreterState, threads.head), sizeof ts) || !ts)
    return 0;
  /* the child's main thread (its native id is the pid); threads it started
   * since (a DataLoader worker's fd-sharing thread) come first in the list */
  uintptr_t main_ts = 0, last = 0;
  for (int k = 0; ts && k < 64 && !main_ts; k++) {
    unsigned long tid = 0;
    uintptr_t next = 0;
    if (read_from(pid, &tid, ts + offsetof(PyThreadState, native_thread_id), sizeof tid) ||
        read_from(pid, &next, ts + offsetof(PyThreadState, next), sizeof next))
      break;
    if (tid == (unsigned long)pid) main_ts = ts;
    last = ts;
    ts = next;
  }
  ts = main_ts ? main_ts : last;
  if (!ts || read_from(pid, &cf, ts + offsetof(PyThreadState, cframe), sizeof cf) || !cf ||
      read_from(pid, &fp, cf + offsetof(_PyCFrame, current_frame), sizeof fp))
    return 0;
  int n = 0;
  while (fp && n < max && n < PY_MAX) {
    _PyInterpreterFrame f;
    if ((fp & 7) || read_from(pid, &f, fp, sizeof f) != 0) break;
    uintptr_t code = (uintptr_t)f.f_code;
    if (!code || (code & 7) || code > CODE_MASK) break;
    intptr_t lasti = ((intptr_t)f.prev_instr - (intptr_t)(code + offsetof(PyCodeObject, co_code_adaptive))) /
                     (intptr_t)sizeof(_Py_CODEUNIT);
    uint64_t idx = lasti >= -1 && lasti < 0xfffe ? (uint64_t)(lasti + 1) : 0xffff;
    tags[n++] = (uintptr_t)(PYFRAME_TAG | idx << 47 | code);
    fp = (uintptr_t)f.previous;
  }
  return n;
}

int prof__pyframes_remote_describe(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc **out) {
  *out = NULL;
  if (__atomic_load_n(&P.state, __ATOMIC_ACQUIRE) != 1) return 0;
  int k = 0;
  for (int i = 0; i < n; i++) {
    uint64_t key = (uint64_t)tags[i];
    if (!(key & PYFRAME_TAG) || !keyset_add(&P.described, key)) continue; /* described before */
    if (!*out && !(*out = malloc((size_t)n * sizeof **out))) return 0;
    if (describe(pid, key, &(*out)[k]) == 0) k++;
  }
  if (!k) {
    free(*out);
    *out = NULL;
  }
  return k;
}

void prof__pyframes_remote_describe_end(void) { keyset_remove_all(&P.described); }

void prof__pyframes_desc_free(prof__pyframe_desc *d, int n) {
  for (int i = 0; i < n; i++) {
    free(d[i].file);
    free(d[i].name);
  }
  free(d);
}

void prof__pyframes_remote_resolve(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc *d, int nd,
                                   prof__tw *tw) {
  if (P.state != 1 || !tw) {
    prof__pyframes_desc_free(d, nd);
    return;
  }
  frames_out out = {{{0}, 0}, tw};
  for (int i = 0; i < nd; i++)
    if (seen_add(d[i].key) == 1) put(&d[i], &out);
  prof__pyframes_desc_free(d, nd);
  /* a frame the sampling thread could not describe: the child, if it lives */
  for (int i = 0; i < n; i++)
    if (((uint64_t)tags[i] & PYFRAME_TAG) && seen_add((uint64_t)tags[i]) == 1) resolve(pid, (uint64_t)tags[i], &out);
  prof__rec_list_write(&out.l, tw, PROF_CHUNK_PYFRAMES);
  prof__rec_list_free(&out.l);
}

#else /* no CPython 3.11 headers at build time: no Python frames */

int prof__pyframes_merge(uintptr_t *pcs, int depth, int max) {
  (void)pcs, (void)max;
  return depth;
}
void prof__pyframes_init(void) {}
int prof__pyframes_active(void) { return 0; }
void prof__pyframes_cycle(prof__tw *tw, int final) { (void)tw, (void)final; }
int prof__pyframes_remote(pid_t pid, uintptr_t *tags, int max) {
  (void)pid, (void)tags, (void)max;
  return 0;
}
int prof__pyframes_remote_describe(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc **out) {
  (void)pid, (void)tags, (void)n;
  *out = NULL;
  return 0;
}
void prof__pyframes_remote_describe_end(void) {}
void prof__pyframes_desc_free(prof__pyframe_desc *d, int n) {
  (void)n;
  free(d);
}
void prof__pyframes_remote_resolve(pid_t pid, const uintptr_t *tags, int n, prof__pyframe_desc *d, int nd,
                                   prof__tw *tw) {
  (void)pid, (void)tags, (void)n, (void)tw;
  prof__pyframes_desc_free(d, nd);
}

#endif
