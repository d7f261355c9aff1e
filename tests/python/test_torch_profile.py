"""torch.profiler's way of working on mlprof, with Debian's torch:
mlprof.torch.profile with a schedule calls on_trace_ready once per cycle,
each cycle's trace holds exactly its active steps; p.table() names the
matmul operators and the ranges; export_chrome_trace writes a Chrome
trace; without a schedule the handler runs once, at the end, with every
step. torch's record_function blocks become ranges with the binding
imported (before or after torch) and under `mlprof run` of an unmodified
script (which still runs the sitecustomize it had). mlprof.__version__ is
the project's, and python/ installs offline with pip.

Run by ctest with MLPROF_LIBRARY, MLPROF_PYTHON_DIR, MLPROF_CLI and
MLPROF_PROJECT_VERSION set. Each scenario runs in a child interpreter.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.environ.get("MLPROF_PYTHON_DIR", os.path.join(HERE, "..", "..", "python"))
CLI = os.environ.get("MLPROF_CLI")
LIB = os.environ.get("MLPROF_LIBRARY")


def run(args, env=None, pythonpath=PYDIR, cwd=None):
    e = dict(os.environ, MLPROF_SAMPLE_HZ="499")
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PRELOAD"):
        e.pop(k, None)
    if pythonpath:
        e["PYTHONPATH"] = pythonpath + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=600, cwd=cwd)


def report_json(trace):
    r = subprocess.run([CLI, "report", "--format", "json", trace], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("mlprof report %s: %s" % (trace, r.stderr))
    return json.loads(r.stdout)


TRAIN = """
import json, sys, torch
import mlprof, mlprof.torch as mt
mlprof.init(output=sys.argv[1], report=False)
torch.manual_seed(0); torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 256), torch.randint(0, 10, (32,))
calls = []
def handler(p):
    calls.append({"step": p.step_num, "trace": p.trace_path})
    p.export_chrome_trace(p.trace_path + ".chrome.json")
kind = sys.argv[2]
sched = {"mlprof": mt.schedule(wait=1, warmup=1, active=2, repeat=2),
         "torch": torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
         "none": None}[kind]
with mt.profile(schedule=sched, on_trace_ready=handler, activities=[torch.profiler.ProfilerActivity.CPU]) as p:
    for i in range(10):
        with torch.profiler.record_function("train_step"):
            for _ in range(8):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad(); loss.backward(); opt.step()
        p.step()
print("CALLS " + json.dumps(calls))
print(p.table(row_limit=10))
"""


class ProfileLoop(unittest.TestCase):
    def loop(self, kind):
        d = tempfile.mkdtemp(prefix="torch_profile.")
        self.addCleanup(shutil.rmtree, d, True)
        trace = os.path.join(d, "t.mlpt")
        r = run([sys.executable, "-c", TRAIN, trace, kind])
        self.assertEqual(r.returncode, 0, r.stderr)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("CALLS ")][0]
        return json.loads(line[6:]), r.stdout

    def check_cycles(self, calls):
        self.assertEqual(len(calls), 2, calls)  # once per cycle, repeat=2
        for k, c in enumerate(calls):
            self.assertTrue(c["trace"].endswith(".capture%d.mlpt" % (k + 1)), c)
            r = report_json(c["trace"])
            self.assertTrue(r["trace"]["complete"])
            # cycle k: steps 4k .. 4k+3, of which 4k+2 and 4k+3 are active
            self.assertEqual([s["number"] for s in r["steps"]["per_step"]], [4 * k + 2, 4 * k + 3])
            self.assertIn("train_step", [x["name"] for x in r["ranges"]])
            with open(c["trace"] + ".chrome.json") as f:
                chrome = json.load(f)
            self.assertIn("train_step", [e.get("name") for e in chrome["traceEvents"]])
        # a handler runs when its cycle is written, never before the cycle ends
        self.assertGreaterEqual(calls[0]["step"], 3)
        self.assertGreaterEqual(calls[1]["step"], 7)

    def test_mlprof_schedule_one_trace_per_cycle(self):
        calls, out = self.loop("mlprof")
        self.check_cycles(calls)
        self.assertIn("aten::addmm", out)  # p.table(): operators ...
        self.assertIn("train_step", out)   # ... and ranges
        self.assertIn("Called from", out)

    def test_torch_schedule_works_too(self):
        calls, _ = self.loop("torch")
        self.check_cycles(calls)

    def test_no_schedule_one_trace_at_the_end(self):
        calls, _ = self.loop("none")
        self.assertEqual(len(calls), 1, calls)
        # the last step() opened step 10, which the end of the `with` closed
        self.assertEqual(calls[0]["step"], 10)
        r = report_json(calls[0]["trace"])
        self.assertEqual([s["number"] for s in r["steps"]["per_step"]], list(range(11)))


RECORD = """
import sys
{first}
mlprof.init(output=sys.argv[1], report=False)
torch.set_num_threads(1)
a = torch.randn(128, 128)
with torch.autograd.profiler.record_function("outer_block"):
    with torch.profiler.record_function("inner_block"):
        for _ in range(50):
            a @ a
