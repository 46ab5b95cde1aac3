"""Every op of PyTorch's OpInfo database that the engine has (tests/engine/opinfo.py), on the CPU, against PyTorch
itself on PyTorch's own sample inputs: the same values, dtypes and shapes, and in float64 and complex128 the same
gradients of a fixed weighting of the outputs.

PyTorch's samples are its own edge cases (0-d tensors, empty dimensions, keyword forms), and they found: ``isreal``
of a complex tensor true everywhere; ``istft`` of a two-sided input that was not Hermitian (PyTorch keeps the first
n_fft // 2 + 1 bins); a complex LU's pivots chosen by modulus (LAPACK's by |re| + |im|); ``erfc`` and four special
functions of a 0-d float64 tensor reaching for CUDA; ``arange`` and ``linspace`` into integer dtypes; index_add,
index_copy, index_fill, index_reduce, scatter, scatter_add, scatter_reduce, gather and quantile of 0-d tensors;
searchsorted, lu_solve and matrix norms of empty matrices; matrix_rank and pinv with a tensor of tolerances; and
``flip(dims=)``, ``gradient(spacing=None)``, ``diff(n=0)``, ``combinations`` with r past the length,
``unique_consecutive(dim=)``, ``norm(p='nuc')``, aminmax over a non-empty dimension of an empty tensor, a 0-d
``linalg.vander``, lstsq's real residuals of a complex system, integer scatter_reduce to amax or amin. Ops whose
PyTorch form is a lambda (``torch.where(condition, self, other)``, ``x.view(shape)``) run as that lambda with
``torch`` meaning the engine: they found pinv's gradient NaN for a matrix of lower rank, ``sum_to_size(())`` of a
bool tensor not summed, and ``resize_as_``, ``addmv_`` and ``conj_physical_`` missing from the engine's namespace.

What the engine does otherwise on purpose, or not yet, is listed below with the reason (KNOWN); an entry whose
samples all agree fails, so the list cannot go stale.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.engine import opinfo

if opinfo.OP_DB is None:
    pytest.skip(opinfo.SKIP_REASON, allow_module_level=True)

torch = opinfo.torch
pytestmark = pytest.mark.torch

DTYPES = {"float64": True, "complex128": True, "float32": False, "complex64": False, "float16": False, "int64": False,
          "int32": False, "int16": False, "int8": False, "uint8": False, "bool": False}  # dtype: with grads
TOLERANCE = {"float64": 1e-7, "complex128": 1e-7, "float32": 1e-4, "complex64": 1e-4, "float16": 1e-2}

CASES = opinfo.cases(DTYPES)

# answers that are not unique: eigenvectors and singular vectors up to a phase (their own tests compare what is
# unique), and the places of equal values (PyTorch promises no order among ties; integer and bool samples have many)
NOT_UNIQUE = {"linalg.eig", "linalg.eigh", "linalg.svd", "svd", "linalg.eigvals"}
TIES = {"sort", "argsort", "msort", "topk", "kthvalue", "mode", "median", "nanmedian", "min", "max", "argmax",
        "argmin"}

# (op, dtype; None: every dtype; "grad": the dtypes whose gradients are compared) -> why the engine differs: each
# sample may raise in the engine or differ
KNOWN = {
    ("nn.functional.embedding", "float32"): "sparse=True (a sparse gradient): the engine refuses it by name",
    ("nn.functional.embedding", "float16"): "sparse=True (a sparse gradient): the engine refuses it by name",
    ("as_strided.partial_views", None): "a view of a larger storage: the engine's tensor from a sample is its own",
    ("nn.functional.batch_norm", None): "a 1-d empty input: torch 2.13 computes it (where a 1-d input of any "
                                        "length with its running statistics raises an IndexError), the engine asks "
                                        "for 2-d or more",
    ("linalg.householder_product", "grad"): "an empty tau: torch 2.13's result is in the graph but gives A and tau "
                                           "no gradient (None), the engine's zeros (A's) and an empty one (tau's)",
    ("ormqr", "grad"): "empty inputs: the engine gives empty gradients, torch 2.13 none",
    ("istft", "complex128"): "a learned window: torch 2.13 gives it no gradient, the engine its true one",
    ("as_strided_scatter", "grad"): "torch 2.13's input gradient is the scattered region's, not the rest's: "
                                  "as_strided_scatter(zeros(4), ones(2), (2,), (1,), 1) with g = [1, 2, 3, 4] gives "
                                  "[0, 2, 3, 0] there, [1, 0, 0, 4] in the engine (the true one)",
    ("linalg.pinv.hermitian", "grad"): "the gradient: the engine's reaches the lower triangle that the value is read "
                                     "from; torch 2.13's treats A as Hermitian whole",
    ("special.bessel_j0", "float64"): "torch 2.13's is off by up to 3e-7 near x = 5 (mpmath's J0(5.2) is "
                                      "-0.11029043979098647: the engine's to 1e-17, torch's -2.8e-7 off)",
    ("special.bessel_y1", "float64"): "torch 2.13's is off by up to 6e-7 near x = 5 (against mpmath; the engine's "
                                      "to 1e-16)",
    ("addbmm", "float16"): "NumPy's float16 matrix product sums in float16, ATen's in float32 (0.125 apart)",
    ("nn.functional.multi_head_attention_forward", "float16"): "its float16 matrix products: NumPy's sum in float16",
    ("histc", "float16"): "a float16 value on a bin's edge: the edges' rounding puts it in the neighbour bin",
    ("matrix_exp", "float16"): "entries past float16's range: torch 2.13 gives NaN everywhere, the engine (in "
                               "float64, rounded once) the finite ones and inf",
    ("nn.functional.interpolate.bilinear", "uint8"): "torch 2.13 rounds uint8 through its own fixed-point weights "
                                                     "(one off the exact value in about 60% of images)",
    ("nn.functional.interpolate.bicubic", "uint8"): "uint8 rounding: torch 2.13's fixed-point weights (as bilinear)",
    ("nn.functional.upsample_bilinear", "uint8"): "uint8 rounding: torch 2.13's fixed-point weights (as interpolate)",
    **{(name, dtype): "at the poles (negative integers) torch 2.13's float32 gives about 1e13, the engine inf"
       for name in ("polygamma", "special.polygamma") for dtype in ("int8", "int16")},
    ("matrix_exp", "float32"): "entries near 1e5 in float32: torch 2.13's is up to 3e-6 of the largest entry off "
                               "the exact one (mpmath), the engine's (computed in float64) 4e-8",
}


def _known(op, dtype):
    names = {op.name, op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")}
    kinds = (None, dtype) + (("grad",) if DTYPES[dtype] and op.supports_autograd else ())
    return any((name, kind) in KNOWN for name in names for kind in kinds)


def _torch_run(op, sample, grad):
    out = op(sample.input, *sample.args, **sample.kwargs)
    outs = opinfo.flat(out)
    values = [o.detach().resolve_conj().resolve_neg().numpy() if isinstance(o, torch.Tensor) else np.asarray(o)
              for o in outs]
    if not grad:
        return values, None
    leaves = [x for x in opinfo.flat([sample.input, list(sample.args), list(sample.kwargs.values())])
              if isinstance(x, torch.Tensor) and x.requires_grad]
    loss = opinfo.weighted([o for o in outs if isinstance(o, torch.Tensor)],
                           lambda w, o: torch.tensor(w).to(o.dtype))
    if loss is None or not leaves:
        return values, None
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return values, [None if g is None else g.resolve_conj().numpy() for g in grads]


def _difference(expected, got, what, values_only=()):
    if len(expected) != len(got):
        return f"{what}: {len(expected)} outputs in torch, {len(got)} in the engine"
    for i, (a, b) in enumerate(zip(expected, got)):
        if (a is None) != (b is None):
            return f"{what} {i}: a gradient in one library only"
        if a is None or i in values_only:
            continue
        a, b = np.asarray(a), np.asarray(b)
        if (a.shape, a.dtype) != (b.shape, b.dtype):
            return f"{what} {i}: {a.shape} {a.dtype} in torch, {b.shape} {b.dtype} in the engine"
        if a.dtype.kind in "fc":
            tol = TOLERANCE[a.dtype.name]
            if not np.allclose(b, a, rtol=tol, atol=tol, equal_nan=True):
                with np.errstate(invalid="ignore"):  # (inf against a finite value)
                    gap = np.abs(b - a)
                return f"{what} {i}: largest difference {np.nanmax(gap) if not np.isnan(gap).all() else 'NaN'}"
        elif not np.array_equal(a, b):
            return f"{what} {i}: values differ"
    return None


@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_the_engine_gives_pytorchs_values_and_gradients(op, dtype):
    if op.name in NOT_UNIQUE:
        pytest.skip("not unique: eigen- and singular vectors up to a phase (compared in the linalg tests)")
    fn = opinfo.function(op)
    grad = DTYPES[dtype] and op.supports_autograd
    known = _known(op, dtype)
    ties = op.name in TIES and dtype in ("int64", "int32", "int16", "int8", "uint8", "bool", "float16")
    if ties and op.name == "argsort":
        pytest.skip("only the places of equal values, which PyTorch does not fix")
    compared, differed = 0, []
    for k, sample in enumerate(opinfo.samples(op, dtype, grad)):
        if opinfo.draws(op, sample):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                expected = _torch_run(op, sample, grad)
            except Exception:  # noqa: BLE001 - PyTorch refusing its own sample (a refusal test's subject)
                continue
            try:
                got = opinfo.run(fn, sample, "cpu", grad)
            except opinfo.Unconvertible:
                continue
            except Exception as exc:  # noqa: BLE001 - the engine raising where PyTorch computes: a difference
                differed.append(f"sample {k}: {type(exc).__name__}: {exc}"[:300])
                continue
        problem = _difference(expected[0], got[0], f"sample {k}: output",
                              values_only=range(1, 9) if ties else ())
        if problem is None and expected[1] is not None:
            problem = _difference(expected[1], got[1] or [], f"sample {k}: gradient")
        if problem:
            differed.append(problem)
        compared += 1
    if known:
        assert differed, f"every sample agrees: take {op.name} off KNOWN"
        return
    assert not differed, "\n".join(differed[:5])
    if not compared:
        pytest.skip("no sample both run")
