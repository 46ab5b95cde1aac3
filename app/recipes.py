"""The tutorial's programs as recipes: each a generator that trains one step per ``next()`` and yields the loss.

What a recipe is lives in one place, :data:`TABLE`: one :class:`Recipe` row per program (name, title,
description, default learning rate, the sizes it uses, whether a CUDA graph can replay its step, whether it runs
on the CPU only, its step generator, its memory formula). A new recipe is a new row, not a branch elsewhere.

Every recipe gets a :class:`TrainState` made by :func:`make_state`: the same seed draws the same x, y and
initial weights on the host (float64 NumPy) for ``numpy``, ``tensor``, ``autograd`` and ``function``, then
casts and moves them, so their curves lie on top of each other on every device and dtype. ``nn`` and
``optim`` draw their model the way ``nn.Linear`` does (uniform in ±1/sqrt(fan_in)), from the same stream.

The yielded loss stays where it was computed (a 0-d engine tensor; a NumPy scalar for ``numpy``): the
runner decides when to read it back, so a GPU step never waits for the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

import engine

if TYPE_CHECKING:  # config asks the table; the table needs RunConfig only as a type
    from .config import RunConfig


@dataclass
class TrainState:
    """What a recipe trains, kept where the runner and the gradient check can read it."""

    config: RunConfig
    x: object = None
    y: object = None
    w1: object = None  # tensor/autograd/function/numpy: the tutorial's weights
    w2: object = None
    model: object = None  # nn/optim
    extras: dict = field(default_factory=dict)

    def weights_host(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Current (w1, w2) as float64 NumPy arrays in the tutorial's layout (D_in x H, H x D_out)."""
        if self.model is not None:
            first, last = self.model[0], self.model[2]
            return (engine.backend.to_host(first.weight._data).T.astype(np.float64),
                    engine.backend.to_host(last.weight._data).T.astype(np.float64))
        if self.w1 is None:
            return None
        return _host64(self.w1), _host64(self.w2)

    def data_host(self) -> tuple[np.ndarray, np.ndarray]:
        return _host64(self.x), _host64(self.y)


def _host64(value) -> np.ndarray:
    if isinstance(value, engine.Tensor):
        value = value._data
    return engine.backend.to_host(value).astype(np.float64)


def draw_host(config: RunConfig):
    """Yield (name, float64 host array) for x, y and the initial weights, in the seed's stream order.

    One at a time, so a caller that converts each and lets it go never holds them all in float64."""
    rng = np.random.default_rng(config.seed)
    n, d_in, h, d_out = config.batch, config.d_in, config.hidden, config.d_out
    yield "x", rng.standard_normal((n, d_in))
    yield "y", rng.standard_normal((n, d_out))
    if config.recipe in ("nn", "optim"):
        b1, b2 = 1 / np.sqrt(d_in), 1 / np.sqrt(h)
        yield "lin1_w", rng.uniform(-b1, b1, (h, d_in))
        yield "lin1_b", rng.uniform(-b1, b1, h)
        yield "lin2_w", rng.uniform(-b2, b2, (d_out, h))
        yield "lin2_b", rng.uniform(-b2, b2, d_out)
    else:
        yield "w1", rng.standard_normal((d_in, h))
        yield "w2", rng.standard_normal((h, d_out))


def host_draws(config: RunConfig) -> dict[str, np.ndarray]:
    """x, y and the initial weights, in float64 on the host, from the config's seed."""
    return dict(draw_host(config))


