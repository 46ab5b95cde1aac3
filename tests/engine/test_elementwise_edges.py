"""Elementwise ops and dtype= reductions at their edges, as PyTorch 2.13 answers them: ``i.sum(dtype=int32)`` is
int32 and ``prod``/``cumsum``/``cumprod`` keep an asked integer dtype (NumPy widened them to int64); a float
remainder that is zero keeps the dividend's sign (``-2.5 % 2.5`` is -0.0, NumPy's 0.0); an integer divided by a
bool zero refuses; shapes that do not broadcast get PyTorch's message from ``//``, ``%``, ``**``, comparisons,
bitwise ops, ``minimum`` and ``isclose`` (NumPy's ValueError came through), before a division by zero is looked
for; a float ``alpha`` for integers, ``isclose`` of two dtypes, a float bound clamped into an integer tensor in
place, ``~`` of a float and ``abs`` of a bool refuse; "not implemented for" errors are NotImplementedError (a
RuntimeError). The answers were printed by torch 2.13.0, and are held to the torch installed where there is one."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import HAVE_TORCH, table_tests

SIZES = "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 0"

# ``f``: [-2.5, -1, 0, 1.5, 3]; ``i``: [-7, -2, 0, 3, 8]; ``u``: uint8 [0, 1, 200, 255]; ``b``: [T, F, T, F, T];
# ``k``: int8 [[100, 100], [100, 100]]; ``n``: [3, NaN, 1, NaN]
CASES = [
    ("k.sum(dtype=engine.int32)", ((), "int32", [400])),
    ("k.sum(dtype=engine.int8)", ((), "int8", [-112])),
    ("k.sum(0, dtype=engine.int16)", ((2,), "int16", [200, 200])),
    ("k.sum()", ((), "int64", [400])),
    ("b.sum(0)", ((), "int64", [3])),
    ("k.prod(dtype=engine.int8)", ((), "int8", [0])),
    ("k.prod(0, dtype=engine.int16)", ((2,), "int16", [10000, 10000])),
    ("k.prod(0)", ((2,), "int64", [10000, 10000])),
    ("k.int().prod()", ((), "int64", [100000000])),
    ("k.cumsum(0, dtype=engine.int8)", ((2, 2), "int8", [100, 100, -56, -56])),
    ("k.cumsum(0)", ((2, 2), "int64", [100, 100, 200, 200])),
    ("k.cumprod(1, dtype=engine.int16)", ((2, 2), "int16", [100, 10000, 100, 10000])),
    ("i // b", ("RuntimeError", "ZeroDivisionError")),
    ("i % b", ("RuntimeError", "ZeroDivisionError")),
    ("2 // b", ("RuntimeError", "ZeroDivisionError")),
    ("True // b", ("NotImplementedError", "\"div_floor_cpu\" not implemented for 'Bool'")),
    ("f // b", ((5,), "float32", [-3.0, -np.inf, 0.0, np.inf, 3.0])),
    ("u // i", ("RuntimeError", SIZES)),
    ("u // f", ("RuntimeError", SIZES)),
    ("u % i", ("RuntimeError", SIZES)),
    ("u % f", ("RuntimeError", SIZES)),
    ("u ** f", ("RuntimeError", SIZES)),
    ("u ** i", ("RuntimeError", SIZES)),
    ("u == f", ("RuntimeError", SIZES)),
    ("u < i", ("RuntimeError", SIZES)),
    ("u >= b", ("RuntimeError", SIZES)),
    ("u != f", ("RuntimeError", SIZES)),
    ("u & i", ("RuntimeError", SIZES)),
    ("u & f", ("RuntimeError", SIZES)),
    ("u << b", ("RuntimeError", SIZES)),
    ("engine.minimum(u, i)", ("RuntimeError", SIZES)),
    ("engine.maximum(u, f)", ("RuntimeError", SIZES)),
    ("u.float().isclose(f)", ("RuntimeError", SIZES)),
    ("f & 3", ("NotImplementedError", "\"bitwise_and_cpu\" not implemented for 'Float'")),
    ("f << i", ("NotImplementedError", "\"lshift_cpu\" not implemented for 'Float'")),
    ("f.bitwise_not()", ("NotImplementedError", "\"bitwise_not_cpu\" not implemented for 'Float'")),
    ("~f", ("TypeError", "~ (operator.invert) is only implemented on integer and Boolean-type tensors")),
    ("~b", ((5,), "bool", [False, True, False, True, False])),
    ("b.abs()", ("NotImplementedError", "\"abs_cpu\" not implemented for 'Bool'")),
    ("i.add(2, alpha=1.5)", ("RuntimeError", "For integral input tensors, argument alpha must not be a floating "
                                             "point number.")),
    ("i.sub(i, alpha=0.5)", ("RuntimeError", "For integral input tensors, argument alpha must not be a floating "
                                             "point number.")),
    ("i.add(f, alpha=1.5)", ((5,), "float32", [-10.75, -3.5, 0.0, 5.25, 12.5])),
    ("i.add(2.5, alpha=2)", ((5,), "float32", [-2.0, 3.0, 5.0, 8.0, 13.0])),
    ("i.add(i, alpha=2)", ((5,), "int64", [-21, -6, 0, 9, 24])),
    ("i.isclose(f)", ("RuntimeError", "Long did not match Float")),
    ("f.isclose(f.double())", ("RuntimeError", "Float did not match Double")),
    ("i.allclose(i.int())", ("RuntimeError", "Long did not match Int")),
    ("f.isclose(f + 1e-6)", ((5,), "bool", [True, True, False, True, True])),  # (0 is not within 1e-8 of 1e-6)
    ("i.clone().clamp_(0.5)", ("RuntimeError", "result type Float can't be cast to the desired output type long int")),
    ("i.clone().clamp_(0, 1)", ((5,), "int64", [0, 0, 0, 1, 1])),
    ("i.clamp(0.5)", ((5,), "float32", [0.5, 0.5, 0.5, 3.0, 8.0])),
    ("f % -1.5", ((5,), "float32", [-1.0, -1.0, 0.0, 0.0, 0.0])),
    ("n.sign()", ((4,), "float32", [1.0, 0.0, 1.0, 0.0])),  # (PyTorch's (0 < x) - (x < 0): 0 for a NaN)
    ("n.sgn()", ((4,), "float32", [1.0, 0.0, 1.0, 0.0])),
    ("n.unique()", ((4,), "float32", [1.0, 3.0, np.nan, np.nan])),  # (each NaN its own value: NaN != NaN)
    ("n.unique(return_counts=True)[1]", ((4,), "int64", [1, 1, 1, 1])),
    ("n.unique(return_inverse=True)[1]", ((4,), "int64", [1, 2, 0, 3])),
    ("n.histc(3)", ("RuntimeError", "torch.histc: range of [")),
    ("engine.where(i, f, f)", ("RuntimeError", "where expected condition to be a boolean tensor, but got a tensor "
                                               "with dtype Long")),
    ("f.where(b.int(), 0.0)", ("RuntimeError", "where expected condition to be a boolean tensor, but got a tensor "
                                               "with dtype Int")),
    ("engine.where(b, i, 2.5)", ((5,), "float32", [-7.0, 2.5, 0.0, 2.5, 8.0])),
    ("i % -3", ((5,), "int64", [-1, -2, 0, 0, -1])),
]


def _env(lib):
    return {"engine": lib, "np": np, "f": lib.tensor([-2.5, -1.0, 0.0, 1.5, 3.0]), "i": lib.tensor([-7, -2, 0, 3, 8]),
            "u": lib.tensor([0, 1, 200, 255], dtype=lib.uint8), "b": lib.tensor([True, False, True, False, True]),
            "k": lib.tensor([[100, 100], [100, 100]], dtype=lib.int8), "n": lib.tensor([3.0, np.nan, 1.0, np.nan])}


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)


# a % b where the remainder is zero: PyTorch keeps fmod's zero (the dividend's sign); the signs printed by torch
SIGNED_ZEROS = [
    ("f % 2.5", [True, False, False, False, False]),  # -2.5 % 2.5 = -0.0
    ("f % -1.5", [False, False, False, False, False]),  # 0 % -1.5 = 0.0 (NumPy: -0.0), 1.5 % -1.5 = 0.0, ...
    ("i.double() % 2", [False, True, False, False, False]),  # -2 % 2 = -0.0
    ("2.5 % f", [False, False, False, False, False]),
    ("f.remainder(f)", [True, True, False, False, False]),
    ("engine.remainder(f, -1.0)", [False, True, False, False, False]),  # -1 % -1 = -0.0, 3 % -1 = 0.0
]


@pytest.mark.parametrize(("expr", "negative"), SIGNED_ZEROS, ids=[c[0] for c in SIGNED_ZEROS])
def test_a_zero_remainder_keeps_the_dividends_sign(expr, negative):
    out = eval(expr, _env(engine))  # noqa: S307 - the table's own expressions
    data = out.numpy()
    zero = data == 0
    assert (np.signbit(data) & zero).tolist() == negative


@pytest.mark.parametrize(("expr", "negative"), SIGNED_ZEROS, ids=[c[0] for c in SIGNED_ZEROS])
def test_the_signed_zeros_are_pytorchs(expr, negative):
    torch = pytest.importorskip("torch")
    data = eval(expr, _env(torch)).numpy()  # noqa: S307
    assert (np.signbit(data) & (data == 0)).tolist() == negative


def test_not_implemented_for_a_dtype_is_still_a_runtime_error():
    """PyTorch's NotImplementedError is a RuntimeError: code that catches the latter still catches it."""
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        engine.ones(2) & 1