mlprof.shutdown()
"""


class RecordFunction(unittest.TestCase):
    def ranges_with_binding(self, first):
        d = tempfile.mkdtemp(prefix="record_function.")
        self.addCleanup(shutil.rmtree, d, True)
        trace = os.path.join(d, "t.mlpt")
        r = run([sys.executable, "-c", RECORD.format(first=first), trace])
        self.assertEqual(r.returncode, 0, r.stderr)
        return {x["name"]: x for x in report_json(trace)["ranges"]}

    def test_binding_imported_before_torch(self):
        ranges = self.ranges_with_binding("import mlprof, torch")
        self.assertIn("outer_block", ranges)
        self.assertIn("inner_block", ranges)
        self.assertEqual(ranges["inner_block"]["count"], 1)
        # nested: the outer block's self time excludes the inner one's
        self.assertLess(ranges["outer_block"]["self_ns"], ranges["inner_block"]["total_ns"])

    def test_binding_imported_after_torch(self):
        ranges = self.ranges_with_binding("import torch, mlprof")
        self.assertIn("outer_block", ranges)
        self.assertIn("inner_block", ranges)

    def test_unmodified_script_under_mlprof_run(self):
        d = tempfile.mkdtemp(prefix="record_function_run.")
        self.addCleanup(shutil.rmtree, d, True)
        script = os.path.join(d, "script.py")
        with open(script, "w") as f:
            f.write("import torch\n"
                    "a = torch.randn(128, 128)\n"
                    "with torch.profiler.record_function('my_block'):\n"
                    "    for _ in range(50):\n"
                    "        a @ a\n"
                    "ds = torch.utils.data.TensorDataset(torch.randn(64, 4))\n"
                    "for b in torch.utils.data.DataLoader(ds, batch_size=8):\n"
                    "    pass\n"
                    "print('done')\n")
        # a sitecustomize of the user's own still runs
        site = os.path.join(d, "site")
        os.mkdir(site)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write("import builtins\nbuiltins.MLPROF_TEST_SITE = 1\n")
        out = os.path.join(d, "t")
        r = run([CLI, "run", "-q", "--no-report", "--library", LIB, "-o", out, "--", sys.executable, script],
                pythonpath=site)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("done", r.stdout)
        ranges = {x["name"]: x for x in report_json(out)["ranges"]}
        self.assertIn("my_block", ranges)
        loader = [x for n, x in ranges.items() if n.startswith("enumerate(DataLoader)")]
        self.assertEqual(len(loader), 1, sorted(ranges))
        self.assertEqual(loader[0]["category"], "data")
        self.assertEqual(loader[0]["count"], 9)  # 8 batches and the fetch that ends the loop
        # the user's sitecustomize ran (the module name it runs under is ours)
        chk = run([CLI, "run", "-q", "--no-report", "--library", LIB, "-o", out + "2", "--", sys.executable, "-c",
                   "import builtins; print('SITE', getattr(builtins, 'MLPROF_TEST_SITE', 0))"], pythonpath=site)
        self.assertIn("SITE 1", chk.stdout, chk.stderr)

    def test_off_with_mlprof_torch_ranges_0(self):
        d = tempfile.mkdtemp(prefix="record_function_off.")
        self.addCleanup(shutil.rmtree, d, True)
        out = os.path.join(d, "t")
        code = "import torch\nwith torch.profiler.record_function('my_block'):\n    pass\n"
        r = run([CLI, "run", "-q", "--no-report", "--library", LIB, "-o", out, "--", sys.executable, "-c", code],
                env={"MLPROF_TORCH_RANGES": "0"}, pythonpath=None)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("my_block", [x["name"] for x in report_json(out)["ranges"]])


class Package(unittest.TestCase):
    def test_version_is_the_projects(self):
        r = run([sys.executable, "-c", "import mlprof; print(mlprof.__version__)"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), os.environ["MLPROF_PROJECT_VERSION"])

    def test_pip_installs_offline(self):
        if run([sys.executable, "-m", "pip", "--version"]).returncode != 0:
            self.skipTest("no pip")
        d = tempfile.mkdtemp(prefix="pip_install.")
        self.addCleanup(shutil.rmtree, d, True)
        src = os.path.join(d, "src")
        shutil.copytree(PYDIR, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        target = os.path.join(d, "target")
        r = run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                 "--disable-pip-version-check", "--target", target, src], pythonpath=None, cwd=d)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run([sys.executable, "-c", "import mlprof, mlprof.torch as mt; print(mlprof.__file__, mlprof.__version__, "
                 "mt.profile.__name__, mt.schedule.__name__)"], pythonpath=target, cwd=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(os.path.join(target, "mlprof")), r.stdout)
        self.assertIn(os.environ["MLPROF_PROJECT_VERSION"] + " profile schedule", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
