"""The rest of ``torch.linalg`` a script of one's own meets, missing before (AttributeError): ``matrix_exp``,
``lstsq``, ``solve_triangular``, ``matrix_rank``, ``cond``, ``multi_dot``, ``vecdot``, ``vander``, ``inv_ex``/
``cholesky_ex``/``solve_ex``, ``LinAlgError``, and PyTorch's older names ``torch.svd`` (V, not Vh), ``torch.qr``,
``cholesky_solve``, ``cholesky_inverse``, ``triangular_solve``, with their Tensor methods. Each is written in the
engine's differentiable ops (``matrix_exp``: scaling, the Taylor series to degree 18, squaring), so the gradients
are those of the ops: values and every gradient against PyTorch 2.13 over random (batches of) matrices, and by hand.

Left different, PyTorch's slip: ``linalg.cond`` with ``p`` other than None/2/-2 refuses its own backward there
("modified by an inplace operation"); the engine's runs (its values are compared, not its gradient).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine


def _outcome(lib, f, arrays, grad):
    ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    try:
        out = f(lib, *ts)
        outs = list(out) if isinstance(out, tuple) else [out]
        values = [o.detach().numpy() for o in outs]
        if outs[0].requires_grad:
            first = outs[0]
            (first * lib.tensor(np.cos(np.arange(first.numel())).reshape(tuple(first.shape)))).sum().backward()
            values += [t.grad.numpy() for t in ts if t.grad is not None]
    except RuntimeError as exc:
        return "raises", str(exc)
    return "ok", values


def _rebuilt(u, s, v):
    k = s.shape[-1]
    return (u[..., :k] * s.unsqueeze(-2)) @ v[..., :k].mT


def _sweep(torch, seed):
    rng = np.random.default_rng(seed)
    different, compared = [], 0

    def cmp(tag, f, *arrays, grad=True):
        nonlocal compared
        compared += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = _outcome(engine, f, arrays, grad), _outcome(torch, f, arrays, grad)
        if ours[0] != theirs[0]:
            different.append((tag, ours[0], theirs[0]))
        elif ours[0] == "ok" and (len(ours[1]) != len(theirs[1]) or not all(
                a.shape == b.shape and np.allclose(a, b, rtol=1e-8, atol=1e-10, equal_nan=True)
                for a, b in zip(ours[1], theirs[1]))):
            different.append((tag, "different"))

    def eye(lib, n):
        return lib.eye(n, dtype=lib.float64)

    for _ in range(15):
        n = int(rng.integers(1, 5))
        m = int(rng.integers(n, n + 3))
        batch = tuple(int(v) for v in rng.integers(1, 3, rng.integers(0, 2)))
        a, b = rng.standard_normal(batch + (n, n)), rng.standard_normal(batch + (n, 2))
        tall, y = rng.standard_normal(batch + (m, n)), rng.standard_normal(batch + (m, 2))
        cmp("matrix_exp", lambda L, x: L.linalg.matrix_exp(x), a * rng.uniform(0.1, 3))
        cmp("matrix_exp scaled", lambda L, x: L.linalg.matrix_exp(x), a * 8)
        for up in (False, True):
            for left in (True, False):
                for unit in (False, True):
                    rhs = b if left else b.swapaxes(-1, -2).copy()
                    cmp(f"solve_triangular {up} {left} {unit}",
                        lambda L, x, z, up=up, left=left, unit=unit, n=n: L.linalg.solve_triangular(
                            x + 3 * eye(L, n), z, upper=up, left=left, unitriangular=unit), a, rhs)
        cmp("matrix_rank", lambda L, x: L.linalg.matrix_rank(x), a, grad=False)
        low = rng.standard_normal(batch + (4, 1)) @ rng.standard_normal(batch + (1, 3))
        cmp("matrix_rank of a low rank", lambda L, x: L.linalg.matrix_rank(x), low, grad=False)
        for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), -float("inf")):
            cmp(f"cond {p}", lambda L, x, p=p, n=n: L.linalg.cond(x + 2 * eye(L, n), p), a, grad=p in (None, 2, -2))
        cmp("vecdot", lambda L, u, v: L.linalg.vecdot(u, v, dim=-1), a, a[..., ::-1].copy())
        if n > 1:
            cmp("vander", lambda L, x: L.linalg.vander(x), rng.standard_normal(batch + (n,)))
        cmp("vander N", lambda L, x: L.linalg.vander(x, N=5), rng.standard_normal((3,)))
        cmp("multi_dot of vectors", lambda L, u, w, v: L.linalg.multi_dot([u, w, v]), rng.standard_normal((3,)),
            rng.standard_normal((3, 4)), rng.standard_normal((4,)))
        cmp("multi_dot", lambda L, u, w, v: L.linalg.multi_dot([u, w, v]), rng.standard_normal((2, 3)),
            rng.standard_normal((3, 4)), rng.standard_normal((4, 5)))
        for driver in (None, "gelsd", "gelss", "gels"):
            cmp(f"lstsq {driver}", lambda L, x, z, driver=driver: L.linalg.lstsq(x, z, driver=driver), tall, y)
        cmp("lstsq of a vector", lambda L, x, z: L.linalg.lstsq(x, z).solution, tall, y[..., 0].copy())
        cmp("inv_ex", lambda L, x: L.linalg.inv_ex(x), a)
        cmp("inv_ex of a singular matrix", lambda L, x: L.linalg.inv_ex(x)[1], np.zeros((2, 2)), grad=False)
        cmp("cholesky_ex", lambda L, x, n=n: L.linalg.cholesky_ex(x @ x.mT + eye(L, n)), a)
        cmp("solve_ex", lambda L, x, z: L.linalg.solve_ex(x, z), a, b)
        for some in (True, False):
            cmp(f"svd {some}", lambda L, x, some=some: L.svd(x, some=some)[1], tall)
            cmp(f"svd rebuilt {some}", lambda L, x, some=some: _rebuilt(*L.svd(x, some=some)), tall)
            cmp(f"qr {some}", lambda L, x, some=some: L.qr(x, some=some)[1].abs(), tall)
        cmp("svd without U and V", lambda L, x: L.svd(x, compute_uv=False), tall, grad=False)
        for up in (False, True):
            cmp(f"cholesky_solve {up}", lambda L, z, x, up=up, n=n: L.cholesky_solve(
                z, L.linalg.cholesky(x @ x.mT + eye(L, n), upper=up), upper=up), b, a)
            cmp(f"cholesky_inverse {up}", lambda L, x, up=up, n=n: L.cholesky_inverse(
                L.linalg.cholesky(x @ x.mT + eye(L, n), upper=up), upper=up), a)
            for tr in (False, True):
                for unit in (False, True):
                    cmp(f"triangular_solve {up} {tr} {unit}", lambda L, z, x, up=up, tr=tr, unit=unit, n=n:
                        L.triangular_solve(z, x + 3 * eye(L, n), up, tr, unit).solution, b, a)
        cmp("Tensor.matrix_exp", lambda L, x: x.matrix_exp(), a)
        cmp("Tensor.pinverse", lambda L, x: x.pinverse(), tall)
        cmp("Tensor.svd", lambda L, x: x.svd()[1], tall)
    return different, compared


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1])
def test_random_calls_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    different, compared = _sweep(torch, seed)
    assert different == []
    assert compared > 800


def test_matrix_exp_by_hand():
    t = 0.7
    rotation = engine.linalg.matrix_exp(engine.tensor([[0.0, -t], [t, 0.0]], dtype=engine.float64))
    np.testing.assert_allclose(rotation.numpy(), [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]],
                               rtol=1e-14, atol=1e-15)
    big = engine.tensor([[30.0, 0.0], [0.0, -2.0]], dtype=engine.float64).matrix_exp()  # (scaled and squared)
    np.testing.assert_allclose(big.numpy(), [[math.exp(30.0), 0.0], [0.0, math.exp(-2.0)]], rtol=1e-13)
    x = engine.tensor([[0.5, 0.0], [0.0, 1.5]], dtype=engine.float64, requires_grad=True)
    engine.matrix_exp(x).trace().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[math.exp(0.5), 0.0], [0.0, math.exp(1.5)]], rtol=1e-14)


def test_least_squares_fits_a_line():
    x = engine.tensor([0.0, 1.0, 2.0, 3.0], dtype=engine.float64)
    y = 2 * x + 1 + engine.tensor([0.1, -0.1, -0.1, 0.1], dtype=engine.float64)
    design = engine.stack([x, engine.ones_like(x)], 1)
    fit = engine.linalg.lstsq(design, y.unsqueeze(1))
    np.testing.assert_allclose(fit.solution.flatten().numpy(), [2.0, 1.0], atol=1e-12)
    assert fit.rank.item() == 2 and fit.residuals.numel() == 0  # (the default driver, gelsy: no residuals)
    gelsd = engine.linalg.lstsq(design, y.unsqueeze(1), driver="gelsd")
    assert gelsd.residuals.flatten().tolist() == pytest.approx([0.04]) and gelsd.singular_values.shape == (2,)


def test_the_rest_by_hand():
    low = engine.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    assert engine.linalg.matrix_rank(low).item() == 1
    upper = engine.tensor([[2.0, 1.0], [0.0, 4.0]])
    assert engine.linalg.solve_triangular(upper, engine.tensor([[3.0], [8.0]]), upper=True).flatten().tolist() == [
        0.5, 2.0]
    batch = engine.stack([upper, upper * 2])  # a batch of A, one square B: B is a matrix, not two vectors
    np.testing.assert_allclose(engine.linalg.solve_triangular(batch, engine.eye(2), upper=True).numpy(),
                               np.linalg.inv(np.triu(batch.numpy())), rtol=1e-6)
    assert engine.linalg.vander(engine.tensor([2.0, 3.0])).tolist() == [[1.0, 2.0], [1.0, 3.0]]
    assert engine.linalg.multi_dot([engine.tensor([1.0, 2.0]), engine.eye(2), engine.tensor([3.0, 4.0])]).item() == 11
    assert engine.linalg.vecdot(engine.tensor([1.0, 2.0]), engine.tensor([3.0, 4.0])).item() == 11
    l_factor = engine.tensor([[2.0, 0.0], [1.0, 3.0]])
    a = l_factor @ l_factor.T
    np.testing.assert_allclose(engine.cholesky_solve(engine.tensor([[1.0], [2.0]]), l_factor).numpy(),
                               np.linalg.solve(a.numpy(), [[1.0], [2.0]]), rtol=1e-6)
    np.testing.assert_allclose(engine.cholesky_inverse(l_factor).numpy(), np.linalg.inv(a.numpy()), rtol=1e-6)
    u, s, v = engine.svd(engine.tensor([[3.0, 0.0], [0.0, -2.0]]))
    np.testing.assert_allclose((u * s) @ v.T, [[3.0, 0.0], [0.0, -2.0]], atol=1e-6)  # (V, not Vh)
    result, info = engine.linalg.inv_ex(engine.zeros(2, 2))
    assert info.item() == 1 and bool(result.isnan().all())
    assert engine.linalg.inv_ex(engine.eye(2)).info.item() == 0
    assert issubclass(engine.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        engine.linalg.vander(engine.tensor([1.0]))


@pytest.mark.torch
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_are_one_node_each_with_pytorchs_gradients(upper):
    """A factor given as it is (a leaf, not the output of a cholesky): PyTorch's one node each
    (``CholeskySolveBackward0``, ``CholeskyInverseBackward0``), whose formulas give the whole factor a gradient
    (its unread triangle too: the engine's two triangular solves gave that triangle zeros), batches broadcast
    inside the node, and second derivatives."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    factor = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    factor = factor.T if upper else factor
    rhs = rng.standard_normal((2, 3, 2))
    results = []
    for L in (engine, torch):
        f, b = L.tensor(factor, requires_grad=True), L.tensor(rhs, requires_grad=True)
        x = L.cholesky_solve(b, f, upper=upper)
        inverse = L.cholesky_inverse(f, upper=upper)
        weights = L.tensor(np.cos(np.arange(12.0)).reshape(2, 3, 2))
        gb, gf = L.autograd.grad(x, (b, f), weights, create_graph=True)
        (gi,) = L.autograd.grad((inverse * L.tensor(np.arange(9.0).reshape(3, 3))).sum(), f, create_graph=True)
        second = L.autograd.grad((gb ** 2).sum() + (gf ** 3).sum() + (gi ** 2).sum(), (b, f))
        results.append([x.grad_fn.name(), inverse.grad_fn.name(), tuple(gf.shape)]
                       + [t.detach().numpy() for t in (x, inverse, gb, gf, gi, *second)])
    ours, theirs = results
    assert ours[:3] == theirs[:3] == ["CholeskySolveBackward0", "CholeskyInverseBackward0", (3, 3)]
    for mine, other in zip(ours[3:], theirs[3:], strict=True):
        np.testing.assert_allclose(mine, other, rtol=1e-10, atol=1e-12)
    assert np.abs(ours[6][np.triu_indices(3, 1) if not upper else np.tril_indices(3, -1)]).max() > 0.01


def test_cholesky_solve_refusals_are_pytorchs():
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions, but has 1 dimensions instead"):
        engine.cholesky_solve(engine.ones(3), engine.eye(3))
    with pytest.raises(RuntimeError, match="u should have at least 2 dimensions, but has 1 dimensions instead"):
        engine.cholesky_solve(engine.ones(3, 1), engine.ones(3))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 "
                                           "but each b matrix is 2 by 1"):
        engine.cholesky_solve(engine.ones(2, 1), engine.eye(3))
    with pytest.raises(RuntimeError, match="Expected b and A to have the same dtype, but found b of type Double and "
                                           "A of type Float instead."):
        engine.cholesky_solve(engine.ones(3, 1, dtype=engine.float64), engine.eye(3))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 3 by 2 matrices"):
        engine.cholesky_solve(engine.ones(3, 1), engine.ones(3, 2))
    with pytest.raises(RuntimeError, match="cholesky_inverse: The input tensor A must have at least 2 dimensions."):
        engine.cholesky_inverse(engine.ones(3))
    with pytest.raises(RuntimeError, match="cholesky_inverse: A must be batches of square matrices, but they are 3 "
                                           "by 2 matrices"):
        engine.cholesky_inverse(engine.ones(3, 2))
