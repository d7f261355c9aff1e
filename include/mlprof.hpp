/* mlprof.hpp — C++ scope types over the C API of mlprof.h.
 *
 *   #include <mlprof.hpp>
 *
 *   for (...) {
 *     mlprof::Step step;                          // prof_start() .. prof_stop()
 *     {
 *       mlprof::Range load("load", PROF_CAT_DATA);
 *       next_batch();
 *     }                                           // range closed here
 *     mlprof::Range fwd("forward");
 *     forward();
 *   }                                             // "forward", then the step, end here
 *
 * Both types are objects of a block: the constructor opens, the destructor
 * closes, also when an exception leaves the block. They allocate nothing,
 * cost what the C calls cost, cannot be copied, moved or created with
 * `new`, and follow the contracts of the C calls they wrap (thread safety,
 * names, nesting). Write them as named variables: `mlprof::Range("x");`
 * alone is a temporary that closes at once. PROF_SCOPE (mlprof.h) works in
 * C++ too. Needs C++11. Built with MLPROF_DISABLED they compile to nothing
 * like the rest of the API (mlprof.h, "Compile-out switch"). */
#ifndef MLPROF_HPP
#define MLPROF_HPP

#include <cstddef>

#include "mlprof.h"

namespace mlprof {

/* A named range of the calling thread: prof_range_push_cat() in the
 * constructor, prof_range_pop() in the destructor. `name` follows
 * prof_range_push()'s rule: a literal, or a string that outlives the range
 * and does not change. `category` is a PROF_CAT_* (default
 * PROF_CAT_COMPUTE). A NULL name is ignored and counted, and the destructor
 * then pops nothing. Destroy it on the thread that made it. */
class Range {
 public:
  explicit Range(const char *name, int category = PROF_CAT_COMPUTE) noexcept : open_(name != nullptr) {
    prof_range_push_cat(name, category);
  }
  ~Range() {
    if (open_) prof_range_pop();
  }
  Range(const Range &) = delete;
  Range &operator=(const Range &) = delete;
  static void *operator new(std::size_t) = delete;
  static void *operator new[](std::size_t) = delete;

 private:
  bool open_;
};

/* One profiled step: prof_start() in the constructor, prof_stop() in the
 * destructor when the start succeeded (status() == 0). A step already open,
 * or a profiler that is off, gives a non-zero status (prof_start()'s
 * error) and the destructor then leaves the open step alone. */
class Step {
 public:
  Step() noexcept : status_(prof_start()) {}
  ~Step() {
    if (status_ == 0) prof_stop();
  }
  /* prof_start()'s result: 0 or a negative PROF_E* error. */
  int status() const noexcept { return status_; }
  Step(const Step &) = delete;
  Step &operator=(const Step &) = delete;
  static void *operator new(std::size_t) = delete;
  static void *operator new[](std::size_t) = delete;

 private:
  int status_;
};

} /* namespace mlprof */

#endif /* MLPROF_HPP */
