"""The desktop app, driven as a user would (offscreen)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from app import export
from app.config import ConfigError, RunConfig
from tests.ui.conftest import SMALL


def start_and_wait(qtbot, window, timeout=30_000):
    with _finished(qtbot, window, timeout):
        assert window.start_run()
    return window.session.results[window.session.run_key]


class _finished:
    """Context: wait until the session has taken in the end of the run the block started (its ``finished``, which
    every run emits, failed or not). Not ``not session.running``: the worker's thread stops before its finished
    signal reaches the GUI thread, and a poll in between found no result (a flaky KeyError on a busy machine)."""

    def __init__(self, qtbot, window, timeout):
        self.qtbot, self.window, self.timeout = qtbot, window, timeout
        self.ended = []

    def __enter__(self):
        self.window.session.finished.connect(self._ended)
        return self

    def _ended(self, key, _result):
        self.ended.append(key)

    def __exit__(self, *exc):
        session = self.window.session
        try:
            if exc[0] is None:
                self.qtbot.waitUntil(lambda: session.run_key in self.ended, timeout=self.timeout)
        finally:
            session.finished.disconnect(self._ended)
        return False


def test_run_from_start_to_finished_puts_points_on_the_plot(qtbot, window):
    result = start_and_wait(qtbot, window)
    key = window.session.run_key
    assert result.status == "done" and result.steps_done == SMALL.iters
    assert window.plot.point_count(key) == SMALL.iters
    x, y = window.plot.series[key].smooth_item.getData()
    assert len(x) > 0 and np.all(np.diff(x) > 0)
    assert window.runs_list.status(key) == "done"
    assert window.controls.progress.value() == SMALL.iters
    assert "done" in window.statusBar().currentMessage()
    loss = window.plot.series[key].loss[: SMALL.iters]
    assert loss[-1] < loss[0]


def test_progress_shows_the_planned_iterations_until_a_run_and_keeps_a_finished_one(qtbot, window):
    bar = window.controls.progress
    assert (bar.value(), bar.maximum()) == (0, SMALL.iters)  # the preset, not the spin box's default
    window.controls.iters.setValue(37)
    assert (bar.value(), bar.maximum()) == (0, 37)
    result = start_and_wait(qtbot, window)
    assert result.steps_done == 37 and (bar.value(), bar.maximum()) == (37, 37)
    window.controls.iters.setValue(90)  # the finished run stays on show until a reset
    assert (bar.value(), bar.maximum()) == (37, 37)
    window.reset_run()
    assert (bar.value(), bar.maximum()) == (0, 90)


def test_pause_step_resume_stop(qtbot, window):
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.plot.series[window.session.run_key].n > 5, timeout=10_000)
    window.toggle_pause()
    runner = window.session.run.worker.runner
    assert runner.wait_parked(5)
    assert window.controls.pause_button.text() == "Resume"
    assert window.runs_list.status(window.session.run_key) == "paused"
    qtbot.wait(100)
    before = len(runner.log)
    window.step_run()
    qtbot.waitUntil(lambda: len(runner.log) == before + 1, timeout=5_000)
    qtbot.wait(100)
    assert len(runner.log) == before + 1
    window.toggle_pause()  # resume
    qtbot.waitUntil(lambda: len(runner.log) > before + 20, timeout=10_000)
    with _finished(qtbot, window, 10_000):
        window.stop_run()
    result = window.session.results[window.session.run_key]
    assert result.status == "stopped" and result.steps_done > before + 20
    assert window.runs_list.status(window.session.run_key) == "stopped"
    assert not window.controls.stop_button.isEnabled() and window.controls.start_button.isEnabled()


def test_step_from_idle_runs_exactly_one_step(qtbot, window):
    window.step_run()
    runner = window.session.run.worker.runner
    qtbot.waitUntil(lambda: len(runner.log) == 1, timeout=5_000)
    qtbot.wait(150)
    assert len(runner.log) == 1 and window.controls.pause_button.text() == "Resume"
    with _finished(qtbot, window, 10_000):
        window.stop_run()


def test_bad_learning_rate_is_refused_at_the_control(qtbot, window):
    c = window.controls
    for text in ("abc", "nan", "-1e-6", "0", ""):
        c.lr.setText(text)
        assert not c.start_button.isEnabled(), text
        assert c.lr_error.isVisibleTo(window) and "refused" in c.lr_error.text()
        assert window.start_run() is False
        assert "Cannot start: Learning rate: " in window.statusBar().currentMessage()  # the field, as labelled
    c.lr.setText("-1e-6")  # the words under the field are RunConfig's, not a second copy of its rule
    with pytest.raises(ConfigError) as info:
        RunConfig(lr=-1e-6).validated(check_device=False)
    assert str(info.value).split(": ", 1)[1] in c.lr_error.text() and c.problem.field == "lr"
    c.lr.setText("1e-6")
    assert c.start_button.isEnabled() and not c.lr_error.isVisibleTo(window) and c.problem is None


def test_sizes_that_cannot_fit_turn_the_estimate_red(qtbot, window, monkeypatch):
    import app.config as config_mod

    monkeypatch.setattr(config_mod, "available_memory", lambda device: 64 * 2**20)
    c = window.controls
    c.d_in.setValue(100_000)
    c.hidden.setValue(10_000)
    # the words are RunConfig's own: the control asks it, and shows what it says under the sizes
    assert "but only 64.0 MiB is free; make the batch, D_in, H or D_out smaller" in c.memory.text()
    assert c.memory.text().startswith("Sizes: this run needs about") and "c62828" in c.memory.styleSheet()
    assert not c.start_button.isEnabled()
    c.d_in.setValue(1000)
    c.hidden.setValue(100)
    assert c.start_button.isEnabled()


def test_spin_boxes_have_bounds(window):
    c = window.controls
    for spin in (c.batch, c.d_in, c.hidden, c.d_out):
        spin.setValue(0)
        assert spin.value() == 1
        spin.setValue(-5)
        assert spin.value() == 1


def test_closing_mid_run_stops_joins_and_keeps_the_log(qtbot, tmp_path):
    from ui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    w = MainWindow(settings, preset=SMALL.with_(iters=1_000_000))
    qtbot.addWidget(w)
    w.show()
    assert w.start_run()
    qtbot.waitUntil(lambda: w.plot.series[w.session.run_key].n > 10, timeout=10_000)
    thread = w.session.run
    saved = w.shutdown()
    assert not thread.is_running()
    assert saved is not None and saved.exists()
    log = export.load(saved)
    assert len(log.log) >= 10 and log.status == "stopped"
    w.close()


def test_closing_during_a_step_longer_than_the_wait_finishes_it_joins_and_saves(qtbot, tmp_path, monkeypatch):
    """Issue: closing during a step longer than the join's 10 s aborted the process ('QThread: Destroyed while
    thread is still running') and saved nothing. Here one step takes 1.5 s and the close's first wait is 0.2 s."""
    import dataclasses
    import threading

    from app import recipes
    from ui.main_window import MainWindow

    in_long_step = threading.Event()

    def slow(state):
        for i, loss in enumerate(recipes.autograd_recipe(state)):
            if i >= 5:
                in_long_step.set()
                threading.Event().wait(1.5)  # a step that outlasts the first wait
            yield loss

    monkeypatch.setitem(recipes.TABLE, "autograd", dataclasses.replace(recipes.TABLE["autograd"], step=slow))
    monkeypatch.setattr("ui.main_window.autosave_folder", lambda: tmp_path / "autosave")
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat), preset=SMALL.with_(iters=1000))
    qtbot.addWidget(w)
    w.show()
    assert w.start_run()
    assert in_long_step.wait(20)
    thread = w.session.run
    saved = w.shutdown(first_wait_ms=200)
    assert not thread.is_running()  # joined, however long the step took
    assert "Finishing the current step" in w.statusBar().currentMessage()
    assert saved is not None and saved.parent == tmp_path / "autosave"
    back = export.load(saved)
    assert back.status == "stopped" and len(back.log) >= 6  # the long step too: it finished before the stop
    w.close()


@pytest.mark.parametrize("saved", ['{"device": 5}', '{"lr": "fast"}', '{"batch": [1]}', "not json", '["x"]',
                                   '{"recipe": null}', '{"dtype": 3}'])
def test_corrupt_saved_settings_are_dropped_with_a_message(qtbot, tmp_path, saved):
    """Issue: a settings file with device = 5 crashed start-up with a traceback."""
    from ui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    settings.setValue("run/config", saved)
    settings.sync()
    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    assert "saved run settings were not usable" in w.statusBar().currentMessage()
    assert w.controls.raw_config() == RunConfig()  # the defaults
    w.close()


def test_a_bad_learning_rate_at_close_keeps_the_other_saved_settings(qtbot, tmp_path):
    from ui.main_window import MainWindow

    path = str(tmp_path / "s.ini")
    w = MainWindow(QSettings(path, QSettings.IniFormat), preset=SMALL.with_(recipe="nn", hidden=33, lr=3e-4))
    qtbot.addWidget(w)
    w.controls.lr.setText("oops")
    w.close()
    again = MainWindow(QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(again)
    kept = again.controls.raw_config()
    assert (kept.recipe, kept.hidden, kept.batch, kept.lr) == ("nn", 33, SMALL.batch, 1e-4)  # nn's default lr
    again.close()


def test_a_closed_window_is_freed(qtbot, tmp_path):
    """Issue: a lambda connected to the run worker's errored signal held every closed window (4.4 MB a cycle)."""
    import gc
    import weakref

    from ui.main_window import MainWindow

    refs = []
    for i in range(3):
        w = MainWindow(QSettings(str(tmp_path / f"s{i}.ini"), QSettings.IniFormat), preset=SMALL.with_(iters=20))
        w.show()
        with qtbot.waitSignal(w.gradients_done, timeout=30_000):
            w.on_run_finished.append(lambda result, w=w: w.check_gradients())
            assert w.start_run()
        w.on_run_finished.clear()
        w.close()
        w.deleteLater()
        refs.append(weakref.ref(w))
        del w
    QApplication.processEvents()
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_opening_a_log_reads_it_off_the_gui_thread_with_progress_and_cancel(qtbot, window, tmp_path, monkeypatch):
    """Issue: a 200 MB CSV froze the window for 33 s. Here the reading is held until the test lets it go: the window
    answers meanwhile, Cancel stops it, and a bad file still gets its one message."""
    import threading

    from app import worker as worker_mod

    result = start_and_wait(qtbot, window)
    path = tmp_path / "run.csv"
    export.export(result, path)
    release, entered = threading.Event(), []
    real_load = worker_mod.export.load

    def held_load(p, progress=None, cancelled=None):
        entered.append(threading.current_thread())
        while not release.wait(0.01):
            if cancelled():
                raise export.LoadCancelled()
        return real_load(p, progress=progress, cancelled=cancelled)

    monkeypatch.setattr(worker_mod.export, "load", held_load)
    window.open_log(str(path))  # returns at once
    qtbot.waitUntil(lambda: bool(entered), timeout=10_000)
    assert entered[0] is not threading.main_thread() and not release.is_set()
    with qtbot.waitSignal(window.log_opened, timeout=10_000) as opened:
        window.session.load_thread.worker.cancel()  # what the dialog's Cancel does
    assert opened.args[0] is None and "cancelled" in window.statusBar().currentMessage()
    release.set()
    with qtbot.waitSignal(window.log_opened, timeout=30_000) as opened:
        window.open_log(str(path))
    assert window.plot.point_count(opened.args[0]) == SMALL.iters
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with qtbot.waitSignal(window.log_opened, timeout=30_000) as opened:
        window.open_log(str(bad))
    assert opened.args[0] is None and "holds a JSON list" in window.statusBar().currentMessage()


