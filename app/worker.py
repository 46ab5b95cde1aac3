"""The one Qt adapter of ``app``: runs a :class:`~app.runner.Runner` (or a learner's own script,
:class:`~app.script_run.ScriptRun`) in a QThread, and gradient checks off the GUI thread.

Signals (past tense, superqt style) carry host data only: ``yielded`` a :class:`~app.runner.Batch` of
NumPy arrays (at most 20 a second: each delivery wakes the GUI thread, which then holds the GIL the run
needs), ``finished`` the :class:`~app.runner.RunResult`, ``errored`` a text, ``paused``/``resumed``, and
``gradients_checked`` a :class:`~app.gradients.GradientReport` (NumPy arrays and numbers).
No CuPy array ever crosses a signal. A worker selects its CUDA device in its own thread, and the gradient check
of a run is computed in the run's own thread (its device, its grad mode) while the run is parked.
"""

from __future__ import annotations

import threading
import time
import weakref

from PySide6.QtCore import QObject, QThread, Signal, Slot

from . import export
from .config import RunConfig
from .gradients import compare
from .inspect_step import inside
from .runner import Runner
from .script_run import ScriptRun


def _use_device(config: RunConfig) -> None:
    if config.device.startswith("cuda"):
        import engine

        engine.cuda.set_device(config.device)  # per thread: this worker's own device


class RunWorker(QObject):
    started = Signal()
    yielded = Signal(object)  # Batch
    finished = Signal(object)  # RunResult
    errored = Signal(str)
    paused = Signal()
    resumed = Signal()
    gradients_checked = Signal(object)  # GradientReport
    gradients_failed = Signal(str)
    inside_ready = Signal(object)  # app.inspect_step.inside's dict
    inside_failed = Signal(str)

    def __init__(self, config: RunConfig, emit_s: float = 1 / 20, start_paused: bool = False):
        super().__init__()
        self.config = config
        self.emit_s = emit_s
        self.runner = Runner(config, dynamics=True)
        self.result = None
        if start_paused:
            self.runner.pause()

    @Slot()
    def run(self) -> None:
        self.started.emit()
        try:
            _use_device(self.config)
            self.result = self.runner.run(self.yielded.emit, self.emit_s)
        except Exception as exc:  # the runner reports its own failures; this is a last resort
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.finished.emit(self.result)

    # controls, callable from the GUI thread (the runner's flags are thread-safe)
    def pause(self) -> None:
        self.runner.pause()
        self.paused.emit()

    def resume(self) -> None:
        self.runner.resume()
        self.resumed.emit()

    def is_paused(self) -> bool:
        return self.runner.paused

    def steps_done(self) -> int:
        return len(self.runner.log)

    def train_state(self):
        """What the run trains (its weights, on its device), for a check after the run has ended."""
        return self.runner.state

    def check_gradients(self, label: str, forget_relu_mask: bool = False) -> None:
        """Pause the run, then compare its gradients at the current weights in the run's own thread; the report
        arrives through ``gradients_checked`` (or ``gradients_failed``)."""
        config = self.config
        self._when_parked(lambda state, where: compare(config, state, source=f"{where} of {label}",
                                                       forget_relu_mask=forget_relu_mask),
                          self.gradients_checked, self.gradients_failed)

    def look_inside(self, label: str) -> None:
        """Pause the run, then describe and profile one step at its current weights in the run's own thread (on a
        copy: the run's weights do not move); the result arrives through ``inside_ready`` (or ``inside_failed``)."""
        config = self.config
        self._when_parked(lambda state, where: inside(config, state, f"{where} of {label}"),
                          self.inside_ready, self.inside_failed)

    def _when_parked(self, work, done, failed) -> None:
        """Pause, then ``work(state, "step N")`` in the run's own thread (its device, its grad mode) once it waits
        between steps; its value goes to ``done``, a failure's one line to ``failed``, never into the run."""
        if not self.runner.paused:
            self.pause()
        runner = self.runner

        def job():
            try:
                value = work(runner.state, f"step {len(runner.log)}")
            except Exception as exc:  # reported, never raised into the run
                failed.emit(f"{type(exc).__name__}: {exc}")
            else:
                done.emit(value)

        runner.call_when_parked(job)

    def step(self) -> None:
        self.runner.step_once()

    def stop(self) -> None:
        self.runner.stop()


_live: weakref.WeakSet = weakref.WeakSet()


def running_threads() -> list:
    """RunThreads whose QThread is still running (tests fail when one is left behind)."""
    return [t for t in list(_live) if t.is_running()]


