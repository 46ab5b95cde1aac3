"""Where a step's time goes, op by op: ``with engine.profiler.profile() as prof: <one step>``.

While the block runs, every top-level engine call of the calling thread is timed: Tensor methods and operators
(``x.mm(w1)``, ``h.clamp(min=0)``, ``y_pred - y``), ``Function.apply`` (built-ins and a user's Function such as
``MyReLU``), the optimizers' ``step`` and ``zero_grad``, and inside ``backward()`` each node's backward. A call made
inside another (``mm`` applying ``MatMul``, the ops inside a user's backward) belongs to the outer one, so the
entries never overlap and add up to the time spent in the engine; the rest of the step (the caller's Python
between the calls, the loop, the generator) is what :attr:`Profile.outside_s` says once the caller gives the
step's own time (:meth:`Profile.finish`).

On the CPU each entry is timed with the clock. On a CUDA device each entry also records a CUDA event before and
after, and :meth:`Profile.finish` reads the GPU time between them after one synchronisation: an op whose CPU time
(Python and the kernel launch) is far above its GPU time leaves the GPU idle, which is why a small net is faster
on the CPU.

Nothing is patched outside a ``profile()`` block: the engine runs at full speed when nobody profiles. Tensor
methods are wrapped for the block; ``Function.apply`` is not (the tutorial binds ``relu = MyReLU.apply`` before
its loop, so a wrapper would never be called): it asks its module's ``_hook``, None outside a block, and the block's
recorder times the outermost apply of its thread. What the wrappers and the hook cost is measured when a profile
begins and kept apart (:attr:`Profile.own_s`), so the rows add up to the step as it runs unprofiled.
"""

from __future__ import annotations

import statistics
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["OpRecord", "Profile", "profile", "category_of"]

_clock = time.perf_counter
_get_ident = threading.get_ident

# Tensor methods that compute nothing worth a row (sizes, conversions the profile itself uses, printing)
_NOT_OPS = frozenset({
    "__init__", "is_floating_point", "size", "dim", "numel", "nelement", "element_size", "get_device",
    "requires_grad_", "retain_grad", "_shallow", "tolist", "numpy", "__array__", "_moved", "is_contiguous",
    "__repr__", "__str__", "__format__", "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__",
    "__reduce__", "__deepcopy__", "_records", "_check_inplace", "_rebind", "backward", "_before_write",
    "_remember", "_as_it_was", "_view_chain", "_copy_as_is", "_dim_of",
})

# method -> the op's name, so a step written with methods (no graph) and the same step recorded (Functions) read
# alike: mm and MatMul are one op
_METHOD_OPS = {
    "mm": "MatMul", "matmul": "MatMul", "__matmul__": "MatMul", "__rmatmul__": "MatMul", "dot": "MatMul",
    "clamp": "Clamp", "clip": "Clamp", "relu": "Clamp", "__add__": "Add", "__radd__": "Add", "add": "Add",
    "__sub__": "Sub", "__rsub__": "Sub", "sub": "Sub", "subtract": "Sub", "__mul__": "Mul", "__rmul__": "Mul",
    "mul": "Mul", "multiply": "Mul", "__truediv__": "Div", "__rtruediv__": "Div", "div": "Div", "divide": "Div",
    "__pow__": "Pow", "pow": "Pow", "square": "Pow", "sum": "Sum", "mean": "Mean", "t": "Transpose",
    "transpose": "Transpose", "clone": "Clone", "__getitem__": "GetItem", "__setitem__": "SetItem",
    "__neg__": "Neg", "neg": "Neg", "__lt__": "Compare", "__le__": "Compare", "__gt__": "Compare",
    "__ge__": "Compare", "__iadd__": "Add_", "__isub__": "Sub_", "__imul__": "Mul_", "__itruediv__": "Div_",
    "add_": "Add_", "sub_": "Sub_", "mul_": "Mul_", "div_": "Div_", "zero_": "Zero_", "fill_": "Fill_",
    "detach": "Detach", "item": "Item", "view": "Reshape", "reshape": "Reshape", "flip": "Flip", "roll": "Roll",
    "movedim": "Permute", "swapaxes": "Transpose", "addmm": "Addmm", "split": "Split", "chunk": "Split",
    "unbind": "Split", "split_with_sizes": "Split", "unsafe_split": "Split", "unsafe_chunk": "Split",
    "unsafe_split_with_sizes": "Split",
}

