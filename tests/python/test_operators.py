"""The operator view of an unmodified PyTorch MLP run under `mlprof run`
(the script does not import mlprof): functions.operators[] names the
matrix products (aten::addmm forward, aten::mm under AddmmBackward0
backward) with most of the samples, each with the script's line that
called it, and the text report shows the view.

usage: test_operators.py MLPROF LIBMLPROF_SO TMP_DIR  (run by the system python3)
"""
import json
import os
import subprocess
import sys
import tempfile

import testutil

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "mlp_train.py")


def line_of(marker):
    return testutil.line_of(SCRIPT, marker)


def main():
    mlprof, lib, tmp = sys.argv[1:4]
    os.makedirs(tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="operators.", dir=tmp)
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
    text = subprocess.run([mlprof, "report", out], check=True, capture_output=True, text=True, timeout=300).stdout
    fn = json.load(open(out + ".json"))["functions"]
    ops = {o["name"]: o for o in fn.get("operators", [])}
    bad = []
    for o in fn.get("operators", [])[:12]:
        py = o.get("python") or {}
        print("  %-24s self %5.1f%%  total %5.1f%%  %s:%s" % (o["name"], o["self_pct"], o["total_pct"],
                                                            os.path.basename(py.get("file", "?")), py.get("line")))
    fwd, bwd = line_of("FORWARD LINE"), line_of("BACKWARD LINE")
    need = {"aten::addmm": fwd, "aten::mm": bwd, "AddmmBackward0": bwd}
    for name, line in need.items():
        o = ops.get(name)
        if not o:
            bad.append("no operator %s in %s" % (name, sorted(ops)[:20]))
            continue
        py = o.get("python") or {}
        if os.path.basename(py.get("file", "")) != "mlp_train.py" or py.get("line") != line:
            bad.append("%s is called from %r, not mlp_train.py:%d" % (name, py, line))
    matmul = sum(ops[n]["self_pct"] for n in ("aten::addmm", "aten::mm") if n in ops)
    print("test_operators: matmul operators (aten::addmm + aten::mm self) hold %.1f%% of the samples" % matmul)
    if matmul < 30:
        bad.append("the matmul operators hold only %.1f%% of the samples" % matmul)
    if "AddmmBackward0" in ops and "aten::mm" in ops and ops["AddmmBackward0"]["total_pct"] < ops["aten::mm"]["self_pct"]:
        bad.append("aten::mm is not nested under AddmmBackward0")
    if any(o["kind"] != "autograd" for n, o in ops.items() if n.endswith("Backward0")):
        bad.append("an autograd node is not of kind autograd")
    if "Operators (PyTorch" not in text or "aten::addmm" not in text:
        bad.append("the text report lacks the operator view")
    for b in bad:
        print("test_operators: FAIL", b)
    if bad:
        print("files in", work)
        sys.exit(1)
    print("test_operators: all checks passed")


if __name__ == "__main__":
    main()
