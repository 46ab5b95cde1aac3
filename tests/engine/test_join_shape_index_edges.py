"""``cat``/``stack``, shape ops and indexing at their edges, as PyTorch 2.13 answers them: ``cat`` of an int32 and a
float32 tensor is float32 (NumPy's concatenate made it float64), a 1-D empty tensor is skipped beside others, and
the refusals are PyTorch's (NumPy's ``ValueError``/``AxisError`` leaked through); an integer mask for
``masked_fill`` is refused (it was read as a bool mask: an int 0/1 mask filled nothing); ``squeeze``, ``flatten``
and ``permute`` check their dimensions (``squeeze(5)`` and ``flatten(2, 1)`` did nothing); indexing errors say
"dimension" and "tensor", as PyTorch's. Expected answers printed by torch 2.13.0, and held to the torch installed
where there is one (but where the engine's words are its own, marked ``OWN``)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.helpers import table_tests

OWN = None  # the engine's message differs from PyTorch's on purpose (a clearer one); the type is PyTorch's

# ``x``: arange(24.) as 2x3x4, ``v``: arange(5.), ``e``: zeros(0, 3).
CASES = [
    ("engine.cat([x.int(), x]).dtype == engine.float32", ((), "bool", [True])),
    ("engine.cat([x.int(), x])", ((4, 3, 4), "float32", list(range(24)) * 2)),
    ("engine.cat([x.bool(), x.int()])", ((4, 3, 4), "int32", [0] + [1] * 23 + list(range(24)))),
    ("engine.stack([x.half(), x.double()])", ((2, 2, 3, 4), "float64", list(range(24)) * 2)),
    ("engine.stack([v.int(), v])", ((2, 5), "float32", [0, 1, 2, 3, 4] * 2)),
    ("engine.cat([x, engine.zeros(0)])", ((2, 3, 4), "float32", list(range(24)))),
    ("engine.cat([engine.zeros(0), v])", ((5,), "float32", [0, 1, 2, 3, 4])),
    ("engine.cat([x, x[:, :2]], 1)", ((2, 5, 4), "float32", list(range(12)) + list(range(8)) + list(range(12, 24))
                                      + list(range(12, 20)))),
    ("engine.cat([x, x[:, :2]], 0)", ("RuntimeError", "Sizes of tensors must match except in dimension 0. Expected "
                                                      "size 3 but got size 2 for tensor number 1 in the list.")),
    ("engine.cat([x, v])", ("RuntimeError", "Tensors must have same number of dimensions: got 3 and 1")),
    ("engine.cat([x, x], 3)", ("IndexError", "Dimension out of range (expected to be in range of [-3, 2], but got 3)")),
    ("engine.cat([engine.tensor(1.0), engine.tensor(2.0)])",
     ("RuntimeError", "zero-dimensional tensor (at position 0) cannot be concatenated")),
    ("engine.cat([])", ("ValueError", "torch.cat(): expected a non-empty list of Tensors")),
    ("engine.cat([x, 3])", ("TypeError", "expected Tensor as element 1 in argument 0, but got int")),
    ("engine.cat(v)", ("TypeError", "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")),
    ("engine.stack([v, v[:4]])",
     ("RuntimeError", "stack expects each tensor to be equal size, but got [5] at entry 0 and [4] at entry 1")),
    ("engine.stack([v, v], 2)",
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 2)")),
    ("engine.stack([v, v], -3)",
     ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got -3)")),
    ("engine.stack([])", ("RuntimeError", "stack expects a non-empty TensorList")),
    ("x.masked_fill((x > 20).int(), 0)",
     ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask with dtype int")),
    ("x.masked_fill((x > 20).long(), 0)",
     ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask with dtype long int")),
    ("x.masked_fill_((x > 20).float(), 0)",
     ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask with dtype float")),
    ("x.masked_fill(x > 20, 0).sum()", ((), "float32", [sum(range(21))])),
    ("x.squeeze(5)", ("IndexError", "Dimension out of range (expected to be in range of [-3, 2], but got 5)")),
    ("x.squeeze((0, 0))", ("RuntimeError", "dim 0 appears multiple times in the list of dims")),
    ("engine.zeros(1, 2, 1).squeeze((0, 2))", ((2,), "float32", [0, 0])),
    ("engine.zeros(1, 2, 1).squeeze(())", ((1, 2, 1), "float32", [0, 0])),
    ("engine.tensor(1.0).squeeze(0)", ((), "float32", [1])),
    ("engine.tensor(1.0).squeeze(1)",
     ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    ("x.flatten(2, 1)", ("RuntimeError", "flatten() has invalid args: start_dim cannot come after end_dim")),
    ("x.flatten(0, 3)", ("IndexError", "Dimension out of range (expected to be in range of [-3, 2], but got 3)")),
    ("engine.tensor(1.0).flatten(1)",
     ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")),
    ("engine.tensor(1.0).flatten(0, -1)", ((1,), "float32", [1])),
    ("x.flatten(-2, -1).shape == (2, 12)", ((), "bool", [True])),
    ("x.permute(2, 0)", ("RuntimeError", OWN)),
    ("x.permute(0, 0, 1)", ("RuntimeError", "permute(): duplicate dims are not allowed.")),
    ("x.permute(0, 1, 5)", ("IndexError", "Dimension out of range (expected to be in range of [-3, 2], but got 5)")),
    ("x.permute(-1, 0, 1).shape == (4, 2, 3)", ((), "bool", [True])),
    ("v.mT", ("RuntimeError", "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")),
    ("x.view(-1, -1)", ("RuntimeError", "only one dimension can be inferred")),
    ("x.view(-2, 12)", ("RuntimeError", "invalid shape dimension -2 at index 0 of shape [-2, 12]")),
    ("e.view(-1, 0)", ("RuntimeError", "cannot reshape tensor of 0 elements into shape [-1, 0] because the "
                                       "unspecified dimension size -1 can be any value and is ambiguous")),
    ("e.reshape(0, -1)", ("RuntimeError", "cannot reshape tensor of 0 elements into shape [0, -1]")),
    ("x.reshape(5, -1)", ("RuntimeError", "shape '[5, -1]' is invalid for input of size 24")),
    ("x[2]", ("IndexError", "index 2 is out of bounds for dimension 0 with size 2")),
    ("x[-3]", ("IndexError", "index -3 is out of bounds for dimension 0 with size 2")),
    ("x[:, 5]", ("IndexError", "index 5 is out of bounds for dimension 1 with size 3")),
    ("x[0, 0, 4]", ("IndexError", "index 4 is out of bounds for dimension 2 with size 4")),
    ("v[[5]]", ("IndexError", "index 5 is out of bounds for dimension 0 with size 5")),
    ("e[0]", ("IndexError", "index 0 is out of bounds for dimension 0 with size 0")),
    ("v[engine.tensor([[True] * 5])]", ("IndexError", "too many indices for tensor of dimension 1")),
    ("x[engine.tensor([0.0])]", ("IndexError", "tensors used as indices must be long, int, byte or bool tensors")),
    ("x[1.0]", ("IndexError", "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                              "valid indices")),
    ("x[[True]]", ("IndexError", OWN)),
    ("x.narrow(2, 3, 2)", ("RuntimeError", "start (3) + length (2) exceeds dimension size (4).")),
    ("x.narrow(2, 5, 0)", ("IndexError", "start out of range (expected to be in range of [-4, 4], but got 5)")),
    ("x.narrow(2, 1, -1)", ("RuntimeError", "narrow(): length must be non-negative.")),
    ("engine.tensor(1.0).narrow(0, 0, 1)", ("RuntimeError", "narrow() cannot be applied to a 0-dim tensor.")),
    ("x.narrow(2, -2, 2)[0, 0]", ((2,), "float32", [2, 3])),
    ("x.gather(2, engine.zeros(2, 3, 1))", ("RuntimeError", "gather(): Expected dtype int32/int64 for index")),
    ("x.gather(2, engine.ones(2, 3, 1, dtype=engine.int32))[1, 2]", ((1,), "float32", [21])),
]


def _env(lib):
    return {"engine": lib, "x": lib.arange(24.0).reshape(2, 3, 4), "v": lib.arange(5.0), "e": lib.zeros(0, 3)}


test_the_engine_answers_as_pytorch, test_the_table_is_pytorchs = table_tests(CASES, _env)


def test_a_mixed_cat_gives_each_gradient_in_its_own_dtype():
    a = engine.ones(2, requires_grad=True)
    b = engine.ones(3, dtype=engine.float64, requires_grad=True)
    c = engine.cat([a, b])
    assert c.dtype == engine.float64 and c.grad_fn.name() == "CatBackward0"
    (c * engine.arange(5.0, dtype=engine.float64)).sum().backward()
    assert a.grad.dtype == engine.float32 and a.grad.tolist() == [0.0, 1.0]
    assert b.grad.dtype == engine.float64 and b.grad.tolist() == [2.0, 3.0, 4.0]
    (g,) = engine.autograd.grad((engine.stack([a, a.double()]) ** 2).sum(), a, create_graph=True)
    assert g.dtype == engine.float32 and g.tolist() == [4.0, 4.0]  # (2a from each of the two rows)
    g.sum().backward()


def test_a_skipped_empty_tensor_still_gets_its_empty_gradient():
    x = engine.ones(2, 3, requires_grad=True)
    e = engine.zeros(0, requires_grad=True)
    y = engine.cat([x, e, x])
    assert y.shape == (4, 3)
    (y * engine.arange(12.0).reshape(4, 3)).sum().backward()
    assert e.grad.shape == (0,)
    np.testing.assert_array_equal(x.grad.numpy(), [[6, 8, 10], [12, 14, 16]])


def test_writing_out_of_bounds_says_dimension():
    x = engine.zeros(2, 3)
    with pytest.raises(IndexError, match=r"^index 3 is out of bounds for dimension 1 with size 3$"):
        x[0, 3] = 1.0
    assert x.sum().item() == 0.0


# ``x[index] = value`` where value does not fit the places written: PyTorch's words (NumPy's ValueError came through)
WRITES = [
    ("x[0] = lib.tensor([9.0, 8.0])", "The expanded size of the tensor (4) must match the existing size (2) at "
                                      "non-singleton dimension 0.  Target sizes: [4].  Tensor sizes: [2]"),
    ("x[:, 0] = lib.tensor([[1.0], [2.0], [3.0]])", "expand(torch.FloatTensor{[3, 1]}, size=[3]): the number of sizes "
                                                    "provided (1) must be greater or equal to the number of dimensions "
                                                    "in the tensor (2)"),
    ("x[0] = lib.ones(2, 4, dtype=lib.int64)", "expand(torch.LongTensor{[2, 4]}, size=[4])"),
    ("x[x > 5] = lib.tensor([1.0, 2.0])", "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing "
                                          "result of shape [6]"),
]


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize(("code", "message"), WRITES, ids=[w[0] for w in WRITES])
def test_a_write_that_does_not_fit_refuses_in_pytorchs_words(code, message, recorded):
    x = engine.arange(12.0).reshape(3, 4)
    if recorded:  # (through the recorded write, SetItem)
        x = x.requires_grad_().clone()
    with pytest.raises(RuntimeError) as refusal:
        exec(code, {"x": x, "lib": engine})  # noqa: S102 - the table's own statements
    assert str(refusal.value).startswith(message)


@pytest.mark.parametrize(("code", "message"), WRITES, ids=[w[0] for w in WRITES])
def test_the_write_refusals_are_pytorchs(code, message):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as refusal:
        exec(code, {"x": torch.arange(12.0).reshape(3, 4), "lib": torch})  # noqa: S102
    assert str(refusal.value).startswith(message)


def test_scatter_multiply_as_pytorch():
    """``scatter(reduce='multiply')``: each place times what lands on it (it was refused); recorded without a
    derivative, as PyTorch's (its backward refuses)."""
    x = engine.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.scatter(1, engine.tensor([[0], [1]]), engine.full((2, 1), 2.0), reduce="multiply")
    assert y.tolist() == [[0.0, 1.0, 2.0], [3.0, 8.0, 5.0]]
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()
    ints = engine.arange(6).reshape(2, 3).scatter(1, engine.tensor([[0, 0], [1, 1]]), engine.full((2, 2), 2),
                                                  reduce="multiply")
    assert ints.tolist() == [[0, 1, 2], [3, 16, 5]] and ints.dtype == engine.int64
    z = engine.arange(6.0).reshape(2, 3)
    z.scatter_(1, engine.tensor([[0], [1]]), 3.0, reduce="multiply")
    assert z.tolist() == [[0.0, 1.0, 2.0], [3.0, 12.0, 5.0]]
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply."):
        z.scatter(1, engine.tensor([[0], [1]]), 3.0, reduce="bad")
