"""The long CPU passes in C (engine/_ckernels.c): GELU and layer norm, cut across threads as PyTorch's intra-op
parallelism cuts them. A thread count changes no bit of any result; layer norm gives NumPy's spelling's values
(the one that runs where the C is not built) within rounding, and PyTorch's; refusals name the problem."""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np
import pytest

import engine
from engine import kernels, threads
from tests.engine.helpers import HAVE_TORCH, python_paths

RNG = np.random.default_rng(5)

ck = kernels._ck
needs_c = pytest.mark.skipif(ck is None, reason="engine/_ckernels.c is not built here (or GRADSCOPE_PURE_PYTHON=1)")


@pytest.fixture(autouse=True)
def _threads_put_back():
    before = kernels.threads()
    yield
    kernels.set_threads(before)
    threads._threads = None
    threads._update()


def _each_thread_count(fn):
    """fn()'s arrays computed with 1, 2, 3 and 7 threads."""
    runs = []
    for k in (1, 2, 3, 7):
        kernels.set_threads(k)
        runs.append(fn())
    return runs


# --------------------------------------------------------------------------- threads


@needs_c
def test_set_num_threads_sets_the_c_passes_threads_too():
    engine.set_num_threads(3)
    assert kernels.threads() == 3 and engine.get_num_threads() == 3
    engine.set_num_threads(1)
    assert kernels.threads() == 1


def test_by_default_the_c_passes_run_on_one_thread():
    """(OpenBLAS's spinning threads would compete with threads started right after a product.)"""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import engine.kernels as k; print(k.threads())"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "1"


@needs_c
def test_a_bad_thread_count_is_refused_by_the_c_module():
    with pytest.raises(ValueError, match="positive number of threads"):
        ck.set_threads(0)
    ck.set_threads(10_000)  # more than it keeps: capped, not refused
    assert ck.get_threads() == 64


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", [0, 1, 2])
def test_gelu_is_the_same_bits_on_any_number_of_threads(dtype, kind):
    n = 300_001  # past the grain (65,536 per thread): cut into uneven ranges
    x = (RNG.standard_normal(n) * 3).astype(dtype)
    x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    gy = RNG.standard_normal(n).astype(dtype)

    def both():
        fwd = np.empty_like(x)
        ck.gelu(fwd, x, kind)
        if kind == 0:
            return fwd, None
        bwd = np.empty_like(x)
        ck.gelu_backward(bwd, gy, x, kind)
        return fwd, bwd

    runs = _each_thread_count(both)
    for fwd, bwd in runs[1:]:
        np.testing.assert_array_equal(fwd, runs[0][0])
        if bwd is not None:
            np.testing.assert_array_equal(bwd, runs[0][1])
    assert np.isnan(runs[0][0][0]) and runs[0][0][4:].std() > 0.3  # computed, not left empty
    probe = np.array([2.0, -1.0, 0.5], dtype)
    expected = {0: [math.erf(v) for v in probe],
                1: [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in probe],
                2: [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in probe]}
    out = np.empty_like(probe)
    ck.gelu(out, probe, kind)
    np.testing.assert_allclose(out, expected[kind], rtol=1e-6 if dtype == np.float32 else 1e-14)

# --------------------------------------------------------------------------- layer norm


def _numpy_layer_norm(x, w, b, nd, eps):
    """The formulas in float64: the reference both spellings are held to."""
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim - nd, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    out = xhat * (1 if w is None else w) + (0 if b is None else b)
    return out, xhat, rstd


def _numpy_layer_norm_backward(gy, xhat, rstd, w, nd):
    gy = gy.astype(np.float64)
    lead = gy.ndim - nd
    axes = tuple(range(lead, gy.ndim))
    g = gy if w is None else gy * w
    gx = rstd * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True))
    return gx, (gy * xhat).sum(axis=tuple(range(lead))), gy.sum(axis=tuple(range(lead)))


