"""``Function``: the one mechanism of every op, the built-in ones and the user's own.

A subclass has static ``forward(ctx, ...)`` and ``backward(ctx, *grad_outputs)`` methods and is applied with
``Cls.apply(...)``; the graph is recorded only when grad mode is on and an input requires a gradient. Built-in
ops set ``raw = True``: their ``forward``/``backward`` take and return the underlying NumPy or CuPy arrays, which
saves wrapping on the hot path. A user's Function (``raw = False``, the default) gets Tensors, as in PyTorch, and
runs its forward with grad mode off.
"""

from __future__ import annotations

import weakref
from threading import get_ident as _get_ident

import numpy as np

from ..backend import xp_of as _xp
from ..errors import FREED_GRAPH, complex_refusal
from . import _compiled, _writes
from .grad_mode import _off, _switch_off

__all__ = ["Function", "AccumulateGrad", "holomorphic", "complex_words"]


_hook = None  # engine.profiler's recorder while a profile() block runs: it times the outermost apply of its thread

# recording order of graph nodes (the backward walk runs the newest first), on the clock in-place writes are noted
# on too (_writes); next() on a count is atomic
_next_seq = _writes.tick


# add_node_hook(node, table name, fn) -> handle: set by engine.autograd.graph (which reads the tables in its walks)
add_node_hook = None


