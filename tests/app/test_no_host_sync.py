"""A warmed-up training step of every GPU recipe makes no host synchronisation: the loss stays on the device and
the runner reads losses back in batches.

On the CuPy stand-in every synchronisation CuPy would make is counted (tests/fake_cupy.py); on a real GPU the
step runs under ``cupyx.allow_synchronize(False)``, which raises on the ones CuPy detects.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from app.config import RunConfig
from app.recipes import TABLE, make_state
from app.runner import Runner
from tests import fake_cupy

GPU_RECIPES = [name for name, recipe in TABLE.items() if not recipe.cpu_only]
SMALL = dict(batch=8, d_in=12, hidden=6, d_out=3)


def _steps_without_sync(recipe: str, dtype: str, steps: int = 3) -> list:
    state = make_state(RunConfig(recipe=recipe, device="cuda", dtype=dtype, lr=TABLE[recipe].default_lr, **SMALL))
    it = TABLE[recipe].step(state)
    next(it)  # warm-up: .grad buffers made, optimizer state made
    losses = []
    if fake_cupy.active():
        with fake_cupy.count_syncs() as seen:
            for _ in range(steps):
                losses.append(next(it))
        assert seen == [], f"{recipe}: host synchronisations in a warm step: {seen}"
    else:
        import cupyx

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # allow_synchronize is deprecated in CuPy; it still detects get()
            with cupyx.allow_synchronize(False):
                for _ in range(steps):
                    losses.append(next(it))
    return losses


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("recipe", GPU_RECIPES)
def test_a_warm_step_of_every_recipe_makes_no_host_synchronisation(recipe, dtype, cuda_device):
    losses = _steps_without_sync(recipe, dtype)
    values = [float(x) for x in losses]  # read back after the steps, as the runner does
    assert all(np.isfinite(values)) and values[-1] < values[0]


@pytest.mark.parametrize("recipe", GPU_RECIPES)
def test_the_runner_reads_losses_back_in_batches(recipe, cuda_device):
    if not fake_cupy.active():
        pytest.skip("counted on the stand-in; a real GPU checks the step itself above")
    runner = Runner(RunConfig(recipe=recipe, device="cuda", iters=40, lr=TABLE[recipe].default_lr, **SMALL),
                    readback_steps=10, readback_s=1e9)
    with fake_cupy.count_syncs() as seen:
        result = runner.run()
    assert result.status == "done" and len(result.log) == 40
    reads = [s for s in seen if s == "ndarray.get()"]
    assert 4 <= len(reads) <= 8, seen  # one per batch of 10 steps (and the set-up's), not one per step
    assert len(seen) < 20, seen


def test_a_full_reduction_backward_fills_its_gradient_on_the_device(cuda_device):
    """D2: CuPy 14.1+'s fill() compares a device scalar with 0 on the host; the backward of sum()/mean() must not."""
    x = engine.ones(4, 3, device="cuda", requires_grad=True)
    loss = (x * 3).sum() + x.mean()
    loss.backward()
    x.grad = None
    if fake_cupy.active():
        loss = (x * 3).sum() + x.mean()
        with fake_cupy.count_syncs() as seen:
            loss.backward()
        assert seen == []
    else:
        (x * 3).sum().add(x.mean()).backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.full((4, 3), 3 + 1 / 12))


def test_fill_with_a_device_scalar_tensor_stays_on_the_device(cuda_device):
    t = engine.zeros(5, device="cuda")
    v = engine.tensor(2.5, device="cuda")
    if fake_cupy.active():
        with fake_cupy.count_syncs() as seen:
            t.fill_(v)
        assert seen == []
    else:
        t.fill_(v)
    np.testing.assert_array_equal(t.cpu().numpy(), np.full(5, 2.5, np.float32))


def test_the_first_backward_on_cuda_makes_the_leaf_gradient(cuda_device):
    """D1: the leaf accumulation read flags.writeable, which CuPy's flags lack: every first backward() raised."""
    w = engine.ones(3, 2, device="cuda", requires_grad=True)
    x = engine.ones(4, 3, device="cuda")
    (x.mm(w) ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.full((3, 2), 24.0))
    (x.mm(w) ** 2).sum().backward()  # and accumulates
    np.testing.assert_allclose(w.grad.cpu().numpy(), np.full((3, 2), 48.0))
