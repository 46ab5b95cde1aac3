from __future__ import annotations

import json

from app.bench_results import load_latest, newest_per_device


def _row(size, recipe, device, flops, engine_ms, raw_ms, torch_ms=None):
    return {"size": size, "recipe": recipe, "device": device, "flops": flops, "engine_ms": engine_ms,
            "raw_ms": raw_ms, "torch_ms": torch_ms}


def test_loads_full_results_sorted_and_skips_quick_and_broken(tmp_path):
    (tmp_path / "cpu.json").write_text(json.dumps({"when": "2026-01-01T00:00:00", "machine": {"cpu": "x"}, "rows": [
        _row("tutorial", "tensor", "cpu", 2e7, 0.5, 0.45, 0.9), _row("tiny", "tensor", "cpu", 1e5, 0.05, 0.02),
    ]}))
    (tmp_path / "gpu.json").write_text(json.dumps({"when": "2026-02-01T00:00:00", "machine": {}, "rows": [
        _row("tiny", "autograd", "cuda", 1e5, 0.1, 0.05)]}))
    (tmp_path / "cpu.quick.json").write_text(json.dumps({"when": "2027", "rows": []}))
    (tmp_path / "broken.json").write_text("{")
    results = load_latest(tmp_path)
    assert [r.source for r in results] == ["gpu.json", "cpu.json"]
    cpu = {c.impl: c for c in results[1].curves}
    assert cpu["engine"].sizes == ["tiny", "tutorial"]  # ordered by size, not by file order
    assert cpu["engine"].flops == [1e5, 2e7] and cpu["engine"].ms == [0.05, 0.5]
    assert cpu["torch"].sizes == ["tutorial"]  # only where PyTorch was measured


def test_no_results_is_an_empty_list(tmp_path):
    assert load_latest(tmp_path) == []


def test_a_cuda_graph_column_becomes_its_own_curve(tmp_path):
    row = _row("tutorial", "autograd", "cuda", 2e7, 0.2, 0.1, 0.3)
    row["graph_ms"] = 0.05
    (tmp_path / "gpu.json").write_text(json.dumps({"when": "2026-03-01", "rows": [row]}))
    curves = {c.impl: c for c in load_latest(tmp_path)[0].curves}
    assert set(curves) == {"engine", "graph", "raw", "torch"}
    assert curves["graph"].ms == [0.05] and curves["graph"].label == "graph autograd (cuda)"


def test_each_kind_of_device_is_shown_from_the_newest_file_that_measured_it(tmp_path):
    (tmp_path / "cpu.json").write_text(json.dumps({
        "when": "2026-11-24T00:36:38+00:00", "machine": {"cpu": "AMD EPYC", "cpu_count": 2},
        "rows": [_row("tiny", "tensor", "cpu", 1e5, 0.035, 0.022)]}))
    # an older GPU machine's file, with its own CPU's rows too: its GPU rows are shown, its CPU rows are not
    (tmp_path / "gpu.json").write_text(json.dumps({
        "when": "2026-11-23T01:47:29+00:00", "machine": {"cpu": "Xeon", "gpu": "NVIDIA H100 80GB HBM3"},
        "rows": [_row("tiny", "tensor", "cuda", 1e5, 0.28, 0.25), _row("tiny", "tensor", "cpu", 1e5, 0.09, 0.05)]}))
    shown = newest_per_device(load_latest(tmp_path))
    assert [(s.kind, s.results.source) for s in shown] == [("CPU", "cpu.json"), ("GPU", "gpu.json")]
    assert {c.device for c in shown[0].curves} == {"cpu"} and shown[0].curves[0].ms == [0.035]
    assert {c.device for c in shown[1].curves} == {"cuda"}
    assert [s.describe() for s in shown] == ["CPU: cpu.json of 2026-11-24 00:36, AMD EPYC (2 cores)",
                                             "GPU: gpu.json of 2026-11-23 01:47, NVIDIA H100 80GB HBM3"]


def test_without_gpu_results_only_the_cpu_is_shown(tmp_path):
    (tmp_path / "cpu.json").write_text(json.dumps({"when": "", "machine": {}, "rows": [
        _row("tiny", "tensor", "cpu", 1e5, 0.035, 0.022)]}))
    shown = newest_per_device(load_latest(tmp_path))
    assert [s.kind for s in shown] == ["CPU"] and shown[0].describe() == "CPU: cpu.json, a CPU"
