"""mlprof for Python: profile training code with the mlprof C library.

Three lines are enough::

    import mlprof
    for batch in loader:
        with mlprof.step():
            with mlprof.range("data", category="data"):
                ...

The library writes a trace and a bottleneck report when the process exits
(or at ``mlprof.shutdown()``). Blocks of torch's ``record_function``
(``torch.profiler.record_function``) are recorded as ranges too, and
``mlprof.torch.profile`` works the way ``torch.profiler.profile`` does.
Every call goes straight to libmlprof through ctypes; errors from the
library raise :class:`MlprofError` carrying its message. The binding never
crashes the interpreter: annotation calls made while the profiler is off
are ignored (and counted by the library).
"""

import ctypes
import functools

from . import _lib
from . import _record_function
from ._version import __version__

__all__ = [
    "MlprofError", "init", "shutdown", "start", "stop", "step", "range",
    "function", "mark", "counter", "scalar", "histogram", "snapshot", "stats",
    "trace_path", "step_count", "CATEGORIES", "HIST_KINDS", "library_path",
    "meta", "graph_node", "graph_edge", "report", "__version__",
]

_c = _lib.load()
# torch's record_function blocks (torch.profiler / torch.autograd.profiler)
# become ranges, now or once torch is imported (_record_function.py)
_record_function.install(_c)

#: Category names accepted by :func:`range` (values of enum prof_category).
CATEGORIES = {"compute": 0, "data": 1, "comm": 2, "io": 3, "other": 4}
#: Histogram kinds accepted by :func:`histogram` (enum prof_hist_kind).
HIST_KINDS = {"weight": 0, "gradient": 1, "activation": 2, "other": 3}

# Error codes a call may return without it being an error for Python users.
_PROF_EDISABLED = -5


class MlprofError(RuntimeError):
    """A libmlprof call failed; ``code`` is the negative PROF_E* number."""

    def __init__(self, code, what):
        self.code = code
        msg = _c.prof_strerror(code).decode("utf-8", "replace")
        super().__init__("%s: %s (%d)" % (what, msg, code))


def _check(rc, what):
    if rc < 0:
        raise MlprofError(rc, what)
    return rc


def library_path():
    """Path of the libmlprof that was loaded."""
    return _c._mlprof_path


def init(output=None, ring_kb=0, report=None, schedule=None, disable=False):
    """Start the profiler explicitly (``start()`` does it on first use).

    ``output`` is a trace path or a directory; ``report`` True/False turns
    the reports written at shutdown on or off (None: MLPROF_REPORT).
    Returns True when profiling runs, False when it is disabled
    (MLPROF_DISABLE=1). Raises MlprofError on other failures."""
    cfg = _c.prof_config_default()
    keep = []
    if output is not None:
        keep.append(str(output).encode())
        cfg.output = keep[-1]
    if schedule is not None:
        keep.append(str(schedule).encode())
        cfg.schedule = keep[-1]
    cfg.ring_kb = int(ring_kb)
    cfg.report = -1 if report is None else (1 if report else 0)
    cfg.disable = 1 if disable else 0
    rc = _c.prof_init(ctypes.byref(cfg))
    if rc == _PROF_EDISABLED:
        return False
    _check(rc, "mlprof.init")
    return True


def shutdown():
    """Flush and close the trace and write the reports (also runs at exit)."""
    _check(_c.prof_shutdown(), "mlprof.shutdown")


def start():
    """Begin one profiled step (steps are numbered 0, 1, 2, ...)."""
    rc = _c.prof_start()
    if rc != _PROF_EDISABLED:
        _check(rc, "mlprof.start")


def stop():
    """End the step begun by :func:`start`."""
    _check(_c.prof_stop(), "mlprof.stop")


class _Step:
    __slots__ = ()

    def __enter__(self):
        start()
        return self

    def __exit__(self, *exc):
        stop()
        return False


def step():
    """Context manager around one training step: ``with mlprof.step(): ...``."""
    return _Step()


_ids = {}


def _name_id(name):
    i = _ids.get(name)
    if i is None:
        i = _c.prof_name_id(str(name).encode("utf-8", "replace"))
        if i:
            _ids[name] = i
    return i


_tags = {}


def _tag(tag):
    """A bytes object for `tag` that lives as long as the process: the C
    side identifies tags by pointer after their first use, so the same
    buffer must be passed every time (and never reused for another tag)."""
    b = _tags.get(tag)
    if b is None:
        b = _tags[tag] = str(tag).encode("utf-8", "replace")
    return b


def _category(category):
    if isinstance(category, int):
        return category
    try:
        return CATEGORIES[category]
    except KeyError:
        raise ValueError("category must be one of %s" % sorted(CATEGORIES)) from None


class range:  # noqa: A001 - the natural name for a profiling range
    """A named range: ``with mlprof.range("forward"):`` or as a decorator
    ``@mlprof.range("load", category="data")``. Ranges nest per thread."""

    __slots__ = ("name", "cat", "_id")

    def __init__(self, name, category="compute"):
        self.name = str(name)
        self.cat = _category(category)
        self._id = 0

    def __enter__(self):
        i = self._id or _name_id(self.name)
        self._id = i
        if i:
            _c.prof_range_push_id(i, self.cat)
        return self

    def __exit__(self, *exc):
        if self._id:
            _c.prof_range_pop()
        return False

    def __call__(self, fn):
        name, cat = self.name, self.cat

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with range(name, cat):
                return fn(*args, **kwargs)
        return wrapper


