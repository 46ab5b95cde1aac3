"""Your own script in the window: plotted like a run, its prints in the console pane, Pause/Step/Resume/Stop on
it, and a clear word when it cannot run."""

from __future__ import annotations

import json
import textwrap
import time

import numpy as np

from tests.app.test_script_run import TRAIN, printed_losses


def write(tmp_path, body, name="mine.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def run_script(qtbot, window, path, timeout=60_000):
    assert window.open_script(str(path))
    key = window.session.run_key
    qtbot.waitUntil(lambda: key in window.session.results or not window.session.running, timeout=timeout)
    qtbot.waitUntil(lambda: key in window.session.results, timeout=5_000)
    return key, window.session.results[key]


def test_a_scripts_steps_are_plotted_as_it_printed_them_and_its_prints_are_in_the_console(qtbot, window, tmp_path):
    key, result = run_script(qtbot, window, write(tmp_path, TRAIN.format(steps=40, after="")))
    assert result.status == "done" and result.steps_done == 40
    console = window.console.plain_text()
    assert "mine.py (run #1)" in console
    np.testing.assert_array_equal(window.plot.series[key].loss[:40], printed_losses(console))
    assert window.runs_list.name(key) == "mine.py" and window.runs_list.status(key) == "done"
    assert window.runs_list.device(key) == "cpu"  # the device the script chose, once it stepped
    assert window.controls.progress.text() == "40 steps"
    assert window.controls.speed.text().startswith("Your script: done · ")  # not a recipe's "Done" under its settings
    weights = window.step_panel.weights  # sampled in the script's process, named as the script names them
    assert weights.names == ["w"] and weights.samples and weights.samples[0]["step"] == 0
    assert window.export_logs([key], path=str(tmp_path / "mine.csv")) == [tmp_path / "mine.csv"]
    assert window.export_logs([key], path=str(tmp_path / "mine.json")) == [tmp_path / "mine.json"]
    logged = json.loads((tmp_path / "mine.json").read_text())
    assert logged["dynamics"]["params"] == ["w"] and logged["dynamics"]["samples"][0]["step"] == 0


def test_a_script_that_raises_mid_run_fails_with_its_traceback_in_the_console(qtbot, window, tmp_path):
    key, result = run_script(qtbot, window, write(tmp_path, TRAIN.format(steps=6, after="1 / 0")))
    assert result.status == "failed" and result.steps_done == 6  # the log is kept
    assert window.runs_list.status(key) == "failed"
    assert window.controls.speed.text().startswith("Your script: failed")
    console = window.console.plain_text()
    assert "Traceback (most recent call last):" in console and "ZeroDivisionError: division by zero" in console
    assert "raised after 6 steps: ZeroDivisionError" in window.statusBar().currentMessage()


def test_stop_ends_a_script_that_loops_for_ever_within_a_second_and_keeps_its_log(qtbot, window, tmp_path):
    assert window.open_script(str(write(tmp_path, TRAIN.format(steps=4, after="while True:\n    pass"))))
    key = window.session.run_key
    qtbot.waitUntil(lambda: window.plot.point_count(key) == 4, timeout=30_000)
    started = time.monotonic()
    window.stop_run()
    qtbot.waitUntil(lambda: key in window.session.results, timeout=5_000)
    assert time.monotonic() - started < 5  # ended (within 1 s on a quiet machine: the timing test in tests/app)
    result = window.session.results[key]
    assert result.status == "stopped" and result.steps_done == 4


def test_a_script_that_never_steps_says_so(qtbot, window, tmp_path):
    key, result = run_script(qtbot, window, write(tmp_path, "print('no training here')\n"))
    assert result.status == "failed" and result.steps_done == 0
    assert "never called backward()" in window.statusBar().currentMessage()
    assert "no training here" in window.console.plain_text()


def test_a_file_that_is_not_python_is_refused_in_words(qtbot, window, tmp_path):
    bad = write(tmp_path, "this is not python at all\n", "notes.py")
    assert not window.open_script(str(bad))
    assert "is not a Python program this app can run" in window.statusBar().currentMessage()
    assert not window.session.running


def test_pause_step_resume_on_a_script_with_exact_step_counts(qtbot, window, tmp_path):
    # (5 ms a step: the pause, sent when the first point is drawn, lands long before the 300th step on any machine;
    # without it an idle machine ran all 300 before the pause arrived)
    slowed = TRAIN.format(steps=300, after="").replace("    loss.backward()\n",
                                                       "    loss.backward()\n    __import__('time').sleep(0.005)\n")
    assert "sleep" in slowed
    assert window.open_script(str(write(tmp_path, slowed)))
    key = window.session.run_key
    qtbot.waitUntil(lambda: window.plot.point_count(key) >= 1, timeout=30_000)
    window.toggle_pause()
    assert window.session.is_paused()

    def settled():
        seen, since = window.plot.point_count(key), time.monotonic()
        while time.monotonic() - since < 0.6:
            qtbot.wait(50)
            if window.plot.point_count(key) != seen:
                seen, since = window.plot.point_count(key), time.monotonic()
        return seen

    at = settled()
    assert at < 300
    window.step_run()
    assert settled() == at + 1
    window.step_run()
    assert settled() == at + 2
    window.toggle_pause()  # resume
    qtbot.waitUntil(lambda: key in window.session.results, timeout=30_000)
    assert window.session.results[key].steps_done == 300


def test_closing_the_window_ends_the_script(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from ui.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.show()
    assert w.open_script(str(write(tmp_path, TRAIN.format(steps=2, after="while True:\n    pass"))))
    qtbot.waitUntil(lambda: w.plot.point_count(w.session.run_key) == 2, timeout=30_000)
    proc = w.session.run.worker.script.proc
    w.close()
    assert proc.poll() is not None  # the child process is gone


def test_the_examples_menu_lists_the_tutorials_programs(window):
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    examples = next(a.menu() for a in file_menu.actions() if a.text() == "E&xamples")
    titles = [a.text() for a in examples.actions()]
    assert len(titles) == 17 and titles[0].startswith("Two-layer net: NumPy")
    assert titles[-8:] == ["Past the tutorial: mini-batches, a schedule, a checkpoint",
                           "Past the tutorial: a small CNN reads drawn digits (Conv2d, MaxPool2d)",
                           "Past the tutorial: an autoencoder cleans noisy digits (ConvTranspose2d, OneCycleLR)",
                           "Past the tutorial: a physics-informed net learns sin(x) from u'' + u = 0 (create_graph)",
                           "Past the tutorial: a spectral layer learns how heat spreads (torch.fft, complex weights)",
                           "Past the tutorial: a character-level model makes up names (Embedding, multinomial)",
                           "Past the tutorial: a recurrent net tells a surname's language (nn.RNN, letter by letter)",
                           "Past the tutorial: a small GPT learns to write like a text (attention, GELU, AdamW, top-k)"]
    assert any(t.startswith("Fit sin(x)") for t in titles) and any("custom autograd.Function" in t for t in titles)
    assert all(a.data().endswith(".py") for a in examples.actions())


def test_check_now_on_a_script_compares_autograd_with_finite_differences_for_its_leaves(qtbot, window, tmp_path):
    from tests.app.test_script_run import CUSTOM

    body = CUSTOM.format(mask="grad_input[input < 0] = 0", dtype="float64").replace("range(400)", "range(10**6)")
    assert window.open_script(str(write(tmp_path, body)))
    key = window.session.run_key
    qtbot.waitUntil(lambda: window.plot.point_count(key) >= 3, timeout=30_000)
    window.toggle_pause()  # paused: the check takes the one step it records
    with qtbot.waitSignal(window.gradients_done, timeout=60_000) as done:
        window.check_gradients()
    report = done.args[0]
    assert report is not None and report.pairs == (("autograd", "numerical"),) and report.worst_grade() != "bad"
    panel = window.gradient_panel
    assert panel.table.rowCount() == 2 and [panel.pair.itemText(i) for i in range(panel.pair.count())] == [
        "autograd − numerical"]
    assert "Autograd and numerical agree" in panel.summary.text() or "within what rounding" in panel.summary.text()
    assert panel.heat_image.image.shape == (20, 16)
    window.stop_run()
    qtbot.waitUntil(lambda: key in window.session.results, timeout=10_000)


def test_look_inside_a_running_script_shows_its_graph_and_its_steps_profile(qtbot, window, tmp_path):
    from tests.app.test_script_run import CNN

    assert window.open_script(str(write(tmp_path, CNN.format(steps=10**6), "cnn.py")))
    key = window.session.run_key
    qtbot.waitUntil(lambda: window.plot.point_count(key) >= 3, timeout=30_000)
    caption = window.step_panel.weights.caption.text()
    assert caption.startswith("Your script's weights are sampled in its own process") or "samples up to step" in caption
    window.toggle_pause()  # paused: the look takes its two steps, then the script waits again
    qtbot.waitUntil(lambda: window.session.run.worker.is_paused(), timeout=5_000)
    with qtbot.waitSignal(window.inside_done, timeout=60_000) as done:
        window.look_inside()
    payload = done.args[0]
    assert payload is not None and payload["where"].startswith("steps ") and payload["where"].endswith("of run #1")
    panel = window.step_panel
    assert panel.graph.caption.text().startswith("<b>cnn.py</b>: ") and "your script's own backward()" in \
        panel.graph.caption.text()
    names = {n["name"] for n in panel.graph.data["graph"]["nodes"] if n["kind"] == "leaf"}
    assert "model.0.weight" in names and "scale" in names
    assert "cnn.py on cpu</b>, 1 step profiled" in panel.time.summary.text()
    assert panel.status.text().startswith("At steps ")
    window.stop_run()
    qtbot.waitUntil(lambda: key in window.session.results, timeout=10_000)


def test_a_printed_tensor_keeps_its_columns_in_the_console(qtbot, window, tmp_path):
    """The console's font is the system's fixed-pitch one, so a tensor printed as PyTorch prints it lines up."""
    from PySide6.QtGui import QFontInfo, QFontMetrics

    key, result = run_script(qtbot, window, write(tmp_path, """
        import torch
        print(torch.tensor([[1.5, -20.25], [300.125, 4.0]]))
        loss = torch.tensor(2.0, requires_grad=True) * 1
        loss.backward()
    """))
    assert result.status == "done"
    lines = [line for line in window.console.plain_text().splitlines() if line.strip().startswith(("tensor", "["))]
    assert lines == ["tensor([[  1.5000, -20.2500],", "        [300.1250,   4.0000]])"]
    font = window.console.text.font()
    assert QFontInfo(font).fixedPitch()
    metrics = QFontMetrics(font)
    assert metrics.horizontalAdvance(lines[0][:18]) == metrics.horizontalAdvance(lines[1][:18])  # one column


def test_a_scripts_box_stands_where_the_recipes_settings_were_and_start_runs_it_again(qtbot, window, tmp_path):
    """The settings on the left are a recipe's: while a script's run is the one shown they give way to the
    script's name and folder; Start (then "Run it again") runs it again; "Back to the recipes" brings them back."""
    controls = window.controls
    assert not controls.script_mode and controls.start_button.text() == "Start"
    path = write(tmp_path, TRAIN.format(steps=5, after=""))
    first, result = run_script(qtbot, window, path)
    assert result.status == "done"
    assert controls.script_mode and controls.script_box.isVisibleTo(window) and \
        not controls.settings_box.isVisibleTo(window)
    assert controls.script_name.text() == "mine.py" and controls.script_path.text() == str(tmp_path)
    assert controls.start_button.text() == "Run it again" and controls.start_button.isEnabled()
    assert not controls.step_button.isEnabled() and not controls.reset_button.isEnabled()
    controls.start_button.click()
    second = window.session.run_key
    assert second != first and window.session.names[second] == "mine.py"
    assert controls.pause_button.isEnabled() and not controls.back_button.isEnabled()  # running: no way back yet
    qtbot.waitUntil(lambda: second in window.session.results, timeout=60_000)
    assert window.session.results[second].steps_done == 5
    controls.back_button.click()
    assert not controls.script_mode and controls.settings_box.isVisibleTo(window)
    assert not controls.script_box.isVisibleTo(window) and controls.start_button.text() == "Start"
    assert controls.step_button.isEnabled() and controls.speed.text() == "Ready"
