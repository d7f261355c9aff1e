"""PyTorch integration: module ranges, layer histograms, steps and loaders.

``import mlprof.torch`` does not import torch until a function needs it, so
the binding keeps no hard dependency on PyTorch.

    model = mlprof.torch.instrument(model, histograms_every=10)
    for x, y in mlprof.torch.loader(train_loader):
        with mlprof.step():
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()

``mlprof.torch.profile`` and ``mlprof.torch.schedule`` work as
torch.profiler's do (``on_trace_ready``, ``p.step()``, ``p.table()``,
``p.export_chrome_trace()``; see mlprof/profile.py).

Each module's forward becomes a range named by its path in the model and
its class (``0 (Linear)``, ``encoder.layer1 (Conv2d)``; the root module is
named by its class alone), and its backward a range ``<name>.backward``:
begun when the gradient of the module's output arrives, ended when the
gradients of its inputs are computed (or, for a module whose inputs need no
gradient, when the backward pass ends). With ``histograms_every=N`` the
weights and gradients of every module with parameters, and the activations
of those and of every parameterless leaf module (ReLU, GELU, Dropout, ...),
are summarised every N steps (``<path>.weight``, ``<path>.weight.grad``,
``<path>.act``) for the model-health findings: a ReLU whose outputs are
nearly all zero fires ``dead_units``.
"""

import mlprof
from mlprof.profile import ProfilerAction, profile, schedule  # noqa: F401 - torch.profiler's way of working

_COMPUTE = mlprof.CATEGORIES["compute"]
_DATA = mlprof.CATEGORIES["data"]


class Instrumentation:
    """The hooks placed on one model; ``remove()`` takes them all away."""

    def __init__(self, model, histograms_every=0, backward=True):
        self.model = model
        self.every = int(histograms_every or 0)
        self.backward = backward
        self.handles = []
        self.fwd_depth = 0
        self.bwd_open = []  # paths of backward ranges open, innermost last
        self._install()

    # ---------------------------------------------------------------
    def remove(self):
        self.close_backward()
        for h in self.handles:
            h.remove()
        self.handles = []

    def histogram_step(self):
        """True on the steps whose layers are summarised."""
        if self.every <= 0:
            return False
        n = mlprof.step_count()
        return n > 0 and (n - 1) % self.every == 0

    def close_backward(self, until=None):
        """Pop backward ranges, innermost first, down to `until` (inclusive)."""
        while self.bwd_open:
            path = self.bwd_open.pop()
            mlprof._c.prof_range_pop()
            if path == until:
                return

    # ---------------------------------------------------------------
    def _install(self):
        root = self.model
        for path, module in root.named_modules():
            cls = type(module).__name__
            name = "%s (%s)" % (path, cls) if path else cls
            has_params = any(True for _ in module.parameters(recurse=False))
            leaf = not any(True for _ in module.children())
            # Names are resolved on first use: the profiler may start later.
            self.handles.append(module.register_forward_pre_hook(self._pre(name)))
            self.handles.append(module.register_forward_hook(
                self._post(name, name + ".backward", path or cls, has_params, leaf)))
            if self.backward:
                try:
                    self.handles.append(module.register_full_backward_hook(self._bwd_end(name)))
                except Exception:  # modules that cannot take backward hooks
                    pass

    def _pre(self, name):
        def hook(module, inputs):
            rid = mlprof._name_id(name)
            if rid:
                mlprof._c.prof_range_push_id(rid, _COMPUTE)
                self.fwd_depth += 1
        return hook

    def _post(self, name, bname, hname, has_params, leaf):
        def hook(module, inputs, output):
            if self.fwd_depth > 0:
                self.fwd_depth -= 1
                mlprof._c.prof_range_pop()
            if (has_params or leaf) and self.histogram_step():
                self._layer_histograms(module, hname, output)
            if self.backward:
                self._watch_output(name, bname, output)
        return hook

    def _watch_output(self, name, bname, output):
        import torch
        if isinstance(output, torch.Tensor) and output.requires_grad:
            def begin(grad):
                if not self.bwd_open:
                    self._close_at_backward_end()
                bid = mlprof._name_id(bname)
                if bid:
                    mlprof._c.prof_range_push_id(bid, _COMPUTE)
                    self.bwd_open.append(name)
                return None
            output.register_hook(begin)

    def _close_at_backward_end(self):
        """Ask autograd to close our backward ranges when this backward pass
        ends (modules whose inputs need no gradient get no end hook)."""
        try:
            from torch.autograd import Variable
            Variable._execution_engine.queue_callback(self.close_backward)
        except Exception:  # older or newer engines: closed at step end instead
            pass

    def _bwd_end(self, name):
        def hook(module, grad_input, grad_output):
            if name in self.bwd_open:
                self.close_backward(until=name)
            return None
        return hook

    def _layer_histograms(self, module, name, output):
        import torch
        with torch.no_grad():
            for pname, p in module.named_parameters(recurse=False):
                mlprof.histogram("%s.%s" % (name, pname), "weight", p)
            if isinstance(output, torch.Tensor):
                # units (features, channels) sit in dim 1 for (N, C, ...) and
                # in the last dim for (N, F): move them last for per-unit counts
                act, units = output.detach(), 0
                if act.dim() >= 2 and act.shape[0] > 0:
                    act = act.movedim(1, -1) if act.dim() > 2 else act
                    units = act.shape[-1]
                    act = act.contiguous()
                mlprof.histogram(name + ".act", "activation", act, units=units)


    def gradient_histograms(self):
        """Summarise every parameter's gradient (after backward)."""
        if not self.histogram_step():
            return
        import torch
        with torch.no_grad():
            for path, module in self.model.named_modules():
                name = path or type(module).__name__
                for pname, p in module.named_parameters(recurse=False):
                    if p.grad is not None:
                        mlprof.histogram("%s.%s.grad" % (name, pname), "gradient", p.grad)


