"""PyTorch's type promotion, not NumPy's: categories bool < integer < floating, and 0-d tensors and Python scalars
never widen a dimensioned tensor of the same or a higher category. The expected dtypes are PyTorch 2.13's answers,
kept here; where PyTorch is importable the table is checked against it too."""

from __future__ import annotations

import operator

import pytest

import engine

SPECS = {"f32": ("float32", (2,)), "f64": ("float64", (2,)), "f16": ("float16", (2,)), "i64": ("int64", (2,)),
         "i32": ("int32", (2,)), "u8": ("uint8", (2,)), "b": ("bool", (2,)), "f64_0d": ("float64", ()),
         "f32_0d": ("float32", ()), "i64_0d": ("int64", ()), "i32_0d": ("int32", ()), "b_0d": ("bool", ())}
SCALARS = {"2.5": 2.5, "2": 2, "True": True}
OPS = {"add": operator.add, "mul": operator.mul, "sub": operator.sub, "truediv": operator.truediv,
       "where": lambda a, b: a.where(a == a, b)}  # (NumPy's where widened a float32 by a 0-d float64)

# (left, right, op, PyTorch 2.13's result dtype)
TABLE = [
    ("f32", "i64", "add", "float32"), ("f32", "i64", "mul", "float32"), ("f32", "i64", "truediv", "float32"),
    ("f32", "f64_0d", "add", "float32"), ("f32", "f64_0d", "mul", "float32"), ("f32", "f64_0d", "truediv", "float32"),
    ("i64", "f64_0d", "add", "float64"), ("i64", "f64_0d", "truediv", "float64"),
    ("i32", "i64", "add", "int64"), ("i32", "i64", "truediv", "float32"),
    ("i32", "i64_0d", "add", "int32"), ("i32", "i64_0d", "mul", "int32"), ("i32", "i64_0d", "truediv", "float32"),
    ("u8", "i64_0d", "add", "uint8"), ("u8", "i64_0d", "truediv", "float32"),
    ("b", "i32", "add", "int32"), ("b", "i32", "truediv", "float32"),
    ("f16", "i64", "add", "float16"), ("f16", "f64_0d", "mul", "float16"), ("f16", "i64", "truediv", "float16"),
    ("f32", "f64", "add", "float64"), ("f32", "f64", "truediv", "float64"),
    ("i64", "i32_0d", "add", "int64"), ("i64", "i32_0d", "truediv", "float32"),
    ("b", "b_0d", "add", "bool"), ("b", "b_0d", "mul", "bool"), ("b", "b_0d", "truediv", "float32"),
    ("f32_0d", "f64_0d", "add", "float64"), ("i64_0d", "f32_0d", "mul", "float32"),
    ("b_0d", "i64", "add", "int64"), ("b_0d", "i64", "truediv", "float32"),
    ("f32", "2.5", "mul", "float32"), ("f32", "2", "truediv", "float32"), ("f32", "True", "mul", "float32"),
    ("i64", "2.5", "mul", "float32"), ("i64", "2.5", "sub", "float32"), ("i64", "2", "mul", "int64"),
    ("i64", "2", "truediv", "float32"), ("i64", "True", "mul", "int64"),
    ("i32", "2.5", "mul", "float32"), ("i32", "2", "sub", "int32"), ("i32", "2", "truediv", "float32"),
    ("b", "2.5", "mul", "float32"), ("b", "2", "mul", "int64"), ("b", "True", "mul", "bool"),
    ("b", "True", "truediv", "float32"),
    ("f16", "2.5", "mul", "float16"), ("f16", "2", "truediv", "float16"),
    ("i64_0d", "2.5", "mul", "float32"), ("i64_0d", "2", "sub", "int64"), ("i64_0d", "True", "truediv", "float32"),
    ("f32", "f64_0d", "where", "float32"), ("f64_0d", "f32", "where", "float32"), ("i64", "f32_0d", "where", "float32"),
    ("i32", "i64_0d", "where", "int32"), ("f32", "f64", "where", "float64"), ("b", "i64", "where", "int64"),
]


def _operand(lib, name):
    if name in SCALARS:
        return SCALARS[name]
    dtype, shape = SPECS[name]
    return lib.ones(shape, dtype=getattr(lib, dtype))


def _ids(row):
    return "-".join(row[:3])


@pytest.mark.parametrize("row", TABLE, ids=_ids)
def test_engine_follows_pytorchs_promotion(row, device):
    left, right, op, expected = row
    a = _operand(engine, left)
    b = _operand(engine, right)
    a, b = (x.to(device) if isinstance(x, engine.Tensor) else x for x in (a, b))
    assert str(OPS[op](a, b).dtype) == f"engine.{expected}"
    if right in SCALARS:  # the scalar on the left gives the same dtype
        assert str(OPS[op](b, a).dtype) == f"engine.{expected}"


@pytest.mark.torch
@pytest.mark.parametrize("row", TABLE, ids=_ids)
def test_the_kept_table_is_pytorchs(row):
    torch = pytest.importorskip("torch")
    left, right, op, expected = row
    assert str(OPS[op](_operand(torch, left), _operand(torch, right)).dtype) == f"torch.{expected}"


