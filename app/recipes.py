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
    model: object = None  # nn/optim, and the polynomial family's nn/optim/module/dynamic
    coefficients: list = field(default_factory=list)  # the polynomial family's a, b, c, d (e) as they train
    extras: dict = field(default_factory=dict)

    def coefficients_host(self) -> list[float] | None:
        """The polynomial family's current coefficients as floats (one small device read on a GPU), else None."""
        recipe = TABLE[self.config.recipe]
        if recipe.family != "poly":
            return None
        if self.model is not None and recipe.name in ("poly-nn", "poly-optim"):
            layer = self.model[0]
            arrays = [layer.bias._data, layer.weight._data]  # a, then b, c, d
        elif self.model is not None:
            arrays = [p._data for p in self.model.parameters()]
        else:
            arrays = [c._data if isinstance(c, engine.Tensor) else c for c in self.coefficients]
        xp = engine.backend.xp_of(arrays[0])
        together = xp.concatenate([xp.reshape(a, (-1,)) for a in arrays])  # one read, not one per coefficient
        return [float(v) for v in engine.backend.to_host(together)]

    def weights_host(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Current (w1, w2) as float64 NumPy arrays in the tutorial's layout (D_in x H, H x D_out)."""
        if TABLE[self.config.recipe].family != "two-layer":
            return None
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
    if TABLE[config.recipe].family == "poly":
        x = np.linspace(-np.pi, np.pi, config.points)
        yield "x", x
        yield "y", np.sin(x)
        if config.recipe == "poly-function":  # the tutorial's start, "for this example to converge"
            yield "coefficients", np.array(LEGENDRE_START)
        else:  # randn(()) for a, b, c, d and (dynamic) e, from one stream
            yield "coefficients", rng.standard_normal(5 if config.recipe == "poly-dynamic" else 4)
        return
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
    if recipe.family == "poly":
        return _make_poly_state(state, recipe, dtype)
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


def _make_poly_state(state: TrainState, recipe, dtype) -> TrainState:
    config = state.config
    draws = host_draws(config)
    values = [float(v) for v in draws["coefficients"]]
    if recipe.raw_numpy:
        state.x, state.y = (draws[k].astype(config.dtype) for k in ("x", "y"))
        state.coefficients = [np.array(v, dtype=config.dtype) for v in values]
        return state
    state.x, state.y = (engine.tensor(draws[k], dtype=dtype, device=config.device) for k in ("x", "y"))
    grad = recipe.weights_require_grad
    if recipe.name in ("poly-nn", "poly-optim"):
        layer = engine.nn.Linear(3, 1, device=config.device, dtype=dtype)
        with engine.no_grad():
            layer.weight.copy_(engine.tensor([values[1:]], dtype=dtype))
            layer.bias.fill_(values[0])
        state.model = engine.nn.Sequential(layer, engine.nn.Flatten(0, 1))
    elif recipe.name in ("poly-module", "poly-dynamic"):
        state.model = (DynamicNet if recipe.name == "poly-dynamic" else Polynomial3)(values, dtype, config.device)
    else:
        state.coefficients = [engine.tensor(v, dtype=dtype, device=config.device, requires_grad=grad)
                              for v in values]
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


def _train_by_hand(model, inputs, y, learning_rate) -> Iterator:
    """MSELoss(reduction='sum') of ``model(inputs)``; the update written by hand under no_grad."""
    loss_fn = engine.nn.MSELoss(reduction="sum")
    while True:
        y_pred = model(inputs)
        loss = loss_fn(y_pred, y)
        model.zero_grad()
        loss.backward()
        with engine.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
        yield loss.detach()


def _train_with(optimizer, model, inputs, y) -> Iterator:
    """MSELoss(reduction='sum') of ``model(inputs)``, stepped by ``optimizer``."""
    loss_fn = engine.nn.MSELoss(reduction="sum")
    while True:
        y_pred = model(inputs)
        loss = loss_fn(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        yield loss.detach()


def nn_recipe(state: TrainState) -> Iterator:
    return _train_by_hand(state.model, state.x, state.y, state.config.lr)


def optim_recipe(state: TrainState) -> Iterator:
    optimizer = state.extras["optimizer"] = engine.optim.Adam(state.model.parameters(), lr=state.config.lr)
    return _train_with(optimizer, state.model, state.x, state.y)


# --------------------------------------------------------------------------- the polynomial family
# Today's tutorial fits y = sin(x) on linspace(-pi, pi) with a cubic y = a + b x + c x^2 + d x^3, in the same
# styles; the tutorial's learning rates and iteration counts are the rows' defaults.

LEGENDRE_START = (0.0, -1.0, 0.0, 0.3)


def fit_form(recipe: str) -> str:
    """The shape of a poly recipe's fit: "legendre" (a + b P3(c + d x)), "dynamic" (the cubic and e x^4 + e x^5,
    the dynamic net's largest form) or "cubic"."""
    return "legendre" if recipe == "poly-function" else "dynamic" if recipe == "poly-dynamic" else "cubic"


def fit_predict(form: str, x, c):
    """The fit at the points ``x`` (NumPy arrays or engine tensors) for the coefficients ``c``: the one copy of
    the formulas, used by the recipes, the fit view and the gradient check."""
    if form == "legendre":
        t = c[2] + c[3] * x
        return c[0] + c[1] * (0.5 * (5 * t ** 3 - 3 * t))
    y = c[0] + c[1] * x + c[2] * x ** 2 + c[3] * x ** 3
    if form == "dynamic":  # both extra terms, one shared e
        y = y + c[4] * x ** 4 + c[4] * x ** 5
    return y


def fit_gradients(form: str, x, y, c, forget_two: bool = False):
    """The fit's loss and its gradient written by hand: (loss, [one value per coefficient]). The poly-numpy and
    poly-tensor recipes train with it and the gradient check compares it; ``forget_two`` plants the classic
    slip, d(r^2)/dr taken as r."""
    y_pred = fit_predict(form, x, c)
    loss = ((y_pred - y) ** 2).sum()
    g = (1.0 if forget_two else 2.0) * (y_pred - y)
    if form == "legendre":
        t = c[2] + c[3] * x
        dp3 = 1.5 * (5 * t ** 2 - 1)
        return loss, [g.sum(), (g * (0.5 * (5 * t ** 3 - 3 * t))).sum(), (g * c[1] * dp3).sum(),
                      (g * c[1] * dp3 * x).sum()]
    grads = [g.sum(), (g * x).sum(), (g * x ** 2).sum(), (g * x ** 3).sum()]
    if form == "dynamic":
        grads.append((g * (x ** 4 + x ** 5)).sum())
    return loss, grads


def poly_numpy_recipe(state: TrainState) -> Iterator:
    """NumPy, gradients by hand."""
    x, y, coefficients = state.x, state.y, state.coefficients
    learning_rate = state.config.lr
    while True:
        loss, grads = fit_gradients("cubic", x, y, coefficients)
        for i, g in enumerate(grads):
            coefficients[i] = coefficients[i] - learning_rate * g
        yield loss


def poly_tensor_recipe(state: TrainState) -> Iterator:
    """Engine tensors, gradients by hand (the same code as NumPy's)."""
    x, y, coefficients = state.x, state.y, state.coefficients
    learning_rate = state.config.lr
    while True:
        loss, grads = fit_gradients("cubic", x, y, coefficients)
        for c, g in zip(coefficients, grads):
            c -= learning_rate * g
        yield loss


def _fit_by_autograd(state: TrainState, predict) -> Iterator:
    """Autograd finds the coefficients' gradients; the update is written by hand, then ``grad = None``."""
    x, y, coefficients = state.x, state.y, state.coefficients
    learning_rate = state.config.lr
    while True:
        loss = (predict(x, *coefficients) - y).pow(2).sum()
        loss.backward()
        with engine.no_grad():
            for p in coefficients:
                p -= learning_rate * p.grad
                p.grad = None
        yield loss.detach()


def poly_autograd_recipe(state: TrainState) -> Iterator:
    return _fit_by_autograd(state, lambda x, *c: fit_predict("cubic", x, c))


class LegendrePolynomial3(engine.autograd.Function):
    """P3(t) = (5 t^3 - 3 t) / 2 with its derivative (3/2)(5 t^2 - 1) written by hand."""

    @staticmethod
    def forward(ctx, input):  # noqa: A002 - the tutorial's name
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors  # noqa: A001
        return grad_output * 1.5 * (5 * input ** 2 - 1)


def poly_function_recipe(state: TrainState) -> Iterator:
    """y = a + b P3(c + d x), P3 a Function of our own."""
    p3 = LegendrePolynomial3.apply
    return _fit_by_autograd(state, lambda x, a, b, c, d: a + b * p3(c + d * x))


def _powers(x):
    return x.unsqueeze(-1).pow(engine.tensor([1, 2, 3], device=x.device))


def poly_nn_recipe(state: TrainState) -> Iterator:
    """Linear(3, 1) on (x, x^2, x^3), flattened; MSELoss(reduction='sum'), update by hand."""
    return _train_by_hand(state.model, _powers(state.x), state.y, state.config.lr)


def poly_optim_recipe(state: TrainState) -> Iterator:
    """The same model, updated by optim.RMSprop."""
    optimizer = state.extras["optimizer"] = engine.optim.RMSprop(state.model.parameters(), lr=state.config.lr)
    return _train_with(optimizer, state.model, _powers(state.x), state.y)


class Polynomial3(engine.nn.Module):
    """The cubic as a Module of four scalar Parameters."""

    def __init__(self, values, dtype, device):
        super().__init__()
        for name, v in zip("abcd", values):
            setattr(self, name, engine.nn.Parameter(engine.tensor(v, dtype=dtype, device=device)))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3


class DynamicNet(engine.nn.Module):
    """The cubic plus, chosen at random each forward, an e x^4 and an e x^5 term that share e: control flow
    and weight sharing, as in the tutorial."""

    def __init__(self, values, dtype, device):
        super().__init__()
        for name, v in zip("abcde", values):
            setattr(self, name, engine.nn.Parameter(engine.tensor(v, dtype=dtype, device=device)))
        self.chooser = np.random.default_rng(0)

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, int(self.chooser.integers(4, 6)) + 1):
            y = y + self.e * x ** exp
        return y


def poly_module_recipe(state: TrainState) -> Iterator:
    optimizer = engine.optim.SGD(state.model.parameters(), lr=state.config.lr)
    return _train_with(optimizer, state.model, state.x, state.y)


def poly_dynamic_recipe(state: TrainState) -> Iterator:
    state.model.chooser = np.random.default_rng(state.config.seed)
    optimizer = engine.optim.SGD(state.model.parameters(), lr=state.config.lr, momentum=0.9)
    return _train_with(optimizer, state.model, state.x, state.y)


def poly_curve(recipe: str, coefficients, x):
    """The fitted function of ``recipe``'s coefficients at the points ``x`` (NumPy), for the fit view."""
    return fit_predict(fit_form(recipe), np.asarray(x, dtype=np.float64), list(coefficients))


def poly_formula(recipe: str, coefficients) -> str:
    """The fit as the tutorial prints it."""
    form = fit_form(recipe)
    if form == "legendre":
        a, b, c, d = coefficients
        return f"y = {a:.4g} + {b:.4g} P3({c:.4g} + {d:.4g} x)"
    a, b, c, d = coefficients[:4]
    text = f"y = {a:.4g} + {b:.4g} x + {c:.4g} x^2 + {d:.4g} x^3"
    if form == "dynamic":
        e = coefficients[4]
        text += f" + {e:.4g} x^4 ? + {e:.4g} x^5 ?"  # the dynamic net: each term there or not, at random
    return text


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
    family: str = "two-layer"  # two-layer: the 2017 tutorial's net; poly: today's fit of sin(x)
    default_iters: int = 500
    capturable: bool = False  # its GPU step does the same work each time: a CUDA graph can replay it
    cpu_only: bool = False
    raw_numpy: bool = False  # trains plain NumPy arrays, not engine tensors
    weights_require_grad: bool = False  # w1 and w2 are leaves that autograd fills
    uses_model: bool = False  # an nn.Sequential model instead of w1 and w2


def _poly_memory(points_arrays: int):
    """The polynomial family: beside x and y, ``points_arrays`` point-sized arrays alive at the step's fullest
    (measured with tracemalloc at a million points: tests/app/test_memory_estimate.py)."""
    return lambda p: (0, points_arrays * p)


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
    # (each Linear one addmm, MSELoss one node: no separate sum, difference or square is kept)
    dh, ho, nh, no = d_in * h, h * d_out, n * h, n * d_out
    return dh + ho + h + d_out, max(2 * dh + ho + 3 * nh + no, dh + ho + 4 * nh + 4 * no)


def _adam_memory(n, d_in, h, d_out):
    dh, nh, no = d_in * h, n * h, n * d_out
    weights = dh + h * d_out + h + d_out
    # Adam's m and v and the .grad buffers (3 W), with the update's temporaries of the first weight, or the
    # activations and their gradients at the loss's backward
    return weights, max(3 * weights + 3 * dh + 2 * nh + no, 3 * weights + 4 * nh + 4 * no)


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
    # today's tutorial: y = sin(x) fitted by a cubic on linspace(-pi, pi, points)
    Recipe("poly-numpy", "Fit sin(x): NumPy", "The cubic's gradients written by hand on NumPy arrays (CPU only).",
           1e-6, poly_numpy_recipe, _poly_memory(3), sizes=("points",), family="poly", default_iters=2000,
           cpu_only=True, raw_numpy=True),
    Recipe("poly-tensor", "Fit sin(x): tensors", "The same hand-written gradients on engine tensors.", 1e-6,
           poly_tensor_recipe, _poly_memory(4), sizes=("points",), family="poly", default_iters=2000),
    Recipe("poly-autograd", "Fit sin(x): autograd", "a, b, c, d require grad; loss.backward() finds the gradients.",
           1e-6, poly_autograd_recipe, _poly_memory(18), sizes=("points",), family="poly", default_iters=2000,
           weights_require_grad=True),
    Recipe("poly-function", "Fit sin(x): Legendre Function",
           "y = a + b P3(c + d x) with P3 an autograd.Function of our own (its start is the tutorial's).", 5e-6,
           poly_function_recipe, _poly_memory(14), sizes=("points",), family="poly", default_iters=2000,
           weights_require_grad=True),
    Recipe("poly-nn", "Fit sin(x): nn", "Linear(3, 1) on (x, x^2, x^3) and Flatten; MSELoss(sum), update by hand.",
           1e-6, poly_nn_recipe, _poly_memory(7), sizes=("points",), family="poly", default_iters=2000,
           uses_model=True),
    Recipe("poly-optim", "Fit sin(x): optim.RMSprop", "The nn model, updated by optim.RMSprop.", 1e-3,
           poly_optim_recipe, _poly_memory(7), sizes=("points",), family="poly", default_iters=2000,
           uses_model=True),
    Recipe("poly-module", "Fit sin(x): nn.Module", "The cubic as a Module of four Parameters, with optim.SGD.", 1e-6,
           poly_module_recipe, _poly_memory(16), sizes=("points",), family="poly", default_iters=2000,
           uses_model=True),
    Recipe("poly-dynamic", "Fit sin(x): dynamic net",
           "Each step adds, at random, e x^4 and e x^5 (one shared e): control flow and weight sharing. SGD with "
           "momentum.", 1e-8, poly_dynamic_recipe, _poly_memory(28), sizes=("points",), family="poly",
           default_iters=30000, uses_model=True),
)}


def families() -> dict[str, tuple[str, ...]]:
    """The recipes of each family, in the table's order."""
    out: dict[str, list[str]] = {}
    for name, recipe in TABLE.items():
        out.setdefault(recipe.family, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def graph_recipes() -> tuple[str, ...]:
    """The recipes whose step a CUDA graph can replay."""
    return tuple(name for name, r in TABLE.items() if r.capturable)
