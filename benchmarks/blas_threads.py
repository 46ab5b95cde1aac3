"""Where does a second BLAS thread start to pay? ``python -m benchmarks.blas_threads``

Times the matrix products of the two-layer net's step (forward and backward) at the benchmark sizes, and a few
square ones, with one thread and with all of the BLAS's threads, interleaved, medians of rounds; then the
tutorial's whole NumPy step both ways. The crossing point is the smallest product (in multiply-adds) from which
all threads win; ``engine.threads.set_parallel_threshold`` takes it where the library's own choice is wrong for
a machine.

Three more tables time what the engine's CPU products and masked assignment choose between: ``ndarray.dot``
against ``np.matmul`` by output size (dot zero-fills its output first; ``engine.threads.MATMUL_FROM``), and
NumPy's masked assignment ``g[mask] = 0`` against ``engine.kernels.zero_where`` by element count
(``ZERO_WHERE_FROM``), and the ReLU ``np.maximum(x, 0)`` against ``engine.kernels.relu``. Writes the tables to
benchmarks/results/cpu-threads.txt.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import threadpoolctl

from engine import kernels, threads

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
    lines += [""] + dot_against_matmul(rng, shapes, args.rounds)
    lines += [""] + masked_zeroing(rng, args.rounds)
    lines += [""] + relu_against_maximum(rng, args.rounds)
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text + "\n")
    print(f"\nwritten to {args.out}")
    return 0


def _medians(cases: dict, rounds: int, reps: int) -> dict:
    times = {name: [] for name in cases}
    for _ in range(rounds):  # interleaved
        for name, fn in cases.items():
            times[name].append(timed(fn, reps))
    return {name: float(np.median(ts)) for name, ts in times.items()}


def dot_against_matmul(rng, shapes, rounds: int) -> list[str]:
    """ndarray.dot against np.matmul at the library's default threads, the left operand transposed as in the
    backward's a.T @ grad (and the forward's layout for comparison)."""
    lines = [f"ndarray.dot against np.matmul, float32, default threads, medians of {rounds} rounds "
             f"(the engine uses matmul from {threads.MATMUL_FROM} outputs)",
             f"{'m x k x n':>18} {'outputs':>9} {'layout':>8} {'dot us':>9} {'matmul us':>10} {'ratio':>6}"]
    for m, k, n in sorted(shapes, key=lambda s: s[0] * s[2]):
        b = rng.standard_normal((k, n), dtype=np.float32)
        for layout in ("C", "a.T"):
            a = rng.standard_normal((m, k), dtype=np.float32)
            if layout == "a.T":
                a = np.ascontiguousarray(a.T).T
            reps = int(min(2000, max(3, 3e7 / (m * k * n))))
            med = _medians({"dot": lambda a=a, b=b: a.dot(b), "matmul": lambda a=a, b=b: np.matmul(a, b)}, rounds, reps)
            lines.append(f"{f'{m}x{k}x{n}':>18} {m * n:>9} {layout:>8} {med['dot'] * 1e6:>9.1f} "
                         f"{med['matmul'] * 1e6:>10.1f} {med['matmul'] / med['dot']:>6.2f}")
    return lines


def masked_zeroing(rng, rounds: int) -> list[str]:
    """g[mask] = 0 with a ReLU's mask (about half true, at random): NumPy's assignment against zero_where."""
    lines = [f"g[h < 0] = 0, float32, a random half masked, medians of {rounds} rounds "
             f"(the engine ANDs bits from {kernels.ZERO_WHERE_FROM} elements)",
             f"{'elements':>10} {'numpy us':>9} {'zero_where us':>14} {'ratio':>6}"]
    for size in (256, 512, 1024, 2048, 4096, 6400, 100_000):
        g = rng.standard_normal(size, dtype=np.float32)
        mask = rng.standard_normal(size, dtype=np.float32) < 0
        view = g.view(np.int32)

        def numpy_way(g=g, mask=mask):
            g[mask] = 0

        def anded(view=view, mask=mask):  # zero_where's two calls, without its checks (it declines below 2048)
            np.bitwise_and(view, np.subtract(mask, 1, dtype=np.int32), out=view)

        reps = int(min(3000, max(20, 3e6 / size)))
        med = _medians({"numpy": numpy_way, "and": anded}, rounds, reps)
        lines.append(f"{size:>10} {med['numpy'] * 1e6:>9.2f} {med['and'] * 1e6:>14.2f} "
                     f"{med['and'] / med['numpy']:>6.2f}")
    return lines


def relu_against_maximum(rng, rounds: int) -> list[str]:
    """np.maximum(x, 0) (NumPy's loop for an array and a number) against kernels.relu (against zeros)."""
    lines = [f"clamp(min=0), float32, medians of {rounds} rounds: np.maximum(x, 0) against engine.kernels.relu",
             f"{'shape':>12} {'maximum us':>11} {'relu us':>8} {'ratio':>6}"]
    for shape in ((16, 32), (64, 100), (128, 200), (1000, 100), (2000, 200)):
        x = rng.standard_normal(shape, dtype=np.float32)
        reps = int(min(3000, max(20, 3e6 / x.size)))
        med = _medians({"max": lambda x=x: np.maximum(x, 0), "relu": lambda x=x: kernels.relu(x)}, rounds, reps)
        lines.append(f"{'x'.join(map(str, shape)):>12} {med['max'] * 1e6:>11.2f} {med['relu'] * 1e6:>8.2f} "
                     f"{med['relu'] / med['max']:>6.2f}")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
