"""The child process that runs a learner's own training script (``python -m app.script_child SCRIPT CTL EVT``).

Inside it ``torch`` is the engine (``import torch`` and ``import engine as torch`` both work). Each
``backward()`` on a one-element tensor is a step: its value, the time and the device go to the app as one JSON
line on the events pipe (file descriptor EVT). A script that calls no ``backward()`` (the tutorial's
hand-written backprop) is stepped by its ``.item()`` calls on one-element tensors instead (it prints
``loss.item()`` once a step); from the first ``backward()`` on, only ``backward()`` counts. A script that uses
no tensor at all (the tutorial's NumPy warm-up) is stepped by its ``print(t, loss)`` lines: a print to stdout
of exactly a whole number and a real one (the iteration and the loss), until the first ``.item()`` or
``backward()``.

At each step the child obeys the app's word, read from the control pipe (CTL) by a thread: ``pause`` (wait at
the next step), ``step`` (one more step, then wait), ``resume``, ``stop``. The script's own prints go to the
child's stdout and stderr, which the app reads as they come (the console pane). Nothing here imports Qt.
"""

from __future__ import annotations

import builtins
import collections
import json
import numbers
import os
import runpy
import sys
import threading
import time
import traceback
import types


class Control:
    """The app's word, as the reading thread last heard it."""

    def __init__(self, fd: int):
        self.cond = threading.Condition()
        self.paused = False
        self.allowed = 0  # steps allowed while paused (Step)
        self.stopping = False
        self.check_wanted = False  # the app asked for a gradient check: tape the next step
        self.inside_wanted = False  # the app asked to look inside: describe the next step, profile the one after
        self._fd = fd
        threading.Thread(target=self._read, name="script-control", daemon=True).start()

    def _read(self) -> None:
        with os.fdopen(self._fd, "r", encoding="utf-8") as fh:
            for line in fh:
                word = line.strip()
                with self.cond:
                    if word == "pause":
                        self.paused = True
                    elif word == "resume":
                        self.paused, self.allowed = False, 0
                    elif word == "step":
                        self.paused = True
                        self.allowed += 1
                    elif word == "stop":
                        self.stopping = True
                    elif word == "check":
                        self.check_wanted = True
                        if self.paused:
                            self.allowed += 1  # the check needs one more step (it taps that step's forward)
                    elif word == "inside":
                        self.inside_wanted = True
                        if self.paused:
                            self.allowed += 2  # a look takes two steps (app.script_inside)
                    self.cond.notify_all()
        with self.cond:  # the app is gone: nobody to wait for
            self.stopping = True
            self.cond.notify_all()

    def take_check(self) -> bool:
        with self.cond:
            wanted, self.check_wanted = self.check_wanted, False
            return wanted

    def take_inside(self) -> bool:
        with self.cond:
            wanted, self.inside_wanted = self.inside_wanted, False
            return wanted

    def wait_turn(self) -> None:
        """Called after each step: go on, or wait while paused (a Step lets one more through)."""
        with self.cond:
            while not self.stopping and self.paused and self.allowed == 0:
                self.cond.wait()
            if self.allowed:
                self.allowed -= 1
            if self.stopping:
                raise SystemExit(0)


class Reporter:
    def __init__(self, fd: int, control: Control):
        self._out = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()
        self.control = control
        self.started = time.perf_counter()
        self.last = self.started
        self.steps = 0
        self.by_backward = False
        self.by_item = False  # an .item() step was seen: prints no longer step
        self.pending_item = None  # (value, device, at): an .item() step not yet sent
        self.last_number = -1  # the step number last sent
        self.tape = None  # a script_check.Tape while the step to check is recorded
        self.engine = None
        self.script_name = ""
        self.inside = None  # an app.script_inside.Look while the app's look inside is under way
        self.recent_ms = collections.deque(maxlen=9)  # the last steps' times outside a look (its unprofiled step)
        self.dynamics = None  # an app.dynamics.ScriptDynamics from the first backward(): how the weights move
        self.sampling_s = 0.0  # the time spent sampling them, in the script's process

    def send(self, **event) -> None:
        with self._lock:
            self._out.write(json.dumps(event) + "\n")

    def step(self, value: float, device: str, at: float, wait: bool = True, number: int | None = None) -> None:
        """Send a step: numbered one after the last, or ``number`` (a printed iteration) when it is later; its
        milliseconds are per iteration between the two."""
        number = number if number is not None and number > self.last_number else self.last_number + 1
        iterations = number - self.last_number if self.steps else 1
        ms = (at - self.last) * 1e3 / iterations
        self.send(t="step", step=number, loss=value, time=at - self.started, ms=ms, device=device)
        if self.dynamics is not None:
            samples = self.dynamics.take_new()
            if samples:
                # the cost: the sampling's own time over the script's (a script's irregular steps, an evaluation
                # pass at an epoch's end, would be charged to the samples by the recipes' estimate)
                self.send(t="dynamics", samples=samples, cost=self.sampling_s / max(at - self.started, 1e-9))
        if self.inside is None and self.steps:
            self.recent_ms.append(ms)
        self.steps += 1
        self.last_number = number
        self.last = at
        if wait:
            self.control.wait_turn()
            look = self.inside
            if look is None and self.control.take_check():
                if self.by_backward:
                    self.tape.install()  # the next step's forward is recorded; checked at its backward()
                else:
                    self.send(t="check_failed", why="this script calls no backward(): autograd computes no "
                                                    "gradient here to check")
            if look is not None:
                if look.state == "profile":
                    look.begin_profile(device)  # from here to the end of the next backward()
            elif not self.tape.recording and self.control.take_inside():
                if self.by_backward:
                    from app.script_inside import Look  # noqa: PLC0415 - only when the app asks

                    self.inside = Look(self.engine, self, self.script_name, list(self.recent_ms))
                    if self.dynamics is not None:
                        self.dynamics._pending = None  # a weights sample would span the look's steps: none
                else:
                    self.send(t="inside_failed", why="this script calls no backward(): autograd records no graph "
                                                     "here to look at")

    def flush_item(self, wait: bool = True) -> None:
        if self.pending_item is not None:
            value, device, at = self.pending_item
            self.pending_item = None
            self.step(value, device, at, wait)


