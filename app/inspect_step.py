"""Inside one step of a run: the graph its backward() walks, and where its time goes, op by op.

Both work on a copy of the run's state, so looking never moves the run's weights: :func:`step_graph` runs one step
of the recipe and describes the graph its ``backward()`` walks (for the hand-written recipes, numpy and tensor,
the graph autograd would record for the same net, with the hand-written backward lines beside the nodes they
stand for); :func:`profile_steps` times some steps op by op with :mod:`engine.profiler` and, in the same call,
the same steps unprofiled, so what the profile adds is measured, not assumed.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

import engine
from engine.autograd.describe import GraphDescription, describe
from engine.profiler import Profile, profile

from .config import RunConfig
from .recipes import TABLE, TrainState, fit_form, fit_predict, make_state

__all__ = ["StepGraph", "StepProfile", "step_graph", "profile_steps", "no_engine_ops", "MANUAL_LINES"]

# The hand-written backward of the manual recipes, line by line, beside the autograd node each line stands for.
# A key is the node's op, with ":name" when the node takes that leaf (the two products tell apart by weight), or
# "leaf:name" for a leaf's accumulation (where the hand-written step updates the weight instead).
_TWO_LAYER_TENSOR = {
    "Pow": "grad_y_pred = 2.0 * (y_pred - y)",
    "MatMul:w2": "grad_w2 = h_relu.t().mm(grad_y_pred)\ngrad_h_relu = grad_y_pred.mm(w2.t())",
    "Clamp": "grad_h = grad_h_relu.clone()\ngrad_h[h < 0] = 0",
    "MatMul:w1": "grad_w1 = x.t().mm(grad_h)",
    "leaf:w1": "w1 -= learning_rate * grad_w1",
    "leaf:w2": "w2 -= learning_rate * grad_w2",
}
_TWO_LAYER_NUMPY = {
    "Pow": "grad_y_pred = 2.0 * (y_pred - y)",
    "MatMul:w2": "grad_w2 = h_relu.T.dot(grad_y_pred)\ngrad_h_relu = grad_y_pred.dot(w2.T)",
    "Clamp": "grad_h = grad_h_relu.copy()\ngrad_h[h < 0] = 0",
    "MatMul:w1": "grad_w1 = x.T.dot(grad_h)",
    "leaf:w1": "w1 -= learning_rate * grad_w1",
    "leaf:w2": "w2 -= learning_rate * grad_w2",
}
_CUBIC = {
    "Pow": "g = 2.0 * (y_pred - y)",
    "leaf:a": "grad_a = g.sum()",
    "Mul:b": "grad_b = (g * x).sum()",
    "Mul:c": "grad_c = (g * x ** 2).sum()",
    "Mul:d": "grad_d = (g * x ** 3).sum()",
}
MANUAL_LINES = {"numpy": _TWO_LAYER_NUMPY, "tensor": _TWO_LAYER_TENSOR, "poly-numpy": _CUBIC,
                "poly-tensor": _CUBIC}


@dataclass
class StepGraph:
    description: GraphDescription
    recipe: str
    source: str  # "the step's own backward()" or "autograd on the same net (the recipe writes its backward)"
    manual: dict = field(default_factory=dict)  # node id -> the hand-written line(s) it stands for

    def to_dict(self) -> dict:
        return {"recipe": self.recipe, "source": self.source, "graph": self.description.to_dict(),
                "manual": {str(k): v for k, v in self.manual.items()}}


@dataclass
class StepProfile:
    profile: Profile  # summed over `steps` profiled steps
    steps: int
    plain_step_s: float  # the mean of as many unprofiled steps, measured in rounds between the profiled ones
    recipe: str
    device: str

    @property
    def profiled_step_s(self) -> float:
        return self.profile.step_s / self.steps

    @property
    def overhead(self) -> float:
        """The profiled step's time over the plain one's (1.0: profiling cost nothing)."""
        return self.profiled_step_s / self.plain_step_s if self.plain_step_s else float("nan")

    @property
    def accounted_step_s(self) -> float:
        """The step the rows describe: the profiled step less the profile's own bookkeeping."""
        return (self.profile.step_s - self.profile.own_s) / self.steps

    @property
    def agreement(self) -> float:
        """The rows' step (without the profiler's own cost) over the plain step measured in between: 1.0 when the
        per-op times add up to the step as it runs unprofiled."""
        return self.accounted_step_s / self.plain_step_s if self.plain_step_s else float("nan")

    def per_step(self) -> list[dict]:
        """The profile's rows in milliseconds per step."""
        rows = []
        for row in self.profile.by_op():
            rows.append({**row, "cpu_ms": row["cpu_s"] * 1e3 / self.steps,
                         "gpu_ms": None if row["gpu_s"] is None else row["gpu_s"] * 1e3 / self.steps,
                         "calls": row["calls"] / self.steps})
        return rows

    def categories_ms(self) -> dict:
        return {k: v * 1e3 / self.steps for k, v in self.profile.by_category().items()}

    def text(self) -> str:
        p = self.profile
        gpu = p.gpu_total_s is not None
        head = f"{'phase':9s} {'op':30s} {'ms/step':>9s}" + (f" {'GPU ms':>9s}" if gpu else "") + "  category"
        lines = [f"profile of {self.steps} steps of {self.recipe} on {self.device}", head, "-" * len(head)]
        for row in self.per_step():
            line = f"{row['phase']:9s} {row['op'][:30]:30s} {row['cpu_ms']:9.4f}"
            if gpu:
                line += f" {row['gpu_ms']:9.4f}" if row["gpu_ms"] is not None else f" {'':>9s}"
            lines.append(line + f"  {row['category']}")
        lines.append("")
        total = self.profiled_step_s * 1e3
        for name, ms in sorted(self.categories_ms().items(), key=lambda kv: -kv[1]):
            lines.append(f"{name:22s} {ms:9.4f} ms  {100 * ms / total if total else 0:5.1f}%")
        summed = sum(self.categories_ms().values())
        if abs(summed - total) <= 0.005 * total:
            lines.append(f"{'profiled step':22s} {total:9.4f} ms (the rows above add up to it)")
        else:  # "Python between ops" cannot go below 0: the profiler's own cost, an estimate, overlaps the ops' times
            lines.append(f"{'profiled step':22s} {total:9.4f} ms (the rows above add up to {summed:.4f} ms, "
                         f"{100 * (summed / total - 1):+.1f}%: the profiler's own cost is an estimate)")
        lines.append(f"{'plain step':22s} {self.plain_step_s * 1e3:9.4f} ms (unprofiled, in between; the rows "
                     f"without the profiler's own: {100 * (self.agreement - 1):+.1f}%)")
        if gpu:
            busy = p.gpu_total_s / p.step_s
            lines.append(f"{'GPU busy':22s} {100 * busy:5.1f}% of the step (the rest of the time it waits for the "
                         f"CPU to launch the next kernel)" if busy < 0.5 else
                         f"{'GPU busy':22s} {100 * busy:5.1f}% of the step")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"recipe": self.recipe, "device": self.device, "steps": self.steps,
                "profiled_step_ms": self.profiled_step_s * 1e3, "plain_step_ms": self.plain_step_s * 1e3,
                "agreement": self.agreement,
                "rows": self.per_step(), "categories_ms": self.categories_ms(),
                "gpu_busy": (self.profile.gpu_total_s / self.profile.step_s
                             if self.profile.gpu_total_s is not None else None)}