def make_state(config: RunConfig) -> TrainState:
    """The recipe's starting point: each array drawn on the host in float64, cast, moved, and let go."""
    state = TrainState(config)
    recipe = TABLE[config.recipe]
    dtype = getattr(engine, config.dtype)
    made = {}
    for name, host in draw_host(config):
        if recipe.raw_numpy:
            made[name] = host.astype(config.dtype, copy=False)
        else:
            made[name] = engine.tensor(host, dtype=dtype, device=config.device,
                                       requires_grad=recipe.weights_require_grad and name in ("w1", "w2"))
        del host
    state.x, state.y = made.pop("x"), made.pop("y")
    if recipe.uses_model:
        model = engine.nn.Sequential(
            engine.nn.Linear(config.d_in, config.hidden, bias=False, device=config.device, dtype=dtype),
            engine.nn.ReLU(),
            engine.nn.Linear(config.hidden, config.d_out, bias=False, device=config.device, dtype=dtype),
        )
        # the drawn values become the parameters as they are (no extra copy)
        model[0].weight = engine.nn.Parameter(made.pop("lin1_w"))
        model[0].bias = engine.nn.Parameter(made.pop("lin1_b"))
        model[2].weight = engine.nn.Parameter(made.pop("lin2_w"))
        model[2].bias = engine.nn.Parameter(made.pop("lin2_b"))
        state.model = model
    else:
        state.w1, state.w2 = made.pop("w1"), made.pop("w2")
    return state


# --------------------------------------------------------------------------- the recipes


def numpy_recipe(state: TrainState) -> Iterator:
    """The NumPy warm-up; on CuPy arrays it is the same program on the GPU (the benchmarks' raw CuPy step)."""
    x, y, w1, w2 = state.x, state.y, state.w1, state.w2
    xp = engine.backend.xp_of(x)
    learning_rate = state.config.lr
    while True:
        h = x.dot(w1)
        h_relu = xp.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        loss = xp.square(y_pred - y).sum()
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h_relu = grad_y_pred.dot(w2.T)
        grad_h = grad_h_relu.copy()
        if xp is np:
            grad_h[h < 0] = 0
        else:  # CuPy counts a boolean mask on the host (a sync per step); the engine's own way on a GPU
            xp.copyto(grad_h, 0, where=h < 0)
        grad_w1 = x.T.dot(grad_h)
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
        yield loss


def manual_backprop(x, y, w1, w2, forget_relu_mask: bool = False):
    """The tutorial's forward pass and hand-written backward pass: (loss, grad_w1, grad_w2). The one copy of it:
    the tensor recipe trains with it, the gradient check compares it, and it runs on PyTorch tensors too (the
    benchmarks). ``forget_relu_mask`` plants the classic bug for the gradient panel."""
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    loss = (y_pred - y).pow(2).sum()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    if not forget_relu_mask:
        grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)
    return loss, grad_w1, grad_w2


def tensor_recipe(state: TrainState) -> Iterator:
    """Tensors with the hand-written backward pass (the same code runs on PyTorch tensors: the benchmarks)."""
    x, y, w1, w2 = state.x, state.y, state.w1, state.w2
    learning_rate = state.config.lr
    while True:
        loss, grad_w1, grad_w2 = manual_backprop(x, y, w1, w2)
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
        yield loss


def autograd_recipe(state: TrainState, lib=engine) -> Iterator:
    """Autograd computes the backward pass. ``lib`` is the library whose ``no_grad`` guards the update
    (engine; torch when the benchmarks run this same code on PyTorch tensors)."""
    x, y, w1, w2 = state.x, state.y, state.w1, state.w2
    learning_rate = state.config.lr
    while True:
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
        yield loss.detach()


