"""Numerical gradient checks: float64 central differences against autograd."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .autograd import grad as _grad
from .backend import to_host
from .tensor import Tensor

__all__ = ["gradcheck", "GradcheckError", "numerical_grad", "GradcheckReport"]


class GradcheckError(RuntimeError):
    """Autograd and finite differences disagree; the message names the worst element."""


@dataclass
class GradcheckReport:
    ok: bool
    input_index: int  # which input holds the worst element
    element: tuple  # its index
    analytical: float
    numerical: float
    abs_error: float
    max_rel_error: float

    def __str__(self):
        return (
            f"worst element: input {self.input_index}{list(self.element)}: analytical {self.analytical:.10g}, "
            f"numerical {self.numerical:.10g} (abs error {self.abs_error:.3g})"
        )


def _scalar_output(fn, inputs, weights):
    out = fn(*inputs)
    if isinstance(out, (tuple, list)):
        out = out[0]
    if out.numel() == 1:
        return out.sum()
    # a non-scalar output is checked through a fixed random projection (J^T v)
    if weights[0] is None:
        rng = np.random.default_rng(0)
        weights[0] = rng.standard_normal(tuple(out.shape))
    w = weights[0]
    from .creation import tensor

    return (out * tensor(w, dtype=out.dtype, device=out.device)).sum()


def numerical_grad(fn, inputs, eps=1e-6, elements=None):
    """Central-difference gradients of ``fn(*inputs)`` (a scalar, or a fixed projection of the output).

    ``elements`` optionally maps input index -> list of flat element indices to probe (others stay NaN);
    the arrays are perturbed in place and restored.
    """
    weights = [None]
    grads = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            grads.append(None)
            continue
        flat = t._data.reshape(-1)
        g = np.full(flat.shape, np.nan, dtype=np.float64)
        which = range(flat.size) if elements is None or i not in elements else elements[i]
        for k in which:
            orig = flat[k].item()
            flat[k] = orig + eps
            plus = _scalar_output(fn, inputs, weights).item()
            flat[k] = orig - eps
            minus = _scalar_output(fn, inputs, weights).item()
            flat[k] = orig
            g[k] = (plus - minus) / (2 * eps)
        grads.append(g.reshape(t._data.shape))
    return grads


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, report=False):
    """Compare autograd's gradients of ``fn(*inputs)`` with float64 central differences.

    Inputs that require grad should be float64. Returns True (or a :class:`GradcheckReport` with
    ``report=True``); on a mismatch raises :class:`GradcheckError` naming the worst element, or returns
    False when ``raise_exception=False``.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wanted = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in wanted:
        if inputs[i].dtype.name != "float64":
            raise ValueError(
                f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs for a meaningful check"
            )
    weights = [None]
    out = _scalar_output(fn, inputs, weights)
    analytical = _grad(out, [inputs[i] for i in wanted], allow_unused=True)
    numerical = numerical_grad(fn, inputs, eps)
    # numerical_grad made its own projection weights with the same seed, so both see the same J^T v
    worst = None
    ok = True
    for i, a in zip(wanted, analytical):
        a_host = to_host(a._data).astype(np.float64) if a is not None else np.zeros(inputs[i].shape)
        n_host = numerical[i]
        err = np.abs(a_host - n_host)
        bound = atol + rtol * np.abs(n_host)
        bad = err > bound
        if bad.any():
            ok = False
        k = int(np.argmax(err - bound)) if err.size else 0
        if err.size and (worst is None or (err - bound).flat[k] > worst[0]):
            rel = float(np.max(err / np.maximum(np.abs(n_host), 1e-300))) if err.size else 0.0
            worst = ((err - bound).flat[k], GradcheckReport(
                ok=True, input_index=i, element=tuple(int(v) for v in np.unravel_index(k, err.shape)),
                analytical=float(a_host.flat[k]), numerical=float(n_host.flat[k]),
                abs_error=float(err.flat[k]), max_rel_error=rel))
    result = worst[1] if worst else GradcheckReport(True, -1, (), 0.0, 0.0, 0.0, 0.0)
    result.ok = ok
    if not ok:
        if raise_exception:
            raise GradcheckError(f"Jacobian mismatch for output 0 with respect to inputs: {result}")
        return result if report else False
    return result if report else True