def test_device_panel_without_a_gpu(window):
    import engine

    if engine.cuda.is_available():
        pytest.skip("this machine has a GPU")
    fields = window.device_panel.fields
    assert engine.cuda.unavailable_reason() in fields["reason"].text()
    assert fields["cpu.name"].text() and fields["cpu.name"].text() != "n/a"
    assert int(fields["cpu.cores"].text()) >= 1
    assert fields["cpu.blas"].text() != ""
    combo = window.controls.device
    cuda_index = combo.findData("cuda")
    item = combo.model().item(cuda_index)
    assert not item.isEnabled() and engine.cuda.unavailable_reason() in item.toolTip()


def _check(qtbot, window, timeout=20_000):
    """Check now, and wait for the report (the check runs in a worker thread)."""
    with qtbot.waitSignal(window.gradients_done, timeout=timeout) as blocker:
        window.check_gradients()
    return blocker.args[0]


def test_gradients_panel_flags_a_planted_wrong_gradient(qtbot, window):
    panel = window.gradient_panel
    heat_axes = [panel.heat_plot.getAxis(a) for a in ("left", "bottom")]
    assert not panel.colorbar.isVisible() and not any(a.isVisible() for a in heat_axes)  # nothing mapped yet
    assert _check(qtbot, window) is not None  # before any run: the initial weights
    assert panel.colorbar.isVisible() and all(a.isVisible() for a in heat_axes)
    assert not any(a.autoSIPrefix for a in heat_axes)  # row/column indices, not "(x0.001)"
    assert "initial weights" in panel.summary.text()
    assert "bad" not in panel.row_grades()
    panel.plant_bug.setChecked(True)
    _check(qtbot, window)
    grades = panel.row_grades()
    assert grades[0] == "bad"  # w1 manual - autograd
    assert grades[3] == "good"  # w2 does not pass through the ReLU mask
    assert "DISAGREE" in panel.summary.text()
    assert panel.heat_image.image.max() > 0


