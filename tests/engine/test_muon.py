"""``optim.Muon`` (PyTorch 2.13's): momentum orthogonalized by Newton-Schulz for 2-D weights. PyTorch runs the
iteration in bfloat16, which NumPy has not: the engine rounds each result to bfloat16 in float32 storage, and
its lerp and add are PyTorch's CPU kernels' (a fused multiply-add, rounded once), so the same gradients give the
same weights, bit for bit, where the products are small enough that their sums round alike."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine.optim import muon

SHAPES = [(8, 5), (5, 8), (16, 16)]
CONFIGS = [{}, {"nesterov": False}, {"adjust_lr_fn": "match_rms_adamw"}, {"ns_steps": 3, "momentum": 0.5},
           {"weight_decay": 0.0, "eps": 1e-3}, {"adjust_lr_fn": "original", "lr": 0.1}]


def _steps(L, config, shapes=SHAPES, steps=6):  # noqa: N803
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[(rng.standard_normal(s) * 3).astype(np.float32) for s in shapes] for _ in range(steps)]
    params = [L.tensor(w, requires_grad=True) for w in weights]
    opt = L.optim.Muon(params, **{"lr": 0.02, **config})
    for step in range(steps):
        for p, g in zip(params, grads[step]):
            p.grad = L.tensor(g)
        opt.step()
    buffers = [opt.state[p]["momentum_buffer"] for p in params]
    return [p.detach().numpy() for p in params], [np.asarray(b if isinstance(b, np.ndarray) else b.numpy())
                                                  for b in buffers]


@pytest.mark.torch
@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_the_same_gradients_give_pytorchs_weights_bit_for_bit(config):
    torch = pytest.importorskip("torch")
    (ours, our_buffers), (theirs, their_buffers) = _steps(engine, config), _steps(torch, config)
    for mine, other in zip(ours + our_buffers, theirs + their_buffers, strict=True):
        np.testing.assert_array_equal(mine, other)


@pytest.mark.torch
def test_a_larger_matrix_is_orthogonalized_as_pytorchs_up_to_bfloat16s_rounding():
    """For larger products the sums round differently now and then: the engine's result and PyTorch's are both
    about 1% from the iteration done exactly (float64), and about 0.5% from each other."""
    torch = pytest.importorskip("torch")
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs

    g = np.random.default_rng(1).standard_normal((256, 128)).astype(np.float32)
    coefficients = (muon.DEFAULT_A, muon.DEFAULT_B, muon.DEFAULT_C)
    ours = muon._zeropower_via_newtonschulz(g, coefficients, 5, 1e-7)
    other = theirs(torch.tensor(g), coefficients, 5, 1e-7).float().numpy()
    x = g.T.astype(np.float64) / np.linalg.norm(g)
    for _ in range(5):
        gram = x @ x.T
        x = muon.DEFAULT_A * x + (muon.DEFAULT_B * gram + muon.DEFAULT_C * gram @ gram) @ x
    exact = x.T
    assert np.linalg.norm(ours - other) / np.linalg.norm(other) < 0.01
    assert np.linalg.norm(ours - exact) / np.linalg.norm(exact) < 1.5 * np.linalg.norm(other - exact) / np.linalg.norm(
        exact)


def test_newton_schulz_makes_the_update_nearly_orthogonal():
    g = np.random.default_rng(2).standard_normal((32, 12)).astype(np.float32)
    out = muon._zeropower_via_newtonschulz(g, (muon.DEFAULT_A, muon.DEFAULT_B, muon.DEFAULT_C), 5, 1e-7)
    singular = np.linalg.svd(out, compute_uv=False)
    # the quintic's coefficients trade exactness for speed: singular values land in about (0.68, 1.13), not on 1
    assert out.shape == (32, 12) and 0.6 < singular.min() and singular.max() < 1.2
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    assert np.abs(out - u @ vt).max() < 0.35  # near the orthogonal factor of g


def test_bfloat16_rounding_is_a_casts():
    values = np.array([1.0, 1.00390625, 1.005859375, 1.0078125, -2.5, 3.4e38, np.inf, -np.inf, -0.0, 1e-40,
                       np.float32(1) + np.float32(2 ** -8), np.float32(1) + np.float32(3 * 2 ** -9)], dtype=np.float32)
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-9 rounds up to 1 + 2^-7
    got = muon._bf16(values)
    assert got[10] == 1.0 and got[11] == np.float32(1 + 2 ** -7)
    assert np.isnan(muon._bf16(np.array([np.nan], dtype=np.float32)))[0]
    assert np.signbit(got[8]) and got[6] == np.inf and got[7] == -np.inf
    try:
        import torch
    except ImportError:
        return
    wide = np.random.default_rng(3).standard_normal(10000).astype(np.float32) * 100
    for sample in (values, wide):
        np.testing.assert_array_equal(muon._bf16(sample), torch.tensor(sample).bfloat16().float().numpy())


def test_muon_trains_a_hidden_layer_beside_adamw():
    engine.manual_seed(0)
    x = engine.randn(64, 10)
    y = (x[:, :3] * engine.tensor([1.0, -2.0, 0.5])).sum(1, keepdim=True).tanh()
    model = engine.nn.Sequential(engine.nn.Linear(10, 32), engine.nn.ReLU(), engine.nn.Linear(32, 32),
                                 engine.nn.ReLU(), engine.nn.Linear(32, 1))
    hidden = [model[2].weight]
    rest = [p for p in model.parameters() if p is not model[2].weight]
    optimizers = [engine.optim.Muon(hidden, lr=0.02), engine.optim.AdamW(rest, lr=3e-3)]
    losses = []
    for _ in range(150):
        for opt in optimizers:
            opt.zero_grad()
        loss = engine.nn.functional.mse_loss(model(x), y)
        loss.backward()
        for opt in optimizers:
            opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]


def test_refusals_are_pytorchs():
    w = engine.zeros(3, 3, requires_grad=True)
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with "
                                         r"size: engine.Size\(\[3\]\)"):
        engine.optim.Muon([w, engine.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
        engine.optim.Muon([w], lr=-1)
    with pytest.raises(ValueError, match="momentum should be >= 0 but is: -0.5"):
        engine.optim.Muon([w], momentum=-0.5)
    with pytest.raises(ValueError, match="weight decay should be >= 0 but is: -0.1"):
        engine.optim.Muon([w], weight_decay=-0.1)
    with pytest.raises(ValueError, match="Adjust learning rate function fast is not supported"):
        engine.optim.Muon([w], adjust_lr_fn="fast")
    opt = engine.optim.Muon([w], ns_steps=100)
    w.grad = engine.ones(3, 3)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        opt.step()


def test_on_the_cupy_stand_in_a_step_equals_the_cpus_without_a_host_sync(cuda_device):
    from tests import fake_cupy

    rng = np.random.default_rng(4)
    weight, grad = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)
    results = []
    for device in ("cpu", cuda_device):
        p = engine.tensor(weight, device=device, requires_grad=True)
        opt = engine.optim.Muon([p], lr=0.05)
        fake_cupy.syncs.clear()
        for _ in range(3):
            p.grad = engine.tensor(grad, device=device)
            opt.step()
        if device != "cpu":
            assert fake_cupy.syncs == [], fake_cupy.syncs
        results.append(p.detach().cpu().numpy())
    np.testing.assert_array_equal(results[1], results[0])
