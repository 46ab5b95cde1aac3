"""The tutorial's autograd step with glibc's malloc as it comes and as the engine sets it: ``python -m
benchmarks.malloc_layout``

engine/_malloc.py fixes glibc's mmap and trim thresholds at import. Without that, whether a step's freed arrays go
back to the system (to be faulted in again at the next step) depends on where the process's objects happen to lie:
the same step is fast or a third slower from one unrelated change to the next. This shows it in one run: each
"layout" is a fresh process that first makes a few throw-away classes (which moves what comes after it in memory),
then times the step (N, D_in, H, D_out = 64, 1000, 100, 10, float32, the median of rounds of 300 steps), once with
``GRADSCOPE_MALLOC=system`` (malloc as it comes) and once as the engine sets it; raw NumPy's hand-written step is
timed beside them, as the ratio's yardstick. Writes benchmarks/results/cpu-malloc.txt.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import os, sys, time
_pad = [type("P%d" % i, (), {"a": i})().a for i in range(int(sys.argv[1]))]
import numpy as np
import engine as torch
N, D_in, H, D_out = 64, 1000, 100, 10
torch.manual_seed(0)
x, y = torch.randn(N, D_in), torch.randn(N, D_out)
w1, w2 = torch.randn(D_in, H, requires_grad=True), torch.randn(H, D_out, requires_grad=True)
def step():
    loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w1.sub_(1e-6 * w1.grad); w2.sub_(1e-6 * w2.grad)
        w1.grad.zero_(); w2.grad.zero_()
xa, ya, v1, v2 = x.numpy(), y.numpy(), w1.detach().numpy().copy(), w2.detach().numpy().copy()
def numpy_step():
    global v1, v2
    h = xa.dot(v1); h_relu = np.maximum(h, 0); y_pred = h_relu.dot(v2)
    grad_y_pred = 2.0 * (y_pred - ya)
    grad_w2 = h_relu.T.dot(grad_y_pred); grad_h = grad_y_pred.dot(v2.T); grad_h[h < 0] = 0
    grad_w1 = xa.T.dot(grad_h)
    v1 = v1 - 1e-6 * grad_w1; v2 = v2 - 1e-6 * grad_w2
def timed(fn, rounds):
    for _ in range(100): fn()
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(300): fn()
        out.append((time.perf_counter() - t) / 300 * 1e6)
    return sorted(out)[len(out) // 2]
rounds = int(sys.argv[2])
print(timed(step, rounds), timed(numpy_step, rounds), torch._malloc.applied)
"""


def run(layout: int, system: bool, rounds: int) -> tuple[float, float, bool]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if system:
        env["GRADSCOPE_MALLOC"] = "system"
    else:
        env.pop("GRADSCOPE_MALLOC", None)
    done = subprocess.run([sys.executable, "-c", CHILD, str(layout), str(rounds)], capture_output=True, text=True,
                          env=env, timeout=600, check=True)
    engine_us, numpy_us, applied = done.stdout.split()
    return float(engine_us), float(numpy_us), applied == "True"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", type=int, default=8, help="how many layouts (processes) each way")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    lines = [f"The tutorial's autograd step, glibc malloc as it comes and as the engine sets it "
             f"({platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()})", "",
             f"{'layout':>6}  {'malloc as it comes':>20}  {'as the engine sets it':>22}  {'raw NumPy step':>15}"]
    ratios = {True: [], False: []}
    for layout in range(args.layouts):
        pad = layout * 3
        plain, numpy_a, applied_a = run(pad, True, args.rounds)
        fixed, numpy_b, applied_b = run(pad, False, args.rounds)
        assert not applied_a, "GRADSCOPE_MALLOC=system still set the thresholds"
        if not applied_b:
            lines.append("(this system's malloc is not glibc's: nothing set, the two columns measure the same)")
        ratios[True].append(plain / numpy_a)
        ratios[False].append(fixed / numpy_b)
        lines.append(f"{pad:>6}  {plain:>13.0f} us {plain / numpy_a:4.2f}x  {fixed:>15.0f} us {fixed / numpy_b:4.2f}x"
                     f"  {numpy_b:>12.0f} us")
    for system, label in ((True, "as it comes"), (False, "as the engine sets it")):
        r = ratios[system]
        lines.append(f"{label}: engine step / raw NumPy step {min(r):.2f} to {max(r):.2f} "
                     f"(median {statistics.median(r):.2f})")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "cpu-malloc.txt").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
