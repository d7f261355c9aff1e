#!/usr/bin/env python3
"""bench_python.py — cost of the Python binding, measured in one run.

Prints `name  value  baseline  ratio` lines:
  - one `with mlprof.range(...)` round trip (Python -> C push and pop) against
    torch.autograd.profiler.record_function (with the torch profiler off), and
    against an empty `with` block, which is the floor for any context manager;
  - the step time of an instrumented MLP (forward/backward hooks on every
    module) against the same model uninstrumented.
Needs MLPROF_LIBRARY (or an installed libmlprof) and python/ on PYTHONPATH.
"""
import contextlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mlprof  # noqa: E402


def per_call(fn, n):
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter_ns()
        fn(n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def line(name, value, base, unit):
    print("%-34s %12.1f %12.1f %8.3f  %s" % (name, value, base, value / base if base else 0, unit))


def main():
    d = tempfile.mkdtemp()
    mlprof.init(output=d + "/", report=False, ring_kb=65536)
    r = mlprof.range("bench")

    def ours(n):
        for _ in range(n):
            with r:
                pass

    @contextlib.contextmanager
    def empty_cm():
        yield

    null = contextlib.nullcontext()

    def floor(n):
        for _ in range(n):
            with null:
                pass

    n = 100000
    ours_ns = per_call(ours, n)
    print("%-34s %12s %12s %8s  %s" % ("name", "value", "baseline", "ratio", "unit"))
    line("range_roundtrip_vs_empty_with", ours_ns, per_call(floor, n), "ns/range")
    try:
        import torch
        from torch.autograd.profiler import record_function

        def theirs(n):
            for _ in range(n):
                with record_function("bench"):
                    pass
        line("range_roundtrip_vs_record_function", ours_ns, per_call(theirs, n // 4), "ns/range")
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(256, 256), torch.nn.ReLU())])
        x = torch.randn(64, 256)

        def step(m):
            m.zero_grad()
            m(x).sum().backward()

        def timed(m, steps=60):
            for _ in range(5):
                step(m)
            t0 = time.perf_counter_ns()
            for _ in range(steps):
                step(m)
            return (time.perf_counter_ns() - t0) / steps

        base = timed(model)
        import mlprof.torch as mt
        mt.instrument(model)
        inst = timed(model)
        line("instrumented_mlp_step", inst / 1000, base / 1000, "us/step vs uninstrumented")
    except ImportError:
        print("torch not installed: record_function and model comparisons skipped")
    print("lost events:", mlprof.stats()["events_lost"])


if __name__ == "__main__":
    main()