def instrument(model, histograms_every=0, backward=True, graph=True):
    """Turn each module's forward (and backward) into ranges; see the module
    docs. With ``graph=True`` the model graph is recorded once (see
    :func:`record_graph`). Returns the model; the hooks live in
    ``model._mlprof``."""
    inst = Instrumentation(model, histograms_every, backward)
    try:
        model._mlprof = inst
    except Exception:
        pass
    if graph:
        record_graph(model)
    return model


def finish_backward(model):
    """Close backward ranges still open and, on histogram steps, summarise
    the gradients; called at the end of :func:`step`."""
    inst = getattr(model, "_mlprof", None)
    if inst is not None:
        inst.close_backward()
        inst.gradient_histograms()


class step:
    """``with mlprof.torch.step(model):`` — one training step, closing any
    backward range left open at its end."""

    def __init__(self, model=None):
        self.model = model

    def __enter__(self):
        mlprof.start()
        return self

    def __exit__(self, *exc):
        if self.model is not None:
            finish_backward(self.model)
        mlprof.stop()
        return False


def loader(iterable, name="data", steps=False, model=None):
    """Wrap a data loader: fetching each batch is a DATA range, so input
    stalls show in the step-time breakdown and the ``input_bound`` finding.

    With ``steps=True`` the loader also marks the steps, one per batch: the
    first step begins before the first batch is fetched, and each step ends
    after the *next* batch has been fetched (so every step holds one fetch
    and one batch of training, and no empty step is left when the loader
    runs out). Do not use :func:`step` or ``mlprof.step`` then. ``model``
    (instrumented) lets each step end close its backward ranges."""
    it = iter(iterable)

    def fetch():
        nid = mlprof._name_id(name)
        if nid:
            mlprof._c.prof_range_push_id(nid, _DATA)
        try:
            return next(it), True
        except StopIteration:
            return None, False
        finally:
            if nid:
                mlprof._c.prof_range_pop()

    def end_step():
        if model is not None:
            finish_backward(model)
        mlprof.stop()

    if not steps:
        while True:
            batch, ok = fetch()
            if not ok:
                return
            yield batch
    mlprof.start()
    open_step = True
    try:
        batch, ok = fetch()
        while ok:
            yield batch
            batch, ok = fetch()
            end_step()
            open_step = False
            if ok:
                mlprof.start()
                open_step = True
    finally:
        if open_step:
            end_step()


# ---- the model graph (docs/graph.md) ---------------------------------------

_GRAPH_PATIENCE = 50  # forwards with gradients to wait for a running profiler


def _tensors(obj, out, depth=0):
    """The tensors in a module's output (tensors, tuples, lists, dicts)."""
    import torch
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif depth < 4 and isinstance(obj, (tuple, list)):
        for x in obj:
            _tensors(x, out, depth + 1)
    elif depth < 4 and isinstance(obj, dict):
        for x in obj.values():
            _tensors(x, out, depth + 1)
    return out


def _unwrap(fn):
    """The autograd node under the pass-through nodes that backward hooks
    (ours included) put on a module's inputs and outputs."""
    while fn is not None and type(fn).__name__ == "BackwardHookFunctionBackward":
        nexts = [f for f, _ in fn.next_functions if f is not None]
        if len(nexts) != 1:
            break
        fn = nexts[0]
    return fn


def _module_name(path, module):
    return path or type(module).__name__