class _OwnedThread:
    """A worker (a QObject with a ``run`` slot) moved to a QThread of its own, which quits when the worker's
    ``done_signal`` fires. Listed for :func:`running_threads`."""

    def __init__(self, worker: QObject, name: str, done_signal: str):
        _live.add(self)
        self.thread = QThread()
        self.thread.setObjectName(name)
        self.worker = worker
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.run)
        getattr(worker, done_signal).connect(self.thread.quit)

    def start(self) -> None:
        self.thread.start()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def _quit_and_wait(self, timeout_ms: int) -> bool:
        """Wait for the worker to end, from the GUI thread. The worker's ``done`` reaches ``thread.quit`` through
        the GUI thread's event loop, which a wait blocks: so quit is asked here too (the thread's loop ends as
        soon as the worker's slot returns; a worker still working is not cut short)."""
        self.thread.quit()
        return self.thread.wait(timeout_ms)


class RunThread(_OwnedThread):
    """Owns a :class:`RunWorker` and its QThread; :meth:`join` stops the run and waits for the thread to end."""

    def __init__(self, config: RunConfig, start_paused: bool = False):
        super().__init__(RunWorker(config, start_paused=start_paused), f"run-{config.recipe}", "finished")

    def join(self, timeout_ms: int = 10_000) -> bool:
        self.worker.stop()  # also wakes a paused run: it parks until resumed or stopped
        self.thread.quit()
        return self.thread.wait(timeout_ms)


class GradientCheckWorker(QObject):
    """One gradient check (no run going on: the initial weights, or a finished run's), in a thread of its own."""

    finished = Signal(object)  # GradientReport
    errored = Signal(str)
    done = Signal()

    def __init__(self, config: RunConfig, state, source: str, forget_relu_mask: bool):
        super().__init__()
        self.config, self.state, self.source, self.forget_relu_mask = config, state, source, forget_relu_mask

    @Slot()
    def run(self) -> None:
        try:
            _use_device(self.config)
            report = compare(self.config, self.state, source=self.source, forget_relu_mask=self.forget_relu_mask)
        except Exception as exc:
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.finished.emit(report)
        finally:
            self.state = None
            self.done.emit()


class GradientCheckThread(_OwnedThread):
    """Owns a :class:`GradientCheckWorker` and its QThread; :meth:`join` waits for the check to end."""

    def __init__(self, config: RunConfig, state, source: str, forget_relu_mask: bool = False):
        super().__init__(GradientCheckWorker(config, state, source, forget_relu_mask), "gradient-check", "done")

    def join(self, timeout_ms: int = 60_000) -> bool:
        return self._quit_and_wait(timeout_ms)


class TaskWorker(QObject):
    """One call of ``fn(arg)`` off the GUI thread (an estimate the controls show): ``finished`` with its value, or
    ``errored`` with one line; ``done`` last."""

    finished = Signal(object)
    errored = Signal(str)
    done = Signal()

    def __init__(self, fn, arg):
        super().__init__()
        self.fn, self.arg = fn, arg

    @Slot()
    def run(self) -> None:
        try:
            value = self.fn(self.arg)
        except Exception as exc:
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.finished.emit(value)
        finally:
            self.done.emit()


class TaskThread(_OwnedThread):
    def __init__(self, fn, arg, name: str):
        super().__init__(TaskWorker(fn, arg), name, "done")

    def join(self, timeout_ms: int = 60_000) -> bool:
        return self._quit_and_wait(timeout_ms)


