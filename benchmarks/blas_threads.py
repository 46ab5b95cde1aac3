"""Where does a second BLAS thread start to pay? ``python -m benchmarks.blas_threads``

Times the matrix products of the two-layer net's step (forward and backward) at the benchmark sizes, and a few
square ones, with one thread and with all of the BLAS's threads, interleaved, medians of rounds; then the
tutorial's whole NumPy step both ways. The crossing point is the smallest product (in multiply-adds) from which
all threads win; ``engine.threads.set_parallel_threshold`` takes it where the library's own choice is wrong for
a machine. Writes the table to benchmarks/results/cpu-threads.txt.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import threadpoolctl

RESULTS = Path(__file__).resolve().parent / "results"
SIZES = {"tiny": (16, 64, 32, 4), "small": (32, 500, 50, 5), "tutorial": (64, 1000, 100, 10),
         "medium-ish": (128, 2000, 200, 20)}


def step_products(n, d_in, h, d_out):
    """(m, k, n) of each product in the step: forward x w1, h w2; backward the two weight gradients and grad_h."""
    return [(n, d_in, h), (n, h, d_out), (h, n, d_out), (n, d_out, h), (d_in, n, h)]


def timed(fn, reps: int, *args) -> float:
    fn(*args)
    started = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - started) / reps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=str(RESULTS / "cpu-threads.txt"))
    args = parser.parse_args(argv)
    controller = threadpoolctl.ThreadpoolController().select(user_api="blas")
    most = max(lib.num_threads for lib in controller.lib_controllers)
    rng = np.random.default_rng(0)
    squares = {(64, 64, 64), (100, 100, 100), (128, 128, 128), (256, 256, 256)}
    shapes = sorted({s for size in SIZES.values() for s in step_products(*size)} | squares,
                    key=lambda s: s[0] * s[1] * s[2])
    lines = [f"BLAS threads: 1 against {most} (the library's default), float32, medians of {args.rounds} rounds",
             f"{'m x k x n':>18} {'mul-adds':>10} {'1 thread us':>12} {f'{most} threads us':>13} {'ratio':>6}"]
    crossing = None
    for m, k, n in shapes:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        reps = int(min(2000, max(3, 3e7 / (m * k * n))))
        times = {1: [], most: []}
        for _ in range(args.rounds):
            for t in (1, most):
                with controller.limit(limits=t):
                    times[t].append(timed(a.dot, reps, b))
        one, all_ = float(np.median(times[1])), float(np.median(times[most]))
        ratio = all_ / one
        if ratio < 0.9 and crossing is None:
            crossing = m * k * n
        elif ratio >= 0.9:
            crossing = None  # a later product where threads do not pay: the crossing is above it
        lines.append(f"{f'{m}x{k}x{n}':>18} {m * k * n:>10.3g} {one * 1e6:>12.1f} {all_ * 1e6:>13.1f} {ratio:>6.2f}")
    lines.append(f"crossing point: all threads win from {crossing:.3g} multiply-adds on" if crossing else
                 "crossing point: none (one thread is as fast at every size measured)")
    lines.append("")
    lines.append(f"the tutorial-size NumPy step (64, 1000, 100, 10), 1 thread against {most}:")
    x, y = rng.standard_normal((64, 1000), dtype=np.float32), rng.standard_normal((64, 10), dtype=np.float32)
    w1 = rng.standard_normal((1000, 100), dtype=np.float32) * 0.03
    w2 = rng.standard_normal((100, 10), dtype=np.float32)

    def step():
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h = grad_y_pred.dot(w2.T)
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)
        return grad_w1, grad_w2

    times = {1: [], most: []}
    for _ in range(args.rounds):
        for t in (1, most):
            with controller.limit(limits=t):
                times[t].append(timed(step, 300))
    one, all_ = float(np.median(times[1])), float(np.median(times[most]))
    lines.append(f"  1 thread {one * 1e3:.3f} ms, {most} threads {all_ * 1e3:.3f} ms: ratio {all_ / one:.2f}")
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text + "\n")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
