"""Every op of the tutorial's API: forward values vs NumPy float64, gradients vs finite differences and
PyTorch (when importable), on each device."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import engine
from tests.engine.helpers import helper_test_op

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)


def test_add(device):
    helper_test_op([(3, 4), (3, 4)], lambda a, b: a + b, lambda a, b: a + b, device=device)


def test_add_broadcast(device):
    helper_test_op([(3, 4), (4,)], lambda a, b: a + b, lambda a, b: a + b, device=device)
    helper_test_op([(3, 1), (1, 4)], lambda a, b: a + b, lambda a, b: a + b, device=device)


def test_sub_mul_div(device):
    helper_test_op([(2, 5), (2, 5)], lambda a, b: a - b, lambda a, b: a - b, device=device)
    helper_test_op([(2, 5), (5,)], lambda a, b: a * b, lambda a, b: a * b, device=device)
    helper_test_op([(2, 5), (2, 1)], lambda a, b: a / b, lambda a, b: a / b, device=device, positive=True)


def test_scalars_on_either_side(device):
    helper_test_op([(3, 3)], lambda a: 2.0 * a - 1.5, lambda a: 2.0 * a - 1.5, device=device)
    helper_test_op([(3, 3)], lambda a: 3.0 - a / 4.0, lambda a: 3.0 - a / 4.0, device=device)
    helper_test_op([(3, 3)], lambda a: 1.0 / a + a * 2, lambda a: 1.0 / a + a * 2, device=device, positive=True)


def test_pow_neg(device):
    helper_test_op([(4, 3)], lambda a: a**2, lambda a: a.pow(2), device=device)
    helper_test_op([(4, 3)], lambda a: a**3, lambda a: a**3, device=device)
    helper_test_op([(4, 3)], lambda a: a**0.5, lambda a: a**0.5, device=device, positive=True)
    helper_test_op([(4, 3)], lambda a: 2.0**a, lambda a: 2.0**a, device=device)
    helper_test_op([(3,), (3,)], lambda a, b: a**b, lambda a, b: a**b, device=device, positive=True)
    helper_test_op([(4, 3)], lambda a: -a, lambda a: -a, device=device)


def test_mm_matmul(device):
    helper_test_op([(4, 5), (5, 3)], lambda a, b: a @ b, lambda a, b: a.mm(b), device=device)
    helper_test_op([(4, 5), (5, 3)], lambda a, b: a @ b, lambda a, b: a @ b, device=device)
    helper_test_op([(5,), (5, 3)], lambda a, b: a @ b, lambda a, b: a.matmul(b), device=device)
    helper_test_op([(4, 5), (5,)], lambda a, b: a @ b, lambda a, b: a @ b, device=device)
    helper_test_op([(2, 4, 5), (5, 3)], lambda a, b: a @ b, lambda a, b: a @ b, device=device)


def test_elementwise_math(device):
    helper_test_op([(3, 4)], np.exp, lambda a: a.exp(), device=device)
    helper_test_op([(3, 4)], np.log, lambda a: a.log(), device=device, positive=True)
    helper_test_op([(3, 4)], np.sqrt, lambda a: a.sqrt(), device=device, positive=True)
    helper_test_op([(3, 4)], np.abs, lambda a: a.abs(), device=device)
    helper_test_op([(3, 4)], np.tanh, lambda a: a.tanh(), device=device)
    helper_test_op([(3, 4)], lambda a: 1 / (1 + np.exp(-a)), lambda a: a.sigmoid(), device=device)


def test_clamp_relu(device):
    helper_test_op([(5, 6)], lambda a: np.maximum(a, 0), lambda a: a.clamp(min=0), device=device)
    helper_test_op([(5, 6)], lambda a: np.minimum(a, 0.5), lambda a: a.clamp(max=0.5), device=device)
    helper_test_op([(5, 6)], lambda a: np.clip(a, -0.5, 0.5), lambda a: a.clamp(-0.5, 0.5), device=device)
    helper_test_op([(5, 6)], lambda a: np.maximum(a, 0), lambda a: a.relu(), device=device)


def test_maximum_where(device):
    helper_test_op([(3, 4), (3, 4)], np.maximum, lambda a, b: a.maximum(b), device=device)
    helper_test_op([(3, 4), (3, 4)], lambda a, b: np.where(a > 0, a, b),
                   lambda a, b: engine.where(a > 0, a, b) if isinstance(a, engine.Tensor) else
                   __import__("torch").where(a > 0, a, b), device=device)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean(device, dim, keepdim):
    axis = dim
    helper_test_op([(3, 4)], lambda a: np.sum(a, axis=axis, keepdims=keepdim),
                   lambda a: a.sum(dim, keepdim), device=device)  # dim=None, keepdim=True: a (1, 1) result
    helper_test_op([(3, 4)], lambda a: np.mean(a, axis=axis, keepdims=keepdim),
                   lambda a: a.mean(dim, keepdim), device=device)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(device, dim, keepdim):
    helper_test_op([(4, 5)], lambda a: np.max(a, axis=dim, keepdims=keepdim),
                   lambda a: a.max(dim, keepdim)[0], device=device)
    helper_test_op([(4, 5)], lambda a: np.min(a, axis=dim, keepdims=keepdim),
                   lambda a: a.min(dim, keepdim).values, device=device)


def test_max_min_all_and_indices(device):
    helper_test_op([(4, 5)], lambda a: np.max(a), lambda a: a.max(), device=device)
    helper_test_op([(4, 5)], lambda a: np.min(a), lambda a: a.min(), device=device)
    x = engine.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], device=device)
    values, indices = x.max(dim=1)
    assert values.tolist() == [5.0, 7.0]
    assert indices.tolist() == [1, 0]
    assert x.argmax().item() == 3
    assert x.argmax(dim=0).tolist() == [1, 0, 1]
    assert x.argmin(dim=1, keepdim=True).tolist() == [[0], [1]]


def test_max_ties_share_gradient(device):
    x = engine.tensor([1.0, 3.0, 3.0], device=device, requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


def test_shape_ops(device):
    helper_test_op([(3, 4)], lambda a: a.T, lambda a: a.t(), device=device)
    helper_test_op([(2, 3, 4)], lambda a: np.swapaxes(a, 0, 2), lambda a: a.transpose(0, 2), device=device)
    helper_test_op([(2, 3, 4)], lambda a: a.transpose(1, 2, 0), lambda a: a.permute(1, 2, 0), device=device)
    helper_test_op([(3, 4)], lambda a: a.reshape(2, 6), lambda a: a.view(2, 6), device=device)
    helper_test_op([(3, 4)], lambda a: a.reshape(-1), lambda a: a.reshape(-1), device=device)
    helper_test_op([(3, 4)], lambda a: a[:, None, :], lambda a: a.unsqueeze(1), device=device)
    helper_test_op([(3, 1, 4)], lambda a: a[:, 0, :], lambda a: a.squeeze(1), device=device)
    helper_test_op([(3, 1)], lambda a: np.broadcast_to(a, (3, 5)), lambda a: a.expand(3, 5), device=device)
    helper_test_op([(3, 4)], lambda a: a.copy(), lambda a: a.clone(), device=device)
    helper_test_op([(3, 4)], lambda a: a.T.copy(), lambda a: a.t().contiguous(), device=device)


@pytest.mark.parametrize("grad", [False, True])
def test_contiguous_makes_a_transpose_row_major(device, grad):
    x = engine.arange(6.0, device=device).view(2, 3).requires_grad_(grad)
    assert x.contiguous() is x and x.is_contiguous()  # already in order: the tensor itself, as PyTorch
    t = x.t()
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert (c.grad_fn.name() == "CloneBackward0") if grad else c.grad_fn is None


def test_indexing(device):
    helper_test_op([(5, 4)], lambda a: a[1], lambda a: a[1], device=device)
    helper_test_op([(5, 4)], lambda a: a[1:4, ::2], lambda a: a[1:4, ::2], device=device)
    helper_test_op([(5, 4)], lambda a: a[a > 0], lambda a: a[a > 0], device=device)
    # integer arrays, with a repeated row: gradients must add up
    helper_test_op([(5, 4)], lambda a: a[[0, 2, 2]], lambda a: a[[0, 2, 2]], device=device)


def test_index_with_range_and_tensor(device):
    """``input[range(n), target]``: the cross-entropy idiom of the tutorial's logistic regression."""
    logits = engine.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], device=device, requires_grad=True)
    target = engine.tensor([1, 0, 1], device=device)
    picked = logits[range(3), target]
    assert picked.tolist() == pytest.approx([0.9, 0.8, 0.7])
    picked.sum().backward()
    assert logits.grad.tolist() == [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]


