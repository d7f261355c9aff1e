"""Python frames in CPU samples of an unmodified PyTorch script run under
`mlprof run` (the script does not import mlprof): the report names the
script's hot lines by file and line, the torch line has native frames
below it (the Python view gives their libraries), the folded export
interleaves Python and native frames, and no function name is left
mangled. Also with the binding: a script that starts mlprof itself gets
its Python frames too.

usage: test_pyframes.py MLPROF LIBMLPROF_SO TMP_DIR  (run by the system python3)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import testutil

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "hot_torch.py")


def line_of(marker):
    return testutil.line_of(SCRIPT, marker)


BINDING = """
import sys, time, mlprof
mlprof.init(output=sys.argv[1], report=False)
def spin_here():
    t0 = time.process_time()
    while time.process_time() - t0 < 0.4:
        pass
spin_here()
mlprof.shutdown()
"""


def binding_case(mlprof, lib, work):
    trace = os.path.join(work, "binding.mlpt")
    env = dict(os.environ, MLPROF_SAMPLE_HZ="499", MLPROF_LIBRARY=lib,
               PYTHONPATH=os.path.join(HERE, "..", "..", "python"))
    env.pop("MLPROF_PYTHON_FRAMES", None)
    r = subprocess.run([sys.executable, "-c", BINDING, trace], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return ["binding run failed: %s" % r.stderr]
    subprocess.run([mlprof, "export", "--folded", "-q", "-o", trace + ".folded", trace], check=True,
                   capture_output=True, timeout=300)
    folded = open(trace + ".folded").read()
    if not re.search(r"<string>:\d+_<module>;<string>:\d+_spin_here", folded):
        return ["the binding's trace has no Python frames: %s" % folded[:300]]
    return []


def main():
    mlprof, lib, tmp = sys.argv[1:4]
    os.makedirs(tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="pyframes.", dir=tmp)
    env = dict(os.environ, MLPROF_SAMPLE_HZ="499")
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PYTHON_FRAMES"):
        env.pop(k, None)
    out = os.path.join(work, "trace")
    r = subprocess.run([mlprof, "run", "-q", "--no-report", "--library", lib, "-o", out, "--",
                        sys.executable, SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or "done" not in r.stdout:
        raise SystemExit("run failed (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
    subprocess.run([mlprof, "report", "--format", "json", "-o", out + ".json", out], check=True,
                   capture_output=True, timeout=300)
    subprocess.run([mlprof, "export", "--folded", "-q", "-o", out + ".folded", out], check=True,
                   capture_output=True, timeout=300)
    fn = json.load(open(out + ".json"))["functions"]
    folded = open(out + ".folded").read()
    bad = []

    py_line, torch_line = line_of("HOT PYTHON LINE"), line_of("HOT TORCH LINE")
    lines = {(os.path.basename(l["file"]), l["line"]): l for l in fn.get("python", {}).get("lines", [])}
    p = lines.get(("hot_torch.py", py_line))
    t = lines.get(("hot_torch.py", torch_line))
    if not p:
        bad.append("the Python view lacks hot_torch.py:%d; it has %s" % (py_line, sorted(lines)[:10]))
    if not t:
        bad.append("the Python view lacks hot_torch.py:%d; it has %s" % (torch_line, sorted(lines)[:10]))
    elif t["native_pct"] < 50 or not t["native"]:
        bad.append("the torch line has %.0f%% native time, libraries %r" % (t["native_pct"], t["native"]))
    elif not any(re.search(r"torch|blas|gomp|mkl|dnnl", n["module"]) for n in t["native"]):
        bad.append("no torch or BLAS library under the torch line: %r" % t["native"])
    if p and t and p["pct"] + t["pct"] < 30:
        bad.append("the two hot lines hold only %.0f%% + %.0f%%" % (p["pct"], t["pct"]))
    if p and p["function"] != "python_loop" or t and t["function"] != "torch_matmul":
        bad.append("functions of the hot lines: %r, %r" % (p and p["function"], t and t["function"]))
    # Python frames interleaved with native ones: the script's frames, in
    # order, above torch's C++ frames (demangled) in one folded stack
    if not re.search(r"hot_torch\.py:\d+_<module>;hot_torch\.py:\d+_main;hot_torch\.py:%d_torch_matmul;.*at::" % torch_line,
                     folded):
        bad.append("no folded stack with native frames under hot_torch.py:%d" % torch_line)
    mangled = [f["name"] for f in fn["top_self"] + fn["top_total"] if re.match(r"_Z[NL0-9]", f["name"])]
    if mangled:
        bad.append("mangled names: %r" % mangled[:5])
    bad += binding_case(mlprof, lib, work)
    for b in bad:
        print("test_pyframes: FAIL", b)
    if bad:
        print("files in", work)
        sys.exit(1)
    print("test_pyframes: all checks passed")


if __name__ == "__main__":
    main()
