"""The runner: drives a recipe step by step, timing, pausing, stopping, and ending with a status.

Statuses: ``done``, ``stopped``, ``diverged`` (the loss became NaN or infinite), ``out of memory`` and
``failed``. Whatever the status, the log of the steps done is kept.

Its parts live beside it: the records and the result (:mod:`app.records`), the batched loss readback
(:mod:`app.readback`), the CUDA-graph capture of the step (:mod:`app.capture`), the machine's facts
(:mod:`app.system`). With ``config.cuda_graph`` the first ``GRAPH_WARMUP`` steps run as written, the next one is
captured, and every later step replays it; when the step cannot be captured the run goes on uncaptured and says
why (``RunResult.extra["cuda_graph"]``).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np

import engine

from .capture import GRAPH_WARMUP, CapturedSteps
from .config import ConfigError, RunConfig, format_bytes
from .dynamics import Dynamics
from .readback import LossReadback
from .recipes import TABLE, TrainState, make_state
from .records import DIVERGED, DONE, FAILED, OUT_OF_MEMORY, STATUSES, STOPPED, Batch, LossLog, RunResult
from .system import cpu_name, device_name, versions

__all__ = ["Runner", "is_out_of_memory", "DONE", "STOPPED", "DIVERGED", "OUT_OF_MEMORY", "FAILED", "STATUSES",
           "GRAPH_WARMUP", "Batch", "LossLog", "RunResult", "cpu_name", "device_name", "versions"]


class _Emitter:
    """Hands the log's new records to ``on_batch`` as a :class:`Batch`, at most every ``every_s`` seconds."""

    def __init__(self, log: LossLog, on_batch: Callable[[Batch], None] | None, every_s: float, now: float,
                 coefficients: Callable[[], list | None] | None = None,
                 samples: Callable[[], list] | None = None):
        self.log, self.on_batch, self.every_s, self.last, self.emitted = log, on_batch, every_s, now, 0
        self.coefficients = coefficients  # the fit's current coefficients, for the fit view (poly recipes)
        self.samples = samples  # the dynamics samples taken since the last batch

    def __call__(self, force: bool = False) -> None:
        now = time.perf_counter()
        n = len(self.log)
        if self.on_batch is None or (not force and now - self.last < self.every_s) or self.emitted == n:
            return
        log, k = self.log, self.emitted
        self.on_batch(Batch(log.step[k:n].copy(), log.loss[k:n].copy(), log.elapsed_s[k:n].copy(),
                            log.step_ms[k:n].copy(), self.coefficients() if self.coefficients else None,
                            self.samples() if self.samples else None))
        self.emitted, self.last = n, now


