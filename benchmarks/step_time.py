"""Step-time benchmark: the engine's training step against the same step on raw arrays and in PyTorch eager.

For every row (size x recipe x device) the implementations run interleaved, block by block, in the same
process: the engine (the app's own recipe generator), the step written by hand on raw NumPy/CuPy arrays,
and PyTorch eager with the same code (when importable). Warm-up first, then medians of the per-step
time of each block; on a GPU every block is bracketed by device synchronisations. On the CPU every block
starts once the threads of the block before have stopped spinning (:func:`quiesce`) and after a few untimed
steps, so that no library is timed while another's BLAS or OpenMP workers hold the cores.

On a GPU a fourth implementation, ``graph``, is the engine's step captured as a CUDA graph (after the
runner's warm-up steps) and replayed, with a copy of its loss per step, as the runner does with
``--cuda-graph``; :func:`run_500` times a whole 500-step run that way.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

import engine
from app.capture import GRAPH_WARMUP, CapturedSteps
from app.config import RunConfig
from app.recipes import TABLE, TrainState, graph_recipes, host_draws, make_state

SIZES = {
    "tiny": (16, 64, 32, 4),
    "tutorial": (64, 1000, 100, 10),
    "medium": (256, 4096, 1024, 256),
    "large": (1024, 8192, 4096, 1024),
}
# learning rates that do not diverge at each size (the tutorial's 1e-6 overflows at the larger ones)
LEARNING_RATES = {"tiny": 1e-4, "tutorial": 1e-6, "medium": 1e-8, "large": 1e-10}
RECIPE_NAMES = ("tensor", "autograd")


def step_flops(size) -> float:
    """Multiply-adds x2 of one manual/autograd step: forward, grad_w2, grad_h_relu, grad_w1."""
    n, d_in, h, d_out = size
    return 2.0 * (n * d_in * h + n * h * d_out) + 2.0 * (h * n * d_out + n * d_out * h + d_in * n * h)


@dataclass
class Row:
    size: str
    recipe: str
    device: str
    dtype: str
    engine_ms: float
    raw_ms: float | None
    torch_ms: float | None
    blocks: int
    steps_per_block: int
    final_loss: float
    # medians of the per-round ratios (each round times every implementation back to back, so a ratio of
    # neighbours cancels the machine's drift between rounds); None: fall back to the ratio of medians
    paired_vs_raw: float | None = None
    paired_vs_torch: float | None = None
    graph_ms: float | None = None  # GPU: the engine's step replayed as a CUDA graph
    graph_vs_torch: float | None = None  # median of the rounds' graph / PyTorch eager
    unsettled: int = 0  # CPU blocks timed although other threads were still busy after quiesce's wait
    graph_note: str | None = None  # GPU: why the step could not be captured, when it could not

    @property
    def vs_raw(self) -> float | None:
        if self.paired_vs_raw is not None:
            return self.paired_vs_raw
        return self.engine_ms / self.raw_ms if self.raw_ms else None

    @property
    def vs_torch(self) -> float | None:
        if self.paired_vs_torch is not None:
            return self.paired_vs_torch
        return self.engine_ms / self.torch_ms if self.torch_ms else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(vs_raw=self.vs_raw, vs_torch=self.vs_torch, tflops=self.tflops, flops=step_flops(SIZES[self.size]),
                 shape=list(SIZES[self.size]))
        return d

    @property
    def tflops(self) -> float:
        return step_flops(SIZES[self.size]) / (self.engine_ms * 1e-3) / 1e12


# --------------------------------------------------------------------------- implementations
# All three run the app's own recipe code: the NumPy warm-up on raw NumPy or CuPy arrays, and the tensor /
# autograd recipes on engine tensors or on PyTorch tensors, all from the same host draws.


def _config(size, recipe, device, dtype) -> RunConfig:
    return RunConfig(recipe=recipe, device=device, dtype=dtype, batch=size[0], d_in=size[1], hidden=size[2],
                     d_out=size[3], lr=LEARNING_RATES[_size_name(size)])


def _stepper(steps):
    last = {}

    def step():
        last["loss"] = next(steps)

    return step, last


def _graph_step(size, recipe, device, dtype):
    """The engine's step captured once as a CUDA graph (the runner's own :class:`CapturedSteps`), then one replay
    and a copy of its loss per step. A step that cannot be captured raises GraphCaptureError."""
    steps = CapturedSteps(recipe, make_state(_config(size, recipe, device, dtype)), GRAPH_WARMUP, strict=True)
    for _ in range(GRAPH_WARMUP + 1):  # the warm-up steps, then the capture (which runs it once)
        next(steps)
    last = {"steps": steps}

    def step():
        last["loss"] = next(steps)

    return step, last


def run_500(recipe: str = "autograd", device: str = "cuda", dtype: str = "float32", size_name: str = "tutorial",
            steps: int = 500, quick: bool = False) -> dict:
    """Milliseconds of a whole ``steps``-step run replayed as a CUDA graph: launches, the per-step loss copies and
    the one readback at the end, after the warm-up and the capture (and, for reference, of the same run uncaptured
    and in PyTorch eager, each with its losses read back once at the end)."""
    if quick:
        steps = 3
    size = SIZES[size_name]
    cupy = engine.backend.get_cupy()
    sync = _sync_for(device)
    out = {"steps": steps, "size": size_name, "recipe": recipe, "dtype": dtype}
    impls = {}
    try:
        impls["graph"] = _graph_step(size, recipe, device, dtype)
    except engine.cuda.GraphCaptureError as exc:
        out["graph_note"] = str(exc)
    impls["engine"] = _engine_step(size, recipe, device, dtype)
    torch = _torch()
    if torch is not None and torch.cuda.is_available():
        impls["torch"] = _torch_step(torch, size, recipe, device, dtype)
    for name, (step, last) in impls.items():
        for _ in range(3):
            step()
        sync()
        losses = []
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
            losses.append(last["loss"])
        if name == "torch":
            torch.stack(losses).cpu()
        else:
            cupy.stack([v._data if isinstance(v, engine.Tensor) else v for v in losses]).get()
        sync()
        out[f"{name}_ms"] = (time.perf_counter() - t0) * 1e3
    return out


def _raw_step(size, device, dtype):
    """The tutorial's manual step on raw NumPy (CPU) or CuPy (GPU) arrays."""
    cfg = _config(size, "numpy", "cpu", dtype)
    draws = host_draws(cfg)
    xp = np if device == "cpu" else engine.backend.get_cupy()
    state = TrainState(cfg, *(xp.asarray(draws[k].astype(dtype)) for k in ("x", "y", "w1", "w2")))
    return _stepper(TABLE["numpy"].step(state))


