"""Memory reaching the user's code, for an unmodified PyTorch MLP run under
`mlprof run` (the script does not import mlprof): allocation sites carry
the operator and the script's Python line past the allocator's frames
(c10::alloc_cpu, at::detail::empty_*), torch's start-up registries are
"retained", not leaks, and the text report's lines stay short (template
names elided) while the JSON keeps the full names.

usage: test_torch_memory.py MLPROF LIBMLPROF_SO TMP_DIR  (run by the system python3)
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


def binding_case(mlprof, lib, work):
    """With the binding alone (loaded after start-up) the heap is not seen:
    the report says so and how to see it."""
    trace = os.path.join(work, "binding.mlpt")
    code = ("import sys, mlprof\nmlprof.init(output=sys.argv[1], report=False)\n"
            "blocks = [bytearray(1 << 20) for _ in range(8)]\nmlprof.shutdown()\n")
    env = dict(os.environ, MLPROF_LIBRARY=lib, PYTHONPATH=os.path.join(HERE, "..", "..", "python"))
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PRELOAD", "MLPROF_MEM"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", code, trace], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return ["binding run failed: %s" % r.stderr]
    text = subprocess.run([mlprof, "report", trace], capture_output=True, text=True, timeout=300).stdout
    rep = json.loads(subprocess.run([mlprof, "report", "-f", "json", trace], capture_output=True, text=True,
                                    timeout=300).stdout)
    bad = []
    if "heap not tracked" not in text or "mlprof run" not in text:
        bad.append("the binding's report does not say the heap is not tracked")
    if rep["memory"].get("heap_tracked") is not False:
        bad.append("memory.heap_tracked is not false with the binding alone")
    return bad


def main():
    mlprof, lib, tmp = sys.argv[1:4]
    os.makedirs(tmp, exist_ok=True)
    work = tempfile.mkdtemp(prefix="torch_memory.", dir=tmp)
    env = dict(os.environ, MLPROF_SAMPLE_HZ="199", MLPROF_MEM_SAMPLE_BYTES="65536")
    for k in ("MLPROF_OUTPUT", "LD_PRELOAD", "MLPROF_PYTHON_FRAMES", "MLPROF_MEM"):
        env.pop(k, None)
    out = os.path.join(work, "trace")
    r = subprocess.run([mlprof, "run", "-q", "--no-report", "--library", lib, "-o", out, "--",
                        sys.executable, SCRIPT, "--steps", "60"], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or "done" not in r.stdout:
        raise SystemExit("run failed (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
    rep = subprocess.run([mlprof, "report", "--format", "json", out], check=True, capture_output=True, text=True,
                         timeout=300).stdout
    text = subprocess.run([mlprof, "report", out], check=True, capture_output=True, text=True, timeout=300).stdout
    mem = json.loads(rep)["memory"]
    bad = []
    fwd, bwd = line_of("FORWARD LINE"), line_of("BACKWARD LINE")
    sites = [s for k in ("by_bytes", "by_calls", "by_peak", "temporary") for s in mem["sites"][k]]
    found = {}
    for s in sites:
        py = s.get("python") or {}
        if os.path.basename(py.get("file", "")) == "mlp_train.py" and s.get("operator"):
            found.setdefault((s["operator"], py["line"]), s)
    print("test_torch_memory: sites with an operator and a line of the script:", sorted(found))
    if not any(op in ("aten::addmm", "aten::linear") and line == fwd for op, line in found):
        bad.append("no forward site (aten::addmm at mlp_train.py:%d)" % fwd)
    if not any(op == "aten::mm" and line == bwd for op, line in found):
        bad.append("no backward site (aten::mm at mlp_train.py:%d)" % bwd)
    for s in found.values():
        if s["frame"].startswith(("c10::alloc_cpu", "at::detail::empty", "malloc", "operator new")):
            bad.append("a site is attributed to allocator code: %s" % s["frame"])
        if not s["stack"][0].startswith(("c10::alloc_cpu", "malloc", "posix_memalign")):
            print("  note: innermost frame %s" % s["stack"][0])
    # torch's registries, made while importing torch, are retained
    def holds(entry, word):
        return any(word in f for f in entry.get("stack", []))
    leaks_reg = [x for x in mem.get("leaks", []) if holds(x, "c10::Dispatcher::")]
    if leaks_reg:
        bad.append("torch's dispatcher registry reported as a leak: %r" % leaks_reg[0]["stack"][:3])
    whys = {x["why"] for x in mem.get("retained", [])}
    if not whys & {"python_import", "library_init"}:
        bad.append("nothing retained by the import of torch: %r" % whys)
    print("test_torch_memory: retained %.1f MiB (%s), leaked %.1f MiB" % (
        mem.get("retained_bytes", 0) / 2**20, ", ".join(sorted(whys)), (mem.get("leaked_bytes") or 0) / 2**20))
    # text lines stay short; JSON keeps the full template names
    section = text[text.find("\nMemory"):]
    section = section[:section.find("\n\n", 1) if "\n\n" in section[1:] else len(section)]
    longest = max(len(ln) for ln in section.splitlines())
    if longest > 400:
        bad.append("a memory line of %d characters" % longest)
    if "c10::optional<" not in rep:
        bad.append("the JSON lost the full C++ names")
    if "\u2026" not in section:
        bad.append("no shortened name in the text's memory section")
    bad += binding_case(mlprof, lib, work)
    for b in bad:
        print("test_torch_memory: FAIL", b)
    if bad:
        print("files in", work)
        sys.exit(1)
    print("test_torch_memory: all checks passed")


if __name__ == "__main__":
    main()