def function(fn=None, *, name=None, category="compute"):
    """Decorator: every call of the function is a range named after it."""
    def wrap(f):
        return range(name or f.__qualname__, category)(f)
    return wrap(fn) if fn is not None else wrap


def mark(name):
    """An instant event."""
    i = _name_id(name)
    if i:
        _c.prof_mark_id(i)


def counter(name, value):
    """One sample of a counter track (throughput, queue depth, ...)."""
    i = _name_id(name)
    if i:
        _c.prof_counter_id(i, float(value))


def _need(fn_name):
    f = getattr(_c, fn_name, None)
    if f is None:
        raise MlprofError(-8, "mlprof.%s needs a libmlprof with %s" % (fn_name[5:], fn_name))
    return f


def scalar(tag, value):
    """A per-step metric (``loss``, ``val/loss``, ``lr``, ...) for the
    model-health findings and the reports."""
    _need("prof_scalar")(_tag(tag), float(value))


def _float32_view(array):
    """(pointer, count, keepalive) for a float32 view of array, copying only
    when the data is not already contiguous float32."""
    obj = array
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # a torch tensor
        obj = obj.detach()
        if getattr(obj, "is_cuda", False):
            obj = obj.cpu()
        obj = obj.numpy()
    try:
        mv = memoryview(obj)
    except TypeError:
        raise TypeError("histogram() needs an object with the buffer protocol "
                        "(NumPy array, CPU tensor, array.array)") from None
    if mv.format == "f" and mv.c_contiguous and mv.itemsize == 4:
        n = mv.nbytes // 4
        if n == 0:
            return None, 0, mv
        if not mv.readonly:
            buf = (ctypes.c_char * mv.nbytes).from_buffer(mv)
            return ctypes.addressof(buf), n, (mv, buf)
        ai = getattr(obj, "__array_interface__", None)
        if ai is not None:
            return ai["data"][0], n, mv
    # Other element types or layouts: one conversion to float32.
    try:
        import numpy as np
    except ImportError:
        raise TypeError("histogram() without NumPy needs contiguous float32 data") from None
    conv = np.ascontiguousarray(np.asarray(obj), dtype=np.float32)
    return conv.ctypes.data, conv.size, conv


def histogram(tag, kind, array, units=0):
    """Summarise a tensor (weights, gradients, activations) in one pass in C:
    count, min, max, mean, std, zeros, NaN/Inf and log-scale magnitude
    buckets. ``kind`` is "weight", "gradient", "activation", "other" or a
    PROF_HIST_* number. Contiguous float32 data is read in place.
    ``units``: the size of the last dimension when it holds the units
    (neurons, channels): the units that are zero in every row are counted,
    and dead units are judged per unit (prof_histogram_units)."""
    k = HIST_KINDS[kind] if isinstance(kind, str) else int(kind)
    ptr, n, keep = _float32_view(array)
    if units:
        _need("prof_histogram_units")(_tag(tag), k, ptr, n, int(units))
    else:
        _need("prof_histogram")(_tag(tag), k, ptr, n)
    del keep


def snapshot(path=None):
    """Write a report of what has been recorded so far."""
    f = _need("prof_snapshot")
    _check(f(None if path is None else str(path).encode()), "mlprof.snapshot")


def stats():
    """The profiler's counters about itself, as a dict."""
    st = _lib.Stats()
    st.size = ctypes.sizeof(st)
    _check(_c.prof_stats_get(ctypes.byref(st)), "mlprof.stats")
    return {k: getattr(st, k) for k, _ in st._fields_ if k != "size"}


def report(path, format="text", trace=None):
    """Write the report of `trace` (a trace file; None: the trace being
    written now, flushed first) to `path`, as "text", "json", "html" or
    "chrome" (a Chrome trace). May take a while: it runs the analysis."""
    _check(_need("prof_report")(None if trace is None else str(trace).encode(), str(format).encode(),
                                str(path).encode()), "mlprof.report")


def trace_path():
    """Path of the trace being written, or None."""
    p = _c.prof_trace_path()
    return p.decode() if p else None


def step_count():
    """Steps started so far."""
    return int(_c.prof_step_count())


def meta(key, value):
    """Record a fact about the run (a key/value pair) in the trace. Returns
    False when the profiler is not running."""
    f = _need("prof_meta")
    rc = f(str(key).encode("utf-8", "replace"), str(value).encode("utf-8", "replace"))
    if rc == -2:  # PROF_ESTATE: not running
        return False
    _check(rc, "mlprof.meta")
    return True


def graph_node(name, kind=None, parent=None, params=0, param_bytes=0):
    """Describe a node of the model graph (see docs/graph.md): its name (a
    range name or module path), kind (class), containing node, parameter
    count and bytes. Ignored while the profiler is not running; returns
    whether it was recorded."""
    f = _need("prof_graph_node_id")
    nid = _name_id(name)
    kid = _name_id(kind) if kind is not None else 0
    pid = _name_id(parent) if parent is not None else 0
    if not nid or (kind is not None and not kid) or (parent is not None and not pid):
        return False
    f(nid, kid, pid, int(params), int(param_bytes))
    return True


def graph_edge(src, dst):
    """Declare that data flows from node `src` to node `dst` (prof_graph_edge).
    Ignored while the profiler is not running; returns whether it was
    recorded."""
    f = _need("prof_graph_edge_id")
    a, b = _name_id(src), _name_id(dst)
    if not a or not b:
        return False
    f(a, b)
    return True