# a convolution, plain or transposed: gathered columns, then a product
_MATRIX = frozenset({"MatMul", "Addmm", "Linear", "Convolution", "ConvTranspose"})
UNDO_BROADCAST = "Undo broadcast (sum)"  # the backward walk's sums of gradients down to their inputs' shapes
_SHAPE = frozenset({"Transpose", "Reshape", "Permute", "Expand", "Detach", "GetItem", "Clone", "View", "Flip", "Roll",
                    "Unfold", "Fold", "Split"})


def category_of(op: str) -> str:
    """"matrix product", "update" (optimizer and in-place writes), "shape" (views, copies) or "elementwise" (the
    rest: maps, reductions, comparisons)."""
    base = op.split(".")[0].removesuffix(" backward")
    if base in _MATRIX:
        return "matrix product"
    if op.endswith("_") or op.endswith(".step") or op.endswith("zero_grad") or base in ("Zero_", "Fill_"):
        return "update"
    if base in _SHAPE:
        return "shape"
    return "elementwise"


@dataclass
class OpRecord:
    op: str  # "MatMul", "Clamp", "MyReLU", "SGD.step"; in the backward pass "MatMul backward"
    phase: str  # "forward" (everything outside backward()) or "backward"
    cpu_s: float
    gpu_s: float | None = None
    _events: tuple | None = None

    @property
    def category(self) -> str:
        return category_of(self.op)


