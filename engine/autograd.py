"""Autograd: grad mode, the ``Function`` every op is made of, and the backward walk.

One mechanism serves the built-in ops and the user's own: a :class:`Function` subclass with static
``forward(ctx, ...)`` and ``backward(ctx, *grad_outputs)`` methods, applied with ``Cls.apply(...)``.
The graph is recorded only when grad mode is on and an input requires a gradient.

Built-in ops set ``raw = True``: their ``forward``/``backward`` take and return the underlying NumPy or
CuPy arrays, which saves wrapping on the hot path. A user's Function (``raw = False``, the default) gets
Tensors, as in PyTorch, and runs its forward with grad mode off.

The backward walk is iterative (no recursion limit on deep graphs): it counts each node's consumers,
then runs nodes whose consumers are all done (Kahn's order). Gradients are accumulated, never
assigned, and broadcasting is undone in one place (:func:`unbroadcast`).
"""

from __future__ import annotations

import functools
import itertools
import threading
import weakref
from heapq import heappop as _heappop
from heapq import heappush as _heappush

import numpy as np

from .backend import xp_of

__all__ = [
    "Function",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "backward",
    "grad",
]


# --------------------------------------------------------------------------- grad mode, per thread


class _GradMode(threading.local):
    def __init__(self):
        self.enabled = True


_mode = _GradMode()


def is_grad_enabled() -> bool:
    return _mode.enabled


class _GradModeContext:
    """Base of the grad-mode switches: usable as ``with`` blocks and as decorators."""

    _target = True

    def __enter__(self):
        self._prev = _mode.enabled
        _mode.enabled = self._target
        return self

    def __exit__(self, *exc):
        _mode.enabled = self._prev
        return False

    def __call__(self, func):
        target = self._target

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = _mode.enabled
            _mode.enabled = target
            try:
                return func(*args, **kwargs)
            finally:
                _mode.enabled = prev

        return wrapper


class no_grad(_GradModeContext):
    """Turn graph recording off in this thread: ``with engine.no_grad(): ...`` or ``@engine.no_grad()``."""

    _target = False


class enable_grad(_GradModeContext):
    """Turn graph recording back on in this thread (inside a ``no_grad`` block)."""

    _target = True