class GraphRecorder:
    """Records the model graph once: the module tree (path, class, parameter
    count and bytes) and the data flow between modules.

    During a forward that builds an autograd graph, a forward hook on every
    module notes which autograd node produced its output (the innermost
    module wins: its hook runs first). When the root module's forward ends,
    the autograd graph is walked from the model's outputs, the part of the
    first loss's graph that lies inside the model (``grad_fn`` and
    ``next_functions``): each module's inputs are the nearest module outputs
    upstream of its output, through any functional operations (sums,
    concatenations, residual connections), so in ``head(relu(fc_a(x) +
    fc_b(x)))`` both ``fc_a`` and ``fc_b`` feed ``head``. The nodes and edges
    go to the trace (prof_graph_node / prof_graph_edge), then the hooks are
    removed: later steps pay nothing. ``seconds`` holds what recording cost.
    """

    def __init__(self, model):
        self.model = model
        self.done = False
        self.seconds = 0.0
        self.edges = []
        self.handles = []
        self.waited = 0
        self._owner = {}  # id(grad_fn) -> module name
        self._keep = []   # the grad_fns noted (keeps their ids unique)
        self._order = {}  # module name -> position in the forward
        mods = list(model.named_modules())
        root = mods[0][1] if mods else model
        self.handles.append(root.register_forward_pre_hook(self._begin))
        for path, module in mods:
            name = _module_name(path, module)
            self.handles.append(module.register_forward_hook(self._note(name)))
        self.handles.append(root.register_forward_hook(self._end))

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []
        self._owner, self._keep = {}, []

    def _begin(self, module, inputs):
        self._owner, self._keep, self._order = {}, [], {}

    def _note(self, name):
        def hook(module, inputs, output):
            if name not in self._order:
                self._order[name] = len(self._order)
            for t in _tensors(output, []):
                fn = _unwrap(t.grad_fn)
                if fn is not None and id(fn) not in self._owner:
                    self._owner[id(fn)] = name
                    self._keep.append(fn)
        return hook

    def _end(self, module, inputs, output):
        if self.done:
            return
        roots = [_unwrap(t.grad_fn) for t in _tensors(output, []) if t.grad_fn is not None]
        if not roots:
            return  # no autograd graph (evaluation): wait for a training forward
        import time
        t0 = time.perf_counter()
        try:
            if not mlprof._name_id(type(self.model).__name__):
                self._owner, self._keep = {}, []
                self.waited += 1  # the profiler is not running yet
                if self.waited >= _GRAPH_PATIENCE:
                    self.done = True
                    self.remove()
                return
            self.edges = self._flow(roots)
            self._emit()
        except Exception as e:  # never break the training over the graph
            import sys
            sys.stderr.write("mlprof: the model graph was not recorded: %s\n" % e)
        self.done = True
        self.remove()
        self.seconds = time.perf_counter() - t0

    def _flow(self, roots):
        """Module -> module edges, in data-flow (forward) order."""
        owner = self._owner
        # Python objects of autograd nodes are made on demand: every node
        # visited is kept alive so that its id stays its own during the walk.
        alive = list(roots)
        memo = {}   # id(fn) -> names of the nearest module outputs at or below fn
        inputs = {}  # module name -> names feeding it
        stack = [(fn, False) for fn in roots]
        while stack:
            fn, expanded = stack.pop()
            key = id(fn)
            if key in memo and not expanded:
                continue
            nexts = [f for f, _ in getattr(fn, "next_functions", ()) if f is not None]
            alive.extend(nexts)
            if not expanded:
                memo[key] = None  # on the stack
                stack.append((fn, True))
                for f in nexts:
                    if id(f) not in memo:
                        stack.append((f, False))
                continue
            below = set()
            for f in nexts:
                below |= memo.get(id(f)) or set()
            name = owner.get(key)
            if name is not None:
                ins = inputs.setdefault(name, set())
                ins |= below - {name}
                memo[key] = {name}
            else:
                memo[key] = below
        order = self._order
        edges = [(a, b) for b, ins in inputs.items() for a in ins]
        edges.sort(key=lambda e: (order.get(e[0], 0), order.get(e[1], 0)))
        return edges

    def _emit(self):
        c = mlprof._c
        for path, module in self.model.named_modules():
            name = _module_name(path, module)
            parent = None
            if path:
                head = path.rpartition(".")[0]
                parent = head or type(self.model).__name__
            params = nbytes = 0
            for p in module.parameters():
                params += p.numel()
                nbytes += p.numel() * p.element_size()
            mlprof.graph_node(name, type(module).__name__, parent, params, nbytes)
        for a, b in self.edges:
            mlprof.graph_edge(a, b)
        if getattr(c, "prof_meta", None) is not None:
            mlprof.meta("graph.source", "torch")


def record_graph(model):
    """Record the model graph once, at the first forward that builds an
    autograd graph while the profiler runs (see :class:`GraphRecorder`);
    :func:`instrument` calls it. Returns the recorder (``model._mlprof_graph``);
    its hooks remove themselves once the graph is recorded."""
    rec = GraphRecorder(model)
    try:
        model._mlprof_graph = rec
    except Exception:
        pass
    return rec
