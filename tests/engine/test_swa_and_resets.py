"""``optim.swa_utils`` (weight averaging, the SWA schedule, ``update_bn``) and the layers' ``reset_parameters`` /
``reset_running_stats``: known values, then PyTorch's numbers through a short training."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine import nn
from engine.optim import swa_utils


def _one_weight(value):
    layer = nn.Linear(1, 1, bias=False, dtype=engine.float64)
    with engine.no_grad():
        layer.weight.fill_(value)
    return layer


def test_averaged_model_keeps_the_running_mean_or_the_moving_average():
    model = _one_weight(1.0)
    swa = swa_utils.AveragedModel(model)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    ema1 = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.75))
    for value in (1.0, 2.0, 6.0):
        with engine.no_grad():
            model.weight.fill_(value)
        for averaged in (swa, ema, ema1):
            averaged.update_parameters(model)
    assert swa.module.weight.item() == 3.0 and swa.n_averaged.item() == 3 and swa.n_averaged.dtype == engine.int64
    assert ema.module.weight.item() == (1.0 * 0.5 + 2.0 * 0.5) * 0.5 + 6.0 * 0.5  # 3.75
    assert ema1.module.weight.item() == pytest.approx((1.0 * 0.75 + 2.0 * 0.25) * 0.75 + 6.0 * 0.25)
    assert swa(engine.ones(1, 1, dtype=engine.float64)).item() == 3.0
    assert model.weight.item() == 6.0  # (the model itself untouched: the average is a copy's)
    with pytest.raises(ValueError, match="Invalid decay value 1.5 provided"):
        swa_utils.get_ema_avg_fn(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


def test_swalr_anneals_to_the_swa_rate_and_holds_it():
    opt = engine.optim.SGD(_one_weight(0.0).parameters(), lr=0.1)
    sched = swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="linear")
    assert sched.get_last_lr() == [pytest.approx(0.1)]
    rates = []
    for _ in range(5):
        opt.step()
        sched.step()
        rates.append(sched.get_last_lr()[0])
    assert rates == pytest.approx([0.1 - 0.08 / 3, 0.1 - 0.16 / 3, 0.02, 0.02, 0.02])
    opt = engine.optim.SGD(_one_weight(0.0).parameters(), lr=0.1)
    sched = swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=2)  # cosine: half-way at (1 - cos(pi/2)) / 2
    opt.step()
    sched.step()
    assert sched.get_last_lr()[0] == pytest.approx(0.02 * 0.5 + 0.1 * 0.5)
    assert sched.state_dict()["_anneal_strategy"] == "cos" and "anneal_func" not in sched.state_dict()
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got step"):
        swa_utils.SWALR(opt, 0.01, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, 0.01, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        swa_utils.SWALR(opt, [0.01, 0.02])


def test_update_bn_recomputes_the_running_statistics_from_the_data():
    bn = nn.BatchNorm1d(1, momentum=0.3)
    model = nn.Sequential(nn.Identity(), bn)
    model.eval()
    with engine.no_grad():
        bn.running_mean.fill_(100.0)
    batches = [engine.tensor([[1.0], [3.0]]), (engine.tensor([[5.0], [7.0], [9.0]]), "label")]
    swa_utils.update_bn(batches, model)
    # the cumulative average of the two batches' means (2 and 7) and unbiased variances (2 and 4)
    assert bn.running_mean.item() == pytest.approx(4.5) and bn.running_var.item() == pytest.approx(3.0)
    assert bn.num_batches_tracked.item() == 2 and bn.momentum == 0.3 and not model.training
    swa_utils.update_bn(batches, nn.Linear(1, 1))  # (no BatchNorm: nothing to do)


def test_reset_parameters_draws_again_within_pytorchs_bounds_and_resets_the_norms():
    engine.manual_seed(0)
    layers = [(nn.Linear(50, 40), 1 / math.sqrt(50)), (nn.Conv2d(4, 6, 3, groups=2), 1 / math.sqrt(18)),
              (nn.ConvTranspose2d(4, 6, 3), 1 / math.sqrt(54))]
    for layer, bound in layers:
        with engine.no_grad():
            for p in layer.parameters():
                p.fill_(5.0)
        layer.reset_parameters()
        for p in layer.parameters():
            assert float(p.abs().max()) <= bound and float(p.abs().max()) > 0.5 * bound and float(p.std()) > 0.2 * bound
    emb = nn.Embedding(200, 5, padding_idx=2)
    with engine.no_grad():
        emb.weight.fill_(5.0)
    emb.reset_parameters()
    assert emb.weight[2].tolist() == [0.0] * 5 and abs(float(emb.weight.std()) - 1.0) < 0.15
    for norm in (nn.BatchNorm1d(3), nn.InstanceNorm1d(3, affine=True, track_running_stats=True), nn.LayerNorm(3),
                 nn.GroupNorm(1, 3)):
        with engine.no_grad():
            for t in list(norm.parameters()) + list(norm.buffers()):
                t.add_(2)
        norm.reset_parameters()
        assert norm.weight.tolist() == [1.0] * 3 and norm.bias.tolist() == [0.0] * 3
        if hasattr(norm, "running_mean"):
            assert norm.running_mean.tolist() == [0.0] * 3 and norm.running_var.tolist() == [1.0] * 3
            assert norm.num_batches_tracked.item() == 0


def _swa_run(lib, kind):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    su = lib.optim.swa_utils
    averaged = {"swa": lambda: su.AveragedModel(model),
                "ema": lambda: su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
                "ema of buffers": lambda: su.AveragedModel(model, avg_fn=su.get_ema_avg_fn(0.8), use_buffers=True),
                }[kind]()
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = su.SWALR(opt, swa_lr=0.02, anneal_epochs=3, anneal_strategy="linear" if kind == "ema" else "cos")
    x, y = lib.tensor(rng.standard_normal((8, 3))), lib.tensor(rng.standard_normal((8, 2)))
    rates = []
    for _ in range(6):
        opt.zero_grad()
        lib.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()
        rates.append(sched.get_last_lr()[0])
        averaged.update_parameters(model)
    su.update_bn([(x[:4],), (x[4:],)], averaged)
    averaged.eval()
    return (np.array(rates), averaged(x).detach().numpy(), *(b.detach().numpy() for b in averaged.buffers()),
            *(p.detach().numpy() for p in averaged.parameters()))


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["swa", "ema", "ema of buffers"])
def test_weight_averaging_trains_as_pytorchs(kind):
    torch = pytest.importorskip("torch")
    theirs, ours = _swa_run(torch, kind), _swa_run(engine, kind)
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
