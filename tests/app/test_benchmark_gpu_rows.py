"""The benchmark's GPU rows, in quick mode on the CuPy stand-in: the CUDA-graph column and the 500-step run are
measured and written (times mean nothing there; a real GPU gives the numbers)."""

from __future__ import annotations

import json

from benchmarks.__main__ import main
from benchmarks.step_time import measure_row, run_500


def test_gpu_rows_have_a_cuda_graph_time(simulated_gpu):
    row = measure_row("tiny", "autograd", "cuda", "float64", quick=True)
    assert row.graph_ms is not None and row.graph_ms > 0
    assert row.engine_ms > 0 and row.raw_ms > 0
    manual = measure_row("tiny", "tensor", "cuda", "float64", quick=True)
    assert manual.graph_ms is not None


def test_the_500_step_run_is_timed_for_the_graph_and_the_eager_engine(simulated_gpu):
    run = run_500("autograd", "cuda", "float64", quick=True)
    assert run["steps"] == 3 and run["size"] == "tutorial"
    assert run["graph_ms"] > 0 and run["engine_ms"] > 0


def test_quick_gpu_benchmark_writes_the_graph_results(simulated_gpu, tmp_path, capsys):
    out = tmp_path / "gpu.json"
    assert main(["--quick", "--devices", "cuda", "--sizes", "tiny,tutorial", "--no-app", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert {r["size"] for r in report["rows"]} == {"tiny", "tutorial"}
    assert all(r["graph_ms"] > 0 for r in report["rows"])
    assert [r["recipe"] for r in report["runs_500"]] == ["tensor", "autograd"]
    text = capsys.readouterr().out
    assert "CUDA graph: the engine's step captured once and replayed" in text
    assert "3-step run, tutorial size, autograd on cuda: CUDA graph" in text
