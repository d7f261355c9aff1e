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
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code, *args], env=e,
                          capture_output=True, text=True, timeout=300)


def run_script(path, args, env):
    e = dict(os.environ)
    e["PYTHONPATH"] = PYDIR + os.pathsep + e.get("PYTHONPATH", "")
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
            for name in ("Sequential", "0", "1", "2", "3", "4", "0.backward", "4.backward"):
                self.assertIn(name, ranges)
                self.assertEqual(ranges[name]["count"], 8, name)
            # Linear layers do real work; their self time is plausible.
            for name in ("0", "2", "4"):
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
