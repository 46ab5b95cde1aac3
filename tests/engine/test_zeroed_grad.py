"""``zero_()`` writes its zeros only when someone reads them, and the next ``backward()`` gives the tensor the new
gradient's array instead of adding it to zeros, only where no one can tell.

Each case is checked against what PyTorch's in-place accumulation gives (zeros plus the gradient, plus whatever
was written into the buffer between ``zero_()`` and ``backward()``), and against whether the fast path was taken
(the tensor waited with its zeros, the ``.grad`` tensor's array was replaced), so a case that silently stopped
taking it fails too.
"""

import copy
import importlib
import pickle

import numpy as np
import pytest

import engine as torch

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

tensor_module = importlib.import_module("engine.tensor")  # (engine.tensor is also the factory function)


def _array_as_is(t):
    """The tensor's array without writing pending zeros (what backward() sees)."""
    return tensor_module._data_slot.__get__(t)


def _waiting(t) -> bool:
    return t.__class__ is tensor_module._LazyZeros


def _net(seed=0):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((8, 5)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((5, 3)).astype(np.float32)).requires_grad_()
    return x, w


def _loss(x, w):
    return x.mm(w).clamp(min=0).pow(2).sum()


def _expected_grad(x, w):
    """d/dw sum(relu(x w)^2) = x^T (2 relu(x w))."""
    xd, wd = x.numpy(), w.detach().numpy()
    return xd.T @ (2 * np.maximum(xd @ wd, 0))


def _zeroed_after_one_step(seed=0):
    x, w = _net(seed)
    _loss(x, w).backward()
    w.grad.zero_()
    return x, w


def test_a_zeroed_grad_takes_the_new_gradient_as_its_array_and_stays_the_same_tensor():
    x, w = _zeroed_after_one_step()
    grad_tensor = w.grad
    assert _waiting(w.grad)  # nothing written yet
    old = _array_as_is(w.grad)
    assert np.abs(old).sum() > 0  # the old gradient's values are still there, unread
    _loss(x, w).backward()
    assert w.grad is grad_tensor  # the Tensor a user holds is still .grad
    assert not _waiting(w.grad)
    assert _array_as_is(w.grad) is not old  # assigned: no fill, no pass adding to zeros
    np.testing.assert_allclose(w.grad.numpy(), _expected_grad(x, w), rtol=1e-5)
    assert w.grad._data.strides == w._data.strides


def test_a_zeroed_tensor_reads_as_zeros_everywhere_and_is_a_tensor():
    for read in (lambda g: g.numpy(), lambda g: (g * 1).numpy(), lambda g: g[1].numpy(), lambda g: np.asarray(g),
                 lambda g: copy.deepcopy(g).numpy(), lambda g: pickle.loads(pickle.dumps(g)).numpy(),
                 lambda g: g.clone().numpy(), lambda g: np.array([g.sum().item()])):
        _, w = _zeroed_after_one_step()
        assert _waiting(w.grad)
        assert isinstance(w.grad, torch.Tensor) and type(w.grad).__name__ == "Tensor"
        assert w.grad.shape == (5, 3) and w.grad.dtype == torch.float32
        values = read(w.grad)
        assert values.size > 0 and not values.any()
        assert not _waiting(w.grad)  # read once, written once
        assert not _array_as_is(w.grad).any()
    _, w = _zeroed_after_one_step()
    assert "0." in repr(w.grad) and not w.grad.numpy().any()


def test_zeros_read_before_backward_are_added_to():
    x, w = _zeroed_after_one_step()
    assert w.grad.abs().sum().item() == 0.0  # read: the zeros are written
    old = _array_as_is(w.grad)
    _loss(x, w).backward()
    assert _array_as_is(w.grad) is old  # added in place, as PyTorch does
    np.testing.assert_allclose(w.grad.numpy(), _expected_grad(x, w), rtol=1e-5)


def test_zero_twice_still_waits_and_a_held_grad_tensor_sees_the_new_gradient():
    x, w = _zeroed_after_one_step()
    held = w.grad
    held.zero_()
    assert _waiting(held)
    _loss(x, w).backward()
    assert held is w.grad and not _waiting(held)
    np.testing.assert_allclose(held.numpy(), _expected_grad(x, w), rtol=1e-5)


def test_an_array_held_elsewhere_is_zeroed_at_once():
    x, w = _net()
    _loss(x, w).backward()
    held = w.grad.numpy()
    w.grad.zero_()
    assert not _waiting(w.grad) and not held.any()
    _loss(x, w).backward()
    np.testing.assert_allclose(held, _expected_grad(x, w), rtol=1e-5)


def test_a_parameter_zeroed_stays_a_parameter_and_its_zeros_are_written():
    p = torch.nn.Parameter(torch.ones(3, 2))
    with torch.no_grad():
        p.zero_()
    assert type(p) is torch.nn.Parameter
    assert not p.detach().numpy().any()


def test_a_view_of_a_larger_array_is_zeroed_at_once():
    base = torch.ones(4, 3)
    row = base[1]
    row.zero_()
    assert not _waiting(row)
    np.testing.assert_array_equal(base.numpy()[1], 0.0)
    np.testing.assert_array_equal(base.numpy()[0], 1.0)


def test_a_second_backward_adds_to_the_assigned_gradient():
    x, w = _zeroed_after_one_step()
    _loss(x, w).backward()
    _loss(x, w).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * _expected_grad(x, w), rtol=1e-5)