def test_the_heat_map_shows_the_pair_the_user_picks_with_a_bar_in_plain_numbers(qtbot, window):
    panel = window.gradient_panel
    report = _check(qtbot, window)
    assert "manual" in panel.legend.text() and "(4,096)" in panel.legend.text()  # the table explained in place
    panel.param.setCurrentText("w1")
    panel.pair.setCurrentText("manual − autograd")
    shown = panel.heat_image.image
    np.testing.assert_array_equal(shown, np.abs(report.grads[("manual", "w1")] - report.grads[("autograd", "w1")]))
    panel.pair.setCurrentText("autograd − numerical")
    shown = panel.heat_image.image
    probed = np.isfinite(report.grads[("numerical", "w1")]) & ~report.kinks["w1"]
    assert np.isfinite(shown).sum() == probed.sum()  # only the probed elements have a value
    exact = np.abs(report.grads[("autograd", "w1")] - report.grads[("numerical", "w1")])
    np.testing.assert_allclose(shown[probed], exact[probed])
    assert panel.heat_title.text().startswith("|autograd − numerical| of w1")
    low, high = panel.colorbar.levels()
    assert low == 0 and high == pytest.approx(np.nanmax(shown))
    assert not panel.colorbar.axis.autoSIPrefix  # the bar's ticks say the values, no "(x1e-09)"
    window.controls.set_config(SMALL.with_(d_in=300, hidden=40))  # 12,000 elements: finite differences sample
    report = _check(qtbot, window)
    shown = panel.heat_image.image
    probed = np.isfinite(report.grads[("numerical", "w1")]) & ~report.kinks["w1"]
    assert np.isfinite(shown).sum() == probed.sum() < shown.size == 12_000
    assert f"{int(probed.sum()):,} elements compared" in panel.heat_title.text()


def test_the_window_fits_a_1024x700_screen_with_every_panel_reachable(qtbot, window):
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 - 20 and hint.height() <= 700 - 60  # room for a title bar and a panel
    window.resize(1000, 640)
    qtbot.waitUntil(lambda: window.width() == 1000 and window.height() == 640, timeout=2000)
    for dock in (window.controls_dock, window.device_dock, window.gradient_dock, window.bench_dock):
        assert dock.widget().verticalScrollBarPolicy() != Qt.ScrollBarAlwaysOff  # a short dock scrolls
    window.gradient_dock.raise_()
    QApplication.processEvents()
    assert window.gradient_dock.widget().viewport().width() >= 120
    window.step_dock.raise_()  # the step panel shrinks to its dock rather than scrolling
    QApplication.processEvents()
    panel = window.step_panel
    assert panel.height() <= window.step_dock.height() and panel.graph.view.height() >= 60


def _dock_tab_bars(window):
    from PySide6.QtWidgets import QTabBar

    return {tuple(bar.tabText(i) for i in range(bar.count())): bar
            for bar in window.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly) if bar.count()}


def _names_cut_short(bar):
    """The tabs drawn narrower than their names (Qt elides those: "Benc…")."""
    metrics = bar.fontMetrics()
    return [bar.tabText(i) for i in range(bar.count())
            if bar.tabRect(i).width() < metrics.horizontalAdvance(bar.tabText(i))]


def test_dock_tabs_keep_their_whole_names_at_1024x700_and_scroll_instead(qtbot, window, tmp_path):
    window.resize(1000, 640)
    qtbot.waitUntil(lambda: window.width() == 1000, timeout=2000)
    bars = _dock_tab_bars(window)
    right = bars[("Device", "Gradients", "Benchmarks", "Inside the step")]
    qtbot.waitUntil(lambda: right.usesScrollButtons(), timeout=2000)
    assert right.width() < sum(right.tabSizeHint(i).width() for i in range(right.count()))  # too narrow for all
    assert right.elideMode() == Qt.ElideNone and _names_cut_short(right) == []
    window.step_dock.raise_()  # the last tab scrolled into view, whole
    QApplication.processEvents()
    assert right.currentIndex() == 3 and right.tabRect(3).right() <= right.width()
    assert _names_cut_short(right) == []
    # the tab bars a restored layout makes are held to it too
    window.save_settings()
    from ui.main_window import MainWindow

    again = MainWindow(window.settings, preset=SMALL)
    qtbot.addWidget(again)
    again.show()
    again.resize(1000, 640)
    qtbot.waitUntil(lambda: all(b.elideMode() == Qt.ElideNone for b in _dock_tab_bars(again).values()),
                    timeout=2000)
    assert all(_names_cut_short(b) == [] for b in _dock_tab_bars(again).values())
    again.close()


def test_check_now_during_a_run_pauses_it_and_computes_in_the_runs_thread(qtbot, window, monkeypatch):
    import threading

    from app import worker as worker_mod

    threads = []
    real_compare = worker_mod.compare

    def compare(*args, **kwargs):
        threads.append(threading.current_thread())
        return real_compare(*args, **kwargs)

    monkeypatch.setattr(worker_mod, "compare", compare)
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.plot.series[window.session.run_key].n > 5, timeout=10_000)
    report = _check(qtbot, window)
    assert report is not None and window.session.run.worker.is_paused()
    assert window.controls.pause_button.text() == "Resume"
    assert threads and threads[0] is not threading.main_thread()  # never the GUI thread
    assert f"run #{window.session.run_key}" in window.gradient_panel.summary.text()
    with _finished(qtbot, window, 10_000):
        window.stop_run()


def test_check_now_without_a_run_leaves_the_gui_thread_free(qtbot, window, monkeypatch):
    """A slow check (9 s at 256x4096x1024x256 once froze the window) runs in a thread of its own: here the check
    is held until the test lets it go, and check_gradients has returned long before."""
    import threading

    from app import worker as worker_mod

    entered, release = [], threading.Event()
    real_compare = worker_mod.compare

    def held_compare(*args, **kwargs):
        entered.append(threading.current_thread())
        release.wait(30)
        return real_compare(*args, **kwargs)

    monkeypatch.setattr(worker_mod, "compare", held_compare)
    window.check_gradients()  # returns while the comparison is held
    assert not release.is_set()
    qtbot.waitUntil(lambda: bool(entered), timeout=10_000)
    assert entered[0] is not threading.main_thread()
    assert "Checking gradients at the initial weights" in window.statusBar().currentMessage()
    window.check_gradients()  # a second press while one is in flight starts nothing new
    assert "still running" in window.statusBar().currentMessage() and len(entered) == 1
    with qtbot.waitSignal(window.gradients_done, timeout=20_000):
        release.set()
    assert "initial weights" in window.gradient_panel.summary.text()


