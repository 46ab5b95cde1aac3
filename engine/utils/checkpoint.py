"""``torch.utils.checkpoint``: activation checkpointing. A checkpointed function keeps no activations for the
backward pass; backward runs it again to get them. Memory for time: a deep net's intermediate values are held for
one segment at a time.

- ``use_reentrant=False`` (PyTorch's recommendation): the function's ops are recorded as they always are (the graph
  has PyTorch's node names, ``autograd.grad`` works, parameters inside get gradients whether or not an input
  requires one), but the values its nodes saved for backward are let go after the forward. The first time the
  backward walk reaches one of those nodes, the function runs again (with the random state it first ran with, so
  a dropout draws the same mask) and each node takes back what its twin in the second run saved: the nodes match
  by the order they were recorded in, as PyTorch's saved tensors do.
- ``use_reentrant=True`` (and, with PyTorch's warning, when it is not said): one ``CheckpointFunctionBackward``
  node, whose backward runs the function again and calls ``backward`` inside the walk. As PyTorch's, it passes
  gradients only back through inputs that require one (the parameters inside get none when no input requires a
  gradient, which PyTorch warns of), and ``autograd.grad`` refuses it.
"""

from __future__ import annotations

import warnings

from .. import backend as _backend
from .. import random as _random
from ..autograd import _writes
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import backward as _backward
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "detach_variable",
           "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The second run of a checkpointed function recorded other ops than the first (PyTorch's error)."""


def noop_context_fn():
    """The default ``context_fn``: nothing around either run."""
    import contextlib

    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tensors of the tuple ``inputs`` detached, each requiring a gradient where it did (others as they are)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


# ---------------------------------------------------------------------------- the random state

# CuPy's generators keep no state one can read and set back, so on a CUDA device the first run starts from a seed
# drawn from the device's own generator (reproducible under manual_seed), and the second run is seeded with it
# again; around the second run the device's stream goes on from a seed drawn just before it. Its draws are then
# the same in both runs, as PyTorch's, though the stream after the checkpoint is not the one a run without it sees.

def _draw_seed(index: int) -> int:
    cupy = _backend.get_cupy()
    with cupy.cuda.Device(index):
        return int(cupy.random.randint(0, 2 ** 31 - 1, size=(1,))[0])


def _seed(index: int, seed: int) -> None:
    cupy = _backend.get_cupy()
    with cupy.cuda.Device(index):
        cupy.random.seed(seed)


def _rng_state(args):
    """The CPU generator's state; for each CUDA device an argument lives on, the seed its draws now start from."""
    devices = sorted({a.device.index or 0 for a in args if isinstance(a, Tensor) and a.is_cuda})
    seeds = []
    for d in devices:
        seeds.append((d, _draw_seed(d)))
        _seed(d, seeds[-1][1])
    return _random.get_state_bytes(), seeds


class _ForkedRng:
    """Within the block the generators are as ``state`` says (the CPU's exactly, a CUDA device's from its seed);
    after it, the CPU's as it was before the block, a device's from a seed drawn before it."""

    def __init__(self, state, args, enabled):
        self.state, self.args, self.enabled = state, args, enabled

    def __enter__(self):
        if self.enabled:
            cpu, seeds = self.state
            self.before = _random.get_state_bytes()
            self.after = [(d, _draw_seed(d)) for d, _ in seeds]
            _random.set_state_bytes(cpu)
            for d, seed in seeds:
                _seed(d, seed)

    def __exit__(self, *exc):
        if self.enabled:
            _random.set_state_bytes(self.before)
            for d, seed in self.after:
                _seed(d, seed)
        return False


# ---------------------------------------------------------------------------- use_reentrant=True

