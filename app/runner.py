"""The runner: drives a recipe step by step, timing, pausing, stopping, and ending with a status.

Statuses: ``done``, ``stopped``, ``diverged`` (the loss became NaN or infinite), ``out of memory`` and
``failed``. Whatever the status, the log of the steps done is kept.

Losses are read back from the device in batches: on the CPU every step (reading a NumPy scalar costs
nothing), on a GPU into a device buffer that is copied to the host every ``readback_s`` seconds or
``readback_steps`` steps, so the step loop never waits for a per-step ``.item()``.

With ``config.cuda_graph`` the first ``GRAPH_WARMUP`` steps run as written (they compile the kernels and make
the ``.grad`` buffers), the next one is captured as a CUDA graph, and every step from there on is one replay
of it plus a copy of its loss. When the step cannot be captured the run goes on uncaptured and says why
(``RunResult.extra["cuda_graph"]``).
"""

from __future__ import annotations

import gc
import math
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

import engine

from .config import ConfigError, RunConfig, format_bytes
from .recipes import TABLE, TrainState, make_state

DONE, STOPPED, DIVERGED, OUT_OF_MEMORY, FAILED = "done", "stopped", "diverged", "out of memory", "failed"
GRAPH_WARMUP = 3  # uncaptured steps before the capture: kernels compiled, .grad buffers made
STATUSES = (DONE, STOPPED, DIVERGED, OUT_OF_MEMORY, FAILED)


