"""Today's tutorial in the app, headless: the fit of sin(x) from the command line (--recipe poly-..., --points),
its export with the coefficients' settings, its gradient check of a, b, c, d, and its settings' validation."""

from __future__ import annotations

import json

import pytest

from app.config import ConfigError, RunConfig
from app.gradients import compare
from app.recipes import TABLE, poly_curve, poly_formula
from main import main

POLY = [name for name, r in TABLE.items() if r.family == "poly"]


def test_a_fit_from_the_command_line_with_its_tutorials_defaults(tmp_path, capsys):
    path = tmp_path / "fit.json"
    assert main(["--headless", "--recipe", "poly-tensor", "--export", str(path), "--compare-grads"]) == 0
    out = capsys.readouterr().out
    log = json.loads(path.read_text())
    assert log["steps"] == 2000  # the tutorial's iterations and learning rate, unless given
    assert log["config"]["lr"] == 1e-6 and log["config"]["points"] == 2000 and log["config"]["recipe"] == "poly-tensor"
    assert log["loss"][0] == pytest.approx(19074.22, rel=1e-6) and log["loss"][-1] < 9.1
    assert "gradients at step 2000 (a, b, c, d)" in out and out.count("[good]") == 3


def test_points_and_iterations_from_the_command_line(capsys):
    assert main(["--headless", "--recipe", "poly-function", "--points", "300", "--iters", "40", "--quiet"]) == 0
    assert main(["--headless", "--recipe", "poly-tensor", "--points", "1", "--quiet"]) == 2
    assert "points: must be between 2 and" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [0, 1, -5, True, 2.5, 1 << 40])
def test_bad_points_are_refused_with_a_message(bad):
    with pytest.raises(ConfigError) as info:
        RunConfig(recipe="poly-tensor", points=bad).validated(check_device=False)
    assert info.value.field == "points"


def test_a_fit_too_big_for_memory_says_to_make_the_points_smaller(monkeypatch):
    import app.config

    monkeypatch.setattr(app.config, "available_memory", lambda device: 1 << 30)
    with pytest.raises(ConfigError, match=r"needs about 3\.8 GiB on cpu, but only 1\.0 GiB is free; make the points "
                                          "smaller"):
        RunConfig(recipe="poly-dynamic", points=1 << 25).validated(check_device=False)


@pytest.mark.parametrize("recipe", POLY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_gradient_check_of_every_fit_agrees_and_catches_the_planted_slip(recipe, dtype):
    config = RunConfig(recipe=recipe, dtype=dtype, points=400)
    report = compare(config)
    assert report.params == ("coefficients",) and report.worst_grade() == "good", report.table()
    n = 5 if recipe == "poly-dynamic" else 4
    assert all(g.shape == (1, n) for g in report.grads.values())
    planted = compare(config, forget_relu_mask=True)
    grades = [planted.stats[("coefficients", pair)].grade(dtype) for pair in
              (("manual", "autograd"), ("manual", "numerical"), ("autograd", "numerical"))]
    assert grades == ["bad", "bad", "good"]


def test_the_fit_view_s_curve_and_formula():
    assert poly_curve("poly-tensor", [1, 2, 3, 4], [2.0]).tolist() == [1 + 4 + 12 + 32]
    assert poly_curve("poly-function", [0, 1, 0, 1], [0.5]).tolist() == [0.5 * (5 * 0.125 - 1.5)]
    assert poly_curve("poly-dynamic", [0, 0, 0, 0, 1], [2.0]).tolist() == [16 + 32]
    assert poly_formula("poly-tensor", [0.5, 1, -0.25, 2e-5]) == "y = 0.5 + 1 x + -0.25 x^2 + 2e-05 x^3"
    assert poly_formula("poly-function", [0, -2.2, 0, 0.255]) == "y = 0 + -2.2 P3(0 + 0.255 x)"
    assert poly_formula("poly-dynamic", [1, 2, 3, 4, 5]).endswith("+ 5 x^4 ? + 5 x^5 ?")
