"""Every code listing of the seed tutorials runs with only ``import torch`` changed to
``import engine as torch`` (and, on a GPU, the listing's own "Uncomment this to run on GPU" line)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

import engine

pytestmark = pytest.mark.usefixtures("graph_core")  # each test compiled and in Python (conftest.py)

SEEDS = Path(__file__).parent / "seeds"
# the seeds' training listings are the app's examples (File -> Examples): one copy, under the names learners see
EXAMPLES = Path(__file__).resolve().parents[2] / "app" / "examples"
LISTINGS = {**{p.name: p for p in SEEDS.glob("*.py")},
            "seed_002_numpy.py": EXAMPLES / "two_layer_numpy.py",
            "seed_001_tensor_device.py": EXAMPLES / "two_layer_tensor.py",
            "seed_004_custom_function.py": EXAMPLES / "two_layer_custom_function.py",
            "seed_004_logistic.py": EXAMPLES / "logistic_regression.py"}
NUMBER = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"


def engine_source(path: Path, gpu: bool = False) -> str:
    text = path.read_text(encoding="utf-8")
    changed = re.sub(r"^import torch$", "import engine as torch", text, flags=re.M)
    if gpu:
        changed = re.sub(r"^# (.*?)\s*# Uncomment this to run on GPU$", r"\1", changed, flags=re.M)
    return changed


def run_listing(name: str, gpu: bool = False, seed: int = 0) -> str:
    source = engine_source(LISTINGS[name], gpu)
    engine.manual_seed(seed)
    np.random.seed(seed)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
    return out.getvalue()


def losses(printed: str) -> list[float]:
    pattern = re.compile(rf"^(\d+) (?:tensor\()?({NUMBER})", re.M)
    steps = [(int(m.group(1)), float(m.group(2))) for m in pattern.finditer(printed)]
    assert [s for s, _ in steps] == list(range(len(steps)))
    return [v for _, v in steps]


def test_only_the_import_line_changes():
    for path in LISTINGS.values():
        original = path.read_text(encoding="utf-8").splitlines()
        changed = engine_source(path).splitlines()
        diff = [(a, b) for a, b in zip(original, changed) if a != b]
        assert diff in ([], [("import torch", "import engine as torch")]), path.name


LOSS_LISTINGS = ["seed_000_tensor_legacy.py", "seed_001_tensor_device.py", "seed_002_tensor.py",
                 "seed_004_custom_function.py"]


@pytest.mark.parametrize("name", LOSS_LISTINGS)
def test_listing_trains_on_cpu(name):
    if name == "seed_001_tensor_device.py" and engine.cuda.is_available():
        pytest.skip("this listing picks the GPU by itself where one is present (see the gpu test)")
    values = losses(run_listing(name))
    assert len(values) == 500
    assert values[0] > 1e6, values[0]  # the tutorial's ~3e7 start
    assert values[-1] < 1.0, values[-1]  # "well under 1" after 500 steps


@pytest.mark.gpu
@pytest.mark.parametrize("name", LOSS_LISTINGS)
def test_listing_trains_on_gpu(name, cuda_device):
    source = engine_source(LISTINGS[name], gpu=True)
    assert "cuda" in source
    values = losses(run_listing(name, gpu=True))
    assert values[0] > 1e6 and values[-1] < 1.0


def test_numpy_warmup_trains():
    values = losses(run_listing("seed_002_numpy.py"))
    assert values[0] > 1e6 and values[-1] < 1.0


def test_no_grad_listing():
    assert run_listing("seed_004_no_grad.py").split() == ["True", "True", "False"]


def test_cuda_helpers_listing_without_gpu():
    if engine.cuda.is_available():
        pytest.skip("covered by the GPU run")
    assert run_listing("seed_004_cuda_helpers.py").split() == ["False", "0"]


@pytest.mark.gpu
def test_cuda_helpers_listing_with_gpu(cuda_device):
    lines = run_listing("seed_004_cuda_helpers.py").splitlines()
    assert lines[0] == "True" and int(lines[1]) >= 1 and lines[2] == "0"
    assert re.fullmatch(r"\(\d+, \d+\)", lines[3]) and lines[4]


def test_logistic_regression_listing_learns():
    printed = run_listing("seed_004_logistic.py")
    rows = [line.split() for line in printed.strip().splitlines()]
    assert [r[0] for r in rows] == ["0", "1"]
    loss_after = float(rows[-1][1])
    assert loss_after < np.log(10) * 0.5  # well below chance (ln 10 ≈ 2.30) on its training set
    assert float(rows[-1][2]) > 0.5
