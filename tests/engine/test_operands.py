"""What a Tensor's operators take, as PyTorch's: a Tensor, a number, a NumPy scalar or array. A list, a tuple, a
string or None is refused with Python's TypeError (it was broadcast as an array, or failed inside NumPy with a
UFuncTypeError), ``x == None`` is False, and the method forms (``x.mul([1])``) name the argument. A subtraction with
a bool operand and a negation of a bool tensor are refused in PyTorch's words (``1 - mask`` gave integers), and
``2 / x`` is PyTorch's ``x.reciprocal() * 2``: its graph and its values.

The expected words are torch 2.13's; the torch-marked tests run each expression in torch too and compare.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine


def _error(expression: str, m):
    x, b = m.tensor([1.0, 2.0]), m.tensor([True, False])
    try:
        out = eval(expression, {"x": x, "b": b, "m": m, "np": np})  # noqa: S307 - the table's own expressions
    except Exception as e:  # noqa: BLE001 - the type and words are what is compared
        return type(e).__name__, str(e)
    return ("value", out) if isinstance(out, bool) else ("value", str(out.dtype).split(".")[-1])


MASK = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use "
        "the `~` or `logical_not()` operator instead.")
TWO_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.")
REFUSED = [  # (expression, the error's type and words)
    ("x + [1.0, 2.0]", "TypeError", "unsupported operand type(s) for +: 'Tensor' and 'list'"),
    ("[1.0, 2.0] + x", "TypeError", 'can only concatenate list (not "Tensor") to list'),
    ("x - (1.0, 2.0)", "TypeError", "unsupported operand type(s) for -: 'Tensor' and 'tuple'"),
    ("(1.0, 2.0) - x", "TypeError", "unsupported operand type(s) for -: 'tuple' and 'Tensor'"),
    ("x * [1.0]", "TypeError", "only integer tensors of a single element can be converted to an index"),
    ("x / 'a'", "TypeError", "unsupported operand type(s) for /: 'Tensor' and 'str'"),
    ("'a' / x", "TypeError", "unsupported operand type(s) for /: 'str' and 'Tensor'"),
    ("None - x", "TypeError", "unsupported operand type(s) for -: 'NoneType' and 'Tensor'"),
    ("x ** [1]", "TypeError", "unsupported operand type(s) for ** or pow(): 'Tensor' and 'list'"),
    ("[1] ** x", "TypeError", "unsupported operand type(s) for ** or pow(): 'list' and 'Tensor'"),
    ("x % None", "TypeError", "unsupported operand type(s) for %: 'Tensor' and 'NoneType'"),
    ("x @ [1.0, 2.0]", "TypeError", "unsupported operand type(s) for @: 'Tensor' and 'list'"),
    ("[1.0, 2.0] @ x", "TypeError", "unsupported operand type(s) for @: 'list' and 'Tensor'"),
    ("x < None", "TypeError", "'<' not supported between instances of 'Tensor' and 'NoneType'"),
    ("'a' >= x", "TypeError", "'>=' not supported between instances of 'str' and 'Tensor'"),
    ("x.add('a')", "TypeError", "add(): argument 'other' (position 1) must be Tensor, not str"),
    ("x.sub([1.0])", "TypeError", "sub(): argument 'other' (position 1) must be Tensor, not list"),
    ("x.mul([1.0])", "TypeError", "mul(): argument 'other' (position 1) must be Tensor, not list"),
    ("x.div(None)", "TypeError", "div(): argument 'other' (position 1) must be Tensor, not NoneType"),
    ("x.matmul([1.0, 2.0])", "TypeError", "matmul(): argument 'other' (position 1) must be Tensor, not list"),
    ("b - b", "RuntimeError", TWO_BOOLS), ("b - True", "RuntimeError", TWO_BOOLS),
    ("1 - b", "RuntimeError", MASK), ("x - b", "RuntimeError", MASK), ("x - True", "RuntimeError", MASK),
    ("m.sub(x, m.tensor(True))", "RuntimeError", MASK), ("m.sub(x, True, alpha=2)", "RuntimeError", MASK),
    ("x.sub_(True)", "RuntimeError", MASK),
    ("x.add_([1.0])", "TypeError", "add_(): argument 'other' (position 1) must be Tensor, not list"),
    ("x.mul_(None)", "TypeError", "mul_(): argument 'other' (position 1) must be Tensor, not NoneType"),
    ("x.div_('a')", "TypeError", "div_(): argument 'other' (position 1) must be Tensor, not str"),
    ("-b", "RuntimeError", "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead."),
]
TAKEN = [  # (expression, the result: a Python bool, or the result's dtype)
    ("x == None", False), ("x != None", True), ("x == 'a'", False), ("x == [1.0, 2.0]", False),
    ("x + np.float32(2)", "float32"), ("x * np.int64(2)", "float32"), ("x - np.bool_(True)", "float32"),
    ("x - 1", "float32"), ("b + b", "bool"), ("b * True", "bool"), ("~b", "bool"), ("2 / x", "float32"),
    ("x / np.float64(2)", "float32"), ("x ** np.float32(2)", "float32"),
]


@pytest.mark.parametrize(("expression", "kind", "words"), REFUSED, ids=[e for e, _, _ in REFUSED])
def test_what_is_no_operand_is_refused_in_pytorchs_words(expression, kind, words):
    assert _error(expression, engine) == (kind, words)


@pytest.mark.parametrize(("expression", "result"), TAKEN, ids=[e for e, _ in TAKEN])
def test_numbers_and_numpy_operands_are_taken(expression, result):
    assert _error(expression, engine) == ("value", result)


@pytest.mark.torch
@pytest.mark.parametrize("expression", [e for e, _, _ in REFUSED] + [e for e, _ in TAKEN])
def test_the_operands_are_torchs(expression):
    torch = pytest.importorskip("torch")
    assert _error(expression, engine) == _error(expression, torch)


def test_a_number_divided_by_a_tensor_is_the_reciprocal_times_the_number():
    rs = np.random.default_rng(2)
    data = rs.uniform(0.1, 10.0, 1000).astype(np.float32)
    want = np.float32(1) / data * np.float32(3)  # PyTorch's __rtruediv__: reciprocal, then the product
    assert (want != np.float32(3) / data).any()  # (so the test tells the two apart)
    np.testing.assert_array_equal((3 / engine.tensor(data)).numpy(), want)
    x = engine.tensor(data[:2], requires_grad=True)
    y = 3 / x
    assert y.grad_fn.name() == "MulBackward0" and y.grad_fn.next_functions[0][0].name() == "ReciprocalBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -3 / data[:2] ** 2, rtol=1e-6)


@pytest.mark.torch
def test_a_number_divided_by_a_tensor_has_torchs_bits():
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(3).uniform(-10.0, 10.0, 1000)
    for dtype in (np.float32, np.float64):
        np.testing.assert_array_equal((3 / engine.tensor(data.astype(dtype))).numpy(),
                                      (3 / torch.tensor(data.astype(dtype))).numpy())


def test_rounded_division_is_one_node_with_zero_gradients():
    a = engine.tensor([1.0, -1.0, 5.5], dtype=engine.float64, requires_grad=True)
    b = engine.tensor([0.1, 0.1, -2.0], dtype=engine.float64, requires_grad=True)
    floor = a.div(b, rounding_mode="floor")
    assert floor.tolist() == [9.0, -10.0, -3.0]  # Python's 1.0 // 0.1 is 9 (floor(1.0 / 0.1) is 10)
    assert a.div(b, rounding_mode="trunc").tolist() == [10.0, -10.0, -2.0]
    assert floor.grad_fn.name() == "DivBackward2"
    floor.sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0] and b.grad.tolist() == [0.0, 0.0, 0.0]


def test_floor_division_of_what_requires_grad_has_no_derivative():
    a = engine.tensor([1.5, -2.5], requires_grad=True)
    q = a // 2
    assert q.requires_grad and q.tolist() == [0.0, -2.0]
    assert q.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::floor_divide is not implemented$"):
        q.sum().backward()
    with engine.no_grad():
        assert not (a // 2).requires_grad
    assert not (engine.tensor([7, -7]) // 2).requires_grad
