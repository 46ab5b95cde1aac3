"""The names today's "Learning PyTorch with examples" uses (the polynomial fit of sin(x) on linspace(-pi, pi)):
``sin``/``cos``, ``set_default_device``, ``torch.accelerator``, ``optim.RMSprop``, ``grad = None``,
``initial_seed``; and the fit itself in each of the tutorial's styles, against PyTorch from the same starting
values where it is importable. Written in this project's words, not copied."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

START = (-0.2, 0.4, 0.1, -0.05)  # a, b, c, d of y = a + b x + c x^2 + d x^3


def _libs():
    libs = [engine]
    try:
        import torch
    except ImportError:
        return libs
    torch.backends.cuda.matmul.allow_tf32 = False
    return libs + [torch]


# ----------------------------------------------------------------------------- the new names

def test_sin_and_cos_with_their_gradients(device):
    x = engine.linspace(-math.pi, math.pi, 7, dtype=engine.float64, device=device, requires_grad=True)
    (engine.sin(x) * 2 + x.cos()).sum().backward()
    host = np.linspace(-math.pi, math.pi, 7)
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * np.cos(host) - np.sin(host), atol=1e-15)
    np.testing.assert_allclose(x.sin().detach().cpu().numpy(), np.sin(host), atol=1e-15)


def test_the_default_device_is_where_factories_put_tensors(device):
    try:
        engine.set_default_device(device)
        assert engine.get_default_device().type == device
        made = [engine.linspace(0, 1, 3), engine.zeros(2), engine.randn(()), engine.tensor([1.0, 2.0]),
                engine.arange(3), engine.nn.Linear(2, 1).weight]
        assert {t.device.type for t in made} == {device}
        assert engine.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins
    finally:
        engine.set_default_device(None)
    assert engine.get_default_device() == engine.device("cpu")
    assert engine.zeros(1).device.type == "cpu"


def test_the_default_device_is_per_thread(cuda_device):
    import threading

    seen = []
    engine.set_default_device(cuda_device)
    try:
        thread = threading.Thread(target=lambda: seen.append((engine.get_default_device().type,
                                                              engine.zeros(1).device.type)))
        thread.start()
        thread.join()
        here = (engine.get_default_device().type, engine.zeros(1).device.type)
    finally:
        engine.set_default_device(None)
    assert here == ("cuda", "cuda") and seen == [("cpu", "cpu")]  # another thread keeps its own default


def test_accelerator_answers_as_pytorchs(device):
    if device == "cpu":
        pytest.skip("the cpu parameter says nothing about an accelerator")
    assert engine.accelerator.is_available()
    assert engine.accelerator.current_accelerator() == engine.device("cuda")
    assert engine.accelerator.current_accelerator().type == "cuda"
    assert engine.accelerator.device_count() >= 1


def test_accelerator_without_cuda(monkeypatch):
    monkeypatch.setattr(engine.cuda, "is_available", lambda: False)
    assert engine.accelerator.is_available() is False
    assert engine.accelerator.current_accelerator() is None
    assert engine.accelerator.device_count() == 0


def test_grad_can_be_set_to_none_and_only_to_a_tensor_of_its_size():
    w = engine.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    w.grad = None
    assert w.grad is None
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
        w.grad = 3
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[2\]' to a tensor of size "
                                           r"'\[3\]'"):
        w.grad = engine.ones(2)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double' to a tensor with "
                                           "grad_dtype 'Float'"):
        w.grad = engine.zeros(3, dtype=engine.float64)  # (PyTorch's: an optimizer would mix the two dtypes)
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `backward\(\)` cannot be empty."):
        (w * 2).sum().backward(inputs=[])
    w.grad = engine.zeros(3)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_initial_seed_before_and_after_manual_seed():
    import subprocess
    import sys

    code = "import engine; s = engine.initial_seed(); print(type(s).__name__, 0 <= s < 2**64)"
    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
           for _ in range(2)]
    assert out == ["int True\n", "int True\n"]
    engine.manual_seed(42)
    assert engine.initial_seed() == 42


# ----------------------------------------------------------------------------- RMSprop

@pytest.mark.torch
@pytest.mark.parametrize("options", [{}, {"momentum": 0.9}, {"centered": True}, {"alpha": 0.9, "eps": 1e-6},
                                     {"weight_decay": 0.1, "maximize": True}, {"centered": True, "momentum": 0.5}])
def test_rmsprop_steps_as_pytorchs(options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w0, x = rng.standard_normal((3, 4)), rng.standard_normal((5, 3))
    finals = []
    for lib in (engine, torch):
        w = lib.tensor(w0, requires_grad=True)
        opt = lib.optim.RMSprop([w], lr=1e-2, **options)
        for _ in range(25):
            loss = ((lib.tensor(x) @ w).sin() ** 2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        finals.append(w.detach().numpy())
    np.testing.assert_allclose(finals[0], finals[1], rtol=1e-12, atol=1e-14)


def test_rmsprop_defaults_and_bad_options():
    opt = engine.optim.RMSprop([engine.ones(2, requires_grad=True)])
    group = opt.param_groups[0]
    assert (group["lr"], group["alpha"], group["eps"], group["momentum"], group["centered"]) == (
        0.01, 0.99, 1e-8, 0.0, False)
    for bad, text in (({"lr": -1.0}, "Invalid learning rate: -1.0"), ({"alpha": -0.1}, "Invalid alpha value"),
                      ({"eps": float("nan")}, "Invalid epsilon value: nan"), ({"momentum": -1}, "Invalid momentum")):
        with pytest.raises(ValueError, match=text):
            engine.optim.RMSprop([engine.ones(2, requires_grad=True)], **bad)


# ----------------------------------------------------------------------------- the fit, in each style

def _data(lib, device):
    x = lib.linspace(-math.pi, math.pi, 2000, dtype=lib.float32, device=device)
    return x, lib.sin(x)


def fit_by_hand(lib, device, steps=2000, lr=1e-6):
    """Tensors and a hand-written gradient of the squared error."""
    x, y = _data(lib, device)
    a, b, c, d = (lib.tensor(v, dtype=lib.float32, device=device) for v in START)
    for _ in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        g = 2.0 * (y_pred - y)
        grads = (g.sum(), (g * x).sum(), (g * x ** 2).sum(), (g * x ** 3).sum())
        a, b, c, d = (p - lr * gp for p, gp in zip((a, b, c, d), grads))
    return loss.item(), [v.item() for v in (a, b, c, d)]


def fit_by_autograd(lib, device, steps=2000, lr=1e-6, legendre=False):
    """Autograd; with ``legendre`` the cubic term goes through a Function of the user's own, P3."""
    x, y = _data(lib, device)
    params = [lib.tensor(v, dtype=lib.float32, device=device, requires_grad=True) for v in START]
    if legendre:
        params = [lib.tensor(v, dtype=lib.float32, device=device, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)]

        class P3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                return 0.5 * (5 * t ** 3 - 3 * t)

            @staticmethod
            def backward(ctx, grad_output):
                (t,) = ctx.saved_tensors
                return grad_output * 1.5 * (5 * t ** 2 - 1)

    a, b, c, d = params
    for _ in range(steps):
        y_pred = a + b * P3.apply(c + d * x) if legendre else a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
    return loss.item(), [p.item() for p in params]


