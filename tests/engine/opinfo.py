"""PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``: the table of ops and
sample inputs PyTorch tests itself with), read for the engine's tests: which of its ops the engine has, and its
samples turned into the engine's tensors. Importing it needs torch and ``expecttest``; ``OP_DB`` is None where
either is missing (``SKIP_REASON`` says why)."""

from __future__ import annotations

import dataclasses
import types
import warnings

import numpy as np
import pytest

import engine

try:
    import torch
except ImportError:
    torch = None
OP_DB, SKIP_REASON, FROZEN = None, "PyTorch is not installed", None
if torch is not None:
    FROZEN = torch.backends.flags_frozen()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from torch.testing._internal.common_methods_invocations import op_db as OP_DB
    except ImportError as exc:  # (expecttest, which PyTorch's test helpers import, is a test-only package)
        SKIP_REASON = f"PyTorch's OpInfo database does not import here: {exc}"
    finally:
        # PyTorch's test helpers freeze torch.backends' flags at import (common_utils: disable_global_flags), for
        # PyTorch's own suite; the benchmarks' PyTorch rows set them, in this process, later
        if not FROZEN:
            torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True  # (its module's)

# values drawn from a generator: the stand-in's (NumPy's, per device) is not the CPU's
RANDOM = ("rand", "normal", "bernoulli", "dropout", "multinomial", "uniform", "exponential", "geometric", "cauchy",
          "log_normal", "poisson", "empty", "randint", "randn", "rrelu", "fractional_max_pool", "lowrank")
SAMPLES = 60  # per op and dtype, at most (PyTorch's lists run to hundreds for a few ops)


class Unconvertible(Exception):
    """A sample argument the engine has no counterpart of (a torch.Generator, a sparse layout, bfloat16)."""


def resolve(name):
    """The engine's function of PyTorch's ``name`` ("nn.functional.conv2d"), or a Tensor method's name."""
    obj = engine
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is not None and callable(obj):
        return obj
    if "." not in name and hasattr(engine.Tensor, name):
        return name
    return None


def draws(op, sample):
    """Whether ``sample`` of ``op`` draws random numbers (attention's dropout): its values are the generator's."""
    if op.name == "nn.functional.multi_head_attention_forward":  # (dropout_p the tenth argument after the query)
        return sample.kwargs.get("training", True) and len(sample.args) > 9 and sample.args[9] > 0
    return op.name == "nn.functional.scaled_dot_product_attention" and sample.kwargs.get("dropout_p", 0.0) > 0


def function(op):
    """What to call for ``op``: the engine's function of its name, or where PyTorch's op is a lambda around it
    (arguments reordered: ``torch.where(condition, self, other)``; a method or property read: ``x.view(shape)``,
    ``x.mT``) that lambda with ``torch`` meaning the engine, so that it calls the engine's."""
    f = op.op
    if getattr(f, "__name__", "") != "<lambda>":
        return resolve(op.name)
    names = dict(f.__globals__, torch=engine, wrapper_set_seed=lambda fn, *args, **kwargs: fn(*args, **kwargs))
    return types.FunctionType(f.__code__, names, f.__name__, f.__defaults__, f.__closure__)


def cases(dtypes):
    """``pytest.param(op, dtype)`` for every op the engine has (not drawn at random) in each of ``dtypes`` that
    PyTorch's CPU takes."""
    out = []
    for op in OP_DB or ():
        if op.name.startswith(("_", "sparse", "masked", "signal")) or any(r in op.name for r in RANDOM):
            continue
        if resolve(op.name) is None:
            continue
        label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        for dtype in dtypes:
            if getattr(torch, dtype) in op.supported_dtypes("cpu"):
                out.append(pytest.param(op, dtype, id=f"{label}-{dtype}"))
    return out


