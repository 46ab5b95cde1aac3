"""The rest of autograd's API a script meets, held to PyTorch: ``autograd.functional.hvp`` and ``vhp``,
``autograd.grad(..., is_grads_batched=True)``, ``Tensor.register_post_accumulate_grad_hook`` (the "fuse the
optimizer step into backward" recipe), and modules' full backward hooks (``register_full_backward_hook``,
``register_full_backward_pre_hook``: the gradients at a layer's outputs and inputs, the usual way to watch gradient
flow layer by layer). Each raised AttributeError or TypeError before."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine


def _t(lib, *shape, seed=0, requires_grad=False):
    return lib.tensor(np.random.default_rng(seed).uniform(-1, 1, shape), dtype=lib.float64,
                      requires_grad=requires_grad)


def _second_order(lib):
    AF = lib.autograd.functional

    def f(x):
        return (x.exp() * x).sum()

    def g(a, b):
        return ((a * b).sum() ** 2)

    x, v = _t(lib, 3), _t(lib, 3, seed=2)
    out = {}
    for name in ("hvp", "vhp"):
        value, product = getattr(AF, name)(f, x, v)
        out[name] = (value.item(), product.tolist())
        value, (pa, pb) = getattr(AF, name)(g, (_t(lib, 2), _t(lib, 2, seed=1)), (_t(lib, 2, seed=3),
                                                                                  _t(lib, 2, seed=4)))
        out[name + " two"] = (value.item(), pa.tolist(), pb.tolist())
    scalar_in = lib.tensor(0.5, dtype=lib.float64)
    out["v None"] = AF.hvp(lambda s: s ** 3, scalar_in)[1].item()
    return out


def test_hvp_and_vhp():
    got = _second_order(engine)
    # f = sum x e^x: H is diagonal, (x + 2) e^x; so H v = v (x + 2) e^x
    x, v = np.random.default_rng(0).uniform(-1, 1, 3), np.random.default_rng(2).uniform(-1, 1, 3)
    np.testing.assert_allclose(got["hvp"][1], v * (x + 2) * np.exp(x), rtol=1e-12)
    assert got["hvp"] == got["vhp"] and got["v None"] == pytest.approx(3.0)  # (s^3)'' = 6 s = 3
    with pytest.raises(RuntimeError, match="should contain a single element"):
        engine.autograd.functional.hvp(lambda t: t * 2, _t(engine, 3), _t(engine, 3))


@pytest.mark.torch
def test_hvp_and_vhp_are_pytorchs():
    torch = pytest.importorskip("torch")
    ours, theirs = _second_order(engine), _second_order(torch)
    assert ours.keys() == theirs.keys()
    for k in ours:
        flat_ours = np.hstack([np.ravel(part) for part in (ours[k] if isinstance(ours[k], tuple) else (ours[k],))])
        flat_theirs = np.hstack([np.ravel(part) for part in (theirs[k] if isinstance(theirs[k], tuple)
                                                             else (theirs[k],))])
        np.testing.assert_allclose(flat_ours, flat_theirs, rtol=1e-12)


def test_grad_with_a_batch_of_grad_outputs():
    x = _t(engine, 3, requires_grad=True)
    y = x * x
    (rows,) = engine.autograd.grad(y, x, engine.eye(3, dtype=engine.float64), is_grads_batched=True)
    np.testing.assert_allclose(rows.numpy(), np.diag(2 * x.detach().numpy()))  # the Jacobian, row by row
    with pytest.raises(RuntimeError, match="requires grad_outputs to be given when is_grads_batched=True"):
        engine.autograd.grad(y, x, is_grads_batched=True)


def _fused_optimizer(lib):
    """The recipe: each parameter's optimizer steps inside backward, as its gradient is complete."""
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        model.bias.copy_(lib.tensor([0.05, -0.05]))
    optimizers = {p: lib.optim.SGD([p], lr=0.1) for p in model.parameters()}
    calls = []

    def step(p):
        calls.append(tuple(p.shape))
        optimizers[p].step()
        optimizers[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    for _ in range(2):
        model(x).pow(2).sum().backward()
    handles[0].remove()
    model(x).sum().backward()
    return sorted(calls), np.round(model.weight.detach().numpy(), 5).tolist(), model.weight.grad is None


def test_post_accumulate_grad_hooks_step_inside_backward():
    calls, weight, weight_grad_none = _fused_optimizer(engine)
    assert calls == [(2,), (2,), (2,), (2, 3), (2, 3)]  # the bias's hook once more after the weight's was removed
    assert not weight_grad_none  # (its hook, which zeroed it, was removed: the last backward's gradient stays)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (engine.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.torch
def test_post_accumulate_grad_hooks_are_pytorchs():
    torch = pytest.importorskip("torch")
    assert _fused_optimizer(engine) == _fused_optimizer(torch)


def _hooked(lib, x_requires_grad, pre_doubles=False):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    with lib.no_grad():
        m[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        m[0].bias.copy_(lib.tensor([0.05, -0.05]))
    log = []

    def rounded(gs):
        return tuple(None if g is None else np.round(g.detach().numpy(), 5).tolist() for g in gs)

    m[0].register_full_backward_hook(lambda mod, gi, go: log.append(("linear", rounded(gi), rounded(go))))
    m[1].register_full_backward_hook(lambda mod, gi, go: log.append(("tanh", rounded(gi), rounded(go))))
    m[1].register_full_backward_pre_hook(
        lambda mod, go: log.append(("tanh pre", rounded(go))) or ((go[0] * 2,) if pre_doubles else None))
    m[0].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,) if gi[0] is not None else None)
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], requires_grad=x_requires_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(x).sum().backward()
    warned = [str(w.message).split(" See ")[0] for w in caught]
    return log, (x.grad.tolist() if x.grad is not None else None), np.round(m[0].weight.grad.numpy(), 5).tolist(), \
        warned


