"""The loss readback: each step's loss stays where it was computed until it is read back in a batch.

On the CPU a read costs nothing and every step is read at once; on a GPU the losses (0-d device arrays) are
stacked and copied to the host every ``every_s`` seconds or ``every_steps`` steps, so the step loop never waits
for a per-step ``.item()``.
"""

from __future__ import annotations

import numpy as np

import engine

from .records import LossLog


class LossReadback:
    """Pending per-step records of a run, moved to its :class:`LossLog` in batches."""

    def __init__(self, log: LossLog, on_gpu: bool, batched: bool, every_s: float, every_steps: int, now: float):
        self.log, self.on_gpu, self.batched = log, on_gpu, batched
        self.every_s, self.every_steps = every_s, every_steps
        self.last = now
        self._losses: list = []
        self._steps: list[int] = []
        self._elapsed: list[float] = []
        self._ms: list[float] = []

    def add(self, step: int, loss, elapsed_s: float, step_ms: float, now: float) -> int | None:
        """Keep one step's record; read back when a batch is due. Returns the index in the log of the first
        non-finite loss read back, or None."""
        self._losses.append(loss._data if isinstance(loss, engine.Tensor) else loss)
        self._steps.append(step)
        self._elapsed.append(elapsed_s)
        self._ms.append(step_ms)
        if not self.batched or len(self._steps) >= self.every_steps or now - self.last >= self.every_s:
            return self.read(now)
        return None

    def read(self, now: float) -> int | None:
        """Move every pending record to the log (one device-to-host copy on a GPU); the first non-finite loss's
        index in the log, or None."""
        self.last = now
        if not self._steps:
            return None
        if self.on_gpu:
            xp = engine.backend.get_cupy()
            values = xp.stack(self._losses).astype(xp.float64).get()
        else:
            values = np.asarray(self._losses, dtype=np.float64)
        self.log.extend(self._steps, values, self._elapsed, self._ms)
        self.drop()
        bad = ~np.isfinite(values)
        if bad.any():
            return len(self.log) - len(values) + int(np.argmax(bad))
        return None

    def drop(self) -> None:
        """Forget what is pending (after running out of device memory, its arrays are let go)."""
        self._losses.clear()
        self._steps.clear()
        self._elapsed.clear()
        self._ms.clear()
