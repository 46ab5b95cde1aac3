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
    out = tmp_path / "not-yet" / "gpu.json"  # make gpu-check --out names a folder that is made as it ends
    assert main(["--quick", "--devices", "cuda", "--sizes", "tiny,tutorial", "--no-app", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert {r["size"] for r in report["rows"]} == {"tiny", "tutorial"}
    assert all(r["graph_ms"] > 0 for r in report["rows"])
    assert [r["recipe"] for r in report["runs_500"]] == ["tensor", "autograd"]
    text = capsys.readouterr().out
    assert "CUDA graph: the engine's step captured once and replayed" in text
    assert "3-step run, tutorial size, autograd on cuda: CUDA graph" in text


def test_the_raw_cupy_baseline_makes_no_host_synchronisation(simulated_gpu):
    """D9: the raw-CuPy step assigned through a boolean mask, a host sync per step that the engine does not make."""
    from benchmarks.step_time import SIZES, _raw_step

    step, last = _raw_step(SIZES["tiny"], "cuda", "float32")
    step()
    with simulated_gpu.count_syncs() as seen:
        for _ in range(3):
            step()
    assert seen == []
    assert float(last["loss"]) > 0


def test_a_graph_that_cannot_be_captured_is_reported_not_fatal(simulated_gpu, monkeypatch, capsys, tmp_path):
    """D10: a GraphCaptureError in the graph rows ended the whole benchmark."""
    import engine
    from benchmarks import step_time

    def refuse(*args):
        raise engine.cuda.GraphCaptureError("this step cannot be captured as a CUDA graph: a planted reason")

    monkeypatch.setattr(step_time, "_graph_step", refuse)
    row = measure_row("tiny", "autograd", "cuda", "float64", quick=True)
    assert row.graph_ms is None and "a planted reason" in row.graph_note and row.engine_ms > 0
    run = run_500("autograd", "cuda", "float64", quick=True)
    assert "graph_ms" not in run and "a planted reason" in run["graph_note"] and run["engine_ms"] > 0
    assert main(["--quick", "--devices", "cuda", "--sizes", "tiny", "--no-app", "--out", str(tmp_path / "b.json")]) == 0
    assert "CUDA graph, tiny tensor: not measured: this step cannot be captured" in capsys.readouterr().out


def test_results_that_cannot_be_written_are_an_error_that_names_the_file(simulated_gpu, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "gpu.json"
    assert main(["--quick", "--devices", "cuda", "--sizes", "tiny", "--recipes", "tensor", "--no-app",
                 "--out", str(out)]) == 2
    assert f"the results could not be written to {out}" in capsys.readouterr().err
