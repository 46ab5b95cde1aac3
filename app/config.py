"""RunConfig: the validated, serialisable settings of one run."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace

from .recipes import TABLE, graph_recipes

DTYPES = ("float32", "float64")
MAX_SIZE = 1 << 20  # one dimension; the memory check below is what really bounds a run
MAX_ITERS = 10_000_000
MAX_POINTS = 1 << 28  # the memory check bounds it first on most machines


class ConfigError(ValueError):
    """A setting is out of range; the message names the field and what is allowed."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class RunConfig:
    recipe: str = "tensor"
    device: str = "cpu"
    dtype: str = "float32"
    batch: int = 64
    d_in: int = 1000
    hidden: int = 100
    d_out: int = 10
    points: int = 2000  # the polynomial family: linspace(-pi, pi, points)
    lr: float = 1e-6
    iters: int = 500
    seed: int = 0
    cuda_graph: bool = False  # GPU: capture the step once as a CUDA graph and replay it (app/runner.py)

    # ------------------------------------------------------------------ validation
    def validated(self, check_device: bool = True, check_memory: bool = True) -> RunConfig:
        """This config, checked; raises :class:`ConfigError` naming the first bad field."""
        recipe = TABLE.get(self.recipe) if isinstance(self.recipe, str) else None
        if recipe is None:
            raise ConfigError("recipe", f"unknown recipe {self.recipe!r}; choose one of {', '.join(TABLE)}")
        if not isinstance(self.device, str):
            raise ConfigError("device", f"must be text such as cpu, cuda or cuda:1, got {self.device!r}")
        if not isinstance(self.dtype, str) or self.dtype not in DTYPES:
            raise ConfigError("dtype", f"unknown dtype {self.dtype!r}; choose float32 or float64")
        for name in ("batch", "d_in", "hidden", "d_out"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(name, f"must be a whole number, got {value!r}")
            if not 1 <= value <= MAX_SIZE:
                raise ConfigError(name, f"must be between 1 and {MAX_SIZE:,}, got {value:,}")
        if not isinstance(self.points, int) or isinstance(self.points, bool):
            raise ConfigError("points", f"must be a whole number, got {self.points!r}")
        if not 2 <= self.points <= MAX_POINTS:
            raise ConfigError("points", f"must be between 2 and {MAX_POINTS:,}, got {self.points:,}")
        if not isinstance(self.iters, int) or isinstance(self.iters, bool) or not 1 <= self.iters <= MAX_ITERS:
            raise ConfigError("iters", f"must be a whole number between 1 and {MAX_ITERS:,}, got {self.iters!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**63:
            raise ConfigError("seed", f"must be a whole number between 0 and 2^63-1, got {self.seed!r}")
        lr = self.lr
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr <= 0:
            raise ConfigError("lr", f"the learning rate must be a finite number above 0, got {lr!r}")
        if recipe.cpu_only and not _is_cpu(self.device):
            raise ConfigError("device", f"the {self.recipe} recipe runs on the CPU only ({recipe.title})")
        if not isinstance(self.cuda_graph, bool):
            raise ConfigError("cuda_graph", f"must be true or false, got {self.cuda_graph!r}")
        if self.cuda_graph:
            if not self.device.startswith("cuda"):
                raise ConfigError("cuda_graph", "CUDA graphs need a CUDA device: choose cuda, or turn them off")
            if not recipe.capturable:
                raise ConfigError("cuda_graph", f"the {self.recipe} recipe cannot be replayed as a CUDA graph (Adam "
                                                f"counts its steps on the host); use {', '.join(graph_recipes())}")
        if check_device:
            self.check_device()
        if check_memory:
            self.check_memory()
        return self

    def check_device(self) -> None:
        import engine

        try:
            dev = engine.device(self.device)
        except (RuntimeError, TypeError) as exc:
            raise ConfigError("device", str(exc)) from None
        if dev.type == "cuda":
            if not engine.cuda.is_available():
                raise ConfigError("device", f"{self.device} is not usable: {engine.cuda.unavailable_reason()}")
            count = engine.cuda.device_count()
            if dev.index is not None and dev.index >= count:
                raise ConfigError("device", f"{self.device} is not there: this machine has {count} CUDA "
                                            f"device{'s' if count != 1 else ''}")

    def memory_need_and_free(self) -> tuple[int, int | None]:
        """(bytes this run needs, bytes free where it runs; None when that cannot be read)."""
        return self.memory_estimate(), available_memory(self.device)

    def check_memory(self) -> None:
        need, free = self.memory_need_and_free()
        if free is not None and need > free:
            raise ConfigError(
                "sizes",
                f"this run needs about {format_bytes(need)} on {self.device}, but only {format_bytes(free)} is "
                "free; make " + ("the points" if TABLE[self.recipe].family == "poly" else "the batch, D_in, H or D_out")
                + " smaller",
            )

    # ------------------------------------------------------------------ memory
    @property
    def itemsize(self) -> int:
        return 4 if self.dtype == "float32" else 8

    def memory_estimate(self) -> int:
        """Peak bytes a run of this config holds where it runs: the larger of set-up and a training step.

        Counted from the tutorial's program at its fullest point (measured with tracemalloc on the CPU and
        matched within 5%; tests/app/test_memory_estimate.py), in elements times the dtype's size:
        * always: x and y (data) and the weights W (with the biases for nn/optim);
        * the NumPy warm-up at the weight update: the gradient and lr * gradient (2 D_in·H), grad_w2
          (H·D_out), h, h_relu, grad_h_relu, grad_h (4 N·H), y_pred and grad_y_pred (2 N·D_out); or, when
          outputs are wide, at the loss: the last step's gradients plus 4 N·D_out;
        * tensor (manual_backprop, whose activations die as it returns): at its last product, the last step's
          and this step's gradients (2 D_in·H + 2 H·D_out), 4 N·H and 2 N·D_out;
        * autograd/function: 2 D_in·H + H·D_out, 3 N·H and 3 N·D_out (saved activations and their gradients);
        * nn (each Linear one addmm, MSELoss one node): 2 D_in·H + H·D_out + 3 N·H + N·D_out;
        * optim (Adam): m, v and the .grad buffers (3 W) + 3 D_in·H (the update's temporaries) + 2 N·H + N·D_out;
        * for the graph recipes with wide outputs (D_out of the order of N or more) the peak is at the loss's
          backward instead, with the kept .grad buffers (D_in·H + H·D_out), 4 N·H and 6 N·D_out (nn: 4 and
          4; optim: 3 W, 4 N·H and 4 N·D_out);
        * set-up on the CPU: each array is drawn in float64 and converted, one at a time.
        """
        recipe = TABLE[self.recipe]
        if recipe.family == "poly":  # x and y, and the step's point-sized arrays; x, y drawn in float64 first
            weights, step = recipe.memory(self.points)
            setup = 2 * self.points * 8 // self.itemsize if not self.device.startswith("cuda") else 0
            return int((2 * self.points + weights + max(step, setup)) * self.itemsize)
        n, d_in, h, d_out = self.batch, self.d_in, self.hidden, self.d_out
        data = n * d_in + n * d_out
        weights, step = recipe.memory(n, d_in, h, d_out)  # the recipe's own formula
        setup = 0
        if not self.device.startswith("cuda"):  # the float64 draws are host memory, not the GPU's
            setup = max(n * d_in, d_in * h) * 8 // self.itemsize
        return int((data + weights + max(step, setup)) * self.itemsize)

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(unknown[0], f"unknown setting (known: {', '.join(sorted(names))})")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError("config", f"not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError("config", "expected a JSON object of settings")
        return cls.from_dict(data)

    def with_(self, **changes) -> RunConfig:
        return replace(self, **changes)

    def sizes_text(self) -> str:
        """The sizes that apply to the recipe's family, as the window and the messages show them."""
        if TABLE[self.recipe].family == "poly":
            return f"points={self.points}"
        return f"N={self.batch} D_in={self.d_in} H={self.hidden} D_out={self.d_out}"

    def label(self) -> str:
        return f"{self.recipe} · {self.device} · {self.dtype} · {self.sizes_text()} · lr={self.lr:g}"

    def short_label(self) -> str:
        """What a run is, in a legend's few words: "autograd · cpu · float32 · lr 1e-06"."""
        return f"{self.recipe} · {self.device} · {self.dtype} · lr {self.lr:g}"

    def settings_text(self) -> str:
        """The run's settings as the runs list shows them."""
        return (f"{self.recipe}, {self.dtype}, {self.sizes_text()}, lr={self.lr:g}, seed={self.seed}, "
                f"{self.iters} iters")


def _is_cpu(device) -> bool:
    """'cpu' and 'cpu:0' are the CPU."""
    return isinstance(device, str) and device.strip() in ("cpu", "cpu:0")


def available_memory(device: str) -> int | None:
    """Free bytes where a run on ``device`` would allocate (None when it cannot be read)."""
    if device.startswith("cuda"):
        import engine

        try:
            free, _ = engine.cuda.mem_get_info(device)
            # the engine's pool keeps freed blocks cached: those are free to this process too
            return free + engine.cuda.memory_reserved(device) - engine.cuda.memory_allocated(device)
        except Exception:
            return None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_rate(steps_per_s: float) -> str:
    """Steps per second as a person reads them: "1,641", "12", "0.05" (a slow run's steps are not "0"); "n/a"
    when there is no finite rate."""
    if not math.isfinite(steps_per_s) or steps_per_s < 0:
        return "n/a"
    if steps_per_s >= 10:
        return f"{steps_per_s:,.0f}"
    return f"{steps_per_s:.2g}" if steps_per_s >= 1 else f"{steps_per_s:.1g}" if steps_per_s > 0 else "0"


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
