"""Anomaly detection (``autograd.detect_anomaly``, ``set_detect_anomaly``) and the legacy ``Variable``, held to
PyTorch's: the node whose backward gives a NaN stops the walk with PyTorch's message, after a warning that shows
the line of the forward that made it. Before, ``torch.autograd.set_detect_anomaly(True)``, the first thing a
learner is told to try when the loss turns NaN, raised AttributeError, and so did ``from torch.autograd import
Variable``, the older tutorials' first line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine.autograd.function import Function as _Function
from tests.engine.helpers import HAVE_TORCH

pytestmark = pytest.mark.usefixtures("graph_core")  # the compiled and the Python walks both (conftest.py)

ENABLED = "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for " \
          "debugging."


def _div_by_itself(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x / x  # the line the warning must show
    y.sum().backward()


def _sqrt_times_zero(lib):
    x = lib.tensor([0.0, 4.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()


def _sqrt_of_negative_in_a_net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    out = net(lib.ones(2, 3))
    (out - 10).sqrt().sum().backward()  # sqrt of a negative: NaN forward, and a NaN gradient from SqrtBackward0


def _custom_function(lib):
    class Halve(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x / 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    Halve.apply(x).sum().backward()


def _second_order(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (g,) = lib.autograd.grad((x.sqrt() ** 3).sum(), x, create_graph=True)  # 1.5 sqrt(x): fine at 0
    g.sum().backward()  # its derivative, 0.75 / sqrt(x), is inf at 0, and inf * 0 somewhere gives NaN


def _clean_run(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    return x.grad.tolist()


PROGRAMS = {
    "div_by_itself": (_div_by_itself, "Function 'DivBackward0' returned nan values in its 1th output.",
                      "y = x / x  # the line the warning must show"),
    "sqrt_times_zero": (_sqrt_times_zero, "Function 'SqrtBackward0' returned nan values in its 0th output.",
                        "(x.sqrt() * 0).sum().backward()"),
    "sqrt_of_negative": (_sqrt_of_negative_in_a_net, "Function 'SqrtBackward0' returned nan values in its 0th "
                         "output.", "(out - 10).sqrt().sum().backward()"),
    "custom_function": (_custom_function, "Function 'HalveBackward' returned nan values in its 0th output.",
                        "Halve.apply(x).sum().backward()"),
}


def _run(lib, program):
    """(the error, the warnings) of ``program`` under detect_anomaly."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with lib.autograd.detect_anomaly():
                program(lib)
        except RuntimeError as e:
            error = str(e)
        else:
            error = None
    return error, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_node_that_made_the_nan_is_named_with_its_forward_line(name):
    program, message, line = PROGRAMS[name]
    error, warned = _run(engine, program)
    assert error == message
    assert warned[0] == ENABLED
    node = message.split("'")[1]
    shown = [w for w in warned if w.startswith(f"Error detected in {node}. Traceback of forward call that caused "
                                               "the error:\n")]
    assert len(shown) == 1 and line in shown[0]
    assert "engine/" not in shown[0].replace("tests/engine/", "")  # the user's frames, not the engine's
    assert not engine.is_anomaly_enabled()


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pytorch_names_the_same_node(name):
    import torch

    program, message, line = PROGRAMS[name]
    error, warned = _run(torch, program)
    assert error == message and warned[0] == ENABLED
    assert any(line in w for w in warned[1:])


def test_the_second_order_walk_is_checked_too():
    error, warned = _run(engine, _second_order)
    assert error is not None and error.startswith("Function '") and "returned nan values in its 0th output" in error
    assert any("g.sum().backward()" in w or "lib.autograd.grad(" in w for w in warned[1:])


def test_set_detect_anomaly_as_a_call_and_a_block():
    x = engine.tensor([0.0, 4.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()  # recorded before anomaly detection was on: no forward line to show
    plain_apply = _Function.__dict__["apply"]
    engine.autograd.set_detect_anomaly(True)
    try:
        assert engine.is_anomaly_enabled() and engine.is_anomaly_check_nan_enabled()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
                y.backward()
        assert [str(w.message) for w in caught if w.category is UserWarning] == [
            "Error detected in SqrtBackward0. No forward pass information available. Enable detect anomaly during "
            "forward pass for more information."]
    finally:
        engine.autograd.set_detect_anomaly(False)
    assert not engine.is_anomaly_enabled()
    assert _Function.__dict__["apply"] is plain_apply  # the forward's recording as it was (compiled, here)

    with engine.autograd.set_detect_anomaly(True, check_nan=False):  # stacks kept, NaN let through
        assert engine.is_anomaly_enabled() and not engine.is_anomaly_check_nan_enabled()
        x = engine.tensor([0.0, 1.0], requires_grad=True)
        (x / x).sum().backward()
        assert np.isnan(x.grad.numpy()[0]) and x.grad.tolist()[1] == 0.0
    assert not engine.is_anomaly_enabled() and engine.is_anomaly_check_nan_enabled()
    engine.set_anomaly_enabled(True)
    assert engine.is_anomaly_enabled()
    engine.set_anomaly_enabled(False)
    assert not engine.is_anomaly_enabled()


def test_a_backward_that_raises_shows_its_forward_line():
    class Broken(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("the user's own error")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with engine.autograd.detect_anomaly():
            x = engine.ones(2, requires_grad=True)
            z = Broken.apply(x).sum()  # the Broken line
            with pytest.raises(ValueError, match="the user's own error"):
                z.backward()
    shown = [str(w.message) for w in caught if w.category is UserWarning][1:]
    assert len(shown) == 1 and shown[0].startswith("Error detected in BrokenBackward.")
    assert "z = Broken.apply(x).sum()  # the Broken line" in shown[0]


def test_as_a_decorator_and_clean_runs_are_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @engine.autograd.detect_anomaly()
        def step():
            assert engine.is_anomaly_enabled()
            return _clean_run(engine)

    assert step() == [2.0, 4.0]
    assert not engine.is_anomaly_enabled()


def test_variable_is_a_tensor_as_since_pytorch_0_4():
    from engine.autograd import Variable

    t = engine.tensor([1.0, 2.0])
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and not t.requires_grad and v.is_leaf
    assert v.data_ptr() == t.data_ptr()  # the same memory
    assert isinstance(t, Variable) and isinstance(v, engine.Tensor) and not isinstance([1.0], Variable)
    w = Variable(engine.ones(2, requires_grad=True) * 2)
    assert w.grad_fn is None and not w.requires_grad  # a leaf: no history
    assert Variable().shape == (0,)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        assert not Variable(t, volatile=True).requires_grad


def test_the_old_tutorials_variable_program_trains():
    """The 2017 tutorial's autograd example, as it was written (Variable, .data, grad.data.zero_())."""
    from engine.autograd import Variable

    torch = engine
    dtype = torch.FloatTensor
    torch.manual_seed(0)
    N, D_in, H, D_out = 64, 1000, 100, 10
    x = Variable(torch.randn(N, D_in).type(dtype), requires_grad=False)
    y = Variable(torch.randn(N, D_out).type(dtype), requires_grad=False)
    w1 = Variable(torch.randn(D_in, H).type(dtype), requires_grad=True)
    w2 = Variable(torch.randn(H, D_out).type(dtype), requires_grad=True)
    learning_rate = 1e-6
    losses = []
    for _ in range(50):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        w1.data -= learning_rate * w1.grad.data
        w2.data -= learning_rate * w2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
    assert losses[-1] < losses[0] / 10