class CheckpointFunction(Function):
    """The reentrant checkpoint as one node: forward without recording, backward runs the function again with
    recording on and calls ``backward`` on its outputs inside the walk."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng = _rng_state(args) if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if ctx.run_function is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved tensors "
                               "after they have already been freed)")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _ForkedRng(ctx.rng, detached, ctx.preserve_rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def _reentrant(function, preserve, args, kwargs):
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
    return CheckpointFunction.apply(function, preserve, *args)


# ---------------------------------------------------------------------------- use_reentrant=False

def _region(outputs, first_seq: int) -> list:
    """The nodes recorded after tick ``first_seq`` that the outputs' graph reaches, in recording order."""
    seen, stack = {}, [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or node._seq <= first_seq:
            continue
        seen[id(node)] = node
        stack.extend(t.grad_fn for t in node._inputs if t is not None and t.grad_fn is not None)
    return sorted(seen.values(), key=lambda n: n._seq)


def _flat_tensors(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return []


# what the second run's nodes give the first run's: what their forward computed and kept; not the graph's links
_GRAPH = frozenset({"_inputs", "_seq", "needs_input_grad", "_edges", "_n_out", "_out_meta", "_pre_hooks",
                    "_post_hooks", "_hooks", "_metadata", "_retained", "_freed", "_own_write", "_forward_stack"})


class _Recompute:
    """The first time a hook of one of ``nodes`` runs: the function again, and each node its twin's state."""

    def __init__(self, nodes, function, args, kwargs, rng, preserve, context):
        self.nodes, self.function, self.args, self.kwargs = nodes, function, args, kwargs
        self.rng, self.preserve, self.context = rng, preserve, context
        self.handles = []
        self.done = False

    def __call__(self, grads):
        if not self.done:
            self.done = True
            self._run()
        return None

    def _run(self):
        start = _writes.tick()
        with _ForkedRng(self.rng, self.args, self.preserve), enable_grad(), self.context:
            outputs = self.function(*self.args, **self.kwargs)
        twins = _region(_flat_tensors(outputs), start)
        if len(twins) != len(self.nodes) or any(type(a) is not type(b) for a, b in zip(self.nodes, twins)):
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the original forward: the first run recorded {len(self.nodes)} ops "
                f"({', '.join(n.name() for n in self.nodes[:6])}{', ...' if len(self.nodes) > 6 else ''}), the "
                f"second {len(twins)} ({', '.join(n.name() for n in twins[:6])}{', ...' if len(twins) > 6 else ''})."
                " The function must run the same ops each time (its control flow may not depend on global state "
                "that changed)")
        for node, twin in zip(self.nodes, twins):
            for key, value in twin.__dict__.items():
                if key not in _GRAPH:
                    setattr(node, key, value)
            # (a write made during the second run, before its twin was recorded, is the first run's write)
            node._own_write = max(twin._seq, twin.__dict__.get("_own_write", twin._seq))
        for handle in self.handles:
            handle.remove()
        self.function = self.args = self.kwargs = None


def _non_reentrant(function, preserve, context_fn, args, kwargs):
    forward_context, recompute_context = context_fn()
    rng = _rng_state(args) if preserve else None
    start = _writes.tick()
    with forward_context:
        outputs = function(*args, **kwargs)
    if not is_grad_enabled():
        return outputs
    nodes = _region(_flat_tensors(outputs), start)
    if not nodes:
        return outputs
    recompute = _Recompute(nodes, function, args, kwargs, rng, preserve, recompute_context)
    for node in nodes:  # let go of what they saved; the first of them the walk reaches fetches it all again
        if node.raw:
            node.saved = None
        else:
            node._saved, node._saved_arrays = (), ()
        recompute.handles.append(node.register_prehook(recompute))
    return outputs


# ---------------------------------------------------------------------------- the API

def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, its activations recomputed in the backward pass instead of kept (see the
    module). ``use_reentrant`` should be said: ``False`` is PyTorch's recommendation; left out, it is ``True`` with
    PyTorch's warning. ``preserve_rng_state``: the second run draws what the first drew (dropout's masks).
    ``context_fn`` (non-reentrant): two context managers, around the forward and around the second run."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return _reentrant(function, preserve_rng_state, args, kwargs)
    return _non_reentrant(function, preserve_rng_state, context_fn, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """``functions`` (an ``nn.Sequential`` or a list of modules or functions) run in order on ``input``, cut into
    ``segments`` runs of about equal length: each but the last checkpointed, as PyTorch's."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint_sequential without use_reentrant will "
                      "raise an exception. use_reentrant=False is recommended, but if you need to preserve the "
                      "current default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
                      "the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children) and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    size = len(functions) // segments if segments > 0 else 0
    if segments <= 0 or size == 0:
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and the number of functions "
                         f"({len(functions)}), got {segments}")

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,  # noqa: A001
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