CASES = [  # shape, normalised dims, affine
    ((768, 128), 1, "both"), ((4, 5, 6), 2, "both"), ((3, 7), 1, None), ((2, 3), 1, "weight"), ((5, 13), 1, "bias"),
    ((1, 1), 1, "both"), ((2, 3, 4), 3, "both"), ((1200, 300), 1, "both"),  # the last past the threads' grain
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,nd,affine", CASES)
@pytest.mark.parametrize("path", ["compiled", "python"])
def test_layer_norm_and_its_gradients_are_the_formulas(dtype, shape, nd, affine, path):
    if path == "compiled" and ck is None:
        pytest.skip("engine/_ckernels.c is not built here")
    ns = shape[len(shape) - nd:]
    x_np = (RNG.standard_normal(shape) * 3 + 1).astype(dtype)
    w_np = RNG.standard_normal(ns).astype(dtype) if affine in ("both", "weight") else None
    b_np = RNG.standard_normal(ns).astype(dtype) if affine in ("both", "bias") else None
    gy_np = RNG.standard_normal(shape).astype(dtype)
    ctx = python_paths() if path == "python" else nullcontext()
    with ctx:
        x = engine.tensor(x_np, requires_grad=True)
        w = None if w_np is None else engine.tensor(w_np, requires_grad=True)
        b = None if b_np is None else engine.tensor(b_np, requires_grad=True)
        y = engine.nn.functional.layer_norm(x, ns, w, b)
        y.backward(engine.tensor(gy_np))
    out, xhat, rstd = _numpy_layer_norm(x_np, w_np, b_np, nd, 1e-5)
    gx, gw, gb = _numpy_layer_norm_backward(gy_np, xhat, rstd, w_np, nd)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    assert y.dtype == engine.float32 if dtype == np.float32 else y.dtype == engine.float64
    np.testing.assert_allclose(y.detach().numpy(), out, **tol)
    np.testing.assert_allclose(x.grad.numpy(), gx, **tol)
    if w is not None:
        np.testing.assert_allclose(w.grad.numpy(), gw, **tol)
        assert w.grad.shape == w.shape
    if b is not None:
        np.testing.assert_allclose(b.grad.numpy(), gb, **tol)



@needs_c
def test_layer_norms_parameter_gradients_are_summed_in_double():
    """768 rows of a float32 gradient: the C pass's column sums are the float64 sums rounded once (NumPy's float32
    pairwise sums are 1e-5 off here)."""
    gy = RNG.standard_normal((768, 128)).astype(np.float32)
    xhat = RNG.standard_normal((768, 128)).astype(np.float32)
    rstd = np.ones(768, np.float32)
    _, gw, gb = kernels.layer_norm_backward(gy, xhat, rstd, None, 128, need_x=False, need_w=True, need_b=True)
    np.testing.assert_array_equal(gw, (gy.astype(np.float64) * xhat).sum(axis=0).astype(np.float32))
    np.testing.assert_array_equal(gb, gy.astype(np.float64).sum(axis=0).astype(np.float32))


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_is_the_same_bits_on_any_number_of_threads(dtype):
    x = RNG.standard_normal((1000, 515)).astype(dtype)  # 515: the lanes' tail too
    w, b = RNG.standard_normal(515).astype(dtype), RNG.standard_normal(515).astype(dtype)
    gy = RNG.standard_normal(x.shape).astype(dtype)

    def both():
        out, xhat, rstd = kernels.layer_norm(x, w, b, 515, 1e-5)
        return (out, xhat, rstd) + kernels.layer_norm_backward(gy, xhat, rstd, w, 515, True, True, True)

    runs = _each_thread_count(both)
    for run in runs[1:]:
        for a, ref in zip(run, runs[0]):
            np.testing.assert_array_equal(a, ref)


@needs_c
def test_what_the_c_pass_does_not_take_goes_to_numpy():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    assert kernels.layer_norm(x.T, None, None, 4, 1e-5) is None  # not contiguous
    assert kernels.layer_norm(x.astype(np.float16), None, None, 6, 1e-5) is None
    assert kernels.layer_norm(x, np.ones(6, np.float64), None, 6, 1e-5) is None  # another dtype
    assert kernels.layer_norm(x[:0], None, None, 6, 1e-5) is None
    assert kernels.layer_norm(x, None, None, 6, 1e-5) is not None


@needs_c
def test_the_c_pass_refuses_arrays_that_do_not_fit_in_words():
    x = np.ones((4, 6), np.float32)
    out, xhat, rstd = np.empty_like(x), np.empty_like(x), np.empty(4, np.float32)
    with pytest.raises(ValueError, match="24 elements are not rows of 5"):
        ck.layer_norm(out, xhat, rstd, x, None, None, 5, 1e-5)
    with pytest.raises(ValueError, match="dtype or length does not match"):
        ck.layer_norm(out, xhat, np.empty(3, np.float32), x, None, None, 6, 1e-5)
    with pytest.raises(ValueError, match="dtype or length does not match"):
        ck.layer_norm(out, xhat, rstd, x, np.ones(6, np.float64), None, 6, 1e-5)
    with pytest.raises(ValueError, match="contiguous float32 or float64"):
        ck.layer_norm(out, xhat, rstd, x.astype(np.float64), None, None, 6, 1e-5)
    with pytest.raises(TypeError, match="layer_norm_backward"):
        ck.layer_norm_backward(out, None, None, x, xhat)
    with pytest.raises(ValueError, match="rstd is an array"):
        ck.layer_norm_backward(out, None, None, x, xhat, None, None, 6)


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch")
def test_layer_norm_is_pytorchs_at_the_gpt_size():
    import torch

    x_np = RNG.standard_normal((12, 64, 128)).astype(np.float32)
    gy_np = RNG.standard_normal((12, 64, 128)).astype(np.float32)
    results = []
    for lib in (engine, torch):
        lib.manual_seed(0)
        ln = lib.nn.LayerNorm(128)
        with lib.no_grad():
            ln.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, 128, dtype=np.float32)))
            ln.bias.copy_(lib.tensor(np.linspace(-1, 1, 128, dtype=np.float32)))
        x = lib.tensor(x_np, requires_grad=True)
        y = ln(x)
        y.backward(lib.tensor(gy_np))
        results.append([t.detach().numpy() for t in (y, x.grad, ln.weight.grad, ln.bias.grad)])
        assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0" if lib is torch else \
            y.grad_fn.name() == "NativeLayerNormBackward0"
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)