def convert(value, device, grad):
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16 or value.layout != torch.strided:
            raise Unconvertible(str(value.dtype))
        array = value.detach().resolve_conj().resolve_neg().numpy().copy()
        out = engine.tensor(array, device=device)
        if grad and value.requires_grad and (out.dtype.is_floating_point or out.dtype.is_complex):
            out.requires_grad_(True)
        return out
    if isinstance(value, torch.dtype):
        name = str(value).replace("torch.", "")
        if not hasattr(engine, name):
            raise Unconvertible(name)
        return getattr(engine, name)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        items = [convert(v, device, grad) for v in value]
        return type(value)(items) if type(value) in (list, tuple) else tuple(items)
    if isinstance(value, dict):
        return {k: convert(v, device, grad) for k, v in value.items()}
    if value == "cpu" and isinstance(value, str):  # (a sample's device: the one the run is on)
        return device
    if value is None or isinstance(value, (int, float, complex, str, slice, type(Ellipsis), np.generic)):
        return value
    if isinstance(value, torch.memory_format):
        return getattr(engine, str(value).replace("torch.", ""))
    if isinstance(value, torch.nn.PairwiseDistance):  # (a distance function given as a module)
        return engine.nn.PairwiseDistance(p=value.norm, eps=value.eps, keepdim=value.keepdim)
    if type(value).__name__ == "LinearCrossEntropyOptions":  # (a dataclass of settings: the engine's of the same)
        return engine.nn.LinearCrossEntropyOptions(**{f.name: convert(getattr(value, f.name), device, grad)
                                                      for f in dataclasses.fields(value)})
    raise Unconvertible(type(value).__name__)  # torch.device, Generator, a callable


def flat(out):
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in flat(item)]
    return [] if out is None else [out]


def host(value):
    return value.detach().cpu().numpy() if isinstance(value, engine.Tensor) else np.asarray(value)


def samples(op, dtype, grad):
    """PyTorch's sample inputs of ``op`` in ``dtype`` (the first SAMPLES), or a skip where PyTorch's own maker fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's sample makers warn of their own deprecations)
        try:
            return list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=grad))[:SAMPLES]
        except Exception as exc:  # noqa: BLE001 - PyTorch's sample maker itself failing is not the engine's
            pytest.skip(f"PyTorch's samples fail to build here: {exc!r}"[:200])


def weighted(outs, make):
    """A fixed weighting of the float and complex outputs that need a gradient, summed to one real number (None if
    there is none): ``make(values, like)`` makes the weights as a tensor like the output."""
    loss = None
    for i, o in enumerate(outs):
        if getattr(o, "requires_grad", False) and (o.dtype.is_floating_point or o.dtype.is_complex):
            term = (o * make(np.cos(np.arange(o.numel()) + i).reshape(tuple(o.shape)), o)).sum()
            term = term.real + term.imag if o.dtype.is_complex else term
            loss = term if loss is None else loss + term
    return loss


def run(fn, sample, device, grad):
    """The outputs of the engine's ``fn`` on ``sample`` (moved to ``device``), as NumPy arrays, and the gradients of
    :func:`weighted` of them with respect to the inputs that require one (None without ``grad``)."""
    inp = convert(sample.input, device, grad)
    args = convert(tuple(sample.args), device, grad)
    kwargs = convert(dict(sample.kwargs), device, grad)
    out = fn(inp, *args, **kwargs) if callable(fn) else getattr(inp, fn)(*args, **kwargs)
    outs = flat(out)
    values = [host(o) for o in outs]
    if not grad:
        return values, None
    leaves = [x for x in flat([inp, list(args), list(kwargs.values())])
              if isinstance(x, engine.Tensor) and x.requires_grad]
    loss = weighted(outs, lambda w, o: engine.tensor(w, device=device).to(o.dtype))
    if loss is None or not leaves:
        return values, None
    grads = engine.autograd.grad(loss, leaves, allow_unused=True)
    return values, [None if g is None else host(g) for g in grads]