@dataclass
class Profile:
    device: str = "cpu"
    records: list = field(default_factory=list)
    step_s: float | None = None  # the step's own time, from the caller (finish)
    walk_s: float = 0.0  # time in backward() outside the nodes' backward: the walk and the .grad accumulation
    gpu_total_s: float | None = None  # the entries' GPU time, on a CUDA device
    # what the profile's own bookkeeping adds, per way through it, measured when the first block begins: "call"
    # (timing a Tensor method or an optimizer's step), "apply" (timing a Function.apply), "node" (timing a node
    # of the backward walk), "backward" (timing a backward() call), "nested call" (passing a Tensor method called
    # inside a timed call through its wrapper)
    cost_s: dict = field(default_factory=dict)
    passes: dict = field(default_factory=dict)  # how many times the blocks went each way but "call" and "node"
    _raw: list = field(default_factory=list, repr=False)  # what the recorder appends while the block runs

    @property
    def ops_s(self) -> float:
        return sum(r.cpu_s for r in self.records)

    @property
    def engine_s(self) -> float:
        return self.ops_s + self.walk_s

    @property
    def own_s(self) -> float:
        """What the profile itself added: its cost per timed call and per call passed through inside one (both
        measured when the profile begins) times how many there were."""
        nodes = sum(r.phase == "backward" for r in self.records)
        passes = {**self.passes, "node": nodes}
        passes["call"] = len(self.records) - nodes - passes.get("apply", 0)
        return sum(self.cost_s.get(way, 0.0) * n for way, n in passes.items())

    @property
    def outside_s(self) -> float | None:
        """The step's time outside any engine call and outside the profile's own bookkeeping: the caller's own
        Python between the calls."""
        return None if self.step_s is None else max(self.step_s - self.engine_s - self.own_s, 0.0)

    def finish(self, step_s: float) -> Profile:
        """Record the step's own time (measured around the whole step, synchronised) and, on a GPU, read the
        events' times."""
        self.step_s = step_s
        self._collect()
        timed = [r for r in self.records if r._events is not None]
        if timed:
            from .backend import get_cupy

            cupy = get_cupy()
            timed[-1]._events[1].synchronize()
            for r in timed:
                r.gpu_s = cupy.cuda.get_elapsed_time(*r._events) / 1e3
                r._events = None
            self.gpu_total_s = sum(r.gpu_s for r in timed)
        return self

    def _collect(self) -> None:
        raw = self._raw
        for i, (op, phase, dt, ev) in enumerate(raw):
            if op is None:  # a backward() call, its records from raw[ev] on: the rest of its time is the walk's
                self.walk_s += max(dt - sum(r[2] for r in raw[ev:i] if r[0] is not None), 0.0)
                self.passes["backward"] = self.passes.get("backward", 0) + 1
            else:  # a node's backward is recorded by its class
                self.records.append(OpRecord(op if op.__class__ is str else f"{op.__name__} backward", phase, dt,
                                             None, ev))
        raw.clear()

    def by_op(self) -> list[dict]:
        """One row per (phase, op): calls, CPU seconds, GPU seconds (None on the CPU), category; the costliest
        first."""
        rows: dict = {}
        for r in self.records:
            row = rows.setdefault((r.phase, r.op), {"phase": r.phase, "op": r.op, "category": r.category,
                                                    "calls": 0, "cpu_s": 0.0, "gpu_s": None})
            row["calls"] += 1
            row["cpu_s"] += r.cpu_s
            if r.gpu_s is not None:
                row["gpu_s"] = (row["gpu_s"] or 0.0) + r.gpu_s
        return sorted(rows.values(), key=lambda row: -row["cpu_s"])

    def by_category(self) -> dict:
        """Seconds per category, with the backward walk and the Python outside the engine as their own."""
        out: dict = {}
        for r in self.records:
            out[r.category] = out.get(r.category, 0.0) + r.cpu_s
        out["autograd walk"] = self.walk_s
        if self.step_s is not None:
            out["Python between ops"] = self.outside_s
            out["profiler's own"] = self.own_s
        return out

    def to_dict(self) -> dict:
        return {"device": self.device, "step_s": self.step_s, "engine_s": self.engine_s, "walk_s": self.walk_s,
                "outside_s": self.outside_s, "gpu_total_s": self.gpu_total_s, "by_op": self.by_op(),
                "by_category": self.by_category()}

    def table(self) -> str:
        """The profile as text: one line per op, then the totals by category."""
        gpu = any(r.gpu_s is not None for r in self.records)
        head = f"{'phase':9s} {'op':30s} {'calls':>5s} {'CPU ms':>9s}" + (f" {'GPU ms':>9s}" if gpu else "")
        lines = [head, "-" * len(head)]
        for row in self.by_op():
            line = f"{row['phase']:9s} {row['op'][:30]:30s} {row['calls']:5d} {row['cpu_s'] * 1e3:9.4f}"
            if gpu:
                line += f" {row['gpu_s'] * 1e3:9.4f}" if row["gpu_s"] is not None else f" {'':>9s}"
            lines.append(line)
        lines.append("")
        total = self.step_s or self.engine_s
        for name, s in sorted(self.by_category().items(), key=lambda kv: -kv[1]):
            lines.append(f"{name:22s} {s * 1e3:9.4f} ms  {100 * s / total if total else 0:5.1f}%")
        if self.step_s is not None:
            lines.append(f"{'step':22s} {self.step_s * 1e3:9.4f} ms")
        if self.gpu_total_s is not None and self.step_s:
            lines.append(f"{'GPU busy':22s} {self.gpu_total_s * 1e3:9.4f} ms  "
                         f"{100 * self.gpu_total_s / self.step_s:5.1f}% of the step")
        return "\n".join(lines)


