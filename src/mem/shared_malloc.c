/* shared_malloc.c — the allocator interposer (shared library only).
 *
 * libmlprof.so defines malloc, free, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
 * malloc_usable_size. Whether it is preloaded or linked, the program's
 * calls land here; each forwards to the next definition (dlsym RTLD_NEXT,
 * normally glibc) and is accounted by the inline hot path of mem.h.
 *
 * Traps handled:
 *  - bootstrap: dlsym itself allocates (calloc for its error state) before
 *    the real functions are known; those requests are served from a static
 *    arena whose blocks are never freed for real (free ignores them,
 *    realloc copies them out, malloc_usable_size reads their header).
 *  - re-entrancy: the profiler's own allocations (rings, names, stacks,
 *    libunwind, the writer thread) are skipped by a thread-local guard and
 *    by the caller's address (code inside libmlprof is never counted).
 *  - signals: every entry point marks the thread as inside the allocator,
 *    so the CPU sampler's handler does not unwind with libunwind there (it
 *    may allocate and deadlock on the held lock). malloc and free, with
 *    glibc next on x86-64, record their return-address slot instead
 *    (prof__alloc_at) and jump into glibc, so that forwarding costs no
 *    second call; the others, and every allocator on other machines, count
 *    prof__in_alloc up and down around the call.
 *  - cost: malloc and free account inline in the common case (a thread
 *    with its counter slot, outside the profiler, glibc next); every other
 *    case goes through mem.h's general path.
 *  - fork, thread exit, exit-time frees: the hot path needs no set-up and
 *    keeps forwarding and counting in every state; events are written only
 *    while the session runs (a forked child's session is off).
 * Blocks are not changed: the pointers, alignment and malloc_usable_size
 * are the real allocator's.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard.h"
#include "core/producer.h"
#include "mem/glibc_chunk.h"
#include "mem/mem.h"

#define RA() __builtin_return_address(0)
#define BOOT_BYTES (256u * 1024u)

typedef struct real_fns {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  void *(*memalign)(size_t, size_t);
  int (*posix_memalign)(void **, size_t, size_t);
  void *(*aligned_alloc)(size_t, size_t);
  void *(*valloc)(size_t);
  void *(*pvalloc)(size_t);
  size_t (*usable)(void *);
} real_fns;

/* glibc's own entry points: the fallback when dlsym finds nothing. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* This library's own code: [ELF header, end of text). */
extern char __ehdr_start[] __attribute__((visibility("hidden")));
extern char etext[] __attribute__((visibility("hidden")));

static real_fns real;
static int ready;
static int glibc_next; /* the next allocator is glibc's: sizes come from chunk headers */
static int use_mark;   /* malloc and free mark the call (prof__alloc_at) instead of prof__in_alloc */
static __thread int resolving PROF_MEM_IE;

static _Alignas(64) unsigned char boot[BOOT_BYTES];
static size_t boot_used;

/* ---- bootstrap arena ----------------------------------------------------- */

static int is_boot(const void *p) {
  return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_BYTES;
}

