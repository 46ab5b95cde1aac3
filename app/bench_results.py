"""The latest benchmark results (``make bench`` writes them under benchmarks/results/), for the app's panel."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"
SIZE_ORDER = ("tiny", "tutorial", "medium", "large")


@dataclass
class Curve:
    label: str
    device: str
    recipe: str
    impl: str  # engine | graph (the engine's step replayed as a CUDA graph) | raw | torch
    sizes: list  # size names, in SIZE_ORDER
    flops: list  # per step, for the x axis
    ms: list


@dataclass
class BenchResults:
    source: str
    when: str
    machine: dict
    curves: list
    rows: list


def load_latest(folder: Path = RESULTS) -> list[BenchResults]:
    """Every full (non-quick) result file, newest first; a file that cannot be read is skipped."""
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".quick.json"):
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = data["rows"]
        except (OSError, ValueError, KeyError):
            continue
        curves = []
        keys = sorted({(r["device"], r["recipe"]) for r in rows})
        for device, recipe in keys:
            mine = sorted((r for r in rows if r["device"] == device and r["recipe"] == recipe),
                          key=lambda r: SIZE_ORDER.index(r["size"]) if r["size"] in SIZE_ORDER else 99)
            for impl, field in (("engine", "engine_ms"), ("graph", "graph_ms"), ("raw", "raw_ms"),
                                ("torch", "torch_ms")):
                points = [(r["size"], r["flops"], r[field]) for r in mine if r.get(field) and r.get("flops")]
                if points:
                    curves.append(Curve(f"{impl} {recipe} ({device})", device, recipe, impl,
                                        [p[0] for p in points], [p[1] for p in points], [p[2] for p in points]))
        out.append(BenchResults(path.name, data.get("when", ""), data.get("machine", {}), curves, rows))
    out.sort(key=lambda r: r.when, reverse=True)
    return out


@dataclass
class Shown:
    """What the panel plots for one kind of device: the newest file that measured it, and its curves there."""

    kind: str  # "CPU" or "GPU"
    results: BenchResults
    curves: list

    def describe(self) -> str:
        """``CPU: cpu.json of 2026-11-24 00:36, AMD EPYC (2 cores)``."""
        machine = self.results.machine
        if self.kind == "GPU":
            what = machine.get("gpu") or "a GPU"
        else:
            what = machine.get("cpu") or "a CPU"
            if machine.get("cpu_count"):
                what += f" ({machine['cpu_count']} cores)"
        when = self.results.when.replace("T", " ")[:16]
        return f"{self.kind}: {self.results.source}" + (f" of {when}" if when else "") + f", {what}"


def newest_per_device(results: list[BenchResults]) -> list[Shown]:
    """For the CPU and for the GPU, the curves of the newest file (``results`` is newest first) with rows of that
    kind: two machines' CPU rows on one plot, in one colour, would read as one machine's."""
    shown = []
    for kind, is_kind in (("CPU", lambda d: d == "cpu"), ("GPU", lambda d: d != "cpu")):
        for res in results:
            curves = [c for c in res.curves if is_kind(c.device)]
            if curves:
                shown.append(Shown(kind, res, curves))
                break
    return shown
