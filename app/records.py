"""What a run leaves: its records (:class:`LossLog`, :class:`Batch`), its :class:`RunResult` and its status.

Plain data, no engine: the export, the window and the benchmarks read these without importing the runner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .config import RunConfig

DONE, STOPPED, DIVERGED, OUT_OF_MEMORY, FAILED = "done", "stopped", "diverged", "out of memory", "failed"
STATUSES = (DONE, STOPPED, DIVERGED, OUT_OF_MEMORY, FAILED)


class Columns:
    """Named NumPy columns that grow together, doubling when full (pyqtgraph's scrolling-plot buffers): the
    run's log here, and the plot's series in the window."""

    def __init__(self, dtypes: dict[str, object], capacity: int = 1024):
        self.n = 0
        self._buffers = {name: np.empty(max(1, capacity), dtype) for name, dtype in dtypes.items()}

    def _grow(self, need: int) -> None:
        cap = len(next(iter(self._buffers.values())))
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        for name, old in self._buffers.items():
            new = np.empty(cap, old.dtype)
            new[: self.n] = old[: self.n]
            self._buffers[name] = new

    def extend(self, **columns) -> None:
        """Append the same number of values to the named columns (the others keep whatever is there)."""
        k = len(next(iter(columns.values())))
        self._grow(self.n + k)
        for name, values in columns.items():
            self._buffers[name][self.n : self.n + k] = values
        self.n += k

    def truncate(self, n: int) -> None:
        self.n = min(self.n, n)

    def column(self, name: str) -> np.ndarray:
        """The filled part of a column (a view)."""
        return self._buffers[name][: self.n]

    def buffer(self, name: str) -> np.ndarray:
        """A column's whole buffer, filled or not (for writing a column that is filled later)."""
        return self._buffers[name]

    def __len__(self):
        return self.n


class LossLog(Columns):
    """A run's records, one per step: step, loss, elapsed seconds, step milliseconds."""

    def __init__(self, capacity: int = 1024):
        super().__init__({"step": np.int64, "loss": np.float64, "elapsed_s": np.float64, "step_ms": np.float64},
                         capacity)

    def extend(self, steps, losses, elapsed, step_ms) -> None:  # noqa: D102 - the record's order
        super().extend(step=steps, loss=losses, elapsed_s=elapsed, step_ms=step_ms)

    @property
    def step(self) -> np.ndarray:
        return self.column("step")

    @property
    def loss(self) -> np.ndarray:
        return self.column("loss")

    @property
    def elapsed_s(self) -> np.ndarray:
        return self.column("elapsed_s")

    @property
    def step_ms(self) -> np.ndarray:
        return self.column("step_ms")

    @classmethod
    def from_arrays(cls, step, loss, elapsed_s, step_ms) -> LossLog:
        log = cls(max(1, len(step)))
        log.extend(np.asarray(step, np.int64), np.asarray(loss, np.float64), np.asarray(elapsed_s, np.float64),
                   np.asarray(step_ms, np.float64))
        return log


@dataclass
class Batch:
    """Records since the last batch: plain NumPy arrays (safe to hand to another thread)."""

    step: np.ndarray
    loss: np.ndarray
    elapsed_s: np.ndarray
    step_ms: np.ndarray
    coefficients: list | None = None  # the fit of sin(x): its coefficients as the batch ends (floats)
    dynamics: list | None = None  # app.dynamics samples taken since the last batch (plain dicts)


@dataclass
class RunResult:
    config: RunConfig | None  # None only for a log that recorded no settings (a CSV opened and written again)
    status: str
    message: str
    log: LossLog
    started_at: str
    device_name: str
    versions: dict
    wall_s: float = 0.0
    diverged_at: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def steps_done(self) -> int:
        return len(self.log)

    @property
    def final_loss(self) -> float:
        return float(self.log.loss[-1]) if len(self.log) else math.nan

    @property
    def steps_per_second(self) -> float:
        if not len(self.log):
            return 0.0
        t = float(self.log.elapsed_s[-1])
        return len(self.log) / t if t > 0 else math.inf
