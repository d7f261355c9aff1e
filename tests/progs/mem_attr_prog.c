/* mem_attr_prog.c — an ordinary program (it knows nothing of mlprof at
 * build time) whose allocations look like a PyTorch program's, for the
 * attribution of memory sites (tests/test_mem_attr.c): functions linked
 * under the names of c10's allocator, of an aten operator and of a C++
 * template, and a static constructor named as C++ compilers name them.
 * When run under `mlprof run` it marks one step and one range through the
 * preloaded library (dlsym), and prints nothing.
 *
 *   _GLOBAL__sub_I_registry   100000 bytes at start-up, kept   -> retained (library_init)
 *   setup_model               200000 bytes before the step     -> retained (startup)
 *   at::_ops::addmm::call     300000 bytes through c10::alloc_cpu in the step, in range "fc1", kept -> leak
 *   reg::Table<int>::insert    50000 bytes in the step, kept   -> leak
 *   scratch                   400000 bytes in the step, freed  (the heap peak)
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory") /* no tail call */

void *volatile keep[16];
static int nkeep;

void *alloc_cpu(size_t n) __asm__("_ZN3c109alloc_cpuEm");               /* c10::alloc_cpu(unsigned long) */
void op_addmm(void) __asm__("_ZN2at4_ops5addmm4callEv");                /* at::_ops::addmm::call() */
void table_insert(long n) __asm__("_ZN3reg5TableIiE6insertIlEEvT_");   /* void reg::Table<int>::insert<long>(long) */
void registry_init(void) __asm__("_GLOBAL__sub_I_registry");

NOINLINE void *alloc_cpu(size_t n) {
  void *p = malloc(n);
  if (p) memset(p, 1, n);
  return p;
}

NOINLINE void op_addmm(void) {
  keep[nkeep++] = alloc_cpu(300000);
  KEEP_FRAME();
}

NOINLINE void table_insert(long n) {
  keep[nkeep++] = malloc((size_t)n);
  KEEP_FRAME();
}

__attribute__((constructor)) NOINLINE void registry_init(void) {
  keep[nkeep++] = malloc(100000);
  KEEP_FRAME();
}

NOINLINE void setup_model(void) {
  keep[nkeep++] = malloc(200000);
  KEEP_FRAME();
}

NOINLINE void scratch(void) {
  char *volatile p = malloc(400000);
  if (p) p[0] = 1;
  free(p);
  KEEP_FRAME();
}

typedef int (*fn_int)(void);
typedef void (*fn_push)(const char *);
typedef void (*fn_void)(void);

int main(void) {
  fn_int start = (fn_int)dlsym(RTLD_DEFAULT, "prof_start"), stop = (fn_int)dlsym(RTLD_DEFAULT, "prof_stop");
  fn_push push = (fn_push)dlsym(RTLD_DEFAULT, "prof_range_push");
  fn_void pop = (fn_void)dlsym(RTLD_DEFAULT, "prof_range_pop");
  setup_model();
  if (start) start();
  if (push) push("fc1");
  op_addmm();
  table_insert(50000);
  scratch();
  if (pop) pop();
  if (stop) stop();
  return 0;
}
