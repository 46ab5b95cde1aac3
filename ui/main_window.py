"""The main window: controls on the left, the live loss plot in the middle, device and gradient panels on
the right, the runs list below. Runs go to a worker thread; the window only receives batches of numbers."""

from __future__ import annotations

import importlib.resources
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QByteArray, QEvent, QSettings, QStandardPaths, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QColorDialog,
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QScrollArea,
    QSplitter,
    QTabBar,
    QWidget,
)

from app import export
from app.config import ConfigError, RunConfig
from app.examples import examples
from app.recipes import TABLE
from app.records import DONE, Batch, RunResult
from app.script_run import ScriptError

from .bench_panel import BenchPanel
from .console import Console
from .controls import Controls
from .device_panel import DevicePanel
from .fit_view import FitView
from .gradient_panel import GradientPanel
from .loss_plot import LossPlot
from .runs_list import RunsList
from .session import RunSession
from .step_panel import SCRIPT_WEIGHTS_NOTE, StepPanel

# the window's icon and style sheet, as installed with the package (importlib.resources: a wheel or a zip too)
RESOURCES = importlib.resources.files("ui") / "resources"
SETTINGS_VERSION = 3  # 2: the right-hand docks are tabs; 3: with "Inside the step"


# the loss plot's and the fit view's room, in pixels wide, under which the fit goes under the loss, not beside it:
# beside it at 2 : 1 it gets a third, and under ~210 pixels its title and x axis are cut off
SIDE_BY_SIDE_WIDTH = 640


