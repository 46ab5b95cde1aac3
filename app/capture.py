"""A recipe's steps with one of them captured as a CUDA graph and replayed from then on (the runner's
``--cuda-graph`` and the benchmarks' graph rows use the same iterator).

The first ``capture_at`` steps run as written (they compile the kernels and make the ``.grad`` buffers), the next
one is captured, and every step from there on is one replay plus a copy of its loss (the next replay writes over
the graph's own). When the step cannot be captured, the iterator goes on uncaptured with a fresh generator of the
recipe (the one that raised is finished) and ``info["note"]`` says why; ``strict=True`` raises instead.
"""

from __future__ import annotations

import engine

from .recipes import TABLE, TrainState

GRAPH_WARMUP = 3  # uncaptured steps before the capture: kernels compiled, .grad buffers made


class CapturedSteps:
    """Iterates a recipe's losses; ``capture_at=None`` never captures."""

    def __init__(self, recipe: str, state: TrainState, capture_at: int | None = GRAPH_WARMUP, strict: bool = False):
        self.recipe, self.state, self.capture_at, self.strict = recipe, state, capture_at, strict
        self.steps = TABLE[recipe].step(state)
        self.graph: engine.cuda.CUDAGraph | None = None
        self._graph_loss = None
        self.t = 0
        self.info: dict = {"captured": False, "note": "not captured yet"}

    def __iter__(self):
        return self

    def __next__(self):
        t, self.t = self.t, self.t + 1
        if self.graph is not None:
            self.graph.replay()
            return self._graph_loss.copy()
        if t == self.capture_at:
            self._capture(t)
            return next(self.steps) if self.graph is None else self._graph_loss.copy()
        return next(self.steps)

    def _capture(self, t: int) -> None:
        """Capture the recipe's next step and run it once. Nothing of a failed capture ran on the GPU."""
        g = engine.cuda.CUDAGraph()
        try:
            with engine.cuda.graph(g):
                loss = next(self.steps)
        except engine.cuda.GraphCaptureError as exc:
            g.reset()
            if self.strict:
                raise
            self.info.update(captured=False, note=f"not captured, the run went on without it: {exc}")
            self.steps = TABLE[self.recipe].step(self.state)
            return
        g.replay()
        self.graph = g
        self._graph_loss = loss._data if isinstance(loss, engine.Tensor) else loss
        self.info.update(captured=True, captured_at=t, pool_bytes=g.pool_bytes(),
                         note=f"step {t} captured as a CUDA graph; the later steps replay it")

    def close(self) -> None:
        """Give the graph's memory back (the weights live outside it)."""
        if self.graph is not None:
            self.info["replays"] = self.graph.replays
            self._graph_loss = None  # the loss goes first, so reset can free it too
            self.graph.reset()
            self.graph = None
        if self.capture_at is not None and not self.info["captured"] and self.info["note"] == "not captured yet":
            self.info["note"] = f"not used: the run ended within its {self.capture_at} uncaptured warm-up steps"
