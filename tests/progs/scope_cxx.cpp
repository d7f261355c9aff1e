// scope_cxx.cpp — a C++ program using mlprof.hpp (mlprof::Step,
// mlprof::Range) and PROF_SCOPE, for test_scope.c, which reads its trace
// back: two steps, each with nested ranges, one range closed by an
// exception passing through it, one PROF_SCOPE closed the same way.
//   scope_cxx TRACE_PATH   -> prints "misuse N" (or "disabled"), exit 0
#include <cstdio>
#include <stdexcept>

#include <mlprof.hpp>

static int work(int i) {
  mlprof::Range r("work");
  if (i == 1) throw std::runtime_error("second step");
  return i;
}

static void scoped_throw(int i) {
  PROF_SCOPE("scoped_throw");
  if (i == 1) throw 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: scope_cxx TRACE_PATH\n");
    return 2;
  }
  prof_config cfg = prof_config_default();
  cfg.output = argv[1];
  cfg.report = 0;
  int rc = prof_init(&cfg);
  if (rc == PROF_EDISABLED) {
    std::puts("disabled");
  } else if (rc != 0) {
    std::fprintf(stderr, "scope_cxx: prof_init: %s\n", prof_strerror(rc));
    return 1;
  }
  for (int s = 0; s < 2; s++) {
    mlprof::Step step;
    mlprof::Range fwd("forward");
    {
      mlprof::Range load("load", PROF_CAT_DATA);
    }
    try {
      work(s);
    } catch (const std::exception &) {
      prof_mark("caught");
    }
    try {
      scoped_throw(s);
    } catch (int) {
      prof_mark("caught_scope");
    }
    PROF_SCOPE_CAT("tail", PROF_CAT_IO);
  }
  {
    mlprof::Step outer;
    mlprof::Step inner; // a step is already open: status() != 0, leaves it alone
    if (outer.status() != rc || inner.status() != (rc ? rc : PROF_ESTATE)) {
      std::fprintf(stderr, "scope_cxx: step status %d %d\n", outer.status(), inner.status());
      return 1;
    }
  }
  prof_stats st = prof_stats();
  st.size = sizeof st;
  prof_stats_get(&st);
  std::printf("misuse %llu\n", (unsigned long long)st.misuse);
  return prof_shutdown() == 0 ? 0 : 1;
}
