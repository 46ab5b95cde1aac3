"""``gradcheck`` and ``gradgradcheck``: autograd's gradients against central differences, as PyTorch's
``torch.autograd.gradcheck`` does it (the "Extending PyTorch" recipe for a custom ``Function``:
``gradcheck(MyFunction.apply, (x,), eps=1e-6, atol=1e-4)``).

Slow mode (the default) builds both Jacobians in full: the numerical one column by column, perturbing each element
of each input that requires grad by ``eps`` both ways; the analytical one row by row, one backward per output
element, run twice (the second run must match the first within ``nondet_tol``: a backward that is not
deterministic). Element by element they must satisfy ``|a - n| <= atol + rtol * |n|`` (``allclose``). Fast mode
compares ``v^T J u`` for random unit vectors ``u`` and ``v`` instead (PyTorch's fast mode, its tolerance scaled the
same way), and recomputes the full Jacobians to report a mismatch. Then, as PyTorch: a zero gradient of the outputs
must give zero (or no) gradients of the inputs, of the inputs' dtype and size, also when one output gets no
gradient at all.

Complex inputs and outputs are taken as PyTorch takes them: each complex element is two real coordinates (its real
and imaginary parts, in that order), perturbed by ``eps`` and ``eps * 1j``; an output's real part is what a backward
with gradient 1 differentiates, its imaginary part one with gradient 1j (the conjugate Wirtinger derivatives, which
autograd gives as ``dL/dx + i dL/dy``).

A mismatch raises :class:`GradcheckError` with PyTorch's message (both Jacobians, rows = input elements, columns =
output elements) and a last line naming the worst element, or returns False with ``raise_exception=False``. The
Jacobians are worked out in float64 on the host, whatever the device.

Not here, and refused by name where asked for: forward-mode AD (``check_forward_ad``) and vmap
(``check_batched_grad``, ``check_batched_forward_grad``), which this engine does not have."""

from __future__ import annotations

import warnings

import numpy as np

from ..backend import to_host, xp_of
from ..tensor import Tensor, _wrap
from .graph import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Autograd and finite differences disagree (or the backward broke one of gradcheck's other rules)."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _refuse_unsupported(check_forward_ad, check_batched_grad, check_batched_forward_grad, check_backward_ad):
    if check_forward_ad:
        raise ValueError("gradcheck(check_forward_ad=True): this engine has no forward-mode AD; check the backward "
                         "(the default) instead")
    if check_batched_grad or check_batched_forward_grad:
        raise ValueError("gradcheck(check_batched_grad=True): this engine has no vmap to batch gradients with; "
                         "leave it False (PyTorch's default)")
    if not check_backward_ad:
        raise ValueError("gradcheck: with check_backward_ad=False and no forward-mode AD there is nothing to check")


def _checked_inputs(inputs: tuple) -> list[int]:
    """The positions of the inputs that require grad (PyTorch's warnings and refusals about them)."""
    wanted = []
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=4)
        data = inp._data
        if any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
        wanted.append(idx)
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return wanted


def _tensor_outputs(out) -> list[Tensor]:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor)]


def _real(array) -> np.ndarray:
    """An array's real coordinates as a flat float64 host array: a complex element's real then imaginary part."""
    host = to_host(array)
    if host.dtype.kind == "c":
        host = np.stack((host.real, host.imag), axis=-1)
    return host.astype(np.float64).reshape(-1)


def _coordinates(t: Tensor) -> int:
    """How many real coordinates a tensor has: two per complex element."""
    return t.numel() * (2 if t._data.dtype.kind == "c" else 1)


def _shape(t: Tensor) -> tuple:
    """The shape its real coordinates are laid out in (a last dimension of 2 for a complex tensor)."""
    return tuple(t.shape) + ((2,) if t._data.dtype.kind == "c" else ())


def _values(func, inputs, positions) -> list[np.ndarray]:
    """The function's tensor outputs at ``positions`` (among its tensor outputs; None: all) at the inputs as they
    are now, as flat float64 host arrays of their real coordinates."""
    outs = _tensor_outputs(func(*inputs))
    if positions is not None:
        outs = [outs[k] for k in positions]
    return [_real(o._data) for o in outs]


