"""The window's runs as a model: the run going on (its thread and worker), the finished runs and opened logs with
their names, the gradient checks, log reading and learning-rate estimates off the GUI thread, and the runs kept
between launches. It owns the threads and says what happens through its signals; the window draws it.

Every worker signal reaches a method of this object (never a lambda): a QObject's slot runs in the thread the
object lives in, the GUI thread, so what the signals say is handled where the widgets are.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QTimer, Signal

from app import export
from app.config import RunConfig
from app.inspect_step import inside
from app.records import RunResult
from app.stability import estimate
from app.worker import GradientCheckThread, LogLoadThread, RunThread, ScriptThread, TaskThread


class RunSession(QObject):
    started = Signal(object, object, bool)  # key, RunConfig, paused at the start
    script_started = Signal(object, object)  # key, the script's Path
    printed = Signal(object, str, bool)  # key, what the script wrote, True for its stderr
    batch = Signal(object, object)  # key, app.records.Batch
    paused = Signal(object)  # key
    resumed = Signal(object)  # key
    finished = Signal(object, object)  # key, RunResult (None: the run failed before it began)
    errored = Signal(str)
    gradients_checked = Signal(object)  # GradientReport
    gradients_failed = Signal(str)
    log_loaded = Signal(object, object, object)  # key, export.LoadedLog, the kept run's entry (None: opened)
    log_failed = Signal(str, object)  # why, the kept run's entry (None: opened)
    log_cancelled = Signal()
    edge_estimated = Signal(object, object)  # the settings it depends on, app.stability.Stability or None
    inside_ready = Signal(object)  # app.inspect_step.inside's dict: a step's graph and profile
    inside_failed = Signal(str)

    def __init__(self, folder: Path, parent=None):
        super().__init__(parent)
        self.folder = folder  # where finished runs are kept for the next launch
        self.run: RunThread | None = None
        self.run_key = None
        self.run_count = 0  # runs started (their keys and names, "#3"), past the numbers the last session's had
        self.file_count = 0  # logs read (their keys, "file-2")
        self.results: dict = {}  # key -> RunResult or export.LoadedLog
        self.names: dict = {}  # key -> the name the runs list and legend show ("#3", or what the user chose)
        self.descriptions: dict = {}  # key -> (joiner, what the run is): its label is name + joiner + that
        self.session_files: dict = {}  # key -> the file its log is kept in between launches
        self.state_source = None  # (config, run worker) whose weights "Check now" reads
        self.check_thread: GradientCheckThread | None = None  # a check with no run going on
        self.load_thread: LogLoadThread | None = None  # a log being read
        self.restoring: list = []  # the last session's runs still to be read back (one at a time)
        self.edges: dict = {}  # the settings that decide the divergence edge -> Stability (None: none applies)
        self.edge_thread: TaskThread | None = None
        self.inside_thread: TaskThread | None = None  # a look inside a step with no run going on

    # ------------------------------------------------------------------ the run
    @property
    def running(self) -> bool:
        return self.run is not None and self.run.is_running()

    def is_paused(self) -> bool:
        return self.running and self.run.worker.is_paused()

    def start(self, config: RunConfig, paused: bool = False) -> int | None:
        """Start a run in its own thread; its key, or None while another runs."""
        if self.running:
            return None
        self.run_count += 1
        key = self.run_key = self.run_count
        self.names[key] = f"#{key}"
        self.descriptions[key] = (" ", config.short_label())
        self.run = self._adopt(RunThread(config, start_paused=paused))
        self.state_source = (config, self.run.worker)
        self.started.emit(key, config, paused)
        self.run.start()
        return key

    def start_script(self, path) -> int | None:
        """Run a learner's own script in a child process, watched from a thread (app.script_run); its key, or None
        while another run goes on. ScriptError (a message for the learner) for a script that cannot run."""
        if self.running:
            return None
        thread = ScriptThread(path)  # checks the script first
        self.run_count += 1
        key = self.run_key = self.run_count
        script = thread.worker.script.path
        self.names[key] = script.name
        self.descriptions[key] = (" ", "(your script)")
        self.run = self._adopt(thread)
        thread.worker.printed.connect(self._on_printed)
        self.state_source = None  # its weights live in its own process
        self.script_started.emit(key, script)
        thread.start()
        return key

    def _adopt(self, thread):
        """What every run's worker (a recipe's or a script's) says, to this session's slots and signals."""
        worker = thread.worker
        worker.yielded.connect(self._on_run_batch)
        worker.finished.connect(self._on_run_finished)
        worker.errored.connect(self.errored)
        worker.paused.connect(self._on_run_paused)
        worker.resumed.connect(self._on_run_resumed)
        worker.gradients_checked.connect(self.gradients_checked)
        worker.gradients_failed.connect(self.gradients_failed)
        worker.inside_ready.connect(self.inside_ready)
        worker.inside_failed.connect(self.inside_failed)
        return thread

    def _on_printed(self, text: str, from_stderr: bool) -> None:
        self.printed.emit(self.run_key, text, from_stderr)

    def running_script(self) -> bool:
        return self.running and isinstance(self.run, ScriptThread)

    def toggle_pause(self) -> None:
        if not self.running:
            return
        worker = self.run.worker
        if worker.is_paused():
            worker.resume()
        else:
            worker.pause()

    def step(self) -> None:
        """One step of the run going on (pausing it first)."""
        if self.running:
            worker = self.run.worker
            if not worker.is_paused():
                worker.pause()
            worker.step()

    def stop(self) -> bool:
        if self.running:
            self.run.worker.stop()  # a paused run wakes and stops
            return True
        return False

    def reset(self):
        """Stop the run going on (its log is kept) and forget its weights; the key of the run stopped, or None."""
        stopped = self.run_key if self.running else None
        if stopped is not None:
            self.run.join()
        self.state_source = None
        return stopped

    def train_state(self):
        """(config, state, where) of the last run's weights that a check can read, or None."""
        source = self.state_source
        if source is not None and source[1].train_state() is not None:
            config, worker = source
            return config, worker.train_state(), f"step {worker.steps_done()} of run #{self.run_key}"
        return None

    def _weights_or(self, config: RunConfig | None) -> tuple:
        """(config, state, where) for work with no run going on: the last run's weights, else ``config``'s
        initial ones (state None)."""
        source = self.train_state()
        return source if source is not None else (config, None, "the initial weights")

    def _on_run_batch(self, batch) -> None:
        self.batch.emit(self.run_key, batch)

    def _on_run_paused(self) -> None:
        self.paused.emit(self.run_key)

    def _on_run_resumed(self) -> None:
        self.resumed.emit(self.run_key)

    def _on_run_finished(self, result: RunResult | None) -> None:
        if self.run is not None:
            self.run.thread.wait(5000)
        if result is not None:
            self.results[self.run_key] = result
        self.finished.emit(self.run_key, result)

    # ------------------------------------------------------------------ gradients
    def check_gradients(self, config: RunConfig | None, forget_relu_mask: bool) -> str | None:
        """Compare the gradients off the GUI thread: in the run's own thread when one is going on (it pauses), else
        at the last run's weights, else at ``config``'s initial weights. Returns where, or None while a check is
        still running."""
        if self.running:
            where = f"run #{self.run_key}"
            self.run.worker.check_gradients(where, forget_relu_mask)
            return f"run #{self.run_key}'s current weights (the run pauses)"
        if self.check_thread is not None and self.check_thread.is_running():
            return None
        config, state, where = self._weights_or(config)
        self.check_thread = GradientCheckThread(config, state, where, forget_relu_mask)
        self.check_thread.worker.finished.connect(self.gradients_checked)
        self.check_thread.worker.errored.connect(self.gradients_failed)
        self.check_thread.start()
        return where

    # ------------------------------------------------------------------ logs
    def reader_busy(self) -> bool:
        """Whether a log is being read. A reader that has reported (its thread is just ending) is waited for."""
        reader = self.load_thread
        if reader is None or not reader.is_running():
            return False
        return not (getattr(reader, "reported", False) and reader.join(2000))

    def open_log(self, path: str, entry: dict | None = None) -> LogLoadThread | None:
        """Read a log in a thread (``entry``: a run the last session kept); None while another is being read."""
        if self.reader_busy():
            return None
        self.load_thread = LogLoadThread(str(path))
        self.load_thread.session_entry = entry
        worker = self.load_thread.worker
        worker.finished.connect(self._on_log_loaded)
        worker.errored.connect(self._on_log_failed)
        worker.cancelled.connect(self._on_log_cancelled)
        self.load_thread.start()
        return self.load_thread

    def _on_log_loaded(self, loaded) -> None:
        self.load_thread.reported = True
        entry = self.load_thread.session_entry
        self.file_count += 1
        key = f"file-{self.file_count}"
        self.results[key] = loaded
        self.names[key] = entry["name"] if entry else Path(loaded.path).name
        problem = loaded.meta.get("settings_problem")
        self.descriptions[key] = (" " if entry else ": ", loaded.config.short_label() if loaded.config else
                                  "(its settings are not usable)" if problem else "(no settings recorded)")
        if entry and entry.get("session_file"):
            self.session_files[key] = loaded.path
        self.log_loaded.emit(key, loaded, entry)
        if entry:
            self._restore_next()

    def _on_log_failed(self, text: str) -> None:
        self.load_thread.reported = True
        entry = self.load_thread.session_entry
        self.log_failed.emit(text, entry)
        if entry:
            self._restore_next()

    def _on_log_cancelled(self) -> None:
        self.load_thread.reported = True
        self.restoring.clear()
        self.log_cancelled.emit()

    # ------------------------------------------------------------------ names and deleting
    def label(self, key) -> str:
        joiner, description = self.descriptions[key]
        return f"{self.names[key]}{joiner}{description}"

    def rename(self, key, name: str) -> bool:
        name = name.strip()
        if not name or key not in self.names:
            return False
        self.names[key] = name
        return True

    def file_stem(self, key) -> str:
        """A file name for the run's log: its name, with what file systems refuse taken out ("#2": run-2)."""
        name = self.names.get(key, str(key))
        stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in name).strip("-.") or "run"
        stem = Path(stem).stem if stem.lower().endswith((".csv", ".json")) else stem
        return f"run-{stem}" if name.startswith("#") else stem

    def delete(self, key) -> bool:
        """Forget a run (not the one running); its kept file goes with it, exported files stay."""
        if key == self.run_key and self.running:
            return False
        self.results.pop(key, None)
        self.names.pop(key, None)
        self.descriptions.pop(key, None)
        kept = self.session_files.pop(key, None)
        if kept is not None:
            try:
                Path(kept).unlink()
            except OSError:
                pass
        if key == self.run_key:
            self.state_source = None  # Check now no longer reads a deleted run's weights
        return True

    # ------------------------------------------------------------------ kept between launches
    def save(self, settings: QSettings, keys, look) -> None:
        """Keep the runs ``keys`` (in the list's order) for the next launch: each finished run's log is written
        once to the folder, opened logs are remembered by their path; ``look(key)`` gives (colour, shown)."""
        entries = []
        for key in keys:
            result = self.results.get(key)
            if result is None and key == self.run_key and self.run is not None and not self.running:
                result = self.run.worker.result  # the run the window's closing stopped (its end not yet shown)
            if result is None:
                continue
            path = self.session_files.get(key)
            if path is None and isinstance(result, RunResult):
                try:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    path = str(export.export(result, self.folder / f"{uuid.uuid4().hex}.json"))
                except (OSError, export.ExportError):
                    continue  # a full disk: this run is not kept; the others still are
                self.session_files[key] = path
            color, shown = look(key)
            entries.append({"path": path or result.path, "session_file": key in self.session_files,
                            "name": self.names[key], "color": color, "visible": shown})
        settings.setValue("session/runs", json.dumps(entries))

    def restore(self, settings: QSettings, valid_color) -> int:
        """Read back the runs the last session kept, one at a time; how many are on their way."""
        try:
            entries = json.loads(str(settings.value("session/runs", "[]")))
        except ValueError:
            entries = []
        if not isinstance(entries, list):
            entries = []
        self.restoring = [e for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)
                          and isinstance(e.get("name"), str) and valid_color(str(e.get("color")))]
        count = len(self.restoring)
        # a run started now, before they are all back, or later, is numbered past them (two runs called "#5",
        # in one colour, otherwise)
        numbers = [int(e["name"][1:]) for e in self.restoring
                   if e["name"][:1] == "#" and e["name"][1:].isdigit() and len(e["name"]) < 12]
        self.run_count = max([self.run_count, *numbers])
        self._restore_next()
        return count

    def colors_coming(self) -> set:
        """The colours of the last session's runs still being read back: a new curve takes none of them."""
        coming = {e["color"] for e in self.restoring}
        reader = self.load_thread
        entry = getattr(reader, "session_entry", None) if reader is not None and reader.is_running() else None
        if entry:
            coming.add(entry["color"])
        return coming

    def _restore_next(self) -> None:
        if not self.restoring:
            return
        if self.reader_busy():
            QTimer.singleShot(50, self._restore_next)  # the user's log is being read; try again in a moment
            return
        self.open_log(self.restoring[0]["path"], self.restoring.pop(0))

    # ------------------------------------------------------------------ the learning rate's edge
    @staticmethod
    def edge_key(config: RunConfig) -> tuple:
        """What the edge depends on (not the rate itself, the dtype, the device or the iterations)."""
        return (config.recipe, config.batch, config.d_in, config.hidden, config.d_out, config.points, config.seed)

    def edge(self, config: RunConfig):
        """The divergence edge for ``config`` when known: (True, Stability or None); else (False, None), and it
        is estimated in a thread (seconds at large sizes), once per recipe, sizes and seed (edge_estimated)."""
        key = self.edge_key(config)
        if key in self.edges:
            return True, self.edges[key]
        if self.edge_thread is None or not self.edge_thread.is_running():
            self.edge_thread = TaskThread(estimate, config, "lr-edge")
            self.edge_thread.key = key
            self.edge_thread.worker.finished.connect(self._on_edge)
            self.edge_thread.worker.errored.connect(self._on_edge_failed)
            self.edge_thread.start()
        return False, None

    def _on_edge(self, edge) -> None:
        key = self.edge_thread.key
        self.edges[key] = edge
        self.edge_estimated.emit(key, edge)

    def _on_edge_failed(self, text: str) -> None:
        self._on_edge(None)  # no warning rather than a wrong one; the run itself reports what goes wrong

    # ------------------------------------------------------------------ inside the step
    def look_inside(self, config: RunConfig | None) -> str | None:
        """Describe and profile one step off the GUI thread: in the run's own thread when one is going on (it
        pauses), else at the last run's weights, else at ``config``'s initial weights. Returns where, or None when
        it cannot (a look still running). A script's run is looked at in its own process, at its next two steps."""
        if self.running:
            self.run.worker.look_inside(f"run #{self.run_key}")
            if isinstance(self.run, ScriptThread):  # in the script's process, at its next two steps
                return f"run #{self.run_key}'s next two steps (your script takes them, paused or not)"
            return f"run #{self.run_key}'s current weights (the run pauses)"
        if self.inside_thread is not None and self.inside_thread.is_running():
            return None
        config, state, where = self._weights_or(config)
        if config is None:
            return None
        self.inside_thread = TaskThread(lambda arg: inside(*arg), (config, state, where), "inside")
        self.inside_thread.worker.finished.connect(self.inside_ready)
        self.inside_thread.worker.errored.connect(self.inside_failed)
        self.inside_thread.start()
        return where

    # ------------------------------------------------------------------ closing
    def join_helpers(self) -> None:
        """Wait for the estimate, check and log reader (a reader is cancelled)."""
        for thread in (self.edge_thread, self.check_thread, self.load_thread, self.inside_thread):
            if thread is not None:
                thread.join()
