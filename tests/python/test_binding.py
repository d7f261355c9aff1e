"""Tests of the Python binding (python/mlprof) against the built libmlprof.

Run by ctest with MLPROF_LIBRARY pointing at the built library and
MLPROF_PYTHON_DIR at the python/ folder. Each scenario runs in a child
interpreter, since one process has one profiling session.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.environ.get("MLPROF_PYTHON_DIR", os.path.join(HERE, "..", "..", "python"))


def run_py(code, env=None, args=()):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + os.pathsep + e.get("PYTHONPATH", "")
    e["MLPROF_REPORT_WAIT"] = "1"  # the reports are read right after the exit
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code, *args], env=e,
                          capture_output=True, text=True, timeout=300)


def run_script(path, args, env):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + os.pathsep + e.get("PYTHONPATH", "")
    e["MLPROF_REPORT_WAIT"] = "1"  # the reports are read right after the exit
    e.update(env)
    return subprocess.run([sys.executable, path, *args], env=e,
                          capture_output=True, text=True, timeout=600)


def only_report(outdir):
    files = glob.glob(os.path.join(outdir, "*.report.json"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        return json.load(f)


class BindingBasics(unittest.TestCase):
    def test_missing_library_is_a_clear_import_error(self):
        r = run_py("import mlprof", env={"MLPROF_LIBRARY": "/nonexistent/libmlprof.so"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError", r.stderr)
        self.assertIn("MLPROF_LIBRARY", r.stderr)
        self.assertNotIn("Segmentation", r.stderr)

    def test_errors_raise_with_the_library_message(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_py(
                "import mlprof, sys\n"
                "mlprof.init(output=sys.argv[1] + '/t.mlpt', report=False)\n"
                "try:\n"
                "    mlprof.stop()\n"
                "except mlprof.MlprofError as e:\n"
                "    print('ERR', e.code, e)\n", args=(d,))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("ERR -2", r.stdout)
            self.assertIn("call not valid in the current state", r.stdout)

    def test_ranges_steps_decorator_and_counters_reach_the_report(self):
        with tempfile.TemporaryDirectory() as d:
            code = (
                "import mlprof, sys, time\n"
                "mlprof.init(output=sys.argv[1] + '/', report=True)\n"
                "@mlprof.function(category='data')\n"
                "def load():\n"
                "    time.sleep(0.004)\n"
                "@mlprof.range('work')\n"
                "def work():\n"
                "    s = 0\n"
                "    for i in range(20000): s += i\n"
                "for i in range(5):\n"
                "    with mlprof.step():\n"
                "        load()\n"
                "        work()\n"
                "        with mlprof.range('io', category='io'):\n"
                "            mlprof.mark('tick')\n"
                "        mlprof.counter('throughput', 100.0 + i)\n"
                "assert mlprof.step_count() == 5\n"
                "assert mlprof.stats()['events_lost'] == 0\n"
                "mlprof.shutdown()\n")
            r = run_py(code, args=(d,))
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = only_report(d)
            self.assertEqual(rep["steps"]["count"], 5)
            ranges = {x["name"]: x for x in rep["ranges"]}
            self.assertEqual(ranges["load"]["category"], "data")
            self.assertEqual(ranges["load"]["count"], 5)
            self.assertEqual(ranges["work"]["count"], 5)
            self.assertEqual(ranges["io"]["category"], "io")
            self.assertGreaterEqual(ranges["load"]["self_ns"], 5 * 4000000)

    def test_bad_category_is_a_value_error(self):
        r = run_py("import mlprof\nmlprof.range('x', category='gpu')")
        self.assertIn("ValueError", r.stderr)


class TorchTraining(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("python3-torch is not installed")

    def test_mlp_under_the_binding(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_script(os.path.join(HERE, "train_torch.py"),
                           ["--mlprof", "--steps", "8", "--slow-data", "0.05", "--hist", "2"],
                           {"MLPROF_OUTPUT": d + "/", "MLPROF_REPORT": "1"})
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = only_report(d)
            self.assertEqual(rep["steps"]["count"], 8)
            ranges = {x["name"]: x for x in rep["ranges"]}
            # Module ranges are named by path and class.
            for name in ("Sequential", "0 (Linear)", "1 (ReLU)", "2 (Linear)", "3 (ReLU)", "4 (Linear)",
                         "0 (Linear).backward", "4 (Linear).backward"):
                self.assertIn(name, ranges)
                self.assertEqual(ranges[name]["count"], 8, name)
            # Linear layers do real work; their self time is plausible.
            for name in ("0 (Linear)", "2 (Linear)", "4 (Linear)"):
                self.assertGreater(ranges[name]["self_ns"], 0)
                self.assertLessEqual(ranges[name]["self_ns"], ranges["Sequential"]["total_ns"])
            self.assertLess(ranges["Sequential"]["self_ns"], ranges["Sequential"]["total_ns"])
            # The slow loader (50 ms a batch, against a few ms of compute) shows
            # as DATA time inside the steps and as the input_bound finding. The
            # bound is loose on purpose: compute time depends on the machine.
            self.assertGreaterEqual(rep["breakdown"]["share"]["data"], 0.2)
            self.assertGreaterEqual(ranges["data"]["self_ns"], 8 * 50000000)
            ids = {f["id"]: f for f in rep["findings"]}
            self.assertIn("input_bound", ids)
            self.assertEqual(ids["input_bound"]["severity"], "high")
            # Histograms every 2 steps: weights, biases, activations and
            # gradients of each Linear layer, with their real sizes.
            hist = {h["tag"]: h for h in rep["model"]["histograms"]}
            width = 256
            sizes = {"0.weight": 64 * width, "0.bias": width, "2.weight": width * width,
                     "2.bias": width, "4.weight": width * 2, "4.bias": 2,
                     "0.act": 64 * width, "2.act": 64 * width, "4.act": 64 * 2,
                     "1.act": 64 * width, "3.act": 64 * width}  # the ReLUs have no parameters
            for tag, n in sizes.items():
                self.assertIn(tag, hist)
                self.assertEqual(hist[tag]["last"]["count"], n, tag)
                self.assertEqual(hist[tag]["records"], 4, tag)  # steps 1, 3, 5, 7
            for tag in ("0.weight", "2.weight", "4.weight"):
                self.assertEqual(hist[tag + ".grad"]["kind"], "gradient")
                self.assertEqual(hist[tag + ".grad"]["last"]["count"], sizes[tag])
            self.assertEqual(hist["0.act"]["kind"], "activation")
            self.assertEqual(hist["1.act"]["kind"], "activation")
            # Activations of (batch, features) go per unit: the torch
            # integration passes the feature count (prof_histogram_units).
            self.assertEqual(hist["0.act"]["last"]["units"], width)
            self.assertEqual(hist["4.act"]["last"]["units"], 2)
            loss = [s for s in rep["model"]["scalars"] if s["tag"] == "loss"]
            self.assertEqual(loss[0]["count"], 8)

    def test_dead_relu_fires_dead_units(self):
        # A ReLU after a layer whose bias pushes every unit far below zero:
        # its (parameterless) activations are all zeros, which the binding
        # must summarise for dead_units to fire.
        code = (
            "import sys, torch, mlprof, mlprof.torch as mt\n"
            "mlprof.init(output=sys.argv[1] + '/t.mlpt')\n"
            "torch.manual_seed(0)\n"
            "lin = torch.nn.Linear(16, 32)\n"
            "torch.nn.init.constant_(lin.bias, -100.0)\n"
            "model = torch.nn.Sequential(lin, torch.nn.ReLU(), torch.nn.Linear(32, 1))\n"
            "mt.instrument(model, histograms_every=1)\n"
            "for i in range(12):\n"
            "    with mt.step(model):\n"
            "        model(torch.randn(8, 16)).sum().backward()\n"
            "mlprof.shutdown()\n")
        with tempfile.TemporaryDirectory() as d:
            r = run_py(code, env={"MLPROF_REPORT": "1"}, args=(d,))
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = only_report(d)
            hist = {h["tag"]: h for h in rep["model"]["histograms"]}
            self.assertIn("1.act", hist)
            dead = [f for f in rep["findings"] if f["id"] == "dead_units"]
            self.assertTrue(dead, [f["id"] for f in rep["findings"]])
            self.assertIn("1.act", json.dumps(dead))

    def test_unmodified_script_under_mlprof_run(self):
        cli = os.environ.get("MLPROF_CLI")
        if not cli or not os.path.exists(cli):
            self.skipTest("the mlprof command was not built")
        with tempfile.TemporaryDirectory() as d:
            e = dict(os.environ)
            e.pop("PYTHONPATH", None)
            r = subprocess.run([cli, "run", "-q", "-o", d + "/", "--",
                                sys.executable, os.path.join(HERE, "train_torch.py"),
                                "--steps", "40", "--width", "512"],
                               env=e, capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            rep = only_report(d)
            top = rep["functions"]["top_self"][0]
            # Debian's torch multiplies matrices in the reference BLAS.
            self.assertEqual(top["name"], "sgemm_", rep["functions"]["top_self"][:5])


class NumpyHistogram(unittest.TestCase):
    def test_summary_matches_numpy(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("python3-numpy is not installed")
        with tempfile.TemporaryDirectory() as d:
            code = (
                "import mlprof, sys, json, numpy as np\n"
                "mlprof.init(output=sys.argv[1] + '/', report=True)\n"
                "rng = np.random.default_rng(7)\n"
                "a = (rng.standard_normal(100003) * 3 + 1).astype(np.float32)\n"
                "a[::10] = 0\n"
                "b = rng.standard_normal((64, 33))\n"  # float64, 2-D: converted once
                "with mlprof.step():\n"
                "    mlprof.histogram('a', 'other', a)\n"
                "    mlprof.histogram('b', 'weight', b)\n"
                "    c = np.ones((16, 10), dtype=np.float32)\n"
                "    c[:, :6] = 0\n"  # 6 of 10 units dead in every row
                "    mlprof.histogram('c', 'activation', c, units=10)\n"
                "mlprof.shutdown()\n"
                "ref = {}\n"
                "for k, x in (('a', a), ('b', b.astype(np.float32))):\n"
                "    x64 = x.astype(np.float64)\n"
                "    ref[k] = dict(count=x.size, min=float(x.min()), max=float(x.max()),\n"
                "                  mean=float(x64.mean()), std=float(x64.std()),\n"
                "                  zeros=int((x == 0).sum()))\n"
                "print(json.dumps(ref))\n")
            r = run_py(code, args=(d,))
            self.assertEqual(r.returncode, 0, r.stderr)
            ref = json.loads(r.stdout.strip().splitlines()[-1])
            rep = only_report(d)
            hist = {h["tag"]: h["last"] for h in rep["model"]["histograms"]}
            self.assertEqual(hist["c"]["units"], 10)
            self.assertEqual(hist["c"]["dead_units"], 6)
            for k, want in ref.items():
                got = hist[k]
                self.assertEqual(got["count"], want["count"])
                self.assertEqual(got["zeros"], want["zeros"])
                self.assertEqual(got["min"], want["min"])
                self.assertEqual(got["max"], want["max"])
                self.assertAlmostEqual(got["mean"], want["mean"], delta=1e-6 * max(1, abs(want["mean"])))
                self.assertAlmostEqual(got["std"], want["std"], delta=1e-6 * want["std"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
