"""What PyTorch's error inputs (test_op_db_error_inputs.py) found the engine computing, or refusing with another
exception type, held without PyTorch installed: each call is refused with PyTorch 2.13's exception type and, where
written here, its words."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine
import engine.nn.functional as F

X = engine.ones(3)

CASES = [
    # a Python number where PyTorch takes only tensors
    (lambda: engine.maximum(X, 2), TypeError, "maximum(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: engine.minimum(2, X), TypeError, "minimum(): argument 'input' (position 1) must be Tensor, not int"),
    (lambda: engine.hypot(X, 2), TypeError, "hypot(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: engine.atan2(X, 2), TypeError, "atan2(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: engine.heaviside(X, 2), TypeError, "heaviside(): argument 'values' (position 2) must be Tensor, not int"),
    (lambda: engine.logical_and(X, 2), TypeError, "logical_and(): argument 'other' (position 2) must be Tensor"),
    (lambda: engine.isclose(X, 2), TypeError, "isclose(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: engine.gcd(2, 3), TypeError, "gcd(): argument 'input' (position 1) must be Tensor, not int"),
    (lambda: engine.eq(2, X), TypeError, "eq() received an invalid combination of arguments - got (int, Tensor)"),
    (lambda: engine.lt(2, 3), TypeError, "lt() received an invalid combination of arguments - got (int, int)"),
    (lambda: engine.pow(2, 3), TypeError, "pow() received an invalid combination of arguments - got (int, int)"),
    # settings out of range
    (lambda: engine.diff(engine.ones(1, 3), -1), RuntimeError, "order must be non-negative but got -1"),
    (lambda: engine.isclose(X, X, rtol=-0.4), RuntimeError, "rtol must be greater than or equal to zero, but got -0.4"),
    (lambda: engine.isclose(X, X, atol=-0.4), RuntimeError, "atol must be greater than or equal to zero, but got -0.4"),
    (lambda: engine.gradient(engine.ones(3, 3), spacing=0.1, dim=(1, 1)), RuntimeError,
     "dim 1 appears multiple times in the list of dims"),
    (lambda: engine.gradient(engine.ones(3, 3), dim=3), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    (lambda: engine.linspace(0, 3, 1.0), TypeError, "linspace() received an invalid combination of arguments"),
    (lambda: F.layer_norm(engine.ones(1, 2, 3), ()), RuntimeError,
     "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
     "normalized_shape = []"),
    (lambda: F.rms_norm(engine.ones(1, 2, 3), ()), RuntimeError, "Expected normalized_shape to be at least"),
    (lambda: F.soft_margin_loss(engine.ones(5, 4), engine.ones(5, 4), reduction="abc"), ValueError,
     "abc is not a valid value for reduction"),
    (lambda: F.multilabel_margin_loss(engine.ones(5, 4), engine.ones(5, 4).long(), reduction="abc"), ValueError,
     "abc is not a valid value for reduction"),
    (lambda: F.triplet_margin_loss(engine.ones(3, 4), engine.ones(3, 4), engine.ones(3, 4), margin=-1.0),
     ValueError, "margin must be greater than 0, got -1.0"),
    (lambda: engine.kthvalue(engine.ones(2, 2), 3, 0), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 0"),
    (lambda: engine.mean(engine.ones(3, 4), [], dtype=engine.int64), RuntimeError,
     "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. "
     "Got: Long"),
    (lambda: engine.narrow(engine.ones(20, 10, 5), -3, engine.tensor(True), 3), RuntimeError,
     "start must be an 0-dim integral Tensor."),
    (lambda: engine.hsplit(engine.ones(5, 5, 5), 0), RuntimeError,
     "torch.hsplit attempted to split along dimension 1, but the size of the dimension 5 is not divisible by the "
     "split_size 0!"),
    (lambda: engine.hstack(()), RuntimeError, "hstack expects a non-empty TensorList"),
    # shapes and dtypes that do not fit
    (lambda: engine.index_add(engine.zeros(3, 2), 0, engine.tensor([0, 1]), engine.ones(2)), RuntimeError,
     "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [3, 2] "
     "source.shape = [2]"),
    (lambda: engine.zeros(3, 2).index_add(0, engine.tensor([0, 1]), engine.ones(2, 2, dtype=engine.float64)),
     RuntimeError, "index_add_(): self (Float) and source (Double) must have the same scalar type"),
    (lambda: engine.scatter(engine.zeros(3, 5, dtype=engine.float64), 0, engine.zeros(2, 2).long(),
                            engine.ones(2, 5)), RuntimeError,
     "scatter(): Expected self.dtype to be equal to src.dtype"),
    (lambda: engine.scatter_add(engine.zeros(3, 5, dtype=engine.float64), 0, engine.zeros(2, 2).long(),
                                engine.ones(2, 5)), RuntimeError, "Expected self.dtype to be equal to src.dtype"),
    (lambda: F.multi_margin_loss(engine.ones(5, 4), engine.zeros(5)), RuntimeError,
     "expected scalar type Long but found Float"),
    (lambda: F.multi_margin_loss(engine.ones(5, 0), engine.zeros(5).long()), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [5, 0]"),
    (lambda: F.multi_margin_loss(engine.ones(5, 4), engine.zeros(5).long(), weight=engine.tensor(1.0)), ValueError,
     "weight must be one-dimensional"),
    (lambda: F.multi_margin_loss(engine.ones(5, 4), engine.zeros(5).long(), weight=engine.ones(5)), RuntimeError,
     "inconsistent weight size, expected 4 but got [5]"),
    # pooling
    (lambda: F.adaptive_avg_pool2d(engine.ones(2, 2), (2, 2)), ValueError, "Input dimension should be at least 3"),
    (lambda: F.adaptive_max_pool3d(engine.ones(2, 2, 2), (2, 2, 2)), ValueError,
     "Input dimension should be at least 4"),
    (lambda: F.adaptive_max_pool1d(engine.ones(1, 1, 1), (-1,)), RuntimeError,
     "Trying to create tensor with negative dimension -1"),
    (lambda: F.max_pool1d(engine.ones(0, 10), 1), RuntimeError,
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[0, 10]"),
    (lambda: F.max_pool2d(engine.ones(2, 0, 3, 3), 1), RuntimeError,
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 3, 3]"),
    (lambda: F.max_pool3d(engine.ones(0, 1, 2, 10), 1), RuntimeError,
     "Expected input's non-batch dimensions to have positive length"),
]


@pytest.mark.parametrize(("call", "error", "words"), CASES, ids=[w[:60] for _, _, w in CASES])
def test_the_engine_refuses_it_as_pytorch(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_what_stays_allowed_beside_those_refusals():
    assert engine.eq(X, 1).tolist() == [True] * 3 and engine.pow(2, engine.tensor([3.0])).item() == 8.0
    assert engine.maximum(X, engine.tensor(2.0)).tolist() == [2.0] * 3
    assert X.maximum(engine.tensor(0.0)).tolist() == [1.0] * 3
    assert tuple(F.max_pool2d(engine.ones(0, 2, 3, 3), 1).shape) == (0, 2, 3, 3)  # (an empty batch is fine)
    assert F.multi_margin_loss(engine.ones(0, 4), engine.zeros(0).long()).item() == 0.0  # (as PyTorch's)
    assert engine.mean(engine.ones(3).long(), dtype=engine.float64).item() == 1.0


def test_out_takes_a_tuple_for_two_outputs_and_checks_what_pytorch_checks():
    x = engine.tensor([[3.0, 1.0], [2.0, 4.0]])
    values, indices = engine.empty(2), engine.empty(2, dtype=engine.int64)
    got = engine.kthvalue(x, 1, 0, out=(values, indices))
    assert got.values is values and values.tolist() == [2.0, 1.0] and indices.tolist() == [1, 0]
    low, high = engine.empty(2), engine.empty(2)
    engine.aminmax(x, dim=0, out=(low, high))
    assert low.tolist() == [2.0, 1.0] and high.tolist() == [3.0, 4.0]
    out = engine.empty(2, 1)
    assert engine.gather(x, 1, engine.tensor([[1], [0]]), out=out) is out and out.tolist() == [[1.0], [2.0]]
    assert engine.arange(0, 3, out=engine.empty(0, dtype=engine.float64)).tolist() == [0.0, 1.0, 2.0]
    joined = engine.empty(4, 2, dtype=engine.float64)  # (a float result into float64: cast, as PyTorch's)
    assert engine.cat([x, x], out=joined) is joined and joined.dtype == engine.float64


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda x: engine.gather(x, 1, engine.tensor([[1], [0]]), out=engine.empty(2, 1, dtype=engine.float64)),
     RuntimeError, "Expected out tensor to have dtype float, but got double instead"),
    (lambda x: engine.aminmax(x, dim=0, out=(engine.empty(2, dtype=engine.float64), engine.empty(2))),
     RuntimeError, "Expected out tensor to have dtype float, but got double instead"),
    (lambda x: engine.cat([x, x], out=engine.empty(4, 2, dtype=engine.int64)), TypeError,
     "torch.cat(): input types can't be cast to the desired output type Long"),
    (lambda x: engine.add(x, x, out=engine.empty(2, 2, dtype=engine.int64)), RuntimeError,
     "result type Float can't be cast to the desired output type Long"),
    (lambda x: engine.cat([x, x], out=x), RuntimeError,
     "some elements of the input tensor and the written-to tensor refer to a single memory location"),
    (lambda x: engine.take(x, engine.tensor([0, 1, 2]), out=engine.empty(1).expand(3)), RuntimeError,
     "more than one element of the written-to tensor refers to a single memory location"),
    (lambda x: engine.complex(engine.ones(2), engine.ones(2), out=engine.empty(2, dtype=engine.complex128)),
     RuntimeError, "Expected object of scalar type ComplexFloat but got scalar type ComplexDouble for argument 'out'"),
    (lambda x: engine.kthvalue(x, 1, 0, out=engine.empty(2)), TypeError,
     "kthvalue(): argument 'out' must be tuple of Tensors, not Tensor"),
    (lambda x: engine.kthvalue(x, 1, 0, out=(engine.empty(2),)), TypeError, "expected tuple of 2 elements but got 1"),
])
def test_out_is_refused_where_pytorch_refuses_it(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call(engine.tensor([[3.0, 1.0], [2.0, 4.0]]))


def test_the_top_level_ops_take_out_as_pytorch():
    x = engine.tensor([[3.0, 1.0], [2.0, 4.0]])
    y = engine.empty(2, 2)
    assert engine.sin(x, out=y) is y and np.allclose(y.numpy(), np.sin(x.numpy()))
    made = engine.empty(0, dtype=engine.int64)  # (a factory makes its values in out's dtype, resized to them)
    assert engine.zeros(2, 3, out=made) is made and made.shape == (2, 3) and made.dtype == engine.int64
    values, indices = engine.empty(2), engine.empty(2, dtype=engine.int64)
    engine.max(x, 1, out=(values, indices))
    assert values.tolist() == [3.0, 4.0] and indices.tolist() == [0, 1]
    assert engine.where(x > 2, x, 0.0, out=engine.empty(2, 2)).tolist() == [[3.0, 0.0], [0.0, 4.0]]
    assert engine.matmul(x, x, out=engine.empty(2, 2, dtype=engine.float64)).dtype == engine.float64
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.exp(x, out=engine.empty(2, 2, dtype=engine.int64))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        engine.exp(x.requires_grad_(), out=engine.empty(2, 2))