def fit_legendre(lib, device):
    return fit_by_autograd(lib, device, lr=5e-6, legendre=True)


def fit_by_nn(lib, device, optimizer="sgd", steps=2000):
    """``nn.Sequential(Linear(3, 1), Flatten(0, 1))`` on (x, x^2, x^3); SGD by hand or RMSprop."""
    x, y = _data(lib, device)
    powers = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3], device=device))
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1)).to(device)
    with lib.no_grad():
        model[0].weight.copy_(lib.tensor([list(START[1:])]))
        model[0].bias.fill_(START[0])
    loss_fn = lib.nn.MSELoss(reduction="sum")
    opt = lib.optim.RMSprop(model.parameters(), lr=1e-3) if optimizer == "rmsprop" else None
    for _ in range(steps):
        loss = loss_fn(model(powers), y)
        if opt is not None:
            opt.zero_grad()
        else:
            model.zero_grad()
        loss.backward()
        if opt is not None:
            opt.step()
        else:
            with lib.no_grad():
                for p in model.parameters():
                    p -= 1e-6 * p.grad
    layer = model[0]
    return loss.item(), [layer.bias.item(), *(layer.weight[:, i].item() for i in range(3))]


def fit_dynamic(lib, device, steps=3000, lr=1e-8):
    """A Module whose forward picks at random, each step, whether to add a 4th and 5th power with one shared
    weight: control flow and weight sharing. Python's own random numbers, seeded, choose the same in both."""
    x, y = _data(lib, device)

    class Dynamic(lib.nn.Module):
        def __init__(self):
            super().__init__()
            for name, v in zip("abcde", (*START, 0.01)):
                setattr(self, name, lib.nn.Parameter(lib.tensor(v, dtype=lib.float32, device=device)))

        def forward(self, t, extra):
            out = self.a + self.b * t + self.c * t ** 2 + self.d * t ** 3
            for power in range(4, extra + 1):
                out = out + self.e * t ** power
            return out

    model = Dynamic()
    opt = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    chooser = random.Random(5)
    for _ in range(steps):
        loss = (model(x, chooser.randint(3, 5)) - y).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item(), [p.item() for p in model.parameters()]