def test_setitem_mask_like_the_tutorial(device):
    h = engine.tensor([[-1.0, 2.0], [3.0, -4.0]], device=device)
    grad_h = h.clone()
    grad_h[h < 0] = 0
    assert grad_h.tolist() == [[0.0, 2.0], [3.0, 0.0]]
    assert h.tolist() == [[-1.0, 2.0], [3.0, -4.0]]  # the clone did not alias


def test_setitem_recorded_in_graph(device):
    x = engine.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    v = engine.tensor(10.0, device=device, requires_grad=True)
    y = x * 2
    y[1] = v * 3
    y.sum().backward()
    assert y.tolist() == [2.0, 30.0, 6.0]
    assert x.grad.tolist() == [2.0, 0.0, 2.0]
    assert v.grad.item() == 3.0


def test_stack_cat(device):
    helper_test_op([(2, 3), (2, 3)], lambda a, b: np.stack([a, b], 1),
                   lambda a, b: (engine if isinstance(a, engine.Tensor) else __import__("torch")).stack([a, b], 1),
                   device=device)
    helper_test_op([(2, 3), (4, 3)], lambda a, b: np.concatenate([a, b], 0),
                   lambda a, b: (engine if isinstance(a, engine.Tensor) else __import__("torch")).cat([a, b], 0),
                   device=device)