def _engine_step(size, recipe, device, dtype):
    return _stepper(TABLE[recipe].step(make_state(_config(size, recipe, device, dtype))))


def _torch_step(torch, size, recipe, device, dtype):
    cfg = _config(size, recipe, "cpu", dtype)
    draws = host_draws(cfg.with_(recipe="tensor"))
    dev = "cuda" if device.startswith("cuda") else "cpu"
    grad = recipe == "autograd"

    def put(name, requires_grad=False):
        return torch.tensor(draws[name], dtype=getattr(torch, dtype), device=dev, requires_grad=requires_grad)

    state = TrainState(cfg, put("x"), put("y"), put("w1", grad), put("w2", grad))
    steps = TABLE["autograd"].step(state, lib=torch) if grad else TABLE["tensor"].step(state)
    return _stepper(steps)


def _size_name(size) -> str:
    for name, s in SIZES.items():
        if tuple(s) == tuple(size):
            return name
    raise KeyError(size)


def _sync_for(device):
    if device == "cpu":
        return lambda: None
    cupy = engine.backend.get_cupy()
    torch = _torch()
    if torch is not None and torch.cuda.is_available():
        return lambda: (cupy.cuda.runtime.deviceSynchronize(), torch.cuda.synchronize())
    return cupy.cuda.runtime.deviceSynchronize


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _other_threads_cpu_ns() -> int | None:
    """CPU time used so far by this process's threads other than the caller's (Linux), else None."""
    me = str(threading.get_native_id())
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    for tid in tasks:
        if tid == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended since the listing
    return total


def quiesce(max_wait: float = 1.0, window: float = 0.005, busy_fraction: float = 0.05) -> bool:
    """Wait until the process's other threads are idle: True when they are, False after ``max_wait`` seconds.

    After a parallel region, BLAS and OpenMP worker threads spin on their cores waiting for more work (OpenBLAS
    for 2**28 clock cycles, about a tenth of a second; PyTorch's OpenMP threads too). Timed right after
    another library's block, an implementation would share the cores with those spinners: measured on this
    2-core machine, PyTorch's tutorial-size step ran 2-3x slower interleaved with NumPy than alone. So each
    block starts once the threads left over from the previous one have gone to sleep, and every library runs
    with its own default thread settings. Where the per-thread CPU times cannot be read, it waits ``max_wait``/5.
    """
    before = _other_threads_cpu_ns()
    if before is None:
        time.sleep(max_wait / 5)
        return True
    deadline = time.perf_counter() + max_wait
    while True:
        time.sleep(window)
        now = _other_threads_cpu_ns()
        if now - before < busy_fraction * window * 1e9:
            return True
        if time.perf_counter() > deadline:
            return False
        before = now