static void *boot_alloc(size_t n, size_t align) {
  if (align < 16) align = 16;
  size_t old = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), off, end;
  do {
    off = (old + sizeof(size_t) + align - 1) & ~(align - 1);
    end = off + n;
    if (end > BOOT_BYTES || end < off) {
      errno = ENOMEM;
      return NULL;
    }
  } while (!__atomic_compare_exchange_n(&boot_used, &old, end, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  memcpy(boot + off - sizeof(size_t), &n, sizeof n);
  return boot + off;
}

static size_t boot_size(const void *p) {
  size_t n;
  memcpy(&n, (const unsigned char *)p - sizeof n, sizeof n);
  return n;
}

/* ---- resolving the real allocator ---------------------------------------- */

#define LOOKUP(field, name, fallback)                 \
  do {                                                \
    void *s_ = dlsym(RTLD_NEXT, name);                \
    r.field = s_ ? (__typeof__(r.field))s_ : fallback; \
  } while (0)

static int posix_memalign_fallback(void **out, size_t align, size_t n) {
  void *p = __libc_memalign(align, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

static void *aligned_alloc_fallback(size_t align, size_t n) { return __libc_memalign(align, n); }

/* ---- the mark of malloc and free ---------------------------------------------
 * glibc's malloc and free call nothing outside libc and never re-enter
 * malloc: a sample that lands in libc while the marked return-address slot
 * still holds its return address is inside them (prof__in_allocator).
 * x86-64 only: the return address is on the stack at the call. */
#if defined(__x86_64__)
#define MARK_SUPPORTED 1
#else
#define MARK_SUPPORTED 0
#endif

typedef struct range_find {
  uintptr_t pc, lo, hi;
} range_find;

static int range_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  range_find *f = arg;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (a < lo) lo = a;
    if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
  }
  if (f->pc < lo || f->pc >= hi) return 0;
  f->lo = lo;
  f->hi = hi;
  return 1;
}

/* The mapped extent of the library holding `pc` (libc) becomes the range in
 * which a sample may be inside the allocator. */
static int mark_range(uintptr_t pc) {
  range_find f = {pc, 0, 0};
  if (!dl_iterate_phdr(range_cb, &f) || f.hi <= f.lo) return 0;
  __atomic_store_n(&prof__alloc_text_lo, f.lo, __ATOMIC_RELAXED);
  __atomic_store_n(&prof__alloc_text_hi, f.hi, __ATOMIC_RELAXED);
  return 1;
}

/* Record this call's return-address slot (the function keeps a frame
 * pointer for it) before jumping into the allocator. */
#define MARK()                                                                        \
  do {                                                                                \
    prof__alloc_at.ra = (uintptr_t)RA();                                              \
    prof__alloc_at.slot = (uintptr_t)__builtin_frame_address(0) + sizeof(void *);   \
  } while (0)

/* Returns 1 once the real functions are known; 0 while resolving (the
 * caller serves the request from the arena). */
static int resolve(void) {
  if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) return 1;
  if (resolving) return 0;
  resolving = 1;
  real_fns r;
  LOOKUP(malloc, "malloc", __libc_malloc);
  LOOKUP(free, "free", __libc_free);
  LOOKUP(calloc, "calloc", __libc_calloc);
  LOOKUP(realloc, "realloc", __libc_realloc);
  LOOKUP(memalign, "memalign", __libc_memalign);
  LOOKUP(posix_memalign, "posix_memalign", posix_memalign_fallback);
  LOOKUP(aligned_alloc, "aligned_alloc", aligned_alloc_fallback);
  LOOKUP(valloc, "valloc", __libc_valloc);
  LOOKUP(pvalloc, "pvalloc", __libc_pvalloc);
  LOOKUP(usable, "malloc_usable_size", NULL);
  resolving = 0;
  if (!r.usable) return 0; /* cannot happen with glibc; stay on the arena */
  real = r;
  glibc_next = r.malloc == __libc_malloc && r.free == __libc_free && r.calloc == __libc_calloc &&
               r.realloc == __libc_realloc && r.memalign == __libc_memalign;
  int mark = MARK_SUPPORTED && glibc_next && mark_range((uintptr_t)r.malloc);
  prof__mem_text_lo = (uintptr_t)__ehdr_start;
  prof__mem_text_hi = (uintptr_t)etext;
  prof__mem_mode_resolve();
  prof__mem_interposed = 1;
  __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&use_mark, mark, __ATOMIC_RELEASE);
  return 1;
}

/* The interposer is resolved at load time when this library's malloc is the
 * process's (preloaded, or linked ahead of the C library): the call below
 * goes through the process's malloc, which is this one then. Otherwise the
 * interposer would wait for the program's first allocation, and a program
 * that had not allocated before prof_init (a preloaded one: the library
 * starts from its constructor) got a trace saying the heap is not tracked,
 * its baseline missing. A library opened later with dlopen is not the
 * process's malloc: the call reaches the C library's and changes nothing.
 * First among this library's constructors (preload_start calls prof_init). */
__attribute__((constructor(101))) static void resolve_at_load(void) {
  void *volatile p = malloc(1); /* volatile: the compiler may not drop the pair */
  free(p);
}

/* ---- the interposed functions -------------------------------------------- */

