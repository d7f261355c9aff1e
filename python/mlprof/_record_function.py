"""torch's ``record_function`` blocks as mlprof ranges.

``torch.profiler.record_function`` and ``torch.autograd.profiler.record_function``
are one class; its ``__enter__``/``__exit__`` are wrapped once so that every
block also pushes and pops an mlprof range of the same name (besides what
torch does with it). torch itself opens such blocks around every DataLoader
fetch (``enumerate(DataLoader)#...``: category DATA, so input stalls show in
the step breakdown) and every optimizer step (``Optimizer.step#SGD.step``).

The file works in two ways and imports nothing of mlprof:

* as ``mlprof._record_function``: ``import mlprof`` calls :func:`install` with
  the loaded library;
* as ``sitecustomize``: ``mlprof run`` puts a copy named so on PYTHONPATH,
  which wraps the blocks of an unmodified script with the preloaded library,
  then runs the ``sitecustomize`` the interpreter would have run otherwise.

When torch is not imported yet, a finder on ``sys.meta_path`` waits for
``torch.autograd.profiler`` to be executed and wraps the class then; it costs
one string comparison per import. A block entered while the profiler is not
running is not recorded. Nothing here may break the host program: every
failure leaves torch's class as it was.
"""
import sys

_TARGET = "torch.autograd.profiler"
_COMPUTE, _DATA = 0, 1  # enum prof_category


def _category(name):
    return _DATA if name.startswith("enumerate(DataLoader)") else _COMPUTE


def declare(lib):
    """Argument types of the three library calls used here."""
    import ctypes
    lib.prof_name_id.restype = ctypes.c_uint32
    lib.prof_name_id.argtypes = [ctypes.c_char_p]
    lib.prof_range_push_id.restype = None
    lib.prof_range_push_id.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.prof_range_pop.restype = None
    lib.prof_range_pop.argtypes = []


def patch(module, lib):
    """Wrap module.record_function (once); True when it is wrapped now."""
    rf = getattr(module, "record_function", None)
    if rf is None or getattr(rf, "_mlprof_ranges", False):
        return False
    ids = {}
    name_id, push_id, pop = lib.prof_name_id, lib.prof_range_push_id, lib.prof_range_pop
    enter, leave = rf.__enter__, rf.__exit__

    def __enter__(self):
        r = enter(self)
        try:
            name = str(self.name)
            i = ids.get(name)
            if i is None:
                i = name_id(name.encode("utf-8", "replace"))
                if i:
                    ids[name] = i
            if i:
                self._mlprof_pushed = True  # first: an object that takes no attribute gets no range
                push_id(i, _category(name))
        except Exception:
            pass
        return r

    def __exit__(self, *exc):
        if getattr(self, "_mlprof_pushed", False):
            self._mlprof_pushed = False
            pop()
        return leave(self, *exc)

    rf.__enter__, rf.__exit__ = __enter__, __exit__
    rf._mlprof_ranges = True
    return True


class _Loader:
    """The real loader of torch.autograd.profiler, patching after it ran."""

    def __init__(self, loader, lib, finder):
        self._loader, self._lib, self._finder = loader, lib, finder

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            sys.meta_path.remove(self._finder)
        except ValueError:
            pass
        try:
            patch(module, self._lib)
        except Exception:
            pass

    def __getattr__(self, name):  # get_source, get_filename, ... of the real loader
        return getattr(self._loader, name)


class _Finder:
    def __init__(self, lib):
        self._lib = lib

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        for f in sys.meta_path:
            if f is self or not hasattr(f, "find_spec"):
                continue
            spec = f.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, self._lib, self)
                return spec
        return None


def install(lib):
    """Record torch's record_function blocks as ranges of `lib` (a ctypes
    handle of libmlprof): now if torch is imported, else when it is."""
    mod = sys.modules.get(_TARGET)
    if mod is not None:
        return patch(mod, lib)
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(lib))
    return False


def _chain(here):
    """Run the sitecustomize this copy stands in front of, if any."""
    import importlib.machinery
    import importlib.util
    import os
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path[:] = rest
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)


def _as_sitecustomize():
    import ctypes
    import os
    try:
        _chain(os.path.dirname(os.path.abspath(__file__)))
    except Exception as e:  # what the interpreter says of a failing sitecustomize
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                         % (type(e).__name__, e))
    if os.environ.get("MLPROF_PRELOAD") != "1" or os.environ.get("MLPROF_TORCH_RANGES", "1") == "0":
        return
    lib = ctypes.CDLL(None)  # the preloaded libmlprof is in the global scope
    if not hasattr(lib, "prof_range_push_id"):
        return
    declare(lib)
    install(lib)


if __name__ == "sitecustomize":
    try:
        _as_sitecustomize()
    except Exception as e:  # never stop the program over its ranges
        sys.stderr.write("mlprof: record_function blocks are not recorded as ranges: %s\n" % e)
