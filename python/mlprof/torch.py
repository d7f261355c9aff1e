"""PyTorch integration: module ranges, layer histograms, steps and loaders.

``import mlprof.torch`` does not import torch until a function needs it, so
the binding keeps no hard dependency on PyTorch.

    model = mlprof.torch.instrument(model, histograms_every=10)
    for x, y in mlprof.torch.loader(train_loader):
        with mlprof.step():
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()

Each module's forward becomes a range named by its path in the model
(``0``, ``1``, ``encoder.layer.3``; the root module is named after its
class), and its backward a range ``<path>.backward``: begun when the
gradient of the module's output arrives, ended when the gradients of its
inputs are computed (or, for a module whose inputs need no gradient, when
the backward pass ends). With
``histograms_every=N`` the weights, gradients and activations of every
module with parameters are summarised every N steps (``<path>.weight``,
``<path>.grad``, ``<path>.act``) for the model-health findings.
"""

import mlprof

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
            name = path or type(module).__name__
            has_params = any(True for _ in module.parameters(recurse=False))
            # Names are resolved on first use: the profiler may start later.
            self.handles.append(module.register_forward_pre_hook(self._pre(name)))
            self.handles.append(module.register_forward_hook(
                self._post(name, name + ".backward", has_params)))
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

    def _post(self, name, bname, has_params):
        def hook(module, inputs, output):
            if self.fwd_depth > 0:
                self.fwd_depth -= 1
                mlprof._c.prof_range_pop()
            if has_params and self.histogram_step():
                self._layer_histograms(module, name, output)
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


def instrument(model, histograms_every=0, backward=True):
    """Turn each module's forward (and backward) into ranges; see the module
    docs. Returns the model; the hooks live in ``model._mlprof``."""
    inst = Instrumentation(model, histograms_every, backward)
    try:
        model._mlprof = inst
    except Exception:
        pass
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