# --------------------------------------------------------------------------- batch norm's backward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 3, 5, 7), (4, 5), (3, 2, 9), (1, 4, 2, 2, 3)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("path", ["compiled", "python"])
def test_batch_norms_gradients_are_the_formulas(dtype, shape, training, path):
    if path == "compiled" and ck is None:
        pytest.skip("engine/_ckernels.c is not built here")
    x_np = (RNG.standard_normal(shape) * 2 + 0.5).astype(dtype)
    gy_np = RNG.standard_normal(shape).astype(dtype)
    w_np, b_np = RNG.standard_normal(shape[1]).astype(dtype), RNG.standard_normal(shape[1]).astype(dtype)
    running_mean, running_var = RNG.standard_normal(shape[1]), RNG.random(shape[1]) + 0.5
    with python_paths() if path == "python" else nullcontext():
        x = engine.tensor(x_np, requires_grad=True)
        w, b = engine.tensor(w_np, requires_grad=True), engine.tensor(b_np, requires_grad=True)
        rm, rv = engine.tensor(running_mean.astype(dtype)), engine.tensor(running_var.astype(dtype))
        y = engine.nn.functional.batch_norm(x, rm, rv, w, b, training=training, eps=1e-5)
        y.backward(engine.tensor(gy_np))
    axes = (0,) + tuple(range(2, len(shape)))
    view = (1, -1) + (1,) * (len(shape) - 2)
    x64, gy = x_np.astype(np.float64), gy_np.astype(np.float64)
    if training:
        mean, var = x64.mean(axis=axes), x64.var(axis=axes)
    else:
        mean, var = running_mean.astype(dtype).astype(np.float64), running_var.astype(dtype).astype(np.float64)
    invstd = 1 / np.sqrt(var + 1e-5)
    xhat = (x64 - mean.reshape(view)) * invstd.reshape(view)
    g = gy * w_np.astype(np.float64).reshape(view)
    if training:
        gx = (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True)) \
            * invstd.reshape(view)
    else:
        gx = g * invstd.reshape(view)
    tol = dict(rtol=3e-4, atol=3e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), gx, **tol)
    np.testing.assert_allclose(w.grad.numpy(), (gy * xhat).sum(axis=axes), **tol)
    np.testing.assert_allclose(b.grad.numpy(), gy.sum(axis=axes), **tol)