class Function:
    """Base class of differentiable operations, built-in or your own.

    Subclass it with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grad_outputs)``; call
    ``YourFunction.apply(*inputs)``. In ``forward`` stash tensors with ``ctx.save_for_backward(...)``;
    in ``backward`` read them from ``ctx.saved_tensors`` and return one gradient per input (``None``
    for inputs that need none; ``ctx.needs_input_grad`` says which do).
    """

    raw = False  # True for built-ins: forward/backward work on raw arrays (and their ctx is made without __init__)

    # graph-node state, set by apply when the graph is recorded
    _inputs: tuple = ()
    _seq = 0  # recording order, set by apply
    _n_out = 1
    _saved: tuple = ()
    _saved_arrays: tuple = ()
    saved = None  # what a built-in keeps for its backward (arrays, not Tensors)
    # per slot of ``saved``: the inputs whose gradients read it (None: any), so that backward refuses a saved value
    # written in place only where a gradient it owes reads it (PyTorch saves w of w * x only when x needs a gradient)
    saved_uses = None
    _freed = False
    _retained = None
    _hooks = None  # output index -> its tensor's register_hook() hooks (an OrderedDict by handle id)
    _pre_hooks = None  # the node's own register_prehook() hooks, by handle id
    _post_hooks = None  # the node's own register_hook() hooks, by handle id
    needs_input_grad: tuple = ()  # a built-in's: None where the argument was not a Tensor (a number, a dim, a shape)
    # The arguments that are the node's edges (``next_functions``, and the gradients its hooks see), as PyTorch's
    # schema makes them: each Tensor argument, less those at ``nondiff`` (where's condition, an index); with
    # ``scalar_edges`` a number too (PyTorch wraps the 2 of ``a * 2`` in a tensor: ``MulBackward0`` has two edges,
    # where the 3 of ``a ** 3`` is a Scalar argument and ``PowBackward0`` has one). A node may set ``_edges``, the
    # positions themselves (a user's Function given a number: each Tensor argument, as PyTorch's apply counts them).
    # ``edge_args``: the first so many arguments are the edges, whatever they are (an optional Tensor of PyTorch's
    # schema is an edge even when None: the bias of a convolution without one).
    nondiff: tuple = ()
    # Whether a built-in takes complex operands (its backward then gives PyTorch's gradients for them: the conjugate
    # Wirtinger derivative, ``autograd/complex_grads.py``). One that does not refuses them at apply, by name, as
    # PyTorch does, where NumPy would compute something (a lexicographic max, a ReLU of the real part).
    # ``complex_name``: the op's name in that refusal (else its node's, "ClampBackward1" -> "clamp").
    complex_ok = False
    complex_name = None
    scalar_edges = False

    @classmethod
    def complex_error(cls, dtype, kwargs, device) -> Exception:
        """The refusal of a complex operand (``dtype``, on ``device``: "cpu" or "cuda") by a built-in without a
        complex form: PyTorch's common words, ``"<op>_cpu" not implemented for 'ComplexFloat'`` (``complex_name``
        as it is, where PyTorch's kernel has a name of its own); a built-in whose PyTorch op words it otherwise
        says so here."""
        if cls.complex_name is not None:
            return complex_refusal(cls.complex_name, dtype)
        return complex_refusal(f"{op_name(cls, kwargs)}_{device}", dtype)
    edge_args = None
    _edges = None

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define backward(ctx, *grad_outputs)")

    # ---- ctx API
    def save_for_backward(self, *tensors):
        self._saved = tensors
        # the arrays as saved: a saved tensor an in-place op later rebinds (x += 1 while x requires grad) no longer
        # holds them, and backward refuses it as PyTorch does (graph._check_writes)
        self._saved_arrays = tuple(getattr(t, "_data", None) for t in tensors)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED_GRAPH)
        return self._saved

    def mark_non_differentiable(self, *tensors):  # accepted for PyTorch compatibility
        pass

    # PyTorch's name for this node (``grad_fn.name()``, and what a printed tensor shows as ``grad_fn=<...>``): a
    # string, or a method working it out from what the forward kept ("SumBackward0" without a dim, "SumBackward1"
    # with one). A tensor method that applies a more general Function names the node it made (``unsqueeze``:
    # "UnsqueezeBackward0" on a Reshape). None: a user's Function, named as PyTorch names one ("MyReLUBackward").
    backward_name = None

    def name(self) -> str:
        n = self.backward_name
        if n is None:
            return type(self).__name__ + "Backward"
        return n if n.__class__ is str else n()

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    # ---- the node's own hooks (PyTorch's Node.register_hook / register_prehook)
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after this node's backward (a tuple of Tensors, None where an input
        gets none); a tuple it returns replaces ``grad_inputs``. A handle whose ``remove()`` takes it away."""
        return self._add_node_hook("_post_hooks", fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before this node's backward; a tuple it returns replaces ``grad_outputs``."""
        return self._add_node_hook("_pre_hooks", fn)

    def _add_node_hook(self, table_name, fn):
        if not callable(fn):
            raise TypeError(f"a hook must be callable, got {type(fn).__name__}")
        return add_node_hook(self, table_name, fn)

    @property
    def metadata(self) -> dict:
        """A dict of one's own, kept with the node (PyTorch's ``grad_fn.metadata``)."""
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self._metadata = {}
        return meta

    def _edge_positions(self) -> tuple:
        """The positions of the arguments that are this node's edges (see ``nondiff``, ``scalar_edges``)."""
        edges = self._edges
        if edges is not None:
            return edges
        skip = self.nondiff
        if self.edge_args is not None:
            return tuple(i for i in range(self.edge_args) if i not in skip)
        needs = self.needs_input_grad
        if self.scalar_edges:
            return tuple(i for i in range(len(self._inputs)) if i not in skip)
        return tuple(i for i in range(len(self._inputs))
                     if (i >= len(needs) or needs[i] is not None) and i not in skip)

    @property
    def next_functions(self):
        """``((node, output index), ...)``, one per edge (each Tensor argument, as in PyTorch): the node that made
        the input, an :class:`AccumulateGrad` for a leaf that requires a gradient, and ``(None, 0)`` for an input
        that needs none."""
        recorded = self._inputs_as_recorded()
        n = len(recorded)
        return tuple(((t.grad_fn, t._out_index) if t.grad_fn is not None else (_accumulator(t), 0))
                     if t is not None else (None, 0)
                     for t in (recorded[i] if i < n else None for i in self._edge_positions()))

    def _inputs_as_recorded(self) -> tuple:
        """The inputs, each as this node took it: one an in-place op has rebound since stands where it stood then."""
        return tuple(t._as_it_was(self._seq) if t is not None else None for t in self._inputs)

    # ---- applying: Cls.apply(*args, **kwargs) is _apply below, or its compiled form (set after the class)
    apply = None

    # ---- running backward for one node (the walk calls built-ins' backward directly)
    def _run_backward(self, grad_outputs):
        """A user Function's backward, on Tensors with grad mode off; returns one raw gradient per input."""
        if self._freed:
            raise RuntimeError(FREED_GRAPH)
        ident = _get_ident()
        was_on = ident not in _off
        _switch_off(ident)
        try:
            gins = self.backward(self, *(_wrap(g) if g is not None else None for g in grad_outputs))
        finally:
            if was_on:
                _off.discard(ident)
            else:
                _off.add(ident)
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


