"""Loading libmlprof and declaring its C functions for ctypes.

The library is looked up, in order: the path in MLPROF_LIBRARY; the
preloaded one under `mlprof run` (MLPROF_PRELOAD=1, LD_PRELOAD); next to
this package (an installed copy); the library folder of the install prefix
this package sits in; the build tree of a source checkout; the system
loader. Nothing is compiled at install time.
"""

import ctypes
import ctypes.util
import os

_NAMES = ("libmlprof.so.0", "libmlprof.so")


def _candidates():
    env = os.environ.get("MLPROF_LIBRARY")
    if env:
        yield env
        return
    # under `mlprof run` the preloaded library is the one recording
    if os.environ.get("MLPROF_PRELOAD") == "1":
        for p in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":"):
            if os.path.basename(p).startswith("libmlprof.so"):
                yield p
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _NAMES:
        yield os.path.join(here, name)
    # <prefix>/lib/python3/dist-packages/mlprof or <prefix>/lib/python3.X/site-packages/mlprof
    prefix = here
    for _ in range(4):
        prefix = os.path.dirname(prefix)
        for libdir in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu")):
            for name in _NAMES:
                yield os.path.join(prefix, libdir, name)
    # source checkout: <repo>/python/mlprof -> <repo>/build
    repo = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-release", "build-asan"):
        for name in _NAMES:
            yield os.path.join(repo, build, name)
    found = ctypes.util.find_library("mlprof")
    if found:
        yield found
    yield "libmlprof.so.0"


def load():
    """Return the loaded CDLL, or raise ImportError saying what to do."""
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            tried.append("%s (%s)" % (path, exc))
            continue
        if not hasattr(lib, "prof_init"):
            tried.append("%s (not libmlprof)" % path)
            continue
        _declare(lib)
        lib._mlprof_path = path
        return lib
    raise ImportError(
        "mlprof: cannot load libmlprof. Build it (scripts/demo in the source tree), "
        "install it (cmake --install), or set MLPROF_LIBRARY=/path/to/libmlprof.so. "
        "Tried: " + "; ".join(tried[:6]))


class Config(ctypes.Structure):
    """Mirror of prof_config (include/mlprof.h); `size` comes first."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("output", ctypes.c_char_p),
        ("ring_kb", ctypes.c_uint32),
        ("report", ctypes.c_int),
        ("disable", ctypes.c_int),
        ("flush_ms", ctypes.c_uint32),
        ("schedule", ctypes.c_char_p),
    ]


class Stats(ctypes.Structure):
    """Mirror of prof_stats."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("events_written", ctypes.c_uint64),
        ("events_lost", ctypes.c_uint64),
        ("misuse", ctypes.c_uint64),
        ("threads", ctypes.c_uint64),
        ("bytes_written", ctypes.c_uint64),
    ]


def _fn(lib, name, restype, *argtypes):
    f = getattr(lib, name, None)
    if f is None:
        return
    f.restype = restype
    f.argtypes = list(argtypes)


def _declare(lib):
    c = ctypes
    _fn(lib, "prof_strerror", c.c_char_p, c.c_int)
    _fn(lib, "prof_config_default", Config)
    _fn(lib, "prof_init", c.c_int, c.POINTER(Config))
    _fn(lib, "prof_shutdown", c.c_int)
    _fn(lib, "prof_start", c.c_int)
    _fn(lib, "prof_stop", c.c_int)
    _fn(lib, "prof_step_count", c.c_uint64)
    _fn(lib, "prof_name_id", c.c_uint32, c.c_char_p)
    _fn(lib, "prof_range_push_id", None, c.c_uint32, c.c_int)
    _fn(lib, "prof_range_pop", None)
    _fn(lib, "prof_mark_id", None, c.c_uint32)
    _fn(lib, "prof_counter_id", None, c.c_uint32, c.c_double)
    _fn(lib, "prof_scalar", None, c.c_char_p, c.c_double)
    _fn(lib, "prof_histogram", None, c.c_char_p, c.c_int, c.c_void_p, c.c_size_t)
    _fn(lib, "prof_histogram_units", None, c.c_char_p, c.c_int, c.c_void_p, c.c_size_t, c.c_size_t)
    _fn(lib, "prof_snapshot", c.c_int, c.c_char_p)
    _fn(lib, "prof_stats_get", c.c_int, c.POINTER(Stats))
    _fn(lib, "prof_trace_path", c.c_char_p)
    _fn(lib, "prof_meta", c.c_int, c.c_char_p, c.c_char_p)
    _fn(lib, "prof_graph_edge_id", None, c.c_uint32, c.c_uint32)
    _fn(lib, "prof_graph_node_id", None, c.c_uint32, c.c_uint32, c.c_uint32, c.c_uint64, c.c_uint64)
    _fn(lib, "prof_capture", c.c_int, c.c_uint64)
    _fn(lib, "prof_capture_done", c.c_uint64, c.c_uint64, c.c_char_p, c.c_size_t)
    _fn(lib, "prof_report", c.c_int, c.c_char_p, c.c_char_p, c.c_char_p)