def install(engine, reporter: Reporter, script_check) -> None:
    """Make every backward() on a one-element tensor a step (and .item() until the first backward)."""
    tensor_cls = engine.Tensor
    backward = tensor_cls.backward
    item = tensor_cls.item

    def backward_step(self, *args, **kwargs):
        if reporter.tape.recording and self.numel() == 1:  # the step the app asked to check: before its backward
            reporter.tape.recording = False
            try:
                from app.script_inside import leaf_names  # noqa: PLC0415

                report = script_check.check(engine, reporter.tape, self, reporter.steps,
                                            lambda leaves: leaf_names(engine, leaves, sys._getframe(1)))
            except Exception as exc:  # never into the script
                report = {"t": "check_failed", "why": f"{type(exc).__name__}: {exc}"}
            finally:
                reporter.tape.remove()
            reporter.send(**report)
        look = reporter.inside
        scalar = self.numel() == 1
        if scalar and look is None:
            _sample_weights(reporter, "after")  # the weights the last update left
        if look is not None and look.state == "graph" and scalar:
            look.describe(self)  # before the walk frees what the graph saved
        out = backward(self, *args, **kwargs)
        if scalar:
            if not reporter.by_backward:
                reporter.by_backward = True
                reporter.pending_item = None  # the .item() of this same step (its print) is not a step of its own
                _start_dynamics(engine, reporter, self, script_check)
            now = time.perf_counter()
            if look is None:
                _sample_weights(reporter, "before", now)  # the weights and the gradient, before the update
            report = (float(item(self)), str(self.device), time.perf_counter())
            if look is not None and look.profiling():
                look.pending_step = report  # sent when the profile has closed, after this call returns
            else:
                reporter.step(*report)
        return out

    engine_dir = os.path.dirname(os.path.abspath(engine.__file__)) + os.sep

    def item_step(self):
        value = item(self)
        # the script's own .item() calls (its print of the loss), not the engine's (an index check, a count)
        if not reporter.by_backward and self.numel() == 1 and \
                not sys._getframe(1).f_code.co_filename.startswith(engine_dir):
            reporter.by_item = True
            reporter.flush_item()  # the previous .item() was a step: no backward came after it
            reporter.pending_item = (float(value), str(self.device), time.perf_counter())
        return value

    tensor_cls.backward = backward_step
    tensor_cls.item = item_step
    builtins.print = _print_stepping(reporter, builtins.print)


def _start_dynamics(engine, reporter: Reporter, loss, script_check) -> None:
    """At the first backward(): the parameters whose moves are sampled, the leaves of its graph that require a
    gradient, named as the script names them (a leaf it does not name: "leaf 1", as the gradient check says)."""
    from app.dynamics import ScriptDynamics  # noqa: PLC0415
    from app.script_inside import leaf_names  # noqa: PLC0415

    try:
        leaves = [t for t in script_check.leaves_of(loss) if t.dtype.is_floating_point or t.dtype.is_complex]
        # "step" and "full" are a sample's own keys: a tensor of the script's may have those names
        names = leaf_names(engine, leaves, sys._getframe(2), reserved=("step", "full"))
        reporter.dynamics = ScriptDynamics(list(zip(names, leaves))) if leaves else None
    except Exception:  # never into the script: no curves, rather than a failed run
        reporter.dynamics = None


def _sample_weights(reporter: Reporter, when: str, now: float = 0.0) -> None:
    dyn = reporter.dynamics
    if dyn is None:
        return
    t0 = time.perf_counter()
    try:
        if when == "after":
            dyn.after()
        else:
            dyn.before(reporter.last_number + 1, now - reporter.last if reporter.steps else 0.0)
    except Exception:  # a parameter the script replaced or moved: stop sampling, never break the script
        reporter.dynamics = None
    reporter.sampling_s += time.perf_counter() - t0


