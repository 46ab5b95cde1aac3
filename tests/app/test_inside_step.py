"""Inside the step: the graph of each recipe's step, its per-op profile, how the weights move (app.dynamics), the
command line's --profile, and the export of the samples."""

from __future__ import annotations

import json

import numpy as np
import pytest

import engine
from app import export
from app.config import RunConfig
from app.dynamics import _histogram, parameters
from app.inspect_step import StepProfile, inside, profile_steps, step_graph
from app.recipes import fit_form, fit_gradients, make_state
from app.runner import Runner
from engine.profiler import OpRecord, Profile
from main import main

SMALL = dict(batch=8, d_in=20, hidden=10, d_out=3)
SMALL_ARGS = ["--batch", "8", "--d-in", "20", "--hidden", "10", "--d-out", "3"]


def _ops(graph):
    return [(n.op, n.name) for n in graph.description.nodes]


# ---------------------------------------------------------------------------------------------------- graph
def test_the_manual_recipe_shows_its_hand_written_lines_beside_the_nodes_they_stand_for():
    g = step_graph(RunConfig(recipe="tensor", **SMALL))
    nodes = g.description.nodes
    by_line = {text: nodes[i] for i, text in g.manual.items()}
    assert by_line["grad_h = grad_h_relu.clone()\ngrad_h[h < 0] = 0"].op == "Clamp"
    first_product = by_line["grad_w1 = x.t().mm(grad_h)"]
    assert first_product.op == "MatMul" and nodes[first_product.inputs[-1]].name == "w1"
    second = by_line["grad_w2 = h_relu.t().mm(grad_y_pred)\ngrad_h_relu = grad_y_pred.mm(w2.t())"]
    assert second.op == "MatMul" and nodes[second.inputs[-1]].name == "w2"
    assert by_line["w1 -= learning_rate * grad_w1"].name == "w1"
    assert by_line["grad_y_pred = 2.0 * (y_pred - y)"].op == "Pow"
    assert "autograd on the same net" in g.source
    numpy_lines = step_graph(RunConfig(recipe="numpy", **SMALL)).manual.values()
    assert "grad_w1 = x.T.dot(grad_h)" in numpy_lines


def test_the_graph_of_each_recipe_is_its_own_backward_with_named_leaves():
    assert _ops(step_graph(RunConfig(recipe="function", **SMALL)))[4] == ("MyReLU", None)
    nn = step_graph(RunConfig(recipe="nn", **SMALL))
    assert {n.name for n in nn.description.leaves} == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert nn.source == "the step's own backward()" and not nn.manual
    legendre = step_graph(RunConfig(recipe="poly-function", points=50))
    assert "LegendrePolynomial3" in [op for op, _ in _ops(legendre)]
    assert sorted(n.name for n in legendre.description.leaves) == ["a", "b", "c", "d"]
    cubic = step_graph(RunConfig(recipe="poly-tensor", points=50))
    assert sorted(cubic.manual.values())[0].startswith("g = 2.0 * (y_pred - y)")
    assert len(cubic.manual) == 5


def test_looking_at_the_graph_does_not_move_the_runs_weights():
    config = RunConfig(recipe="autograd", **SMALL)
    state = make_state(config)
    before = state.w1.detach().numpy().copy()
    g = step_graph(config, state)
    np.testing.assert_array_equal(state.w1.detach().numpy(), before)
    assert state.w1.grad is None
    # stats at the run's weights: the first product's gradient shows the ReLU mask as zeros
    x, w1 = state.x.numpy(), before
    h = x @ w1
    (product,) = [n for n in g.description.nodes if n.op == "MatMul" and n.shape == h.shape]
    assert product.grad["zeros"] == pytest.approx(np.mean(h < 0))


