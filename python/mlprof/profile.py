"""torch.profiler's way of working, on mlprof (``mlprof.torch.profile``)::

    def handler(p):
        print(p.trace_path)            # this cycle's trace (with its report when reports are on)
        print(p.table(row_limit=10))   # top operators and ranges
        p.export_chrome_trace(p.trace_path + ".chrome.json")

    with mlprof.torch.profile(
            schedule=mlprof.torch.schedule(wait=1, warmup=1, active=3, repeat=2),
            on_trace_ready=handler) as p:
        for batch in loader:
            train_step(batch)
            p.step()

``p.step()`` marks the steps (the ``with`` opens step 0; each ``step()``
closes one and opens the next, and the end of the ``with`` closes the last
one, as torch.profiler's ProfilerStep ranges go; do not also use
``mlprof.step()``). The
steps the schedule records (``RECORD``, ``RECORD_AND_SAVE``) of each cycle
go to a trace of their own, ``<trace>.capture<K>.mlpt`` (prof_capture()),
and ``on_trace_ready(p)`` is called once per finished cycle with
``p.trace_path`` naming it: at the first ``step()`` after the library closed
the file (it is written on the library's writer thread, so a few steps
later than torch would call it), or at the end of the ``with`` for the
cycles still being written. Without a schedule every step is recorded and
the handler is called once, at the end. The schedule may be
``mlprof.torch.schedule`` or any callable mapping a step number to a
``torch.profiler.ProfilerAction`` (``torch.profiler.schedule(...)`` works).

Unlike torch.profiler, mlprof keeps recording the steps outside the cycles
in its main trace (it costs about 1 %), and the operator view comes from
CPU samples, so ``table()`` covers every step recorded so far. Arguments of
``torch.profiler.profile`` that mlprof has no use for (``activities``,
``record_shapes``, ``profile_memory``, ``with_stack``, ...) are accepted and
ignored: stacks are always sampled, memory is MLPROF_MEM's.
"""
import ctypes
import json
import os
import sys
import tempfile
import time

import mlprof

__all__ = ["ProfilerAction", "schedule", "profile"]

_FOREVER = 1 << 62       # steps of an open-ended capture (ended by prof_capture(0))
_WAIT_AT_EXIT_S = 60.0   # how long the end of a profile waits for its cycles' files


class ProfilerAction:
    """What a schedule says of a step (the names of torch.profiler's)."""
    NONE = "NONE"
    WARMUP = "WARMUP"
    RECORD = "RECORD"
    RECORD_AND_SAVE = "RECORD_AND_SAVE"


class schedule:  # noqa: N801 - torch.profiler's name
    """``skip_first`` steps, then cycles of ``wait`` + ``warmup`` +
    ``active`` steps, ``repeat`` times (0: forever); the active steps of a
    cycle are recorded into one trace. Called with a step number, returns
    its :class:`ProfilerAction`, as torch.profiler.schedule does."""

    def __init__(self, *, wait, warmup, active, repeat=0, skip_first=0):
        vals = dict(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)
        for k, v in vals.items():
            if not isinstance(v, int) or v < 0:
                raise ValueError("schedule: %s must be an integer >= 0, not %r" % (k, v))
        if active < 1:
            raise ValueError("schedule: active must be at least 1")
        self.wait, self.warmup, self.active = wait, warmup, active
        self.repeat, self.skip_first = repeat, skip_first

    def __call__(self, step):
        if step < self.skip_first:
            return ProfilerAction.NONE
        cycle, r = divmod(step - self.skip_first, self.wait + self.warmup + self.active)
        if self.repeat and cycle >= self.repeat:
            return ProfilerAction.NONE
        if r < self.wait:
            return ProfilerAction.NONE
        if r < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        if r < self.wait + self.warmup + self.active - 1:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE

    def __repr__(self):
        return "schedule(wait=%d, warmup=%d, active=%d, repeat=%d, skip_first=%d)" % (
            self.wait, self.warmup, self.active, self.repeat, self.skip_first)


def _action(sched, step):
    if sched is None:
        return ProfilerAction.RECORD
    a = sched(step)
    return str(getattr(a, "name", a))  # torch's ProfilerAction is an enum