@needs_c
def test_batch_norms_backward_is_the_same_bits_on_any_number_of_threads():
    x = RNG.standard_normal((8, 12, 40, 40)).astype(np.float32)
    gy = RNG.standard_normal(x.shape).astype(np.float32)
    mean, invstd = x.mean(axis=(0, 2, 3)), 1 / np.sqrt(x.var(axis=(0, 2, 3)) + 1e-5)
    weight = RNG.standard_normal(12).astype(np.float32)
    runs = _each_thread_count(lambda: kernels.batch_norm_backward(gy, x, mean, invstd, weight, True, True))
    for run in runs[1:]:
        for a, ref in zip(run, runs[0]):
            np.testing.assert_array_equal(a, ref)
    np.testing.assert_allclose(runs[0][1], gy.astype(np.float64).sum(axis=(0, 2, 3)), rtol=1e-12)


@needs_c
def test_batch_norms_c_pass_refuses_what_does_not_fit():
    x = np.ones((2, 3, 4), np.float32)
    stats = [np.zeros(3) for _ in range(5)]
    with pytest.raises(ValueError, match="24 elements are not 2 samples of 5 channels"):
        ck.batch_norm_backward(None, *stats[:2], x, x, *stats[2:], 2, 5, True)
    with pytest.raises(ValueError, match="float64 arrays of 3"):
        ck.batch_norm_backward(None, np.zeros(3, np.float32), *stats[1:2], x, x, *stats[2:], 2, 3, True)
    assert kernels.batch_norm_backward(x, x.astype(np.float64), stats[0], stats[1], None, True, True) is None


# --------------------------------------------------------------------------- rows added at an index


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_is_numpys_add_at_bit_for_bit(dtype):
    out = RNG.standard_normal((65, 3, 5)).astype(dtype)
    index = RNG.integers(-65, 65, 700)
    src = RNG.standard_normal((700, 3, 5)).astype(dtype)
    expected = out.copy()
    np.add.at(expected, index, src)
    assert kernels.add_rows(out, index, src)
    np.testing.assert_array_equal(out, expected)


@needs_c
def test_add_rows_refuses_an_index_out_of_range_and_writes_nothing():
    out = np.zeros((4, 2), np.float32)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        kernels.add_rows(out, np.array([0, 4]), np.ones((2, 2), np.float32))
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        kernels.add_rows(out, np.array([-5]), np.ones((1, 2), np.float32))
    np.testing.assert_array_equal(out, 0.0)
    with pytest.raises(ValueError, match="int64 index of n"):
        ck.add_rows(out, np.array([0, 1], np.int32), np.ones((2, 2), np.float32))
    assert not kernels.add_rows(out, np.array([[0]]), np.ones((1, 1, 2), np.float32))  # (NumPy's add.at then)


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_embedding_and_index_select_gradients_add_each_pick_in_order(path):
    """PyTorch's CPU embedding backward adds the picks one by one in order: the same float32 sums, bit for bit."""
    if path == "compiled" and ck is None:
        pytest.skip("engine/_ckernels.c is not built here")
    idx = RNG.integers(0, 9, (6, 7))
    gy = RNG.standard_normal((6, 7, 4)).astype(np.float32)
    expected = np.zeros((9, 4), np.float32)
    for i, row in enumerate(idx.reshape(-1)):
        expected[row] += gy.reshape(-1, 4)[i]
    with python_paths() if path == "python" else nullcontext():
        w = engine.zeros(9, 4, requires_grad=True)
        engine.nn.functional.embedding(engine.tensor(idx), w).backward(engine.tensor(gy))
        x = engine.zeros(9, 4, requires_grad=True)
        x.index_select(0, engine.tensor(idx.reshape(-1))).backward(engine.tensor(gy.reshape(-1, 4)))
    np.testing.assert_array_equal(w.grad.numpy(), expected)
    np.testing.assert_array_equal(x.grad.numpy(), expected)