# ---------------------------------------------------------------------------------------------------- profile
def test_a_profile_names_the_ops_of_the_step_and_holds_itself_to_the_plain_step():
    sp = profile_steps(RunConfig(recipe="autograd", **SMALL), steps=20)
    rows = {(r["phase"], r["op"]): r for r in sp.per_step()}
    assert rows[("forward", "MatMul")]["calls"] == 2 and rows[("backward", "MatMul backward")]["calls"] == 2
    assert rows[("forward", "Zero_")]["category"] == "update"
    cats = sp.categories_ms()
    assert set(cats) >= {"matrix product", "elementwise", "update", "autograd walk", "Python between ops",
                         "profiler's own"}
    # the rows add up to the profiled step (by construction: "Python between ops" is what is left), and the plain
    # step was measured beside it. On a loaded machine the profiler's own cost, an estimate, can exceed what is left:
    # then "Python between ops" is 0, not negative, and the rows add up to more (it failed so here under load)
    if cats["Python between ops"] > 0:
        assert sum(cats.values()) == pytest.approx(sp.profiled_step_s * 1e3, rel=1e-6)
    else:
        assert sum(cats.values()) >= sp.profiled_step_s * 1e3 * (1 - 1e-6)
    assert sp.plain_step_s > 0 and 0.2 < sp.agreement < 5  # its closeness is a timing test (below)
    text = sp.text()
    assert "profile of 20 steps of autograd on cpu" in text and "plain step" in text
    with pytest.raises(ValueError, match="plain NumPy arrays"):
        profile_steps(RunConfig(recipe="numpy", **SMALL))


def test_the_text_says_when_the_rows_do_not_add_up_to_the_profiled_step():
    """"Python between ops" stops at 0: where the profiler's own cost (an estimate) and the ops' times overlap, the
    categories add up to more than the step, and the text said they added up to it."""
    def text(op_s, own_s):
        prof = Profile(records=[OpRecord("MatMul", "forward", op_s)], cost_s={"call": own_s})
        prof.finish(1.0)
        return StepProfile(prof, 1, 1.0, "autograd", "cpu").text()

    assert "1000.0000 ms (the rows above add up to it)" in text(0.7, 0.2)  # 0.1 s of Python between ops
    assert "1000.0000 ms (the rows above add up to 1100.0000 ms, +10.0%: the profiler's own cost is an estimate)" \
        in text(0.9, 0.2)


def test_inside_gives_the_graph_alone_for_the_numpy_recipe_and_says_why():
    payload = inside(RunConfig(recipe="numpy", **SMALL), None, "the initial weights")
    assert payload["graph"]["graph"]["nodes"][0]["op"] == "Sum" and payload["profile"] is None
    assert "No profile: numpy runs on plain NumPy arrays" in payload["problems"][0]
    json.dumps(payload)  # plain data: it crosses to the window as is


@pytest.mark.timing
@pytest.mark.parametrize("recipe", ["tensor", "autograd", "function", "poly-autograd", "poly-function",
                                    "poly-dynamic"])
def test_at_the_tutorial_size_the_per_op_times_add_up_to_the_plain_step_within_10_percent(recipe):
    agreements = sorted(profile_steps(RunConfig(recipe=recipe)).agreement for _ in range(3))
    assert abs(agreements[1] - 1) < 0.10, agreements


def test_profile_on_the_command_line(capsys):
    assert main(["--headless", "--recipe", "function", "--iters", "5", "--profile", *SMALL_ARGS]) == 0
    out = capsys.readouterr().out
    assert "profile of" in out and "MyReLU backward" in out and "matrix product" in out
    assert main(["--headless", "--recipe", "numpy", "--profile"]) == 2
    assert capsys.readouterr().err == ("main.py: error: --profile: numpy runs on plain NumPy arrays, with no engine "
                                       "ops to time (the tensor recipe is its step on engine tensors)\n")
    assert main(["--headless", "--recipe", "poly-numpy", "--profile"]) == 2  # it named the two-layer net's twin
    assert "(the poly-tensor recipe is its step on engine tensors)" in capsys.readouterr().err
    assert main(["--headless", "--script", "app/examples/two_layer_autograd.py", "--profile"]) == 2
    assert "--profile times a recipe's step" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------- dynamics
def _manual_grads64(x, y, w1, w2):
    h = x @ w1
    hr = np.maximum(h, 0)
    gy = 2 * (hr @ w2 - y)
    gh = gy @ w2.T
    gh[h < 0] = 0
    return x.T @ gh, hr.T @ gy


