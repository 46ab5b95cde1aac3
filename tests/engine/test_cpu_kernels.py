"""The CPU kernels that beat NumPy's own way of writing the tutorial's step: the product that skips ndarray.dot's
zero-fill of its output (engine.threads), and the masked zeroing without a branch per element
(engine.kernels.zero_where). Each must give NumPy's result bit for bit, on every layout and special value, and
leave to NumPy what it does not cover."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import kernels, threads
from tests.engine.helpers import HAVE_TORCH

RNG = np.random.default_rng(11)

pytestmark = pytest.mark.usefixtures("graph_core")  # the masked writes in C (_ckernels.c) and with NumPy


# --------------------------------------------------------------------------- the 2-D product


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("m,k,n", [(16, 64, 32), (1000, 64, 100), (200, 8, 200), (64, 1000, 100)])
@pytest.mark.parametrize("layout", ["C", "a transposed", "b transposed"])
def test_the_product_is_numpys_dot_bit_for_bit(dtype, m, k, n, layout):
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    if layout == "a transposed":
        a = np.ascontiguousarray(a.T).T  # F-ordered, as x.t() in the tutorial's grad_w1 = x.t().mm(grad_h)
    elif layout == "b transposed":
        b = np.ascontiguousarray(b.T).T
    out = threads.dot(a, b)
    assert out.dtype == dtype and out.shape == (m, n) and out.flags.c_contiguous
    np.testing.assert_array_equal(out, a.dot(b))


def test_large_outputs_of_a_blas_type_go_to_matmul_and_the_rest_to_dot(monkeypatch):
    seen = []
    monkeypatch.setattr(threads, "_matmul", lambda a, b: seen.append("matmul") or np.matmul(a, b))
    threads.dot(np.ones((1000, 8), np.float32), np.ones((8, 100), np.float32))  # 100000 outputs
    threads.dot(np.ones((64, 1000), np.float32), np.ones((1000, 100), np.float32))  # 6400 outputs: dot
    threads.dot(np.ones((1000, 8), np.int64), np.ones((8, 100), np.int64))  # not a BLAS type: dot
    assert seen == ["matmul"]
    assert threads.MATMUL_FROM == 16384


def test_the_tutorial_step_takes_the_large_gradient_from_matmul(monkeypatch):
    """grad_w1 (1000 x 100) in both the autograd walk and the hand-written x.t().mm(grad_h)."""
    seen = []
    monkeypatch.setattr(threads, "_matmul", lambda a, b: seen.append(a.shape + b.shape) or np.matmul(a, b))
    x = engine.randn(64, 1000)
    w1 = engine.randn(1000, 100, requires_grad=True)
    w1.mm(engine.randn(100, 10)).sum()  # forward products have small outputs here
    x.mm(w1).clamp(min=0).sum().backward()
    assert seen == [(1000, 64, 64, 100)]
    expected = x.numpy().T.dot((x.numpy().dot(w1.detach().numpy()) >= 0).astype(np.float32))
    np.testing.assert_array_equal(w1.grad.numpy(), expected)
    x.t().mm(engine.randn(64, 100))
    assert len(seen) == 2


# --------------------------------------------------------------------------- grad_h[h < 0] = 0


SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, 3.5, -2.0])


def _masked(shape, dtype):
    g = RNG.standard_normal(shape).astype(dtype)
    flat = g.reshape(-1)
    flat[: SPECIAL.size] = SPECIAL.astype(dtype)
    h = RNG.standard_normal(shape).astype(dtype)
    return g, h < 0


def _bits(a):
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 100), (4096,), (8, 16, 32)])
def test_zero_where_is_numpys_masked_assignment_bit_for_bit(dtype, shape):
    g, mask = _masked(shape, dtype)
    expected = g.copy()
    expected[mask] = 0
    assert kernels.zero_where(g, mask) is True
    np.testing.assert_array_equal(_bits(g), _bits(expected))  # NaNs, infinities and the sign of zero included


def test_zero_where_on_a_transposed_view_writes_through_to_its_base():
    base, mask = _masked((100, 64), np.float32)
    expected = base.copy()
    expected.T[mask.T] = 0
    assert kernels.zero_where(base.T, mask.T) is True
    np.testing.assert_array_equal(_bits(base), _bits(expected))


@pytest.mark.parametrize("case", ["small", "int", "bool values", "mask shape", "int mask", "read-only", "long double"])
def test_zero_where_leaves_what_it_does_not_cover_untouched_for_numpy(case, graph_core):
    g, mask = _masked((64, 100), np.float32)
    if case == "small":
        if graph_core == "compiled":
            pytest.skip("in C a small array goes through zero_where too")
        g, mask = g[:2, :8].copy(), mask[:2, :8].copy()  # 16 elements: NumPy's assignment is as fast
    elif case == "int":
        g = np.arange(g.size, dtype=np.int32).reshape(g.shape)
    elif case == "bool values":
        g = g > 0
    elif case == "mask shape":
        mask = mask[0]
    elif case == "int mask":
        mask = mask.astype(np.int8)
    elif case == "read-only":
        g.flags.writeable = False
    else:
        g = g.astype(np.longdouble)
    before = g.copy()
    assert kernels.zero_where(g, mask) is False
    np.testing.assert_array_equal(g, before)


@pytest.mark.parametrize("value", [0, 0.0])
def test_a_tensors_masked_zeroing_goes_through_zero_where(monkeypatch, value):
    calls = []
    real = kernels.zero_where
    monkeypatch.setattr(kernels, "zero_where", lambda a, m: calls.append(a.shape) or real(a, m))
    g, mask = _masked((64, 100), np.float32)
    expected = g.copy()
    expected[mask] = 0
    t = engine.from_numpy(g.copy())
    t[engine.from_numpy(mask)] = value
    assert calls == [(64, 100)]
    np.testing.assert_array_equal(_bits(t.numpy()), _bits(expected))


@pytest.mark.parametrize("value", [-0.0, 1, 0.5, np.float32(0)])
def test_other_values_are_assigned_by_numpy(monkeypatch, value):
    calls = []
    monkeypatch.setattr(kernels, "zero_where", lambda a, m: calls.append(1) or False)
    g, mask = _masked((64, 100), np.float32)
    expected = g.copy()
    expected[mask] = value
    t = engine.from_numpy(g.copy())
    t[engine.from_numpy(mask)] = value
    assert calls == []
    np.testing.assert_array_equal(_bits(t.numpy()), _bits(expected))


def test_a_read_only_tensor_still_says_so():
    g, mask = _masked((64, 100), np.float32)
    g.flags.writeable = False
    t = engine.from_numpy(g)
    with pytest.raises(ValueError, match="read-only"):
        t[engine.from_numpy(mask)] = 0


# --------------------------------------------------------------------------- clamp(min=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (64, 100), (3, 5, 8)])
def test_relu_is_numpys_maximum_with_zero_bit_for_bit(dtype, shape):
    x = RNG.standard_normal(shape).astype(dtype)
    if x.size >= SPECIAL.size:
        x.reshape(-1)[: SPECIAL.size] = SPECIAL.astype(dtype)
    out = kernels.relu(x)
    expected = np.maximum(x, 0)
    assert np.asarray(out).dtype == dtype and np.shape(out) == shape
    np.testing.assert_array_equal(_bits(np.asarray(out)), _bits(np.asarray(expected)))


def test_relu_of_a_transposed_view_and_the_zeros_stay_zeros():
    x = RNG.standard_normal((100, 64)).astype(np.float32).T
    np.testing.assert_array_equal(kernels.relu(x), np.maximum(x, 0))
    for buffer in kernels._zero_buffers.values():
        assert not buffer.flags.writeable and not buffer.any()


@pytest.mark.parametrize("case", ["float16", "int32", "big-endian", "large and transposed"])
def test_relu_leaves_other_arrays_to_numpys_own_maximum(monkeypatch, case):
    monkeypatch.setattr(kernels, "CHUNK", 100)
    x = RNG.standard_normal(50).astype(np.float32)
    large = RNG.standard_normal((20, 30)).astype(np.float32).T
    x = {"float16": x.astype(np.float16), "int32": (x * 10).round().astype(np.int32),
         "big-endian": x.astype(">f4"), "large and transposed": large}[case]
    calls = []
    real = np.maximum
    monkeypatch.setattr(kernels.np, "maximum", lambda a, b, **kw: calls.append(np.ndim(b)) or real(a, b, **kw))
    out = kernels.relu(x)
    assert calls == [0]  # one call, against the number
    np.testing.assert_array_equal(_bits(out), _bits(np.maximum(x, 0)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_array_goes_through_relu_and_zero_where_in_slices_bit_for_bit(monkeypatch, dtype):
    monkeypatch.setattr(kernels, "CHUNK", 1000)
    monkeypatch.setattr(kernels, "ZERO_WHERE_FROM", 10)
    monkeypatch.setattr(kernels, "_zero_buffers", {})  # none kept yet
    monkeypatch.setattr(kernels, "_zero_views", {})
    x, mask = _masked((37, 101), dtype)  # 3737 elements: three whole slices and a part
    out = kernels.relu(x)
    np.testing.assert_array_equal(_bits(out), _bits(np.maximum(x, 0)))
    expected = x.copy()
    expected[mask] = 0
    assert kernels.zero_where(x, mask) is True
    np.testing.assert_array_equal(_bits(x), _bits(expected))
    assert max(b.size for b in kernels._zero_buffers.values()) <= 1000
    assert kernels.zero_where(x.T, mask.T) is False  # large and not C-contiguous: NumPy's assignment


def test_the_kernels_add_no_memory_in_proportion_to_the_array():
    import tracemalloc

    x, mask = _masked((1024, 512), np.float32)  # 2 MiB
    kernels.relu(x[:1])  # the kept buffer exists before the count begins
    tracemalloc.start()
    try:
        out = kernels.relu(x)
        assert kernels.zero_where(x, mask) is True
        clamp_grad = kernels.clamp_min_backward(x, x, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    results = out.nbytes + clamp_grad.nbytes + mask.nbytes  # the outputs, and the backward's own mask
    assert peak <= results + 2 * kernels.CHUNK * 8 + 65536, f"peak {peak:,} against results {results:,}"


def test_relu_keeps_a_bounded_number_of_views():
    for n in range(1, 100):
        kernels.relu(np.ones(n, np.float32))
    assert len(kernels._zero_views) <= 64


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("lo", [0, 0.0, -0.0, 0.5])
def test_clamp_min_goes_through_relu_only_for_a_plus_zero(monkeypatch, recorded, lo):
    calls = []
    real = kernels.relu
    monkeypatch.setattr(kernels, "relu", lambda x: calls.append(x.shape) or real(x))
    x = np.array([-0.0, 0.0, -1.0, 2.0, np.nan] * 20, np.float32)
    t = engine.from_numpy(x.copy()).requires_grad_(recorded)
    out = t.clamp(min=lo)
    assert calls == ([(100,)] if kernels.is_plus_zero(lo) else [])
    np.testing.assert_array_equal(_bits(out.detach().numpy()), _bits(np.maximum(x, lo)))


def test_nn_relu_goes_through_relu(monkeypatch):
    calls = []
    real = kernels.relu
    monkeypatch.setattr(kernels, "relu", lambda x: calls.append(x.shape) or real(x))
    x = engine.randn(8, 300, requires_grad=True)
    out = engine.nn.functional.relu(x)
    out.sum().backward()
    assert calls == [(8, 300)]
    np.testing.assert_array_equal(out.detach().numpy(), np.maximum(x.detach().numpy(), 0))
    np.testing.assert_array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(np.float32))


def _special_pair(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    x.reshape(-1)[: SPECIAL.size] = SPECIAL.astype(dtype)
    gy = RNG.standard_normal(shape).astype(dtype)
    gy.reshape(-1)[5:5 + SPECIAL.size] = SPECIAL.astype(dtype)  # special gradients where x is special, or not
    gy.reshape(-1)[-SPECIAL.size:] = SPECIAL.astype(dtype)
    x.reshape(-1)[-SPECIAL.size:] = -5.0  # under every mask: those special gradients give 0
    return gy, x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lo", [0, 0.0, -0.0, -0.5, 0.1])
def test_clamps_backward_is_where_the_mask_holds_the_gradient_else_zero_bit_for_bit(lo, dtype):
    """PyTorch's where(x >= lo, grad, 0): an infinite or NaN gradient under a false mask gives +0.0 (gy * mask
    gave NaN there), NaN in x is a false mask, and every passed gradient keeps its bits (NaN payload, -0.0)."""
    gy, x = _special_pair((64, 100), dtype)
    expected = np.where(x >= dtype(lo), gy, dtype(0))
    np.testing.assert_array_equal(_bits(kernels.clamp_min_backward(gy, x, lo)), _bits(expected))
    t = engine.from_numpy(x.copy()).requires_grad_()
    t.clamp(min=lo).backward(engine.from_numpy(gy))
    np.testing.assert_array_equal(_bits(t.grad.numpy()), _bits(expected))
    masked_inf = (x < lo) & np.isinf(gy)
    assert masked_inf.any() and (t.grad.numpy()[masked_inf] == 0).all()


@pytest.mark.parametrize("layout", ["C", "transposed", "strided", "broadcast", "mixed dtypes", "float16"])
def test_pass_where_is_where_for_every_layout_and_dtype(layout):
    gy, x = _special_pair((40, 30), np.float32)
    lo = 0.25
    if layout == "transposed":
        gy, x = gy.T, x.T
    elif layout == "strided":
        gy, x = gy[::2, ::3], x[1::2, ::3]
    elif layout == "broadcast":
        x = x[:1]
    elif layout == "mixed dtypes":
        x = x.astype(np.float64)
    elif layout == "float16":
        gy, x = gy.astype(np.float16), x.astype(np.float16)
    for strict in (False, True):
        keep = ~(x <= lo) if strict else (x >= lo)
        got = kernels.pass_where(gy, x, lo, strict)
        expected = np.where(keep, gy, gy.dtype.type(0))
        assert got.dtype == gy.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(_bits(got), _bits(expected))


def test_the_relus_backward_passes_the_gradient_where_its_output_is_positive():
    gy, x = _special_pair((64, 100), np.float32)
    t = engine.from_numpy(x.copy()).requires_grad_()
    engine.nn.functional.relu(t).backward(engine.from_numpy(gy))
    out = np.maximum(x, 0)  # zero where the output is <= 0; a NaN output passes the gradient (as PyTorch)
    np.testing.assert_array_equal(_bits(t.grad.numpy()), _bits(np.where(out <= 0, np.float32(0), gy)))


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference here")
@pytest.mark.parametrize("op", ["clamp", "relu", "clamp max", "clamp both"])
def test_masked_gradients_are_pytorchs_for_infinite_and_nan_gradients(op):
    import torch

    gy, x = _special_pair((8, 50), np.float64)
    mine = engine.from_numpy(x.copy()).requires_grad_()
    ref = torch.from_numpy(x.copy()).requires_grad_()
    fns = {"clamp": lambda t: t.clamp(min=0), "relu": lambda t: t.relu(), "clamp max": lambda t: t.clamp(max=0.5),
           "clamp both": lambda t: t.clamp(min=-0.5, max=0.5)}
    fns[op](mine).backward(engine.from_numpy(gy))
    fns[op](ref).backward(torch.from_numpy(gy))
    np.testing.assert_array_equal(mine.grad.numpy(), ref.grad.numpy())  # NaN where PyTorch has NaN, 0 where 0


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference here")
@pytest.mark.parametrize("mode", ["maximum", "minimum"])
def test_maximums_gradients_are_pytorchs_with_ties_nans_and_infinite_gradients(mode):
    """Ties share the gradient; a loser gets 0 even of an infinite gradient (grad * 0 gave NaN); where a NaN
    makes no comparison true, both inputs get the gradient, as in PyTorch."""
    import torch

    gy, a = _special_pair((8, 50), np.float64)
    b = RNG.standard_normal((8, 50))
    b.reshape(-1)[::7] = a.reshape(-1)[::7]  # ties, NaN against NaN and inf against inf among them
    mine = [engine.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
    ref = [torch.from_numpy(v.copy()).requires_grad_() for v in (a, b)]
    getattr(mine[0], mode)(mine[1]).backward(engine.from_numpy(gy))
    getattr(ref[0], mode)(ref[1]).backward(torch.from_numpy(gy))
    for m, r in zip(mine, ref):
        np.testing.assert_array_equal(m.grad.numpy(), r.grad.numpy())
    assert mine[0].grad.dtype == engine.float64