/* Usable size of a live block of the real allocator: one load from glibc's
 * chunk header, or the allocator's own malloc_usable_size(). */
static inline size_t usable_of(void *p) {
  return PROF_LIKELY(glibc_next) ? prof__glibc_usable(p) : real.usable(p);
}

/* mem.h's general accounting, out of line: every wrapper but the fast
 * paths of malloc and free, and those when a case is unusual (no counter
 * slot yet, inside the profiler). It runs outside the allocator's call; the
 * event paths behind it set prof__in_alloc themselves. */
__attribute__((noinline)) static void *account_alloc(void *p, size_t n, const void *ra) {
  prof__mem_on_alloc(p, n, usable_of(p), ra);
  return p;
}

__attribute__((noinline)) static void account_free(void *p, const void *ra) {
  prof__mem_on_free(p, usable_of(p), ra);
}

static inline void *account(void *p, size_t n, const void *ra) {
  if (PROF_LIKELY(p != NULL) && prof__mem_mode) return account_alloc(p, n, ra);
  return p;
}

__attribute__((noinline)) static void *malloc_counted(size_t n, const void *ra) {
  prof__in_alloc++;
  void *p = real.malloc(n);
  prof__in_alloc--;
  return account(p, n, ra);
}

/* Code of this library: its own allocations outside the guard are not the
 * program's. Link-time bounds, no load. */
static inline int from_self(const void *ra) {
  return (uintptr_t)ra - (uintptr_t)__ehdr_start < (uintptr_t)etext - (uintptr_t)__ehdr_start;
}

/* The common case of mem.h's accounting, for glibc as the next allocator
 * (sizes from chunk headers): a thread with its counter slot, outside the
 * profiler. Anything else takes mem.h's general path. */
static inline int fast_ok(const prof__mem_tc *tc, const void *ra) {
  return PROF_LIKELY((uintptr_t)tc > 1) && PROF_LIKELY(!prof__guard_depth) && !from_self(ra);
}

/* malloc before set-up, or without the mark. */
__attribute__((noinline)) static void *malloc_slow(size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(n, 16);
  return malloc_counted(n, ra);
}

PROF_API void *malloc(size_t n) {
  if (PROF_UNLIKELY(!__atomic_load_n(&use_mark, __ATOMIC_ACQUIRE))) return malloc_slow(n, RA());
  MARK();
  int mode = prof__mem_mode;
  if (!mode) return real.malloc(n); /* forwarding only: a tail call */
  void *p = real.malloc(n);
  prof__mem_tc *tc = prof__mem_self;
  const void *ra = RA();
  if (PROF_UNLIKELY(!p) || !fast_ok(tc, ra)) return account(p, n, ra);
  prof__mem_tc_alloc(tc, p, n, prof__glibc_usable(p), mode, ra);
  return p;
}

__attribute__((noinline)) static void free_counted(void *p, const void *ra) {
  if (prof__mem_mode) account_free(p, ra);
  prof__in_alloc++;
  real.free(p);
  prof__in_alloc--;
}

/* free before set-up, or without the mark. */
__attribute__((noinline)) static void free_slow(void *p, const void *ra) {
  if (is_boot(p)) return;
  if (PROF_UNLIKELY(!ready) && !resolve()) return; /* not ours to free yet */
  free_counted(p, ra);
}

/* The accounting runs before the block can be reused by another thread. */
PROF_API void free(void *p) {
  if (!p) return;
  if (PROF_UNLIKELY(!__atomic_load_n(&use_mark, __ATOMIC_ACQUIRE))) return free_slow(p, RA());
  if (PROF_UNLIKELY(is_boot(p))) return;
  int mode = prof__mem_mode;
  if (mode) {
    prof__mem_tc *tc = prof__mem_self;
    const void *ra = RA();
    if (PROF_LIKELY(fast_ok(tc, ra))) {
      prof__mem_tc_free(tc, p, prof__glibc_usable(p));
      prof__mem_free_events(p, mode);
    } else {
      account_free(p, ra);
    }
  }
  MARK();
  return real.free(p); /* a tail call */
}