def test_a_float16_softmax_is_computed_in_float32_and_rounded_once():
    """As PyTorch's CPU kernel: in float16 throughout, the sum drifted (a last-place error in a tenth of the
    elements); the gradient likewise."""
    data = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float16)
    x = engine.tensor(data, requires_grad=True)
    y = x.softmax(1)
    wide = data.astype(np.float32)
    e = np.exp(wide - wide.max(1, keepdims=True))
    np.testing.assert_array_equal(y.detach().numpy(), (e / e.sum(1, keepdims=True)).astype(np.float16))
    g = np.random.default_rng(1).standard_normal((4, 50)).astype(np.float16)
    (y * engine.tensor(g)).sum().backward()
    s = y.detach().numpy().astype(np.float32)
    want = s * (g.astype(np.float32) - (g.astype(np.float32) * s).sum(1, keepdims=True))
    np.testing.assert_array_equal(x.grad.numpy(), want.astype(np.float16))
    torch = pytest.importorskip("torch")
    tx = torch.tensor(data, requires_grad=True)
    ty = tx.softmax(1)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


IN_PLACE_SHAPES = ["si += f", "si *= f", "si /= i", "si //= b", "si %= b", "si **= f", "si += i", "si &= i"]


@pytest.mark.parametrize("code", IN_PLACE_SHAPES)
def test_an_in_place_op_checks_the_shape_first(code):
    """A 0-d integer tensor with a vector: PyTorch's shape refusal comes first (the engine said the float result
    could not be cast, or that the bool divisor was zero)."""
    for lib in (engine, *([__import__("torch")] if HAVE_TORCH else [])):
        env = {"si": lib.tensor(3), "f": lib.tensor([1.5, -2.0]), "i": lib.tensor([3, -4]),
               "b": lib.tensor([True, False])}
        with pytest.raises(RuntimeError, match=r"^output with shape \[\] doesn't match the broadcast shape \[2\]$"):
            exec(code, env)  # noqa: S102 - the table's own statements
