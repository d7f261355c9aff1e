#!/usr/bin/env python3
"""bench_torch.py — what profiling costs a dispatch-heavy PyTorch loop, and
the operator view next to torch.profiler's table, measured in one run.

The workload: an MLP (256 -> W -> W -> 10, ReLU; W = --width, 128), batch 32, one thread,
SGD; each configuration runs in its own process and times its own training
loop (import and start-up left out), rounds interleaved so that a change in
the machine's load hits every configuration alike:

  bare            the script alone
  mlprof run      `mlprof run` (library preloaded: CPU sampling, memory
                  sampling, record_function ranges, resources)
  torch.profiler  torch.profiler.profile(activities=[CPU]) around the loop
  mlprof.profile  the binding's mlprof.torch.profile with a schedule

Both the wall time and the CPU time of the whole process (every thread:
the profiler's writer and sampling included) are given; on a shared,
loaded machine the CPU time is the steadier of the two.

Prints `name  value  baseline  ratio` lines (ms per step, baseline bare),
then torch.profiler's top operators by self CPU time and mlprof's operator
view of the same script. Never fails.

  MLPROF_LIBRARY=build/libmlprof.so python3 bench/bench_torch.py [--steps N] [--rounds R]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORK = r'''
import os, sys, time, torch
steps, mode, out, w = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.manual_seed(0); torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, w), torch.nn.ReLU(), torch.nn.Linear(w, w), torch.nn.ReLU(),
                            torch.nn.Linear(w, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 256), torch.randint(0, 10, (32,))
def step():
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
for _ in range(20):
    step()  # warm-up
t0, c0 = time.perf_counter(), time.process_time()
if mode == "torch":
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as p:
        for _ in range(steps):
            step()
    t, c = time.perf_counter() - t0, time.process_time() - c0
    with open(out, "w") as f:
        f.write(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
elif mode == "binding":
    import mlprof, mlprof.torch as mt
    with mt.profile(schedule=mt.schedule(wait=5, warmup=5, active=10, repeat=0)) as p:
        for _ in range(steps):
            step()
            p.step()
    t, c = time.perf_counter() - t0, time.process_time() - c0
else:
    for _ in range(steps):
        step()
    t, c = time.perf_counter() - t0, time.process_time() - c0
print("STEP_MS %.6f %.6f" % (t * 1e3 / steps, c * 1e3 / steps))
'''


LOADER = r'''
import sys, time, torch
def burn(i):
    s = 0
    for k in range(30000):
        s += (k * i) % 7
    return s
class Burn(torch.utils.data.Dataset):
    def __len__(self):
        return int(sys.argv[1])
    def __getitem__(self, i):
        return torch.full((16,), float(burn(i) % 3))
torch.set_num_threads(1)
model = torch.nn.Linear(16, 1)
t0, c0 = time.perf_counter(), time.process_time()
for x in torch.utils.data.DataLoader(Burn(), batch_size=8, num_workers=2):
    model(x).sum().backward()
t, c = time.perf_counter() - t0, time.process_time() - c0
print("STEP_MS %.6f %.6f" % (t * 1e3, c * 1e3))
'''


def run(cmd, env):
    """(wall ms, CPU ms of the whole process) per step, or None."""
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    for ln in r.stdout.splitlines():
        if ln.startswith("STEP_MS "):
            return float(ln.split()[1]), float(ln.split()[2])
    sys.stderr.write("bench_torch: %s failed: %s\n" % (cmd[:4], r.stderr[-400:]))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--width", type=int, default=128, help="hidden width (128: dispatch-heavy; 512: BLAS-heavy)")
    ap.add_argument("--mlprof", default=os.path.join(ROOT, "build", "mlprof"))
    ap.add_argument("--dataloader", type=int, default=0, metavar="N",
                    help="instead: a DataLoader-bound run of N items (2 forked workers), bare / mlprof run "
                         "without and with worker sampling (MLPROF_WORKERS)")
    args = ap.parse_args()
    lib = os.environ.get("MLPROF_LIBRARY", os.path.join(ROOT, "build", "libmlprof.so"))
    py = sys.executable
    d = tempfile.mkdtemp(prefix="bench_torch.")
    script = os.path.join(d, "work.py")
    with open(script, "w") as f:
        f.write(WORK)
    env = dict(os.environ, MLPROF_LIBRARY=lib, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    for k in ("LD_PRELOAD", "MLPROF_OUTPUT", "MLPROF_PRELOAD"):
        env.pop(k, None)
    table = os.path.join(d, "torch_table.txt")
    trace = os.path.join(d, "run")
    n, w = str(args.steps), str(args.width)
    if args.dataloader:
        return loader_bench(args, py, lib, d, env)
    configs = [
        ("bare", [py, script, n, "bare", "-", w]),
        ("mlprof run", [args.mlprof, "run", "-q", "--no-report", "--library", lib, "-o", trace, "--",
                        py, script, n, "bare", "-", w]),
        ("torch.profiler", [py, script, n, "torch", table, w]),
        ("mlprof.profile", [py, script, n, "binding", "-", w]),
    ]
    times = {name: [] for name, _ in configs}
    for _ in range(args.rounds):
        for name, cmd in configs:
            if name == "mlprof run" and os.path.exists(trace):
                os.unlink(trace)
            e = dict(env, MLPROF_OUTPUT=os.path.join(d, "binding.mlpt"), MLPROF_REPORT="0") \
                if name == "mlprof.profile" else env
            t = run(cmd, e)
            if t is not None:
                times[name].append(t)
    print("%-34s %12s %12s %8s  %s" % ("name", "value", "baseline", "ratio", "unit"))
    for k, what in ((0, "wall"), (1, "cpu")):
        base = statistics.median(x[k] for x in times["bare"]) if times["bare"] else 0
        for name, _ in configs:
            if times[name]:
                v = statistics.median(x[k] for x in times[name])
                print("%-34s %12.4f %12.4f %8.3f  %s" % (
                    "mlp_b32_%s_%s" % (what, name.replace(" ", "_").replace(".", "_")), v, base,
                    v / base if base else 0, "ms/step, %s (median of %d)" % (
                        "wall" if k == 0 else "CPU of the whole process", len(times[name]))))
    if os.path.exists(table):
        print("\ntorch.profiler, top operators by self CPU time (%d steps):" % args.steps)
        print(open(table).read())
    if os.path.exists(trace):
        r = subprocess.run([args.mlprof, "report", "-f", "json", trace], capture_output=True, text=True)
        try:
            fn = json.loads(r.stdout)["functions"]
            print("mlprof operator view of the same script (%d CPU samples, %.0f%% inside an operator):"
                  % (fn["samples"], fn.get("operators_pct", 0)))
            print("  %-30s %8s %8s  %s" % ("operator", "self %", "total %", "called from"))
            for o in fn.get("operators", [])[:10]:
                py_ = o.get("python") or {}
                print("  %-30s %7.1f%% %7.1f%%  %s:%s" % (o["name"], o["self_pct"], o["total_pct"],
                                                          os.path.basename(py_.get("file", "?")), py_.get("line", "")))
        except (ValueError, KeyError) as e:
            print("mlprof report failed: %s" % e)
    shutil.rmtree(d, ignore_errors=True)


def loader_bench(args, py, lib, d, env):
    script = os.path.join(d, "loader.py")
    with open(script, "w") as f:
        f.write(LOADER)
    trace = os.path.join(d, "loader")
    run_cmd = [args.mlprof, "run", "-q", "--no-report", "--library", lib, "-o", trace, "--", py, script,
               str(args.dataloader)]
    configs = [("bare", [py, script, str(args.dataloader)], env),
               ("mlprof run, workers off", run_cmd, dict(env, MLPROF_WORKERS="0")),
               ("mlprof run, workers on", run_cmd, env)]
    times = {name: [] for name, _, _ in configs}
    for _ in range(args.rounds):
        for name, cmd, e in configs:
            if os.path.exists(trace):
                os.unlink(trace)
            t = run(cmd, e)
            if t is not None:
                times[name].append(t)
    print("%-34s %12s %12s %8s  %s" % ("name", "value", "baseline", "ratio", "unit"))
    base = statistics.median(x[0] for x in times["bare"]) if times["bare"] else 0
    off = statistics.median(x[0] for x in times["mlprof run, workers off"]) if times["mlprof run, workers off"] else 0
    for name, _, _ in configs:
        if times[name]:
            v = statistics.median(x[0] for x in times[name])
            print("%-34s %12.1f %12.1f %8.3f  %s" % ("loader_wall_" + name.replace(" ", "_").replace(",", ""), v,
                                                    base, v / base if base else 0, "ms (median of %d)" % len(times[name])))
    if times["mlprof run, workers on"] and off:
        v = statistics.median(x[0] for x in times["mlprof run, workers on"])
        print("%-34s %12.1f %12.1f %8.3f  %s" % ("loader_wall_workers_on_vs_off", v, off, v / off, "ms"))
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
