"""The compiled backward walk (engine/autograd/_cwalk.c): built where it can be, the same results as graph.py's walk,
its own error paths, and no references kept or lost (a C function's refcounts are its own to get right)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.autograd import graph

pytestmark = pytest.mark.usefixtures("backward_walk")  # each test through both walks (conftest.py)

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "engine" / "autograd" / "_cwalk.c"


def test_the_compiled_walk_is_built_where_a_compiler_is_and_is_not_older_than_its_source(backward_walk):
    if backward_walk != "compiled":
        pytest.skip("about the build")
    module = sys.modules["engine.autograd._cwalk"]
    built = Path(module.__file__)
    # an edited _cwalk.c and an old build would test old code: `make setup` rebuilds when the source changes
    assert built.stat().st_mtime >= SOURCE.stat().st_mtime, f"{built.name} is older than _cwalk.c: run make setup"


def test_a_machine_with_a_compiler_builds_it():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the engine walks in Python")
    if os.environ.get("GRADSCOPE_PYTHON_WALK", "").strip() not in ("", "0"):
        pytest.skip("GRADSCOPE_PYTHON_WALK is set")
    assert "engine.autograd._cwalk" in sys.modules, "a C compiler is here, but the compiled walk was not built"


def test_the_environment_variable_keeps_the_python_walk():
    code = "from engine.autograd import graph; print(graph.walk_kind())"
    env = {**os.environ, "GRADSCOPE_PYTHON_WALK": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "python"


def test_walk_kind_says_which_walk_runs(backward_walk):
    assert graph.walk_kind() == backward_walk


def _net(seed=0):
    rng = np.random.default_rng(seed)
    x = engine.tensor(rng.standard_normal((8, 5)), dtype=engine.float64)
    w1 = engine.tensor(rng.standard_normal((5, 4)), dtype=engine.float64, requires_grad=True)
    w2 = engine.tensor(rng.standard_normal((4, 3)), dtype=engine.float64, requires_grad=True)
    return x, w1, w2


def test_the_tutorial_step_gives_the_hand_written_gradients():
    x, w1, w2 = _net()
    y = engine.tensor(np.arange(24.0).reshape(8, 3) / 10, dtype=engine.float64)
    for _ in range(3):  # the second and third steps take the zero_()'d buffers' place (the lazy zeros)
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        xd, w1d, w2d = x.numpy(), w1.detach().numpy(), w2.detach().numpy()
        h = xd @ w1d
        hr = np.maximum(h, 0)
        g = 2 * (hr @ w2d - y.numpy())
        gw2 = hr.T @ g
        gh = g @ w2d.T
        gh[h < 0] = 0
        np.testing.assert_allclose(w1.grad.numpy(), xd.T @ gh, rtol=1e-12)
        np.testing.assert_allclose(w2.grad.numpy(), gw2, rtol=1e-12)
        with engine.no_grad():
            w1 -= 1e-3 * w1.grad
            w2 -= 1e-3 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()


def test_many_pending_nodes_at_once_run_newest_first():
    """A hundred branches from one leaf, all pending together: the walk's heap grows past its first block."""
    x = engine.tensor(np.linspace(-1, 1, 7), dtype=engine.float64, requires_grad=True)
    branches = [(x * float(k)).sin() for k in range(1, 101)]
    total = branches[0]
    for b in branches[1:]:
        total = total + b
    total.sum().backward()
    xs = np.linspace(-1, 1, 7)
    expected = sum(k * np.cos(k * xs) for k in range(1, 101))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_broadcasting_and_mixed_dtypes_are_undone_per_input():
    a = engine.tensor(np.ones((3, 4)), dtype=engine.float32, requires_grad=True)
    b = engine.tensor(np.arange(4.0), dtype=engine.float64, requires_grad=True)
    ((a * b) * 2.0).sum().backward()
    assert a.grad.dtype == engine.float32 and b.grad.dtype == engine.float64
    np.testing.assert_array_equal(a.grad.numpy(), np.tile(np.arange(4.0) * 2, (3, 1)).astype(np.float32))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(4, 6.0))


class Boom(engine.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, gy):
        raise ValueError("boom in backward")


def test_an_error_in_a_backward_comes_out_as_it_was_raised():
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    loss = (Boom.apply(x * 3) + x).sum()
    with pytest.raises(ValueError, match="boom in backward"):
        loss.backward()


def test_the_second_backward_through_a_freed_graph_names_retain_graph():
    _, w1, w2 = _net()
    loss = w1.mm(w2).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        loss.backward()


def test_no_reference_is_kept_or_lost():
    """After backward and the loss dropped, the graph is gone (no node held by the walk), and .grad's array is
    held by .grad alone."""
    x, w1, w2 = _net()
    for _ in range(3):
        loss = x.mm(w1).clamp(min=0).mm(w2).pow(2).sum()
        node = weakref.ref(loss.grad_fn)
        loss.backward()
        del loss
        gc.collect()
        assert node() is None
        arr = w1.grad._data
        assert sys.getrefcount(arr) == 3  # .grad, arr, getrefcount's argument
        del arr
        with engine.no_grad():
            w1.grad.zero_()
            w2.grad.zero_()
    before = len(gc.get_objects())
    for _ in range(50):
        x.mm(w1).clamp(min=0).mm(w2).pow(2).sum().backward()
    gc.collect()
    assert len(gc.get_objects()) - before < 20
