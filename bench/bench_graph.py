#!/usr/bin/env python3
"""bench_graph.py — what recording the model graph costs, measured in one run.

mlprof.torch.instrument() records the module tree and the data flow between
modules once, at the first training forward, then removes its hooks. This
prints `name  value  baseline  ratio` lines:
  - graph_record_once_<model>: the one-time recording (module tree, autograd
    walk, prof_graph_node/edge calls) against one training step of the same
    model without any instrumentation;
  - step_after_graph_<model>: the steady step time of a model instrumented with
    the graph against the same model instrumented without it (module ranges
    on both): 1.0 means nothing is left per step.
Models: a 4-layer MLP and a generated 219-module residual model. Needs
MLPROF_LIBRARY (or an installed libmlprof) and python/ on PYTHONPATH.
"""
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import mlprof  # noqa: E402


def line(name, value, base, unit):
    print("%-34s %12.1f %12.1f %8.3f  %s" % (name, value, base, value / base if base else 0, unit))


def main():
    try:
        import torch
        import mlprof.torch as mt
        from train_graph import deep
    except ImportError as e:
        print("bench_graph: skipped (%s)" % e)
        return
    d = tempfile.mkdtemp()
    mlprof.init(output=d + "/", report=False, ring_kb=65536)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    models = {
        "mlp": lambda: (torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(256, 256),
                                                                          torch.nn.ReLU())]), 256),
        "deep219": lambda: (deep(w=64), 16),
    }
    print("%-34s %12s %12s %8s  %s" % ("name", "value", "baseline", "ratio", "unit"))
    for label, make in models.items():
        model, width = make()
        x = torch.randn(64, width)

        def step(m):
            m.zero_grad()
            m(x).sum().backward()

        def timed(m, steps=40):
            t0 = time.perf_counter_ns()
            for _ in range(steps):
                with mlprof.torch.step(m):
                    step(m)
            return (time.perf_counter_ns() - t0) / steps

        for _ in range(5):
            step(model)
        t0 = time.perf_counter_ns()
        for _ in range(20):
            step(model)
        plain = (time.perf_counter_ns() - t0) / 20
        mt.instrument(model)
        step(model)  # the first forward records the graph
        rec = model._mlprof_graph
        line("graph_record_once_" + label, rec.seconds * 1e6, plain / 1000,
             "us once vs one plain step (%d modules, %d edges)" % (len(list(model.modules())), len(rec.edges)))
        with_graph = min(timed(model) for _ in range(3))
        model2, _ = make()
        model2.load_state_dict(model.state_dict())
        mt.instrument(model2, graph=False)
        without = min(timed(model2) for _ in range(3))
        line("step_after_graph_" + label, with_graph / 1000, without / 1000, "us/step vs instrumented without graph")


if __name__ == "__main__":
    main()
