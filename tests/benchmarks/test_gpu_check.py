"""``make gpu-check``: one line and exit 0 without a GPU; its dry run (the CuPy stand-in playing the GPU) runs every
section that needs no device, without PySide6 or pytest-qt, and writes its report. Only a real GPU's report says
anything about a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import gpu_check

ROOT = Path(__file__).resolve().parents[2]

# Makes PySide6, shiboken6, pyqtgraph, pytest-qt, ui and app.worker unimportable in a child Python, and notes
# every attempt in $BLOCKED_LOG: what a bare GPU machine (no PySide6, no pytest-qt) would refuse.
SITECUSTOMIZE = textwrap.dedent("""
    import os, sys
    BLOCKED = ("PySide6", "shiboken6", "pyqtgraph", "pytestqt", "ui", "app.worker")
    class Block:
        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                with open(os.environ["BLOCKED_LOG"], "a") as fh:
                    fh.write(name + "\\n")
                raise ImportError("blocked on this 'GPU machine': " + name)
    sys.meta_path.insert(0, Block())
""")


def _bare_machine_env(tmp_path: Path) -> dict:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "blocked.log"
    log.write_text("")
    return dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{ROOT}", BLOCKED_LOG=str(log))


def test_without_a_gpu_it_says_so_in_one_line_and_exits_0(tmp_path):
    if gpu_check.gpu_listed():
        pytest.skip("this machine has a GPU")
    out = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--out", str(tmp_path / "r")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines() == [
        "gpu-check: no NVIDIA GPU on this machine (nvidia-smi lists none); nothing checked. --dry-run checks this "
        "script on the CuPy stand-in."]
    assert not (tmp_path / "r").exists()


def test_the_dry_run_runs_every_section_on_a_machine_without_pyside6(tmp_path):
    env = _bare_machine_env(tmp_path)
    out = subprocess.run([sys.executable, "-m", "benchmarks.gpu_check", "--dry-run", "--quick", "--sections",
                          "1,3,4,5,6,7,8,9", "--out", str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "blocked.log").read_text() == ""  # never reached for Qt, ui or the worker
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    status = {s["name"].split(".")[0]: s["status"] for s in report["sections"]}
    assert status == {"1": "pass", "3": "pass", "4": "pass", "5": "pass", "6": "skip", "7": "pass", "8": "pass",
                      "9": "skip"}
    text = (tmp_path / "r" / "report.txt").read_text()
    assert text.startswith("gradscope gpu-check, DRY RUN on the CuPy stand-in")
    assert "float64 optim        :" in text and "float32 poly-dynamic :" in text
    assert "no host synchronisation in a warm step" in text


def test_pytest_collects_the_engine_and_app_tests_without_pytest_qt_or_pyside6(tmp_path):
    """D3: with the qt_api ini key and --strict-config, pytest stopped before it started where pytest-qt is absent."""
    env = _bare_machine_env(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:pytest-qt",
                          "-p", "no:cacheprovider", "tests/engine", "tests/app"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    collected = [line for line in out.stdout.splitlines() if "::" in line]
    assert len(collected) > 400
    assert any("test_no_host_sync.py" in line for line in collected)


def test_a_failed_section_fails_the_check_and_the_report_says_which(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gpu_check, "section_graphs", lambda say, size=None: say("planted failure") or False)
    code = gpu_check.main(["--dry-run", "--quick", "--sections", "5", "--out", str(tmp_path)])
    assert code == 1
    text = (tmp_path / "report.txt").read_text()
    assert "[FAIL] 5. captured vs eager" in text and "planted failure" in text
    assert text.rstrip().endswith("FAILED: 5. captured vs eager")
    assert "FAILED" in capsys.readouterr().out


def test_the_speed_targets_are_read_off_the_benchmark_results():
    """The figures of the first H100 run (benchmarks/results/gpu.json keeps the latest)."""
    bench = {
        "rows": [
            {"size": "tutorial", "recipe": "tensor", "device": "cuda", "vs_torch": 1.71, "graph_vs_torch": 0.139},
            {"size": "tutorial", "recipe": "autograd", "device": "cuda", "vs_torch": 0.84, "graph_vs_torch": 0.4},
            {"size": "large", "recipe": "tensor", "device": "cuda", "vs_torch": 1.055, "tflops": 43.62},
            {"size": "large", "recipe": "tensor", "device": "cpu", "vs_torch": 9.0, "tflops": 0.2},
        ],
        "runs_500": [{"steps": 500, "recipe": "tensor", "graph_ms": 22.5}, {"steps": 500, "recipe": "autograd"}],
        "matmul_peak_tflops": {"cuda": 51.63},
    }
    assert gpu_check.speed_targets(bench) == [
        "speed targets (float32, against PyTorch eager CUDA in this run):",
        "  tutorial tensor: CUDA graph step 0.139x PyTorch's (target <= 1/3) met",
        "  tutorial tensor: uncaptured step 1.71x PyTorch's (target <= 1.3) NOT MET",
        "  tutorial autograd: CUDA graph step 0.400x PyTorch's (target <= 1/3) NOT MET",
        "  tutorial autograd: uncaptured step 0.84x PyTorch's (target <= 1.3) met",
        "  500-step run, tutorial tensor, CUDA graph, losses read back: 22.5 ms (target < 30) met",
        "  large tensor: 0.95x PyTorch's throughput, TF32 off (target >= 0.9), 43.6 TFLOP/s of a measured 51.6 peak"
        " met",
    ]


def test_the_host_draws_stand_in_takes_the_engines_parameters():
    """Section 3 replaces engine.random.standard_normal for its listings; when the engine's gained generator= the
    replacement did not, and section 3 raised a TypeError (seen only in the dry run of a whole suite)."""
    import inspect

    from engine import random as rnd

    engine_params = list(inspect.signature(rnd.standard_normal).parameters)
    with gpu_check._host_draws():
        assert list(inspect.signature(rnd.standard_normal).parameters) == engine_params
        import engine

        engine.manual_seed(0)
        first = engine.randn(3).tolist()
        assert engine.randn(2, generator=engine.Generator().manual_seed(1)).shape == (2,)
    engine.manual_seed(0)
    assert engine.randn(3).tolist() == first  # the same draws as without the stand-in, on the CPU
