"""A learner's own training script, run in a child process (app/script_child.py) and watched: its steps come
through a pipe, its prints through its stdout and stderr. A script that loops for ever, crashes or exits
cannot take the app with it; Stop asks, then terminates, then kills. No Qt here: the headless run and the
app's worker both drive it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import system
from .records import LossLog, RunResult

ROOT = Path(__file__).resolve().parents[1]  # where the child imports app and engine from
DONE, FAILED, STOPPED = "done", "failed", "stopped"
STOP_GRACE_S = 0.3  # Stop: the child stops at its next step; after this it is terminated, then killed
KILL_GRACE_S = 0.5


class ScriptError(ValueError):
    """The script cannot be run: the message says why, in the learner's words (exit 2 headless)."""


def check_script(path: str | os.PathLike) -> Path:
    """The script's path if it is a Python file that compiles; ScriptError otherwise."""
    p = Path(path)
    if not p.exists():
        raise ScriptError(f"{path}: no such file")
    if not p.is_file():
        raise ScriptError(f"{path}: not a file")
    try:
        source = p.read_bytes()
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        compile(source, str(p), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise ScriptError(f"{path} is not a Python program this app can run: {exc.msg}{where}") from None
    except (ValueError, UnicodeDecodeError) as exc:  # NUL bytes, an encoding it does not declare
        raise ScriptError(f"{path} is not a Python program this app can run: {exc}") from None
    return p


class ScriptRun:
    """One run of a script. ``start()``, then ``poll()`` for what it said: ("step", dict), ("out", text),
    ("err", text), ("end", None) once its pipes are closed and it has exited."""

    def __init__(self, path: str | os.PathLike):
        self.path = check_script(path)
        self.log = LossLog()
        self.device = ""
        self.proc: subprocess.Popen | None = None
        self.events: queue.Queue = queue.Queue()
        self.error: dict | None = None
        self.stop_requested = False
        self.stopped = False
        self.exit_code: int | None = None
        self.started_at = ""
        self._ctl = None
        self._ctl_lock = threading.Lock()
        self._early: list[str] | None = []  # words said before the child was started: said when it is
        self.samples: list[dict] = []  # app.dynamics samples of the script's weights
        self.sampling_cost = 0.0
        self._readers: list[threading.Thread] = []
        self._paused = False

    # ------------------------------------------------------------------ starting and reading
    def start(self) -> None:
        ctl_read, ctl_write = os.pipe()
        evt_read, evt_write = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["PYTHONUNBUFFERED"] = "1"
        env.setdefault("PYTHONIOENCODING", "utf-8")
        self.started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app.script_child", str(self.path.resolve()), str(ctl_read), str(evt_write)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(ctl_read, evt_write), cwd=str(self.path.resolve().parent), env=env,
                start_new_session=True)  # its own session: Ctrl+C in the terminal reaches the app, which stops it
        finally:
            os.close(ctl_read)
            os.close(evt_write)
        with self._ctl_lock:
            self._ctl = os.fdopen(ctl_write, "w", encoding="utf-8", buffering=1)
            early, self._early = self._early, None
            for word in early:
                self._ctl.write(word + "\n")
        events = os.fdopen(evt_read, "r", encoding="utf-8")
        for target, args in ((self._read_events, (events,)), (self._read_text, (self.proc.stdout, "out")),
                             (self._read_text, (self.proc.stderr, "err"))):
            thread = threading.Thread(target=target, args=args, name="script-reader", daemon=True)
            thread.start()
            self._readers.append(thread)
        threading.Thread(target=self._reap, name="script-reaper", daemon=True).start()

    def _read_events(self, fh) -> None:
        with fh:
            for line in fh:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                kind = event.get("t")
                if kind == "step":
                    self.events.put(("step", event))
                elif kind == "error":
                    self.error = event
                elif kind == "stopped":
                    self.stopped = True
                elif kind in ("check", "check_failed"):
                    self.events.put(("check", event))
                elif kind in ("inside", "inside_failed"):
                    self.events.put(("inside", event))
                elif kind == "dynamics":
                    self.events.put(("dynamics", event))

    def _read_text(self, fh, kind: str) -> None:
        with fh:
            while True:
                chunk = fh.read1(65536) if hasattr(fh, "read1") else fh.read(65536)
                if not chunk:
                    return
                self.events.put((kind, chunk.decode("utf-8", errors="replace")))

    def _reap(self) -> None:
        code = self.proc.wait()
        for thread in self._readers:  # what is still in the pipes; a process the script started and left
            thread.join(2.0)  # running may hold them open: its output is not waited for
        self.exit_code = code
        self.events.put(("end", None))

    def poll(self, timeout: float = 0.05) -> list:
        """What the script said since the last call (waits up to ``timeout`` for the first item). Steps join the
        log here."""
        items = []
        try:
            items.append(self.events.get(timeout=timeout))
            while True:
                items.append(self.events.get_nowait())
        except queue.Empty:
            pass
        for kind, e in items:
            if kind == "dynamics":  # how the weights move, sampled in the script's process (app.dynamics)
                self.samples.extend(e.get("samples") or [])
                self.sampling_cost = e.get("cost", self.sampling_cost)
        steps = [e for kind, e in items if kind == "step"]
        if steps:
            self.device = steps[-1].get("device", self.device)
            self.log.extend(np.array([e["step"] for e in steps], dtype=np.int64),
                            np.array([e["loss"] for e in steps], dtype=np.float64),
                            np.array([e["time"] for e in steps], dtype=np.float64),
                            np.array([e["ms"] for e in steps], dtype=np.float64))
        return items

    @property
    def finished(self) -> bool:
        return self.exit_code is not None

    # ------------------------------------------------------------------ the app's word
    def _say(self, word: str) -> None:
        with self._ctl_lock:
            if self._ctl is None:
                if self._early is not None:  # not started yet (a Look inside pressed at once)
                    self._early.append(word)
                return
            try:
                self._ctl.write(word + "\n")
            except (BrokenPipeError, ValueError, OSError):  # the child has ended
                pass

    def pause(self) -> None:
        self._paused = True
        self._say("pause")

    def resume(self) -> None:
        self._paused = False
        self._say("resume")

    def step(self) -> None:
        """One more step, then wait (pausing it first)."""
        self._paused = True
        self._say("step")

    def check(self) -> None:
        """Ask for a gradient check at the next step (a paused script takes that one step): ("check", event)."""
        self._say("check")

    def look_inside(self) -> None:
        """Ask for the graph of the script's next step and the profile of the one after (a paused script takes
        those two steps): ("inside", event)."""
        self._say("inside")

    def is_paused(self) -> bool:
        return self._paused and not self.finished

    def stop(self) -> None:
        """Ask the child to stop at its next step; terminate it if it does not within STOP_GRACE_S, then kill it.
        The steps it reported are kept."""
        self.stop_requested = True
        self._say("stop")
        proc = self.proc
        if proc is None:
            return
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        with self._ctl_lock:
            if self._ctl is not None:
                try:
                    self._ctl.close()
                except OSError:
                    pass
                self._ctl = None

    # ------------------------------------------------------------------ the outcome
    def status(self) -> tuple[str, str]:
        """(status, message) once it has ended."""
        n = len(self.log)
        if self.stop_requested:
            return STOPPED, f"stopped after {n} steps"
        if self.error is not None:
            what = f"{self.error.get('kind')}: {self.error.get('message')}"
            if self.error.get("hint"):
                what += f" ({self.error['hint']})"
            if n == 0:
                return FAILED, f"the script raised before its first step: {what}"
            return FAILED, f"the script raised after {n} steps: {what}"
        if self.exit_code not in (0, None):
            return FAILED, f"the script exited with code {self.exit_code} after {n} steps"
        if n == 0:
            return FAILED, ("the script ran to its end without a step: it never called backward() (nor .item()) on "
                            "a one-element tensor, nor printed print(t, loss), so there is nothing to plot")
        return DONE, f"done: {n} steps"

    def result(self) -> RunResult:
        status, message = self.status()
        device = self.device or "cpu"
        wall = float(self.log.elapsed_s[-1]) if len(self.log) else 0.0
        extra = {"script": str(self.path), "device": device}
        if self.samples:
            from .dynamics import BINS, BUDGET

            names = [k for k, v in self.samples[0].items() if isinstance(v, dict)]
            extra["dynamics"] = {"params": names, "bins": BINS, "budget": BUDGET, "cost": self.sampling_cost,
                                 "samples": list(self.samples)}
        return RunResult(None, status, message, self.log, self.started_at, system.device_name(device),
                         system.versions(), wall_s=wall, extra=extra)


def wait_for_end(run: ScriptRun, on_item, timeout: float | None = None) -> None:
    """Drive ``run`` to its end, handing each item to ``on_item`` (the headless run)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        for kind, value in run.poll(0.1):
            if kind == "end":
                run.close()
                return
            on_item(kind, value)
        if deadline is not None and time.monotonic() > deadline:
            run.stop()  # asked, terminated, killed: it ends
            deadline = None