@pytest.mark.parametrize("grad_mode", ["no_grad", "no input needs a gradient"])
def test_ops_whose_forward_reads_its_ctx_work_when_nothing_is_recorded(device, grad_mode):
    """A fresh ctx per call: the shared no-graph ctx once swallowed what Cat's and Stack's forwards wrote, so
    engine.cat of tensors without gradients raised AttributeError."""
    a = engine.tensor([[1.0, 2.0]], device=device, requires_grad=grad_mode == "no_grad")
    b = engine.tensor([[3.0, 4.0], [5.0, 6.0]], device=device)
    with engine.no_grad() if grad_mode == "no_grad" else contextlib.nullcontext():
        assert engine.cat([a, b]).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        assert engine.cat([a, b[:1], b[1:]], 0).shape == (3, 2)
        assert engine.stack([a, b[:1]], 0).tolist() == [[[1.0, 2.0]], [[3.0, 4.0]]]


def test_composition_two_layer_net(device):
    """The tutorial's forward pass as one composite, checked end to end."""
    helper_test_op(
        [(6, 5), (5, 4), (4, 3), (6, 3)],
        lambda x, w1, w2, y: np.square(np.maximum(x @ w1, 0) @ w2 - y).sum(),
        lambda x, w1, w2, y: (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum(),
        device=device,
    )


def test_composition_log_softmax_nll(device):
    def ref(x, w, b):
        z = x @ w + b
        z = z - z.max(axis=1, keepdims=True)
        lsm = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return -lsm[np.arange(4), [0, 2, 1, 2]].mean()

    def eng(x, w, b):
        if isinstance(x, engine.Tensor):
            target = engine.tensor([0, 2, 1, 2], device=x.device)
            return engine.nn.functional.cross_entropy(x @ w + b, target)
        import torch

        return torch.nn.functional.cross_entropy(x @ w + b, torch.tensor([0, 2, 1, 2]))

    helper_test_op([(4, 5), (5, 3), (3,)], ref, eng, device=device)


def test_comparisons_are_bool_and_untracked(device):
    x = engine.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    for result, expected in ((x > 0, [True, False, True]), (x <= 1, [True, True, False]),
                             (x == 3.0, [False, False, True]), (x != 1.0, [False, True, True])):
        assert result.dtype == engine.bool
        assert result.tolist() == expected
        assert not result.requires_grad


def test_dtype_kept_by_python_scalars(device):
    x = engine.ones(2, 2, device=device)
    assert (2.0 * x - 1).dtype == engine.float32
    assert (x.double() * 2).dtype == engine.float64
    assert (x.pow(2)).dtype == engine.float32