# untimed steps at the start of each CPU block: the first step after a pause runs 2-3x slower (measured here:
# ~1 ms against a steady 0.33-0.46 ms at the tutorial size, for every implementation) while sleeping threads
# wake and caches refill, and the second a little; the transient is a matter of time more than of steps, so
# at the tiny size (~0.05 ms a step) the warm-up runs for a few milliseconds
BLOCK_WARMUP = 2
BLOCK_WARMUP_S = 0.005


def _rewarm(step):
    """Untimed steps: at least BLOCK_WARMUP of them, for at least BLOCK_WARMUP_S seconds."""
    end = time.perf_counter() + BLOCK_WARMUP_S
    n = 0
    while n < BLOCK_WARMUP or time.perf_counter() < end:
        step()
        n += 1


def plan(size_name: str, device: str, quick: bool) -> tuple[int, int, int]:
    """(warm-up steps, blocks, steps per block)."""
    if quick:
        return 1, 1, 1
    if device == "cpu":
        return {"tiny": (50, 31, 100), "tutorial": (10, 41, 15), "medium": (2, 7, 2), "large": (1, 3, 1)}[size_name]
    return {"tiny": (50, 15, 200), "tutorial": (50, 15, 200), "medium": (10, 11, 50), "large": (3, 7, 5)}[size_name]


def measure_row(size_name: str, recipe: str, device: str, dtype: str = "float32", quick: bool = False) -> Row:
    size = SIZES[size_name]
    warm, blocks, per_block = plan(size_name, device, quick)
    impls = {"engine": _engine_step(size, recipe, device, dtype),
             "raw": _raw_step(size, device, dtype)}
    torch = _torch()
    if torch is not None and (device == "cpu" or torch.cuda.is_available()):
        impls["torch"] = _torch_step(torch, size, recipe, device, dtype)
    graph_note = None
    if device != "cpu" and recipe in graph_recipes():
        try:
            impls["graph"] = _graph_step(size, recipe, device, dtype)
        except engine.cuda.GraphCaptureError as exc:  # the row is still measured; the table says why not this
            graph_note = str(exc)
    sync = _sync_for(device)
    for step, _ in impls.values():
        for _ in range(warm):
            step()
    sync()
    times = {name: [] for name in impls}
    cpu = device == "cpu" and not quick
    unsettled = 0
    for _ in range(blocks):  # interleaved: every implementation once per round
        for name, (step, _) in impls.items():
            if cpu:
                if not quiesce():  # no other library's threads still spinning on the cores
                    unsettled += 1
                _rewarm(step)  # and this one's threads awake again, its arrays in cache
            sync()
            t0 = time.perf_counter()
            for _ in range(per_block):
                step()
            sync()
            times[name].append((time.perf_counter() - t0) / per_block)
    med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    paired = {name: statistics.median(e / o for e, o in zip(times["engine"], ts))
              for name, ts in times.items() if name != "engine"}
    graph_vs_torch = None
    if "graph" in times and "torch" in times:
        graph_vs_torch = statistics.median(g / o for g, o in zip(times["graph"], times["torch"]))
    loss = impls["engine"][1]["loss"]
    loss = float(loss.item() if hasattr(loss, "item") else loss)
    return Row(size_name, recipe, device, dtype, med["engine"], med.get("raw"), med.get("torch"), blocks,
               per_block, loss, paired.get("raw"), paired.get("torch"), med.get("graph"), graph_vs_torch,
               unsettled, graph_note)


def matmul_peak_tflops(device: str, dtype: str = "float32", n: int | None = None, quick: bool = False) -> float:
    """Achieved TFLOP/s of a square matrix product, the yardstick for the large size."""
    if device == "cpu":
        n = n or (512 if quick else 2048)
        a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
        a @ a
        reps = 1 if quick else 5
        t0 = time.perf_counter()
        for _ in range(reps):
            a @ a
        return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e12
    cupy = engine.backend.get_cupy()
    n = n or (1024 if quick else 8192)
    a = cupy.random.standard_normal((n, n), dtype=dtype)
    a @ a
    cupy.cuda.runtime.deviceSynchronize()
    reps = 1 if quick else 20
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ a
    cupy.cuda.runtime.deviceSynchronize()
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e12