def test_the_first_sample_has_the_gradient_the_step_used_and_its_update():
    config = RunConfig(recipe="autograd", dtype="float64", iters=60, lr=1e-4, **SMALL)
    start = make_state(config)
    x, y, w1, w2 = (t.detach().numpy() for t in (start.x, start.y, start.w1, start.w2))
    runner = Runner(config, dynamics=True)
    result = runner.run()
    samples = result.extra["dynamics"]["samples"]
    first, last = samples[0], samples[-1]
    assert first["step"] == 0 and first["full"]
    g1, g2 = _manual_grads64(x, y, w1, w2)
    assert first["w1"]["weight_norm"] == pytest.approx(np.linalg.norm(w1), rel=1e-12)
    assert first["w1"]["grad_norm"] == pytest.approx(np.linalg.norm(g1), rel=1e-9)
    assert first["w2"]["update_ratio"] == pytest.approx(1e-4 * np.linalg.norm(g2) / np.linalg.norm(w2), rel=1e-6)
    assert first["w1"]["weights"]["counts"] == np.histogram(w1, 30, (w1.min(), w1.max()))[0].tolist()
    assert sum(first["w1"]["grads"]["counts"]) == w1.size
    # the run ends with a full sample of its final weights
    assert last["step"] == 60 and last["full"] and last["w1"]["update_ratio"] is None
    w1_end = runner.state.w1.detach().numpy()
    assert last["w1"]["weight_norm"] == pytest.approx(np.linalg.norm(w1_end), rel=1e-12)
    steps = [s["step"] for s in samples]
    assert steps == sorted(set(steps))


@pytest.mark.parametrize("recipe", ["optim", "poly-numpy", "poly-module"])
def test_every_family_samples_its_parameters(recipe):
    config = RunConfig(recipe=recipe, iters=30, **({"points": 200} if recipe.startswith("poly") else SMALL))
    start = make_state(config)
    names = [n for n, _ in parameters(start)]
    result = Runner(config, dynamics=True).run()
    first = result.extra["dynamics"]["samples"][0]
    assert result.extra["dynamics"]["params"] == names
    if recipe.startswith("poly"):
        assert names == ["coefficients"]
        x = np.asarray(start.x.numpy() if isinstance(start.x, engine.Tensor) else start.x, dtype=np.float64)
        y = np.asarray(start.y.numpy() if isinstance(start.y, engine.Tensor) else start.y, dtype=np.float64)
        c = [float(np.asarray(v._data if isinstance(v, engine.Tensor) else v)) for v in start.coefficients] \
            if start.model is None else [float(p.detach().numpy()) for p in start.model.parameters()]
        _, grads = fit_gradients(fit_form(recipe), x, y, c)
        assert first["coefficients"]["grad_norm"] == pytest.approx(np.linalg.norm(grads), rel=1e-3)
    else:
        assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
        assert first["0.weight"]["grad_norm"] > 0 and first["2.bias"]["weights"]["counts"]


def test_the_samples_are_exported_and_read_back(tmp_path):
    config = RunConfig(recipe="tensor", iters=20, **SMALL)
    result = Runner(config, dynamics=True).run()
    path = export.export(result, tmp_path / "run.json")
    loaded = export.load(path)
    assert loaded.meta["dynamics"] == json.loads(json.dumps(result.extra["dynamics"]))
    again = export.export(loaded.as_result(), tmp_path / "again.json")
    assert json.loads(again.read_text())["dynamics"]["samples"] == loaded.meta["dynamics"]["samples"]


def test_a_run_without_tracking_has_no_samples():
    result = Runner(RunConfig(recipe="tensor", iters=5, **SMALL)).run()
    assert "dynamics" not in result.extra


def test_histogram_matches_numpy_and_survives_constant_and_infinite_values():
    rng = np.random.default_rng(3)
    v = rng.standard_normal(50_000).astype(np.float32)
    h = _histogram(v, 30)
    assert h["counts"] == np.histogram(v, 30, (h["lo"], h["hi"]))[0].tolist()
    assert _histogram(np.ones(4), 10)["counts"][5] == 4
    assert sum(_histogram(np.array([1.0, np.inf, -2.0]), 10)["counts"]) == 2
    assert _histogram(np.array([np.nan]), 10) == {"lo": None, "hi": None, "counts": [0] * 10}


@pytest.mark.timing
@pytest.mark.parametrize("recipe", ["tensor", "autograd"])
def test_tracking_costs_under_5_percent_of_a_tutorial_run(recipe):
    import time

    config = RunConfig(recipe=recipe, iters=2000)
    ratios = []
    for _ in range(7):
        t0 = time.perf_counter()
        Runner(config).run()
        off = time.perf_counter() - t0
        t0 = time.perf_counter()
        Runner(config, dynamics=True).run()
        ratios.append((time.perf_counter() - t0) / off)
    assert sorted(ratios)[3] < 1.05, ratios
