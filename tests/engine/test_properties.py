"""Property-based tests (hypothesis) of the ops against NumPy float64: broadcast shapes, dtypes, axes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

settings.register_profile("engine", max_examples=60, deadline=None)
settings.load_profile("engine")

floats = st.floats(-10, 10, allow_nan=False, width=64)
FLOAT_DTYPES = [np.float32, np.float64]


@st.composite
def broadcast_pair(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    a = draw(hnp.arrays(np.float64, shapes.input_shapes[0], elements=floats))
    b = draw(hnp.arrays(np.float64, shapes.input_shapes[1], elements=floats))
    return a, b


@given(broadcast_pair(), st.sampled_from(["add", "sub", "mul"]))
def test_binary_broadcast_values_and_grads(pair, op):
    a, b = pair
    ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    ta = engine.tensor(a, requires_grad=True)
    tb = engine.tensor(b, requires_grad=True)
    out = {"add": ta + tb, "sub": ta - tb, "mul": ta * tb}[op]
    np.testing.assert_allclose(out.detach().numpy(), ref(a, b), rtol=1e-12)
    out.sum().backward()
    # d(sum)/da: ones (or b) summed back over the broadcast axes, which must give a's shape
    ga = {"add": np.ones_like(ref(a, b)), "sub": np.ones_like(ref(a, b)),
          "mul": np.broadcast_to(b, ref(a, b).shape)}[op]
    expected_a = _reduce_to(ga, a.shape)
    assert ta.grad.shape == a.shape and tb.grad.shape == b.shape
    np.testing.assert_allclose(ta.grad.numpy(), expected_a, rtol=1e-12, atol=1e-12)


def _reduce_to(g, shape):
    g = np.asarray(g, dtype=np.float64)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=floats),
       st.data())
def test_reductions_along_any_axis(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    keepdim = data.draw(st.booleans())
    t = engine.tensor(a, requires_grad=True)
    np.testing.assert_allclose(t.sum(axis, keepdim).detach().numpy(), a.sum(axis, keepdims=keepdim), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(t.mean(axis, keepdim).detach().numpy(), a.mean(axis, keepdims=keepdim),
                               rtol=1e-12, atol=1e-12)
    values, indices = t.max(axis, keepdim)
    np.testing.assert_array_equal(values.detach().numpy(), a.max(axis, keepdims=keepdim))
    np.testing.assert_array_equal(np.take_along_axis(a, np.expand_dims(indices.numpy(), axis) if not keepdim
                                                     else indices.numpy(), axis).squeeze(axis)
                                  if not keepdim else np.take_along_axis(a, indices.numpy(), axis),
                                  a.max(axis, keepdims=keepdim))
    t.mean(axis).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.full(a.shape, 1.0 / a.shape[axis]), rtol=1e-12)


@given(st.sampled_from(FLOAT_DTYPES), hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), st.integers(1, 6))
def test_matmul_dtypes(dtype, shape, k):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal((shape[1], k)).astype(dtype)
    out = engine.from_numpy(a).mm(engine.from_numpy(b))
    assert out.dtype.np == np.dtype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b.astype(np.float64), rtol=tol, atol=tol)


@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5), elements=floats),
       st.floats(-5, 0), st.floats(0, 5))
def test_clamp_matches_clip_and_mask(a, lo, hi):
    t = engine.tensor(a, requires_grad=True)
    out = t.clamp(lo, hi)
    np.testing.assert_array_equal(out.detach().numpy(), np.clip(a, lo, hi))
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), ((a >= lo) & (a <= hi)).astype(np.float64))


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-10, 10, width=32)))
def test_float32_stays_float32_through_the_tutorial_ops(a):
    t = engine.from_numpy(a)
    for out in (2.0 * t, t - 1, t.pow(2), t.clamp(min=0), (t * t).sum(), t / 3.0):
        assert out.dtype == engine.float32
