"""What the step-time table says about itself: the code that made its ratios."""

from __future__ import annotations

import json

import pytest

import benchmarks.__main__ as bench
from benchmarks import step_time as st
from engine import autograd, kernels


@pytest.mark.parametrize("pure", [False, True])
def test_the_table_and_its_json_say_which_paths_ran(monkeypatch, capsys, tmp_path, pure):
    """A ratio means something only with the code that made it: the C graph and masked writes, or Python's."""
    row = st.Row("tiny", "tensor", "cpu", "float32", 0.03, 0.02, None, 5, 10, 1.0)
    monkeypatch.setattr(bench, "measure_row", lambda *a, **k: row)
    if pure:
        monkeypatch.setattr(autograd, "implementation", lambda: "python")
        monkeypatch.setattr(kernels, "implementation", lambda: "python")
    out_json = tmp_path / "r.json"
    assert bench.main(["--sizes", "tiny", "--recipes", "tensor", "--devices", "cpu", "--no-app", "--quick",
                       "--out", str(out_json)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    saved = json.loads(out_json.read_text())
    if pure:
        assert first.endswith("the engine's graph recorded and walked in Python, the CPU's masked gradients with NumPy")
        assert saved["graph"] == saved["masked_writes"] == "python"
    else:
        assert saved["graph"] == autograd._compiled.kind() and saved["masked_writes"] == kernels.implementation()
        assert ("in C (_ckernels.c)" in first) == (kernels.implementation() == "compiled")