def _print_stepping(reporter: Reporter, real_print):
    """``print`` that makes ``print(t, loss)`` a step (t a whole number, loss a real one: Python's or NumPy's)
    while the script has made no step with ``.item()`` or ``backward()``: the NumPy warm-up's only word of its
    loss. It prints first, then reports (and waits, when paused)."""

    def print_step(*args, **kwargs):
        real_print(*args, **kwargs)
        if reporter.by_backward or reporter.by_item or len(args) != 2:
            return
        out = kwargs.get("file")
        if out is not None and out is not sys.stdout:
            return
        t, loss = args
        if (isinstance(t, numbers.Integral) and not isinstance(t, bool) and isinstance(loss, numbers.Real)
                and not isinstance(loss, bool)):
            reporter.step(float(loss), "cpu", time.perf_counter(), number=int(t))

    return print_step


def alias_torch(engine) -> None:
    """``import torch`` (and torch.nn, torch.optim, ...) give the engine and its modules."""
    sys.modules["torch"] = engine
    for name, module in list(sys.modules.items()):
        if name.startswith("engine."):
            sys.modules["torch" + name[len("engine"):]] = module


def _torch_names() -> dict:
    """PyTorch's public names by where they live ("torch", "torch.Tensor", "torch.nn.Module", ...), as torch 2.13
    has them (app/torch_names.json; tests/app/test_script_run.py checks it against torch where torch is
    installed)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_names.json")
    with open(path, encoding="utf-8") as f:
        return {k: set(v) for k, v in json.load(f)["names"].items()}


def _engine_place(obj) -> str | None:
    """Where PyTorch keeps what ``obj`` is: "torch.nn.functional" for the engine's module of that name,
    "torch.Tensor" for a tensor, "torch.nn.Module" for any module (a script's own ones too), "torch.optim.Optimizer"
    for an optimizer; None for anything else."""
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
        return "torch" + name[len("engine"):] if name == "engine" or name.startswith("engine.") else None
    import engine  # noqa: PLC0415 - loaded already: the script is running on it

    for cls, place in ((engine.Tensor, "torch.Tensor"), (engine.nn.Module, "torch.nn.Module"),
                       (engine.optim.Optimizer, "torch.optim.Optimizer")):
        if isinstance(obj, cls):
            return place
    return None


def beyond_the_engine(exc: BaseException) -> str | None:
    """Where a script failed for want of a part of PyTorch that the engine has not (``torch.utils``,
    ``Tensor.std``, ``nn.ModuleList``), a sentence that says so; None for anything else, a misspelt name included
    (``self.lin`` for ``self.l``: PyTorch has no such name either)."""
    missing = None
    try:
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.startswith("torch."):
            # a submodule the engine has not (torch.utils.data: torch.utils); torch.utlis is nobody's
            first = exc.name.split(".")[1]
            missing = exc.name if first in _torch_names()["torch"] else None
        elif isinstance(exc, AttributeError) and getattr(exc, "name", None) and hasattr(exc, "obj"):
            place = _engine_place(exc.obj)
            if place is not None and exc.name in _torch_names().get(place, ()):
                missing = f"{place}.{exc.name}"
    except (OSError, ValueError, KeyError):  # the list is missing or unreadable: say nothing rather than guess
        return None
    if missing is None:
        return None
    return (f"{missing} is PyTorch's but not the engine's: gradscope's engine has the API of the tutorial "
            f"\"Learning PyTorch with examples\" and what a first training script adds to it, not all of PyTorch's")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    script, ctl_fd, evt_fd = argv[0], int(argv[1]), int(argv[2])
    control = Control(ctl_fd)
    reporter = Reporter(evt_fd, control)
    import engine  # noqa: PLC0415 - after the pipes: an import error is reported like the script's own
    from app import script_check  # noqa: PLC0415

    alias_torch(engine)
    reporter.tape = script_check.Tape(engine)
    reporter.engine = engine
    reporter.script_name = os.path.basename(script)
    install(engine, reporter, script_check)
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
        reporter.flush_item(wait=False)
    except SystemExit as exc:
        if control.stopping:
            reporter.send(t="stopped")
            code = 0
        else:
            reporter.flush_item(wait=False)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # the script's own error: its traceback, without this file's frames
        reporter.flush_item(wait=False)
        frames = traceback.extract_tb(exc.__traceback__)
        mine = os.path.abspath(script)
        for i, frame in enumerate(frames):
            if os.path.abspath(frame.filename) == mine:
                frames = frames[i:]
                break
        text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + \
            "".join(traceback.format_exception_only(type(exc), exc))
        hint = beyond_the_engine(exc)
        if hint:
            text += hint + "\n"
        sys.stderr.write(text)
        sys.stderr.flush()
        reporter.send(t="error", kind=type(exc).__name__, message=str(exc), steps=reporter.steps, hint=hint)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    reporter.send(t="exit", code=code, steps=reporter.steps)
    return code


if __name__ == "__main__":
    sys.exit(main())
