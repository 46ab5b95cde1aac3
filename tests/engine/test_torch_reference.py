"""With the same input arrays, the engine's losses and gradients equal PyTorch's (float64: 1e-8 relative)."""

from __future__ import annotations

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

torch = pytest.importorskip("torch")

N, D_in, H, D_out = 64, 1000, 100, 10
STEPS = 200


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(7)
    return {k: rng.standard_normal(s) for k, s in
            (("x", (N, D_in)), ("y", (N, D_out)), ("w1", (D_in, H)), ("w2", (H, D_out)))}


def manual_run(lib, arrays, device=None, steps=STEPS):
    kw = {"dtype": lib.float64}
    if device is not None:
        kw["device"] = device
    x, y, w1, w2 = (lib.tensor(arrays[k], **kw) for k in ("x", "y", "w1", "w2"))
    lr = 1e-6
    history, grads = [], None
    for _ in range(steps):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y).pow(2).sum()
        history.append(loss.item())
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)
        grads = (grad_w1, grad_w2)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return np.array(history), [g.cpu().numpy() for g in grads]


def autograd_run(lib, arrays, device=None, steps=STEPS):
    kw = {"dtype": lib.float64}
    if device is not None:
        kw["device"] = device
    x, y = lib.tensor(arrays["x"], **kw), lib.tensor(arrays["y"], **kw)
    w1 = lib.tensor(arrays["w1"], requires_grad=True, **kw)
    w2 = lib.tensor(arrays["w2"], requires_grad=True, **kw)
    lr = 1e-6
    history, grads = [], None
    for _ in range(steps):
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        history.append(loss.item())
        loss.backward()
        grads = (w1.grad.detach().cpu().numpy().copy(), w2.grad.detach().cpu().numpy().copy())
        with lib.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return np.array(history), list(grads)


def assert_rel(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    rel = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30))
    assert rel <= tol, f"max relative difference {rel:.3g} > {tol}"


@pytest.mark.parametrize("run", [manual_run, autograd_run], ids=["manual", "autograd"])
def test_two_layer_net_equals_torch(arrays, run):
    ours, our_grads = run(engine, arrays)
    theirs, their_grads = run(torch, arrays)
    assert ours[0] > 1e6 and ours[-1] < ours[0] * 1e-3
    assert_rel(ours, theirs, 1e-8)
    for g, t in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-8 * np.abs(t).max())


def test_manual_equals_autograd_float64(arrays):
    manual, _ = manual_run(engine, arrays, steps=100)
    auto, _ = autograd_run(engine, arrays, steps=100)
    assert_rel(manual, auto, 1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("run", [manual_run, autograd_run], ids=["manual", "autograd"])
def test_cpu_and_gpu_agree(arrays, run, cuda_device):
    cpu, _ = run(engine, arrays, device="cpu", steps=100)
    gpu, _ = run(engine, arrays, device="cuda", steps=100)
    assert_rel(gpu, cpu, 1e-8)


def _nn_models(seed=3):
    rng = np.random.default_rng(seed)
    w1, b1 = rng.uniform(-0.1, 0.1, (20, 8)), rng.uniform(-0.1, 0.1, 20)
    w2, b2 = rng.uniform(-0.1, 0.1, (3, 20)), rng.uniform(-0.1, 0.1, 3)
    models = []
    for lib in (engine, torch):
        m = lib.nn.Sequential(lib.nn.Linear(8, 20), lib.nn.ReLU(), lib.nn.Linear(20, 3)).double()
        with lib.no_grad():
            for p, v in zip(m.parameters(), (w1, b1, w2, b2)):
                p.copy_(lib.tensor(v))
        models.append(m)
    x, y = rng.standard_normal((16, 8)), rng.standard_normal((16, 3))
    return models, x, y


@pytest.mark.parametrize("make_opt", [
    lambda lib, p: lib.optim.SGD(p, lr=1e-2),
    lambda lib, p: lib.optim.SGD(p, lr=1e-2, momentum=0.9),
    lambda lib, p: lib.optim.SGD(p, lr=1e-2, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda lib, p: lib.optim.Adam(p, lr=1e-2),
    lambda lib, p: lib.optim.Adam(p, lr=1e-3, betas=(0.8, 0.99), weight_decay=1e-2),
], ids=["sgd", "sgd-momentum", "sgd-nesterov-wd", "adam", "adam-wd"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_nn_and_optim_equal_torch(make_opt, reduction):
    (ours, theirs), x, y = _nn_models()
    histories = []
    for lib, model in ((engine, ours), (torch, theirs)):
        opt = make_opt(lib, model.parameters())
        loss_fn = lib.nn.MSELoss(reduction=reduction)
        xt, yt = lib.tensor(x), lib.tensor(y)
        h = []
        for _ in range(30):
            loss = loss_fn(model(xt), yt)
            h.append(loss.item())
            opt.zero_grad()
            loss.backward()
            opt.step()
        histories.append(h)
    assert_rel(histories[0], histories[1], 1e-10)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_linear_init_range_and_state_dict():
    engine.manual_seed(0)
    layer = engine.nn.Linear(100, 7)
    w = layer.weight.detach().numpy()
    assert w.shape == (7, 100) and np.abs(w).max() <= 0.1 and np.abs(w).max() > 0.08
    state = layer.state_dict()
    assert list(state) == ["weight", "bias"]
    other = engine.nn.Linear(100, 7)
    other.load_state_dict(state)
    assert np.array_equal(other.weight.detach().numpy(), w)
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        engine.nn.Linear(100, 8).load_state_dict(state)


def test_linear_without_bias_then_given_one():
    layer = engine.nn.Linear(4, 3, bias=False)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    layer.bias = engine.nn.Parameter(engine.ones(3))
    assert layer.bias is not None and [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    out = layer(engine.zeros(2, 4))
    assert out.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