class _Recorder:
    """The state of one profile() block: its thread, the depth of engine calls, the records."""

    def __init__(self, prof: Profile, cuda_events):
        self.prof = prof
        self.nested = 0  # Tensor methods called inside timed calls: they pass through a wrapper too
        self.applies = 0  # Function.apply calls timed
        self.raw = prof._raw  # (op, phase, CPU seconds, CUDA events or None): OpRecords once finished
        self.thread = threading.get_ident()
        self.depth = 0
        self.phase = "forward"
        self.event = cuda_events  # cupy.cuda.Event, or None on the CPU
        from .autograd.graph import unbroadcast  # (bound as a profile begins)

        self._unbroadcast = unbroadcast

    def call(self, name, fn, args, kwargs):
        """``fn(*args, **kwargs)``, timed as ``name`` when it is this thread's outermost engine call."""
        if _get_ident() != self.thread:  # another thread's engine work is not this step's
            return fn(*args, **kwargs)
        if self.depth:  # inside a timed call: it is that one's (it passed a wrapper, which the profile counts)
            self.nested += 1
            return fn(*args, **kwargs)
        self.depth = 1
        if self.event is None:
            t0 = _clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.raw.append((name, self.phase, _clock() - t0, None))
                self.depth = 0
        events = (self.event(), self.event())
        events[0].record()
        t0 = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            dt = _clock() - t0
            events[1].record()
            self.depth = 0
            self.raw.append((name, self.phase, dt, events))

    def apply(self, cls, args, kwargs):
        """``cls.apply(*args, **kwargs)`` timed as ``cls``'s name: engine.autograd.function calls this for the
        outermost apply of this thread (a user's ``MyReLU.apply``, however it was reached), not for one inside a
        timed call (``mm`` applying ``MatMul``)."""
        self.applies += 1
        return self.call(cls.__name__, cls.apply, args, kwargs)

    # the backward walk's observer (engine.autograd.graph calls these around each node)
    def node_begin(self, node):
        if self.depth or _get_ident() != self.thread:
            return None
        self.depth = 1
        if self.event is None:
            return _clock()
        events = (self.event(), self.event())
        events[0].record()
        return events, _clock()

    def unbroadcast(self, g, shape):
        """The walk's sum of a gradient down to its input's shape (the broadcast of the forward undone: a
        weight of shape () added to 2000 points gets the sum of 2000 gradients), timed as a row of its own: it
        is work the graph's nodes do not do, and would otherwise be counted as the walk's bookkeeping."""
        if self.depth or _get_ident() != self.thread:
            return self._unbroadcast(g, shape)
        if self.event is not None:
            return self.call(UNDO_BROADCAST, self._unbroadcast, (g, shape), {})
        t0 = _clock()  # the CPU's, written out (as node_begin and node_end): what the profile adds is a node's
        out = self._unbroadcast(g, shape)
        self.raw.append((UNDO_BROADCAST, "backward", _clock() - t0, None))
        return out

    def node_end(self, node, token):
        if token is None:
            return
        # named when collected (the class), or now where the node says what it is (one Function of many ops: Unary
        # for log1p, Flip for a roll)
        label = getattr(node, "op_label", None)
        named = node.__class__ if label is None else f"{label} backward"
        if token.__class__ is float:
            self.raw.append((named, "backward", _clock() - token, None))
        else:
            events, t0 = token
            dt = _clock() - t0
            events[1].record()
            self.raw.append((named, "backward", dt, events))
        self.depth = 0


_lock = threading.Lock()
_active: _Recorder | None = None


def _wrap_method(name, fn):
    op = _METHOD_OPS.get(name, name)

    def timed(*args, **kwargs):
        rec = _active
        if rec is None:
            return fn(*args, **kwargs)
        if rec.depth and _get_ident() == rec.thread:  # inside a timed call: it is that one's
            rec.nested += 1
            return fn(*args, **kwargs)
        if rec.event is not None or _get_ident() != rec.thread:
            return rec.call(op, fn, args, kwargs)
        # the CPU's outermost call, written out: the profile's own cost is what it adds to the step
        rec.depth = 1
        t0 = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            rec.raw.append((op, rec.phase, _clock() - t0, None))
            rec.depth = 0

    timed.__name__, timed.__qualname__, timed.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    return timed


def _patches():
    """(owner, attribute, replacement) for every call the profile times."""
    from . import optim
    from .nn.modules import Module
    from .tensor import Tensor

    out = []
    for owner in Tensor.__mro__[:-1]:  # Tensor and the methods it inherits (engine/tensor_math.py)
        for name, value in list(owner.__dict__.items()):
            if isinstance(value, types.FunctionType) and name not in _NOT_OPS and (
                    owner is Tensor or name not in Tensor.__dict__):
                out.append((owner, name, _wrap_method(name, value)))
    for cls in [optim.Optimizer, *_subclasses(optim.Optimizer)]:  # (below a subclass too: a script's own)
        for name in ("step", "zero_grad"):
            if name in cls.__dict__:
                out.append((cls, name, _wrap_method(f"{cls.__name__}.{name}", cls.__dict__[name])))
    out.append((Module, "zero_grad", _wrap_method("Module.zero_grad", Module.__dict__["zero_grad"])))
    return out


def _subclasses(cls) -> list:
    """Every class below ``cls``, once each."""
    found = {}
    for sub in cls.__subclasses__():
        found[sub] = None
        found.update(dict.fromkeys(_subclasses(sub)))
    return list(found)


