"""The LU decomposition (``linalg.lu_factor``/``lu_factor_ex``/``lu``/``lu_solve``, ``lu_unpack``, the older
``torch.lu``/``lu_solve``) against PyTorch 2.13 on random matrices: the factors and pivots (LAPACK's ``getrf``:
partial pivoting, 1-based int32 pivots), the solutions (left, right, adjoint), every gradient and a second
derivative; singular matrices' ``info`` and refusals; the same on the CuPy stand-in."""

from __future__ import annotations

import numpy as np
import pytest

import engine

pytestmark = [pytest.mark.filterwarnings("ignore:torch.lu is deprecated:UserWarning"),
              pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated:UserWarning")]


def _program(lib, seed):
    rng = np.random.default_rng(seed)
    batch = [(), (2,), (2, 3)][seed % 3]
    n = 1 + seed % 5
    a = lib.tensor(rng.standard_normal(batch + (n, n)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(batch + (n, 2)), requires_grad=True)
    w = [lib.tensor(rng.standard_normal(batch + (n, n))) for _ in range(3)]
    lu, piv = lib.linalg.lu_factor(a)
    p, lower, upper = lib.linalg.lu(a)
    x = lib.linalg.lu_solve(lu, piv, b)
    xh = lib.linalg.lu_solve(lu, piv, b, adjoint=True)
    xr = lib.linalg.lu_solve(lu, piv, b.mT, left=False)
    old = lib.lu_solve(b, *lib.lu(a))
    loss = ((lu * w[0]).sum() + (lower * w[1]).sum() + (upper * w[2]).sum() + (x ** 2).sum() + xh.sum()
            + (xr ** 3).sum() + old.sum())
    ga, gb = lib.autograd.grad(loss, (a, b), create_graph=True)
    (ga.pow(2).sum() + gb.sum()).backward()  # a second derivative, through the recorded backward
    return [lu, piv, p, lower, upper, x, xh, xr, old, ga, gb, a.grad, b.grad]


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(15))
def test_lu_and_its_gradients_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_program(engine, seed), _program(torch, seed)):
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype)[7:] == str(theirs.dtype)[6:]
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 6), (1, 1), (4, 1)])
def test_the_lu_of_a_rectangular_matrix_is_pytorchs(shape):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    for ours, theirs in zip(engine.linalg.lu(engine.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)
    ours, theirs = engine.linalg.lu_factor_ex(engine.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    assert ours.pivots.tolist() == theirs.pivots.tolist() and ours.info.tolist() == theirs.info.tolist()


def test_a_singular_matrix_has_its_zero_pivot_in_info_and_is_refused_by_lu_factor():
    a = engine.tensor([[1.0, 2.0], [2.0, 4.0]])
    ex = engine.linalg.lu_factor_ex(a)
    assert ex.info.item() == 2 and ex.pivots.tolist() == [2, 2] and ex.LU.tolist() == [[2.0, 4.0], [0.5, 0.0]]
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor: U\[2,2\] is zero and using it on lu_solve "
                                           r"would result in a division by zero"):
        engine.linalg.lu_factor(a)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[2,2\] is zero"):
        engine.linalg.lu_factor(engine.stack([engine.eye(2), a]))
    assert engine.linalg.lu(a).U.tolist() == [[2.0, 4.0], [0.0, 0.0]]  # (linalg.lu does not refuse)
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        engine.linalg.lu_factor(a, pivot=False)
    with pytest.warns(UserWarning, match="torch.lu is deprecated in favor of torch.linalg.lu_factor"):
        assert engine.lu(a, get_infos=True)[2].item() == 2
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated in favor of torch.linalg.lu_solve"):
        assert engine.lu_solve(engine.ones(2, 1), engine.eye(2), engine.tensor([1, 2], dtype=engine.int32)).tolist() \
            == [[1.0], [1.0]]


def test_on_the_cupy_stand_in_as_on_the_cpu(simulated_gpu):
    a = np.random.default_rng(3).standard_normal((2, 4, 4))
    b = np.random.default_rng(4).standard_normal((2, 4, 2))
    out = []
    for dev in ("cpu", "cuda"):
        x = engine.tensor(a, device=dev, requires_grad=True)
        lu, piv = engine.linalg.lu_factor(x)
        sol = engine.linalg.lu_solve(lu, piv, engine.tensor(b, device=dev))
        p, lower, upper = engine.linalg.lu(x)
        (sol.sum() + (lower * upper).sum()).backward()
        assert sol.device.type == dev and piv.device.type == dev
        out.append([t.detach().cpu().numpy() for t in (lu, piv, sol, p, x.grad)])
    for cpu, gpu in zip(*out):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=1e-14)