class inference_mode(no_grad):
    """Same as :class:`no_grad` here (the engine has no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self._target = not mode


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` switches recording off now; as a context it restores on exit."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = _mode.enabled
        _mode.enabled = self._target

    def __enter__(self):
        return self


# --------------------------------------------------------------------------- Function

FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class _Scratch:
    """A throw-away ctx for built-in ops when no graph is recorded. It keeps nothing: an array left on it
    would live until the next op and change how NumPy's buffers are reused (measured: the tutorial's
    manual step went from 1.12x to 1.24x raw NumPy when they were kept)."""

    __slots__ = ()
    needs_input_grad = ()

    def __setattr__(self, name, value):
        pass

    def save_for_backward(self, *args):
        pass


_SCRATCH = _Scratch()
# recording order of graph nodes (the backward walk runs the newest first); next() on a count is atomic
_next_seq = itertools.count().__next__


class Function:
    """Base class of differentiable operations, built-in or your own.

    Subclass it with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grad_outputs)``; call
    ``YourFunction.apply(*inputs)``. In ``forward`` stash tensors with ``ctx.save_for_backward(...)``;
    in ``backward`` read them from ``ctx.saved_tensors`` and return one gradient per input (``None``
    for inputs that need none; ``ctx.needs_input_grad`` says which do).
    """

    raw = False  # True for built-ins: forward/backward work on raw arrays

    # graph-node state, set by apply when the graph is recorded
    _inputs: tuple = ()
    _seq = 0  # recording order, set by apply
    _n_out = 1
    _saved: tuple = ()
    saved = None  # what a built-in keeps for its backward (arrays, not Tensors)
    _freed = False
    _retained = None
    needs_input_grad: tuple = ()

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    # ---- ctx API
    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED_GRAPH)
        return self._saved

    def mark_non_differentiable(self, *tensors):  # accepted for PyTorch compatibility
        pass

    def name(self) -> str:
        return type(self).__name__ + "Backward"

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self):
        return tuple((t.grad_fn, t._out_index) if t is not None else (None, 0) for t in self._inputs)

    # ---- applying
    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.raw:
            # The one- and two-input cases are unrolled, with _forward and _result written out: at the tiny
            # size those calls cost ~1 us of a ~47 us autograd step (measured), and a comprehension a frame.
            if len(args) == 2:
                a, b = args
                ra = a._data if isinstance(a, Tensor) else a
                rb = b._data if isinstance(b, Tensor) else b
                need_a = ra is not a and a._rg
                need_b = rb is not b and b._rg
                track = (need_a or need_b) and _mode.enabled
                ctx = cls() if track else _SCRATCH
                try:
                    out = cls.forward(ctx, ra, rb, **kwargs)
                except (TypeError, ValueError):
                    _check_same_device(*args)  # NumPy and CuPy arrays do not mix: say which devices
                    raise
                if out.__class__ in _SCALAR_TYPES:
                    out = np.asarray(out)
                t = _new(Tensor)
                t._data = out
                if track:
                    ctx._seq = _next_seq()
                    ctx._inputs = (a if need_a else None, b if need_b else None)
                    ctx.needs_input_grad = (need_a, need_b)
                    t._rg = True
                    t.grad_fn = ctx
                else:
                    t._rg = False
                return t
            if len(args) == 1 and isinstance(args[0], Tensor):  # unary built-ins (options come as keywords)
                a = args[0]
                track = a._rg and _mode.enabled
                ctx = cls() if track else _SCRATCH
                out = cls.forward(ctx, a._data, **kwargs)
                if out.__class__ in _SCALAR_TYPES:
                    out = np.asarray(out)
                t = _new(Tensor)
                t._data = out
                if track:
                    ctx._seq = _next_seq()
                    ctx._inputs = args
                    ctx.needs_input_grad = (True,)
                    t._rg = True
                    t.grad_fn = ctx
                else:
                    t._rg = False
                return t
            raw_args = list(args)
            track = False
            i = 0
            for a in args:
                if isinstance(a, Tensor):
                    raw_args[i] = a._data
                    if a._rg:
                        track = True
                i += 1
            if not track or not _mode.enabled:
                return _result(_forward(cls, _SCRATCH, args, raw_args, kwargs), None)
            ctx = cls()
            ctx._seq = _next_seq()
            out = _forward(cls, ctx, args, raw_args, kwargs)
            inputs = list(args)
            needs = [False] * len(args)
            i = 0
            for a in args:
                if isinstance(a, Tensor) and a._rg:
                    needs[i] = True
                else:
                    inputs[i] = None
                i += 1
            ctx._inputs = tuple(inputs)
            ctx.needs_input_grad = tuple(needs)
            return _result(out, ctx)

        enabled = _mode.enabled
        track = enabled and any(isinstance(a, Tensor) and a._rg for a in args)
        ctx = cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        prev = _mode.enabled
        _mode.enabled = False
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            _mode.enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        wrapped = []
        for o in outs:
            if not isinstance(o, Tensor):
                o = _wrap(o) if o is not None and hasattr(o, "shape") else o
            elif track and any(o is a for a in args):
                # forward returned an input as it is: give the output its own identity
                o = o._shallow()
            wrapped.append(o)
        if track:
            ctx._seq = _next_seq()
            ctx._inputs = tuple(a if isinstance(a, Tensor) and a._rg else None for a in args)
            ctx._n_out = len(wrapped)
            if len(wrapped) > 1:
                ctx._out_meta = [
                    (o._data.shape, o._data.dtype, _xp(o._data)) if isinstance(o, Tensor) else ((), None, np)
                    for o in wrapped
                ]
            for i, o in enumerate(wrapped):
                if isinstance(o, Tensor) and o.dtype.is_floating_point:
                    o._rg = True
                    o.grad_fn = ctx
                    o._out_index = i
        return wrapped[0] if single else tuple(wrapped)

    # ---- running backward for one node (the walk calls built-ins' backward directly)
    def _run_backward(self, grad_outputs):
        """A user Function's backward, on Tensors with grad mode off; returns one raw gradient per input."""
        if self._freed:
            raise RuntimeError(FREED_GRAPH)
        prev = _mode.enabled
        _mode.enabled = False
        try:
            gins = self.backward(self, *(_wrap(g) if g is not None else None for g in grad_outputs))
        finally:
            _mode.enabled = prev
        if not isinstance(gins, tuple):
            gins = (gins,)
        n = len(self._inputs)
        if len(gins) != n:
            # PyTorch allows extra trailing Nones
            if len(gins) > n and all(g is None for g in gins[n:]):
                gins = gins[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {n}, got {len(gins)})"
                )
        return tuple(g._data if isinstance(g, Tensor) else g for g in gins)


def _forward(cls, ctx, args, raw_args, kwargs):
    try:
        return cls.forward(ctx, *raw_args, **kwargs)
    except (TypeError, ValueError):
        _check_same_device(*args)  # NumPy and CuPy arrays do not mix: say which devices
        raise