# --------------------------------------------------------------------------- adaptive max pooling


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,out", [((2, 3, 14, 14), (5, 5)), ((4, 7, 9), (3, 4)), ((1, 1, 5, 6), (5, 6)),
                                       ((2, 2, 3, 3), (1, 1)), ((3, 8, 8), (4, 2)), ((2, 5, 5), (7, 3)),
                                       ((2, 3, 9, 10, 11), (4, 3, 5)), ((1, 2, 4, 4, 4), (4, 4, 4)),
                                       ((2, 5, 6, 7), (2, 9, 3)), ((3, 4, 17), (5,)), ((2, 9), (9,)), ((4, 6), (11,))])
def test_adaptive_max_pool_picks_the_numpy_spellings_maxima_and_places(dtype, shape, out):
    """The C pass against the NumPy spelling: the first maximum of each window (ties in a coarse grid of values),
    the first NaN where there is one, the places PyTorch's indices give."""
    x_np = np.round(RNG.standard_normal(shape) * 2).astype(dtype)  # (integers: ties)
    x_np.reshape(-1)[::17] = np.nan
    results = []
    for path in ("compiled", "python"):
        if path == "compiled" and ck is None:
            continue
        with python_paths() if path == "python" else nullcontext():
            x = engine.tensor(x_np, requires_grad=True)
            pool = getattr(engine.nn.functional, f"adaptive_max_pool{len(out)}d")
            y, idx = pool(x, out, return_indices=True)
            y.backward(engine.ones(y.shape, dtype=x.dtype))
        results.append((y.detach().numpy(), idx.numpy(), x.grad.numpy()))
    if len(results) == 2:
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
    y, idx, grad = results[0]
    planes = x_np.reshape(-1, math.prod(shape[-len(out):]))
    np.testing.assert_array_equal(y.reshape(len(planes), -1),
                                  np.take_along_axis(planes, idx.reshape(len(planes), -1), 1))
    assert grad.sum() == pytest.approx(y.size)


@needs_c
def test_adaptive_max_pools_c_pass_refuses_what_does_not_fit():
    v = np.zeros((2, 3, 4, 4), np.float32)
    with pytest.raises(ValueError, match="positive sizes"):
        ck.adaptive_max_pool3d(np.empty((2, 0, 2, 2), np.float32), np.empty((2, 0, 2, 2), np.int64), v, 3, 4, 4, 0, 2,
                               2)
    with pytest.raises(ValueError, match="int64 where"):
        ck.adaptive_max_pool3d(np.empty((2, 1, 2, 2), np.float32), np.empty((2, 1, 2, 2), np.int32), v, 3, 4, 4, 1,
                               2, 2)
    with pytest.raises(ValueError, match="volumes of D x H x W"):
        ck.adaptive_max_pool3d(np.empty((2, 1, 2, 2), np.float32), np.empty((2, 1, 2, 2), np.int64), v, 3, 4, 5, 1,
                               2, 2)
    x = np.zeros((2, 4, 4), np.float32)
    with pytest.raises(ValueError, match="positive sizes"):
        ck.adaptive_max_pool2d(np.empty((2, 0, 2), np.float32), np.empty((2, 0, 2), np.int64), x, 4, 4, 0, 2)
    with pytest.raises(ValueError, match="int64 where"):
        ck.adaptive_max_pool2d(np.empty((2, 2, 2), np.float32), np.empty((2, 2, 2), np.int32), x, 4, 4, 2, 2)
