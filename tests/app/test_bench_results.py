from __future__ import annotations

import json

from app.bench_results import load_latest


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
