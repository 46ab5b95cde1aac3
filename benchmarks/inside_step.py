"""What looking inside the step costs: ``python -m benchmarks.inside_step [--rounds 7] [--iters 2000]``

* **Weights tracking** (app.dynamics): whole runs of each recipe with the sampling on and off, alternating, in
  one process; the median of the rounds' time ratios (on / off). The budget is 3% of the run's time.
* **Profile** (engine.profiler via app.inspect_step.profile_steps): the rows' step (without the profiler's own
  bookkeeping) against the plain step measured in between, per recipe: how well the per-op times add up to the
  step as it runs unprofiled (the issue asks within 10%).

Writes the table to benchmarks/results/inside-step-<device>.txt.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from app.config import RunConfig
from app.inspect_step import profile_steps
from app.runner import Runner

RESULTS = Path(__file__).resolve().parent / "results"
RECIPES = ("tensor", "autograd", "function", "nn", "optim", "poly-autograd", "poly-function", "poly-dynamic")


def run_s(config: RunConfig, dynamics: bool) -> tuple[float, float | None]:
    runner = Runner(config, dynamics=dynamics)
    t0 = time.perf_counter()
    result = runner.run()
    wall = time.perf_counter() - t0
    return wall, result.extra.get("dynamics", {}).get("cost")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    lines = [f"inside the step: costs on {args.device} (tutorial sizes; {args.rounds} rounds, {args.iters} steps)",
             "", f"{'recipe':16s} {'tracking on/off':>16s} {'samples cost':>13s} {'profile rows/plain':>19s}",
             "-" * 68]
    print("\n".join(lines), flush=True)
    for recipe in args.recipes.split(","):
        config = RunConfig(recipe=recipe, device=args.device, iters=args.iters).validated()
        ratios, costs = [], []
        run_s(config, True)  # warm: imports, first allocations
        for _ in range(args.rounds):
            off, _ = run_s(config, False)
            on, cost = run_s(config, True)
            ratios.append(on / off)
            costs.append(cost)
        agreements = [profile_steps(config).agreement for _ in range(3)]
        line = (f"{recipe:16s} {statistics.median(ratios):16.3f} {100 * statistics.median(costs):12.1f}% "
                f"{statistics.median(agreements):19.3f}")
        print(line, flush=True)
        lines.append(line)
    lines += ["", "tracking on/off: the median of the rounds' wall-time ratios of whole runs (1.000: free);",
              "samples cost: the time the samples took over the run's time, as the run measures it;",
              "profile rows/plain: the profiled step less the profiler's own bookkeeping, over the plain step",
              "(median of three profiles; 1.000: the per-op times add up to the step exactly)."]
    out = Path(args.out) if args.out else RESULTS / f"inside-step-{args.device.split(':')[0]}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