def _numerical(func, inputs, wanted, positions, out_sizes, eps) -> list[list[np.ndarray]]:
    """[input][output] -> the (input elements, output elements) Jacobian by central differences of the outputs at
    ``positions``: each element of each input perturbed in place, ``eps`` down and up, then put back exactly as it
    was."""
    result = []
    for i in wanted:
        data = inputs[i]._data
        steps = (eps, eps * 1j) if data.dtype.kind == "c" else (eps,)  # (a complex element: its two parts in turn)
        jac = [np.zeros((data.size * len(steps), n)) for n in out_sizes]
        k = 0
        for idx in np.ndindex(data.shape):
            for step in steps:
                orig = data[idx].item()
                data[idx] = orig - step
                minus = _values(func, inputs, positions)
                data[idx] = orig + step
                plus = _values(func, inputs, positions)
                data[idx] = orig
                for j, (lo, hi) in enumerate(zip(minus, plus)):
                    jac[j][k] = (hi - lo) / (2 * eps)
                k += 1
        result.append(jac)
    return result


def _unit(output: Tensor, k: int) -> Tensor:
    """A gradient for ``output`` that differentiates its real coordinate ``k``: 1 there, 0 elsewhere (of a complex
    output, 1 at element k // 2 for its real part, 1j for its imaginary part)."""
    data = output._data
    g = xp_of(data).zeros(data.shape, dtype=data.dtype)
    if data.dtype.kind == "c":
        g.reshape(-1)[k // 2] = 1j if k % 2 else 1
    else:
        g.reshape(-1)[k] = 1
    return _wrap(g)


def _vjps(output: Tensor, diff: list[Tensor], grad_output: Tensor) -> tuple:
    return _grad(output, diff, grad_output, retain_graph=True, allow_unused=True)


def _sized(g, inp: Tensor, check_grad_dtypes: bool) -> np.ndarray | None:
    """A gradient as a flat float64 host array (None: none came), held to gradcheck's rules of size and dtype."""
    if g is None:
        return None
    if tuple(g.shape) != tuple(inp.shape):
        raise GradcheckError("Analytical gradient has incorrect size")
    if check_grad_dtypes and g.dtype != inp.dtype:
        raise GradcheckError("Gradient has dtype mismatch")
    return _real(g._data)


def _analytical(output: Tensor, diff: list[Tensor], nondet_tol, check_grad_dtypes) -> list[np.ndarray]:
    """[input] -> the (input elements, output elements) Jacobian of ``output``, one backward per output element;
    worked out twice, which must agree within ``nondet_tol``."""
    runs = []
    for _ in range(2):
        jac = [np.zeros((_coordinates(t), _coordinates(output))) for t in diff]
        for k in range(_coordinates(output)):
            for j, (g, t) in enumerate(zip(_vjps(output, diff, _unit(output, k)), diff)):
                flat = _sized(g, t, check_grad_dtypes)
                if flat is not None:
                    jac[j][:, k] = flat
        runs.append(jac)
    _check_reentrant(runs[0], runs[1], nondet_tol)
    return runs[0]


def _check_reentrant(first, second, nondet_tol):
    for a, b in zip(first, second):
        if a.size and np.abs(a - b).max() > nondet_tol:  # (NaN where both are NaN passes, as in PyTorch)
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")


def _close(a, n, rtol, atol) -> np.ndarray:
    return np.abs(a - n) <= atol + rtol * np.abs(n)  # (allclose: a NaN is never close)


def _worst(a, n, rtol, atol, input_shape, output_shape) -> str:
    excess = np.abs(a - n) - (atol + rtol * np.abs(n))
    excess = np.where(np.isnan(excess), np.inf, excess)
    r, c = np.unravel_index(int(np.argmax(excess)), a.shape)
    where_in = list(np.unravel_index(r, input_shape)) if input_shape else []
    where_out = list(np.unravel_index(c, output_shape)) if output_shape else []
    return (f"The worst element: d output{[int(v) for v in where_out]} / d input{[int(v) for v in where_in]}: "
            f"numerical {n[r, c]:.10g}, analytical {a[r, c]:.10g}.\n")


def _mismatch(i, j, a, n) -> str:
    return (f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
            f"numerical:{_wrap(n)}\nanalytical:{_wrap(a)}\n")


def _slow(func, inputs, wanted, positions, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    numerical = _numerical(func, inputs, wanted, positions, [_coordinates(o) for o in outputs], eps)
    diff = [inputs[i] for i in wanted]
    for i, o in enumerate(outputs):
        analytical = _analytical(o, diff, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not _close(a, n, rtol, atol).all():
                raise GradcheckError(_mismatch(i, j, a, n) + _worst(a, n, rtol, atol, _shape(diff[j]), _shape(o)))


def _random_unit(n: int, rng) -> np.ndarray:
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def _fast(func, inputs, wanted, positions, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    rng = np.random.default_rng(0)  # (its own generator: the user's random state is left alone, as in PyTorch)
    diff = [inputs[i] for i in wanted]
    all_u = [_random_unit(_coordinates(t), rng) for t in diff]
    all_v = [_random_unit(_coordinates(o), rng) for o in outputs]
    # numerical: J u by one central difference along u, per input
    numerical = []  # [input][output] -> v^T J u
    for t, u in zip(diff, all_u):
        data = t._data
        xp = xp_of(data)
        orig = data.copy()
        step = _from_real(xp, eps * u, data)
        data[...] = orig - step
        minus = _values(func, inputs, positions)
        data[...] = orig + step
        plus = _values(func, inputs, positions)
        data[...] = orig
        numerical.append([float(v @ ((hi - lo).reshape(-1) / (2 * eps))) for v, lo, hi in zip(all_v, minus, plus)])
    for i, (o, v) in enumerate(zip(outputs, all_v)):
        gv = _wrap(_from_real(xp_of(o._data), v, o._data))
        runs = []
        for _ in range(2):
            runs.append([_sized(g, t, check_grad_dtypes) for g, t in zip(_vjps(o, diff, gv), diff)])
        _check_reentrant([np.zeros(0) if g is None else g for g in runs[0]],
                         [np.zeros(0) if g is None else g for g in runs[1]], nondet_tol)
        for j, (g, u) in enumerate(zip(runs[0], all_u)):
            a = 0.0 if g is None else float(g @ u)
            n = numerical[j][i]
            scaled_atol = atol * float(u.sum()) * float(v.sum())
            if not abs(a - n) <= scaled_atol + rtol * abs(n):
                slow_n = _numerical(func, inputs, [wanted[j]], [positions[i]], [_coordinates(o)], eps)[0][0]
                slow_a = _analytical(o, [diff[j]], nondet_tol, check_grad_dtypes)[0]
                raise GradcheckError(
                    _mismatch(i, j, np.array(a), np.array(n))
                    + "\nThe above quantities relating the numerical and analytical jacobians are computed \nin fast "
                    "mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
                    f"Numerical:\n {_wrap(slow_n)}\nAnalytical:\n{_wrap(slow_a)}\n\n"
                    f"The max per-element difference (slow mode) is: {np.abs(slow_n - slow_a).max():.10g}.\n"
                    + _worst(slow_a, slow_n, rtol, atol, _shape(diff[j]), _shape(o)))


def _from_real(xp, coordinates: np.ndarray, like):
    """Real coordinates (:func:`_real`'s layout) as an array of ``like``'s shape and dtype, on its device."""
    if like.dtype.kind == "c":
        pairs = coordinates.reshape(tuple(like.shape) + (2,))
        coordinates = pairs[..., 0] + 1j * pairs[..., 1]
    return xp.asarray(coordinates.reshape(like.shape), dtype=like.dtype)


def _no_differentiable_outputs(func, inputs, wanted, func_out, eps):
    """No output requires grad: the function must then not depend on the inputs that do."""
    sizes = [_coordinates(o) for o in _tensor_outputs(func_out)]
    for per_input in _numerical(func, inputs, wanted, None, sizes, eps):
        for jac in per_input:
            if np.any(jac != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _zero_grads_give_zero(outputs, diff):
    """PyTorch's test that backward multiplies by the gradient of the output: zeros in, zeros (or None) out, of the
    input's dtype, device and size."""
    zeros = [_wrap(xp_of(o._data).zeros(o._data.shape, dtype=o._data.dtype)) for o in outputs]
    for gi, di in zip(_grad(outputs, diff, zeros, allow_unused=True), diff):
        if gi is None:
            continue
        if bool((gi._data != 0).any()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _missing_output_grads(func, inputs, diff, n_outputs):
    """Each output in turn gets no gradient at all (the others zeros): backward must still run and give zeros or
    None. In this engine an output no gradient reaches hands its Function zeros (PyTorch's materialized grads)."""
    for missing in range(n_outputs if n_outputs > 1 else 0):
        outputs = [o for o in _tensor_outputs(func(*inputs)) if o.requires_grad]
        rest = [o for k, o in enumerate(outputs) if k != missing]
        zeros = [_wrap(xp_of(o._data).zeros(o._data.shape, dtype=o._data.dtype)) for o in rest]
        try:
            grads = _grad(rest, diff, zeros, allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError(f"Expected backward function to handle undefined output grads (output {missing} got "
                                 f"none): {e}") from e
        for gi in grads:
            if gi is not None and bool((gi._data != 0).any()):
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     "undefined or zero.")


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when autograd's gradients of ``func(*inputs)`` (a tensor or a tuple of tensors) with respect to the
    inputs that require grad match central differences; see the module's text. ``masked`` is accepted for
    PyTorch's signature (it is about sparse tensors, which this engine does not have)."""
    _refuse_unsupported(check_forward_ad, check_batched_grad, check_batched_forward_grad, check_backward_ad)
    try:
        inputs = _as_tuple(inputs)
        wanted = _checked_inputs(inputs)
        func_out = func(*inputs)
        every = _tensor_outputs(func_out)
        positions = [k for k, o in enumerate(every) if o.requires_grad]
        outputs = [every[k] for k in positions]
        if not outputs:
            _no_differentiable_outputs(func, inputs, wanted, func_out, eps)
            return True
        (_fast if fast_mode else _slow)(func, inputs, wanted, positions, outputs, eps, rtol, atol, nondet_tol,
                                        check_grad_dtypes)
        diff = [inputs[i] for i in wanted]
        _zero_grads_give_zero(outputs, diff)
        if check_undefined_grad:
            _missing_output_grads(func, inputs, diff, len(outputs))
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """The second derivatives of ``func`` against central differences of its first (as PyTorch's): gradcheck of
    ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True)``. Without
    ``grad_outputs``, random ones in [-1, 1) that require grad (from a generator of its own: the same each call)."""
    if check_fwd_over_rev:
        raise ValueError("gradgradcheck(check_fwd_over_rev=True): this engine has no forward-mode AD")
    if not check_rev_over_rev:
        raise ValueError("gradgradcheck: with check_rev_over_rev=False there is nothing to check")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in _tensor_outputs(func(*inputs)):
            if not o.requires_grad:
                continue
            dtype = o._data.dtype if o._data.dtype.kind in "fc" else np.float64
            shape = tuple(o.shape)
            values = rng.uniform(-1, 1, shape)
            if o._data.dtype.kind == "c":
                values = values + 1j * rng.uniform(-1, 1, shape)
            if gen_non_contig_grad_outputs:
                wide = np.zeros(shape[:-1] + (2 * shape[-1],) if shape else (2,), dtype=values.dtype)
                wide[..., ::2] = values
                data = xp_of(o._data).asarray(wide, dtype=dtype)[..., ::2]
            else:
                data = xp_of(o._data).asarray(values, dtype=dtype)
            grad_outputs.append(_wrap(data).requires_grad_(True))
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}

    def first_derivatives(*args):
        input_args, gos = args[:-n_out], args[-n_out:]
        outputs = [o for o in _tensor_outputs(func(*input_args)) if o.requires_grad]
        wrt = [x for i, x in enumerate(input_args) if i in diff_inputs]
        grads = _grad(outputs, wrt, list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode, masked=masked)
