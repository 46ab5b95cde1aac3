"""Every op of PyTorch's OpInfo database (``torch.testing._internal.common_methods_invocations.op_db``, the table
PyTorch tests its own devices with) that the engine has, run on the GPU stand-in and on the CPU with PyTorch's own
sample inputs: the same values, dtypes and shapes, and the same gradients.

The engine has code paths of its own for CUDA (CuPy's functions, their limits, no C kernels), and a path that no
test drives is a path the stand-in cannot hold to CuPy's contract. This sweep drives them all: it found cummax and
cummin calling ``cupy.maximum.accumulate`` (CuPy 14.2 has no such method: NotImplementedError on a real GPU), the
stand-in lacking nine CuPy functions the engine calls (sort, cumsum, diff, histogram, floor_divide, copysign,
matmul, unravel_index, broadcast_shapes), ``linspace`` of CUDA tensors reading them as NumPy arrays, and the
orthogonal polynomials of 0-dimensional tensors coming back with one dimension.

Skipped: where PyTorch or its ``expecttest`` (which the OpInfo module imports) is missing; ops whose values are
random (the GPU's generator is not the CPU's); a sample the engine's CPU path refuses (that is the CPU's business,
not the device's: such samples are counted, and an op with none left is skipped with that count).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine

torch = pytest.importorskip("torch")
_frozen = torch.backends.flags_frozen()
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
except ImportError as exc:  # (expecttest, which PyTorch's test helpers import, is a test-only package)
    pytest.skip(f"PyTorch's OpInfo database does not import here: {exc}", allow_module_level=True)
finally:
    # PyTorch's test helpers freeze torch.backends' flags at import (common_utils: disable_global_flags), for
    # PyTorch's own suite; the benchmarks' PyTorch rows set them, in this process, later
    if not _frozen:
        torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True  # (its module's own)

pytestmark = pytest.mark.torch

# values drawn from a generator: the stand-in's (NumPy's, per device) is not the CPU's
RANDOM = ("rand", "normal", "bernoulli", "dropout", "multinomial", "uniform", "exponential", "geometric", "cauchy",
          "log_normal", "poisson", "empty", "randint", "randn", "rrelu", "fractional_max_pool")
SAMPLES = 60  # per op and dtype, at most (PyTorch's lists run to hundreds for a few ops)
DTYPES = {"float64": True, "complex128": True, "float32": True, "int64": False, "bool": False}  # dtype: with grads
# the stand-in computes with NumPy, so only the engine's own device code can differ; a GPU sums in its own order
# (by the output's dtype: an integer op may give floats)
TOLERANCE = {"sim": {"float64": 1e-9, "complex128": 1e-9, "float32": 1e-4, "complex64": 1e-4, "float16": 1e-2},
             "gpu": {"float64": 1e-7, "complex128": 1e-7, "float32": 2e-3, "complex64": 2e-3, "float16": 1e-2}}


class _Unconvertible(Exception):
    """A sample argument the engine has no counterpart of (a torch.Generator, a sparse layout, bfloat16)."""


def _resolve(name):
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


def _ops():
    cases = []
    for op in op_db:
        if op.name.startswith(("_", "sparse", "masked", "signal")) or any(r in op.name for r in RANDOM):
            continue
        if _resolve(op.name) is None:
            continue
        label = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        for dtype in DTYPES:
            if getattr(torch, dtype) in op.supported_dtypes("cpu"):
                cases.append(pytest.param(op, dtype, id=f"{label}-{dtype}"))
    return cases


CASES = _ops()


def _convert(value, device, grad):
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16 or value.layout != torch.strided:
            raise _Unconvertible(str(value.dtype))
        array = value.detach().resolve_conj().resolve_neg().numpy().copy()
        out = engine.tensor(array, device=device)
        if grad and value.requires_grad and (out.dtype.is_floating_point or out.dtype.is_complex):
            out.requires_grad_(True)
        return out
    if isinstance(value, torch.dtype):
        name = str(value).replace("torch.", "")
        if not hasattr(engine, name):
            raise _Unconvertible(name)
        return getattr(engine, name)
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        items = [_convert(v, device, grad) for v in value]
        return type(value)(items) if type(value) in (list, tuple) else tuple(items)
    if isinstance(value, dict):
        return {k: _convert(v, device, grad) for k, v in value.items()}
    if value is None or isinstance(value, (int, float, complex, str, slice, type(Ellipsis), np.generic)):
        return value
    raise _Unconvertible(type(value).__name__)  # torch.device, Generator, memory_format, a callable


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _flat(item)]
    return [] if out is None else [out]


def _host(value):
    return value.detach().cpu().numpy() if isinstance(value, engine.Tensor) else np.asarray(value)


def _run(fn, sample, device, grad):
    """The outputs of ``fn`` on ``sample`` (moved to ``device``), and the gradients of a fixed weighting of them
    with respect to the inputs that require one."""
    inp = _convert(sample.input, device, grad)
    args = _convert(tuple(sample.args), device, grad)
    kwargs = _convert(dict(sample.kwargs), device, grad)
    out = fn(inp, *args, **kwargs) if callable(fn) else getattr(inp, fn)(*args, **kwargs)
    outs = _flat(out)
    values = [_host(o) for o in outs]
    if not grad:
        return values, None
    leaves = [x for x in _flat([inp, list(args), list(kwargs.values())])
              if isinstance(x, engine.Tensor) and x.requires_grad]
    loss = None
    for i, o in enumerate(outs):
        if isinstance(o, engine.Tensor) and o.requires_grad:
            weights = engine.tensor(np.cos(np.arange(o.numel()) + i).reshape(o.shape), device=device).to(o.dtype)
            term = (o * weights).sum()
            term = term.real + term.imag if o.dtype.is_complex else term
            loss = term if loss is None else loss + term
    if loss is None or not leaves:
        return values, None
    grads = engine.autograd.grad(loss, leaves, allow_unused=True)
    return values, [None if g is None else _host(g) for g in grads]


def _assert_same(cpu, gpu, tolerance, what):
    assert len(cpu) == len(gpu), f"{what}: {len(cpu)} outputs on the CPU, {len(gpu)} on the device"
    for i, (a, b) in enumerate(zip(cpu, gpu)):
        assert (a is None) == (b is None), f"{what} {i}: a gradient on one device only"
        if a is None:
            continue
        a, b = np.asarray(a), np.asarray(b)
        assert (a.shape, a.dtype) == (b.shape, b.dtype), f"{what} {i}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
        if a.dtype.kind in "fc":
            tol = tolerance[a.dtype.name]
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{what} {i}")
        else:
            np.testing.assert_array_equal(b, a, err_msg=f"{what} {i}")


@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_the_device_path_gives_the_cpus_values_and_gradients(op, dtype, cuda_device, request):
    fn = _resolve(op.name)
    grad = DTYPES[dtype] and op.supports_autograd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's sample makers warn of their own deprecations)
        try:
            samples = list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=grad))[:SAMPLES]
        except Exception as exc:  # noqa: BLE001 - PyTorch's sample maker itself failing is not the engine's
            pytest.skip(f"PyTorch's samples fail to build here: {exc!r}"[:200])
    compared, refused = 0, 0
    for k, sample in enumerate(samples):
        if op.name == "nn.functional.scaled_dot_product_attention" and sample.kwargs.get("dropout_p", 0.0) > 0:
            continue  # (dropout draws)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cpu = _run(fn, sample, "cpu", grad)
        except _Unconvertible:
            continue
        except Exception:  # noqa: BLE001 - the CPU path refusing or failing is another test's subject
            refused += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpu = _run(fn, sample, "cuda", grad)
        tol = TOLERANCE["sim" if "cuda-sim" in request.node.callspec.id else "gpu"]
        _assert_same(cpu[0], gpu[0], tol, f"sample {k}: output")
        if cpu[1] is not None or gpu[1] is not None:
            _assert_same(cpu[1] or [], gpu[1] or [], tol, f"sample {k}: gradient")
        compared += 1
    if not compared:
        pytest.skip(f"no sample the engine's CPU path runs ({refused} refused, {len(samples)} in all)")


def test_the_sweep_covers_the_ops_the_engine_has():
    """Most of PyTorch's ops are here, in each dtype the engine has: a sweep that silently lost them would pass."""
    names = {case.values[0].name for case in CASES}
    assert len(names) > 400, len(names)
    for name in ("cummax", "mode", "histc", "linspace", "div", "remainder", "nn.functional.conv2d", "linalg.svd",
                 "special.chebyshev_polynomial_t", "unique_consecutive", "matmul"):
        assert name in names, name


def test_importing_pytorchs_op_table_left_its_backend_flags_as_they_were():
    assert torch.backends.flags_frozen() == _frozen
