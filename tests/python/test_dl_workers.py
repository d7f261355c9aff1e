"""DataLoader workers in the parent's report: an unmodified PyTorch script
run under `mlprof run` whose DataLoader has 2 forked workers burning CPU
in a named function (dl_workers.py): the parent's report counts the two
workers, names that function's lines as their hot lines, gives their CPU
time and the program's wait in data ranges (torch's DataLoader fetch,
recorded through record_function), and MLPROF_WORKERS=0 turns it off.

usage: test_dl_workers.py MLPROF LIBMLPROF_SO TMP_DIR  (run by the system python3)
"""
import json
import os
import subprocess
import sys
import tempfile

import testutil

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "dl_workers.py")


def line_of(marker):
    return testutil.line_of(SCRIPT, marker)


def run(mlprof, lib, out, extra_env):
    env = dict(os.environ, MLPROF_SAMPLE_HZ="199", **extra_env)
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PYTHON_FRAMES"):
        env.pop(k, None)
    r = subprocess.run([mlprof, "run", "-q", "--no-report", "--library", lib, "-o", out, "--", sys.executable, SCRIPT],
                       env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or "done 20" not in r.stdout:
        raise SystemExit("run failed (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
    rep = subprocess.run([mlprof, "report", "--format", "json", out], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    text = subprocess.run([mlprof, "report", out], check=True, capture_output=True, text=True, timeout=300).stdout
    return json.loads(rep), text


def can_read_children():
    """Whether this machine lets a parent read its child's memory
    (process_vm_readv; Yama's ptrace_scope 2 or 3 forbids it)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(8)
    src = ctypes.create_string_buffer(b"mlprof!")

    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(r, 1)
        os._exit(0)
    try:
        loc, rem = iovec(ctypes.addressof(buf), 8), iovec(ctypes.addressof(src), 8)
        n = libc.process_vm_readv(pid, ctypes.byref(loc), 1, ctypes.byref(rem), 1, 0)
        return n == 8 and buf.value == b"mlprof!"
    finally:
        os.write(w, b"x")
        os.waitpid(pid, 0)
        os.close(r)
        os.close(w)


def main():
    mlprof, lib, tmp = sys.argv[1:4]
    if not can_read_children():
        print("test_dl_workers: skipped: this machine does not let a process read its children's memory")
        return
    os.makedirs(tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dl_workers.", dir=tmp)
    r, text = run(mlprof, lib, os.path.join(work, "on"), {})
    bad = []
    wk = r["functions"].get("workers")
    hot = line_of("WORKER HOT LINE")
    if not wk:
        bad.append("no functions.workers in the report")
    else:
        print("test_dl_workers: %d workers, %.0f ms CPU, %.0f ms data wait; lines %s" % (
            wk["processes"], wk["cpu_ms"], wk["data_wait_ms"],
            [(os.path.basename(x["file"]), x["line"], x["function"], round(x["pct_of_workers"])) for x in wk["lines"][:4]]))
        if wk["processes"] != 2:
            bad.append("%d worker processes, expected 2" % wk["processes"])
        burn = sum(x["pct_of_workers"] for x in wk["lines"]
                   if x["function"] == "slow_transform" and os.path.basename(x["file"]) == "dl_workers.py")
        if burn < 50:
            bad.append("slow_transform holds only %.0f%% of the workers' samples" % burn)
        if not any(x["line"] == hot and x["function"] == "slow_transform" for x in wk["lines"]):
            bad.append("the hot line dl_workers.py:%d is not among the workers' lines" % hot)
        if wk["cpu_ms"] < 50:
            bad.append("the workers' CPU is only %.0f ms" % wk["cpu_ms"])
        if wk["data_wait_ms"] <= 0:
            bad.append("no wait in data ranges")
    names = [t.get("name") for t in r.get("threads", [])] if isinstance(r.get("threads"), list) else []
    if names and names.count("forked worker") != 2:
        bad.append("threads named 'forked worker': %d" % names.count("forked worker"))
    if "Forked workers" not in text or "slow_transform" not in text:
        bad.append("the text report does not name the workers' hot function")
    off, _ = run(mlprof, lib, os.path.join(work, "off"), {"MLPROF_WORKERS": "0"})
    if off["functions"].get("workers"):
        bad.append("MLPROF_WORKERS=0 still sampled the workers")
    for b in bad:
        print("test_dl_workers: FAIL", b)
    if bad:
        print("files in", work)
        sys.exit(1)
    print("test_dl_workers: all checks passed")


if __name__ == "__main__":
    main()