def test_a_view_alive_at_backward_sees_the_gradient_as_pytorch_accumulates_in_place():
    x, w = _zeroed_after_one_step()
    view = w.grad[1:3]
    old = w.grad._data
    _loss(x, w).backward()
    assert w.grad._data is old  # added in place: the view shares it
    np.testing.assert_allclose(view.numpy(), _expected_grad(x, w)[1:3], rtol=1e-5)


def test_a_write_through_a_view_that_is_gone_is_kept():
    x, w = _zeroed_after_one_step()
    view = w.grad[0]
    view.add_(1.0)
    del view
    _loss(x, w).backward()
    expected = _expected_grad(x, w)
    expected[0] += 1.0
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("write", [
    lambda g: g.__setitem__((0, 0), 5.0),
    lambda g: g.add_(5.0),
    lambda g: g.mul_(1.0).add_(5.0),
    lambda g: g.fill_(5.0),
    lambda g: g.copy_(torch.full(g.shape, 5.0)),
    lambda g: g.clamp_(min=5.0),
    lambda g: g.data.add_(5.0),
    lambda g: g.detach().add_(5.0),
    lambda g: g.view(-1)[0:1].add_(5.0),
], ids=["setitem", "add_", "mul_add_", "fill_", "copy_", "clamp_", "data", "detach", "view_of_view"])
def test_every_in_place_write_after_zero_is_added_to(write):
    x, w = _zeroed_after_one_step()
    write(w.grad)
    written = w.grad.numpy().copy()
    assert written.max() == 5.0
    _loss(x, w).backward()
    np.testing.assert_allclose(w.grad.numpy(), written + _expected_grad(x, w), rtol=1e-5)


def test_a_numpy_array_written_and_dropped_before_backward_is_kept():
    x, w = _zeroed_after_one_step()
    w.grad.numpy()[2, 1] = 7.0
    _loss(x, w).backward()
    expected = _expected_grad(x, w)
    expected[2, 1] += 7.0
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)


def test_a_numpy_array_held_across_backward_shares_the_gradient():
    x, w = _zeroed_after_one_step()
    held = w.grad.numpy()
    _loss(x, w).backward()
    np.testing.assert_allclose(held, _expected_grad(x, w), rtol=1e-5)
    assert np.shares_memory(held, w.grad.numpy())


def test_a_grad_that_is_a_view_of_a_larger_buffer_is_added_into_that_buffer():
    x, w = _net()
    buffer = np.zeros((2, 5, 3), dtype=np.float32)
    w.grad = torch.from_numpy(buffer[1])
    del buffer  # only the view's base link keeps it
    w.grad.zero_()
    base = w.grad._data.base
    _loss(x, w).backward()
    np.testing.assert_allclose(base[1], _expected_grad(x, w), rtol=1e-5)


def test_two_tensors_sharing_one_zeroed_array_both_see_the_gradient():
    x, w = _zeroed_after_one_step()
    other = torch.from_numpy(w.grad.numpy())
    w.grad.zero_()
    _loss(x, w).backward()
    np.testing.assert_allclose(other.numpy(), _expected_grad(x, w), rtol=1e-5)


def test_one_gradient_array_is_never_given_to_two_leaves():
    """(w + v): the sum hands the same gradient array to both inputs; each .grad must still get its own."""
    _, w = _net()
    v = w.detach().clone().requires_grad_()
    (w + v).pow(2).sum().backward()
    w.grad.zero_()
    v.grad.zero_()
    (w + v).pow(2).sum().backward()
    assert not np.shares_memory(w.grad.numpy(), v.grad.numpy())
    w.grad.add_(1.0)
    np.testing.assert_allclose(v.grad.numpy(), 2 * (w.detach().numpy() + v.detach().numpy()), rtol=1e-6)


def test_training_with_zero_matches_training_with_grad_none_step_for_step():
    """The tutorial's loop with w.grad.zero_() (assigned) and with w.grad = None (PyTorch's default) agree."""
    results = []
    for reset in ("zero", "none"):
        x, w = _net(3)
        losses = []
        for _ in range(20):
            loss = _loss(x, w)
            loss.backward()
            losses.append(loss.item())
            with torch.no_grad():
                w -= 1e-3 * w.grad
                if reset == "zero":
                    w.grad.zero_()
                else:
                    w.grad = None
        results.append((losses, w.detach().numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


class _HandsBack(torch.autograd.Function):
    """Identity whose backward returns the gradient as the case asks: a view into an array it keeps, or a
    Fortran-ordered copy."""

    kept = None
    how = "view"

    @staticmethod
    def forward(ctx, w):
        return w.clone()

    @staticmethod
    def backward(ctx, g):
        if _HandsBack.how == "view":
            big = np.zeros((2, *g.shape), dtype=np.float32)
            big[0] = g.numpy()
            _HandsBack.kept = big
            return torch.from_numpy(big[0])
        return torch.from_numpy(np.asfortranarray(g.numpy()))


@pytest.mark.parametrize("how", ["view", "fortran"])
def test_a_gradient_that_is_a_view_or_laid_out_otherwise_is_added_not_taken(how):
    x, w = _zeroed_after_one_step()
    _HandsBack.how = how
    assert _waiting(w.grad)
    _loss(x, _HandsBack.apply(w)).backward()
    expected = _expected_grad(x, w)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)
    assert w.grad._data.strides == w._data.strides  # .grad keeps the parameter's layout
    if how == "view":
        _HandsBack.kept[0] = 99.0  # the Function's own array: not .grad's
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)