def test_promotion_keeps_the_values_and_the_gradients_dtypes(device):
    w = engine.tensor([1.5, -2.0], device=device, requires_grad=True)  # float32
    scale = engine.tensor(2.0, dtype=engine.float64, device=device, requires_grad=True)  # 0-d float64
    idx = engine.tensor([3, 4], device=device)  # int64
    y = w * scale + idx / 2
    assert y.dtype == engine.float32 and y.tolist() == [4.5, -2.0]
    y.sum().backward()
    assert w.grad.dtype == engine.float32 and w.grad.tolist() == [2.0, 2.0]
    assert scale.grad.dtype == engine.float64 and scale.grad.item() == -0.5


@pytest.mark.parametrize("call", [lambda a, b: a.mm(b), lambda a, b: a @ b, lambda a, b: engine.mm(a, b)])
def test_matrix_products_of_two_dtypes_raise_pytorchs_error(call, device):
    a = engine.ones(2, 3, device=device)
    b = engine.ones(3, 2, dtype=engine.float64, device=device)
    with pytest.raises(RuntimeError, match=r"expected m1 and m2 to have the same dtype, but got: float != double"):
        call(a, b)
    with pytest.raises(RuntimeError, match="same dtype, but got: float != double"):
        call(a.requires_grad_(), b)
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but found Float and "
                                           "Double"):
        engine.ones(3, device=device) @ engine.ones(3, dtype=engine.float64, device=device)


def test_linear_of_another_dtype_raises():
    layer = engine.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="same dtype"):
        layer(engine.ones(4, 3, dtype=engine.float64))


# ------------------------------------------------------------------ integer and bool tensors have no gradient
# (each ran before this table was kept: ``x.long()`` of a tensor that requires grad required grad itself, with a
# ToCopyBackward0 node, so ``x.long().float() * x`` sent a gradient through the cast; ``n[0] = x[0]`` made an int64
# tensor require grad; ``int64.masked_fill(m, 1.5)`` gave float32; ``n += 0.5`` and ``n /= 2`` gave NumPy's
# UFuncTypeError, and with a grad operand wrote a float result into n and made it require grad)
INTEGER_ROWS = {
    # name -> (program over a float32 leaf x = [1.5, -2.5] that requires grad, what PyTorch 2.13 gives)
    "long_is_no_leaf_of_the_graph": (lambda lib, x: x.long().requires_grad, False),
    "to_int32_too": (lambda lib, x: (x.to(lib.int32).requires_grad, x.to("cpu", lib.int32).grad_fn), (False, None)),
    "type_bool_too": (lambda lib, x: x.type(lib.bool).requires_grad, False),
    "an_int_result_is_no_leaf": (lambda lib, x: (x.int() * 2).requires_grad, False),
    "no_gradient_through_a_cast": (lambda lib, x: lib.autograd.grad((x.long().float() * x).sum(), x)[0].tolist(),
                                   [1.0, -2.0]),
    "setitem_into_int": (lambda lib, x: _set_first(lib.zeros(2, dtype=lib.int64), x), (False, [1, 0])),
    "masked_fill_keeps_int": (lambda lib, x: _dtype_values(lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]),
                                                                                           1.5)), ("int64", [1, 2])),
    "masked_fill_keeps_bool": (lambda lib, x: _dtype_values(lib.tensor([True, True]).masked_fill(
        lib.tensor([True, False]), 0)), ("bool", [False, True])),
    "masked_fill_grad_value_into_int": (lambda lib, x: lib.tensor([1, 2]).masked_fill(
        lib.tensor([True, False]), x[0]).requires_grad, "Autograd not support dtype: Long"),
    "masked_fill_vector_value": (lambda lib, x: lib.ones(2).masked_fill(lib.tensor([True, False]), x),
                                 "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
                                 "dimension(s)."),
    "int_iadd_float": (lambda lib, x: lib.zeros(2, dtype=lib.int64).__iadd__(x),
                       "result type Float can't be cast to the desired output type Long"),
    "int_iadd_float_no_grad": (lambda lib, x: lib.zeros(2, dtype=lib.int64).__iadd__(x.detach()),
                               "result type Float can't be cast to the desired output type Long"),
    "int_imul_python_float": (lambda lib, x: lib.ones(2, dtype=lib.int32).__imul__(0.5),
                              "result type Float can't be cast to the desired output type Int"),
    "int_true_divide_in_place": (lambda lib, x: lib.ones(2, dtype=lib.int64).div_(2),
                                 "result type Float can't be cast to the desired output type Long"),
    "bool_iadd_int": (lambda lib, x: lib.tensor([True]).__iadd__(lib.tensor([1])),
                      "result type Long can't be cast to the desired output type Bool"),
    "int_iadd_int_is_fine": (lambda lib, x: lib.tensor([1, 2]).__iadd__(lib.tensor([3, 4])).tolist(), [4, 6]),
    "float32_iadd_float64_stays": (lambda lib, x: str(lib.ones(2).__iadd__(x.detach().double()).dtype)[-7:],
                                   "float32"),
}


def _set_first(n, x):
    n[0] = x[0]
    return n.requires_grad, n.tolist()


def _dtype_values(t):
    return str(t.dtype).rsplit(".", 1)[1], t.tolist()


def _integer_row(lib, name):
    x = lib.tensor([1.5, -2.5], requires_grad=True)
    try:
        return INTEGER_ROWS[name][0](lib, x)
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("name", sorted(INTEGER_ROWS))
def test_integer_and_bool_tensors_have_no_gradient(name):
    assert _integer_row(engine, name) == INTEGER_ROWS[name][1]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(INTEGER_ROWS))
def test_the_integer_rows_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    assert _integer_row(torch, name) == INTEGER_ROWS[name][1]