def _result(out, ctx):
    """A built-in's output array as a Tensor, made by ``ctx`` (None: not recorded)."""
    if out.__class__ in _SCALAR_TYPES:
        out = np.asarray(out)
    t = _new(Tensor)
    t._data = out
    if ctx is None:
        t._rg = False
    else:
        t._rg = True
        t.grad_fn = ctx
    return t


# --------------------------------------------------------------------------- the backward walk


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape``: the one place where broadcasting is undone."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if isinstance(g, np.generic):
        g = np.asarray(g)
    return g.reshape(shape) if g.shape != shape else g


def _add_pending(pending, node, index, g):
    """Add ``g`` to what has arrived for output ``index`` of ``node``: the gradient itself for a single-output
    node, a list of slots for a multi-output one."""
    if node._n_out == 1:
        prev = pending.get(node)
        pending[node] = g if prev is None else prev + g
        return
    slots = pending.get(node)
    if slots is None:
        slots = pending[node] = [None] * node._n_out
    slots[index] = g if slots[index] is None else slots[index] + g


def _run(roots, root_grads, retain_graph, capture=None):
    """Propagate ``root_grads`` from ``roots`` through the graph.

    Without ``capture``: accumulate into the leaves' ``.grad`` (Tensor.backward). With ``capture`` (a dict
    keyed by id of the wanted tensors): collect their gradients there and touch no ``.grad`` (autograd.grad).

    Nodes run newest first (``_seq``, numbered at recording). A node's consumers were all recorded after
    it, so by the time it is the newest node with a pending gradient, every gradient it will receive has
    arrived: no pass over the graph to count consumers is needed, and nodes the roots do not reach are
    never visited.
    """
    pending: dict = {}
    heap: list = []
    for t, g in zip(roots, root_grads):
        node = t.grad_fn
        if node is None:
            if capture is not None:
                if id(t) in capture:
                    capture[id(t)] = g if capture[id(t)] is None else capture[id(t)] + g
            else:
                _accumulate_leaf(t, g, set())
            continue
        if node not in pending:
            _heappush(heap, (-node._seq, node))
        _add_pending(pending, node, t._out_index, g)

    # non-leaf tensors whose gradient autograd.grad wants, by the node that made them
    wanted_nodes: dict = {}
    if capture is not None:
        for t in capture.pop("__targets__", ()):
            wanted_nodes.setdefault(t.grad_fn, []).append(t)

    assigned: set = set()
    while heap:
        node = _heappop(heap)[1]
        gouts = pending.pop(node)
        single = node._n_out == 1
        if node._retained is not None or (wanted_nodes and node in wanted_nodes):
            _deliver_nonleaf(node, [gouts] if single else gouts, capture, wanted_nodes)
        if not single:
            gouts = [g if g is not None else _zeros_for_output(node, i) for i, g in enumerate(gouts)]
        if not node.raw:
            gins = node._run_backward([gouts] if single else gouts)
        elif node._freed:
            raise RuntimeError(FREED_GRAPH)
        else:
            # built-ins: straight to backward; zip() drops the option slots that follow the tensor inputs
            gins = node.backward(node, gouts) if single else node.backward(node, *gouts)
            if gins.__class__ is not tuple:
                gins = (gins,)
        for inp, g in zip(node._inputs, gins):
            if inp is None or g is None:
                continue
            data = inp._data
            if g.shape != data.shape:
                g = unbroadcast(g, data.shape)
            dtype = g.dtype
            if dtype is not data.dtype and dtype != data.dtype:
                g = g.astype(data.dtype)  # a mixed-dtype op: each input gets its gradient in its own dtype
            fn = inp.grad_fn
            if fn is None:
                if capture is None:
                    _accumulate_leaf(inp, g, assigned)
                elif id(inp) in capture:
                    prev = capture[id(inp)]
                    capture[id(inp)] = g if prev is None else prev + g
            elif fn._n_out == 1:
                prev = pending.get(fn)
                if prev is None:
                    pending[fn] = g
                    _heappush(heap, (-fn._seq, fn))
                else:
                    pending[fn] = prev + g
            else:
                if fn not in pending:
                    _heappush(heap, (-fn._seq, fn))
                _add_pending(pending, fn, inp._out_index, g)
        if not retain_graph:  # free what the node saved (built-ins: .saved; a user's Function: ._saved)
            if node.saved is not None:
                node._freed = True
                node.saved = None
            if node._saved:
                node._freed = True
                node._saved = ()


