"""Run controls: recipe, device, dtype, sizes, learning rate, iterations, seed; Start/Pause/Step/Stop/Reset."""

from __future__ import annotations

import html
import math
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.config import MAX_ITERS, MAX_POINTS, MAX_SIZE, ConfigError, RunConfig, format_bytes, format_rate
from app.devices import device_choices
from app.recipes import TABLE

ERROR_STYLE = "color: #c62828;"


class Controls(QWidget):
    """Emits ``start_requested`` etc.; :meth:`config` gives the validated RunConfig (or None with a message)."""

    start_requested = Signal()
    pause_requested = Signal()
    step_requested = Signal()
    stop_requested = Signal()
    reset_requested = Signal()
    config_changed = Signal()
    recipes_requested = Signal()  # "Back to the recipes", from a script's box

    def __init__(self, parent=None):
        super().__init__(parent)
        self.problem: ConfigError | None = None  # what RunConfig says is wrong with the settings, if anything
        self._state = "idle"
        self.script_mode = False  # a script's box stands where the recipe's settings are

        self.recipe = QComboBox()
        family = None
        for name, info in TABLE.items():
            if family is not None and info.family != family:
                self.recipe.insertSeparator(self.recipe.count())  # the two-layer net, then the fit of sin(x)
            family = info.family
            self.recipe.addItem(info.title, name)
            self.recipe.setItemData(self.recipe.count() - 1, info.description, Qt.ToolTipRole)
        self.recipe_help = QLabel()
        self.recipe_help.setWordWrap(True)
        self.recipe_help.setStyleSheet("color: #555;")

        self.device = QComboBox()
        self._fill_devices()
        self.dtype = QComboBox()
        self.dtype.addItems(["float32", "float64"])
        self.cuda_graph = QCheckBox("Capture the step as a CUDA graph")
        self.cuda_graph.setToolTip(
            "GPU: after 3 warm-up steps the step is captured once and replayed with one launch per step "
            "(for tensor, autograd, function and nn)")

        self.batch = self._spin(1, MAX_SIZE, 64, "Batch size N: rows of x and y")
        self.d_in = self._spin(1, MAX_SIZE, 1000, "D_in: input dimension (columns of x)")
        self.hidden = self._spin(1, MAX_SIZE, 100, "H: hidden dimension")
        self.d_out = self._spin(1, MAX_SIZE, 10, "D_out: output dimension (columns of y)")
        self.points = self._spin(2, MAX_POINTS, 2000, "Points of linspace(-pi, pi) where sin(x) is fitted")
        self.memory = QLabel()
        self.memory.setWordWrap(True)

        self.lr = QLineEdit("1e-6")
        self.lr.setToolTip("Learning rate, e.g. 1e-6 (the tutorial's) or 0.0001")
        self.lr_error = QLabel()
        self.lr_error.setStyleSheet(ERROR_STYLE)
        self.lr_error.setWordWrap(True)
        self.lr_error.hide()
        self.lr_advice = QLabel()  # a rate likely to diverge at these settings, and one that works
        self.lr_advice.setStyleSheet("color: #8a4b00;")
        self.lr_advice.setWordWrap(True)
        self.lr_advice.hide()
        self.lr_advice.setTextFormat(Qt.RichText)
        self.lr_advice.linkActivated.connect(self.lr.setText)
        self.iters = self._spin(1, MAX_ITERS, 500, "Iterations (training steps)")
        self.seed = self._spin(0, 2**31 - 1, 0, "Seed of x, y and the initial weights: same seed, same start")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.addRow("Recipe", self.recipe)
        form.addRow("", self.recipe_help)
        form.addRow("Device", self.device)
        form.addRow("Dtype", self.dtype)
        form.addRow("", self.cuda_graph)
        sizes = QGridLayout()
        sizes.setHorizontalSpacing(6)
        self._net_sizes = []  # the two-layer net's sizes; the fit of sin(x) shows its points instead
        for i, (label, spin) in enumerate((("N", self.batch), ("D_in", self.d_in), ("H", self.hidden),
                                           ("D_out", self.d_out))):
            row, col = divmod(i, 2)
            text = QLabel(label)
            sizes.addWidget(text, row, 2 * col)
            sizes.addWidget(spin, row, 2 * col + 1)
            spin.setMinimumWidth(70)
            self._net_sizes += [text, spin]
        self._points_label = QLabel("Points")
        sizes.addWidget(self._points_label, 2, 0)
        sizes.addWidget(self.points, 2, 1, 1, 3)
        form.addRow("Sizes", sizes)
        form.addRow("", self.memory)
        form.addRow("Learning rate", self.lr)
        form.addRow("", self.lr_error)
        form.addRow("", self.lr_advice)
        form.addRow("Iterations", self.iters)
        form.addRow("Seed", self.seed)
        settings_box = QGroupBox("Run settings")
        settings_box.setLayout(form)
        self.settings_box = settings_box

        # a script's run: the script chose its own settings, so they are not a recipe's to show
        self.script_name = QLabel()
        self.script_name.setStyleSheet("font-weight: bold;")
        self.script_path = QLabel()
        self.script_path.setWordWrap(True)
        self.script_path.setStyleSheet("color: #555;")
        self.script_path.setTextInteractionFlags(Qt.TextSelectableByMouse)
        script_note = QLabel("The script chooses its own device, model, learning rate and number of steps: each "
                             "backward() is a step on the plot, what it prints is in the Console. Start runs it "
                             "again.")
        script_note.setWordWrap(True)
        self.back_button = QPushButton("Back to the recipes")
        self.back_button.setToolTip("Show the recipe's settings again, to start a recipe's run")
        self.back_button.clicked.connect(self.recipes_requested)
        script_layout = QVBoxLayout()
        for w in (self.script_name, self.script_path, script_note, self.back_button):
            script_layout.addWidget(w)
        self.script_box = QGroupBox("Your script")
        self.script_box.setLayout(script_layout)
        self.script_box.hide()

        self.start_button = QPushButton("Start")
        self.start_button.setToolTip("Start a run (Ctrl+R)")
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Pause or resume (Space)")
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("One training step (pauses first)")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the run, keeping its log (Esc)")
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Stop, and go back to the initial weights for the next start")
        buttons = QGridLayout()
        buttons.addWidget(self.start_button, 0, 0, 1, 2)
        buttons.addWidget(self.pause_button, 0, 2, 1, 2)
        buttons.addWidget(self.step_button, 1, 0)
        buttons.addWidget(self.stop_button, 1, 1, 1, 2)
        buttons.addWidget(self.reset_button, 1, 3)
        self.start_button.setDefault(True)

        self.progress = QProgressBar()
        self.progress.setRange(0, 500)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m")
        self.speed = QLabel("Ready")
        self.speed.setStyleSheet("color: #444;")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.hide()

        layout = QVBoxLayout(self)
        layout.addWidget(settings_box)
        layout.addWidget(self.script_box)
        layout.addLayout(buttons)
        self.recipe.setMinimumContentsLength(14)
        self.device.setMinimumContentsLength(14)
        for combo in (self.recipe, self.device):
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        layout.addWidget(self.progress)
        layout.addWidget(self.speed)
        layout.addWidget(self.message)
        layout.addStretch(1)

        self.recipe.currentIndexChanged.connect(self._on_recipe_changed)
        for w in (self.device, self.dtype):
            w.currentIndexChanged.connect(self._on_changed)
        self.cuda_graph.toggled.connect(self._on_changed)
        for w in (self.batch, self.d_in, self.hidden, self.d_out, self.points, self.iters, self.seed):
            w.valueChanged.connect(self._on_changed)
        self.lr.textChanged.connect(self._on_changed)
        self.start_button.clicked.connect(self.start_requested)
        self.pause_button.clicked.connect(self.pause_requested)
        self.step_button.clicked.connect(self.step_requested)
        self.stop_button.clicked.connect(self.stop_requested)
        self.reset_button.clicked.connect(self.reset_requested)
        self._on_recipe_changed()
        self.set_run_state("idle")

    # ------------------------------------------------------------------ building
    @staticmethod
    def _spin(lo, hi, value, tip) -> QSpinBox:
        s = QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        s.setToolTip(tip)
        s.setGroupSeparatorShown(False)
        s.setKeyboardTracking(False)
        return s

    def _fill_devices(self) -> None:
        self.device.clear()
        model: QStandardItemModel = self.device.model()
        for value, label, enabled, tip in device_choices():
            self.device.addItem(label, value)
            item = model.item(self.device.count() - 1)
            item.setEnabled(enabled)
            item.setToolTip(tip if enabled else f"Not available: {tip}")

    # ------------------------------------------------------------------ values
    def lr_value(self) -> float | None:
        text = self.lr.text().strip()
        try:
            value = float(text)
        except ValueError:
            return None
        return value

    def raw_config(self) -> RunConfig:
        lr = self.lr_value()
        return RunConfig(
            recipe=self.recipe.currentData(),
            device=self.device.currentData(),
            dtype=self.dtype.currentText(),
            batch=self.batch.value(),
            d_in=self.d_in.value(),
            hidden=self.hidden.value(),
            d_out=self.d_out.value(),
            points=self.points.value(),
            lr=lr if lr is not None else math.nan,
            iters=self.iters.value(),
            seed=self.seed.value(),
            cuda_graph=self.cuda_graph.isChecked() and self._graph_possible(),
        )

    def _graph_possible(self) -> bool:
        return str(self.device.currentData()).startswith("cuda") and TABLE[self.recipe.currentData()].capturable

    def _lr_text_error(self) -> ConfigError | None:
        """Text that is not a number at all: the one check that belongs to the control (RunConfig gets floats)."""
        if self.lr_value() is None:
            return ConfigError("lr", f"{self.lr.text().strip()!r} is not a number; write it like 1e-6 or 0.0001")
        return None

    def config(self) -> tuple[RunConfig | None, str]:
        """The validated config, or (None, message naming the problem in the controls' words)."""
        try:
            problem = self._lr_text_error()
            if problem is not None:
                raise problem
            return self.raw_config().validated(), ""
        except ConfigError as exc:
            return None, user_words(exc)

    def set_config(self, config: RunConfig) -> None:
        """Preset the controls (from the command line or the last session)."""
        self.show_recipes()
        index = self.recipe.findData(config.recipe)
        if index >= 0:
            self.recipe.setCurrentIndex(index)
        wanted = config.device
        index = self.device.findData(wanted)
        if index < 0 and wanted == "cuda":
            index = self.device.findData("cuda:0")
        if index >= 0 and self.device.model().item(index).isEnabled():
            self.device.setCurrentIndex(index)
        else:
            self.device.setCurrentIndex(0)
        self.dtype.setCurrentText(config.dtype)
        for spin, value in ((self.batch, config.batch), (self.d_in, config.d_in), (self.hidden, config.hidden),
                            (self.d_out, config.d_out), (self.points, config.points), (self.iters, config.iters),
                            (self.seed, config.seed)):
            spin.setValue(int(min(max(value, spin.minimum()), spin.maximum())))
        self.lr.setText(f"{config.lr:g}")
        self.cuda_graph.setChecked(config.cuda_graph)
        self._on_changed()

    def show_script(self, path: str) -> None:
        """The script's box where the recipe's settings were (the run under way is the script's, not theirs)."""
        self.script_name.setText(os.path.basename(path))
        self.script_path.setText(os.path.dirname(os.path.abspath(path)))
        self.script_path.setToolTip(os.path.abspath(path))
        self.script_mode = True
        self.settings_box.hide()
        self.script_box.show()
        self.set_run_state(self._state)

    def show_recipes(self) -> None:
        """The recipe's settings again, for a recipe's run."""
        if not self.script_mode:
            return
        self.script_mode = False
        self.script_box.hide()
        self.settings_box.show()
        self.set_run_state(self._state)
        self.speed.setText("Ready")

    def requested_device_missing(self, config: RunConfig) -> bool:
        return self.device.currentData() != config.device and not (
            config.device == "cuda" and self.device.currentData() == "cuda:0")

    # ------------------------------------------------------------------ state
    def set_run_state(self, state: str) -> None:
        """idle | running | paused: which buttons make sense, and whether settings may change."""
        self._state = state
        active = state in ("running", "paused")
        script = self.script_mode
        self.start_button.setEnabled(not active and (script or self._valid()))
        self.start_button.setText("Run it again" if script else "Start")
        self.start_button.setToolTip("Run the script again (Ctrl+R)" if script else "Start a run (Ctrl+R)")
        self.pause_button.setEnabled(active)
        self.pause_button.setText("Resume" if state == "paused" else "Pause")
        # a script starts from its first line: Step and Reset act on a script only while it runs
        self.step_button.setEnabled(state != "running" and (active or (not script and self._valid())))
        self.reset_button.setEnabled(active or not script)
        self.back_button.setEnabled(not active)
        self.stop_button.setEnabled(active)
        for w in (self.recipe, self.device, self.dtype, self.batch, self.d_in, self.hidden, self.d_out, self.points,
                  self.lr, self.iters, self.seed):
            w.setEnabled(not active)
        self.cuda_graph.setEnabled(not active and self._graph_possible())

    def _valid(self) -> bool:
        return self.problem is None

    def show_progress(self, done: int, total: int, steps_per_s: float, finished: str = "",
                      paused: bool = False) -> None:
        """The count, and the speed over the time spent stepping (a pause adds none), with the time left; while
        paused, "Paused" and the speed the run had."""
        self.progress.setFormat("%v / %m")
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        if paused:
            rate = f" · {format_rate(steps_per_s)} steps/s while running" if steps_per_s > 0 and \
                math.isfinite(steps_per_s) else ""
            self.speed.setText(f"Paused{rate}")
        elif finished:
            rate = f" · {format_rate(steps_per_s)} steps/s" if steps_per_s > 0 and math.isfinite(steps_per_s) else ""
            self.speed.setText(f"{finished.capitalize()}{rate}")
        elif steps_per_s > 0 and math.isfinite(steps_per_s):
            left = (total - done) / steps_per_s
            self.speed.setText(f"{format_rate(steps_per_s)} steps/s · {format_duration(left)} left")
        else:
            self.speed.setText("starting…")

    def show_script_progress(self, done: int, steps_per_s: float, finished: str = "", paused: bool = False) -> None:
        """A script's steps: it says no total, so the bar counts them ("412 steps") and the line says the speed."""
        self.progress.setFormat("%v steps")
        self.progress.setRange(0, max(done, 1))
        self.progress.setValue(done)
        rate = f"{format_rate(steps_per_s)} steps/s" if steps_per_s > 0 and math.isfinite(steps_per_s) else ""
        if paused:
            self.speed.setText("Paused (at the script's next step)" + (f" · {rate} while running" if rate else ""))
        elif finished:  # the settings above are a recipe's: say whose run this line is about
            self.speed.setText(f"Your script: {finished}" + (f" · {rate}" if rate else ""))
        else:
            self.speed.setText(f"your script · {rate}" if rate else "your script: waiting for its first step…")

    def show_message(self, text: str, error: bool) -> None:
        """The line under the buttons: what a run says (shown in red when it is a problem; hidden otherwise)."""
        self.message.setText(text)
        self.message.setVisible(bool(text) and error)

    def show_speed(self, text: str) -> None:
        self.speed.setText(text)

    def show_paused(self) -> None:
        self.speed.setText("Paused")

    def show_ready(self) -> None:
        """Nothing run yet (or after Reset): the planned iterations, an empty bar."""
        self.show_progress(0, self.iters.value(), 0)
        self.speed.setText("Ready")

    def recipe_name(self) -> str:
        return self.recipe.currentData()

    def insert_in_lr(self, text: str) -> None:
        self.lr.insert(text)

    def show_lr_advice(self, text: str, suggested: float | None = None) -> None:
        """The divergence warning under the learning rate ("" hides it), with a link that puts the suggested
        rate in the box."""
        if text and suggested is not None:
            text = html.escape(text, quote=False) + f' <a href="{suggested:g}">Use {suggested:g}</a>'
        self.lr_advice.setText(text)
        self.lr_advice.setVisible(bool(text))

    # ------------------------------------------------------------------ slots
    def _on_recipe_changed(self) -> None:
        name = self.recipe.currentData()
        recipe = TABLE[name]
        self.recipe_help.setText(recipe.description)
        # moving between recipes brings the tutorial's learning rate and iterations, unless the user chose others
        current = self.lr_value()
        if current in {r.default_lr for r in TABLE.values()}:
            self.lr.setText(f"{recipe.default_lr:g}")
        if self.iters.value() in {r.default_iters for r in TABLE.values()}:
            self.iters.setValue(recipe.default_iters)
        poly = recipe.family == "poly"
        for w in self._net_sizes:
            w.setVisible(not poly)
        self._points_label.setVisible(poly)
        self.points.setVisible(poly)
        numpy_only = recipe.cpu_only
        if numpy_only and self.device.currentData() != "cpu":
            self.device.setCurrentIndex(0)
        self.device.setEnabled(not numpy_only and self._state == "idle")
        self._on_changed()

    def _on_changed(self, *_) -> None:
        """Ask RunConfig (the one place the rules live) and mark the field its error names."""
        self.cuda_graph.setEnabled(self._state == "idle" and self._graph_possible())
        cfg = self.raw_config()
        self.problem = self._lr_text_error()
        if self.problem is None:
            try:
                cfg.validated(check_device=False)  # the device list offers only usable devices
            except ConfigError as exc:
                self.problem = exc
        field = self.problem.field if self.problem is not None else None
        lr_bad = field == "lr"
        self.lr_error.setVisible(lr_bad)
        self.lr_error.setText(f"Learning rate refused: {str(self.problem).split(': ', 1)[1]}" if lr_bad else "")
        self.lr.setStyleSheet("border: 1px solid #c62828;" if lr_bad else "")
        need, free = cfg.memory_need_and_free()
        where = "GPU" if cfg.device.startswith("cuda") else "RAM"
        if field in ("sizes", "batch", "d_in", "hidden", "d_out", "points", "iters", "seed", "device", "cuda_graph",
                     "recipe", "dtype"):
            self.memory.setText(user_words(self.problem))
            self.memory.setStyleSheet(ERROR_STYLE + " font-weight: bold;")
        elif free is None:
            self.memory.setText(f"Needs about {format_bytes(need)}")
            self.memory.setStyleSheet("color: #555;")
        else:
            self.memory.setText(f"Needs about {format_bytes(need)} of {format_bytes(free)} free {where}")
            self.memory.setStyleSheet("color: #555;")
        if self._state == "idle" and self.progress.value() == 0:  # nothing run since the last reset: show the plan
            self.progress.setRange(0, cfg.iters)
        self.set_run_state(self._state)
        self.config_changed.emit()


# what the controls call the settings RunConfig's errors name
FIELD_LABELS = {"recipe": "Recipe", "device": "Device", "dtype": "Dtype", "cuda_graph": "CUDA graph", "sizes": "Sizes",
                "batch": "N", "d_in": "D_in", "hidden": "H", "d_out": "D_out", "points": "Points",
                "lr": "Learning rate", "iters": "Iterations", "seed": "Seed"}


def user_words(problem: ConfigError) -> str:
    """A settings problem in the controls' words: "N: must be between 1 and ...", not "batch: ..."."""
    text = str(problem).split(": ", 1)[1] if ": " in str(problem) else str(problem)
    return f"{FIELD_LABELS.get(problem.field, problem.field)}: {text}"


def format_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {s:02d} s"
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m:02d} min"
