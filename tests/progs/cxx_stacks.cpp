// cxx_stacks.cpp — a C++ program for the symbol tests (tests/stacks.sh):
// a member function template in a namespace, a function the compiler
// inlines into it, and time in libm, so a report must demangle names, name
// inlined frames, give the hot loop's line, and name libm's internal
// functions from their separate debug information.
#include <cmath>
#include <cstdio>
#include <ctime>

namespace ns {

static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline __attribute__((always_inline)) double inlined_kernel(double x, int n) {
  for (int i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; // HOT LINE
  return x;
}

class Klass {
 public:
  template <typename T> __attribute__((noinline)) T method(T x, double seconds);
};

template <typename T> T Klass::method(T x, double seconds) {
  double t0 = cpu_now();
  while (cpu_now() - t0 < seconds) x = inlined_kernel(x, 200000);
  return x;
}

__attribute__((noinline)) double math_loop(double seconds) {
  volatile double acc = 0;
  double t0 = cpu_now();
  while (cpu_now() - t0 < seconds)
    for (int i = 0; i < 20000; i++) acc = acc + std::sin((double)i * 1e-3) + std::exp(-(double)i * 1e-6);
  return acc;
}

} // namespace ns

int main() {
  ns::Klass k;
  double a = k.method<double>(1.0, 0.6);
  double b = ns::math_loop(0.4);
  std::printf("%s\n", a > 0 && b != 0 ? "ok" : "odd");
  return 0;
}
