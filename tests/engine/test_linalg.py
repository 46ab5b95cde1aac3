"""engine.linalg and the norms: values and gradients against PyTorch 2.13 from the same float64 arrays, against
central differences without it, a zero vector's norm, a singular determinant, refusals, and the CuPy stand-in."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.gradcheck import gradcheck

RNG = np.random.default_rng(21)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # well conditioned
B = RNG.standard_normal((2, 3, 2))
V = RNG.standard_normal((2, 3))
M = RNG.standard_normal((3, 4))
M[1] = 0.0  # a zero row: its norms are 0
M[2, 2] = M[2, 3] = 5.0  # a tie for the infinity norm

CASES = {  # name: (arrays, the call with lib = engine or torch)
    "inv": ((A,), lambda lib, a: lib.linalg.inv(a)),
    "inverse": ((A,), lambda lib, a: a.inverse()),
    "det": ((A,), lambda lib, a: lib.linalg.det(a)),
    "det method": ((A,), lambda lib, a: a[0].det()),
    "slogdet": ((A,), lambda lib, a: lib.linalg.slogdet(a).logabsdet * lib.linalg.slogdet(a).sign),
    "logdet": ((A,), lambda lib, a: lib.logdet(a @ a.mT)),
    "solve": ((A, B), lambda lib, a, b: lib.linalg.solve(a, b)),
    "solve a vector": ((A, V), lambda lib, a, v: lib.linalg.solve(a, v)),
    "solve on the right": ((A, B), lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False)),
    "vector_norm": ((M,), lambda lib, m: lib.linalg.vector_norm(m, 3, 1) + lib.linalg.vector_norm(m, 1.5, 1)),
    "norms of a zero row": ((M,), lambda lib, m: lib.stack([m.norm(p, 1) for p in (2, 1, math.inf, -math.inf,
                                                                                   0.5, 3.0)])),
    "matrix_norm": ((A,), lambda lib, a: lib.stack([lib.linalg.matrix_norm(a, o) for o in
                                                    ("fro", 1, -1, math.inf, -math.inf)])),
    "linalg.norm": ((A, M), lambda lib, a, m: lib.stack([lib.linalg.norm(a).reshape(1),
                                                         lib.linalg.norm(m, 1).reshape(1),
                                                         lib.linalg.norm(a, dim=(1, 2))[:1]])),
    "normalize a zero row": ((M,), lambda lib, m: lib.nn.functional.normalize(m, dim=1)),
}


def _run(lib, name):
    arrays, fn = CASES[name]
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out.detach().cpu().numpy(), [t.grad.cpu().numpy() for t in leaves], out.grad_fn.name()


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_torchs(name):
    torch = pytest.importorskip("torch")
    (ours, our_grads, _), (theirs, their_grads, _) = _run(engine, name), _run(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)
    assert not any(np.isnan(g).any() for g in our_grads)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"norms of a zero row", "normalize a zero row",
                                                        "vector_norm"}))
def test_gradients_equal_central_differences(name):
    arrays, fn = CASES[name]
    leaves = [engine.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(engine, *xs), leaves, eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.torch
def test_node_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("inv", "det", "solve", "solve a vector", "vector_norm"):
        assert _run(engine, name)[2] == _run(torch, name)[2], name
    assert _run(engine, "inv")[2] == "LinalgInvExBackward0"


def test_a_zero_vectors_norm_has_a_zero_gradient_not_nan():
    """sqrt's chain rule at 0 is inf * 0 = NaN; PyTorch's norm gives 0 there, and F.normalize a finite gradient."""
    x = engine.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = engine.zeros(2, 3, requires_grad=True)
    engine.nn.functional.normalize(y).sum().backward()
    assert y.grad.tolist() == [[float(np.float32(1e12))] * 3] * 2  # 1 / eps in float32, as PyTorch's
    assert engine.tensor([3.0, 4.0]).norm(np.int64(2)).item() == 5.0  # a NumPy number as the order, as torch takes it
    z = engine.tensor([1.0, 0.0, 2.0], requires_grad=True)
    z.norm(0).backward()
    assert z.grad is None  # the count of nonzeros: no gradient at all, as PyTorch's


def test_a_singular_determinants_gradient_is_its_adjugate():
    """det at a singular matrix of rank n - 1 still moves: its gradient is the adjugate's transpose, which central
    differences confirm (PyTorch 2.13 gives 0 there, from det(A) A^-T with det(A) = 0)."""
    a = engine.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=engine.float64, requires_grad=True)
    d = engine.linalg.det(a)
    d.backward()
    assert d.item() == 0.0
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    s = engine.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=engine.float64, requires_grad=True)
    assert gradcheck(engine.linalg.det, (s,), eps=1e-6, atol=1e-6)


def test_refusals_name_the_problem():
    with pytest.raises(RuntimeError, match="must be batches of square matrices, but they are 3 by 4"):
        engine.linalg.inv(engine.ones(3, 4))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        engine.linalg.det(engine.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        engine.linalg.det(engine.ones(2, 2, dtype=engine.int64))
    with pytest.raises(RuntimeError, match="singular"):
        engine.linalg.inv(engine.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        engine.linalg.solve(engine.eye(3), engine.ones(2, 2))
    with pytest.raises(NotImplementedError, match="singular values"):
        engine.linalg.matrix_norm(engine.eye(2), "nuc")
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        engine.tensor([1, 2]).norm()


def test_on_the_cupy_stand_in_values_equal_the_cpus_without_a_host_sync(cuda_device):
    from tests import fake_cupy

    for name in ("inv", "det", "slogdet", "solve", "solve a vector", "norms of a zero row", "matrix_norm"):
        cpu, cpu_grads, _ = _run(engine, name)
        arrays, fn = CASES[name]
        leaves = [engine.tensor(a, device=cuda_device, requires_grad=True) for a in arrays]
        fake_cupy.syncs.clear()
        out = fn(engine, *leaves)
        weights = engine.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), device=cuda_device)
        (out * weights).sum().backward()
        assert fake_cupy.syncs == [], (name, fake_cupy.syncs)
        np.testing.assert_allclose(out.detach().cpu().numpy(), cpu, rtol=1e-12)
        for leaf, g in zip(leaves, cpu_grads):
            np.testing.assert_allclose(leaf.grad.cpu().numpy(), g, rtol=1e-10, atol=1e-12)
