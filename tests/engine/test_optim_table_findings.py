"""What PyTorch's optimizer table (test_optim_db_vs_pytorch.py) found, held without PyTorch installed: each expected
answer is PyTorch 2.13's for the same call."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.optim as optim


def _model():
    engine.manual_seed(0)
    return nn.Linear(2, 3).double()


def test_an_optimizer_takes_named_parameters_and_keeps_their_names():
    model = _model()
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]
    saved = opt.state_dict()
    assert saved["param_groups"][0]["param_names"] == ["weight", "bias"]
    model(engine.ones(1, 2, dtype=engine.float64)).sum().backward()
    before = model.bias.detach().clone()
    opt.step()
    assert np.allclose(model.bias.detach().numpy(), before.numpy() - 0.1)
    again = optim.SGD(model.parameters(), lr=0.1)
    again.load_state_dict(saved)  # (the names come with the saved groups, as PyTorch's)
    assert again.param_groups[0]["param_names"] == ["weight", "bias"]


def test_named_and_unnamed_parameters_do_not_mix():
    model = _model()
    with pytest.raises(ValueError, match="all optimizer params should be with/without names. Some param names are "
                                         "missing"):
        optim.Adam([("weight", model.weight), model.bias])
    opt = optim.Adam([("weight", model.weight)])
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without names. cannot add param "
                                         "group without names to the optimizer"):
        opt.add_param_group({"params": [model.bias]})


def test_a_group_with_a_parameter_twice_is_warned_of_in_pytorchs_words():
    model = _model()
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate parameters"):
        optim.SGD([model.weight, model.weight], lr=0.1)


def test_a_tensor_learning_rate_steps_by_its_value_and_a_schedule_writes_it_in_place():
    model = _model()
    lr = engine.tensor(0.5, dtype=engine.float64)
    opt = optim.SGD(model.parameters(), lr=lr)
    schedule = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    for expected in (0.5, 0.05):
        model.zero_grad()
        model(engine.ones(1, 2, dtype=engine.float64)).sum().backward()  # (the bias's gradient is 1)
        before = model.bias.detach().clone()
        opt.step()
        assert np.allclose(before.numpy() - model.bias.detach().numpy(), expected)
        schedule.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.005)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.SGD(model.parameters(), lr=engine.tensor([0.1, 0.1]))
    for cls in (optim.Adafactor, optim.LBFGS, optim.Adam):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            cls(model.parameters(), lr=engine.tensor([0.1, 0.1]))


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(betas=(1.0, 0.0)), "Invalid beta parameter at index 0: 1.0"),
    (dict(betas=(0.9, 1.5)), "Invalid beta parameter at index 1: 1.5"),
    (dict(betas=(engine.tensor(0.9), 0.99)), "betas must be either both floats or both Tensors"),
    (dict(lr=engine.tensor(1e-3), foreach=True), "lr as a Tensor is not supported for capturable=False and "
                                                  "foreach=True"),
    (dict(betas=(engine.tensor(0.9), engine.tensor(0.99)), foreach=True),
     "betas[0] as a Tensor is not supported for capturable=False and foreach=True"),
])
def test_adam_checks_its_settings_in_pytorchs_order_and_words(kwargs, message):
    for cls in (optim.Adam, optim.AdamW):
        with pytest.raises(ValueError, match=re.escape(message)):
            cls(_model().parameters(), **kwargs)


def test_adam_with_tensor_betas_steps_as_with_the_numbers():
    results = []
    for betas in ((0.8, 0.9), (engine.tensor([0.8], dtype=engine.float64), engine.tensor([0.9], dtype=engine.float64))):
        model = _model()
        opt = optim.Adam(model.parameters(), lr=0.1, betas=betas)
        for _ in range(3):
            opt.zero_grad()
            model(engine.ones(1, 2, dtype=engine.float64)).pow(2).sum().backward()
            opt.step()
        results.append(model.weight.detach().numpy())
    assert opt.param_groups[0]["betas"][0].shape == ()  # (squeezed to 0-d, as PyTorch's)
    np.testing.assert_array_equal(results[1], results[0])


def test_muon_steps_float64_weights():
    engine.manual_seed(0)
    weight = nn.Parameter(engine.randn(3, 2, dtype=engine.float64))
    opt = optim.Muon([weight], lr=0.1, weight_decay=0.0)
    (weight ** 2).sum().backward()
    before = weight.detach().clone()
    opt.step()
    # the step: the orthogonalised momentum (its entries about 1 / sqrt(2)) times lr * sqrt(max(1, 3 / 2))
    moved = (before - weight.detach()).numpy()
    assert weight.dtype == engine.float64 and 0.01 < np.abs(moved).max() < 0.2
    assert np.all(np.sign(moved) == np.sign(before.numpy()))  # (downhill on |w|^2)
