"""The gradient check of a learner's own script, in the script's process (app/script_child.py).

A script is not a recipe: nothing written by hand to compare with, no function of the weights to call again.
So the child records the next step's forward pass as a tape (every ``Function.apply`` at the outermost level,
with its arguments), and the check replays that tape in float64 from the leaves of the loss's graph: once
with autograd (the float64 gradient), and six times per probed element, moved by +-h, +-h/2 and +-h/4 (central
differences: Richardson's correction, and a kink wherever halving the step does not quarter the error). What
it sends the app: per leaf, autograd in the run's dtype, autograd in float64, the numerical gradient and a
bound on what rounding and finite differences explain (the same honest grading as the recipes':
app.gradients). A step the tape cannot replay (ops outside the engine, in-place changes to the graph's
tensors) is said, not graded: the replayed loss must match the step's.
"""

from __future__ import annotations

import math

import numpy as np

MAX_PROBED = 512  # elements per leaf probed by finite differences (a random sample beyond that)
REPLAY_TOLERANCE = {"float64": 1e-9, "float32": 1e-3, "float16": 3e-2, "bfloat16": 3e-2}


class Tape:
    """Records the outermost Function.apply calls while on (installed on engine.autograd.Function)."""

    def __init__(self, engine):
        self.engine = engine
        self.entries: list = []
        self.recording = False
        self._depth = 0
        self._original = None

    def install(self) -> None:
        function = self.engine.autograd.Function
        original = function.__dict__["apply"].__func__
        tape = self

        def apply(cls, *args, **kwargs):
            tape._depth += 1
            try:
                out = original(cls, *args, **kwargs)
            finally:
                tape._depth -= 1
            if tape.recording and tape._depth == 0:
                tape.entries.append((cls, args, kwargs, out))
            return out

        self._original = function.__dict__["apply"]
        function.apply = classmethod(apply)
        self.entries = []
        self.recording = True

    def remove(self) -> None:
        self.recording = False
        if self._original is not None:
            self.engine.autograd.Function.apply = self._original
            self._original = None


def leaves_of(loss) -> list:
    """The leaf tensors that require grad in ``loss``'s graph, in the order first met from the loss."""
    seen, leaves, stack = set(), [], [loss]
    while stack:
        t = stack.pop()
        node = t.grad_fn
        if node is None:
            if t.requires_grad and id(t) not in seen:
                seen.add(id(t))
                leaves.append(t)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        for inp in reversed(node._inputs_as_recorded() if hasattr(node, "_inputs_as_recorded") else ()):
            if inp is not None and hasattr(inp, "grad_fn"):
                stack.append(inp)
    return leaves


def replay(engine, entries, loss, leaves, values, grad: bool = False):
    """The loss of the taped step with the leaves set to ``values`` (float64 host arrays; complex128 for a complex
    leaf), in float64 (complex128)."""
    tensor_cls = engine.Tensor
    env = {}
    for leaf, value in zip(leaves, values):
        wide = engine.complex128 if np.iscomplexobj(value) else engine.float64
        env[id(leaf)] = engine.tensor(value, dtype=wide, device=leaf.device, requires_grad=grad)
    new_leaves = [env[id(leaf)] for leaf in leaves]
    by_node = {}  # (id of a recorded node, output index) -> its replayed output: what an in-place op rebound to it
    seq = None  # the recording tick of the entry being replayed, whose inputs are taken as they were then

    def sub(a):
        if isinstance(a, tensor_cls):
            if seq is not None and hasattr(a, "_as_it_was"):
                a = a._as_it_was(seq)
            if id(a) in env:
                return env[id(a)]
            node = a.grad_fn
            if node is not None and (id(node), getattr(a, "_out_index", 0)) in by_node:
                return by_node[(id(node), getattr(a, "_out_index", 0))]  # (a tensor an in-place op rebound)
            if a.is_complex():
                return a.detach().to(engine.complex128)
            return a.detach().double() if a.is_floating_point() else a.detach()
        if isinstance(a, (list, tuple)):
            return type(a)(sub(x) for x in a)
        return a

    context = engine.enable_grad() if grad else engine.no_grad()
    with context:
        for cls, args, kwargs, out in entries:
            first = out[0] if isinstance(out, tuple) else out
            seq = getattr(getattr(first, "grad_fn", None), "_seq", None)
            result = cls.apply(*sub(args), **{k: sub(v) for k, v in kwargs.items()})
            for o, r in zip(out, result) if isinstance(out, tuple) else ((out, result),):
                if isinstance(o, tensor_cls):
                    env[id(o)] = r
                    if o.grad_fn is not None:
                        by_node[(id(o.grad_fn), getattr(o, "_out_index", 0))] = r
    if id(loss) not in env:
        raise LookupError("the loss was not computed by the engine's operations in this step")
    return env[id(loss)], new_leaves


