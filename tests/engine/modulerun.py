"""Running a module in PyTorch and in the engine on the same inputs, for the module tables' sweeps
(test_module_db_vs_pytorch.py, test_common_nn_vs_pytorch.py): each library's outputs, the gradients of a fixed
weighting of them to the inputs and parameters, and the buffers, as NumPy arrays; and where two such answers differ.
Importing it needs torch (tests/engine/opinfo.py says where it is missing)."""

from __future__ import annotations

import numpy as np

import engine
from tests.engine import opinfo

torch = opinfo.torch
TOLERANCE = {"float64": 1e-7, "complex128": 1e-7, "float32": 1e-4, "complex64": 1e-4, "float16": 1e-2}


def fresh(value, memo=None):
    """PyTorch's inputs again, as new leaves (``deepcopy`` refuses a tensor made by ops that needs a gradient); a
    tensor given twice one new leaf twice."""
    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            memo[id(value)] = value.detach().clone().requires_grad_(value.requires_grad)
        return memo[id(value)]
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        items = [fresh(v, memo) for v in value]
        return type(value)(items) if type(value) in (list, tuple) else type(value)(*items)
    if isinstance(value, dict):
        return {k: fresh(v, memo) for k, v in value.items()}
    return value


def _host(value):
    if isinstance(value, torch.Tensor):
        return value.detach().resolve_conj().resolve_neg().numpy()
    return opinfo.host(value)


def _loss(outs, lib):
    return opinfo.weighted([o for o in outs if isinstance(o, lib.Tensor)],
                           lambda w, o: lib.tensor(w, device=o.device).to(o.dtype) if lib is engine
                           else torch.tensor(w).to(o.dtype))


def run(lib, module, args, kwargs):
    """Outputs, input gradients and parameter gradients (by name) of ``module`` on the inputs, as NumPy arrays."""
    out = module(*args, **kwargs)
    outs = opinfo.flat(out)
    values = [_host(o) for o in outs]
    leaves = [x for x in opinfo.flat([list(args), list(kwargs.values())])
              if isinstance(x, lib.Tensor) and x.requires_grad]
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    loss = _loss(outs, lib)
    grads = None
    if loss is not None and (leaves or params):
        found = lib.autograd.grad(loss, leaves + [p for _, p in params], allow_unused=True)
        grads = [None if g is None else _host(g) for g in found]
    buffers = {n: _host(b) for n, b in module.named_buffers() if b is not None}
    return values, grads, buffers


def state(module):
    return {k: opinfo.convert(v, "cpu", False) for k, v in module.state_dict().items()}


def difference(expected, got, what):
    if len(expected) != len(got):
        return f"{what}: {len(expected)} in torch, {len(got)} in the engine"
    for i, (a, b) in enumerate(zip(expected, got)):
        if (a is None) != (b is None):
            return f"{what} {i}: in one library only"
        if a is None:
            continue
        a, b = np.asarray(a), np.asarray(b)
        if (a.shape, a.dtype) != (b.shape, b.dtype):
            return f"{what} {i}: {a.shape} {a.dtype} in torch, {b.shape} {b.dtype} in the engine"
        if a.dtype.kind in "fc":
            tol = TOLERANCE.get(a.dtype.name, 1e-2)
            if not np.allclose(b, a, rtol=tol, atol=tol, equal_nan=True):
                with np.errstate(invalid="ignore"):
                    return f"{what} {i}: largest difference {np.nanmax(np.abs(b - a))}"
        elif not np.array_equal(a, b):
            return f"{what} {i}: values differ"
    return None
