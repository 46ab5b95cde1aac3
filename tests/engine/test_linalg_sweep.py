"""Every linear-algebra op's values and gradients against PyTorch (float64, one matrix and a batch of them, each
result weighted by a fixed cosine so a misplaced gradient shows): inv, det, slogdet, logdet, solve, cholesky, eigh,
eigvalsh, svd, svdvals, qr, matrix and vector norms, matrix_power, pinv, ... A first run found them all agreeing,
and ``pinv`` missing (added; a rank-deficient matrix's too)."""

from __future__ import annotations

import numpy as np
import pytest

import engine


def _matrix(shape, kind, rng):
    a = rng.standard_normal(shape)
    if kind == "spd":
        return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    if kind == "sym":
        return a + np.swapaxes(a, -1, -2)
    return a


def _svd_product(L, a):
    u, s, vh = L.linalg.svd(a, full_matrices=False)
    return (u * s.unsqueeze(-2)) @ vh


def _qr_product(L, a):
    q, r = L.linalg.qr(a)
    return q @ r


PROGRAMS = {
    "inv": (lambda L, a: L.linalg.inv(a), "any"),
    "det": (lambda L, a: L.linalg.det(a), "any"),
    "slogdet": (lambda L, a: L.linalg.slogdet(a)[1], "any"),
    "logdet": (lambda L, a: a.logdet(), "spd"),
    "solve": (lambda L, a: L.linalg.solve(a, a[..., :2] * 3), "any"),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), "spd"),
    "cholesky upper": (lambda L, a: L.linalg.cholesky(a, upper=True), "spd"),
    "eigh values": (lambda L, a: L.linalg.eigh(a)[0], "sym"),
    "eigh |vectors|": (lambda L, a: L.linalg.eigh(a)[1].abs(), "sym"),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), "sym"),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), "any"),
    "svd product": (_svd_product, "any"),
    "qr |R|": (lambda L, a: L.linalg.qr(a)[1].abs(), "any"),
    "qr product": (_qr_product, "any"),
    "matrix_norm fro": (lambda L, a: L.linalg.matrix_norm(a), "any"),
    "matrix_norm nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), "any"),
    "matrix_norm 2": (lambda L, a: L.linalg.matrix_norm(a, 2), "any"),
    "matrix_norm 1": (lambda L, a: L.linalg.matrix_norm(a, 1), "any"),
    "matrix_norm inf": (lambda L, a: L.linalg.matrix_norm(a, float("inf")), "any"),
    "vector_norm 1.5": (lambda L, a: L.linalg.vector_norm(a, 1.5, dim=-1), "any"),
    "matrix_power 3": (lambda L, a: L.matrix_power(a, 3), "any"),
    "matrix_power -2": (lambda L, a: L.matrix_power(a, -2), "any"),
    "inverse": (lambda L, a: a.inverse(), "any"),
    "pinv": (lambda L, a: L.linalg.pinv(a), "any"),
    "pinverse": (lambda L, a: L.pinverse(a), "any"),
    "einsum trace": (lambda L, a: L.einsum("...ii->...", a), "any"),
}


def _run(L, name, shape, seed):
    program, kind = PROGRAMS[name]
    a = L.tensor(_matrix(shape, kind, np.random.default_rng(seed)), dtype=L.float64, requires_grad=True)
    out = program(L, a)
    weights = np.cos(np.arange(out.numel()) + 0.3).reshape(tuple(out.shape))
    (out * L.tensor(weights, dtype=L.float64)).sum().backward()
    return out.detach().numpy(), a.grad.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_are_pytorchs(name, shape):
    torch = pytest.importorskip("torch")
    (theirs, their_grad), (ours, our_grad) = _run(torch, name, shape, 0), _run(engine, name, shape, 0)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-7, atol=1e-9)


def test_pinv_satisfies_the_penrose_conditions_rank_deficient_and_wide():
    for a in (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2
              np.random.default_rng(1).standard_normal((2, 5))):
        A = engine.tensor(a, dtype=engine.float64)
        P = engine.linalg.pinv(A)
        assert tuple(P.shape) == a.shape[::-1]
        np.testing.assert_allclose((A @ P @ A).numpy(), a, atol=1e-12)
        np.testing.assert_allclose((P @ A @ P).numpy(), P.numpy(), atol=1e-12)
        np.testing.assert_allclose((A @ P).numpy(), (A @ P).numpy().T, atol=1e-12)
        np.testing.assert_allclose((P @ A).numpy(), (P @ A).numpy().T, atol=1e-12)
        np.testing.assert_allclose(P.numpy(), np.linalg.pinv(a), atol=1e-12)
    cut = engine.linalg.pinv(engine.tensor([[4.0, 0.0], [0.0, 0.1]], dtype=engine.float64), atol=0.5)
    assert cut.tolist() == [[0.25, 0.0], [0.0, 0.0]]  # the singular value under atol dropped


def test_pinv_gradient_passes_gradcheck():
    a = engine.tensor(np.random.default_rng(2).standard_normal((3, 2)), dtype=engine.float64, requires_grad=True)
    assert engine.autograd.gradcheck(engine.linalg.pinv, (a,))