def check(engine, tape: Tape, loss, step: int, name_leaves=None) -> dict:
    """The report of the gradient check at ``loss`` (before its backward), as plain data for the app.
    ``name_leaves(leaves)``: their names as the script gives them (else "leaf 1", "leaf 2", ...)."""
    leaves = leaves_of(loss)
    if not leaves:
        return {"t": "check_failed", "why": "the loss depends on no tensor that requires grad"}
    names = name_leaves(leaves) if name_leaves is not None else [f"leaf {i}" for i in range(1, len(leaves) + 1)]
    dtype = str(loss.dtype).replace("torch.", "").replace("engine.", "")
    def to_numpy(t):
        data = engine.backend.to_host(t.detach()._data)
        return np.asarray(data, dtype=np.complex128 if data.dtype.kind == "c" else np.float64)

    grads = engine.autograd.grad(loss, leaves, retain_graph=True, allow_unused=True)
    autograd_run = [to_numpy(g) if g is not None else np.zeros(tuple(leaf.shape)) for g, leaf in zip(grads, leaves)]
    base = [to_numpy(leaf) for leaf in leaves]
    loss_run = float(to_numpy(loss).reshape(-1)[0])
    entries = tape.entries
    try:
        loss64, new_leaves = replay(engine, entries, loss, leaves, base, grad=True)
        loss64_value = float(to_numpy(loss64).reshape(-1)[0])
        tolerance = REPLAY_TOLERANCE.get(dtype, 1e-3)
        if not abs(loss64_value - loss_run) <= tolerance * max(abs(loss_run), 1e-30) + 1e-300:
            return {"t": "check_failed",
                    "why": (f"the step could not be replayed: its loss was {loss_run:.6g}, the replay gives "
                            f"{loss64_value:.6g} (the script computes part of it outside the engine's operations, "
                            "or changes the graph's tensors in place)")}
        grads64 = engine.autograd.grad(loss64, new_leaves, allow_unused=True)
    except Exception as exc:  # a tape the engine cannot replay: said, never a wrong grade
        return {"t": "check_failed", "why": f"the step could not be replayed ({type(exc).__name__}: {exc})"}
    autograd64 = [to_numpy(g) if g is not None else np.zeros(b.shape) for g, b in zip(grads64, base)]

    def loss_at(values) -> float:
        out, _ = replay(engine, entries, loss, leaves, values)
        return float(to_numpy(out).reshape(-1)[0])

    rng = np.random.default_rng(step)
    out_leaves = []
    eps = np.finfo(np.float64).eps
    for index, value in enumerate(base):
        # a complex leaf is probed, and reported, by its real coordinates: each element's real and imaginary part
        # (autograd's gradient dL/dx + i dL/dy is then the two partial derivatives side by side)
        flat = _coordinates(value).reshape(-1)
        n = flat.size
        probe = np.arange(n) if n <= MAX_PROBED else np.sort(rng.choice(n, MAX_PROBED, replace=False))
        numerical = np.full(n, np.nan)
        bound = np.full(n, np.nan)
        kinks = np.zeros(n, dtype=bool)
        for i in probe.tolist():
            h = eps ** (1 / 3) * max(abs(flat[i]), 1.0)
            d = []  # central differences at steps h, h/2, h/4
            for step_size in (h, h / 2, h / 4):
                moved = list(base)
                coords = flat.copy()
                coords[i] = flat[i] + step_size
                moved[index] = _from_coordinates(coords, value)
                up = loss_at(moved)
                coords[i] = flat[i] - step_size
                moved[index] = _from_coordinates(coords, value)
                down = loss_at(moved)
                d.append((up - down) / (2 * step_size))
            rounding = 8 * eps * max(abs(loss64_value), 1e-300) / (h / 4)
            coarse, fine = d[0] - d[1], d[1] - d[2]
            numerical[i] = d[2] - fine / 3  # Richardson: the h^2 error removed
            bound[i] = abs(fine) + rounding
            # a smooth loss shrinks the error 4x each time the step halves; a kink within the steps does not
            # (the differences then average the slopes on its two sides): left out, as the recipes' kinks are
            if abs(coarse) > 2 * rounding:  # an error above rounding: it must be a smooth loss's h^2 error
                smooth = fine != 0 and 2.0 <= coarse / fine <= 8.0
                kinks[i] = not smooth
        shape = list(value.shape)
        name = f"{names[index]} ({'×'.join(str(s) for s in shape) or 'scalar'})"
        if np.iscomplexobj(value):
            name = f"{names[index]} ({'×'.join(str(s) for s in shape) or 'scalar'} complex: real, imaginary)"
            shape = shape + [2]
        out_leaves.append({
            "name": name,
            "shape": shape,
            "autograd": _coordinates(autograd_run[index]).reshape(-1).tolist(),
            "autograd64": _coordinates(autograd64[index]).reshape(-1).tolist(),
            "numerical": [None if math.isnan(v) else v for v in numerical.tolist()],
            "bound": [None if math.isnan(v) else v for v in bound.tolist()],
            "kinks": np.flatnonzero(kinks).tolist(),
        })
    return {"t": "check", "step": step, "dtype": dtype, "device": str(loss.device), "loss": loss_run,
            "leaves": out_leaves}


def _coordinates(array: np.ndarray) -> np.ndarray:
    """A complex array as its real coordinates (a last dimension of 2: the real and imaginary parts); a real one as
    it is."""
    if np.iscomplexobj(array):
        return np.stack((array.real, array.imag), axis=-1)
    return array


def _from_coordinates(coordinates: np.ndarray, like: np.ndarray) -> np.ndarray:
    """:func:`_coordinates` undone, to ``like``'s shape."""
    if np.iscomplexobj(like):
        pairs = coordinates.reshape(like.shape + (2,))
        return pairs[..., 0] + 1j * pairs[..., 1]
    return coordinates.reshape(like.shape)
