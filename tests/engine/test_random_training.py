"""Random training runs against PyTorch: a network drawn from the layers, a loss, an optimizer with its options
and a learning-rate schedule, trained a few steps from the same weights on the engine and on torch 2.13 in
float64; every step's loss and the final weights must agree. The single layers and optimizers are tested one by
one elsewhere; here they meet (a weight decay with a momentum and a schedule, a norm before an in-place ReLU,
clipping before the step, parameter groups, zero_grad either way)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from tests.engine.helpers import HAVE_TORCH

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed (the runs are held to it)")

WIDTH = 5
LAYERS = {
    "linear": lambda nn: nn.Linear(WIDTH, WIDTH),
    "linear without bias": lambda nn: nn.Linear(WIDTH, WIDTH, bias=False),
    "relu": lambda nn: nn.ReLU(),
    "relu in place": lambda nn: nn.ReLU(inplace=True),
    "tanh": lambda nn: nn.Tanh(),
    "gelu": lambda nn: nn.GELU(),
    "gelu tanh": lambda nn: nn.GELU(approximate="tanh"),
    "silu": lambda nn: nn.SiLU(),
    "leaky relu": lambda nn: nn.LeakyReLU(0.1),
    "elu": lambda nn: nn.ELU(),
    "softplus": lambda nn: nn.Softplus(),
    "layer norm": lambda nn: nn.LayerNorm(WIDTH),
    "rms norm": lambda nn: nn.RMSNorm(WIDTH),
    "batch norm": lambda nn: nn.BatchNorm1d(WIDTH),
    "dropout 0": lambda nn: nn.Dropout(0.0),
    "identity": lambda nn: nn.Identity(),
    "prelu": lambda nn: nn.PReLU(),
}
LOSSES = {
    "mse": lambda nn, out, y, labels: nn.MSELoss()(out, y),
    "l1": lambda nn, out, y, labels: nn.L1Loss()(out, y),
    "smooth l1": lambda nn, out, y, labels: nn.SmoothL1Loss(beta=0.5)(out, y),
    "huber": lambda nn, out, y, labels: nn.HuberLoss(delta=0.7)(out, y),
    "cross entropy": lambda nn, out, y, labels: nn.CrossEntropyLoss()(out, labels),
    "cross entropy, smoothed": lambda nn, out, y, labels: nn.CrossEntropyLoss(label_smoothing=0.1)(out, labels),
    "bce with logits": lambda nn, out, y, labels: nn.BCEWithLogitsLoss()(out, y.sigmoid()),
}
OPTIMIZERS = {
    "sgd": lambda optim, groups: optim.SGD(groups, lr=0.05),
    "sgd momentum": lambda optim, groups: optim.SGD(groups, lr=0.05, momentum=0.9, weight_decay=0.01),
    "sgd nesterov": lambda optim, groups: optim.SGD(groups, lr=0.05, momentum=0.8, nesterov=True),
    "sgd dampening": lambda optim, groups: optim.SGD(groups, lr=0.05, momentum=0.5, dampening=0.3),
    "adam": lambda optim, groups: optim.Adam(groups, lr=0.01),
    "adam amsgrad": lambda optim, groups: optim.Adam(groups, lr=0.01, amsgrad=True, weight_decay=0.01),
    "adamw": lambda optim, groups: optim.AdamW(groups, lr=0.01, weight_decay=0.1),
    "adamw amsgrad maximize": lambda optim, groups: optim.AdamW(groups, lr=0.01, amsgrad=True, maximize=True),
    "rmsprop": lambda optim, groups: optim.RMSprop(groups, lr=0.01),
    "rmsprop centered momentum": lambda optim, groups: optim.RMSprop(groups, lr=0.01, centered=True, momentum=0.5),
    "adagrad": lambda optim, groups: optim.Adagrad(groups, lr=0.05, lr_decay=0.01),
    "adamax": lambda optim, groups: optim.Adamax(groups, lr=0.01),
    "nadam": lambda optim, groups: optim.NAdam(groups, lr=0.01),
    "radam": lambda optim, groups: optim.RAdam(groups, lr=0.01),
    "adadelta": lambda optim, groups: optim.Adadelta(groups, lr=1.0),
}
SCHEDULES = {
    "none": lambda sched, opt: None,
    "step": lambda sched, opt: sched.StepLR(opt, step_size=2, gamma=0.5),
    "exponential": lambda sched, opt: sched.ExponentialLR(opt, gamma=0.9),
    "cosine": lambda sched, opt: sched.CosineAnnealingLR(opt, T_max=4),
    "linear warm-up": lambda sched, opt: sched.LinearLR(opt, start_factor=0.3, total_iters=3),
    "one cycle": lambda sched, opt: sched.OneCycleLR(opt, max_lr=0.05, total_steps=10, cycle_momentum=False),
}

run_spec = st.tuples(
    st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=5),
    st.sampled_from(sorted(LOSSES)),
    st.sampled_from(sorted(OPTIMIZERS)),
    st.sampled_from(sorted(SCHEDULES)),
    st.booleans(),  # clip the gradients' norm before each step
    st.booleans(),  # two parameter groups, the second at a tenth of the learning rate
    st.booleans(),  # zero_grad(set_to_none=False)
)


def _train(lib, spec, steps=4):
    layers, loss_name, opt_name, schedule, clip, two_groups, keep_zeros = spec
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, WIDTH), *[LAYERS[name](nn) for name in layers], nn.Linear(WIDTH, WIDTH))
    model = model.double()
    rng = np.random.default_rng(1)
    # the same weights in both: the engine's generator is not PyTorch's
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.6, 0.6, tuple(p.shape)), dtype=lib.float64))
    x = lib.tensor(rng.standard_normal((8, 3)), dtype=lib.float64)
    y = lib.tensor(rng.standard_normal((8, WIDTH)), dtype=lib.float64)
    labels = lib.tensor(rng.integers(0, WIDTH, 8))
    params = list(model.parameters())
    groups = ([{"params": params[:2]}, {"params": params[2:], "lr": 0.001}] if two_groups and len(params) > 2
              else params)
    opt = OPTIMIZERS[opt_name](lib.optim, groups)
    sched = SCHEDULES[schedule](lib.optim.lr_scheduler, opt)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=not keep_zeros)
        loss = LOSSES[loss_name](nn, model(x), y, labels)
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(float(loss.item()))
    return losses, [p.detach().cpu().numpy().copy() for p in model.parameters()]


def _refused_or(train, lib, spec):
    try:
        return train(lib, spec)
    except RuntimeError as exc:
        if "modified by an inplace operation" not in str(exc):
            raise
        return None, "refused"


@settings(max_examples=100, deadline=None, derandomize=True)  # (the same runs each time: see test_random_graphs)
@given(run_spec)
def test_a_random_training_run_is_pytorchs(spec):
    import torch

    losses, weights = _refused_or(_train, engine, spec)
    expected_losses, expected_weights = _refused_or(_train, torch, spec)
    assert (losses is None) == (expected_losses is None), f"engine {losses or weights}, torch {expected_losses}"
    if losses is None:
        return  # (both refused: an in-place activation wrote a value backward needs, Tanh's output)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-9, atol=1e-12)
    for w, e in zip(weights, expected_weights):
        # (a bias right before a norm has a zero gradient, rounding's 1e-17, which Adagrad divides by its own size
        # and an eps of 1e-10: its steps there are lr * 1e-7 of noise, in either library)
        np.testing.assert_allclose(w, e, rtol=1e-8, atol=1e-6)


@pytest.mark.parametrize("make, name", [
    (lambda nn: nn.ReLU(inplace=True), "ReLU(inplace=True)"),
    (lambda nn: nn.LeakyReLU(0.2, inplace=True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda nn: nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)"),
    (lambda nn: nn.SiLU(inplace=True), "SiLU(inplace=True)"),
    (lambda nn: nn.ReLU6(inplace=True), "ReLU6(inplace=True)"),
    (lambda nn: nn.Hardtanh(-2.0, 2.0, inplace=True), "Hardtanh(min_val=-2.0, max_val=2.0, inplace=True)"),
])
def test_an_in_place_activation_writes_its_input_as_pytorchs(make, name):
    """inplace=True was accepted and ignored: the input kept its values (a caller that reused it saw the
    difference), and a value backward needs was never refused."""
    import torch

    for lib in (engine, torch):
        layer = make(lib.nn)
        assert repr(layer) == name
        x = lib.tensor([[1.0, -2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        h = x * 1
        out = layer(h)
        assert out is h
        expected = make(torch.nn)(torch.tensor([[1.0, -2.0, 3.0]], dtype=torch.float64)).tolist()
        np.testing.assert_allclose(h.tolist(), expected, rtol=1e-15)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            layer(lib.tanh(x * 1)).sum().backward()  # Tanh's output, which its backward reads
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            layer(x)