class LogLoadWorker(QObject):
    """Reads a loss log off the GUI thread: ``progressed`` (0..1, at most 10 a second), then ``finished`` (the
    LoadedLog), ``errored`` (one line naming the file) or ``cancelled``; ``done`` last."""

    progressed = Signal(float)
    finished = Signal(object)
    errored = Signal(str)
    cancelled = Signal()
    done = Signal()

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self._cancel = threading.Event()
        self._shown = 0.0

    def cancel(self) -> None:  # from the GUI thread
        self._cancel.set()

    def _progress(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self._shown >= 0.1:
            self._shown = now
            self.progressed.emit(fraction)

    @Slot()
    def run(self) -> None:
        try:
            loaded = export.load(self.path, progress=self._progress, cancelled=self._cancel.is_set)
        except export.LoadCancelled:
            self.cancelled.emit()
        except export.ExportError as exc:
            self.errored.emit(str(exc))
        except Exception as exc:  # never a traceback from a file
            self.errored.emit(f"{self.path}: {type(exc).__name__}: {exc}")
        else:
            self.finished.emit(loaded)
        finally:
            self.done.emit()


class LogLoadThread(_OwnedThread):
    def __init__(self, path: str):
        super().__init__(LogLoadWorker(path), "open-log", "done")

    def join(self, timeout_ms: int = 60_000) -> bool:
        self.worker.cancel()
        return self._quit_and_wait(timeout_ms)


class ScriptWorker(QObject):
    """A learner's own script (app.script_run) watched from a QThread, with RunWorker's signals and controls:
    ``yielded`` Batches of its steps, ``printed`` what it writes (text, True for stderr), ``finished`` the
    RunResult (config None). Pause, Step and Resume act at the script's next step; Stop asks it to stop, then
    terminates and kills it (off the GUI thread)."""

    started = Signal()
    yielded = Signal(object)  # Batch
    printed = Signal(str, bool)  # text, from stderr
    finished = Signal(object)  # RunResult
    errored = Signal(str)
    paused = Signal()
    resumed = Signal()
    gradients_checked = Signal(object)
    gradients_failed = Signal(str)
    inside_ready = Signal(object)  # app.inspect_step.inside()'s payload
    inside_failed = Signal(str)

    def __init__(self, path, emit_s: float = 1 / 20, start_paused: bool = False):
        super().__init__()
        self.script = ScriptRun(path)  # ScriptError for a script that cannot run: raised to the caller
        self.emit_s = emit_s
        self.result = None
        self._start_paused = start_paused
        self._inside_label: str | None = None  # a look asked for and not yet answered

    @Slot()
    def run(self) -> None:
        self.started.emit()
        script = self.script
        try:
            script.start()
            if self._start_paused:
                script.pause()
            sent, last = 0, time.monotonic()
            given = 0  # the weights samples handed on
            ended = False
            while not ended:
                for kind, value in script.poll(0.05):
                    if kind in ("out", "err"):
                        self.printed.emit(value, kind == "err")
                    elif kind == "check":
                        self._report_check(value)
                    elif kind == "inside":
                        self._report_inside(value)
                    elif kind == "end":
                        ended = True
                now = time.monotonic()
                if len(script.log) > sent and (ended or now - last >= self.emit_s):
                    batch = self._batch(sent)
                    if len(script.samples) > given:
                        batch.dynamics = script.samples[given:]
                        given = len(script.samples)
                    self.yielded.emit(batch)
                    sent, last = len(script.log), now
            script.close()
            self.result = script.result()
            if self._inside_label is not None:
                self._inside_label = None
                self.inside_failed.emit("the script ended before the two steps a look inside takes (the graph of "
                                        "one, the profile of the next)")
        except Exception as exc:  # the script's failures are its result; this is a last resort
            self.errored.emit(f"{type(exc).__name__}: {exc}")
        finally:
            self.finished.emit(self.result)

    def _batch(self, start: int):
        from .records import Batch

        log = self.script.log
        return Batch(log.step[start:].copy(), log.loss[start:].copy(), log.elapsed_s[start:].copy(),
                     log.step_ms[start:].copy())

    # controls, callable from the GUI thread
    def pause(self) -> None:
        self.script.pause()
        self.paused.emit()

    def resume(self) -> None:
        self.script.resume()
        self.resumed.emit()

    def step(self) -> None:
        self.script.step()

    def stop(self) -> None:
        threading.Thread(target=self.script.stop, name="script-stop", daemon=True).start()

    def is_paused(self) -> bool:
        return self.script.is_paused()

    def steps_done(self) -> int:
        return len(self.script.log)

    def train_state(self):
        return None  # a script's weights live in its own process

    def check_gradients(self, label: str, forget_relu_mask: bool = False) -> None:
        """Check autograd against finite differences at the script's next step (it records that step's forward
        and replays it in float64; a paused script takes that one step). ``forget_relu_mask`` does not apply:
        a script has no hand-written gradient."""
        self._check_label = label
        self.script.check()

    def _report_check(self, event: dict) -> None:
        if event.get("t") != "check":
            self.gradients_failed.emit(event.get("why", "the check could not be made"))
            return
        from .gradients import script_report

        label = getattr(self, "_check_label", self.script.path.name)
        try:
            report = script_report(event, f"step {event['step']} of {label} (leaves of the loss's graph)")
        except (KeyError, ValueError, TypeError) as exc:
            self.gradients_failed.emit(f"the check's report could not be read: {exc}")
            return
        self.gradients_checked.emit(report)


    def look_inside(self, label: str) -> None:
        """The graph of the script's next step and a profile of the one after, made in its process (a paused
        script takes those two steps); the payload arrives through ``inside_ready`` (or ``inside_failed``)."""
        self._inside_label = label
        self.script.look_inside()

    def _report_inside(self, event: dict) -> None:
        label, self._inside_label = self._inside_label or self.script.path.name, None
        if event.get("t") != "inside":
            self.inside_failed.emit(event.get("why", "the look inside could not be made"))
            return
        first, last = event.get("first"), event.get("last")
        self.inside_ready.emit({"graph": event.get("graph"), "profile": event.get("profile"),
                                "where": f"steps {first} (graph) and {last} (profile) of {label}",
                                "problems": list(event.get("problems") or [])})


class ScriptThread(_OwnedThread):
    def __init__(self, path, start_paused: bool = False):
        super().__init__(ScriptWorker(path, start_paused=start_paused), "script", "finished")

    def join(self, timeout_ms: int = 10_000) -> bool:
        self.worker.script.stop()  # here, not in a thread: the caller waits for the end anyway
        return self._quit_and_wait(timeout_ms)