class profile:  # noqa: N801 - torch.profiler's name
    """See the module documentation."""

    def __init__(self, *, schedule=None, on_trace_ready=None, **ignored):  # noqa: A002
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.trace_path = None   # the last finished cycle's trace
        self.traces = []         # every finished cycle's trace, in order
        self._on = False
        self._capturing = False
        self._pending = 0        # cycles asked for and not finished yet
        self._seen = 0           # finished captures of the library looked at
        self._warned = False

    # ---- context ------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start profiling and open step 0 (``__enter__`` calls it)."""
        if mlprof.trace_path() is None and not mlprof.init():
            return  # MLPROF_DISABLE: nothing to do
        self._on = True
        self._seen = int(mlprof._c.prof_capture_done(0, None, 0))
        self._begin_step(self.step_num)

    def stop(self):
        """Close the open step, end the cycle being recorded and wait for
        the cycles' files; on_trace_ready is called for each."""
        if not self._on:
            return
        self._on = False
        mlprof.stop()
        if self._capturing:
            mlprof._c.prof_capture(0)
            self._capturing = False
        self._poll(wait=True)

    def step(self):
        """Close the current step and open the next one."""
        if not self._on:
            return
        self._end_step(self.step_num)
        self.step_num += 1
        self._begin_step(self.step_num)

    # ---- cycles -------------------------------------------------------------
    def _begin_step(self, n):
        if not self._capturing and _action(self.schedule, n) in (ProfilerAction.RECORD,
                                                                 ProfilerAction.RECORD_AND_SAVE):
            rc = mlprof._c.prof_capture(_FOREVER)
            if rc == 0:
                self._capturing = True
                self._pending += 1
            elif not self._warned:
                self._warned = True
                sys.stderr.write("mlprof: step %d not captured: another capture (mlprof trigger) runs\n" % n)
        mlprof.start()

    def _end_step(self, n):
        mlprof.stop()
        if self._capturing and _action(self.schedule, n) == ProfilerAction.RECORD_AND_SAVE:
            mlprof._c.prof_capture(0)
            self._capturing = False
        self._poll()

    def _poll(self, wait=False):
        c = mlprof._c
        deadline = time.monotonic() + _WAIT_AT_EXIT_S
        while True:
            count = int(c.prof_capture_done(0, None, 0))
            while self._seen < count:
                self._seen += 1
                buf = ctypes.create_string_buffer(4096)
                c.prof_capture_done(self._seen, buf, len(buf))
                path = buf.value.decode("utf-8", "replace")
                if ".capture" not in os.path.basename(path):
                    continue  # a schedule cycle or a trigger of another kind
                self._pending -= 1
                self._ready(path)
            if not wait or self._pending <= 0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if wait and self._pending > 0:
            sys.stderr.write("mlprof: %d profiling cycle(s) not finished in %.0f s\n"
                             % (self._pending, _WAIT_AT_EXIT_S))

    def _ready(self, path):
        self.trace_path = path
        self.traces.append(path)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ---- results --------------------------------------------------------------
    def export_chrome_trace(self, path):
        """Write the last finished cycle's trace (before any: everything
        recorded so far) as a Chrome trace (chrome://tracing, Perfetto)."""
        mlprof.report(path, "chrome", trace=self.trace_path)

    def report(self):
        """The analysis of everything recorded so far, as the JSON report's
        dict (docs/report-schema.md)."""
        fd, tmp = tempfile.mkstemp(prefix="mlprof-table.", suffix=".json")
        os.close(fd)
        try:
            mlprof.report(tmp, "json")
            with open(tmp) as f:
                return json.load(f)
        finally:
            os.unlink(tmp)

    def table(self, sort_by="self", row_limit=15):
        """The top operators (from the CPU samples) and ranges of
        everything recorded so far, as text. ``sort_by``: "self" or
        "total" (torch's key names work: one with "self" in it sorts by
        self time)."""
        return format_table(self.report(), "self" if "self" in str(sort_by) else "total", int(row_limit))


def _cut(s, n):
    s = str(s)
    return s if len(s) <= n else s[:n - 1] + "~"


def _ms(ns):
    return "%.3f ms" % (ns / 1e6)


def format_table(r, sort_by="self", row_limit=15):
    """Text tables of the operators and ranges of a JSON report `r`."""
    out = []
    fn = r.get("functions") or {}
    ops = sorted(fn.get("operators") or [], key=lambda o: -o["%s_pct" % sort_by])[:row_limit]
    if ops:
        out.append("Operators (CPU samples of every step recorded so far: %d at %.0f Hz; %.0f%% of them inside an "
                   "operator; self = the innermost operator)" % (fn.get("samples", 0), fn.get("sample_hz", 0),
                                                                 fn.get("operators_pct", 0)))
        out.append("%-36s %8s %12s %8s %12s  %s" % ("Name", "Self %", "Self (est.)", "Total %", "Total (est.)",
                                                   "Called from"))
        for o in ops:
            py = o.get("python") or {}
            where = "%s:%s %s" % (os.path.basename(py["file"]), py["line"], py["function"]) if py else ""
            out.append("%-36s %7.1f%% %9.1f ms %7.1f%% %9.1f ms  %s" % (
                _cut(o["name"], 36), o["self_pct"], o["self_ms"], o["total_pct"], o["total_ms"], where))
    else:
        out.append("Operators: none seen (no CPU samples inside PyTorch operators)")
    key = "self_ns" if sort_by == "self" else "total_ns"
    ranges = sorted(r.get("ranges") or [], key=lambda x: -x.get(key, 0))[:row_limit]
    if ranges:
        out.append("")
        out.append("Ranges (timed)")
        out.append("%-36s %8s %12s %12s %12s" % ("Name", "Count", "Self", "Total", "Avg"))
        for x in ranges:
            out.append("%-36s %8d %12s %12s %12s" % (_cut(x["name"], 36), x["count"], _ms(x["self_ns"]),
                                                    _ms(x["total_ns"]), _ms(x["avg_ns"])))
    return "\n".join(out)