def _backward_wrapper(original, on_backward):
    def backward(self, *args, **kwargs):
        rec = _active
        if rec is None or rec.depth or _get_ident() != rec.thread:
            return original(self, *args, **kwargs)
        if on_backward is not None:
            on_backward(self)  # before the walk frees what it saved, and outside the times
        rec.phase = "backward"
        before = len(rec.raw)
        t0 = _clock()
        try:
            return original(self, *args, **kwargs)
        finally:
            rec.raw.append((None, "backward", _clock() - t0, before))  # the walk's share is worked out later
            rec.phase = "forward"

    backward.__name__, backward.__doc__ = original.__name__, original.__doc__
    return backward


def _costs(rec: _Recorder, n: int = 2000, rounds: int = 5) -> dict:
    """Seconds each way through the profile adds to a call (Profile.cost_s), measured with ``rec`` recording on
    the smallest real op (a 0-d Tensor plus a number) made as the step makes its calls: through a Tensor method's
    wrapper, through ``Function.apply``, between the walk's observer calls. The median of ``rounds`` tries at
    ``n`` calls each: a step meets the wrappers in its usual state, not at their fastest."""
    global _active
    from .autograd import function as _function
    from .autograd.function import Function
    from .tensor import Tensor

    one = Tensor(0.0)
    add = Tensor.__dict__["__add__"]

    class Add(Function):
        raw = True

        @staticmethod
        def forward(ctx, a, b):
            return a + b

    def op(a, b):
        return add(a, b)

    def node(a, b):  # as the walk does around a node's backward
        token = rec.node_begin(None)
        add(a, b)
        rec.node_end(None, token)

    timed = _wrap_method("op", op)
    backward = _backward_wrapper(op, None)

    def loop(fn):
        t0 = _clock()
        for _ in range(n):
            fn(one, 1.0)
        return _clock() - t0

    tries: dict = {way: [] for way in ("call", "apply", "node", "nested call", "backward")}
    _active = rec
    try:
        for _ in range(rounds):
            plain, plain_apply = loop(op), loop(Add.apply)
            tries["call"].append(loop(timed) - plain)
            tries["node"].append(loop(node) - plain)
            tries["backward"].append(loop(backward) - plain)
            _function._hook = rec
            try:
                tries["apply"].append(loop(Add.apply) - plain_apply)
            finally:
                _function._hook = None
            rec.depth = 1
            try:
                tries["nested call"].append(loop(timed) - plain)
            finally:
                rec.depth = 0
            rec.raw.clear()
    finally:
        _active = None
        rec.raw.clear()
        rec.nested = rec.applies = 0
    return {way: max(statistics.median(t) / n, 0.0) for way, t in tries.items()}


@contextmanager
def profile(device: str | None = None, on_backward=None, into: Profile | None = None) -> Iterator[Profile]:
    """Time the engine's calls made by this thread inside the block. ``device``: "cuda..." adds CUDA events
    (default: the CPU clock only). ``on_backward(tensor)`` is called with each tensor ``backward()`` is called on,
    before the walk (say, to describe its graph). ``into``: a Profile to add to (several blocks, one profile). One
    profile at a time in a process."""
    global _active
    from .autograd import function as _function
    from .autograd import graph as _graph
    from .tensor import Tensor

    event = None
    dev = str(device) if device is not None else "cpu"
    if dev.startswith("cuda"):
        from .backend import get_cupy

        event = get_cupy().cuda.Event
    if not _lock.acquire(blocking=False):
        raise RuntimeError("profile(): another profile is running in this process")
    prof = Profile(device=dev) if into is None else into
    rec = _Recorder(prof, event)
    if not prof.cost_s:
        prof.cost_s = _costs(rec)
    patches = _patches()
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches]
    original_backward = Tensor.__dict__["backward"]
    try:
        for owner, name, new in patches:
            setattr(owner, name, new)
        Tensor.backward = _backward_wrapper(original_backward, on_backward)
        _graph._observer = _function._hook = rec
        _active = rec
        yield prof
    finally:
        _active = None
        _graph._observer = _function._hook = None
        for way, n in (("nested call", rec.nested), ("apply", rec.applies)):
            prof.passes[way] = prof.passes.get(way, 0) + n
        prof._collect()
        Tensor.backward = original_backward
        for owner, name, old in saved:
            setattr(owner, name, old)
        _lock.release()
