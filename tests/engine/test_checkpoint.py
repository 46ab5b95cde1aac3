"""``torch.utils.checkpoint``: ``checkpoint`` (both variants) and ``checkpoint_sequential`` give the gradients of the
same net run without them, PyTorch 2.13's from the same weights, with dropout inside (the second run draws the same
masks); the non-reentrant one records PyTorch's nodes, lets go of what they saved until the backward needs it, and
gives parameters inside their gradients though no input requires one, where the reentrant one gives none (and
warns, as PyTorch's); ``autograd.grad`` works through the first and is refused by the second."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine.utils import checkpoint as C

RNG = np.random.default_rng(21)
X = RNG.standard_normal((5, 6))


def _net(lib):
    lib.manual_seed(3)
    nn = lib.nn
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2)
                         ).double()


def _grads(lib, mode):
    """The loss and every gradient of one step of _net, run plainly or through a checkpoint."""
    net = _net(lib)
    x = lib.tensor(X, requires_grad=True)
    lib.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the reentrant default's warning: its own test)
        if mode == "plain":
            out = net(x)
        elif mode == "sequential":
            out = lib.utils.checkpoint.checkpoint_sequential(net, 2, x, use_reentrant=False)
        else:
            head = lambda t: net[3:](net[:3](t))  # noqa: E731
            out = lib.utils.checkpoint.checkpoint(head, x, use_reentrant=(mode == "reentrant"))
    loss = out.pow(2).sum()
    loss.backward()
    after = lib.rand(3).tolist()  # the generator goes on as it would have without the checkpoint
    return [loss.item(), x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()] + [after]


@pytest.mark.parametrize("mode", ["non-reentrant", "reentrant", "sequential"])
def test_gradients_are_those_of_the_plain_run_dropout_included(mode):
    plain, checked = _grads(engine, "plain"), _grads(engine, mode)
    assert checked[0] == plain[0]
    for a, b in zip(checked[1:-1], plain[1:-1]):
        np.testing.assert_array_equal(a, b)
    assert checked[-1] == plain[-1]


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["non-reentrant", "reentrant", "sequential"])
def test_gradients_are_torchs(mode):
    """From the same weights (copied in: the generators differ) and without dropout's draws."""
    import torch

    results = []
    for lib in (engine, torch):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2)).double()
        with lib.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape))))
        x = lib.tensor(X, requires_grad=True)
        if mode == "sequential":
            out = lib.utils.checkpoint.checkpoint_sequential(net, 3, x, use_reentrant=False)
        else:
            out = lib.utils.checkpoint.checkpoint(net, x, use_reentrant=(mode == "reentrant"))
        out.pow(2).sum().backward()
        results.append([x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_non_reentrant_records_torchs_nodes_and_lets_go_of_their_saved_values():
    calls = []
    w = engine.tensor(RNG.standard_normal((6, 4)), requires_grad=True)

    def block(t):
        calls.append(1)
        return (t @ w).tanh().exp()

    x = engine.tensor(X, requires_grad=True)
    y = C.checkpoint(block, x, use_reentrant=False)
    assert y.grad_fn.name() == "ExpBackward0" and y.grad_fn.next_functions[0][0].name() == "TanhBackward0"
    region = C._region([y], -1)
    assert [n.name() for n in region] == ["MmBackward0", "TanhBackward0", "ExpBackward0"]
    assert all(n.saved is None for n in region)  # nothing kept for the backward
    y.sum().backward()
    assert len(calls) == 2  # the forward, and once again in the backward
    expected = np.exp(np.tanh(X @ w.detach().numpy()))
    np.testing.assert_allclose(x.grad.numpy(), ((expected * (1 - np.tanh(X @ w.detach().numpy()) ** 2))
                                                @ w.detach().numpy().T), rtol=1e-12)


def test_parameters_inside_get_gradients_when_no_input_requires_one_only_without_reentrance():
    net = engine.nn.Linear(6, 2).double()
    x = engine.tensor(X)  # (no gradient wanted for the input: a frozen embedding's output, say)
    C.checkpoint(net, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(net.weight.grad.numpy(), np.tile(X.sum(0), (2, 1)), rtol=1e-12)
    net.zero_grad()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
        y = C.checkpoint(net, x, use_reentrant=True)
    assert not y.requires_grad and net.weight.grad is None  # PyTorch's pitfall, kept


def test_autograd_grad_goes_through_the_non_reentrant_one_and_the_default_warns():
    x = engine.tensor(X, requires_grad=True)
    (g,) = engine.autograd.grad(C.checkpoint(lambda t: t.sin(), x, use_reentrant=False).sum(), x)
    np.testing.assert_allclose(g.numpy(), np.cos(X), rtol=1e-15)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        y = C.checkpoint(lambda t: t.sin(), x)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X), rtol=1e-15)


def test_a_function_that_records_other_ops_the_second_time_is_refused():
    state = {"n": 0}

    def moody(t):
        state["n"] += 1
        return t.sin() if state["n"] == 1 else t.sin().cos()

    y = C.checkpoint(moody, engine.tensor(X, requires_grad=True), use_reentrant=False)
    with pytest.raises(C.CheckpointError, match="the first run recorded 1 ops \\(SinBackward0\\), the second 2"):
        y.sum().backward()


def test_in_place_ops_inside_and_kwargs_and_a_second_backward_with_retain_graph():
    x = engine.tensor(X, requires_grad=True)

    def block(t, *, scale):
        h = t * scale
        h.mul_(2)
        return h.relu()

    y = C.checkpoint(block, x, scale=1.5, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    np.testing.assert_array_equal(first, np.where(X > 0, 3.0, 0.0))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        C.checkpoint(block, x, scale=1.5, use_reentrant=True)


def test_bad_calls_are_refused_in_torchs_words():
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        C.checkpoint(lambda t: t, engine.ones(1), use_reentrant=False, determinism_check="x")
    with pytest.raises(ValueError, match="segments must be between 1 and the number of functions"):
        C.checkpoint_sequential([engine.nn.Tanh()], 0, engine.ones(1), use_reentrant=False)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_inside_draws_the_same_masks_on_each_device(device, use_reentrant):
    """On a CUDA device (CuPy's generators keep no state to set back) the first run starts from a seed drawn from
    the device's generator, and the second is seeded with it again."""
    def step(checkpointed):
        engine.manual_seed(11)
        lin = engine.nn.Linear(6, 6).double().to(device)
        x = engine.tensor(X, device=device, requires_grad=True)

        def block(t):
            return engine.nn.functional.dropout(lin(t), 0.5).tanh()

        out = C.checkpoint(block, x, use_reentrant=use_reentrant) if checkpointed else block(x)
        out.pow(2).sum().backward()
        return out.detach().cpu().numpy(), x.grad.cpu().numpy(), lin.weight.grad.cpu().numpy()

    first = step(True)
    assert (first[0] == 0).any()  # (dropout dropped some)
    if device == "cpu":  # the same draws as without the checkpoint
        for a, b in zip(first, step(False)):
            np.testing.assert_array_equal(a, b)
    # on each device: the gradients are those of the mask the forward drew (its output is zero exactly where an
    # element was dropped, and a second run drawing another mask would put gradients elsewhere)
    engine.manual_seed(11)
    w = engine.nn.Linear(6, 6).double().weight.detach().numpy()
    out = first[0]
    g = 2 * out * (1 - out ** 2) * (out != 0) * 2.0  # d(tanh(z)^2)/dz through dropout's scale 1 / (1 - 0.5)
    np.testing.assert_allclose(first[2], g.T @ X, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(first[1], g @ w, rtol=1e-10, atol=1e-12)


def test_a_second_derivative_goes_through_the_non_reentrant_one():
    results = []
    for checked in (True, False):
        x = engine.tensor(X, requires_grad=True)
        y = C.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False) if checked else x.sin().exp()
        (g,) = engine.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        results.append((g.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][1], np.exp(np.sin(X)) * (np.cos(X) ** 2 - np.sin(X)), rtol=1e-12)
