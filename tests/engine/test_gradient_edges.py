"""Gradients at the edges, against PyTorch: a clamp whose bounds are tensors (their gradient), a power's gradient in
its exponent where the base is 0, logit's outside [0, 1]; and ~75 elementwise functions and ~25 binary ones swept
over values at their edges (0, -0.0, +-1, negative, large) with PyTorch's values and gradients. The sweep's first run
found the three fixed here (a clamp's tensor bounds got no gradient at all: silently). Left different, each
PyTorch's own slip: ``ldexp``'s gradient (PyTorch's is 0 where the exponent is negative: an integer 2 ** -2),
``hardsigmoid``'s in float64 (PyTorch's 1/6 is float32's), digamma's gradient at its poles (PyTorch's is finite).
``copysign``'s gradient in its sign argument was None (PyTorch's is zeros, so a loss reached only through it could
not backward): zeros now, and in the sweep."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine


def _t(values, rg=True):
    return engine.tensor(values, dtype=engine.float64, requires_grad=rg)


def test_a_clamp_s_tensor_bounds_get_their_gradient():
    x, b = _t([0.0, 1.0, 2.0, 0.5]), _t([0.5, 0.5, 0.5, 0.5])
    out = x.clamp(b - 0.2, b + 0.2)
    (out * engine.tensor([1.0, 2.0, 3.0, 4.0], dtype=engine.float64)).sum().backward()
    assert out.tolist() == pytest.approx([0.3, 0.7, 0.7, 0.5])
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 4.0] and b.grad.tolist() == [1.0, 2.0, 3.0, 0.0]
    assert out.grad_fn.name() == "ClampBackward0"
    lo = _t(0.5)  # a 0-d bound: its gradient summed over where it bit
    _t([0.0, 1.0, 0.2], rg=False).clamp(min=lo).sum().backward()
    assert lo.grad.item() == 2.0
    h, hi = _t([0.0, 1.0, 2.0]) * 1, _t([1.5, 1.5, 1.5])
    h.clamp_(max=hi)  # in place too
    h.sum().backward()
    assert h.tolist() == [0.0, 1.0, 1.5] and hi.grad.tolist() == [0.0, 0.0, 1.0]
    n = engine.tensor([1, 5, 9])
    assert (n.clamp(engine.tensor([2, 2, 2]), engine.tensor(7)).tolist(), n.clamp(engine.tensor(2.5)).dtype) == (
        [2, 5, 7], engine.float32)


def test_a_power_s_gradient_in_its_exponent_where_the_base_is_0():
    a, b = _t([0.0, 2.0]), _t([0.5, 3.0])
    (a ** b).sum().backward()
    assert b.grad.tolist() == [0.0, pytest.approx(8 * math.log(2))]  # not 0 * log 0 = NaN
    e = _t([1.0, 2.0])
    g, = engine.autograd.grad((0 ** e).sum(), e, create_graph=True)
    assert g.tolist() == [0.0, 0.0]


def test_logit_s_gradient_is_nan_outside_its_domain():
    x = _t([-0.5, 0.0, 0.25, 1.0, 1.5])
    x.logit().sum().backward()
    g = x.grad.tolist()
    assert math.isnan(g[0]) and g[1] == math.inf and g[2] == pytest.approx(16 / 3) and g[3] == math.inf
    assert math.isnan(g[4])
    y = _t([0.05, 0.5, 0.95])
    y.logit(eps=0.1).sum().backward()  # clamped first: no gradient outside [eps, 1 - eps]
    assert y.grad.tolist() == [0.0, 4.0, 0.0]


UNARY = ["abs", "neg", "exp", "log", "sin", "cos", "tan", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "exp2",
         "expm1", "log1p", "log2", "log10", "reciprocal", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
         "atanh", "erf", "erfc", "erfinv", "lgamma", "floor", "ceil", "round", "trunc", "frac", "sign", "sgn",
         "square", "deg2rad", "rad2deg", "sinc", "logit", "nan_to_num", "positive", "fix", "angle"]
ACTIVATIONS = ["softplus", "silu", "mish", "gelu", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish",
               "softsign", "tanhshrink", "logsigmoid", "relu6", "softshrink", "hardshrink"]
BINARY = ["add", "sub", "mul", "div", "atan2", "hypot", "maximum", "minimum", "fmax", "fmin", "remainder", "fmod",
          "xlogy", "logaddexp", "logaddexp2", "float_power", "pow", "lerp", "dist", "where", "clamp",
          "copysign"]
VALUES = [np.array([-2.5, -0.7, -0.0, 0.0, 0.3, 0.5, 1.0, 2.0, 7.5, -1.0, 0.99, -0.99]).reshape(3, 4),
          np.random.default_rng(0).standard_normal((3, 4)) * 3, np.random.default_rng(1).uniform(0.01, 0.95, (3, 4))]


def _unary(L, name, x):
    F = L.nn.functional
    if name in ACTIVATIONS:
        return getattr(F, name)(x)
    return getattr(x, name)()


def _binary(L, name, a, b):
    calls = {"pow": lambda: a.abs() ** b, "lerp": lambda: L.lerp(a, b, 0.3), "dist": lambda: L.dist(a, b, 3),
             "where": lambda: L.where(a > b, a, b * 2), "clamp": lambda: a.clamp(b - 0.5, b + 0.5)}
    return calls[name]() if name in calls else getattr(L, name)(a, b)


def _run(L, program, *arrays):
    ts = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        out = program(L, *ts)
        w = L.tensor(np.cos(np.arange(out.numel()) + 0.3).reshape(tuple(out.shape)), dtype=L.float64)
        (out * w).sum().backward()
    return out.detach().numpy(), [None if t.grad is None else np.asarray((t.grad + 0).tolist()) for t in ts]


@pytest.mark.torch
@pytest.mark.parametrize("name", UNARY + ACTIVATIONS + BINARY)
def test_values_and_gradients_at_the_edges_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    for v in VALUES:
        args = (v,) if name not in BINARY else (v, np.roll(v, 1) * 0.7 + 0.1)
        program = (lambda L, *t: _binary(L, name, *t)) if name in BINARY else (lambda L, t: _unary(L, name, t))
        (theirs, their_grads), (ours, our_grads) = _run(torch, program, *args), _run(engine, program, *args)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, equal_nan=True)
        for g, h in zip(their_grads, our_grads):
            assert (g is None) == (h is None)
            if g is not None and name == "logit":  # at -0.0 PyTorch's sign of inf is its CPU's (scalar or vector
                minus_zero = (v == 0) & np.signbit(v)  # loop); ours is the limit from inside [0, 1], 1 / (+0.0),
                upstream = np.cos(np.arange(v.size) + 0.3).reshape(v.shape)  # times the gradient that arrives
                assert np.array_equal(h[minus_zero], np.sign(upstream[minus_zero]) * np.inf)
                g, h = np.where(minus_zero, 0.0, g), np.where(minus_zero, 0.0, h)
            if g is not None:
                np.testing.assert_allclose(h, g, rtol=1e-8, atol=1e-11, equal_nan=True)


def test_remainders_gradient_in_its_divisor_is_minus_the_floor_division():
    """PyTorch's remainder_backward: -grad * a.div(b, rounding_mode='floor'), Python's floor division (1.0 // 0.1 is
    9: floor(1.0 / 0.1) is 10, which the engine took); fmod's the truncated division. Recorded: DivBackward2."""
    a_vals, b_vals = [1.0, -7.5, 3.0, 0.3], [0.1, 2.0, -0.7, 0.1]
    a, b = _t(a_vals), _t(b_vals)
    engine.remainder(a, b).sum().backward()
    assert b.grad.tolist() == [-(x // y) for x, y in zip(a_vals, b_vals)] == [-9.0, 4.0, 5.0, -2.0]
    a, b = _t(a_vals), _t(b_vals)
    engine.fmod(a, b).sum().backward()
    assert b.grad.tolist() == [-math.trunc(x / y) for x, y in zip(a_vals, b_vals)]
    a, b = _t(a_vals), _t(b_vals)
    (gb,) = engine.autograd.grad(engine.remainder(a, b).sum(), b, create_graph=True)
    assert gb.grad_fn.name() == "MulBackward0" and gb.grad_fn.next_functions[1][0].name() == "DivBackward2"


# Gradients at a zero base or the origin, as torch 2.13 gives them (first and, where recorded, second): the engine
# gave NaN for pow(0) at 0 (0 * 0 ** -1), for x ** x at 0, and for atan2 at (0, 0) (0 / 0).
ZERO_POINTS = [
    ("x.pow(0)", [0.0, 0.0, 0.0], None),
    ("x ** x", [0.0, 1.0, float("nan")], [float("nan"), 2.0, float("nan")]),
    ("x.pow(engine.tensor([0.0, 2.0, 0.0], dtype=engine.float64))", [0.0, 2.0, 0.0], [float("nan"), 2.0, -0.0]),
    ("engine.atan2(x, x)", [0.0, 0.0, 0.0], [float("nan"), 0.0, 0.0]),
    ("engine.atan2(x, x * x)", [0.0, -0.5, -0.2], [float("nan"), 0.5, -0.16000000000000003]),
]


@pytest.mark.parametrize(("expr", "first", "second"), ZERO_POINTS, ids=[z[0] for z in ZERO_POINTS])
def test_gradients_at_a_zero_base_or_the_origin_are_pytorchs(expr, first, second):
    x = engine.tensor([0.0, 1.0, -2.0], dtype=engine.float64, requires_grad=True)
    (g,) = engine.autograd.grad(eval(expr).sum(), x, create_graph=True)  # noqa: S307 - the table's own
    np.testing.assert_array_equal(g.detach().numpy(), first)
    if second is None:  # (a zero exponent's gradient is PyTorch's zeros_like: nothing recorded behind it)
        assert g.grad_fn is None and not g.requires_grad
        return
    (gg,) = engine.autograd.grad(g.sum(), x)
    np.testing.assert_array_equal(gg.numpy(), second)


@pytest.mark.parametrize(("expr", "first", "second"), ZERO_POINTS, ids=[z[0] for z in ZERO_POINTS])
def test_the_zero_point_table_is_pytorchs(expr, first, second):
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(eval(expr, {"x": x, "engine": torch}).sum(), x, create_graph=True)  # noqa: S307
    np.testing.assert_array_equal(g.detach().numpy(), first)
    if second is not None:
        np.testing.assert_array_equal(torch.autograd.grad(g.sum(), x)[0].numpy(), second)
