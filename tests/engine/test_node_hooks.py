"""A node's own hooks (``grad_fn.register_hook``, ``register_prehook``, ``metadata``) and the deprecated
``Module.register_backward_hook`` built on them, held to PyTorch: what each hook sees, what its return replaces,
removal, the recorded walk (``create_graph``), PyTorch's errors and FutureWarnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

def _hooked_program(L, create_graph):
    log = []
    a = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64, requires_grad=True)
    b = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
    c = L.tensor([2.0, 3.0], dtype=L.float64)
    h = a * b  # b broadcast: its gradient reaches the hook summed to b's shape
    h2 = h + c
    out = (h2 * h2).sum()

    def rounded(grads):
        return [None if g is None else g.detach().numpy().round(9).tolist() for g in grads]

    def post(grad_inputs, grad_outputs):
        log.append(("post", rounded(grad_inputs), rounded(grad_outputs)))
        return grad_inputs[0] * 2, grad_inputs[1]

    def pre(grad_outputs):
        log.append(("pre", rounded(grad_outputs)))
        return (grad_outputs[0] * 10,)

    handle = h.grad_fn.register_hook(post)
    h2.grad_fn.register_prehook(pre)
    h2.grad_fn.metadata["note"] = "kept"
    if create_graph:
        ga, gb = L.autograd.grad(out, [a, b], create_graph=True)
        log.append(("grads", rounded([ga, gb])))
        log.append(("second", rounded(L.autograd.grad(gb.sum(), a))))
    else:
        out.backward(retain_graph=True)
        log.append(("grads", rounded([a.grad, b.grad])))
        handle.remove()
        a.grad = None
        out.backward()
        log.append(("removed", rounded([a.grad])))
    log.append(dict(h2.grad_fn.metadata))
    return log


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_nodes_hooks_see_and_replace_what_pytorchs_do(create_graph):
    torch = pytest.importorskip("torch")
    ours, theirs = _hooked_program(engine, create_graph), _hooked_program(torch, create_graph)
    assert ours == theirs
    assert ours[0][0] == "pre" and ours[1][0] == "post"


def test_a_nodes_hooks_by_hand_and_the_wrong_number_refused():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append(go[0].tolist()))
    y.sum().backward()  # (a one-root backward: the walk that calls node hooks, not the compiled one)
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [3.0, 3.0]

    def bad(grad_inputs, grad_outputs):
        return (grad_inputs[0],) * 3

    z = x * x.detach()
    z.grad_fn.register_hook(bad)
    with pytest.raises(RuntimeError, match=r"hook 'bad' has returned an incorrect number of values \(got 3, but "
                                           r"expected 2\)"):
        z.sum().backward()


@pytest.mark.torch
@pytest.mark.parametrize("layer", ["Tanh", "Sigmoid", "ReLU", "GELU"])
def test_module_register_backward_hook_is_pytorchs_on_a_one_node_module(layer):
    torch = pytest.importorskip("torch")
    results = []
    for L in (engine, torch):
        log = []
        module = getattr(L.nn, layer)()
        def hook(m, gi, go, log=log):
            log.append((type(m).__name__, [None if g is None else g.numpy().round(9).tolist() for g in gi],
                        [g.numpy().round(9).tolist() for g in go]))

        module.register_backward_hook(hook)
        x = L.tensor([[0.3, -1.2, 2.0], [1.5, 0.0, -0.7]], dtype=L.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = module(x)
        (y * L.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=L.float64)).sum().backward()
        results.append((log, [(w.category.__name__, str(w.message)) for w in caught], x.grad.numpy()))
    (log, caught, grad), (their_log, their_caught, their_grad) = results
    assert log == their_log and caught == their_caught
    np.testing.assert_allclose(grad, their_grad, rtol=1e-14)
    assert caught[0][0] == "FutureWarning"  # (x is a leaf: the node's next function is its accumulator)


def test_module_backward_hooks_of_both_kinds_are_refused_together_and_removed():
    lin = engine.nn.Linear(3, 2)
    handle = lin.register_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_full_backward_hook(lambda m, gi, go: None)
    other = engine.nn.Linear(3, 2)
    other.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        other.register_backward_hook(lambda m, gi, go: None)
    # the hook sees the last node of the module's forward (PyTorch's AddmmBackward0, here as there): the
    # gradients of that node's inputs (bias, x, w.t()), as PyTorch documents for this deprecated hook
    seen = []
    lin.register_backward_hook(lambda m, gi, go: seen.append(([tuple(g.shape) for g in gi], tuple(go[0].shape))))
    handle.remove()
    x = engine.randn(4, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        lin(x).sum().backward()
    assert seen == [([(2,), (4, 3), (3, 2)], (4, 2))]  # printed by torch 2.13 for the same hook
    np.testing.assert_allclose(x.grad.numpy(), np.tile(lin.weight.detach().numpy().sum(0), (4, 1)), rtol=1e-6)
