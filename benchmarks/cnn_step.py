"""A small CNN's training step on the CPU, the engine against PyTorch: ``python -m benchmarks.cnn_step``

The step: Conv2d(3, 16, 3) - BatchNorm2d - ReLU - MaxPool2d(2) - Conv2d(16, 32, 3) - ReLU - MaxPool2d(2) - Linear
to 10 classes, cross-entropy, SGD, on a batch of 32 images of 3x32x32. Then the parts the engine records as one
node each, forward and backward: 2x2 max pooling (in C where ``engine/_ckernels.c`` was built), bilinear
upsampling to twice the size, reflect padding. Both libraries with their default threads, float32, each in
processes of its own (alternating), the median of rounds (:mod:`benchmarks.gpt_step`'s way). Writes
benchmarks/results/cpu-cnn-step.txt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import paired
from .gpt_step import _lib, _median_ms

RESULTS = Path(__file__).resolve().parent / "results"
BATCH = 32
PARTS = (("maxpool", "MaxPool2d(2) f+b, 32x16x32x32"), ("upsample", "bilinear x2 f+b, 8x32x32x32"),
         ("reflect", "reflect pad 2 f+b, 8x32x32x32"))


def _stepper(lib, x, y):
    nn = lib.nn
    lib.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(32 * 8 * 8, 10))
    opt = lib.optim.SGD(net.parameters(), lr=0.01)
    images, labels = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(net(images), labels).backward()
        opt.step()

    return step


def _one_library(name: str, rounds: int, reps: int) -> dict:
    """The step's and the parts' medians (ms) for one library, in a process of its own."""
    lib = _lib(name)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    pooled = lib.tensor(rng.standard_normal((32, 16, 32, 32)).astype(np.float32), requires_grad=True)
    maps = lib.tensor(rng.standard_normal((8, 32, 32, 32)).astype(np.float32), requires_grad=True)
    F = lib.nn.functional
    out = _median_ms({"step": _stepper(lib, x, y)}, rounds, reps)
    out |= _median_ms({"maxpool": lambda: F.max_pool2d(pooled, 2).sum().backward(),
                       "upsample": lambda: F.interpolate(maps, scale_factor=2, mode="bilinear").sum().backward(),
                       "reflect": lambda: F.pad(maps, (2, 2, 2, 2), mode="reflect").sum().backward()},
                      rounds, reps)
    out["threads"] = lib.get_num_threads()
    out["version"] = getattr(lib, "__version__", "")
    return out


def measure(rounds: int = 5, processes: int = 2) -> list[str]:
    """Each library ``processes`` times in a child process of its own, alternating; the median of those."""
    runs = paired.children("benchmarks.cnn_step", rounds, processes)
    return [f"A small CNN's SGD step, CPU float32: two conv-relu-maxpool stages (the first with batch norm) and a "
            f"linear head, a batch of {BATCH} images of 3x32x32",
            f"(each library in its own process, {processes} processes each, alternating; in each the median of "
            f"{rounds} rounds)"] + paired.table(runs, (("step", "step (forward, backward, SGD)"),) + PARTS)


def main(argv=None) -> int:
    return paired.main(argv, "python -m benchmarks.cnn_step", __doc__, RESULTS / "cpu-cnn-step.txt", _one_library,
                       lambda rounds: measure(rounds))


if __name__ == "__main__":
    raise SystemExit(main())