class MainWindow(QMainWindow):
    gradients_done = Signal(object)  # the GradientReport shown, or None when the check failed
    inside_done = Signal(object)  # the graph and profile shown (a dict), or None when the look failed
    log_opened = Signal(object)  # the runs-list key of an opened log, or None (refused or cancelled)

    def __init__(self, settings: QSettings | None = None, preset: RunConfig | None = None):
        super().__init__()
        self._tabs_tidy_pending = False  # a tidy of the dock tabs is scheduled (childEvent)
        self.settings = settings if settings is not None else default_settings()
        # where this session's runs are kept for the next launch: with the autosaves, or beside a settings file
        # of one's own (GRADSCOPE_SETTINGS, the tests)
        own = settings is not None or os.environ.get("GRADSCOPE_SETTINGS")
        folder = (Path(self.settings.fileName()).with_name(Path(self.settings.fileName()).stem + "-session") if own
                  else autosave_folder() / "session")
        self.session = RunSession(folder, self)  # the runs: their threads, results, names; the window draws them
        self.setWindowTitle("gradscope — the PyTorch tutorial, live")
        icon = RESOURCES / "icon.svg"
        if icon.is_file():
            self.setWindowIcon(QIcon(QPixmap.fromImage(QImage.fromData(icon.read_bytes()))))
        self.edge_timer = QTimer(self)  # settles a burst of edits into one learning-rate check
        self.edge_timer.setSingleShot(True)
        self.edge_timer.setInterval(300)
        self.edge_timer.timeout.connect(self._check_learning_rate)
        self._shutdown: str | None = None  # None, "waiting" (for the step in flight), "done"
        self.on_run_finished = []  # callbacks (screenshot mode, tests)
        self._progress_shown = 0.0
        self._running_ms = 0.0  # the current run's time spent stepping (its speed leaves pauses out)
        self._script_path = None  # the last script run, which Start runs again while its box is shown
        self._restored_count = 0  # the last session's runs read back so far (they go first in the list)

        self.controls = Controls()
        self.plot = LossPlot()
        self.device_panel = DevicePanel()
        self.gradient_panel = GradientPanel()
        self.runs_list = RunsList()
        self.bench_panel = BenchPanel()
        self.step_panel = StepPanel()

        self.fit_view = FitView()
        self.center = QSplitter(Qt.Horizontal)  # the loss plot, and beside it the fit of sin(x) when it applies
        self.center.addWidget(self.plot)
        self.center.addWidget(self.fit_view)
        self.center.setStretchFactor(0, 3)
        self.center.setStretchFactor(1, 2)
        self.center.setChildrenCollapsible(False)
        self.fit_view.hide()
        self.setCentralWidget(self.center)
        self.center.installEventFilter(self)  # a dock dragged wider or narrower turns the fit view too
        scroll = scrolled(self.controls, horizontal=False)
        # never narrower than the controls can be laid out (room for the vertical scroll bar too)
        scroll.setMinimumWidth(self.controls.minimumSizeHint().width()
                               + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.controls_dock = self._dock("Run", scroll, Qt.LeftDockWidgetArea)
        # the right-hand panels scroll rather than hold the window open: it fits a 1024x700 screen
        self.device_dock = self._dock("Device", scrolled(self.device_panel), Qt.RightDockWidgetArea)
        self.gradient_dock = self._dock("Gradients", scrolled(self.gradient_panel, horizontal=False),
                                        Qt.RightDockWidgetArea)
        self.runs_dock = self._dock("Runs", self.runs_list, Qt.BottomDockWidgetArea)
        self.console = Console()
        self.console_dock = self._dock("Console", self.console, Qt.BottomDockWidgetArea)
        self.bench_dock = self._dock("Benchmarks", scrolled(self.bench_panel), Qt.RightDockWidgetArea)
        # not in a scroll area: its plots and graph view shrink to the dock (a scroll area would size it by the
        # plots' large size hints, and the graph would sit below the fold)
        self.step_dock = self._dock("Inside the step", self.step_panel, Qt.RightDockWidgetArea)

        self._make_menus()
        self._connect()
        self.statusBar().showMessage("Ready. Press Start (Ctrl+R) to train the tutorial's two-layer net.")

        self.settings_note = ""
        remembered = self._load_settings()
        self.controls.set_config(preset or remembered or RunConfig())
        if self.settings_note:
            self._say(self.settings_note, error=True)
        self.resize(1400, 880)
        if not self._restore_layout():
            self._default_tabs()
            QTimer.singleShot(0, self._default_dock_sizes)  # once the window is laid out
        self._fit_screen()
        self._restore_plot_settings()

    # ------------------------------------------------------------------ building
    def _dock(self, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        return dock

    def _make_menus(self) -> None:
        def action(menu, text, slot, shortcut=None, tip=""):
            a = QAction(text, self)
            if shortcut:
                a.setShortcut(QKeySequence(shortcut))
            a.setStatusTip(tip)
            a.triggered.connect(slot)
            menu.addAction(a)
            return a

        file_menu = self.menuBar().addMenu("&File")
        action(file_menu, "&Open log…", self.open_log, "Ctrl+O", "Overlay an exported loss log")
        action(file_menu, "Open &script…", self.open_script, "Ctrl+Shift+O",
               "Run your own training script (import torch): each backward() is a step on the plot")
        examples_menu = file_menu.addMenu("E&xamples")
        for title, path in examples():
            example = QAction(title, self)
            example.setStatusTip(f"Run {path} (copy it to edit it)")
            example.setData(path)
            example.triggered.connect(self._on_example_chosen)
            examples_menu.addAction(example)
        self.export_action = action(file_menu, "&Export selected logs…", self.export_logs, "Ctrl+E",
                                    "Write the selected runs' loss logs")
        action(file_menu, "Export &plot…", self.export_plot, None, "Save the plot as PNG or SVG")
        file_menu.addSeparator()
        action(file_menu, "&Quit", self.close, "Ctrl+Q")
        run_menu = self.menuBar().addMenu("&Run")
        self.start_action = action(run_menu, "&Start", self.start_run, "Ctrl+R")
        self.pause_action = action(run_menu, "&Pause / resume", self.toggle_pause)
        self.pause_action.setShortcut(QKeySequence(Qt.Key_Space))
        self.pause_action.setShortcutContext(Qt.WindowShortcut)
        action(run_menu, "S&tep", self.step_run, "Ctrl+T")
        stop = action(run_menu, "St&op", self.stop_run)
        stop.setShortcut(QKeySequence(Qt.Key_Escape))
        action(run_menu, "&Reset", self.reset_run)
        run_menu.addSeparator()
        action(run_menu, "&Check gradients now", self.check_gradients, "Ctrl+G")
        view_menu = self.menuBar().addMenu("&View")
        log_action = QAction("&Log scale", self, checkable=True, checked=True)
        log_action.toggled.connect(self.plot.set_log_scale)
        self.plot.log_scale_changed.connect(log_action.setChecked)
        view_menu.addAction(log_action)
        legend_action = QAction("Le&gend", self, checkable=True, checked=self.plot.legend_visible())
        legend_action.setToolTip("The newest runs on show, named over the plot (the runs list names them all)")
        legend_action.toggled.connect(self.plot.set_legend_visible)
        self.plot.legend_shown.connect(legend_action.setChecked)
        view_menu.addAction(legend_action)
        view_menu.addSeparator()
        for dock in (self.controls_dock, self.device_dock, self.gradient_dock, self.runs_dock, self.console_dock,
                     self.bench_dock, self.step_dock):
            view_menu.addAction(dock.toggleViewAction())
        help_menu = self.menuBar().addMenu("&Help")
        action(help_menu, "&About", self._about)
        # Space in a text field must still type a space: the window shortcut yields to focused editors there
        self._space_guard = QShortcut(QKeySequence(Qt.Key_Space), self.controls.lr, context=Qt.WidgetShortcut)
        self._space_guard.activated.connect(self._on_space_in_lr)

    def _on_space_in_lr(self) -> None:
        self.controls.insert_in_lr(" ")

    def _connect(self) -> None:
        c, runs, session = self.controls, self.runs_list, self.session
        wiring = (
            # what the widgets ask for
            (c.start_requested, self.start_run), (c.pause_requested, self.toggle_pause),
            (c.step_requested, self.step_run), (c.stop_requested, self.stop_run), (c.reset_requested, self.reset_run),
            (c.recipes_requested, c.show_recipes),
            (c.config_changed, self._on_config_changed), (self.gradient_panel.check_requested, self.check_gradients),
            (self.step_panel.look_requested, self._look_requested),
            (runs.renamed, self.rename_run), (runs.recolour_requested, self._on_recolour_requested),
            (runs.delete_requested, self.delete_runs), (runs.visibility_changed, self.plot.set_visible),
            (self.plot.hide_requested, self._hide_run),
            (runs.export_logs_requested, self.export_logs), (runs.export_plot_requested, self.export_plot),
            (runs.open_log_requested, self.open_log),
            # what the session says
            (session.started, self._on_session_started), (session.batch, self._on_session_batch),
            (session.script_started, self._on_script_started), (session.printed, self._on_script_printed),
            (session.paused, self._on_session_paused), (session.resumed, self._on_session_resumed),
            (session.finished, self._on_session_finished), (session.errored, self._on_session_errored),
            (session.gradients_checked, self._on_gradients_checked),
            (session.gradients_failed, self._on_gradients_failed), (session.log_loaded, self._on_log_loaded),
            (session.log_failed, self._on_log_failed), (session.log_cancelled, self._on_log_cancelled),
            (session.edge_estimated, self._on_edge_estimated), (session.inside_ready, self._on_inside_ready),
            (session.inside_failed, self._on_inside_failed),
        )
        for signal, slot in wiring:
            signal.connect(slot)

    # ------------------------------------------------------------------ run control (the intents)
    def start_run(self, start_paused: bool = False) -> bool:
        if self.session.running:
            return False
        if self.controls.script_mode and self._script_path is not None:  # Start is "Run it again" then
            return self.open_script(str(self._script_path))
        config, problem = self.controls.config()
        if config is None:
            self._say(f"Cannot start: {problem}", error=True, at_controls=True)
            return False
        return self.session.start(config, paused=start_paused) is not None

    def toggle_pause(self) -> None:
        self.session.toggle_pause()

    def step_run(self) -> None:
        session = self.session
        if session.running:
            session.step()
            self._look_if_shown()  # after the step: the run's thread takes the job once it parks again
            return
        previous = session.run_key if session.run_key in session.results else None
        if self.start_run(start_paused=True):
            session.step()
            self._say(f"Step started run #{session.run_key}"
                      + (f" (run #{previous} had ended)" if previous is not None else "")
                      + ": one step, then paused; Step runs another, Resume goes on", at_controls=True)

    def stop_run(self) -> None:
        if self.session.stop():
            self._say(f"Stopping run #{self.session.run_key}…")

    def reset_run(self) -> None:
        stopped = self.session.reset()
        if stopped is not None:
            QApplication.processEvents()
        self.controls.show_ready()
        first = f"Reset stopped run #{stopped} (its log is kept). " if stopped is not None else "Reset: "
        self._say(first + "the next run starts from the seed's initial weights; Check now compares at them",
                  at_controls=stopped is not None)

    # ------------------------------------------------------------------ what the run says
    def _on_session_started(self, key, config: RunConfig, paused: bool) -> None:
        series = self.plot.add_series(key, self.session.label(key), name=self.session.names[key],
                                      avoid=self.session.colors_coming())
        self.runs_list.add(key, self.session.names[key], config.settings_text(), config.device, series.color,
                           status="paused" if paused else "running")
        self._running_ms = 0.0
        self.controls.set_run_state("paused" if paused else "running")
        self.controls.show_progress(0, config.iters, 0)
        self.device_panel.set_running(True)
        self.step_panel.reset_weights()
        self._say(f"Run #{key} started: {config.label()}", at_controls=True)

    # ------------------------------------------------------------------ your own script
    def open_script(self, path: str | None = None) -> bool:
        """Run a training script of the learner's own in a child process; each backward() is a step."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open a training script", "", "Python (*.py);;All files (*)")
            if not path:
                return False
        if self.session.running:
            self._say(f"Run #{self.session.run_key} is going on: stop it first", error=True, at_controls=True)
            return False
        try:
            key = self.session.start_script(path)
        except ScriptError as exc:
            self._say(f"Cannot run the script: {exc}", error=True, at_controls=True)
            return False
        return key is not None

    def _on_example_chosen(self) -> None:
        self.open_script(self.sender().data())

    def _on_script_started(self, key, path) -> None:
        self._script_path = path
        self.controls.show_script(str(path))
        series = self.plot.add_series(key, self.session.label(key), name=self.session.names[key],
                                      avoid=self.session.colors_coming())
        self.runs_list.add(key, self.session.names[key], str(path), "(the script's)", series.color)
        self._running_ms = 0.0
        self.controls.set_run_state("running")
        self.controls.show_script_progress(0, 0.0)
        self.device_panel.set_running(True)
        self.step_panel.reset_weights(note=SCRIPT_WEIGHTS_NOTE)
        self.console.begin(f"{path.name} (run #{key})")
        self.console_dock.raise_()
        self._say(f"Run #{key}: your script {path.name}, in a process of its own; each backward() is a step",
                  at_controls=True)

    def _on_script_printed(self, key, text: str, from_stderr: bool) -> None:
        self.console.write(text, error=from_stderr)

    def _on_session_errored(self, text: str) -> None:
        self._say(f"Error: {text}", error=True)

    def _on_session_paused(self, key) -> None:
        self.controls.set_run_state("paused")
        self.controls.show_paused()
        self.runs_list.update(key, "paused")
        self._say(f"Run #{key} paused: Step runs one step, Resume goes on")
        self._look_if_shown()

    def _on_session_resumed(self, key) -> None:
        self.controls.set_run_state("running")
        self.runs_list.update(key, "running")
        self._say(f"Run #{key} resumed")

    def _on_session_batch(self, key, batch: Batch) -> None:
        if not self.plot.has(key):
            return
        self.plot.append(key, batch.step, batch.elapsed_s, batch.loss)
        if batch.dynamics:
            self.step_panel.add_samples(batch.dynamics)
        source = self.session.state_source
        if batch.coefficients and source is not None:
            self.fit_view.show_fit(source[0].recipe, batch.coefficients,
                                   int(batch.step[-1]) + 1 if len(batch.step) else None, self.plot.color(key))
        now = time.monotonic()
        # the progress bar and its text repaint on every change: 4 times a second is plenty to read, and
        # leaves the CPU to the run
        self._running_ms += float(np.sum(batch.step_ms))  # time spent stepping: pauses do not count
        paused = self.session.is_paused()
        if len(batch.step) and (paused or now - self._progress_shown >= 0.25):
            self._progress_shown = now
            done = int(batch.step[-1]) + 1
            speed = done / (self._running_ms / 1e3) if self._running_ms > 0 else 0.0
            if self.session.running_script():
                self.controls.show_script_progress(done, speed, paused=paused)
            else:
                self.controls.show_progress(done, source[0].iters if source else done, speed, paused=paused)

    def _on_session_finished(self, key, result: RunResult | None) -> None:
        self.device_panel.set_running(False)
        self.controls.set_run_state("idle")
        if result is None:
            self.runs_list.update(key, "failed")
            self._say("The run failed before it began", error=True)
        else:
            self.plot.redraw(force=True)
            same = self.plot.mark_identical(key) if self.plot.has(key) else []
            # by the names the legend and the runs list show (a restored or opened run's key is not its number)
            same_note = f"; its curve lies exactly on {', '.join(self.plot.series[k].name for k in same)} " \
                "(identical losses)" if same else ""
            self.runs_list.update(key, result.status, result.final_loss if result.steps_done else None,
                                  result.steps_per_second, result.message + same_note)
            if result.config is None:  # a script: its device is known once it stepped
                self.controls.show_script_progress(result.steps_done, result.steps_per_second, finished=result.status)
                if result.steps_done:
                    self.runs_list.set_device(key, result.extra.get("device", "?"))
            else:
                self.controls.show_progress(result.steps_done, result.config.iters, result.steps_per_second,
                                            finished=result.status)
            text = {DONE: f"Run #{key} done: {result.steps_done} steps, final loss {result.final_loss:.4g}, "
                          f"{result.steps_per_second:,.0f} steps/s"}.get(result.status, f"Run #{key} {result.message}")
            if "cuda_graph" in result.extra:
                text += f". CUDA graph: {result.extra['cuda_graph']['note']}"
            text += same_note.replace("; its curve", ". Its curve")
            self._say(text, error=result.status not in (DONE, "stopped"), at_controls=True)
        for callback in list(self.on_run_finished):
            callback(result)

    # ------------------------------------------------------------------ gradients
    def check_gradients(self) -> None:
        """Compare manual, autograd and numerical gradients, off the GUI thread: during a run in the run's own
        thread (paused first), otherwise in a thread of its own. The panel shows the report when it comes."""
        forget = self.gradient_panel.bug_planted()
        session = self.session
        config = None
        if not session.running and session.train_state() is None:
            config, problem = self.controls.config()
            if config is None:
                self._say(f"Cannot check gradients: {problem}", error=True)
                self.gradients_done.emit(None)
                return
        where = session.check_gradients(config, forget)
        if where is None:
            self._say("A gradient check is still running; its report comes in a moment")
        else:
            self._say(f"Checking gradients at {where}…")

    def _on_gradients_checked(self, report) -> None:
        self.gradient_panel.show_report(report)
        self.gradient_dock.raise_()
        verdict = {"good": "agree", "ok": "agree within rounding", "bad": "DISAGREE"}[report.worst_grade()]
        names = list(dict.fromkeys(m for pair in report.pairs for m in pair))
        which = ", ".join(names[:-1]) + " and " + names[-1]
        self._say(f"Gradients at {report.source.split(' (')[0]}: {which} {verdict}",
                  error=verdict == "DISAGREE")
        self.gradients_done.emit(report)

    def _on_gradients_failed(self, text: str) -> None:
        self._say(f"Gradient check failed: {text}", error=True)
        self.gradients_done.emit(None)

    # ------------------------------------------------------------------ inside the step
    def look_inside(self) -> None:
        """The graph and the per-op profile of one step, off the GUI thread: during a run in the run's own thread
        (paused first), otherwise in a thread of its own, at the last run's weights or the settings' initial ones."""
        session = self.session
        config = None
        if not session.running and session.train_state() is None:
            config, problem = self.controls.config()
            if config is None:
                self._say(f"Cannot look inside the step: {problem}", error=True)
                self.inside_done.emit(None)
                return
        where = session.look_inside(config)
        if where is not None:
            self.step_panel.show_busy(where)

    def _look_requested(self) -> None:
        """The panel's button: the dock wide enough to read its graph and bars (a narrow window with the fit view
        beside the loss leaves it a strip), then the look."""
        left = self.controls_dock.width() if self.dockWidgetArea(self.controls_dock) == Qt.LeftDockWidgetArea else 0
        room = self.width() - left - self.center.minimumSizeHint().width() - 16  # (what Qt refuses, it ignores)
        want = min(460, self.width() * 2 // 5, room)
        if not self.step_dock.isFloating() and self.step_dock.width() < want:
            self.resizeDocks([self.step_dock], [want], Qt.Horizontal)
        self.look_inside()

    def _look_if_shown(self) -> None:
        """A paused or stepped run refreshes the panel when it is in view (it costs a few tenths of a second)."""
        if self.step_dock.isVisible() and not self.step_dock.visibleRegion().isEmpty() and \
                not self.session.running_script():
            self.look_inside()

    def _on_inside_ready(self, payload: dict) -> None:
        self.step_panel.show_inside(payload)
        self._say(f"Inside the step at {payload['where']}: "
                  + ", ".join(p for p in ("graph" if payload["graph"] else "", "profile" if payload["profile"] else "")
                              if p))
        self.inside_done.emit(payload)

    def _on_inside_failed(self, text: str) -> None:
        self.step_panel.show_failed(text)
        self._say(f"Could not look inside the step: {text}", error=True)
        self.inside_done.emit(None)

    # ------------------------------------------------------------------ logs and pictures
    def export_logs(self, keys=None, path: str | None = None) -> list[Path]:
        results = self.session.results
        run_key = self.session.run_key
        keys = keys or self.runs_list.selected_keys() or ([run_key] if run_key in results else [])
        keys = [k for k in keys if k in results]  # finished runs and opened logs (written again)
        if not keys:
            self._say("Select a finished run or an opened log to export (the runs list, below the plot)",
                      error=True)
            return []
        written = []
        try:
            if len(keys) == 1:
                if path is None:
                    path, _ = QFileDialog.getSaveFileName(self, "Export loss log",
                                                          f"{self.session.file_stem(keys[0])}.csv",
                                                          "CSV (*.csv);;JSON (*.json)")
                    if not path:
                        return []
                written.append(export.export(results[keys[0]], path))
            else:
                folder = path or QFileDialog.getExistingDirectory(self, "Export loss logs to folder")
                if not folder:
                    return []
                for k in keys:
                    written.append(export.export(results[k], Path(folder) / f"{self.session.file_stem(k)}.json"))
        except export.ExportError as exc:
            self._warn("Export failed", str(exc))
            return written
        self._say("Wrote " + ", ".join(str(p) for p in written))
        return written

    def export_plot(self, path: str | None = None) -> Path | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export plot", "loss.png", "PNG (*.png);;SVG (*.svg)")
            if not path:
                return None
        try:
            self.plot.export_image(path)
        except ValueError as exc:  # not a .png or .svg name
            self._warn("Export failed", str(exc))
            return None
        except (OSError, export.ExportError) as exc:
            self._warn("Export failed", str(exc) if str(path) in str(exc) else f"could not write {path}: {exc}")
            return None
        self._say(f"Wrote {path}")
        return Path(path)

    def open_log(self, path: str | None = None) -> None:
        """Read a loss log in a worker thread (a big one takes seconds), with a progress dialog and Cancel; the
        curve joins the plot when it is read (``log_opened`` carries its key, or None)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open loss log", "", "Loss logs (*.csv *.json)")
            if not path:
                return
        reader = self.session.open_log(str(path))
        if reader is None:
            self._say("A log is still being read; wait for it or cancel it first")
            return
        worker = reader.worker
        dialog = QProgressDialog(f"Reading {Path(path).name}…", "Cancel", 0, 1000, self)
        dialog.setWindowTitle("Open log")
        dialog.setMinimumDuration(300)  # a small file comes and goes without a flash
        dialog.setValue(0)
        dialog.canceled.connect(worker.cancel)
        worker.progressed.connect(lambda fraction, d=dialog: d.setValue(int(fraction * 1000)))
        worker.done.connect(dialog.reset)
        worker.done.connect(dialog.deleteLater)
        self._log_dialog = dialog
        self._say(f"Reading {path}…")

    def _close_log_dialog(self) -> None:
        """The open-log progress dialog put away as soon as the reading's outcome is known (the worker's ``done``
        comes later, from its thread: until then the dialog's show-delay timer would still run)."""
        dialog, self._log_dialog = getattr(self, "_log_dialog", None), None
        if dialog is not None:
            try:
                dialog.reset()
                dialog.deleteLater()
            except RuntimeError:  # (already deleted by the worker's done)
                pass

    def _on_log_loaded(self, key, loaded, entry) -> None:
        self._close_log_dialog()
        session = self.session
        # a run of the last session goes after those read back before it, before any run made since (started
        # while they were being read back): the list and the legend stay in the order the runs were made
        at = None
        if entry:
            at = self._restored_count
            self._restored_count += 1
        series = self.plot.add_series(key, session.label(key), color=entry["color"] if entry else None,
                                      name=session.names[key], avoid=session.colors_coming(), position=at)
        log = loaded.log
        self.plot.append(key, log.step, log.elapsed_s, log.loss)
        status = (loaded.status or "loaded") if entry else "loaded"
        config = loaded.config
        self.runs_list.add(key, session.names[key], config.settings_text() if config else session.descriptions[key][1],
                           config.device if config else "?", series.color, status=status, row=at)
        self.runs_list.update(key, status, float(log.loss[-1]) if len(log) else None,
                              loaded.as_result().steps_per_second if len(log) else None)
        if entry and not entry.get("visible", True):
            self.runs_list.set_checked(key, False)
        self.plot.redraw(force=True)
        problem = loaded.meta.get("settings_problem")
        if not entry:
            self._say(f"Opened {loaded.path}: {len(log)} steps" + (f"; its settings were not usable ({problem})"
                                                                   if problem else ""), error=bool(problem))
        self.log_opened.emit(key)

    def _on_log_failed(self, text: str, entry) -> None:
        self._close_log_dialog()
        if entry is not None:  # a run of the last session whose file is gone or spoilt: say so, go on
            self._say(f"{entry['name']} of the last session could not be read back: {text}", error=True)
        else:
            self._warn("Cannot open log", text)
        self.log_opened.emit(None)

    def _on_log_cancelled(self) -> None:
        self._close_log_dialog()
        self._say("Opening the log was cancelled")
        self.log_opened.emit(None)

    # ------------------------------------------------------------------ the runs: names, colours, deleting
    def rename_run(self, key, name: str) -> None:
        """A run's name in the runs list, its curve's legend and hover line, and the file names it exports to."""
        if not self.plot.has(key) or not self.session.rename(key, name):
            return
        name = self.session.names[key]
        if self.runs_list.name(key) != name:
            self.runs_list.set_name(key, name)
        self.plot.set_label(key, self.session.label(key), name)
        self._say(f"Renamed to {name}")

    def _on_recolour_requested(self, key) -> None:
        dialog = QColorDialog(QColor(self.plot.color(key)), self)
        dialog.setWindowTitle(f"Colour of {self.runs_list.name(key)}")
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.setProperty("run_key", key)
        dialog.colorSelected.connect(self._on_colour_chosen)
        dialog.open()  # not modal to the event loop: a run goes on behind it

    def _on_colour_chosen(self, color) -> None:
        self.recolour_run(self.sender().property("run_key"), color.name())

    def recolour_run(self, key, color: str) -> None:
        if self.plot.has(key) and QColor(color).isValid():
            self.plot.set_color(key, color)
            self.runs_list.set_color(key, color)

    def delete_runs(self, keys) -> list:
        """Take runs off the plot and the list (the one running is refused: stop it first). Returns the keys
        deleted. A run's file kept for the next session goes with it; exported files stay."""
        deleted = []
        for key in keys:
            if not self.plot.has(key):
                continue
            if not self.session.delete(key):
                self._say(f"Run #{key} is running: stop it before deleting it", error=True)
                continue
            self.plot.remove(key)
            self.runs_list.remove(key)
            deleted.append(key)
        if deleted:
            self.plot.redraw(force=True)
            self._say(f"Deleted {len(deleted)} run{'s' if len(deleted) > 1 else ''}")
        return deleted

    # ------------------------------------------------------------------ the session: runs kept between launches
    def save_session(self) -> None:
        """Keep this session's runs for the next launch (the session folder; the list in the settings)."""
        self.session.save(self.settings, self.runs_list.keys(),
                          lambda key: (self.plot.color(key), self.runs_list.is_checked(key)))

    def _hide_run(self, key) -> None:
        """A run's curve hidden from the plot's legend: its box in the runs list unticked, which hides it."""
        if key in self.runs_list.rows:
            self.runs_list.set_checked(key, False)

    def restore_session(self) -> int:
        """Read back the runs the last session kept, one at a time; how many are on their way."""
        self._restored_count = 0
        count = self.session.restore(self.settings, lambda color: QColor(color).isValid())
        if count:
            self._say(f"Reading back the last session's {count} run{'s' if count > 1 else ''}…")
        return count

    # ------------------------------------------------------------------ status
    def _say(self, text: str, error: bool = False, at_controls: bool = False) -> None:
        """The status bar says what happened; run and settings problems also stand under the controls."""
        self.statusBar().showMessage(text)
        self.statusBar().setStyleSheet("color: #c62828;" if error else "")
        if at_controls:
            self.controls.show_message(text, error)

    def _warn(self, title: str, text: str) -> None:
        """A message box that does not block the event loop (runs and timers go on behind it)."""
        self._say(text, error=True)
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.last_warning = box

    # ------------------------------------------------------------------ the divergence warning
    def _check_learning_rate(self) -> None:
        """Warn under the learning rate when it is likely to diverge at these settings (the edge comes from the
        session, estimated in a thread once per recipe, sizes and seed; a new rate is judged at once)."""
        config, _ = self.controls.config()
        if config is None:
            self.controls.show_lr_advice("")
            return
        known, edge = self.session.edge(config)
        if known:
            self._show_advice(edge, config.lr)
        # else: _on_edge_estimated shows it when it comes

    def _on_edge_estimated(self, key, edge) -> None:
        config, _ = self.controls.config()
        if config is None:
            return
        if self.session.edge_key(config) == key:
            self._show_advice(edge, config.lr)
        else:
            self.edge_timer.start()  # the settings moved on while it was estimated: check them

    def _show_advice(self, edge, lr: float) -> None:
        self.controls.show_lr_advice(edge.advice(lr) if edge is not None else "",
                                     edge.suggested_lr() if edge is not None else None)

    def _on_config_changed(self) -> None:
        self.edge_timer.start()
        recipe = self.controls.recipe_name()
        poly = recipe in TABLE and TABLE[recipe].family == "poly"
        if poly == self.fit_view.isHidden():
            self.fit_view.setVisible(poly)
            if poly:  # the fit beside the loss: a third of the middle, once the layout has settled
                QTimer.singleShot(0, self._share_center)
        if not self.session.running:
            # a settings problem stands at its field (under the learning rate, or in red where the memory
            # estimate goes), once; the line under the buttons is for what a run says
            self.controls.show_message("", error=False)

    def _share_center(self) -> None:
        total = self.center.width() if self.center.orientation() == Qt.Horizontal else self.center.height()
        if total > 0:
            self.center.setSizes([total * 2 // 3, total - total * 2 // 3])

    def childEvent(self, event) -> None:  # noqa: N802 - Qt override
        # Qt makes the tab bars of tabified docks as the docks are tabified, restored or dragged together
        if event.type() == QEvent.ChildAdded and not getattr(self, "_tabs_tidy_pending", True):
            self._tabs_tidy_pending = True
            QTimer.singleShot(0, self, self._tidy_tab_bars)  # once the child is whole
        super().childEvent(event)

    def _tidy_tab_bars(self) -> None:
        """Dock tabs keep their whole names ("Benchmarks", not "Benc…"): where the tabs are wider than the dock,
        the bar scrolls, with arrows, rather than cut every name down to a letter or two."""
        self._tabs_tidy_pending = False
        for bar in self.findChildren(QTabBar, options=Qt.FindDirectChildrenOnly):
            bar.setElideMode(Qt.ElideNone)
            bar.setUsesScrollButtons(True)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if watched is self.center and event.type() == QEvent.Resize:
            self._orient_center()
        return super().eventFilter(watched, event)

    def _orient_center(self) -> None:
        """The fit of sin(x) beside the loss where the middle of the window is wide, under it where it is narrow:
        side by side there, the fit's plot is cut off (its title, the right of its x axis). Turning does not change
        the middle's width, so the choice is stable."""
        want = Qt.Horizontal if self.center.width() >= SIDE_BY_SIDE_WIDTH else Qt.Vertical
        if self.center.orientation() != want:
            self.center.setOrientation(want)
            if not self.fit_view.isHidden():
                QTimer.singleShot(0, self._share_center)

    def _about(self) -> None:
        QMessageBox.about(self, "About gradscope",
                          "gradscope shows the classic PyTorch tutorial training, on the project's own "
                          "NumPy/CuPy tensor and autograd engine.")

    def _load_settings(self) -> RunConfig | None:
        text = self.settings.value("run/config")
        if not text:
            return None
        try:
            return RunConfig.from_json(str(text)).validated(check_device=False, check_memory=False)
        except (ConfigError, TypeError, ValueError) as exc:  # a file edited by hand, or from another version
            self.settings_note = f"The saved run settings were not usable ({exc}); the defaults are used"
            return None

    def _restore_plot_settings(self) -> None:
        """The plot's log scale, x axis and smoothing, as the last session left them (what cannot be read is left
        at the default)."""
        def number(key):
            try:
                return int(self.settings.value(key, -1))
            except (TypeError, ValueError):
                return None

        flags = {"true": True, "false": False, True: True, False: False}
        self.plot.apply_view_settings(log_y=flags.get(self.settings.value("plot/log_y")),
                                      x_mode=number("plot/x_mode"), smoothing=number("plot/smoothing"),
                                      legend=flags.get(self.settings.value("plot/legend")))

    def _default_tabs(self) -> None:
        """The first launch's tabs: Runs and Console at the bottom, one column of tabs on the right (each panel
        gets its whole height; a check raises Gradients). Only where no saved layout was restored: tabs made here
        and then replaced by restoreState's left their tab bar behind, a row of dead "Runs | Console" tabs under
        the Run panel."""
        self.tabifyDockWidget(self.runs_dock, self.console_dock)
        self.runs_dock.raise_()
        for dock in (self.gradient_dock, self.bench_dock, self.step_dock):
            self.tabifyDockWidget(self.device_dock, dock)
        self.device_dock.raise_()

    def _default_dock_sizes(self) -> None:
        """The first launch's layout: the right-hand tabs a third of the width, the runs list room for five runs
        before it scrolls."""
        width = max(300, min(480, self.width() // 3))
        self.resizeDocks([self.controls_dock, self.device_dock], [340, width], Qt.Horizontal)
        self.resizeDocks([self.runs_dock], [205 if self.height() > 850 else 120], Qt.Vertical)

    def _restore_layout(self) -> bool:
        """The window's size and docks as the last session left them; False where there is nothing to restore."""
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray) and self.settings.value("window/version") == str(SETTINGS_VERSION):
            return self.restoreState(state, SETTINGS_VERSION)
        return False

    def _fit_screen(self) -> None:
        """Never larger than the screen's free area (a window saved on a big monitor, or the default size on a
        laptop): everything stays reachable, the docks scroll."""
        screen = self.screen()
        if screen is None:
            return
        room = screen.availableGeometry()
        frame = self.frameGeometry().size() - self.geometry().size()  # the title bar and borders
        width = min(self.width(), room.width() - frame.width())
        height = min(self.height(), room.height() - frame.height())
        if (width, height) != (self.width(), self.height()):
            self.resize(max(width, self.minimumSizeHint().width()), max(height, self.minimumSizeHint().height()))
            self.move(room.topLeft())

    def save_settings(self) -> None:
        config = self.controls.raw_config()
        if not math.isfinite(config.lr) or config.lr <= 0:  # a bad learning rate in the box: keep everything else
            config = config.with_(lr=TABLE[config.recipe].default_lr)
        self.settings.setValue("run/config", config.to_json())
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(SETTINGS_VERSION))
        self.settings.setValue("window/version", str(SETTINGS_VERSION))
        view = self.plot.view_settings()
        self.settings.setValue("plot/log_y", "true" if view["log_y"] else "false")
        self.settings.setValue("plot/x_mode", view["x_mode"])
        self.settings.setValue("plot/smoothing", view["smoothing"])
        self.settings.setValue("plot/legend", "true" if view["legend"] else "false")
        self.settings.sync()

    def shutdown(self, first_wait_ms: int = 2_000) -> Path | None:
        """Stop any run, join its thread, keep its log; stop the timers. Returns where a cut-short log went.

        A run stops between steps, so a long step is waited for, however long it takes: after ``first_wait_ms``
        the window says it is finishing the current step and keeps painting while it waits. The thread is always
        joined (a QThread destroyed while it runs aborts the process) and the steps done are always saved."""
        if self._shutdown is not None:
            return None
        self._shutdown = "waiting"
        saved = None
        self.edge_timer.stop()
        session = self.session
        session.join_helpers()
        run = session.run
        if run is not None:
            was_running = session.running
            if not run.join(first_wait_ms):
                self._say(f"Finishing the current step of run #{session.run_key} before closing (a run stops "
                          "between steps); its log will be saved…")
                self.controls.show_speed("finishing the current step…")
                while not run.join(100):
                    QApplication.processEvents()
            result = run.worker.result
            if was_running and result is not None and result.steps_done:
                saved = autosave(result)
                if saved is not None:
                    session.session_files[session.run_key] = str(saved)  # the next launch reads it from there
        self.plot.stop()
        self.device_panel.stop()
        self._shutdown = "done"
        return saved

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self._shutdown == "waiting":  # a second close while the first waits for the step
            event.ignore()
            return
        saved = self.shutdown()
        if saved is not None:
            print(f"the run was still going: its log is saved in {saved}", file=sys.stderr)
        self.save_settings()
        self.save_session()
        self.plot.release()
        event.accept()


def scrolled(widget: QWidget, horizontal: bool = True) -> QScrollArea:
    """``widget`` in a frameless scroll area: a dock that holds it can be smaller than the widget's layout."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    area.setWidget(widget)
    if not horizontal:
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    return area


def autosave_folder() -> Path:
    """Where a run cut short by closing the window is saved (README: "Closing the window during a run")."""
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation) or str(Path.home() / ".gradscope")
    return Path(base) / "autosave"


def autosave(result: RunResult) -> Path | None:
    try:
        return export.autosave(result, autosave_folder())
    except export.ExportError:
        return None


def default_settings() -> QSettings:
    path = os.environ.get("GRADSCOPE_SETTINGS")
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("gradscope", "gradscope")
