"""``nn.utils.parametrize`` and ``nn.utils.parametrizations`` (weight norm, spectral norm, orthogonal), and the
older hook-based ``nn.utils.weight_norm``/``spectral_norm``: the API on known values, then each against PyTorch
(outputs, every parameter's gradient, the state_dict's keys, a few steps of training)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine import nn
from engine.nn.utils import parametrize


class Symmetric(nn.Module):
    def forward(self, X):  # noqa: N803
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):  # noqa: N803
        return A.triu()


class Scaled(nn.Module):
    def __init__(self, by):
        super().__init__()
        self.by = by
        self.calls = 0

    def forward(self, X):  # noqa: N803
        self.calls += 1
        return X * self.by

    def right_inverse(self, A):  # noqa: N803
        return A / self.by


def _layer():
    layer = nn.Linear(3, 3, dtype=engine.float64)
    with engine.no_grad():
        layer.weight.copy_(engine.arange(9.0, dtype=engine.float64).reshape(3, 3))
        layer.bias.zero_()
    return layer


def test_a_parametrized_weight_is_read_through_the_function_of_its_original():
    layer = _layer()
    original = layer.weight
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, nn.Linear)
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    # the original is the same Parameter object (an optimizer made before keeps training it), now right_inverse'd
    assert layer.parametrizations.weight.original is original
    assert original.tolist() == [[0.0, 1.0, 2.0], [0.0, 4.0, 5.0], [0.0, 0.0, 8.0]]
    assert layer.weight.tolist() == [[0.0, 1.0, 2.0], [1.0, 4.0, 5.0], [2.0, 5.0, 8.0]]
    assert [n for n, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    # the gradient reaches the original through the function: d/dU of sum(sym(U) * x x^T-ish)
    layer(engine.ones(1, 3, dtype=engine.float64)).sum().backward()
    assert original.grad.tolist() == [[1.0, 2.0, 2.0], [0.0, 1.0, 2.0], [0.0, 0.0, 1.0]]
    # assigning writes right_inverse(value) into the original
    layer.weight = engine.full((3, 3), 7.0, dtype=engine.float64)
    assert original.tolist() == [[7.0, 7.0, 7.0], [0.0, 7.0, 7.0], [0.0, 0.0, 7.0]]
    assert layer.weight.tolist() == [[7.0] * 3] * 3
    # other Linear layers keep their class and a plain weight
    assert type(nn.Linear(2, 2)) is nn.Linear and "weight" in dict(nn.Linear(2, 2).named_parameters())


def test_parametrizations_chain_cache_and_come_off():
    layer = _layer()
    scale = Scaled(2.0)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    parametrize.register_parametrization(layer, "weight", scale)
    assert layer.weight.tolist() == [[0.0, 2.0, 4.0], [2.0, 8.0, 10.0], [4.0, 10.0, 16.0]]
    scale.calls = 0
    with parametrize.cached():
        first, second = layer.weight, layer.weight
        assert first is second and scale.calls == 1
    assert layer.weight is not first and scale.calls == 2
    layer.weight = engine.full((3, 3), 4.0, dtype=engine.float64)  # right_inverse of both, in reverse order
    assert layer.parametrizations.weight.original.tolist() == [[2.0, 2.0, 2.0], [0.0, 2.0, 2.0], [0.0, 0.0, 2.0]]
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight.tolist() == [[2.0, 2.0, 2.0], [0.0, 2.0, 2.0], [0.0, 0.0, 2.0]]
    assert isinstance(layer.weight, nn.Parameter) and [n for n, _ in layer.named_parameters()] == ["bias", "weight"]
    parametrize.register_parametrization(layer, "weight", Symmetric())
    parametrize.remove_parametrizations(layer, "weight")  # leave_parametrized: the symmetric value stays
    assert layer.weight.tolist() == [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]


def test_training_a_parametrized_weight_keeps_its_form():
    engine.manual_seed(0)
    layer = nn.Linear(4, 4)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    opt = engine.optim.SGD(layer.parameters(), lr=0.1)
    x, y = engine.randn(8, 4), engine.randn(8, 4)
    for _ in range(5):
        opt.zero_grad()
        nn.functional.mse_loss(layer(x), y).backward()
        opt.step()
    w = layer.weight.detach()
    assert bool((w == w.t()).all()) and float((w - w.t()).abs().max()) == 0.0


def test_refusals_name_the_problem():
    layer = _layer()
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name "
                                         "'kernel'"):
        parametrize.register_parametrization(layer, "kernel", Symmetric())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(layer, "weight")

    class Flatten(nn.Module):
        def forward(self, X):  # noqa: N803
            return X.reshape(-1)

    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless the `unsafe` flag"):
        parametrize.register_parametrization(_layer(), "weight", Flatten())
    parametrize.register_parametrization(flat := _layer(), "weight", Flatten(), unsafe=True)
    assert tuple(flat.weight.shape) == (9,)
    with pytest.raises(RuntimeError, match="parametrization Flatten does not implement right_inverse"):
        flat.weight = engine.zeros(9, dtype=engine.float64)
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        nn.utils.parametrizations.orthogonal(_layer(), orthogonal_map="qr")
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        nn.utils.parametrizations.orthogonal(_layer(), "bias")


def test_orthogonal_weights_stay_orthogonal_through_training():
    engine.manual_seed(0)
    for shape, kind in [((5, 5), "matrix_exp"), ((6, 3), "householder"), ((3, 6), "cayley"), ((4, 4), "householder")]:
        layer = nn.Linear(shape[1], shape[0], dtype=engine.float64)
        nn.utils.parametrizations.orthogonal(layer, orthogonal_map=kind)
        opt = engine.optim.Adam(layer.parameters(), lr=0.05)
        x, y = engine.randn(16, shape[1], dtype=engine.float64), engine.randn(16, shape[0], dtype=engine.float64)
        before = layer.weight.detach().clone()
        for _ in range(10):
            opt.zero_grad()
            nn.functional.mse_loss(layer(x), y).backward()
            opt.step()
        w = layer.weight.detach()
        gram = w.t() @ w if shape[0] >= shape[1] else w @ w.t()
        assert np.allclose(gram.numpy(), np.eye(min(shape)), atol=1e-10), (shape, kind)
        assert float((w - before).abs().max()) > 1e-3, (shape, kind)  # (it trained)


# ------------------------------------------------------------------------------------------------ against PyTorch

def _linear(lib, shape, seed=0, cls="Linear"):
    rng = np.random.default_rng(seed)
    if cls == "Linear":
        layer = lib.nn.Linear(shape[1], shape[0]).double()
    elif cls == "Conv2d":
        layer = lib.nn.Conv2d(shape[1], shape[0], 2).double()
    else:
        layer = lib.nn.ConvTranspose2d(shape[1], shape[0], 2).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal(tuple(layer.weight.shape))))
        layer.bias.copy_(lib.tensor(rng.standard_normal(tuple(layer.bias.shape))))
    return layer


def _input(lib, cls, shape):
    rng = np.random.default_rng(5)
    if cls == "Linear":
        return lib.tensor(rng.standard_normal((6, shape[1])))
    return lib.tensor(rng.standard_normal((2, shape[1], 4, 4)))


_CASES = {
    "weight_norm": (lambda L, m: L.nn.utils.parametrizations.weight_norm(m), "Linear", (3, 5)),
    "weight_norm dim=1": (lambda L, m: L.nn.utils.parametrizations.weight_norm(m, dim=1), "Conv2d", (4, 2)),
    "weight_norm dim=None": (lambda L, m: L.nn.utils.parametrizations.weight_norm(m, dim=None), "Linear", (3, 5)),
    "spectral_norm": (lambda L, m: L.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2), "Linear",
                      (3, 5)),
    "spectral_norm conv": (lambda L, m: L.nn.utils.parametrizations.spectral_norm(m), "Conv2d", (4, 2)),
    "spectral_norm transposed": (lambda L, m: L.nn.utils.parametrizations.spectral_norm(m), "ConvTranspose2d",
                                 (3, 2)),
    "orthogonal": (lambda L, m: L.nn.utils.parametrizations.orthogonal(m), "Linear", (4, 4)),
    "orthogonal cayley": (lambda L, m: L.nn.utils.parametrizations.orthogonal(m, orthogonal_map="cayley"), "Linear",
                          (4, 4)),
    "orthogonal householder tall": (lambda L, m: L.nn.utils.parametrizations.orthogonal(m), "Linear", (5, 3)),
    "orthogonal householder wide": (lambda L, m: L.nn.utils.parametrizations.orthogonal(m), "Linear", (3, 5)),
    "orthogonal without trivialization": (
        lambda L, m: L.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder",
                                                            use_trivialization=False), "Linear", (5, 3)),
    "old weight_norm": (lambda L, m: L.nn.utils.weight_norm(m, dim=0), "Conv2d", (4, 2)),
    "old spectral_norm": (lambda L, m: L.nn.utils.spectral_norm(m), "Linear", (3, 5)),
}


def _share_draws(torch, theirs, ours):
    """The random parts (power iteration's start, an orthogonal completion) copied from PyTorch's module."""
    for name, buf in theirs.named_buffers():
        if buf is not None:
            target = dict(ours.named_buffers())[name]
            with engine.no_grad():
                target.copy_(engine.tensor(buf.detach().numpy()))


def _train(lib, layer, cls, shape, steps=3):
    opt = lib.optim.SGD(layer.parameters(), lr=0.05)
    x = _input(lib, cls, shape)
    outs = []
    for _ in range(steps):
        opt.zero_grad()
        y = layer(x)
        (y * y).sum().backward()
        outs.append(y.detach().numpy().copy())
        outs += [p.grad.numpy().copy() for _, p in sorted(layer.named_parameters())]
        opt.step()
    layer.eval()
    outs.append(layer(x).detach().numpy().copy())
    return outs


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_CASES))
def test_parametrizations_train_as_pytorchs(name):
    torch = pytest.importorskip("torch")
    register, cls, shape = _CASES[name]
    theirs, ours = _linear(torch, shape, cls=cls), _linear(engine, shape, cls=cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (the old weight_norm's deprecation: both warn)
        register(torch, theirs)
        register(engine, ours)
    _share_draws(torch, theirs, ours)
    assert type(ours).__name__ == type(theirs).__name__
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert [n for n, _ in sorted(ours.named_parameters())] == [n for n, _ in sorted(theirs.named_parameters())]
    got, want = _train(engine, ours, cls, shape), _train(torch, theirs, cls, shape)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.torch
def test_removing_them_leaves_pytorchs_parameters():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, engine):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            a = lib.nn.utils.weight_norm(_linear(lib, (3, 5)))
            lib.nn.utils.remove_weight_norm(a)
            b = lib.nn.utils.parametrizations.weight_norm(_linear(lib, (3, 5)))
            with lib.no_grad():
                b.parametrizations.weight.original0.mul_(2)
            lib.nn.utils.parametrize.remove_parametrizations(b, "weight")
        results.append([type(a).__name__, sorted(n for n, _ in a.named_parameters()), a.weight.detach().numpy(),
                        type(b).__name__, sorted(n for n, _ in b.named_parameters()), b.weight.detach().numpy()])
    theirs, ours = results
    assert theirs[0::3][:1] == ours[0::3][:1] and theirs[1] == ours[1] and theirs[4] == ours[4]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)
    assert theirs[3] == ours[3] == "Linear"


def test_the_old_weight_norm_warns_as_pytorchs_and_refuses_a_second():
    layer = _layer()
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated in favor of"):
        nn.utils.weight_norm(layer)
    assert sorted(n for n, _ in layer.named_parameters()) == ["bias", "weight_g", "weight_v"]
    assert layer.weight_g.reshape(-1).tolist() == pytest.approx([5 ** 0.5, 50 ** 0.5, 149 ** 0.5])
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(layer)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
        nn.utils.remove_weight_norm(layer, "bias")
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(layer.parameters(), 1.0)


def test_householder_product_and_geqrf_give_the_qr_decomposition():
    a = engine.tensor(np.random.default_rng(0).standard_normal((2, 5, 3)))
    h, tau = engine.geqrf(a)
    q = engine.linalg.householder_product(h, tau)
    r = h.triu()[..., :3, :]
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), atol=1e-12)
    np.testing.assert_allclose((q.mT @ q).numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    with pytest.raises(RuntimeError, match="input.shape\\[-2\\] must be greater than or equal to input.shape\\[-1\\]"):
        engine.linalg.householder_product(a.mT, tau)


@pytest.mark.torch
def test_householder_product_and_its_gradients_are_pytorchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, t, g = rng.standard_normal((3, 6, 4)), rng.standard_normal((3, 3)), rng.standard_normal((3, 6, 4))
    out = []
    for lib in (torch, engine):
        A, tau = lib.tensor(a, requires_grad=True), lib.tensor(t, requires_grad=True)  # noqa: N806
        q = lib.linalg.householder_product(A, tau)
        (q * lib.tensor(g)).sum().backward()
        out.append((q.detach().numpy(), A.grad.numpy(), tau.grad.numpy(), *(x.numpy() for x in lib.geqrf(
            lib.tensor(a)))))
    for x, y in zip(*out):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