STYLES = {
    "by-hand": fit_by_hand,
    "autograd": fit_by_autograd,
    "legendre": fit_legendre,
    "nn": fit_by_nn,
    "rmsprop": lambda lib, device: fit_by_nn(lib, device, optimizer="rmsprop"),
    "dynamic": fit_dynamic,
}


def _start_loss(style):
    x = np.linspace(-math.pi, math.pi, 2000)
    if style == "legendre":
        a, b, c, d = 0.0, -1.0, 0.0, 0.3
        t = c + d * x
        return float(((a + b * 0.5 * (5 * t ** 3 - 3 * t) - np.sin(x)) ** 2).sum())
    a, b, c, d = START
    return float(((a + b * x + c * x ** 2 + d * x ** 3 - np.sin(x)) ** 2).sum())


# the loss each style reaches (measured: the engine and PyTorch 2.13 on the CPU, float32, from the same start):
# from 561.7, by hand, autograd and nn 8.912 after 2000 steps, RMSprop 8.907 (PyTorch 8.922); Legendre's P3 fit
# 8.944 from 461.9 (b = -2.21, d = 0.255, as the tutorial prints); the dynamic net 84.41 after 3000 steps (its
# tutorial runs 30,000, with momentum at lr 1e-8)
REACHED = {"by-hand": 8.92, "autograd": 8.92, "legendre": 8.95, "nn": 8.92, "rmsprop": 8.95, "dynamic": 84.5}


@pytest.mark.parametrize("style", list(STYLES))
def test_each_style_fits_the_cubic(style, device):
    loss, coefficients = STYLES[style](engine, device)
    assert loss < REACHED[style] < _start_loss(style) / 5, (loss, coefficients)
    assert all(math.isfinite(c) for c in coefficients)
    if style not in ("legendre", "dynamic"):  # sin(x) on [-pi, pi] ~ 0.857 x - 0.093 x^3
        assert coefficients[1] == pytest.approx(0.85, abs=0.01) and coefficients[3] == pytest.approx(-0.092, abs=0.001)


@pytest.mark.torch
@pytest.mark.parametrize("style", list(STYLES))
def test_each_style_matches_pytorch_from_the_same_start(style):
    torch = pytest.importorskip("torch")
    ours, theirs = STYLES[style](engine, "cpu"), STYLES[style](torch, "cpu")
    # RMSprop divides near-zero gradients by their own running size: float32 rounding shows in a and c
    rtol, atol = (2e-3, 1e-3) if style == "rmsprop" else (1e-4, 1e-5)
    assert ours[0] == pytest.approx(theirs[0], rel=rtol)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=atol)
