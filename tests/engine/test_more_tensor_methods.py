"""Tensor methods a script of one's own may meet, held to PyTorch: ``hardshrink``, ``prelu``, ``nextafter_``,
``new_empty_strided``, ``histogram``, ``nonzero_static``, ``dim_order``, ``is_set_to``, ``const_data_ptr``,
``module_load``, ``ormqr`` (and ``torch.ormqr``, with its gradient), and ``Module.to_empty``."""

from __future__ import annotations

import numpy as np
import pytest

import engine

rng = np.random.default_rng(11)


@pytest.mark.torch
def test_each_method_gives_pytorchs_result():
    torch = pytest.importorskip("torch")
    x_np = np.array([[0.0, 1.0, -0.3], [2.0, 0.0, -3.0]])
    results = []
    for L in (engine, torch):
        x = L.tensor(x_np)
        out = [x.hardshrink(0.5).tolist(), x.hardshrink().tolist(), x.prelu(L.tensor([0.25], dtype=L.float64)).tolist(),
               x.nonzero_static(size=6).tolist(), x.nonzero_static(size=2, fill_value=7).tolist(),
               L.zeros(0, 2).nonzero_static(size=2).tolist(), x.dim_order(), x.t().dim_order(),
               L.zeros(2, 3, 4).permute(2, 0, 1).dim_order(), x.is_set_to(x), x.is_set_to(x.clone()),
               x.is_set_to(x[0]), x.const_data_ptr() == x.data_ptr(),
               L.tensor([1.0, 2.0]).nextafter_(L.tensor([3.0, 0.0])).tolist(),
               x.new_empty_strided((2, 3), (1, 2)).stride(), x.new_empty_strided((2, 2), (2, 1)).dtype == x.dtype,
               [t.tolist() for t in x.histogram(4)], [t.tolist() for t in x.histogram(3, range=(-1.0, 2.0),
                                                                                   density=True)]]
        results.append(out)
    assert results[0] == results[1]
    for L in (engine, torch):  # PyTorch's refusal of two float dtypes in prelu
        with pytest.raises(RuntimeError, match="prelu: Type promoting not supported. Got Double and Float"):
            L.tensor(x_np).prelu(L.tensor([0.25]))


@pytest.mark.torch
@pytest.mark.parametrize("left, transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_multiplies_by_geqrfs_q_as_pytorchs_with_its_gradient(left, transpose):
    torch = pytest.importorskip("torch")
    a_np = rng.standard_normal((2, 6, 4))
    c_np = rng.standard_normal((2, 6, 3) if left else (2, 3, 6))
    results = []
    for L in (engine, torch):
        a, tau = L.geqrf(L.tensor(a_np))
        a, tau = a.detach().requires_grad_(), tau.detach().requires_grad_()
        c = L.tensor(c_np, requires_grad=True)
        out = L.ormqr(a, tau, c, left=left, transpose=transpose)
        w = L.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
        (out * w).sum().backward()
        results.append([out.detach().numpy(), a.grad.numpy(), tau.grad.numpy(), c.grad.numpy()])
        same = a.detach().ormqr(tau.detach(), c.detach(), left, transpose)
        np.testing.assert_allclose(same.numpy(), out.detach().numpy(), rtol=1e-12)
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_ormqr_refuses_a_mismatched_side():
    a, tau = engine.geqrf(engine.randn(5, 3, dtype=engine.float64))
    with pytest.raises(RuntimeError, match=r"other.shape\[-2\] must be equal to input.shape\[-2\]"):
        engine.ormqr(a, tau, engine.randn(4, 2, dtype=engine.float64))
    with pytest.raises(RuntimeError, match=r"other.shape\[-1\] must be equal to input.shape\[-2\]"):
        engine.ormqr(a, tau, engine.randn(2, 4, dtype=engine.float64), left=False)


def test_module_to_empty_keeps_shapes_dtypes_and_parameters():
    net = engine.nn.Sequential(engine.nn.Linear(3, 4), engine.nn.BatchNorm1d(4)).double()
    before = {k: (tuple(v.shape), v.dtype) for k, v in net.state_dict().items()}
    weight = net[0].weight
    assert net.to_empty(device="cpu") is net
    assert {k: (tuple(v.shape), v.dtype) for k, v in net.state_dict().items()} == before
    assert net[0].weight is weight and isinstance(weight, engine.nn.Parameter) and weight.requires_grad
    outer = engine.nn.Sequential(engine.nn.Linear(2, 2))
    assert outer.to_empty(device="cpu", recurse=False) is outer  # (it has no parameters of its own)
    p = engine.nn.Parameter(engine.ones(2))
    assert p.module_load(engine.zeros(2)).tolist() == [0.0, 0.0]
    assert p.module_load(engine.zeros(2, requires_grad=True), assign=True).requires_grad is False