static inline void *calloc_body(size_t m, size_t n, const void *ra) {
  size_t total;
  if (__builtin_mul_overflow(m, n, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(total, 16); /* arena is zeroed */
  return account(real.calloc(m, n), total, ra);
}

PROF_API void *calloc(size_t m, size_t n) {
  prof__in_alloc++;
  void *r = calloc_body(m, n, RA());
  prof__in_alloc--;
  return r;
}

static void *realloc_from_boot(void *p, size_t n, const void *ra) {
  if (n == 0) return NULL;
  void *q = resolve() ? account(real.malloc(n), n, ra) : boot_alloc(n, 16);
  if (q) {
    size_t old = boot_size(p);
    memcpy(q, p, old < n ? old : n);
  }
  return q;
}

static void *realloc_impl(void *p, size_t n, const void *ra) {
  if (!p) {
    if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(n, 16);
    return account(real.malloc(n), n, ra);
  }
  if (is_boot(p)) return realloc_from_boot(p, n, ra);
  if (PROF_UNLIKELY(!ready) && !resolve()) return NULL;
  if (!prof__mem_mode) return real.realloc(p, n);
  size_t old_usable = usable_of(p);
  /* The FREE goes out before the block can be reused by another thread. */
  prof__mem_on_free(p, old_usable, ra);
  void *q = real.realloc(p, n);
  if (q) return account(q, n, ra);
  if (n != 0) prof__mem_on_alloc(p, old_usable, old_usable, ra); /* failed: p lives on */
  return NULL;
}

static inline void *realloc_body(void *p, size_t n, const void *ra) { return realloc_impl(p, n, ra); }

PROF_API void *realloc(void *p, size_t n) {
  prof__in_alloc++;
  void *r = realloc_body(p, n, RA());
  prof__in_alloc--;
  return r;
}

static inline void *reallocarray_body(void *p, size_t m, size_t n, const void *ra) {
  size_t total;
  if (__builtin_mul_overflow(m, n, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc_impl(p, total, ra);
}

PROF_API void *reallocarray(void *p, size_t m, size_t n) {
  prof__in_alloc++;
  void *r = reallocarray_body(p, m, n, RA());
  prof__in_alloc--;
  return r;
}

static inline int posix_memalign_body(void **out, size_t align, size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) {
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = boot_alloc(n, align);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
  }
  int rc = real.posix_memalign(out, align, n);
  if (rc == 0) account(*out, n, ra);
  return rc;
}

PROF_API int posix_memalign(void **out, size_t align, size_t n) {
  prof__in_alloc++;
  int r = posix_memalign_body(out, align, n, RA());
  prof__in_alloc--;
  return r;
}

static inline void *aligned_alloc_body(size_t align, size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(n, align);
  return account(real.aligned_alloc(align, n), n, ra);
}

PROF_API void *aligned_alloc(size_t align, size_t n) {
  prof__in_alloc++;
  void *r = aligned_alloc_body(align, n, RA());
  prof__in_alloc--;
  return r;
}

static inline void *memalign_body(size_t align, size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(n, align);
  return account(real.memalign(align, n), n, ra);
}

PROF_API void *memalign(size_t align, size_t n) {
  prof__in_alloc++;
  void *r = memalign_body(align, n, RA());
  prof__in_alloc--;
  return r;
}

static inline void *valloc_body(size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc(n, 4096);
  return account(real.valloc(n), n, ra);
}

PROF_API void *valloc(size_t n) {
  prof__in_alloc++;
  void *r = valloc_body(n, RA());
  prof__in_alloc--;
  return r;
}

static inline void *pvalloc_body(size_t n, const void *ra) {
  if (PROF_UNLIKELY(!ready) && !resolve()) return boot_alloc((n + 4095) & ~(size_t)4095, 4096);
  return account(real.pvalloc(n), n, ra);
}

PROF_API void *pvalloc(size_t n) {
  prof__in_alloc++;
  void *r = pvalloc_body(n, RA());
  prof__in_alloc--;
  return r;
}

PROF_API size_t malloc_usable_size(void *p) {
  if (!p) return 0;
  if (is_boot(p)) return boot_size(p);
  if (PROF_UNLIKELY(!ready) && !resolve()) return 0;
  return real.usable(p);
}