def _apply(cls, *args, **kwargs):
    """``Cls.apply``: run the forward, and record the node when grad mode is on and an input requires a gradient.
    ``_cgraph.c``'s apply does the one-, two- and three-input paths of built-ins the same way, and hands the rest
    here."""
    if _hook is not None and not _hook.depth and _hook.thread == _get_ident():
        return _hook.apply(cls, args, kwargs)  # times this call, which comes back here inside it
    if cls.raw:
        # The one- and two-input cases are unrolled, with _forward and _result written out: at the tiny
        # size those calls cost ~1 us of a ~47 us autograd step (measured), and a comprehension a frame.
        if len(args) == 2:
            a, b = args
            ra = a._data if isinstance(a, Tensor) else a
            rb = b._data if isinstance(b, Tensor) else b
            if not cls.complex_ok:
                check_complex(cls, ra, rb, kwargs)
            need_a = ra is not a and a._rg
            need_b = rb is not b and b._rg
            track = (need_a or need_b) and (not _off or _get_ident() not in _off)
            ctx = _new(cls)  # a fresh ctx per call, recorded or not (a forward may read back what it wrote)
            try:
                out = cls.forward(ctx, ra, rb, **kwargs) if kwargs else cls.forward(ctx, ra, rb)
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
                # (None for a number: it is no edge of the node, see Function.nondiff)
                ctx.needs_input_grad = (need_a if ra is not a else None, need_b if rb is not b else None)
                t._rg = True
                t.grad_fn = ctx
            else:
                t._rg = False
            return t
        if len(args) == 1 and isinstance(args[0], Tensor):  # unary built-ins (options come as keywords)
            a = args[0]
            if not cls.complex_ok:
                check_complex(cls, a._data, None, kwargs)
            track = a._rg and (not _off or _get_ident() not in _off)
            ctx = _new(cls)  # a fresh ctx per call, recorded or not (a forward may read back what it wrote)
            out = cls.forward(ctx, a._data, **kwargs) if kwargs else cls.forward(ctx, a._data)
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
        if not cls.complex_ok:
            check_complex(cls, *raw_args, kwargs)
        if not track or _get_ident() in _off:
            return _result(_forward(cls, cls(), args, raw_args, kwargs), None)
        ctx = cls()
        ctx._seq = _next_seq()
        out = _forward(cls, ctx, args, raw_args, kwargs)
        inputs = list(args)
        needs = [None] * len(args)  # (None for what is not a Tensor: no edge of the node, see Function.nondiff)
        i = 0
        for a in args:
            if isinstance(a, Tensor) and a._rg:
                needs[i] = True
            else:
                inputs[i] = None
                if isinstance(a, Tensor):
                    needs[i] = False
            i += 1
        ctx._inputs = tuple(inputs)
        ctx.needs_input_grad = tuple(needs)
        return _result(out, ctx)

    ident = _get_ident()
    enabled = ident not in _off
    track = enabled and any(isinstance(a, Tensor) and a._rg for a in args)
    ctx = cls()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
    _switch_off(ident)  # a user's forward runs with recording off
    try:
        out = cls.forward(ctx, *args, **kwargs)
    finally:
        if enabled:
            _off.discard(ident)
        else:
            _off.add(ident)  # as it was, whatever the forward switched
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
        if not all(isinstance(a, Tensor) for a in args):  # its edges: the Tensor arguments, as PyTorch's apply
            ctx._edges = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx._n_out = len(wrapped)
        if len(wrapped) > 1:
            ctx._out_meta = [
                (o._data.shape, o._data.dtype, _xp(o._data)) if isinstance(o, Tensor) else ((), None, np)
                for o in wrapped
            ]
        for i, o in enumerate(wrapped):
            if isinstance(o, Tensor) and o._data.dtype.kind in "fc":  # (PyTorch: floating point and complex)
                o._rg = True
                o.grad_fn = ctx
                o._out_index = i
    return wrapped[0] if single else tuple(wrapped)


def apply_several(cls, *args, **kwargs):
    """``Cls.apply`` of a built-in whose forward returns a tuple of arrays (``split``'s pieces): one node that made
    them all, each output a Tensor at its own index of it (``_out_index``), as PyTorch's ``SplitBackward0``. The
    walks give its backward a gradient per output, zeros for one no path used (``_out_meta``)."""
    if _hook is not None and not _hook.depth and _hook.thread == _get_ident():
        return _hook.apply(cls, args, kwargs)  # times this call, which comes back here inside it
    raw_args = [a._data if isinstance(a, Tensor) else a for a in args]
    if not cls.complex_ok:
        check_complex(cls, *raw_args, kwargs)
    track = any(isinstance(a, Tensor) and a._rg for a in args) and (not _off or _get_ident() not in _off)
    ctx = _new(cls)
    outs = _forward(cls, ctx, args, raw_args, kwargs)
    if not track:
        return tuple(_result(o, None) for o in outs)
    ctx._seq = _next_seq()
    ctx._inputs = tuple(a if isinstance(a, Tensor) and a._rg else None for a in args)
    ctx.needs_input_grad = tuple((a._rg if isinstance(a, Tensor) else None) for a in args)
    ctx._n_out = len(outs)
    ctx._out_meta = [(o.shape, o.dtype, _xp(o)) for o in outs]
    wrapped = []
    for i, o in enumerate(outs):
        t = _result(o, ctx)
        t._out_index = i
        wrapped.append(t)
    return tuple(wrapped)


