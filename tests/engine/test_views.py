"""Views share their base's memory, as PyTorch's do: writing one writes the other.

``x.diagonal().fill_(1)`` (a common way to set a diagonal) had changed nothing: the diagonal was taken with an
index array, a copy. ``select`` and ``tensor_split`` were missing. A write into an expanded tensor whose elements
share memory gave NumPy's "assignment destination is read-only" (or, recorded, wrote only the expanded view); it
now gives PyTorch's refusal, and ``fill_``/``zero_``, which PyTorch lets write it, write each memory place once.
The recorded cases (autograd through a write into a view) are in test_inplace_writes.py's table.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import engine
from tests.engine.helpers import HAVE_TORCH

OVERLAP = "unsupported operation: more than one element of the written-to tensor refers to a single memory location"


def _grid(lib):
    return lib.arange(9.0, dtype=lib.float64).reshape(3, 3)


# each writes into x (3 x 3, 0..8) through a view; the expected x worked out by hand
WRITES = {
    "diagonal_fill": (lambda lib, x: x.diagonal().fill_(7), [[7, 1, 2], [3, 7, 5], [6, 7, 7]]),
    "diagonal_above_add": (lambda lib, x: x.diagonal(1).add_(10), [[0, 11, 2], [3, 4, 15], [6, 7, 8]]),
    "diagonal_below_copy": (lambda lib, x: x.diagonal(-1).copy_(lib.tensor([-1.0, -2.0], dtype=lib.float64)),
                            [[0, 1, 2], [-1, 4, 5], [6, -2, 8]]),
    "diagonal_of_transpose_mul": (lambda lib, x: x.t().diagonal().mul_(2), [[0, 1, 2], [3, 8, 5], [6, 7, 16]]),
    "select_column_zero": (lambda lib, x: x.select(1, -1).zero_(), [[0, 1, 0], [3, 4, 0], [6, 7, 0]]),
    "tensor_split_piece_fill": (lambda lib, x: x.tensor_split(3, dim=1)[1].fill_(-5),
                                [[0, -5, 2], [3, -5, 5], [6, -5, 8]]),
    "narrow_rows_sub": (lambda lib, x: x.narrow(0, 1, 2).sub_(1), [[0, 1, 2], [2, 3, 4], [5, 6, 7]]),
    "unsqueezed_expand_add": (lambda lib, x: x[0].unsqueeze(0).expand(1, 3).add_(100),
                              [[100, 101, 102], [3, 4, 5], [6, 7, 8]]),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_into_a_view_writes_the_base(name):
    write, expected = WRITES[name]
    x = _grid(engine)
    write(engine, x)
    np.testing.assert_array_equal(x.numpy(), np.array(expected, dtype=np.float64))


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed (the expected values stand alone)")
@pytest.mark.parametrize("name", sorted(WRITES))
def test_the_writes_are_what_pytorch_does(name):
    import torch

    write, expected = WRITES[name]
    x = _grid(torch)
    write(torch, x)
    np.testing.assert_array_equal(x.numpy(), np.array(expected, dtype=np.float64))


@pytest.mark.parametrize("name", ["diagonal_fill", "diagonal_of_transpose_mul", "select_column_zero"])
def test_on_the_cupy_stand_in(name, simulated_gpu):
    """CuPy's diagonal is a view that can be written (NumPy's is read-only); the stand-in holds to that."""
    write, expected = WRITES[name]
    x = _grid(engine).cuda()
    write(engine, x)
    np.testing.assert_array_equal(x.cpu().numpy(), np.array(expected, dtype=np.float64))


def test_diagonal_is_a_view_and_diag_a_copy():
    x = _grid(engine)
    d = x.diagonal()
    x[1, 1] = 40.0
    assert d.tolist() == [0.0, 40.0, 8.0]
    copy = engine.diag(x)
    copy.fill_(-1.0)
    assert x.diagonal().tolist() == [0.0, 40.0, 8.0]
    b = engine.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(b.diagonal(1, 0, 2).numpy(), np.arange(24.0).reshape(2, 3, 4).diagonal(1, 0, 2))


def test_diagonal_gradients_and_names():
    x = engine.arange(9.0, dtype=engine.float64).reshape(3, 3).requires_grad_()
    h = x * 1
    d = h.diagonal(1)
    assert d.grad_fn.name() == "DiagonalBackward0"
    assert engine.diag(h).grad_fn.name() == "DiagonalBackward0_copy"
    assert h.trace().grad_fn.name() == "TraceBackward0"
    (d * engine.tensor([2.0, 3.0], dtype=engine.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]
    y = engine.arange(9.0, dtype=engine.float64).reshape(3, 3).requires_grad_()
    (g,) = engine.autograd.grad((y.diagonal() ** 3).sum(), y, create_graph=True)  # 3 y_ii^2 on the diagonal
    assert g.tolist() == [[0.0, 0.0, 0.0], [0.0, 48.0, 0.0], [0.0, 0.0, 192.0]]
    g.sum().backward()
    assert y.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 24.0, 0.0], [0.0, 0.0, 48.0]]


def test_select_and_tensor_split_values():
    x = engine.arange(24.0).reshape(2, 3, 4)
    expected = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(x.select(1, -1).numpy(), expected[:, -1])
    np.testing.assert_array_equal(engine.select(x, 2, 3).numpy(), expected[:, :, 3])
    assert [t.shape[2] for t in x.tensor_split(3, dim=2)] == [2, 1, 1]  # the first ones one longer
    assert [t.shape[0] for t in x.tensor_split(5)] == [1, 1, 0, 0, 0]
    assert [t.shape[2] for t in x.tensor_split([1, 3], dim=-1)] == [1, 2, 1]
    assert [t.shape[2] for t in x.tensor_split((2, 1), dim=2)] == [2, 0, 3]  # an index below the last: empty
    assert [t.shape[1] for t in engine.tensor_split(x, engine.tensor([1, 2]), 1)] == [1, 1, 1]
    assert [t.shape[0] for t in x.tensor_split(engine.tensor(2))] == [1, 1]
    np.testing.assert_array_equal(x.tensor_split([1, 3], dim=2)[1].numpy(), expected[:, :, 1:3])
    w = engine.ones(2, 3, requires_grad=True)
    (w.select(0, 1) * engine.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    assert (w * 1).select(0, 1).grad_fn.name() == "SelectBackward0"


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.select(0, 2), IndexError,
     "select(): index 2 out of range for tensor of size [2, 3, 4] at dimension 0"),
    (lambda x: x.select(3, 0), IndexError, "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    (lambda x: engine.tensor(1.0).select(0, 0), IndexError, "select() cannot be applied to a 0-dim tensor."),
    (lambda x: x.tensor_split(0), RuntimeError, "number of sections must be larger than 0, got 0"),
    (lambda x: x.tensor_split(engine.tensor([[1]])), RuntimeError, "zero-dimensional or one-dimensional tensor"),
    (lambda x: x.tensor_split(2.5), TypeError, "must be an int, a tuple of ints or a Tensor, not float"),
])
def test_select_and_tensor_split_refuse_bad_arguments(call, error, message):
    with pytest.raises(error) as info:
        call(engine.arange(24.0).reshape(2, 3, 4))
    assert message in str(info.value)


@pytest.mark.parametrize("write", [lambda e: e.add_(1), lambda e: e.mul_(engine.ones(3, 3)), lambda e: e.exp_(),
                                   lambda e: e.copy_(engine.ones(3, 3)), lambda e: e.__isub__(2)])
def test_a_write_into_repeated_memory_is_refused_as_pytorch_refuses_it(write):
    x = engine.zeros(3, 1)
    with pytest.raises(RuntimeError, match=OVERLAP):
        write(x.expand(3, 3))
    assert x.tolist() == [[0.0], [0.0], [0.0]]
    h = engine.zeros(3, 1, requires_grad=True) * 1
    with pytest.raises(RuntimeError, match=OVERLAP):
        h.expand(3, 3).mul_(2)


def test_fill_and_zero_write_an_expanded_tensor_once_per_place():
    x = engine.zeros(3, 1)
    x.expand(2, 3, 3).fill_(4.0)
    assert x.tolist() == [[4.0], [4.0], [4.0]]
    x.expand(3, 5).zero_()
    assert x.tolist() == [[0.0], [0.0], [0.0]]


def test_a_view_made_before_the_base_is_written_gets_the_base_as_it_is_now():
    """PyTorch names the regenerated node AsStridedBackward0; the nodes that took the view before keep the old one."""
    x = engine.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 1
    v = h[0:2]
    before = v * 1
    assert v.grad_fn.name() == "SliceBackward0"
    h.relu_()
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.tolist() == [1.0, 0.0]  # the memory it shares
    assert before.tolist() == [1.0, -2.0]
    (before.sum() + 10 * v.sum()).backward()
    assert x.grad.tolist() == [11.0, 1.0, 0.0]  # before: 1 each; v: 10 through the ReLU's mask


def test_the_base_holds_its_views_weakly():
    h = engine.ones(4, requires_grad=True) * 1
    survivor = h[1:2]
    for i in range(1000):
        h[i % 4:]  # made and dropped: at each power of two past 32 the dead entries go
    assert 1 <= len(h._views) <= 32
    h.mul_(3)
    assert survivor.tolist() == [3.0] and survivor.grad_fn.name() == "AsStridedBackward0"


def test_a_tensor_that_alone_holds_its_array_takes_the_result_without_a_copy():
    """Only where something else may see the memory is the result written into it (a copy for the op's input, a
    write): nothing can tell the two apart where this tensor alone holds the array, the tutorial's case."""
    x = engine.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 1
    before = weakref.ref(h._data)  # (a reference would be another holder)
    h.relu_()
    assert h._data is not before()
    d = h.detach()
    shared = h._data
    h.mul_(2)
    assert h._data is shared and d.tolist() == [2.0, 0.0, 6.0]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("write", [lambda h: h.copy_(engine.ones(3, 4)), lambda h: h.atan2_(engine.ones(3, 4)),
                                   lambda h: h.masked_fill_(engine.ones(3, 4, dtype=engine.bool), 0.0)])
def test_an_in_place_op_keeps_the_shape_as_pytorch_does(write, requires_grad):
    h = engine.ones(3, 1, requires_grad=requires_grad) * 1
    with pytest.raises(RuntimeError, match=r"output with shape \[3, 1\] doesn't match the broadcast shape \[3, 4\]"):
        write(h)
    assert h.shape == (3, 1) and h.tolist() == [[1.0], [1.0], [1.0]]
