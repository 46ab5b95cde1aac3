"""Inside a learner's own script's step, in the script's process (app.script_child): the graph its next
``backward()`` walks, and a profile of the whole step after it, sent to the app as one event with the payload
the window shows for a recipe (app.inspect_step).

Two steps, so that neither part pays for the other: at the first the graph is described before its backward
(with each node's output and gradient figures, an extra backward pass of its own that leaves ``.grad`` alone);
the second is profiled from the end of the first to the end of its own backward (the optimizer's update, the
next batch, the forward and the backward: one iteration of the script's loop), and its step is reported to the
app only after the profile is closed, so a pause there is not timed. Nothing here imports Qt.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))


def script_names(engine, frame) -> dict:
    """id(tensor) -> the name the script gives it, from the script's frames outward: a tensor by its variable
    (``w1``), a module's parameters by the module's variable and their path (``model.0.weight``)."""
    engine_dir = os.path.dirname(os.path.abspath(engine.__file__))
    names: dict = {}
    while frame is not None:
        where = os.path.abspath(frame.f_code.co_filename)
        # past the engine's frames and the app's own (app/examples/ holds scripts: their frames count)
        if not where.startswith(engine_dir + os.sep) and os.path.dirname(where) != _HERE:
            for scope in (frame.f_locals, frame.f_globals):
                for var, value in list(scope.items()):
                    if var.startswith("__"):
                        continue
                    if isinstance(value, engine.Tensor):
                        names.setdefault(id(value), var)
                    elif isinstance(value, engine.nn.Module):
                        for path, p in value.named_parameters():
                            names.setdefault(id(p), f"{var}.{path}")
        frame = frame.f_back
    return names


def leaf_names(engine, leaves: list, frame, reserved=()) -> list[str]:
    """A name for each leaf: the script's (``script_names``), else "leaf i" (its place, from 1), each once: a
    second tensor named alike (a local and a global ``w``) becomes "w (2)", and so does a name in ``reserved``."""
    names = script_names(engine, frame)
    out, taken = [], set(reserved)
    for i, t in enumerate(leaves, 1):
        name = base = names.get(id(t), f"leaf {i}")
        n = 1
        while name in taken:
            n += 1
            name = f"{base} ({n})"
        taken.add(name)
        out.append(name)
    return out


class Look:
    """One look inside, from the app's request to the event that answers it."""

    def __init__(self, engine, reporter, script_name: str, recent_ms: list):
        self.engine = engine
        self.reporter = reporter
        self.script_name = script_name
        self.recent_ms = list(recent_ms)  # the steps' times before the look: the unprofiled step
        self.state = "graph"  # then "profile", then "done"
        self.graph = None
        self.first_step = None
        self.problems: list = []
        self._profile = None  # the profile's context manager while it is open
        self._prof = None
        self._began = 0.0
        self.pending_step = None  # the profiled step's report, sent once the profile is closed

    def profiling(self) -> bool:
        """Whether the profile is open (the second step)."""
        return self._profile is not None

    # ---- the first step: its graph, before its backward
    def describe(self, loss) -> None:
        from engine.autograd.describe import describe

        try:
            from app.script_check import leaves_of

            leaves = leaves_of(loss)  # named as the gradient check and the weight samples name them
            names = dict(zip(map(id, leaves), leaf_names(self.engine, leaves, sys._getframe(1))))
            self.graph = {"recipe": self.script_name, "source": "your script's own backward()",
                          "graph": describe(loss, names, stats=True).to_dict(), "manual": {}}
        except Exception as exc:  # the profile may still work; never into the script
            self.problems.append(f"No graph: {type(exc).__name__}: {exc}")
        self.first_step = self.reporter.last_number + 1
        self.state = "profile"

    # ---- the second step: profiled from the end of the first
    def begin_profile(self, device: str) -> None:
        """Open the profile (after the first step was reported, and after any pause there)."""
        from engine.profiler import profile

        engine = self.engine
        try:
            self._profile = profile(device)
            self._prof = self._profile.__enter__()
        except Exception as exc:
            self._profile = None
            self.problems.append(f"No profile: {type(exc).__name__}: {exc}")
            self.finish()
            return
        wrapped = engine.Tensor.backward  # the profile's wrapper around the step's backward
        look = self

        def backward_then_close(tensor, *args, **kwargs):
            try:
                return wrapped(tensor, *args, **kwargs)
            finally:
                if look.pending_step is not None:  # the profiled step's backward is done: close, then report
                    look.finish()

        engine.Tensor.backward = backward_then_close
        self._began = time.perf_counter()

    def finish(self) -> None:
        """Close the profile, send the look, then report the profiled step (which may wait there, paused)."""
        payload_profile = None
        if self._profile is not None:
            step_s = time.perf_counter() - self._began
            try:
                self._profile.__exit__(None, None, None)
                self._prof.finish(step_s)
                payload_profile = self._profile_dict(step_s)
            except Exception as exc:
                self.problems.append(f"No profile: {type(exc).__name__}: {exc}")
            self._profile = None
        self.state = "done"
        if self.graph is None and payload_profile is None:
            self.reporter.send(t="inside_failed", why=" ".join(self.problems) or "nothing could be seen")
        else:
            self.reporter.send(t="inside", graph=self.graph, profile=payload_profile, problems=self.problems,
                               first=self.first_step, last=self.reporter.last_number + 1)
        pending, self.pending_step = self.pending_step, None
        if pending is not None:
            self.reporter.step(*pending)  # its time is the profiled step's: not kept as an unprofiled one
        self.reporter.inside = None

    def _profile_dict(self, step_s: float) -> dict:
        from app.inspect_step import StepProfile

        plain = statistics.median(self.recent_ms) / 1e3 if self.recent_ms else step_s
        return StepProfile(self._prof, 1, plain, self.script_name, self._prof.device).to_dict()
