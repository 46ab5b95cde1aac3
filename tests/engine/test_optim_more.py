"""The optimizers and schedules past SGD/Adam/RMSprop and StepLR: each against PyTorch 2.13 (run here when it is
importable; its rates are also kept below, so the schedules are held to them without it)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine

L = engine.optim.lr_scheduler

OPTIMIZERS = {
    "Adagrad": ("Adagrad", {"lr": 0.1}),
    "Adagrad with decay": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1,
                                       "initial_accumulator_value": 0.5}),
    "Adamax": ("Adamax", {"lr": 0.05}),
    "Adamax maximize": ("Adamax", {"weight_decay": 0.1, "maximize": True}),
    "NAdam": ("NAdam", {"lr": 0.05}),
    "NAdam decoupled": ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "NAdam L2": ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
    "RAdam": ("RAdam", {"lr": 0.05}),
    "RAdam decoupled": ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "Adadelta": ("Adadelta", {}),
    "Adadelta settings": ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.05}),
    "Rprop": ("Rprop", {}),
    "Rprop settings": ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    "ASGD": ("ASGD", {"lr": 0.05}),
    "ASGD averaging": ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.5, "t0": 5, "weight_decay": 0.1}),
    "SGD maximize": ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    "Adafactor": ("Adafactor", {}),
    "Adafactor settings": ("Adafactor", {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 1.5,
                                         "weight_decay": 0.1}),
}


def _train(lib, name, kwargs, steps=25, dtype="float64"):
    rng = np.random.default_rng(0)
    w0, x, y = rng.standard_normal((5, 3)), rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    dt = getattr(lib, dtype)
    w = lib.tensor(w0, requires_grad=True, dtype=dt)
    b = lib.tensor(np.zeros(3), requires_grad=True, dtype=dt)
    opt = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.01}], **kwargs)
    losses = []
    for _ in range(steps):
        loss = ((lib.tensor(x, dtype=dt) @ w + b - lib.tensor(y, dtype=dt)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), w.detach().numpy(), b.detach().numpy(), opt


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_optimizers_step_as_torchs(case):
    torch = pytest.importorskip("torch")
    name, kwargs = OPTIMIZERS[case]
    ours, theirs = _train(engine, name, kwargs), _train(torch, name, kwargs)
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    ours32, theirs32 = _train(engine, name, kwargs, dtype="float32"), _train(torch, name, kwargs, dtype="float32")
    np.testing.assert_allclose(ours32[1], theirs32[1], rtol=2e-5, atol=1e-6)  # float32: rounding, not formula
    assert repr(ours[3]).replace("engine", "torch").splitlines()[0] == repr(theirs[3]).splitlines()[0]


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_optimizers_lower_the_loss_and_resume_from_their_state(case, tmp_path):
    name, kwargs = OPTIMIZERS[case]
    losses, _, _, opt = _train(engine, name, kwargs, steps=40)
    if not kwargs.get("maximize"):
        assert losses[-1] < losses[0]
    else:
        assert losses[-1] > losses[0]
    state = opt.state_dict()
    counted = name != "SGD"  # (SGD keeps no step count, as in PyTorch)
    assert sorted(state["state"]) == [0, 1] and (not counted or state["state"][0]["step"] == 40.0)
    engine.save(state, tmp_path / "opt.pt")
    fresh = getattr(engine.optim, name)([{"params": [engine.zeros(5, 3, requires_grad=True)]},
                                         {"params": [engine.zeros(3, requires_grad=True)], "lr": 0.01}], **kwargs)
    fresh.load_state_dict(engine.load(tmp_path / "opt.pt"))
    assert fresh.state_dict()["state"][0].get("step", 40.0) == 40.0
    assert sorted(fresh.state_dict()["state"][0]) == sorted(state["state"][0])


def test_asgds_average_is_torchs():
    torch = pytest.importorskip("torch")
    name, kwargs = OPTIMIZERS["ASGD averaging"]
    ours, theirs = _train(engine, name, kwargs), _train(torch, name, kwargs)
    ax_ours = ours[3].state[ours[3].param_groups[0]["params"][0]]["ax"]  # (keyed by the parameter, as PyTorch's)
    ax_theirs = theirs[3].state[theirs[3].param_groups[0]["params"][0]]["ax"].numpy()
    np.testing.assert_allclose(ax_ours, ax_theirs, rtol=1e-12, atol=1e-15)
    assert not np.allclose(ax_ours, ours[1])  # from t0 on, an average: not the last weights


def _closure_steps(lib, name, kwargs, steps=6, dtype="float64"):
    """The tutorial's fit of sin(x) by a cubic, each step through a closure (L-BFGS's way): the losses each step
    returns, the coefficients after, and how many times the closure ran."""
    dt = getattr(lib, dtype)
    x = lib.linspace(-math.pi, math.pi, 200, dtype=dt)
    y = lib.sin(x)
    coeffs = lib.tensor([0.1, -0.2, 0.05, 0.01], dtype=dt, requires_grad=True)
    opt = getattr(lib.optim, name)([coeffs], **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        a, b, c, d = coeffs
        loss = ((a + b * x + c * x ** 2 + d * x ** 3 - y) ** 2).mean()
        loss.backward()
        calls.append(1)
        return loss

    returned = [opt.step(closure).item() for _ in range(steps)]
    return returned, coeffs.detach().numpy().copy(), len(calls)


LBFGS_CASES = {
    "fixed step": ("LBFGS", {"lr": 0.1, "max_iter": 5}),
    "strong wolfe": ("LBFGS", {"line_search_fn": "strong_wolfe"}),
    "short history": ("LBFGS", {"lr": 0.5, "history_size": 2, "max_iter": 8, "line_search_fn": "strong_wolfe"}),
    "SGD with a closure": ("SGD", {"lr": 0.01, "momentum": 0.9}),
    "Adam with a closure": ("Adam", {"lr": 0.05}),
}


@pytest.mark.parametrize("case", sorted(LBFGS_CASES))
def test_a_closure_step_is_torchs(case):
    """L-BFGS (with and without its line search) and the others' closure: the same losses, the same coefficients,
    the same number of closure calls as PyTorch 2.13 from the same start."""
    name, kwargs = LBFGS_CASES[case]
    ours = _closure_steps(engine, name, kwargs)
    if "line_search_fn" in kwargs:
        assert ours[0][-1] < 0.01 * ours[0][0]  # it fits: far below where it started
    torch = pytest.importorskip("torch")
    theirs = _closure_steps(torch, name, kwargs)
    # (dot products summed in another order, then fed back through the curvature pairs: 1e-10 apart at most)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-9)
    assert ours[2] == theirs[2]


def test_lbfgs_refuses_what_torchs_refuses():
    w = [engine.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        engine.optim.LBFGS([{"params": w}, {"params": [engine.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="LBFGS.step\\(\\) needs a closure"):
        engine.optim.LBFGS(w).step(None)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt = engine.optim.LBFGS(w, line_search_fn="backtracking")

        def closure():
            opt.zero_grad()
            loss = ((w[0] - 1) ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
    with pytest.raises(ValueError, match="Invalid eta values: 1.5, 2"):
        engine.optim.Rprop(w, etas=(1.5, 2))


def test_optimizer_settings_are_refused_by_name():
    w = [engine.zeros(2, requires_grad=True)]
    for make, message in ((lambda: engine.optim.Adagrad(w, lr_decay=-1), "Invalid lr_decay value: -1"),
                          (lambda: engine.optim.Adamax(w, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
                          (lambda: engine.optim.NAdam(w, momentum_decay=-0.1), "Invalid momentum_decay value"),
                          (lambda: engine.optim.RAdam(w, eps=float("nan")), "Invalid epsilon value: nan"),
                          (lambda: engine.optim.Adadelta(w, rho=1.5), "Invalid rho value: 1.5"),
                          (lambda: engine.optim.NAdam(w, lr=float("nan")), "Invalid learning rate: nan"),
                          (lambda: engine.optim.Adafactor(w, beta2_decay=0.5), "beta2_decay should be <= 0 but is"),
                          (lambda: engine.optim.Adafactor(w, d=0.5), "Clipping threshold d should be >= 1")):
        with pytest.raises(ValueError, match=message):
            make()


SCHEDULES = {
    "MultiplicativeLR": lambda lib, o: lib.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.95),
    "ConstantLR": lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, 0.5, 4),
    "LinearLR": lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, 0.1, 1.0, 5),
    "LinearLR down": lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, 1.0, 0.2, 7),
    "PolynomialLR": lambda lib, o: lib.optim.lr_scheduler.PolynomialLR(o, 6, 2.0),
    "CosineAnnealingWarmRestarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 3, 2, 0.001),
    "CAWR mult1": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 4),
    "SequentialLR": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o, 0.1, 1.0, 3), lib.optim.lr_scheduler.CosineAnnealingLR(o, 6, 0.01)],
        [3]),
    "SequentialLR 3": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.ConstantLR(o, 0.5, 2), lib.optim.lr_scheduler.ExponentialLR(o, 0.9),
            lib.optim.lr_scheduler.StepLR(o, 2, 0.5)], [2, 6]),
    "ChainedScheduler": lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ConstantLR(o, 0.5, 3), lib.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
    "OneCycleLR": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=12),
    "OneCycleLR linear 3": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
        o, 0.5, epochs=3, steps_per_epoch=4, anneal_strategy="linear", three_phase=True),
    "OneCycleLR Adam": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 0.3, total_steps=12, pct_start=0.25),
    "CyclicLR": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=3),
    "CyclicLR triangular2": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                                           step_size_down=3, mode="triangular2"),
    "CyclicLR exp_range Adam": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9, base_momentum=0.85, max_momentum=0.95),
    "CyclicLR scale_fn": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, 0.02, 0.2, step_size_up=4, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations", cycle_momentum=False),
}

SCHEDULE_RATES = {  # torch 2.13.0: (lr, momentum or Adam's beta1) as made and after each of 12 steps
    'MultiplicativeLR': [
        (0.1, 0.9), (0.095, 0.9), (0.09025, 0.9), (0.0857375, 0.9), (0.08145062499999998, 0.9),
        (0.07737809374999999, 0.9), (0.07350918906249998, 0.9), (0.06983372960937498, 0.9),
        (0.06634204312890622, 0.9), (0.0630249409724609, 0.9), (0.05987369392383786, 0.9), (0.05688000922764597, 0.9),
        (0.05403600876626367, 0.9),
    ],
    'ConstantLR': [
        (0.05, 0.9), (0.05, 0.9), (0.05, 0.9), (0.05, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9),
        (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9),
    ],
    'LinearLR': [
        (0.010000000000000002, 0.9), (0.028000000000000004, 0.9), (0.046000000000000006, 0.9), (0.064, 0.9),
        (0.082, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9), (0.1, 0.9),
    ],
    'LinearLR down': [
        (0.1, 0.9), (0.08857142857142858, 0.9), (0.07714285714285715, 0.9), (0.06571428571428573, 0.9),
        (0.0542857142857143, 0.9), (0.042857142857142864, 0.9), (0.03142857142857144, 0.9), (0.02, 0.9), (0.02, 0.9),
        (0.02, 0.9), (0.02, 0.9), (0.02, 0.9), (0.02, 0.9),
    ],
    'PolynomialLR': [
        (0.1, 0.9), (0.06944444444444446, 0.9), (0.04444444444444447, 0.9), (0.02500000000000001, 0.9),
        (0.011111111111111117, 0.9), (0.0027777777777777775, 0.9), (0.0, 0.9), (0.0, 0.9), (0.0, 0.9), (0.0, 0.9),
        (0.0, 0.9), (0.0, 0.9), (0.0, 0.9),
    ],
    'CosineAnnealingWarmRestarts': [
        (0.1, 0.9), (0.07525000000000001, 0.9), (0.025750000000000012, 0.9), (0.1, 0.9), (0.09336825748732973, 0.9),
        (0.07525000000000001, 0.9), (0.0505, 0.9), (0.025750000000000012, 0.9), (0.007631742512670284, 0.9),
        (0.1, 0.9), (0.09831332840130888, 0.9), (0.09336825748732973, 0.9), (0.0855017856687341, 0.9),
    ],
    'CAWR mult1': [
        (0.1, 0.9), (0.08535533905932738, 0.9), (0.05, 0.9), (0.014644660940672627, 0.9), (0.1, 0.9),
        (0.08535533905932738, 0.9), (0.05, 0.9), (0.014644660940672627, 0.9), (0.1, 0.9), (0.08535533905932738, 0.9),
        (0.05, 0.9), (0.014644660940672627, 0.9), (0.1, 0.9),
    ],
    'SequentialLR': [
        (0.010000000000000002, 0.9), (0.04, 0.9), (0.07, 0.9), (0.1, 0.9), (0.09397114317029975, 0.9),
        (0.07750000000000001, 0.9), (0.055000000000000014, 0.9), (0.032500000000000015, 0.9),
        (0.01602885682970026, 0.9), (0.01, 0.9), (0.01602885682970026, 0.9), (0.03250000000000001, 0.9),
        (0.05500000000000004, 0.9),
    ],
    'SequentialLR 3': [
        (0.05, 0.9), (0.05, 0.9), (0.1, 0.9), (0.09000000000000001, 0.9), (0.08100000000000002, 0.9),
        (0.07290000000000002, 0.9), (0.1, 0.9), (0.1, 0.9), (0.05, 0.9), (0.05, 0.9), (0.025, 0.9), (0.025, 0.9),
        (0.0125, 0.9),
    ],
    'ChainedScheduler': [
        (0.05, 0.9), (0.045000000000000005, 0.9), (0.04050000000000001, 0.9), (0.07290000000000002, 0.9),
        (0.06561000000000002, 0.9), (0.05904900000000002, 0.9), (0.05314410000000002, 0.9),
        (0.04782969000000002, 0.9), (0.043046721000000024, 0.9), (0.03874204890000002, 0.9),
        (0.03486784401000002, 0.9), (0.03138105960900001, 0.9), (0.028242953648100012, 0.9),
    ],
    'OneCycleLR': [
        (0.040000000000000036, 0.95), (0.3497896542195831, 0.9177302443521267),
        (0.8792851591221287, 0.8625744625914449), (0.9944154354509117, 0.8505584586887436),
        (0.9330129698414117, 0.856698729810778), (0.811745653949763, 0.8688255099070633),
        (0.6473789976951033, 0.8852622412794547), (0.46263710266697505, 0.9037365046793212),
        (0.28306099820869923, 0.9216941869558779), (0.1334775301888306, 0.9366525935914912),
        (0.03456698742539522, 0.9465436874322102), (4e-06, 0.95), (0.034566987425395164, 0.9465436874322102),
    ],
    'OneCycleLR linear 3': [
        (0.02, 0.95), (0.20461538461538464, 0.9115384615384615), (0.3892307692307693, 0.8730769230769231),
        (0.4261538461538461, 0.8653846153846154), (0.24153846153846148, 0.9038461538461539),
        (0.0569230769230768, 0.9423076923076923), (0.01724165517241379, 0.95), (0.013793724137931033, 0.95),
        (0.010345793103448273, 0.95), (0.006897862068965515, 0.95), (0.0034499310344827568, 0.95),
        (1.9999999999985307e-06, 0.95), (-0.0034459310344827597, 0.95),
    ],
    'OneCycleLR Adam': [
        (0.01200000000000001, 0.95), (0.156, 0.8999999999999999), (0.3, 0.85),
        (0.2909539293023138, 0.8530153689607045), (0.2649068068411808, 0.8616977778440511),
        (0.22500030000000001, 0.875), (0.17604772246113298, 0.8913175911166534),
        (0.12395347753886707, 0.9086824088833465), (0.07500090000000004, 0.9249999999999999),
        (0.03509439315881919, 0.9383022221559488), (0.009047270697686224, 0.9469846310392954), (1.2e-06, 0.95),
        (0.009047270697686207, 0.9469846310392954),
    ],
    'CyclicLR': [
        (0.01, 0.9), (0.040000000000000015, 0.8666666666666667), (0.06999999999999999, 0.8333333333333334),
        (0.1, 0.8), (0.07000000000000003, 0.8333333333333334), (0.03999999999999998, 0.8666666666666667), (0.01, 0.9),
        (0.040000000000000056, 0.8666666666666666), (0.06999999999999995, 0.8333333333333335), (0.1, 0.8),
        (0.06999999999999995, 0.8333333333333335), (0.040000000000000056, 0.8666666666666666), (0.01, 0.9),
    ],
    'CyclicLR triangular2': [
        (0.01, 0.9), (0.055, 0.8500000000000001), (0.09999999999999999, 0.8),
        (0.06999999999999999, 0.8333333333333334), (0.039999999999999994, 0.8666666666666667), (0.01, 0.9),
        (0.03250000000000002, 0.875), (0.055, 0.8500000000000001), (0.039999999999999994, 0.8666666666666667),
        (0.025000000000000015, 0.8833333333333333), (0.01, 0.9), (0.021250000000000012, 0.8875000000000001),
        (0.0325, 0.875),
    ],
    'CyclicLR exp_range Adam': [
        (0.01, 0.95), (0.05050000000000001, 0.9049999999999999), (0.0829, 0.869), (0.04280500000000001, 0.91355),
        (0.01, 0.95), (0.03657205000000001, 0.9204755), (0.05782969000000001, 0.8968558999999999),
        (0.03152336050000001, 0.926085155), (0.01, 0.95), (0.027433922005000007, 0.9306289755499999),
        (0.041381059609000015, 0.91513215599), (0.024121476824050005, 0.9343094701954999), (0.01, 0.95),
    ],
    'CyclicLR scale_fn': [
        (0.02, 0.9), (0.0425, 0.9), (0.0425, 0.9), (0.036875000000000005, 0.9), (0.03125, 0.9), (0.02421875, 0.9),
        (0.02140625, 0.9), (0.0203515625, 0.9), (0.02, 0.9), (0.020087890625, 0.9), (0.020087890625, 0.9),
        (0.02006591796875, 0.9), (0.020043945312500002, 0.9),
    ],
}


def _schedule(lib, name, steps=12):
    w = lib.zeros(2, requires_grad=True)
    adam = name.endswith("Adam")
    opt = lib.optim.Adam([w], lr=0.1) if adam else lib.optim.SGD([w], lr=0.1, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's own "scheduler before optimizer" warning for SequentialLR
        scheduler = SCHEDULES[name](lib, opt)

    def now():
        group = opt.param_groups[0]
        return scheduler.get_last_lr()[0], group["betas"][0] if adam else group["momentum"]

    out = [now()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(now())
        assert opt.param_groups[0]["lr"] == out[-1][0]
    return out


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_give_torchs_rates_to_the_last_bit(name):
    assert _schedule(engine, name) == SCHEDULE_RATES[name]


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_the_kept_rates_are_torchs_own(name):
    torch = pytest.importorskip("torch")
    assert _schedule(torch, name) == SCHEDULE_RATES[name]


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85]
PLATEAU = {  # settings: torch 2.13.0's rates after each metric
    "patience 2": ({"patience": 2}, [0.1, 0.1, 0.1, 0.1, 0.010000000000000002, 0.010000000000000002,
                                     0.010000000000000002, 0.010000000000000002, 0.010000000000000002,
                                     0.0010000000000000002, 0.0010000000000000002, 0.0010000000000000002]),
}


def _plateau(lib, kwargs):
    opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
    scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    out = []
    for metric in PLATEAU_METRICS:
        opt.step()
        scheduler.step(metric)
        out.append(scheduler.get_last_lr()[0])
    return out


PLATEAU_SETTINGS = [{"patience": 2}, {"patience": 1, "cooldown": 2, "factor": 0.5, "min_lr": 0.02},
                    {"mode": "max", "threshold_mode": "abs", "threshold": 0.01, "patience": 0}]


@pytest.mark.parametrize("kwargs", PLATEAU_SETTINGS, ids=["patience", "cooldown and floor", "max abs"])
def test_reduce_on_plateau_waits_cools_down_and_floors_as_torchs(kwargs):
    rates = _plateau(engine, kwargs)
    if kwargs == {"patience": 2}:
        assert rates == PLATEAU["patience 2"][1]
    torch = pytest.importorskip("torch")
    assert rates == _plateau(torch, kwargs)


def test_schedule_settings_are_refused_by_name():
    opt = engine.optim.SGD([engine.zeros(1, requires_grad=True)], lr=0.1)
    for make, message in ((lambda: L.LinearLR(opt, start_factor=0), "Starting multiplicative factor"),
                          (lambda: L.ConstantLR(opt, factor=2), "between 0 and 1"),
                          (lambda: L.CosineAnnealingWarmRestarts(opt, 0), "positive integer T_0"),
                          (lambda: L.OneCycleLR(opt, 1.0), "either total_steps OR"),
                          (lambda: L.OneCycleLR(opt, 1.0, total_steps=5, pct_start=1), "pct_start"),
                          (lambda: L.ReduceLROnPlateau(opt, factor=1.0), "Factor should be < 1.0"),
                          (lambda: L.SequentialLR(opt, [L.ConstantLR(opt)], [3]), "one more than the number")):
        with pytest.raises(ValueError, match=message):
            make()
    cycle = L.OneCycleLR(opt, 1.0, total_steps=2)
    for _ in range(2):
        opt.step()
        cycle.step()
    opt.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        cycle.step()


def test_warm_restarts_take_a_fraction_of_an_epoch():
    opt = engine.optim.SGD([engine.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = L.CosineAnnealingWarmRestarts(opt, T_0=2)
    opt.step()
    scheduler.step(0.5)
    assert scheduler.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * 0.25)) / 2)
    scheduler.step(2.5)  # a restart at 2: half way into the second period
    assert scheduler.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * 0.25)) / 2)