def complex_words(make):
    """A built-in's own refusal of complex operands, as ``complex_error = complex_words(lambda dtype, kwargs,
    device: ...)`` in its class: PyTorch's words for that op."""
    return classmethod(lambda cls, dtype, kwargs, device: make(dtype, kwargs, device))


def holomorphic(backward):
    """A built-in's raw ``backward``, written for real numbers (``gy * f'(x)``, ``gy @ b.T``), made to give PyTorch's
    gradients of complex operands too.

    PyTorch's gradient of a real loss L with respect to z = x + iy is dL/dx + i dL/dy: the direction of steepest
    ascent, so that ``z -= lr * z.grad`` descends as it does for real numbers. Through an op whose derivative is
    complex-analytic (products, quotients, exp, the matrix product ...) that is ``gy * conj(f'(z))``, and a formula
    linear in ``gy`` gives it as ``conj(backward(conj(gy)))``. A real input's share is then the real part (the walk's
    :func:`dtypes.cast_gradient`). Real gradients go straight through: one dtype check is the whole cost."""

    def backward_any(ctx, *grads):
        for g in grads:
            if g is not None and g.dtype.kind == "c":
                break
        else:
            return backward(ctx, *grads)
        gins = backward(ctx, *(g.conj() if g is not None and g.dtype.kind == "c" else g for g in grads))
        if gins.__class__ is not tuple:
            return gins.conj() if gins is not None and gins.dtype.kind == "c" else gins
        return tuple(g.conj() if g is not None and getattr(g, "dtype", None) is not None and g.dtype.kind == "c"
                     else g for g in gins)

    backward_any.holomorphic = True
    backward_any.__doc__ = backward.__doc__
    backward_any.__name__ = backward.__name__
    backward_any.__wrapped__ = backward
    return backward_any


def _is_complex(value) -> bool:
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", None) == "c"
    if value.__class__ is complex:
        return True
    if value.__class__ in (list, tuple):  # (cat's and stack's arrays come as one list)
        return any(_is_complex(v) for v in value)
    return False


def check_complex(cls, *values):
    """Refuse a complex operand (an array, a number, one in a list; the last value may be the keywords' dict) of a
    built-in that has no complex form (``cls.complex_ok`` false), in PyTorch's words: ``cls.complex_error``."""
    kwargs = values[-1] if values and values[-1].__class__ is dict else {}
    for value in (*values, *kwargs.values()):
        if value is None or value.__class__ in (int, float, bool, dict):
            continue
        if _is_complex(value):
            dtype = getattr(value, "dtype", None)
            if dtype is None and value.__class__ in (list, tuple):
                dtype = next((getattr(v, "dtype", None) for v in value if _is_complex(v)), None)
            device = "cpu" if value.__class__ in (np.ndarray, complex, list, tuple) else "cuda"
            raise cls.complex_error(dtype if dtype is not None else np.dtype(np.complex64), kwargs, device)


def op_name(cls, kwargs=None) -> str:
    """A built-in's name in its refusals: ``complex_name``; else the op it was asked for (a table's ``op=``,
    ``mode=``); else its node's without "Backward" ("ClampBackward1": "clamp"), else its class's."""
    if cls.complex_name is not None:
        return cls.complex_name
    for key in ("op", "mode"):
        given = (kwargs or {}).get(key)
        if given.__class__ is str:
            return given
    name = cls.backward_name if cls.backward_name.__class__ is str else cls.__name__
    name = name.split("Backward")[0]
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))


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


from ..tensor import _SCALAR_TYPES, Tensor, _check_same_device, _new, _wrap  # noqa: E402  (Tensor's module imports this one first)

if _compiled.apply is None:
    Function.apply = classmethod(_apply)
else:
    Function.apply = classmethod(_compiled.apply)
    _compiled.setup_apply(globals(), _apply, _next_seq, _off, _check_same_device, _SCALAR_TYPES, np.asarray,
                          (np.dtype(np.complex64), np.dtype(np.complex128)), check_complex)


class AccumulateGrad:
    """The node of a leaf that requires a gradient, as ``next_functions`` shows it: backward adds the gradient that
    reaches it to ``variable.grad``. One per leaf while someone holds it (PyTorch's is the same object each time)."""

    __slots__ = ("variable", "__weakref__")
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


_accumulators = weakref.WeakValueDictionary()  # id(leaf) -> its AccumulateGrad, while it is held


def _accumulator(leaf) -> AccumulateGrad:
    node = _accumulators.get(id(leaf))
    if node is None or node.variable is not leaf:
        node = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return node
