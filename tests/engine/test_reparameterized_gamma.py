"""Reparameterised draws of the gamma family (``Gamma``, ``Chi2``, ``Beta``, ``Dirichlet``, ``StudentT``,
``InverseGamma``): their gradients are PyTorch's implicit ones for the same draw (``torch._standard_gamma_grad``,
``torch._dirichlet_grad``, to 1e-12 over regimes of small and large shapes), and pathwise-correct (the mean of
many draws' gradient is the gradient of the mean)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.distributions as D
from engine.distributions._reparam import dirichlet_grad, standard_gamma_grad


@pytest.mark.torch
def test_the_implicit_gradients_are_pytorchs_in_every_regime():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    alpha = np.concatenate([rng.uniform(0.01, 1, 500), rng.uniform(1, 8, 500), rng.uniform(8, 200, 500)])
    x = rng.gamma(alpha)
    x[:5] = [1e-30, 0.79, 0.81, 5.0, 1e3]
    ours = standard_gamma_grad(np, alpha, x)
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)
    a, b = rng.uniform(0.05, 30, 3000), rng.uniform(0.05, 30, 3000)
    xb = np.clip(rng.beta(a, b), 1e-12, 1 - 1e-12)
    ours = dirichlet_grad(np, xb, a, a + b)
    theirs = torch._dirichlet_grad(torch.tensor(xb), torch.tensor(a), torch.tensor(a + b)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-300)


@pytest.mark.torch
def test_rsample_gradients_are_pytorchs_for_the_draw_made():
    torch = pytest.importorskip("torch")
    engine.manual_seed(1)
    c = engine.tensor([0.3, 2.0, 15.0], dtype=engine.float64, requires_grad=True)
    r = engine.tensor([1.5, 0.5, 2.0], dtype=engine.float64, requires_grad=True)
    v = D.Gamma(c, r).rsample((4,))
    (v * engine.arange(12.0, dtype=engine.float64).reshape(4, 3)).sum().backward()
    w = torch.arange(12.0, dtype=torch.float64).reshape(4, 3)
    x = torch.tensor(v.detach().numpy()) * torch.tensor(r.detach().numpy())
    grad_c = (w * torch._standard_gamma_grad(torch.tensor(c.detach().numpy()).expand(4, 3), x)
              / torch.tensor(r.detach().numpy())).sum(0)
    np.testing.assert_allclose(c.grad.numpy(), grad_c.numpy(), rtol=1e-12)
    np.testing.assert_allclose(r.grad.numpy(), (-(w * x) / torch.tensor(r.detach().numpy()) ** 2).sum(0).numpy(),
                               rtol=1e-12)

    conc = engine.tensor([[0.5, 2.0, 7.0], [3.0, 3.0, 3.0]], dtype=engine.float64, requires_grad=True)
    s = D.Dirichlet(conc).rsample()
    g = engine.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]], dtype=engine.float64)
    (s * g).sum().backward()
    xs, alpha, gt = (torch.tensor(t.detach().numpy()) for t in (s, conc, g))
    total = alpha.sum(-1, True).expand_as(alpha)
    expected = torch._dirichlet_grad(xs, alpha, total) * (gt - (xs * gt).sum(-1, True))
    np.testing.assert_allclose(conc.grad.numpy(), expected.numpy(), rtol=1e-12)


def test_pathwise_gradients_average_to_the_gradient_of_the_mean():
    engine.manual_seed(0)
    n = 40_000
    for shape in (0.4, 3.0, 30.0):  # d/dc E[Gamma(c, 2)] = 1/2
        c = engine.tensor(shape, dtype=engine.float64, requires_grad=True)
        D.Gamma(c, 2.0).rsample((n,)).mean().backward()
        assert c.grad.item() == pytest.approx(0.5, rel=0.03), shape
    a = engine.tensor(2.0, dtype=engine.float64, requires_grad=True)
    b = engine.tensor(5.0, dtype=engine.float64, requires_grad=True)
    D.Beta(a, b).rsample((n,)).mean().backward()  # E = a / (a + b): d/da = b / (a+b)^2, d/db = -a / (a+b)^2
    assert a.grad.item() == pytest.approx(5 / 49, rel=0.03) and b.grad.item() == pytest.approx(-2 / 49, rel=0.03)
    df = engine.tensor(5.0, dtype=engine.float64, requires_grad=True)
    scale = engine.tensor(2.0, dtype=engine.float64, requires_grad=True)
    D.StudentT(df, 1.0, scale).rsample((n,)).pow(2).mean().backward()  # E[t^2] = 1 + scale^2 df / (df - 2)
    assert scale.grad.item() == pytest.approx(2 * 2 * 5 / 3, rel=0.05)
    assert df.grad.item() == pytest.approx(-(2 ** 2) * 2 / 9, rel=0.15)  # d/ddf of 4 df/(df-2) = -8/(df-2)^2
    ig = D.InverseGamma(engine.tensor(4.0, dtype=engine.float64, requires_grad=True), 3.0)
    assert ig.has_rsample and D.Chi2(engine.tensor(3.0)).has_rsample and D.Dirichlet(engine.ones(3)).has_rsample


def test_draws_are_on_the_tensors_device_and_dtype(simulated_gpu):
    c = engine.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    v = D.Gamma(c, 1.0).rsample((3,))
    v.sum().backward()
    assert v.device.type == "cuda" and v.dtype == engine.float32 and c.grad.device.type == "cuda"
    assert bool((c.grad > 0).all())
