"""Reductions at their edges, as PyTorch 2.13 answers them: an empty list of dimensions (``x.sum(())``, ``dim=[]``)
reduces over every dimension (the engine returned ``x`` unchanged, and ``std``/``var`` NaNs); max/min-like
reductions over an empty dimension refuse with PyTorch's ``IndexError`` (NumPy's ``ValueError`` leaked through), and
over a non-empty one of an empty tensor give an empty result (``amax`` refused); the median of nothing is NaN; the
infinity and negative norms of nothing refuse (no identity); ``var``/``std`` warn where ``n - correction <= 0``, as
PyTorch; integer ``softmax``/``nanmean`` refuse. The expected answers were printed by torch 2.13.0; where torch is
installed the same expressions are also run through it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
from tests.engine.helpers import table_tests

# (expression, expected): a value as (shape, dtype name, values), or an error as (type name, start of its message).
# ``x`` is arange(12.) as 3x4, ``e`` zeros(0, 3), ``s`` the 0-d 2.5, ``i`` arange(12) as 3x4 (int64).
CASES = [
    ("x.sum(())", ((), "float32", [66.0])),
    ("x.sum([])", ((), "float32", [66.0])),
    ("x.sum(dim=(), keepdim=True)", ((1, 1), "float32", [66.0])),
    ("engine.sum(x, ())", ((), "float32", [66.0])),
    ("x.mean(dim=[])", ((), "float32", [5.5])),
    ("x.mean((), keepdim=True)", ((1, 1), "float32", [5.5])),
    ("x.nansum(())", ((), "float32", [66.0])),
    ("x.nanmean([])", ((), "float32", [5.5])),
    ("x.amax([])", ((), "float32", [11.0])),
    ("x.amin(dim=[])", ((), "float32", [0.0])),
    ("x.std(())", ((), "float32", [3.6055512])),
    ("x.var(dim=[])", ((), "float32", [13.0])),
    ("x.std((), keepdim=True)", ((1, 1), "float32", [3.6055512])),
    ("x.norm(dim=())", ((), "float32", [22.494444])),
    ("x.norm(p=1, dim=[])", ((), "float32", [66.0])),
    ("engine.linalg.vector_norm(x, dim=())", ((), "float32", [22.494444])),
    ("x.count_nonzero(())", ((), "int64", [11])),
    ("engine.std_mean(x, dim=())[0]", ((), "float32", [3.6055512])),
    ("s.sum(())", ((), "float32", [2.5])),
    ("s.std(())", ((), "float32", [math.nan])),
    ("x.aminmax(dim=())", ("TypeError", "aminmax(): argument 'dim' must be int, not tuple")),
    ("e.max(0)", ("IndexError", "max(): Expected reduction dim 0 to have non-zero size.")),
    ("e.min(dim=0)", ("IndexError", "min(): Expected reduction dim 0 to have non-zero size.")),
    ("e.max()", ("RuntimeError", "max(): Expected reduction dim to be specified for input.numel() == 0. Specify")),
    ("e.argmax()", ("IndexError", "argmax(): Expected reduction dim to be specified for input.numel() == 0.")),
    ("e.argmin(0)", ("IndexError", "argmin(): Expected reduction dim 0 to have non-zero size.")),
    ("e.argmax(1)", ((0,), "int64", [])),
    ("e.max(1).values", ((0,), "float32", [])),
    ("e.amax(0)", ("IndexError", "amax(): Expected reduction dim 0 to have non-zero size.")),
    ("e.amin(1)", ((0,), "float32", [])),
    ("e.amax(-1)", ((0,), "float32", [])),
    ("e.amax()", ("RuntimeError", "amax(): Expected reduction dim to be specified for input.numel() == 0.")),
    ("engine.zeros(3, 0).max(1)", ("IndexError", "max(): Expected reduction dim 1 to have non-zero size.")),
    ("engine.zeros(3, 0).argmax(1)", ("IndexError", "argmax(): Expected reduction dim 1 to have non-zero size.")),
    ("engine.zeros(3, 0).amin(1)", ("IndexError", "amin(): Expected reduction dim 1 to have non-zero size.")),
    ("engine.zeros(3, 0).median(1)", ("IndexError", "median(): Expected reduction dim 1 to have non-zero size.")),
    ("e.kthvalue(1, 0)", ("IndexError", "kthvalue(): Expected reduction dim 0 to have non-zero size.")),
    ("e.median()", ((), "float32", [math.nan])),
    ("e.nanmedian()", ((), "float32", [math.nan])),
    ("engine.zeros(0).median()", ((), "float32", [math.nan])),
    ("e.quantile(0.5)", ("RuntimeError", "quantile() input tensor must be non-empty")),
    ("e.logsumexp(0)", ((3,), "float32", [-math.inf] * 3)),
    ("engine.zeros(3, 0).logsumexp(1)", ((3,), "float32", [-math.inf] * 3)),
    ("e.nanmean(0)", ((3,), "float32", [math.nan] * 3)),
    ("e.norm(-1)", ("RuntimeError", "linalg.vector_norm cannot compute the -1 norm on an empty tensor")),
    ("e.norm(float('inf'))", ("RuntimeError", "linalg.vector_norm cannot compute the inf norm on an empty tensor")),
    ("engine.zeros(3, 0).norm(p=-0.5, dim=1)",
     ("RuntimeError", "linalg.vector_norm cannot compute the -0.5 norm on the dimension 1")),
    ("engine.zeros(3, 0).norm(p=float('-inf'), dim=(0, 1))",
     ("RuntimeError", "linalg.vector_norm cannot compute the -inf norm on the dimension 1")),
    ("engine.zeros(3, 0).norm(p=float('inf'), dim=0)", ((0,), "float32", [])),
    ("engine.zeros(3, 0).norm(p=0.5, dim=1)", ((3,), "float32", [0.0] * 3)),
    ("e.norm()", ((), "float32", [0.0])),
    ("s.narrow(0, 0, 1)", ("RuntimeError", "narrow() cannot be applied to a 0-dim tensor.")),
    ("i.softmax(0)", ("NotImplementedError", "\"softmax_kernel_impl\" not implemented for 'Long'")),
    ("i.log_softmax(1)", ("NotImplementedError", "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'")),
    ("i.log_softmax(0)", ("NotImplementedError", "\"log_softmax_kernel_impl\" not implemented for 'Long'")),
    ("i.softmax(0, dtype=engine.float64).sum()", ((), "float64", [4.0])),
    ("i.nanmean()", ("RuntimeError", "nanmean(): expected input to have floating point or complex dtype but got Long")),
]


def _env(lib):
    return {"engine": lib, "x": lib.arange(12.0).reshape(3, 4), "e": lib.zeros(0, 3), "s": lib.tensor(2.5),
            "i": lib.arange(12).reshape(3, 4), "math": math}


def _misprint(got):
    """torch's own misprint in its message ("dimension 1because"), mended before the table's words are held to it."""
    return (got[0], got[1].replace("1because", "1 because")) if isinstance(got[0], str) else got


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env, _misprint)


@pytest.mark.parametrize("name", ["sum", "mean", "nansum", "amax", "std", "var", "norm", "logsumexp"])
def test_no_dimensions_named_reduce_all_of_them_with_the_same_gradient(name):
    """``dim=()`` is every dimension: the same value and gradient as naming them all, through the same node."""
    data = np.random.default_rng(3).standard_normal((3, 4))
    grads, values, names = [], [], []
    for dim in ((), [], (0, 1)):
        x = engine.tensor(data, requires_grad=True)
        y = getattr(x, name)(dim=dim)
        y.backward()
        values.append(y.item())
        grads.append(x.grad.numpy())
        names.append(y.grad_fn.name())
    assert values[0] == values[1] == values[2]
    np.testing.assert_array_equal(grads[0], grads[2])
    np.testing.assert_array_equal(grads[1], grads[2])
    assert names[0] == names[1] == names[2]


def test_sum_and_mean_over_no_named_dimension_are_pytorchs_dim_overload():
    x = engine.ones(2, 3, requires_grad=True)
    assert x.sum(()).grad_fn.name() == "SumBackward1" and x.sum().grad_fn.name() == "SumBackward0"
    assert x.mean([]).grad_fn.name() == "MeanBackward1" and x.mean().grad_fn.name() == "MeanBackward0"


@pytest.mark.parametrize(("expr", "fn"), [
    ("engine.tensor([3.0]).var()", "var"),
    ("engine.tensor([3.0]).std(0)", "std"),
    ("engine.zeros(2, 1).std(1)", "std"),
    ("engine.zeros(0, 3).var(0)", "var"),
    ("engine.zeros(0, 3).std(1)", "std"),
    ("engine.ones(4).var(correction=4)", "var"),
    ("engine.std_mean(engine.ones(1))[0]", "std"),
])
def test_var_and_std_warn_as_pytorch_where_no_degree_of_freedom_is_left(expr, fn):
    with pytest.warns(UserWarning, match=rf"{fn}\(\): degrees of freedom is <= 0\. Correction should be strictly "
                                         r"less than the reduction factor \(input numel divided by output numel\)"):
        out = eval(expr, {"engine": engine})  # noqa: S307
    assert bool(out.isnan().all())  # (and an empty result stays empty)


def test_var_and_std_with_a_degree_of_freedom_left_say_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's "Mean of empty slice" came through before: an error now)
        assert engine.ones(2).var().item() == 0.0
        assert engine.ones(4).var(correction=3).item() == 0.0
        assert engine.ones(1).var(correction=0).item() == 0.0
        assert engine.zeros(3, 2).std(1, correction=0).tolist() == [0.0, 0.0, 0.0]


def test_the_median_of_nothing_is_nan_with_an_empty_gradient():
    e = engine.zeros(0, 3, requires_grad=True)
    m = e.median()
    assert math.isnan(m.item()) and m.grad_fn.name() == "MedianBackward0"
    m.backward()
    assert e.grad.shape == (0, 3)
    with pytest.raises(RuntimeError, match="median of an empty integer tensor"):
        engine.zeros(0, dtype=engine.int64).median()