def _copy_state(config: RunConfig, state: TrainState | None) -> TrainState:
    if state is None:
        return make_state(config)
    return copy.deepcopy(state)


def leaf_names(state: TrainState) -> dict:
    """id(tensor) -> the name the recipe gives it (w1, w2; a, b, c, d; a model's parameter names)."""
    names = {}
    if state.model is not None:
        for name, p in state.model.named_parameters():
            names[id(p)] = name
    if isinstance(state.w1, engine.Tensor):
        names[id(state.w1)], names[id(state.w2)] = "w1", "w2"
    for name, c in zip("abcde", state.coefficients):
        if isinstance(c, engine.Tensor):
            names[id(c)] = name
    return names


def _manual_loss(config: RunConfig, state: TrainState):
    """The loss of a hand-written recipe's net, recorded by autograd at the run's weights: (loss, names)."""
    dtype = getattr(engine, config.dtype)

    def leaf(value):
        data = value._data if isinstance(value, engine.Tensor) else value
        return engine.tensor(engine.backend.to_host(data), dtype=dtype, device=config.device, requires_grad=True)

    def const(value):
        data = value._data if isinstance(value, engine.Tensor) else value
        return engine.tensor(engine.backend.to_host(data), dtype=dtype, device=config.device)

    x, y = const(state.x), const(state.y)
    if TABLE[config.recipe].family == "poly":
        c = [leaf(v) for v in state.coefficients]
        loss = (fit_predict(fit_form(config.recipe), x, c) - y).pow(2).sum()
        return loss, {id(t): n for t, n in zip(c, "abcde")}
    w1, w2 = leaf(state.w1), leaf(state.w2)
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    return loss, {id(w1): "w1", id(w2): "w2"}