class MyReLU(engine.autograd.Function):
    """The tutorial's custom ReLU: forward clamps, backward zeroes the gradient where the input was < 0."""

    @staticmethod
    def forward(ctx, input):  # noqa: A002 - the tutorial's name
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors  # noqa: A001
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def function_recipe(state: TrainState) -> Iterator:
    x, y, w1, w2 = state.x, state.y, state.w1, state.w2
    learning_rate = state.config.lr
    relu = MyReLU.apply
    while True:
        y_pred = relu(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with engine.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
        yield loss.detach()


def nn_recipe(state: TrainState) -> Iterator:
    model, x, y = state.model, state.x, state.y
    loss_fn = engine.nn.MSELoss(reduction="sum")
    learning_rate = state.config.lr
    while True:
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        model.zero_grad()
        loss.backward()
        with engine.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
        yield loss.detach()


def optim_recipe(state: TrainState) -> Iterator:
    model, x, y = state.model, state.x, state.y
    loss_fn = engine.nn.MSELoss(reduction="sum")
    optimizer = engine.optim.Adam(model.parameters(), lr=state.config.lr)
    state.extras["optimizer"] = optimizer
    while True:
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        yield loss.detach()


# --------------------------------------------------------------------------- the table

TUTORIAL_SIZES = ("batch", "d_in", "hidden", "d_out")


@dataclass(frozen=True)
class Recipe:
    """One row of the recipe table."""

    name: str
    title: str
    description: str
    default_lr: float
    step: Callable[[TrainState], Iterator]  # the generator: one training step per next(), yields the loss
    # elements at the run's fullest point, from (N, D_in, H, D_out): (weights, the step's own arrays); see
    # RunConfig.memory_estimate for how they are counted and measured
    memory: Callable[[int, int, int, int], tuple[int, int]]
    sizes: tuple[str, ...] = TUTORIAL_SIZES  # the RunConfig sizes the recipe uses
    capturable: bool = False  # its GPU step does the same work each time: a CUDA graph can replay it
    cpu_only: bool = False
    raw_numpy: bool = False  # trains plain NumPy arrays, not engine tensors
    weights_require_grad: bool = False  # w1 and w2 are leaves that autograd fills
    uses_model: bool = False  # an nn.Sequential model instead of w1 and w2


def _numpy_memory(n, d_in, h, d_out):
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    # the update, or the loss while the last step's gradients are still alive (wide outputs)
    return dh + ho, max(2 * dh + ho + 4 * nh + 2 * no, dh + ho + 4 * nh + 4 * no)


def _manual_memory(n, d_in, h, d_out):
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    # manual_backprop's last product, while the last step's gradients are still held by the recipe: its
    # activations are gone by the update
    return dh + ho, 2 * dh + 2 * ho + 4 * nh + 2 * no


def _autograd_memory(n, d_in, h, d_out):
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    # the last backward's end, or the loss's backward while the kept .grad buffers are alive
    return dh + ho, max(2 * dh + ho + 3 * nh + 3 * no, dh + ho + 4 * nh + 6 * no)


def _nn_memory(n, d_in, h, d_out):
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    return dh + ho + h + d_out, max(2 * dh + ho + 5 * nh + 4 * no, dh + ho + 6 * nh + 8 * no)


def _adam_memory(n, d_in, h, d_out):
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    weights = dh + ho + h + d_out
    return weights, max(6 * weights + ho + 3 * nh + 2 * no, 2 * weights + dh + ho + 6 * nh + 8 * no)


TABLE: dict[str, Recipe] = {r.name: r for r in (
    Recipe("numpy", "NumPy warm-up", "Plain NumPy arrays, forward and backward written by hand (CPU only).", 1e-6,
           numpy_recipe, _numpy_memory, cpu_only=True, raw_numpy=True),
    Recipe("tensor", "Tensors, manual backprop",
           "Engine tensors on the chosen device; the backward pass is written by hand.", 1e-6,
           tensor_recipe, _manual_memory, capturable=True),
    Recipe("autograd", "Autograd", "The same net; loss.backward() computes the gradients.", 1e-6,
           autograd_recipe, _autograd_memory, capturable=True, weights_require_grad=True),
    Recipe("function", "Custom autograd.Function", "Autograd with a hand-written ReLU Function (MyReLU) in the middle.",
           1e-6, function_recipe, _autograd_memory, capturable=True, weights_require_grad=True),
    Recipe("nn", "nn.Sequential", "Linear-ReLU-Linear with MSELoss(reduction='sum'), manual update.", 1e-4,
           nn_recipe, _nn_memory, capturable=True, uses_model=True),
    # Adam counts its steps on the host: a replay would repeat the captured step's bias correction
    Recipe("optim", "nn + optim.Adam", "The nn model, updated by optim.Adam.", 1e-4,
           optim_recipe, _adam_memory, uses_model=True),
)}


def graph_recipes() -> tuple[str, ...]:
    """The recipes whose step a CUDA graph can replay."""
    return tuple(name for name, r in TABLE.items() if r.capturable)