def _zeros_for_output(node, index):
    """A zero gradient for an output of a multi-output Function that no path used."""
    shape, np_dtype, xp = node._out_meta[index]
    return xp.zeros(shape, dtype=np_dtype)


def _deliver_nonleaf(node, gouts, capture, wanted_nodes):
    if node._retained is not None and capture is None:
        for index, ref in node._retained.items():
            t = ref()
            g = gouts[index]
            if t is not None and g is not None:
                if t.grad is None:
                    t.grad = _wrap(g.copy())
                else:
                    t.grad._data = t.grad._data + g
    if capture is not None and node in wanted_nodes:
        for t in wanted_nodes[node]:
            g = gouts[t._out_index]
            if g is not None:
                prev = capture.get(id(t))
                capture[id(t)] = g if prev is None else prev + g


def _accumulate_leaf(leaf, g, assigned):
    if not leaf._rg:
        return
    existing = leaf.grad
    if existing is None:
        # the first gradient becomes .grad; copy when it may share memory with another (CuPy's flags have no
        # `writeable`: its arrays are all writable)
        if g.base is not None or id(g) in assigned or (g.__class__ is np.ndarray and not g.flags.writeable):
            g = g.copy()
        assigned.add(id(g))
        leaf.grad = _wrap(g)
    else:
        arr = existing._data
        if arr.shape == g.shape and (arr.dtype is g.dtype or arr.dtype == g.dtype):
            try:
                arr += g  # in place, as PyTorch accumulates
                return
            except ValueError:  # a read-only array (say a broadcast view) was given as .grad
                pass
        existing._data = arr + g


def _scalar_seed(data):
    """The implicit gradient of a one-element output: a one of its dtype, shape and device."""
    if data.__class__ is np.ndarray and data.ndim == 0:
        return np.array(1, dtype=data.dtype)
    return _xp(data).ones(data.shape, dtype=data.dtype)


def _seed_grads(tensors, grad_tensors, who):
    grads = []
    for i, t in enumerate(tensors):
        gt = grad_tensors[i] if grad_tensors is not None else None
        if not t._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if gt is None:
            if t._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs ({who} was called on a "
                    f"tensor of shape {tuple(t._data.shape)}: pass gradient= of that shape)"
                )
            g = _scalar_seed(t._data)
        else:
            g = gt._data if isinstance(gt, Tensor) else gt
            g = _xp(t._data).asarray(g, dtype=t._data.dtype)
            if g.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and output[{i}] "
                    f"has a shape of {tuple(t._data.shape)}."
                )
            g = g.copy()  # never let .grad alias the caller's array
        grads.append(g)
    return grads


_xp = xp_of


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves they depend on."""
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by this engine")
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if isinstance(grad_tensors, Tensor) or (grad_tensors is not None and not isinstance(grad_tensors, (list, tuple))):
        grad_tensors = (grad_tensors,)
    tensors = tuple(tensors)
    grads = _seed_grads(tensors, grad_tensors, "backward()")
    if inputs is not None:
        wanted = tuple(inputs) if not isinstance(inputs, Tensor) else (inputs,)
        captured = grad(tensors, wanted, [_wrap(g) for g in grads], retain_graph=retain_graph, allow_unused=True)
        for t, g in zip(wanted, captured):
            if g is not None:
                _accumulate_leaf(t, g._data, set())
        return
    _run(tensors, grads, bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is left alone)."""
    if create_graph:
        raise NotImplementedError("create_graph=True (higher-order gradients) is not supported by this engine")
    if isinstance(outputs, Tensor):
        outputs = (outputs,)
    single_input = isinstance(inputs, Tensor)
    inputs = (inputs,) if single_input else tuple(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    outputs = tuple(outputs)
    for i, t in enumerate(inputs):
        if not t._rg:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not require grad")
    grads = _seed_grads(outputs, grad_outputs, "grad()")
    capture: dict = {id(t): None for t in inputs}
    capture["__targets__"] = [t for t in inputs if t.grad_fn is not None]
    _run(outputs, grads, bool(retain_graph), capture)
    result = []
    for i, t in enumerate(inputs):
        g = capture.get(id(t))
        if g is None:
            if materialize_grads:
                g = _xp(t._data).zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        result.append(_wrap(g) if g is not None else None)
    return tuple(result)


def _register_retained(tensor):
    node = tensor.grad_fn
    if node._retained is None:
        node._retained = {}
    node._retained[tensor._out_index] = weakref.ref(tensor)


from .tensor import _SCALAR_TYPES, Tensor, _check_same_device, _new, _wrap  # noqa: E402  (Tensor's module imports this one first)