class Runner:
    """Runs one configuration. Thread-safe controls: :meth:`pause`, :meth:`resume`, :meth:`step_once`,
    :meth:`stop`; :meth:`run` blocks in the calling thread (the worker's, or the CLI's)."""

    def __init__(self, config: RunConfig, readback_s: float = 0.02, readback_steps: int = 256,
                 batched_readback: bool | None = None, dynamics: bool = False):
        self.config = config
        self.track_dynamics = dynamics  # sample how the weights move (app.dynamics), within its time budget
        self.dynamics: Dynamics | None = None
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
        self.graph_info: dict = {"captured": False, "note": "not captured yet"}
        self.final_coefficients: list | None = None

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
        """Train ``config.iters`` steps (or until stopped), calling ``on_batch`` with new records now and then.
        Always returns a :class:`RunResult` with the log of the steps done."""
        cfg = self.config
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        dev_name = device_name(cfg.device)
        t0 = time.perf_counter()
        on_gpu = cfg.device.startswith("cuda")
        readback = LossReadback(self.log, on_gpu, self.batched_readback, self.readback_s, self.readback_steps, t0)
        emit = _Emitter(self.log, on_batch, emit_s, t0,
                        self.coefficients if TABLE[cfg.recipe].family == "poly" else None,
                        lambda: self.dynamics.take_new() if self.dynamics is not None else None)
        diverged_at = None
        steps = None

        def flush():  # before parking: what ran is read back and shown
            nonlocal diverged_at
            if diverged_at is None:
                diverged_at = readback.read(time.perf_counter())
            emit(force=True)

        # overflow on the way to inf/NaN is reported as status "diverged", not as warnings
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            status, message = DONE, ""
            try:
                self.state = make_state(cfg)
                dyn = self.dynamics = Dynamics(self.state) if self.track_dynamics else None
                step_s = 0.0
                steps = CapturedSteps(cfg.recipe, self.state, GRAPH_WARMUP if cfg.cuda_graph and on_gpu else None)
                self.graph_info = steps.info
                prev = time.perf_counter()
                for t in range(cfg.iters):
                    if self._stop.is_set() or not self._wait_if_paused(flush):
                        status = STOPPED
                        break
                    if self._paused:
                        prev = time.perf_counter()  # time spent paused is not step time
                    if dyn is not None:  # its cost is in the step's time, as the budget says
                        dyn.before(t, step_s)
                    loss = next(steps)
                    if dyn is not None:
                        dyn.after()
                    now = time.perf_counter()
                    step_s = now - prev
                    bad = readback.add(t, loss, now - t0, (now - prev) * 1e3, now)
                    prev = now
                    if bad is not None:
                        diverged_at = bad
                        break
                    emit()
                if diverged_at is None:
                    diverged_at = readback.read(time.perf_counter())
                if dyn is not None and diverged_at is None and len(self.log):
                    dyn.final(len(self.log))  # the weights the run ends with (a diverged run's are not finite)
                status, message = self._outcome(status, diverged_at)
            except KeyboardInterrupt:  # Ctrl+C in the headless command: a stop that keeps the log
                status, message = STOPPED, f"interrupted after {len(self.log)} of {cfg.iters} steps"
                try:
                    readback.read(time.perf_counter())
                except Exception:
                    pass
            except MemoryError as exc:
                readback.drop()
                status = OUT_OF_MEMORY
                message = (
                    f"out of memory on {cfg.device} ({cfg.sizes_text()}, "
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
                if steps is not None:
                    steps.close()  # the graph's pool goes back; the weights live outside it
                self._run_pending_jobs()  # a check asked for as the run ended still gets its answer
                self.final_coefficients = self.coefficients()
                self._release_state(status)
                if on_gpu:
                    engine.cuda.release_thread_resources()  # the app runs each run in a thread of its own
                self._parked.set()
        emit(force=True)
        self.status, self.message = status, message
        return RunResult(
            config=cfg, status=status, message=message, log=self.log, started_at=started, device_name=dev_name,
            versions=versions(), wall_s=time.perf_counter() - t0, diverged_at=diverged_at,
            extra={**({"cuda_graph": dict(self.graph_info)} if cfg.cuda_graph else {}),
                   **({"coefficients": self.final_coefficients} if self.final_coefficients else {}),
                   **({"dynamics": self.dynamics.to_dict()} if self.dynamics is not None else {})},
        )

    def coefficients(self) -> list | None:
        """The fit's coefficients now (the polynomial family; a small read on a GPU), else None."""
        state = self.state
        if state is None:
            return self.final_coefficients
        try:
            return state.coefficients_host()
        except Exception:  # a state a failed step left half made
            return None

    def _outcome(self, status: str, diverged_at: int | None) -> tuple[str, str]:
        """The status and message of a run whose loop has ended (done, stopped, or diverged at a step)."""
        cfg = self.config
        if diverged_at is not None:
            self.log.truncate(diverged_at + 1)  # keep the first bad step, drop what ran after it
            bad_value = self.log.loss[diverged_at]
            return DIVERGED, (f"diverged at step {int(self.log.step[diverged_at])}: the loss became {bad_value} "
                              f"(learning rate {cfg.lr:g}); {_smaller_rate(cfg)}")
        if status == STOPPED:
            return STOPPED, f"stopped after {len(self.log)} of {cfg.iters} steps"
        return DONE, f"done: {len(self.log)} steps"

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


def _smaller_rate(config: RunConfig) -> str:
    """What to try after a divergence: a rate below the loss's stable edge where app.stability can say one."""
    from .stability import estimate

    try:
        edge = estimate(config)
    except (MemoryError, ValueError, np.linalg.LinAlgError):
        edge = None
    if edge is None or edge.suggested_lr() >= config.lr:
        return "try a smaller learning rate"
    return f"try a smaller learning rate, such as {edge.suggested_lr():g} (below the loss's stable edge at the start)"