def test_export_writes_files_that_load_back(qtbot, window, tmp_path):
    result = start_and_wait(qtbot, window)
    key = window.session.run_key
    paths = window.export_logs([key], str(tmp_path / "run.json"))
    back = export.load(paths[0])
    np.testing.assert_array_equal(back.log.loss, result.log.loss)
    assert json.loads(paths[0].read_text())["config"]["recipe"] == "autograd"
    csv_path = window.export_logs([key], str(tmp_path / "run.csv"))[0]
    assert export.load(csv_path).log.n == SMALL.iters
    png = window.export_plot(str(tmp_path / "plot.png"))
    svg = window.export_plot(str(tmp_path / "plot.svg"))
    assert png.stat().st_size > 1000 and "<svg" in svg.read_text()
    with qtbot.waitSignal(window.log_opened, timeout=30_000) as opened:
        window.open_log(str(csv_path))
    overlay = opened.args[0]
    assert window.plot.point_count(overlay) == SMALL.iters
    assert window.runs_list.status(overlay) == "loaded"


def test_plot_export_refuses_an_unknown_extension_and_never_leaves_a_partial_picture(window, tmp_path, monkeypatch):
    """Issue: plot.txt was written as a PNG without a word; on a full disk an existing PNG was replaced by a
    partial one and a truncated SVG was reported as written."""
    import os

    assert window.export_plot(str(tmp_path / "plot.txt")) is None
    assert not (tmp_path / "plot.txt").exists() and ".png or .svg" in window.statusBar().currentMessage()
    png = window.export_plot(str(tmp_path / "plot.png"))
    before = png.read_bytes()
    assert before.startswith(b"\x89PNG")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # the data does not reach the disk
    for name in ("plot.png", "plot.svg"):
        assert window.export_plot(str(tmp_path / name)) is None
        assert "No space left on device" in window.statusBar().currentMessage()
    monkeypatch.undo()
    assert png.read_bytes() == before  # the old picture as it was
    assert not (tmp_path / "plot.svg").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.png"]  # no temporary file left


def test_hiding_a_run_hides_its_curve(qtbot, window):
    start_and_wait(qtbot, window)
    key = window.session.run_key
    window.runs_list.set_checked(key, False)
    assert not window.plot.series[key].smooth_item.isVisible()
    window.runs_list.set_checked(key, True)
    assert window.plot.series[key].smooth_item.isVisible()


def test_settings_are_remembered(qtbot, tmp_path):
    from ui.main_window import MainWindow

    path = str(tmp_path / "remember.ini")
    first = MainWindow(QSettings(path, QSettings.IniFormat), preset=SMALL.with_(seed=77, dtype="float64"))
    qtbot.addWidget(first)
    first.close()
    second = MainWindow(QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(second)
    cfg = second.controls.raw_config()
    assert (cfg.seed, cfg.dtype, cfg.batch, cfg.recipe) == (77, "float64", SMALL.batch, SMALL.recipe)
    second.close()


LAUNCH = """
import json, sys, time
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QTabBar
from ui.main_window import MainWindow
app = QApplication([])
window = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
window.show()
for _ in range(40):
    app.processEvents()
    time.sleep(0.01)
print(json.dumps([[b.tabText(i) for i in range(b.count())] + [b.y()] for b in window.findChildren(QTabBar)
                  if b.isVisible()]))
print(json.dumps(window.controls_dock.geometry().bottom()))
window.close()
"""


def test_a_restored_layout_leaves_no_dead_tab_bar_behind(tmp_path):
    """A second launch restores the layout the first left; the tabs the window made for a first launch, replaced
    by the restored ones, once left their "Runs | Console" tab bar visible under the Run panel, dead. (Two fresh
    processes, as a user launches the app: inside the test's own application the dead bar did not show.)"""
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = str(tmp_path / "layout.ini")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", LAUNCH, path], capture_output=True, text=True, env=env,
                             cwd=Path(__file__).resolve().parents[2], timeout=60)
        bars, run_panel_bottom = (json.loads(line) for line in out.stdout.splitlines()[-2:])
        runs.append([b for b in bars if b[0] == "Runs"])
    for found in runs:  # first launch, then the restored one
        assert len(found) == 1 and found[0][:2] == ["Runs", "Console"], found
        assert found[0][2] > run_panel_bottom  # under the plot, beneath the Run panel, not in it