def _two_inputs(lib):
    class Two(lib.nn.Module):
        def forward(self, a, b, scale=2.0):
            return a * b * scale, a + b

    log = []
    t = Two()
    t.register_full_backward_hook(lambda mod, gi, go: log.append(
        (len(gi), [None if g is None else g.tolist() for g in gi], [None if g is None else g.tolist() for g in go])))
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    p, q = t(a, lib.tensor([3.0, 4.0]))
    (p.sum() + (q * 3).sum()).backward()
    return log, a.grad.tolist()


def test_full_backward_hooks_see_the_gradients_at_a_layers_outputs_and_inputs():
    log, x_grad, weight_grad, warned = _hooked(engine, True)
    assert [entry[0] for entry in log] == ["tanh pre", "tanh", "linear"]
    assert log[0][1] == ([[1.0, 1.0], [1.0, 1.0]],)  # d sum / d tanh's output
    assert log[1][2] == log[0][1] and log[2][2] == log[1][1]  # tanh's grad_input is the linear's grad_output
    assert x_grad == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]] and not warned  # the second hook replaced grad_input
    log, x_grad, _, warned = _hooked(engine, False)
    assert log[2][1] == (None,) and x_grad is None
    assert warned == ["Full backward hook is firing when gradients are computed with respect to module outputs "
                      "since no inputs require gradients."]
    doubled = _hooked(engine, True, pre_doubles=True)
    assert doubled[0][1][2] == ([[2.0, 2.0], [2.0, 2.0]],)  # the pre-hook's return is tanh's grad_output
    assert _two_inputs(engine) == ([(2, [[9.0, 11.0], [0.0, 0.0]], [[1.0, 1.0], [3.0, 3.0]])], [9.0, 11.0])


@pytest.mark.torch
def test_full_backward_hooks_are_pytorchs():
    torch = pytest.importorskip("torch")
    for args in ((True,), (False,), (True, True)):
        ours, theirs = _hooked(engine, *args), _hooked(torch, *args)
        assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
    assert _two_inputs(engine) == _two_inputs(torch)




@pytest.mark.torch
def test_grad_computes_only_the_gradients_asked_for_as_pytorchs():
    """autograd.grad(outputs, x) runs only the nodes between the outputs and x, each for the inputs that lead to
    x: a refused gradient of another input is not asked for (PyTorch's engine prunes the same way)."""
    torch = pytest.importorskip("torch")
    for L in (engine, torch):
        a = L.tensor([1.5, 2.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([0.5, 3.0], dtype=L.float64, requires_grad=True)
        for create_graph in (False, True):
            g, = L.autograd.grad(L.igamma(a, x).sum(), x, create_graph=create_graph)
            np.testing.assert_allclose(g.detach().numpy(), [0.48394144903828673, 0.14936120510359183], rtol=1e-14)
            g, = L.autograd.grad(L.special.zeta(a + 1, x).sum(), x, create_graph=create_graph)
            assert g.shape == (2,)
        y = L.igamma(a, x).sum()
        y.backward(inputs=[x])
        assert a.grad is None and x.grad is not None
        with pytest.raises(NotImplementedError, match="igamma: input"):
            L.autograd.grad(L.igamma(a, x).sum(), a)

    for L in (engine, torch):
        calls = []

        class Counted(L.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, gy, calls=calls):
                calls.append(1)
                return gy * 2

        a = L.tensor([1.0, 2.0], requires_grad=True)
        x = L.tensor([3.0, 4.0], requires_grad=True)
        out = (Counted.apply(a) * x).sum() + (x * x).sum()
        g, = L.autograd.grad(out, x, retain_graph=True)
        np.testing.assert_allclose(g.numpy(), [8.0, 12.0])
        assert calls == []  # the branch to a alone is never run
        L.autograd.grad(out, a)
        assert calls == [1]
        # a wanted non-leaf: its gradient delivered, the node that made it not run; a hook fires only on the way
        del calls[:]
        h = Counted.apply(a)
        hooked = []
        side = x * 5
        side.register_hook(hooked.append)
        out = (h * 3).sum() + side.sum()
        g, = L.autograd.grad(out, h, retain_graph=True)
        assert g.tolist() == [3.0, 3.0] and calls == [] and hooked == []
        L.autograd.grad(out, [h, x])
        assert calls == [] and len(hooked) == 1