def _manual_lines(recipe: str, graph: GraphDescription) -> dict:
    table = MANUAL_LINES.get(recipe, {})
    out: dict = {}
    for node in graph.nodes:  # the root's side first: of two nodes with one key, the one nearer the loss
        keys = [f"leaf:{node.name}"] if node.kind == "leaf" else [
            f"{node.op}:{graph.nodes[j].name}" for j in node.inputs if graph.nodes[j].kind == "leaf"] + [node.op]
        for key in keys:
            if key in table and key not in out.values():
                out.setdefault(node.id, table[key])
                table = {k: v for k, v in table.items() if k != key}
                break
    return out


def step_graph(config: RunConfig, state: TrainState | None = None) -> StepGraph:
    """The graph of one step at the run's current weights (a copy of them: the run does not move)."""
    recipe = TABLE[config.recipe]
    work = _copy_state(config, state)
    if config.recipe in MANUAL_LINES:
        loss, names = _manual_loss(config, work)
        description = describe(loss, names, stats=True)
        return StepGraph(description, config.recipe, "autograd on the same net (this recipe writes its backward "
                         "by hand: its lines are beside the nodes they stand for)",
                         _manual_lines(config.recipe, description))
    names = leaf_names(work)
    seen: list = []

    def on_backward(root):
        if not seen:
            seen.append(describe(root, names, stats=True))

    steps = recipe.step(work)
    with profile(config.device, on_backward=on_backward):
        next(steps)
    steps.close()
    if not seen:
        raise RuntimeError(f"{config.recipe}: the step called no backward()")
    return StepGraph(seen[0], config.recipe, "the step's own backward()")


def _sync(device: str):
    if device.startswith("cuda"):
        return engine.cuda.synchronize
    return lambda: None


def no_engine_ops(recipe: str) -> str:
    """Why a NumPy recipe has no profile, and which recipe is its step on engine tensors."""
    tensors = "poly-tensor" if TABLE[recipe].family == "poly" else "tensor"
    return (f"{recipe} runs on plain NumPy arrays, with no engine ops to time (the {tensors} recipe is its step on "
            "engine tensors)")


def profile_steps(config: RunConfig, state: TrainState | None = None, steps: int | None = None,
                  budget_s: float = 0.5) -> StepProfile:
    """Profile ``steps`` steps of the run's recipe (as many as fit in ``budget_s``, 3 to 200, when not given) on a
    copy of its state, after as many unprofiled ones: their mean is the plain step the profile is held to."""
    if TABLE[config.recipe].raw_numpy:
        raise ValueError(no_engine_ops(config.recipe))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a run near its edge may overflow
        return _profile_steps(config, state, steps, budget_s)


def _profile_steps(config, state, steps, budget_s) -> StepProfile:
    work = _copy_state(config, state)
    gen = TABLE[config.recipe].step(work)
    sync = _sync(config.device)
    t0 = time.perf_counter()
    next(gen)  # warm: the first step allocates
    sync()
    first = time.perf_counter() - t0
    if steps is None:
        steps = int(min(max(budget_s / 2 / max(first, 1e-6), 3), 200))
    # plain and profiled steps in alternating rounds, so a machine that slows down or speeds up meanwhile moves
    # both alike
    rounds = min(5, steps)
    plain_s = total = 0.0
    prof = Profile(device=config.device)
    done = 0
    for r in range(rounds):
        k = steps * (r + 1) // rounds - done
        done += k
        t = time.perf_counter()
        for _ in range(k):
            next(gen)
        sync()
        plain_s += time.perf_counter() - t
        with profile(config.device, into=prof):
            for _ in range(k):
                t = time.perf_counter()
                next(gen)
                sync()
                total += time.perf_counter() - t
    gen.close()
    prof.finish(total)
    return StepProfile(prof, steps, plain_s / steps, config.recipe, config.device)


def inside(config: RunConfig, state: TrainState | None, where: str) -> dict:
    """The graph and the profile of one step as plain data for the window: {"graph", "profile", "where",
    "problems"}; a part that cannot be made is None, and why is in "problems"."""
    out: dict = {"graph": None, "profile": None, "where": where, "problems": []}
    try:
        out["graph"] = step_graph(config, state).to_dict()
    except Exception as exc:  # the other part may still work
        out["problems"].append(f"No graph: {type(exc).__name__}: {exc}")
    if TABLE[config.recipe].raw_numpy:
        out["problems"].append(f"No profile: {no_engine_ops(config.recipe)}.")
    else:
        try:
            out["profile"] = profile_steps(config, state).to_dict()
        except Exception as exc:
            out["problems"].append(f"No profile: {type(exc).__name__}: {exc}")
    if out["graph"] is None and out["profile"] is None:
        raise RuntimeError(" ".join(out["problems"]))
    return out
