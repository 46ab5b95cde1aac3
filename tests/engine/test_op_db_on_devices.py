"""Every op of PyTorch's OpInfo database that the engine has (tests/engine/opinfo.py), run on the GPU stand-in (or
a GPU) and on the CPU with PyTorch's own sample inputs: the same values, dtypes and shapes, and the same gradients.

The engine has code paths of its own for CUDA (CuPy's functions, their limits, no C kernels), and a path that no
test drives is a path the stand-in cannot hold to CuPy's contract. This sweep drives them all: it found cummax and
cummin calling ``cupy.maximum.accumulate`` (CuPy 14.2 has no such method: NotImplementedError on a real GPU), the
stand-in lacking nine CuPy functions the engine calls (sort, cumsum, diff, histogram, floor_divide, copysign,
matmul, unravel_index, broadcast_shapes), ``linspace`` of CUDA tensors reading them as NumPy arrays, and the
orthogonal polynomials of 0-dimensional tensors coming back with one dimension.

Skipped: where PyTorch or its ``expecttest`` is missing; ops whose values are random (the GPU's generator is not
the CPU's); a sample the engine's CPU path refuses (test_op_db_vs_pytorch.py's subject: such samples are counted,
and an op with none left is skipped with that count).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.engine import opinfo

if opinfo.OP_DB is None:
    pytest.skip(opinfo.SKIP_REASON, allow_module_level=True)

pytestmark = pytest.mark.torch

DTYPES = {"float64": True, "complex128": True, "float32": True, "complex64": False, "int64": False, "int32": False,
          "bool": False}  # dtype: with grads
CASES = opinfo.cases(DTYPES)
# the stand-in computes with NumPy, so only the engine's own device code can differ; a GPU sums in its own order
# (by the output's dtype: an integer op may give floats)
TOLERANCE = {"sim": {"float64": 1e-9, "complex128": 1e-9, "float32": 1e-4, "complex64": 1e-4, "float16": 1e-2},
             "gpu": {"float64": 1e-7, "complex128": 1e-7, "float32": 2e-3, "complex64": 2e-3, "float16": 1e-2}}


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
    fn = opinfo.function(op)
    grad = DTYPES[dtype] and op.supports_autograd
    tol = TOLERANCE["sim" if "cuda-sim" in request.node.callspec.id else "gpu"]
    compared, refused = 0, 0
    samples = opinfo.samples(op, dtype, grad)
    for k, sample in enumerate(samples):
        if opinfo.draws(op, sample):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cpu = opinfo.run(fn, sample, "cpu", grad)
        except opinfo.Unconvertible:
            continue
        except Exception:  # noqa: BLE001 - the CPU path refusing or failing is another test's subject
            refused += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpu = opinfo.run(fn, sample, "cuda", grad)
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
    assert opinfo.torch.backends.flags_frozen() == opinfo.FROZEN