class LossLog:
    """Growing per-step arrays (doubling when full): step, loss, elapsed seconds, step milliseconds."""

    def __init__(self, capacity: int = 1024):
        self.n = 0
        self._step = np.empty(capacity, np.int64)
        self._loss = np.empty(capacity, np.float64)
        self._elapsed = np.empty(capacity, np.float64)
        self._step_ms = np.empty(capacity, np.float64)

    def _grow(self, need: int):
        cap = len(self._step)
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        for name in ("_step", "_loss", "_elapsed", "_step_ms"):
            old = getattr(self, name)
            new = np.empty(cap, old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def extend(self, steps, losses, elapsed, step_ms) -> None:
        k = len(steps)
        self._grow(self.n + k)
        sl = slice(self.n, self.n + k)
        self._step[sl], self._loss[sl], self._elapsed[sl], self._step_ms[sl] = steps, losses, elapsed, step_ms
        self.n += k

    def truncate(self, n: int) -> None:
        self.n = min(self.n, n)

    @property
    def step(self) -> np.ndarray:
        return self._step[: self.n]

    @property
    def loss(self) -> np.ndarray:
        return self._loss[: self.n]

    @property
    def elapsed_s(self) -> np.ndarray:
        return self._elapsed[: self.n]

    @property
    def step_ms(self) -> np.ndarray:
        return self._step_ms[: self.n]

    def __len__(self):
        return self.n

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


@dataclass
class RunResult:
    config: RunConfig
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


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        try:
            return engine.cuda.get_device_name(device)
        except Exception:
            return device
    return cpu_name()


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def versions() -> dict:
    out = {"engine": engine.__version__, "numpy": np.__version__, "python": platform.python_version()}
    if engine.backend._cupy is not None:
        out["cupy"] = engine.backend._cupy.__version__
    return out


class Runner:
    """Runs one configuration. Thread-safe controls: :meth:`pause`, :meth:`resume`, :meth:`step_once`,
    :meth:`stop`; :meth:`run` blocks in the calling thread (the worker's, or the CLI's)."""

    def __init__(self, config: RunConfig, readback_s: float = 0.02, readback_steps: int = 256,
                 batched_readback: bool | None = None):
        self.config = config
        # batch the loss readback on a GPU (no per-step host sync); on the CPU a read costs nothing
        self.batched_readback = config.device.startswith("cuda") if batched_readback is None else batched_readback
        self.readback_s = readback_s
        self.readback_steps = readback_steps
        self.log = LossLog(min(max(config.iters, 16), 1 << 16))
        self.state: TrainState | None = None
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._paused = False
        self._single_steps = 0
        self._parked = threading.Event()  # set while the run waits between steps (paused or ended)
        self._jobs: list[Callable[[], None]] = []  # run by the run's thread while it is parked
        self.status: str | None = None
        self.message = ""
        self._graph = None  # the captured step while a cuda_graph run goes on
        self.graph_info: dict = {"captured": False, "note": "not captured yet"}

    # ------------------------------------------------------------------ controls (any thread)
    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    def step_once(self) -> None:
        """While paused: run exactly one more step."""
        with self._cond:
            self._single_steps += 1
            self._cond.notify_all()

    def call_when_parked(self, job: Callable[[], None]) -> None:
        """Run ``job`` in the run's own thread (its device, its grad mode) the next time it waits between steps.
        Pause first: a running run parks only when paused. ``job`` must not raise (report through a signal)."""
        with self._cond:
            self._jobs.append(job)
            self._cond.notify_all()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _wait_if_paused(self, flush) -> bool:
        """Block while paused; True when a step may run, False when stopped."""
        with self._cond:
            if not self._paused:
                return not self._stop.is_set()
        flush()
        with self._cond:
            self._parked.set()
            while self._paused and self._single_steps == 0 and not self._stop.is_set():
                if self._jobs:
                    job = self._jobs.pop(0)
                    self._cond.release()
                    try:
                        job()
                    finally:
                        self._cond.acquire()
                    continue
                self._cond.wait(0.05)
            if self._single_steps:
                self._single_steps -= 1
            self._parked.clear()
            return not self._stop.is_set()

    def wait_parked(self, timeout: float = 2.0) -> bool:
        """After :meth:`pause`: wait until the step in flight has finished (its weights are safe to read)."""
        return self._parked.wait(timeout)

    # ------------------------------------------------------------------ running
    def run(self, on_batch: Callable[[Batch], None] | None = None, emit_s: float = 1 / 30) -> RunResult:
        """Train until done, stopped, diverged, out of memory or failed; call ``on_batch`` with new records
        at most every ``emit_s`` seconds (and once at the end)."""
        cfg = self.config
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        dev_name = device_name(cfg.device)
        t0 = time.perf_counter()
        diverged_at = None
        emitted = 0
        last_emit = t0
        on_gpu = cfg.device.startswith("cuda")
        batched = self.batched_readback

        pending_losses: list = []  # GPU: 0-d device arrays not yet read back
        pending_steps: list[int] = []
        pending_elapsed: list[float] = []
        pending_ms: list[float] = []
        last_readback = t0

        def emit(force=False):
            nonlocal emitted, last_emit
            now = time.perf_counter()
            if on_batch is None or (not force and now - last_emit < emit_s) or emitted == len(self.log):
                return
            n = len(self.log)
            on_batch(Batch(self.log.step[emitted:n].copy(), self.log.loss[emitted:n].copy(),
                           self.log.elapsed_s[emitted:n].copy(), self.log.step_ms[emitted:n].copy()))
            emitted = n
            last_emit = now

        def readback():
            """Move pending losses to the log; return the index of the first non-finite one, or None."""
            nonlocal last_readback
            last_readback = time.perf_counter()
            if not pending_steps:
                return None
            if on_gpu:
                xp = engine.backend.get_cupy()
                values = xp.stack(pending_losses).astype(xp.float64).get()
            else:
                values = np.asarray(pending_losses, dtype=np.float64)
            self.log.extend(pending_steps, values, pending_elapsed, pending_ms)
            pending_losses.clear()
            pending_steps.clear()
            pending_elapsed.clear()
            pending_ms.clear()
            bad = ~np.isfinite(values)
            if bad.any():
                first = int(np.argmax(bad))
                return len(self.log) - len(values) + first
            return None

        def flush():
            nonlocal diverged_at
            if diverged_at is None:
                bad = readback()
                if bad is not None:
                    diverged_at = bad
            emit(force=True)

        # overflow on the way to inf/NaN is reported as status "diverged", not as warnings
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            status, message = DONE, ""
            try:
                self.state = make_state(cfg)
                steps = TABLE[cfg.recipe].step(self.state)
                graph = graph_loss = None
                capture_at = GRAPH_WARMUP if cfg.cuda_graph and on_gpu else -1
                prev = time.perf_counter()
                for t in range(cfg.iters):
                    if self._stop.is_set() or not self._wait_if_paused(flush):
                        status = STOPPED
                        break
                    if self._paused:
                        prev = time.perf_counter()  # time spent paused is not step time
                    if graph is not None:
                        graph.replay()
                        loss = graph_loss.copy()  # the next replay writes over the graph's own loss
                    elif t == capture_at:
                        graph, graph_loss, steps = self._capture(steps, t)
                        loss = next(steps) if graph is None else graph_loss.copy()
                    else:
                        loss = next(steps)
                    now = time.perf_counter()
                    pending_losses.append(loss._data if isinstance(loss, engine.Tensor) else loss)
                    pending_steps.append(t)
                    pending_elapsed.append(now - t0)
                    pending_ms.append((now - prev) * 1e3)
                    prev = now
                    if (not batched or len(pending_steps) >= self.readback_steps
                            or now - last_readback >= self.readback_s):
                        bad = readback()
                        if bad is not None:
                            diverged_at = bad
                            break
                        emit()
                if diverged_at is None:
                    bad = readback()
                    if bad is not None:
                        diverged_at = bad
                if diverged_at is not None:
                    self.log.truncate(diverged_at + 1)  # keep the first bad step, drop what ran after it
                    status = DIVERGED
                    bad_value = self.log.loss[diverged_at]
                    message = (
                        f"diverged at step {int(self.log.step[diverged_at])}: the loss became {bad_value} "
                        f"(learning rate {cfg.lr:g}); try a smaller learning rate"
                    )
                elif status == STOPPED:
                    message = f"stopped after {len(self.log)} of {cfg.iters} steps"
                else:
                    message = f"done: {len(self.log)} steps"
            except KeyboardInterrupt:  # Ctrl+C in the headless command: a stop that keeps the log
                status, message = STOPPED, f"interrupted after {len(self.log)} of {cfg.iters} steps"
                try:
                    readback()
                except Exception:
                    pass
            except MemoryError as exc:
                pending_losses.clear()
                status = OUT_OF_MEMORY
                message = (
                    f"out of memory on {cfg.device} (N={cfg.batch}, D_in={cfg.d_in}, H={cfg.hidden}, "
                    f"D_out={cfg.d_out}, "
                    f"{cfg.dtype}: about {format_bytes(cfg.memory_estimate())} needed): {_short(exc)}. "
                    "The engine's cached memory was freed; try smaller sizes"
                )
            except ConfigError as exc:
                status, message = FAILED, str(exc)
            except Exception as exc:  # a run must end with a status, whatever broke
                if is_out_of_memory(exc):
                    status = OUT_OF_MEMORY
                    message = (f"out of memory on {cfg.device} ({type(exc).__name__}: {_short(exc)}); the engine's "
                               "cached memory was freed; try smaller sizes")
                else:
                    status, message = FAILED, f"{type(exc).__name__}: {_short(exc)}"
            finally:
                if self._graph is not None:
                    self.graph_info["replays"] = self._graph.replays
                    graph = graph_loss = None  # the loop's references go first, so reset can free the loss too
                    self._graph.reset()  # its pool's memory goes back; the weights live outside it
                    self._graph = None
                self._run_pending_jobs()  # a check asked for as the run ended still gets its answer
                self._release_state(status)
                if on_gpu:
                    engine.cuda.release_thread_resources()  # the app runs each run in a thread of its own
                self._parked.set()
        emit(force=True)
        if cfg.cuda_graph and not self.graph_info["captured"] and self.graph_info["note"] == "not captured yet":
            self.graph_info["note"] = (f"not used: the run ended within its {GRAPH_WARMUP} uncaptured warm-up "
                                       "steps")
        self.status, self.message = status, message
        return RunResult(
            config=cfg, status=status, message=message, log=self.log, started_at=started, device_name=dev_name,
            versions=versions(), wall_s=time.perf_counter() - t0, diverged_at=diverged_at,
            extra={"cuda_graph": dict(self.graph_info)} if cfg.cuda_graph else {},
        )

    def _capture(self, steps, t: int):
        """Capture the recipe's next step as a CUDA graph and run it once: (graph, its loss array, steps).

        When the step cannot be captured: (None, None, a fresh generator of the recipe: the one that raised is
        finished), with the reason in ``graph_info``; nothing of the failed capture ran on the GPU."""
        g = engine.cuda.CUDAGraph()
        try:
            with engine.cuda.graph(g):
                loss = next(steps)
        except engine.cuda.GraphCaptureError as exc:
            self.graph_info.update(captured=False, note=f"not captured, the run went on without it: {exc}")
            g.reset()
            return None, None, TABLE[self.config.recipe].step(self.state)
        g.replay()
        self._graph = g
        self.graph_info.update(captured=True, captured_at=t, pool_bytes=g.pool_bytes(),
                               note=f"step {t} captured as a CUDA graph; the later steps replay it")
        return g, loss._data if isinstance(loss, engine.Tensor) else loss, steps

    def _run_pending_jobs(self) -> None:
        with self._cond:
            jobs, self._jobs = self._jobs, []
        for job in jobs:
            job()

    def _release_state(self, status: str) -> None:
        if status == OUT_OF_MEMORY:
            self.state = None
            gc.collect()
            try:
                engine.cuda.empty_cache()
            except Exception:
                pass


def is_out_of_memory(exc: BaseException) -> bool:
    """CuPy's OutOfMemoryError is a MemoryError; cuBLAS and cuRAND report allocation failures as their own
    errors (CUBLAS_STATUS_ALLOC_FAILED, ...), which count as out of memory too."""
    if isinstance(exc, MemoryError):
        return True
    text = f"{type(exc).__name__} {exc}"
    return "ALLOC_FAILED" in text or "cudaErrorMemoryAllocation" in text or "out of memory" in text.lower()


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
