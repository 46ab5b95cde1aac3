"""``python -m benchmarks [--quick] [--sizes tiny,tutorial] [--devices cpu,cuda] [--no-app]``

Prints a table of median step times and ratios (engine / raw arrays, engine / PyTorch eager), the GPU/CPU
speedup per size, the large size's TFLOP/s against the device's measured matrix-product peak, and the app's
speed against the headless runner; writes it all as JSON under benchmarks/results/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import engine
from app.recipes import graph_recipes

from .step_time import BLOCK_WARMUP, BLOCK_WARMUP_S, RECIPE_NAMES, SIZES, matmul_peak_tflops, measure_row, run_500

RESULTS = Path(__file__).resolve().parent / "results"


def _fmt(v, spec=".3f"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        width = spec.split(".")[0]
        return "—".rjust(int(width) if width.isdigit() else 0)
    return format(v, spec)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    p.add_argument("--quick", action="store_true", help="every row once (for CI); times mean nothing")
    p.add_argument("--sizes", default=",".join(SIZES), help="comma list of " + ",".join(SIZES))
    p.add_argument("--devices", default=None, help="comma list: cpu,cuda (default: cpu, and cuda when usable)")
    p.add_argument("--recipes", default=",".join(RECIPE_NAMES))
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--no-app", action="store_true", help="skip the app-vs-headless measurement")
    p.add_argument("--out", default=None, help="JSON path (default benchmarks/results/<machine>.json)")
    args = p.parse_args(argv)

    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        print(f"unknown size(s): {', '.join(unknown)}; choose from {', '.join(SIZES)}", file=sys.stderr)
        return 2
    devices = args.devices.split(",") if args.devices else ["cpu"] + (["cuda"] if engine.cuda.is_available() else [])
    for d in devices:
        if d.startswith("cuda") and not engine.cuda.is_available():
            print(f"cuda: {engine.cuda.unavailable_reason()}", file=sys.stderr)
            return 2
    try:
        import torch

        torch_version = torch.__version__
        torch_threads = torch.get_num_threads()
        if hasattr(torch.backends, "cuda"):
            torch.backends.cuda.matmul.allow_tf32 = False  # same precision on both sides
            torch.backends.cudnn.allow_tf32 = False
    except ImportError:
        torch_version = torch_threads = None

    rows = []
    header = (f"{'size':<9} {'recipe':<9} {'device':<6} {'engine ms':>10} {'raw ms':>10} {'torch ms':>10} "
              f"{'eng/raw':>8} {'eng/torch':>9}")
    graph = engine.autograd.implementation()
    masked = engine.kernels.implementation()
    print(f"step time, {args.dtype}, medians{' (quick: one step each, not a measurement)' if args.quick else ''}; "
          f"the engine's graph recorded and walked {'in C (_cgraph.c)' if graph == 'compiled' else 'in Python'}, "
          f"the CPU's masked gradients {'in C (_ckernels.c)' if masked == 'compiled' else 'with NumPy'}")
    print(header)
    print("-" * len(header))
    started = time.perf_counter()
    for device in devices:
        for size in sizes:
            for recipe in args.recipes.split(","):
                row = measure_row(size, recipe, device, args.dtype, quick=args.quick)
                rows.append(row)
                print(f"{row.size:<9} {row.recipe:<9} {row.device:<6} {row.engine_ms:10.4f} "
                      f"{_fmt(row.raw_ms, '10.4f')} {_fmt(row.torch_ms, '10.4f')} {_fmt(row.vs_raw, '8.3f')} "
                      f"{_fmt(row.vs_torch, '9.3f')}", flush=True)
                if row.unsettled:
                    print(f"  ({row.unsettled} of {row.blocks * (2 + (row.torch_ms is not None))} blocks started "
                          "while other threads of this process were still busy: their times may be high)")

    speedups = {}
    if "cpu" in devices and len(devices) > 1:
        print("\nGPU/CPU speedup of the engine's step")
        for r in rows:
            if r.device == "cpu":
                gpu = next((g for g in rows if g.device != "cpu" and g.size == r.size and g.recipe == r.recipe), None)
                if gpu:
                    speedups[f"{r.size}/{r.recipe}"] = r.engine_ms / gpu.engine_ms
                    print(f"  {r.size:<9} {r.recipe:<9} {r.engine_ms / gpu.engine_ms:8.1f}x")

    graph_rows = [r for r in rows if r.graph_ms is not None]
    for r in rows:
        if r.graph_note:
            print(f"CUDA graph, {r.size} {r.recipe}: not measured: {r.graph_note}")
    if graph_rows:
        print("\nCUDA graph: the engine's step captured once and replayed (with a copy of its loss per step)")
        print(f"{'size':<9} {'recipe':<9} {'graph ms':>10} {'torch ms':>10} {'graph/torch':>11} {'eager/graph':>11}")
        for r in graph_rows:
            print(f"{r.size:<9} {r.recipe:<9} {r.graph_ms:10.4f} {_fmt(r.torch_ms, '10.4f')} "
                  f"{_fmt(r.graph_vs_torch, '11.3f')} {r.engine_ms / r.graph_ms:11.2f}")
    runs_500 = []
    for device in devices:
        if device != "cpu" and "tutorial" in sizes:
            for recipe in [r for r in args.recipes.split(",") if r in graph_recipes()]:
                run = run_500(recipe, device, args.dtype, quick=args.quick)
                runs_500.append(run)
                others = ", ".join(f"{k[:-3]} {run[k]:.1f} ms" for k in ("engine_ms", "torch_ms") if k in run)
                graph = (f"CUDA graph {run['graph_ms']:.1f} ms" if "graph_ms" in run
                         else f"CUDA graph not measured ({run.get('graph_note')})")
                print(f"\n{run['steps']}-step run, tutorial size, {recipe} on {device}: {graph} ({others})")

    peaks = {}
    for device in devices:
        peaks[device] = matmul_peak_tflops(device, args.dtype, quick=args.quick)
        large = [r for r in rows if r.device == device and r.size == "large"]
        for r in large:
            print(f"\n{device} large/{r.recipe}: {r.tflops:.2f} TFLOP/s achieved, matrix-product peak "
                  f"{peaks[device]:.2f} TFLOP/s ({r.tflops / peaks[device]:.0%})")

    app = None
    if not args.no_app:
        try:
            from .app_speed import measure

            app = measure(quick=args.quick)
            late = app["event_loop_lateness_ms"]
            rounds = app["app_vs_headless_rounds"]
            print(f"\napp vs headless (autograd, tutorial size, cpu): {app['app_steps_per_s']:,.0f} vs "
                  f"{app['headless_steps_per_s']:,.0f} steps/s; median of the rounds' ratios "
                  f"{app['app_vs_headless']:.1%} (rounds {min(rounds):.0%}-{max(rounds):.0%}); event-loop "
                  f"lateness median {late['median']:.2f} ms, p99 {late['p99']:.2f} ms, max {late['max']:.2f} ms")
        except ImportError as exc:
            print(f"\napp measurement skipped: {exc}")

    report = {
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": {"cpu": _cpu(), "python": platform.python_version(), "numpy": np.__version__,
                    "torch": torch_version, "gpu": _gpu_name() if any(d != "cpu" for d in devices) else None,
                    "cpu_count": os.cpu_count(), "torch_threads": torch_threads},
        # how the CPU rows were timed (benchmarks.step_time.measure_row): every library with its default threads
        "cpu_blocks": (f"each block starts once the other threads are idle (quiesce), then untimed steps: at least "
                       f"{BLOCK_WARMUP} and {BLOCK_WARMUP_S * 1e3:g} ms of them"),
        "dtype": args.dtype,
        "graph": engine.autograd.implementation(),  # "compiled" or "python": engine/autograd/_compiled.py
        "masked_writes": engine.kernels.implementation(),  # "compiled" (engine/_ckernels.c) or "python"
        "rows": [r.to_dict() for r in rows],
        "gpu_cpu_speedup": speedups,
        "runs_500": runs_500,
        "matmul_peak_tflops": peaks,
        "app": app,
        "seconds": time.perf_counter() - started,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    kind = "gpu" if any(d != "cpu" for d in devices) else "cpu"
    out = Path(args.out) if args.out else RESULTS / f"{kind}{'.quick' if args.quick else ''}.json"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1))
    except OSError as exc:
        print(f"the results could not be written to {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"\nwritten to {out}")
    return 0


def _cpu() -> str:
    from app.system import cpu_name

    return cpu_name()


def _gpu_name() -> str:
    try:
        return engine.cuda.get_device_name()
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
