"""The fit of sin(x) in the window: the controls show its points instead of the net's sizes, the fit view beside
the loss plot draws the polynomial as the coefficients come, and the gradient panel compares a, b, c, d."""

from __future__ import annotations

import math

import numpy as np

from app.config import RunConfig
from app.recipes import TABLE, poly_curve

FIT = RunConfig(recipe="poly-autograd", points=500, iters=2000, lr=4e-6)  # the tutorial's lr x 2000/500


def test_the_controls_show_the_sizes_of_the_chosen_family(qtbot, window):
    c = window.controls
    assert c.batch.isVisible() and not c.points.isVisible()
    assert window.fit_view.isHidden()
    c.set_config(FIT)
    assert c.points.isVisible() and not c.batch.isVisible() and not c.d_in.isVisible()
    assert c.points.value() == 500 and c.raw_config().points == 500
    assert not window.fit_view.isHidden()  # beside the loss plot
    c.points.setValue(2)
    assert c.config()[0] is not None
    c.recipe.setCurrentIndex(c.recipe.findData("tensor"))
    assert c.batch.isVisible() and not c.points.isVisible() and window.fit_view.isHidden()


def test_choosing_a_fit_brings_its_tutorial_learning_rate_and_iterations(qtbot, window):
    c = window.controls
    c.recipe.setCurrentIndex(c.recipe.findData("tensor"))
    c.lr.setText("1e-06")
    c.iters.setValue(500)
    c.recipe.setCurrentIndex(c.recipe.findData("poly-dynamic"))
    assert (c.lr.text(), c.iters.value()) == ("1e-08", 30000)
    c.recipe.setCurrentIndex(c.recipe.findData("poly-optim"))
    assert (c.lr.text(), c.iters.value()) == ("0.001", 2000)
    c.iters.setValue(123)  # the user's own number stays
    c.recipe.setCurrentIndex(c.recipe.findData("poly-tensor"))
    assert c.iters.value() == 123


def test_the_fit_view_draws_the_run_s_polynomial(qtbot, window):
    window.controls.set_config(FIT)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.session.run_key in window.session.results, timeout=30_000)
    result = window.session.results[window.session.run_key]
    final = result.extra["coefficients"]
    view = window.fit_view
    assert view.recipe == "poly-autograd" and view.coefficients == final
    x, y = view.curve.getData()
    np.testing.assert_allclose(y, poly_curve("poly-autograd", final, x))
    assert x[0] == -math.pi and x[-1] == math.pi
    assert view.formula.text().startswith(f"step {FIT.iters}: y = ")
    assert f"{final[1]:.4g} x" in view.formula.text()
    # the fit got as close to sin(x) as a cubic gets (the least-squares cubic is 0.18 off at +-pi)
    assert np.max(np.abs(y - np.sin(x))) < 0.19


def test_the_gradient_panel_compares_the_coefficients(qtbot, window):
    window.controls.set_config(FIT.with_(recipe="poly-function", lr=TABLE["poly-function"].default_lr))
    with qtbot.waitSignal(window.gradients_done, timeout=30_000) as blocker:
        window.check_gradients()
    report = blocker.args[0]
    assert report.params == ("coefficients",) and report.worst_grade() == "good"
    panel = window.gradient_panel
    assert panel.table.rowCount() == 3 and panel.row_grades() == ["good", "good", "good"]
    assert [panel.param.itemText(i) for i in range(panel.param.count())] == ["coefficients"]
    panel.plant_bug.setChecked(True)
    with qtbot.waitSignal(window.gradients_done, timeout=30_000) as blocker:
        window.check_gradients()
    assert blocker.args[0].worst_grade() == "bad"
    assert panel.row_grades()[:2] == ["bad", "bad"] and panel.row_grades()[2] == "good"  # autograd is right


def test_in_a_narrow_window_the_fit_goes_under_the_loss_and_the_window_still_fits_1024(qtbot, window):
    from PySide6.QtCore import Qt

    window.controls.set_config(FIT)
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: window.width() == 1600, timeout=2000)
    assert window.center.orientation() == Qt.Horizontal
    assert window.fit_view.x() > window.plot.x()  # beside the loss
    qtbot.waitUntil(lambda: window.fit_view.width() >= 210, timeout=2000)  # room for its title and x axis
    # a dock dragged wider leaves the middle too narrow for both side by side: the fit turns under the loss
    window.resizeDocks([window.controls_dock], [window.controls_dock.width() + 300], Qt.Horizontal)
    qtbot.waitUntil(lambda: window.center.orientation() == Qt.Vertical, timeout=2000)
    assert window.center.width() < 640
    window.resize(1400, 880)  # the default size, with the docks at their default widths: 150 pixels for the fit
    qtbot.waitUntil(lambda: window.width() == 1400, timeout=2000)  # beside the loss cut off its title
    assert window.center.orientation() == Qt.Vertical
    window.resize(1000, 640)
    qtbot.waitUntil(lambda: window.width() == 1000 and window.height() == 640, timeout=2000)
    assert window.center.orientation() == Qt.Vertical
    assert window.fit_view.y() > window.plot.y() and window.fit_view.height() >= 160  # under it
    assert window.minimumSizeHint().width() <= 1024 - 20  # side by side it was 1123: wider than the screen


def test_look_inside_widens_a_thin_step_dock_and_shortens_the_op_names_to_fit(qtbot, window):
    from PySide6.QtCore import Qt

    window.controls.set_config(RunConfig(recipe="poly-function", points=200, iters=3))
    window.resize(1000, 640)
    qtbot.waitUntil(lambda: window.width() == 1000, timeout=2000)
    window.resizeDocks([window.step_dock], [150], Qt.Horizontal)
    window.step_dock.raise_()
    qtbot.waitUntil(lambda: window.step_dock.width() < 200, timeout=2000)
    with qtbot.waitSignal(window.inside_done, timeout=30_000):
        window.step_panel.look_requested.emit()
    assert window.step_dock.width() >= 200
    time_view = window.step_panel.time
    window.step_panel.tabs.setCurrentWidget(time_view)
    qtbot.waitUntil(lambda: 0 < time_view.plot.width() < window.step_dock.width(), timeout=2000)
    labels = [text for _, text in time_view.plot.getAxis("left")._tickLevels[0]]
    ops = {row["op"] for row in time_view.data["rows"]}
    assert "LegendrePolynomial3" in ops
    limit = max(8, time_view.plot.width() // 16)
    assert time_view.plot.width() < 420 and all(len(text) <= limit for text in labels), labels
    assert any(text.endswith("…") and text.startswith("⟵ Legendre") for text in labels), labels
