"""DataLoader workers in the parent's report: an unmodified PyTorch script
run under `mlprof run` whose DataLoader has 2 forked workers burning CPU
in a named function (dl_workers.py): the parent's report counts the two
workers, names that function's lines as their hot lines, gives their CPU
time and the program's wait in data ranges (torch's DataLoader fetch,
recorded through record_function), and MLPROF_WORKERS=0 turns it off.
The workers' CPU and their hot function's share are checked against the
workers' own clocks. Then a multiprocessing Pool whose workers live a
fraction of a second (pool_workers.py): their hot function is named (its
frames are described while the worker lives), their CPU matches their
clocks, and no read is called refused (an exiting worker is not).

usage: test_dl_workers.py MLPROF LIBMLPROF_SO TMP_DIR  (run by the system python3)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import testutil

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "dl_workers.py")


def line_of(marker):
    return testutil.line_of(SCRIPT, marker)


def run(mlprof, lib, out, extra_env, script=SCRIPT, expect="done 20"):
    env = dict(os.environ, MLPROF_SAMPLE_HZ="199", **extra_env)
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PYTHON_FRAMES"):
        env.pop(k, None)
    r = subprocess.run([mlprof, "run", "-q", "--no-report", "--library", lib, "-o", out, "--", sys.executable, script],
                       env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or expect not in r.stdout:
        raise SystemExit("run failed (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
    rep = subprocess.run([mlprof, "report", "--format", "json", out], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    text = subprocess.run([mlprof, "report", out], check=True, capture_output=True, text=True, timeout=300).stdout
    return json.loads(rep), text, r.stderr


def referee(stderr):
    """The workers' own account (dl_workers.py): per worker, its last line;
    the CPU of their main threads in ms and slow_transform's share of it."""
    last = {}
    for m in re.finditer(r"^item (\d+) (\d+) (\d+)$", stderr, re.M):
        last[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    for m in re.finditer(r"^task (\d+) (\d+)$", stderr, re.M):
        last[m.group(1)] = (0, int(m.group(2)))
    spent, cpu = sum(v[0] for v in last.values()), sum(v[1] for v in last.values())
    return cpu / 1e6, 100.0 * spent / cpu if cpu else 0.0


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


def check_pool(mlprof, lib, work):
    script = os.path.join(HERE, "pool_workers.py")
    r, _, err = run(mlprof, lib, os.path.join(work, "pool"), {}, script, "done ")
    ref_ms, _ = referee(err)
    wk = r["functions"].get("workers")
    if not wk:
        return ["pool: no functions.workers in the report"]
    lines = wk["lines"]
    burn = sum(x["pct_of_workers"] for x in lines if x["function"] == "pool_burn")
    print("test_dl_workers: pool: %d workers, %.0f ms CPU (theirs: %.0f), pool_burn %.0f%%, refused %d; lines %s" % (
        wk["processes"], wk["cpu_ms"], ref_ms, burn, wk["reads_refused"],
        [(os.path.basename(x["file"]), x["line"], x["function"], round(x["pct_of_workers"])) for x in lines[:4]]))
    bad = []
    if wk["processes"] != 3:
        bad.append("pool: %d worker processes, expected 3" % wk["processes"])
    if burn < 50:
        bad.append("pool: pool_burn holds only %.0f%% of the workers' samples" % burn)
    if not any(x["line"] == testutil.line_of(script, "POOL HOT LINE") for x in lines if x["function"] == "pool_burn"):
        bad.append("pool: the hot line is not among the workers' lines")
    if wk["reads_refused"]:
        bad.append("pool: %d reads called refused, though this machine lets a parent read its children" %
                   wk["reads_refused"])
    if not ref_ms or abs(wk["cpu_ms"] - ref_ms) > 0.3 * ref_ms:
        bad.append("pool: the workers' CPU is %.0f ms; their own clocks say %.0f ms" % (wk["cpu_ms"], ref_ms))
    return bad


def main():
    mlprof, lib, tmp = sys.argv[1:4]
    if not can_read_children():
        print("test_dl_workers: skipped: this machine does not let a process read its children's memory")
        return
    os.makedirs(tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="dl_workers.", dir=tmp)
    r, text, err = run(mlprof, lib, os.path.join(work, "on"), {})
    ref_ms, ref_pct = referee(err)
    bad = []
    wk = r["functions"].get("workers")
    hot = line_of("WORKER HOT LINE")
    if not wk:
        bad.append("no functions.workers in the report")
    else:
        burn = sum(x["pct_of_workers"] for x in wk["lines"]
                   if x["function"] == "slow_transform" and os.path.basename(x["file"]) == "dl_workers.py")
        print("test_dl_workers: %d workers, %.0f ms CPU (theirs: %.0f), %.0f ms data wait; slow_transform %.0f%% "
              "(theirs: %.0f%%); lines %s" % (
                  wk["processes"], wk["cpu_ms"], ref_ms, wk["data_wait_ms"], burn, ref_pct,
                  [(os.path.basename(x["file"]), x["line"], x["function"], round(x["pct_of_workers"]))
                   for x in wk["lines"][:4]]))
        if wk["processes"] != 2:
            bad.append("%d worker processes, expected 2" % wk["processes"])
        if burn < 50:
            bad.append("slow_transform holds only %.0f%% of the workers' samples" % burn)
        # the referee: the workers' own clocks (their CPU after the last
        # item, a little more at exit, is not in their account)
        if not ref_ms:
            bad.append("the workers wrote no account of their CPU")
        elif abs(wk["cpu_ms"] - ref_ms) > 0.25 * ref_ms:
            bad.append("the workers' CPU is %.0f ms; their own clocks say %.0f ms" % (wk["cpu_ms"], ref_ms))
        elif abs(burn - ref_pct) > 20:
            bad.append("slow_transform holds %.0f%% of the workers' samples; their own clocks say %.0f%%" %
                       (burn, ref_pct))
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
    off, _, _ = run(mlprof, lib, os.path.join(work, "off"), {"MLPROF_WORKERS": "0"})
    if off["functions"].get("workers"):
        bad.append("MLPROF_WORKERS=0 still sampled the workers")
    bad += check_pool(mlprof, lib, work)
    for b in bad:
        print("test_dl_workers: FAIL", b)
    if bad:
        print("files in", work)
        sys.exit(1)
    print("test_dl_workers: all checks passed")


if __name__ == "__main__":
    main()