def test_the_plots_settings_are_remembered_too(qtbot, tmp_path):
    from ui.main_window import MainWindow

    path = str(tmp_path / "plot.ini")
    first = MainWindow(QSettings(path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(first)
    assert (first.plot.log_y.isChecked(), first.plot.x_mode.currentIndex(), first.plot.smoothing.value()) == \
        (True, 0, 60)  # the defaults
    first.plot.log_y.setChecked(False)
    first.plot.x_mode.setCurrentIndex(1)
    first.plot.smoothing.setValue(85)
    first.close()
    second = MainWindow(QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(second)
    assert (second.plot.log_y.isChecked(), second.plot.x_mode.currentIndex(), second.plot.smoothing.value()) == \
        (False, 1, 85)
    second.close()
    settings = QSettings(path, QSettings.IniFormat)  # a hand-edited file: what cannot be read keeps the default
    settings.setValue("plot/x_mode", "seconds")
    settings.setValue("plot/smoothing", 400)
    settings.sync()
    third = MainWindow(QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(third)
    assert (third.plot.x_mode.currentIndex(), third.plot.smoothing.value()) == (0, 60)
    third.close()


def _legend_action(window):
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    return next(a for a in view.actions() if a.text() == "Le&gend")


def test_clicking_a_legend_sample_hides_the_whole_run_as_the_runs_list_does(qtbot, window):
    """pyqtgraph's legend hid only the clicked sample's line: the run's faint raw line stayed, and its box in the
    runs list stayed ticked."""
    start_and_wait(qtbot, window)
    start_and_wait(qtbot, window)
    first, second = window.runs_list.keys()
    sample = window.plot.legend.items[0][0]
    assert sample.item is window.plot.series[first].smooth_item

    class Click:
        def button(self):
            return Qt.LeftButton

        def accept(self):
            pass

    sample.mouseClickEvent(Click())
    qtbot.waitUntil(lambda: not window.runs_list.is_checked(first), timeout=5_000)
    s = window.plot.series[first]
    assert not s.visible and not s.raw_item.isVisible() and not s.smooth_item.isVisible()
    assert window.plot.legend_keys() == [second] and window.runs_list.is_checked(second)
    window.runs_list.set_checked(first, True)  # ticked again: back on the plot and in the legend
    assert s.smooth_item.isVisible() and window.plot.legend_keys() == [first, second]


def test_view_legend_hides_the_legend_and_is_remembered(qtbot, tmp_path):
    from ui.main_window import MainWindow

    path = str(tmp_path / "legend.ini")
    first = MainWindow(QSettings(path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(first)
    action = _legend_action(first)
    assert action.isChecked() and first.plot.legend_visible()
    first.plot.add_series("a", "#1 a", "#1f77b4")
    assert first.plot.legend_keys() == ["a"] and first.plot.legend.isVisibleTo(first.plot.plot)
    action.trigger()
    assert not first.plot.legend_visible() and first.plot.legend_keys() == []
    assert not first.plot.legend.isVisibleTo(first.plot.plot)
    first.close()
    second = MainWindow(QSettings(path, QSettings.IniFormat))
    qtbot.addWidget(second)
    action = _legend_action(second)
    assert not second.plot.legend_visible() and not action.isChecked()  # the menu follows the restored choice
    action.trigger()
    assert second.plot.legend_visible()
    second.close()


def test_ctrl_r_starts_and_escape_stops(qtbot, window):
    from PySide6.QtTest import QTest

    window.controls.set_config(SMALL.with_(iters=1_000_000))
    window.activateWindow()
    window.start_action.trigger()  # Ctrl+R's action
    assert window.session.running
    assert window.start_action.shortcut().toString() == "Ctrl+R"
    qtbot.waitUntil(lambda: window.plot.series[window.session.run_key].n > 3, timeout=10_000)
    with _finished(qtbot, window, 10_000):
        QTest.keyClick(window, Qt.Key_Escape)
        if window.session.running:  # offscreen platforms may not route the key to the window
            window.stop_run()
    assert window.session.results[window.session.run_key].status == "stopped"


def test_diverged_run_says_so_in_the_status_bar(qtbot, window):
    window.controls.set_config(SMALL.with_(lr=5.0, iters=500))
    result = start_and_wait(qtbot, window)
    assert result.status == "diverged"
    message = window.statusBar().currentMessage()
    assert "diverged at step" in message and "smaller learning rate" in message
    assert window.runs_list.status(window.session.run_key) == "diverged"
    series = window.plot.series[window.session.run_key]
    assert len(series.nan_item.data) >= 1  # the bad step is marked


def test_window_works_at_a_small_size(qtbot, window):
    window.resize(800, 560)
    QApplication.processEvents()
    assert window.plot.plot_widget.width() > 150 and window.plot.plot_widget.height() > 150


def test_export_to_a_bad_path_warns_without_blocking(qtbot, window, tmp_path):
    start_and_wait(qtbot, window)
    written = window.export_logs([window.session.run_key], str(tmp_path / "missing" / "run.csv"))
    assert written == []
    assert "could not write" in window.statusBar().currentMessage()
    assert window.last_warning.isVisible()  # shown with open(): the event loop goes on
    window.last_warning.close()


def test_benchmark_panel_reads_results(qtbot, window, tmp_path, monkeypatch):
    import app.bench_results as br

    (tmp_path / "cpu.json").write_text(json.dumps({"when": "2026", "machine": {"cpu": "test cpu"}, "rows": [
        {"size": "tiny", "recipe": "tensor", "device": "cpu", "flops": 1e5, "engine_ms": 0.05, "raw_ms": 0.02,
         "torch_ms": 0.07}]}))
    monkeypatch.setattr(br, "RESULTS", tmp_path)
    monkeypatch.setattr("ui.bench_panel.load_latest", lambda: br.load_latest(tmp_path))
    assert window.bench_panel.reload() == 3
    assert not window.bench_panel.plot.getAxis("bottom").autoSIPrefix  # 10^5 FLOP, not 0.1 "(x1e+06)"
    assert window.bench_panel.summary.text().startswith("CPU: cpu.json of 2026, test cpu. ")
    # the key says what the colours and line styles are (no in-plot legend to cover the curves)
    assert window.bench_panel.summary.text().endswith(
        '<span style="color:#1f77b4">&#9644;</span> tensor (CPU). Solid: the engine; dashed: raw NumPy/CuPy; '
        "dotted: PyTorch eager.")
    assert window.bench_panel.plot.legend is None
    monkeypatch.setattr("ui.bench_panel.load_latest", lambda: [])
    assert window.bench_panel.reload() == 0
    assert "make bench" in window.bench_panel.summary.text()


def test_device_panel_and_device_list_with_a_gpu(qtbot, tmp_path, simulated_gpu):
    """Through the CuPy stand-in (two devices): every field filled or n/a, the list names each device."""
    from ui.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(w)
    fields = w.device_panel.fields
    assert fields["0.name"].text() == "Fake GPU 0" and fields["1.name"].text() == "Fake GPU 1"
    assert fields["0.capability"].text() == "9.0" and fields["0.sms"].text() == "132"
    assert fields["0.total"].text() == "80.0 GiB" and fields["0.free"].text() == "70.0 GiB"
    assert fields["0.versions"].text() == "12.8 / 12.6"
    assert fields["0.util"].text() == "n/a"  # no NVML here: shown as n/a, not a crash
    combo = w.controls.device
    assert [combo.itemData(i) for i in range(combo.count())] == ["cpu", "cuda:0", "cuda:1"]
    w.device_panel.empty_cache_button.click()
    assert w.device_panel.cache_result.text().startswith("Gave back")
    w.controls.set_config(SMALL.with_(device="cuda:1"))
    result = start_and_wait(qtbot, w)
    assert result.status == "done" and result.config.device == "cuda:1"
    w.close()


def test_the_cuda_graph_box_is_offered_where_a_graph_can_run(qtbot, tmp_path, simulated_gpu):
    """Enabled for a CUDA device and a capturable recipe only; a captured run says so at the controls."""
    from ui.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat), preset=SMALL.with_(recipe="autograd"))
    qtbot.addWidget(w)
    box = w.controls.cuda_graph
    assert not box.isEnabled()  # cpu
    w.controls.set_config(SMALL.with_(recipe="autograd", device="cuda:0", cuda_graph=True))
    assert box.isEnabled() and box.isChecked()
    assert w.controls.raw_config().cuda_graph is True
    w.controls.recipe.setCurrentIndex(w.controls.recipe.findData("optim"))
    assert not box.isEnabled() and w.controls.raw_config().cuda_graph is False
    w.controls.recipe.setCurrentIndex(w.controls.recipe.findData("autograd"))
    result = start_and_wait(qtbot, w)
    assert result.status == "done" and result.extra["cuda_graph"]["captured"]
    assert "CUDA graph: step 3 captured as a CUDA graph" in w.statusBar().currentMessage()
    w.close()


def test_the_icon_and_style_sheet_come_from_the_installed_package(window):
    """Found through importlib.resources (as a wheel installs them), not relative to the source tree."""
    from ui.main_window import RESOURCES

    assert (RESOURCES / "style.qss").read_text(encoding="utf-8").strip()
    assert b"<svg" in (RESOURCES / "icon.svg").read_bytes()
    assert not window.windowIcon().isNull()


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_close_the_app_and_autosave_the_run(tmp_path, name):
    """Issue: SIGTERM and SIGHUP lost the whole log in the app. A real signal to a real app process."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.app.test_cli import ROOT, _cpu_seconds

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_DATA_HOME": str(tmp_path / "data"),
           "GRADSCOPE_SETTINGS": str(tmp_path / "settings.ini")}
    proc = subprocess.Popen([sys.executable, "main.py", "--start", "--iters", "10000000", "--batch", "8", "--d-in",
                             "20", "--hidden", "10", "--d-out", "3"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _cpu_seconds(proc.pid) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, name))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    saved = list((tmp_path / "data").rglob("autosave/run-*.json"))
    assert len(saved) == 1 and "its log is saved in" in err
    back = export.load(saved[0])
    assert back.status == "stopped" and len(back.log) > 10


def test_while_paused_the_speed_line_says_paused_and_the_speed_leaves_the_pause_out(qtbot, window):
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.plot.series[window.session.run_key].n > 20, timeout=10_000)
    window.toggle_pause()
    runner = window.session.run.worker.runner
    assert runner.wait_parked(5)
    qtbot.waitUntil(lambda: window.controls.speed.text().startswith("Paused"), timeout=5_000)
    qtbot.wait(1500)  # a pause of 1.5 s
    before = len(runner.log)
    window.step_run()
    qtbot.waitUntil(lambda: len(runner.log) == before + 1, timeout=5_000)
    qtbot.waitUntil(lambda: "while running" in window.controls.speed.text(), timeout=5_000)
    text = window.controls.speed.text()
    assert text.startswith("Paused · ") and "left" not in text  # not "22 steps/s · 126 h 56 min left"
    shown = float(text.split(" · ")[1].split()[0].replace(",", ""))
    stepping = float(np.sum(runner.log.step_ms)) / 1e3  # the time spent in steps: what the speed divides by
    # the speed is the steps over that time, and the 1.5 s pause is not in it; this compares with the speed the
    # pause would give (the last version compared with the wall time by a factor that a busy machine, running
    # long before the pause, could miss)
    assert shown == pytest.approx(len(runner.log) / stepping, rel=0.05)
    assert shown > 1.1 * len(runner.log) / (stepping + 1.5)
    with _finished(qtbot, window, 10_000):
        window.stop_run()


def test_the_progress_count_is_dark_on_a_light_bar(qtbot, window):
    """The count was drawn near-white on the platform's blue chunk: the bar's colours are the style sheet's."""
    from PySide6.QtGui import QColor

    from ui.main_window import RESOURCES

    app = QApplication.instance()
    before = app.styleSheet()
    app.setStyleSheet((RESOURCES / "style.qss").read_text(encoding="utf-8"))  # as the launcher sets it
    try:
        bar = window.controls.progress
        bar.setRange(0, 10)
        bar.setValue(5)
        image = bar.grab().toImage()
        chunk = QColor(image.pixel(3, image.height() // 2))
        assert (chunk.red(), chunk.green(), chunk.blue()) == (0x90, 0xCA, 0xF9)  # light, behind the dark count
    finally:
        app.setStyleSheet(before)


def test_a_curve_that_lies_exactly_on_another_says_so(qtbot, window):
    """The tensor and autograd recipes from one seed give the same losses bit for bit: one curve hides the other."""
    tensor = SMALL.with_(recipe="tensor", dtype="float64", iters=40)
    window.controls.set_config(tensor)
    start_and_wait(qtbot, window)
    first = window.session.run_key
    window.controls.set_config(tensor.with_(recipe="autograd"))
    start_and_wait(qtbot, window)
    second = window.session.run_key
    assert window.plot.series[second].identical_to == [first]
    label = window.plot.legend.getLabel(window.plot.series[second].smooth_item).text
    assert label.endswith(f"— lies exactly on #{first}")
    assert f"Its curve lies exactly on #{first}" in window.statusBar().currentMessage()
    window.controls.set_config(tensor.with_(seed=9))  # another seed: another curve, nothing to say
    start_and_wait(qtbot, window)
    assert window.plot.series[window.session.run_key].identical_to == []
    series = window.plot.series[window.session.run_key]
    assert "lies exactly" not in window.plot.legend.getLabel(series.smooth_item).text


def test_a_settings_problem_is_said_once_at_its_field_in_the_controls_words(qtbot, window):
    from app.config import ConfigError
    from ui.controls import user_words

    c = window.controls
    c.set_config(SMALL.with_(seed=3))
    c.lr.setText("0")
    assert c.lr_error.isVisibleTo(window) and c.lr_error.text().startswith("Learning rate refused: ")
    assert not c.message.isVisibleTo(window)  # not a second time under the buttons
    c.lr.setText("1e-6")
    assert c.problem is None and not c.lr_error.isVisibleTo(window)
    assert user_words(ConfigError("d_in", "must be between 1 and 1,048,576, got 0")) == \
        "D_in: must be between 1 and 1,048,576, got 0"
    assert user_words(ConfigError("points", "must be between 2 and 268,435,456, got 1")).startswith("Points: ")


def test_reset_during_a_run_and_step_after_one_say_what_they_did(qtbot, window):
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    first = window.session.run_key
    qtbot.waitUntil(lambda: window.plot.series[first].n > 3, timeout=10_000)
    window.reset_run()
    qtbot.waitUntil(lambda: first in window.session.results, timeout=10_000)
    assert window.statusBar().currentMessage().startswith(f"Reset stopped run #{first} (its log is kept)")
    assert window.session.results[first].status == "stopped"
    window.step_run()
    second = window.session.run_key
    assert second != first
    assert window.statusBar().currentMessage().startswith(f"Step started run #{second} (run #{first} had ended): "
                                                          "one step, then paused")
    runner = window.session.run.worker.runner
    qtbot.waitUntil(lambda: len(runner.log) == 1, timeout=5_000)
    with _finished(qtbot, window, 10_000):
        window.stop_run()


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.log_opened, timeout=30_000) as opened:
        window.open_log(str(path))
    return opened.args[0]


def test_runs_are_renamed_recoloured_and_deleted(qtbot, window, tmp_path):
    start_and_wait(qtbot, window)
    first = window.session.run_key
    start_and_wait(qtbot, window)
    second = window.session.run_key
    runs = window.runs_list
    # renamed in place, as a double click and typing do: the list, the legend, the hover card, the file name
    runs.table.item(runs.rows[first], 0).setText("  baseline  ")
    assert runs.name(first) == "baseline"
    series = window.plot.series[first]
    assert series.label.startswith("baseline ") and "autograd" in series.label
    assert window.plot.legend.getLabel(series.smooth_item).text.startswith("baseline")
    assert [row[1] for row in window.plot.hover_rows(10)][0] == "baseline"
    # the second run lies on the first (same seed, same settings): its legend names the first by its new name
    assert "lies exactly on baseline" in window.plot.legend.getLabel(window.plot.series[second].smooth_item).text
    runs.table.item(runs.rows[first], 0).setText("")  # an empty name is refused
    assert runs.name(first) == "baseline"
    written = window.export_logs([first], path=str(tmp_path / "x.csv"))
    assert written == [tmp_path / "x.csv"]
    assert window.session.file_stem(first) == "baseline"
    assert window.session.file_stem(second) == "run-2"

    window.recolour_run(first, "#123456")
    assert window.plot.series[first].color == "#123456" == runs.color(first)
    assert window.plot.series[first].smooth_item.opts["pen"].color().name() == "#123456"
    window.recolour_run(first, "not a colour")
    assert window.plot.series[first].color == "#123456"

    assert window.delete_runs([first]) == [first]
    assert first not in window.plot.series and first not in window.session.results and runs.keys() == [second]
    assert runs.name(second) == "#2" and runs.status(second) == "done"  # the rows below moved up intact


def test_the_running_run_cannot_be_deleted(qtbot, window):
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    key = window.session.run_key
    assert window.delete_runs([key]) == []
    assert key in window.plot.series and "stop it before deleting it" in window.statusBar().currentMessage()
    window.stop_run()
    qtbot.waitUntil(lambda: key in window.session.results, timeout=20_000)
    assert window.delete_runs([key]) == [key]


def test_an_opened_log_can_be_exported_again(qtbot, window, tmp_path):
    result = start_and_wait(qtbot, window)
    csv_path = tmp_path / "first.csv"
    export.export(result, csv_path)
    key = _open(qtbot, window, csv_path)
    assert window.export_logs([key], path=str(tmp_path / "again.json")) == [tmp_path / "again.json"]
    again = export.load(tmp_path / "again.json")
    np.testing.assert_array_equal(again.log.loss, result.log.loss)
    assert again.config is None and "settings_problem" not in again.meta  # a CSV records no settings
    json_path = tmp_path / "first.json"
    export.export(result, json_path)
    key = _open(qtbot, window, json_path)
    window.export_logs([key], path=str(tmp_path / "again.csv"))
    np.testing.assert_array_equal(export.load(tmp_path / "again.csv").log.step, result.log.step)
    window.export_logs([key], path=str(tmp_path / "again2.json"))
    assert export.load(tmp_path / "again2.json").config == result.config


def test_a_new_run_on_a_restored_ones_curve_names_it_as_the_runs_list_does(qtbot, tmp_path):
    """The status line named a restored run by its internal key ("#file-1"), not by its number or name."""
    from ui.main_window import MainWindow

    settings_path = str(tmp_path / "settings.ini")
    first = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(first)
    first.show()
    start_and_wait(qtbot, first)
    first.close()

    second = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(second)
    second.show()
    assert second.restore_session() == 1
    qtbot.waitUntil(lambda: len(second.runs_list.keys()) == 1 and not second.session.restoring, timeout=20_000)
    restored = second.runs_list.keys()[0]
    assert second.runs_list.name(restored) == "#1" and restored != 1
    start_and_wait(qtbot, second)  # the same settings and seed: the same losses
    assert "Its curve lies exactly on #1 (identical losses)" in second.statusBar().currentMessage()
    second.rename_run(restored, "baseline")
    start_and_wait(qtbot, second)
    assert "Its curve lies exactly on baseline, #2 (identical losses)" in second.statusBar().currentMessage()
    second.close()


def test_a_sessions_runs_come_back_after_a_restart(qtbot, tmp_path):
    from ui.main_window import MainWindow

    settings_path = str(tmp_path / "settings.ini")
    first = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(first)
    first.show()
    result = start_and_wait(qtbot, first)
    start_and_wait(qtbot, first)
    gone = first.session.run_key
    first.rename_run(1, "baseline")
    first.recolour_run(1, "#aa00aa")
    first.runs_list.set_checked(1, False)
    first.close()
    kept = sorted(first.session.folder.glob("*.json"))
    assert len(kept) == 2

    second = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(second)
    second.show()
    assert second.restore_session() == 2
    qtbot.waitUntil(lambda: len(second.runs_list.keys()) == 2 and not second.session.restoring, timeout=20_000)
    keys = second.runs_list.keys()
    assert [second.runs_list.name(k) for k in keys] == ["baseline", f"#{gone}"]
    back = keys[0]
    assert second.runs_list.color(back) == "#aa00aa" == second.plot.series[back].color
    assert not second.runs_list.is_checked(back) and not second.plot.series[back].visible
    assert second.runs_list.status(back) == "done"
    np.testing.assert_array_equal(second.plot.series[back].loss[: result.steps_done], result.log.loss)
    # deleting a restored run lets go of its kept file; the next session has one run
    second.delete_runs([back])
    assert len(sorted(second.session.folder.glob("*.json"))) == 1
    second.close()

    third = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(third)
    third.show()
    for path in third.session.folder.glob("*.json"):
        path.write_text("{not json")  # a kept file spoilt between sessions: said, not fatal
    assert third.restore_session() == 1
    qtbot.waitUntil(lambda: not third.session.restoring
                    and "could not be read back" in third.statusBar().currentMessage(), timeout=20_000)
    assert third.runs_list.keys() == []
    third.close()


def test_a_run_started_while_the_last_sessions_runs_come_back_takes_a_new_number_and_colour(qtbot, tmp_path):
    """Launched with --start (or Start clicked at once), a run began before the last session's runs were all read
    back: it was numbered from the runs read so far ("#5" beside a restored "#5", in the same colour), and a
    session whose runs #1 and #3 had been deleted numbered its next runs into the kept ones' numbers."""
    from ui.main_window import MainWindow

    settings_path = str(tmp_path / "settings.ini")
    first = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(first)
    first.show()
    for _ in range(5):
        start_and_wait(qtbot, first)
    assert first.delete_runs([1, 3, 4]) == [1, 3, 4]
    kept_colours = {first.plot.color(2), first.plot.color(5)}
    first.close()

    second = MainWindow(QSettings(settings_path, QSettings.IniFormat), preset=SMALL)
    qtbot.addWidget(second)
    second.show()
    assert second.restore_session() == 2
    assert second.session.restoring  # not yet read back: the run starts before them
    start_and_wait(qtbot, second)
    new = second.session.run_key
    qtbot.waitUntil(lambda: len(second.runs_list.keys()) == 3 and not second.session.restoring, timeout=20_000)
    names = {second.runs_list.name(k): k for k in second.runs_list.keys()}
    assert sorted(names) == ["#2", "#5", "#6"] and names["#6"] == new
    # and in the order they were made, the list and the legend both: the last session's first (the new run had
    # stood between them, and the legend, which names the newest runs, took a restored one for the newest)
    assert list(names) == ["#2", "#5", "#6"]
    assert list(second.plot.series) == second.runs_list.keys() == second.plot.legend_keys()
    colours = [second.plot.color(k) for k in second.runs_list.keys()]
    assert len(set(colours)) == 3 and {second.plot.color(names["#2"]), second.plot.color(names["#5"])} == kept_colours
    start_and_wait(qtbot, second)
    assert second.runs_list.name(second.session.run_key) == "#7"
    second.close()


def test_a_learning_rate_likely_to_diverge_is_warned_of_before_the_run(qtbot, window):
    from app.stability import estimate

    controls = window.controls
    window.controls.set_config(RunConfig(recipe="autograd", batch=128, d_in=2000, hidden=200, d_out=20, iters=20))
    qtbot.waitUntil(lambda: controls.lr_advice.isVisible(), timeout=10_000)  # estimated off the GUI thread
    edge = estimate(controls.config()[0])
    assert controls.lr_advice.text().startswith(edge.advice(1e-6))
    assert f"Try {edge.suggested_lr():g}" in controls.lr_advice.text()
    controls.lr_advice.linkActivated.emit(f"{edge.suggested_lr():g}")  # "Use 5e-08": judged at once
    assert controls.lr.text() == f"{edge.suggested_lr():g}"
    qtbot.waitUntil(lambda: not controls.lr_advice.isVisible(), timeout=2_000)
    result = start_and_wait(qtbot, window)
    assert result.status == "done" and result.final_loss < float(window.plot.series[window.session.run_key].loss[0])
    controls.lr.setText("1e-6")
    qtbot.waitUntil(lambda: controls.lr_advice.isVisible(), timeout=2_000)
    assert start_and_wait(qtbot, window).status == "diverged"  # the warning was right
    window.controls.set_config(SMALL)  # the tutorial's rate at small sizes: no warning
    qtbot.waitUntil(lambda: not controls.lr_advice.isVisible(), timeout=10_000)


def test_joining_a_worker_that_has_finished_does_not_wait_for_the_gui_event_loop(qtbot):
    """Its `done` reaches thread.quit through the GUI thread's event loop, which a join blocks: closing the window
    right after an estimate or a check used to wait the whole join timeout (60 s)."""
    import threading
    import time

    from app.worker import TaskThread

    ran = threading.Event()

    def work(x):
        ran.set()
        return x

    thread = TaskThread(work, 1, "test")
    thread.start()
    assert ran.wait(5)
    time.sleep(0.05)  # the worker emits done; no event is processed here
    started = time.monotonic()
    assert thread.join(5_000)
    assert time.monotonic() - started < 1.0


def test_inside_the_step_before_a_run_shows_the_graph_and_the_profile(qtbot, window):
    panel = window.step_panel
    with qtbot.waitSignal(window.inside_done, timeout=30_000) as blocker:
        window.look_inside()
    payload = blocker.args[0]
    assert payload["where"] == "the initial weights" and payload["graph"] and payload["profile"]
    assert set(panel.graph.items) == {n["id"] for n in payload["graph"]["graph"]["nodes"]}
    assert "6 recorded nodes, 2 leaves; the step's own backward()" in panel.graph.caption.text()
    (clamp,) = [n for n in payload["graph"]["graph"]["nodes"] if n["op"] == "Clamp"]
    panel.graph.select(clamp["id"])
    assert "Clamp" in panel.graph.details.text() and "zeros" in panel.graph.details.text()
    assert "grad_fn=&lt;ClampBackward1&gt;" in panel.graph.details.text()  # as print(h_relu) shows the node
    assert f"{100 * clamp['output']['zeros']:.1f}%" in panel.graph.details.text()
    assert "autograd on cpu" in panel.time.summary.text() and "matrix product" in panel.time.summary.text()
    assert panel.look_button.isEnabled()


def test_inside_the_step_during_a_run_pauses_it_and_looks_in_the_runs_thread(qtbot, window, monkeypatch):
    import threading

    from app import worker as worker_mod

    threads = []
    real = worker_mod.inside

    def spy(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(worker_mod, "inside", spy)
    window.controls.set_config(SMALL.with_(iters=1_000_000))
    assert window.start_run()
    qtbot.waitUntil(lambda: window.plot.series[window.session.run_key].n > 5, timeout=10_000)
    window.toggle_pause()
    assert window.session.run.worker.runner.wait_parked(5)
    weights_before = window.session.run.worker.train_state().w1.detach().numpy().copy()
    with qtbot.waitSignal(window.inside_done, timeout=30_000) as blocker:
        window.look_inside()
    assert blocker.args[0] is not None and window.session.run.worker.is_paused()
    assert threads and threads[0] is not threading.main_thread()
    # looking did not move the run's weights
    assert (window.session.run.worker.train_state().w1.detach().numpy() == weights_before).all()
    assert f"run #{window.session.run_key}" in window.step_panel.status.text()
    with _finished(qtbot, window, 10_000):
        window.stop_run()


def test_the_weights_view_fills_as_a_run_trains(qtbot, window):
    view = window.step_panel.weights
    result = start_and_wait(qtbot, window)
    samples = result.extra["dynamics"]["samples"]
    assert [s["step"] for s in view.samples] == [s["step"] for s in samples]
    assert view.names == ["w1", "w2"] and view.param.count() == 2
    assert view.hist.listDataItems() == []  # out of view: nothing is drawn while the run goes on
    window.step_dock.raise_()
    window.step_panel.tabs.setCurrentWidget(view)  # in view: drawn at once
    qtbot.waitUntil(lambda: len(view.hist.listDataItems()) == sum(1 for s in samples if s["full"]), timeout=5000)
    assert f"{len(samples)} samples up to step {SMALL.iters:,}" in view.caption.text()
    # which colour is which parameter: a key in the caption, not a legend over the curves of a narrow panel
    assert view.norms.plotItem.legend is None
    assert ('<span style="color:#1f77b4">&#9644;</span> w1, <span style="color:#d62728">&#9644;</span> w2'
            in view.caption.text())
    assert view._curves[("w1", "weight_norm")].opts["pen"].color().name() == "#1f77b4"
    curve = view._curves[("w1", "weight_norm")]  # its data as given (getData would give log10 on a log axis)
    assert list(curve.xData) == [s["step"] for s in samples]
    assert curve.yData[0] == pytest.approx(samples[0]["w1"]["weight_norm"])
