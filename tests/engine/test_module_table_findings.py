"""What PyTorch's module table (test_module_db_vs_pytorch.py) found, held without PyTorch installed: each test's
expected answer is PyTorch 2.13's for the same call."""

from __future__ import annotations

import re

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F


def test_the_modules_forward_takes_its_input_by_pytorchs_name():
    x = engine.ones(2, 3)
    for module in (nn.Linear(3, 2), nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.Identity(), nn.Flatten(),
                   nn.Sequential(nn.Linear(3, 2), nn.ReLU())):
        assert engine.equal(module(input=x), module(x)), type(module).__name__
    a, b, y = engine.tensor([1.0, 2.0]), engine.tensor([2.0, 0.5]), engine.tensor([1.0, -1.0])
    assert nn.MarginRankingLoss()(input1=a, input2=b, target=y).item() == pytest.approx(1.25)
    assert nn.HingeEmbeddingLoss()(input=a, target=y).item() == pytest.approx(0.5)
    cos = nn.CosineEmbeddingLoss()(input1=a.reshape(1, 2), input2=b.reshape(1, 2), target=y[:1])
    assert cos.item() == pytest.approx(1 - 3 / (5 ** 0.5 * 4.25 ** 0.5))


def test_every_loss_takes_pytorchs_old_size_average_and_reduce_flags():
    x, t = engine.tensor([1.0, 3.0]), engine.tensor([0.0, 0.0])
    assert nn.L1Loss(size_average=False)(x, t).item() == 4.0
    assert nn.L1Loss(reduce=False)(x, t).tolist() == [1.0, 3.0]
    assert nn.BCELoss(size_average=False)(engine.tensor([0.5]), engine.tensor([1.0])).item() == pytest.approx(
        np.log(2))
    assert nn.BCEWithLogitsLoss(None, False)(engine.tensor([0.0, 0.0]), engine.tensor([1.0, 0.0])).item() == \
        pytest.approx(2 * np.log(2))


def test_the_binary_losses_keep_weight_and_pos_weight_as_buffers_in_the_state_dict():
    w, pw = engine.tensor([1.0, 2.0]), engine.tensor([3.0, 1.0])
    assert list(nn.BCELoss(weight=w).state_dict()) == ["weight"]
    loss = nn.BCEWithLogitsLoss(weight=w, pos_weight=pw)
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
    other = nn.BCEWithLogitsLoss(weight=engine.zeros(2), pos_weight=engine.zeros(2))
    other.load_state_dict(loss.state_dict())
    assert other.pos_weight.tolist() == [3.0, 1.0]
    assert loss.double().weight.dtype == engine.float64  # (moved with the module, as buffers are)
    assert list(nn.BCELoss().state_dict()) == []


def test_batch_norm_of_an_empty_batch_in_training_is_an_empty_output_in_the_graph():
    m = nn.BatchNorm1d(5)
    x = engine.randn(0, 5, 9, requires_grad=True)
    y = m(x)
    assert tuple(y.shape) == (0, 5, 9) and y.grad_fn is not None
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 5, 9)
    assert m.weight.grad.tolist() == [0.0] * 5 and m.bias.grad.tolist() == [0.0] * 5
    assert m.running_mean.tolist() == [0.0] * 5 and m.running_var.tolist() == [1.0] * 5  # (untouched)
    assert int(m.num_batches_tracked) == 1
    with pytest.raises(ValueError, match=re.escape("Expected more than 1 value per channel when training, got "
                                                   "input size [1, 5, 1]")):
        m(engine.randn(1, 5, 1))


@pytest.mark.parametrize(("training", "eps", "message"), [
    (True, 0.0, "batch_norm eps must be positive during training, but got 0.0"),
    (True, -1.0, "batch_norm eps must be positive during training, but got -1.0"),
    (False, -1.0, "batch_norm eps must be non-negative, but got -1.0"),
])
def test_batch_norm_refuses_an_eps_that_is_not_positive_in_pytorchs_words(training, eps, message):
    m = nn.BatchNorm1d(3, eps=eps).train(training)
    with pytest.raises(ValueError, match=re.escape(message)):
        m(engine.randn(4, 3))


def test_batch_norm_in_eval_mode_takes_an_eps_of_zero():
    m = nn.BatchNorm1d(2, eps=0.0).eval()
    assert m(engine.tensor([[1.0, -2.0]])).tolist() == [[1.0, -2.0]]


def test_gaussian_nll_loss_takes_a_variance_of_size_one_in_one_differing_dimension():
    x, t = engine.zeros(4, 3), engine.ones(4, 3)
    one_per_column = F.gaussian_nll_loss(x, t, engine.full((1, 3), 2.0), reduction="none")
    assert np.allclose(one_per_column.numpy(), 0.5 * (np.log(2.0) + 1 / 2.0))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, t, engine.ones(2, 3))


def test_group_norm_of_float16_sums_in_float32_as_aten_does():
    x = engine.tensor(np.linspace(-3, 3, 150 * 6).reshape(150, 6), dtype=engine.float16, requires_grad=True)
    m = nn.GroupNorm(3, 6).half()
    m(x).mul(engine.linspace(0.5, 1.5, 6, dtype=engine.float16)).sum().backward()
    # the bias's gradient: 150 times each weight of the weighting, exact in float32 and rounded once
    expected = (150 * np.linspace(0.5, 1.5, 6).astype(np.float16).astype(np.float32)).astype(np.float16)
    assert m.bias.grad.dtype == engine.float16
    assert m.bias.grad.numpy().tolist() == expected.tolist()


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(input_size=3, hidden_size=5, bias=0), TypeError, "bias should be of type bool, got: int"),
    (dict(input_size=3, hidden_size=5, batch_first="False"), TypeError, "batch_first should be of type bool, got: str"),
    (dict(input_size=0, hidden_size=5), ValueError, "input_size must be greater than zero"),
    (dict(input_size=-1, hidden_size=5), ValueError, "input_size must be greater than zero"),
    (dict(input_size=3.0, hidden_size=5), TypeError, "input_size should be of type int, got: float"),
    (dict(input_size=3, hidden_size=0), ValueError, "hidden_size must be greater than zero"),
])
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_the_recurrent_nets_check_their_settings_in_pytorchs_order_and_words(kind, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        getattr(nn, kind)(**kwargs)


def test_a_recurrent_net_refuses_an_input_of_another_dtype_by_name():
    net = nn.GRU(3, 5).double()
    with pytest.raises(ValueError, match=re.escape("RNN input dtype (engine.float32) does not match weight dtype "
                                                   "(engine.float64)")):
        net(engine.randn(2, 1, 3))


@pytest.mark.parametrize(("cell", "hx", "message"), [
    (nn.RNNCell(3, 4), engine.zeros(1, 1, 1, 4), "RNNCell: Expected hidden to be 1D or 2D, got 4D instead"),
    (nn.GRUCell(3, 4), engine.zeros(1, 1, 1, 4), "GRUCell: Expected hidden to be 1D or 2D, got 4D instead"),
    (nn.LSTMCell(3, 4), (engine.zeros(1, 1, 1, 4), engine.zeros(2, 4)),
     "LSTMCell: Expected hx[0] to be 1D or 2D, got 4D instead"),
])
def test_the_cells_refuse_a_state_of_the_wrong_rank_in_pytorchs_words(cell, hx, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        cell(engine.zeros(2, 3), hx)


@pytest.mark.parametrize(("shape", "target", "error", "message"), [
    ((4, 3), engine.zeros(5, dtype=engine.float32), ValueError,
     "Expected input batch_size (4) to match target batch_size (5)."),
    ((4, 3), engine.zeros(4, 2, dtype=engine.float32), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    ((3,), engine.zeros(3, dtype=engine.int64), ValueError,
     "For 1D input, 1D target must have size 1, but got target size: 3"),
    ((4, 3, 2), engine.zeros(4, 3, dtype=engine.float32), RuntimeError, "Expected target size [4, 2], got [4, 3]"),
    ((4, 3, 2, 2), engine.zeros(4, 2, dtype=engine.int64), RuntimeError,
     "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"),
    ((4, 3, 2, 2), engine.zeros(4, 2, 3, dtype=engine.int64), RuntimeError,
     "size mismatch (got input: [4, 3, 2, 2] , target: [4, 2, 3]"),
    ((4, 3), engine.zeros(4, dtype=engine.float32), RuntimeError, "expected target dtype to be Long or Byte, "
                                                                   "but got Float"),
    ((), engine.zeros((), dtype=engine.int64), ValueError, "Expected 1 or more dimensions (got 0)"),
])
def test_nll_loss_checks_its_arguments_in_atens_order_and_words(shape, target, error, message):
    # (cross_entropy reads a target of the input's shape as probabilities, so checks it otherwise)
    for fn in (F.nll_loss,) + ((F.cross_entropy,) if tuple(target.shape) != shape else ()):
        with pytest.raises(error, match=re.escape(message)):
            fn(engine.zeros(shape), target)


def test_nll_loss_refuses_a_weight_of_another_dtype_and_takes_a_one_element_target_for_one_row():
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.nll_loss(engine.zeros(4, 3), engine.zeros(4, dtype=engine.int64), weight=engine.ones(3, dtype=engine.float64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all or no classes"):
        F.nll_loss(engine.zeros(4, 3, 2), engine.zeros(4, 2, dtype=engine.int64), weight=engine.ones(2))
    row = engine.tensor([0.1, 0.2, 0.7])
    out = F.nll_loss(row, engine.tensor([2]), reduction="none")
    assert out.shape == () and out.item() == pytest.approx(-0.7)


def test_cross_entropy_with_probabilities_refuses_ignore_index_as_pytorch():
    x, p = engine.zeros(4, 3), engine.full((4, 3), 1 / 3)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(x, p, ignore_index=1)
    assert F.cross_entropy(x, p, ignore_index=-1).item() == pytest.approx(np.log(3))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got "
                                           "Long"):
        F.cross_entropy(engine.tensor(1.0), engine.tensor(0))


def test_an_empty_embedding_table_is_made_and_a_negative_one_refused_as_pytorch():
    assert tuple(nn.Embedding(0, 3).weight.shape) == (0, 3)
    assert tuple(nn.Embedding(3, 0).weight.shape) == (3, 0)
    with pytest.raises(RuntimeError, match=re.escape("Trying to create tensor with negative dimension -1: [-1, 3]")):
        nn.Embedding(-1, 3)
    with pytest.raises(TypeError, match="num_embeddings must be an integer"):
        nn.Embedding(2.5, 3)


@pytest.mark.parametrize(("module", "shape", "message"), [
    (nn.CircularPad1d(3), (1, 2, 3, 4), "expected 2D or 3D input (got 4D input)"),
    (nn.CircularPad2d(3), (3, 4), "expected 3D or 4D input (got 2D input)"),
    (nn.CircularPad3d(3), (3, 4), "expected 4D or 5D input (got 2D input)"),
])
def test_the_circular_pads_check_the_inputs_rank_first(module, shape, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        module(engine.zeros(shape))


def test_the_settings_pytorch_checks_at_construction():
    with pytest.raises(TypeError, match=re.escape("delta must be a float or int, got: <class 'complex'>")):
        nn.HuberLoss(delta=1 + 0j)
    with pytest.raises(ValueError, match=re.escape("num_channels (10) must be divisible by num_groups (3)")):
        nn.GroupNorm(3, 10)
    assert nn.GroupNorm(2, 4, 1e-5, True, "cpu").weight.device.type == "cpu"  # (device fifth, bias keyword-only)
    assert nn.LazyBatchNorm1d(bias=False)(engine.randn(4, 3)).shape == (4, 3)
    with pytest.warns(FutureWarning, match="is deprecated and renamed"):
        clamp = nn.Hardtanh(min_value=-2.0, max_value=3.0)
    assert (clamp.min_val, clamp.max_val) == (-2.0, 3.0)
    with pytest.raises(RuntimeError, match=re.escape("non-empty 3D or 4D (batch mode) tensor expected for input")):
        nn.MaxPool2d(2)(engine.zeros(3, 4))


@pytest.mark.parametrize(("make", "shape", "out"), [
    (lambda: nn.Conv1d(4, 5, 3), (0, 4, 10), (0, 5, 8)),
    (lambda: nn.Conv2d(4, 6, 3, groups=2), (0, 4, 5, 5), (0, 6, 3, 3)),
    (lambda: nn.Conv3d(2, 3, 2), (0, 2, 3, 3, 3), (0, 3, 2, 2, 2)),
    (lambda: nn.ConvTranspose2d(4, 6, 3), (0, 4, 5, 5), (0, 6, 7, 7)),
])
def test_a_convolution_of_an_empty_batch_is_an_empty_batch_with_zero_gradients(make, shape, out):
    engine.manual_seed(0)
    conv = make().double()
    x = engine.zeros(shape, dtype=engine.float64, requires_grad=True)
    y = conv(x)
    assert tuple(y.shape) == out
    y.sum().backward()
    assert tuple(x.grad.shape) == shape
    assert conv.weight.grad.abs().sum().item() == 0.0 and conv.bias.grad.abs().sum().item() == 0.0


def test_the_binary_cross_entropies_take_the_old_reduce_flags_positionally_as_pytorch():
    p, y = engine.tensor([0.25, 0.5]), engine.tensor([1.0, 0.0])
    each = F.binary_cross_entropy(p, y, None, None, False)  # (weight, size_average, reduce)
    assert np.allclose(each.numpy(), [np.log(4), np.log(2)])
    logits = engine.tensor([0.0, 0.0])
    assert F.binary_cross_entropy_with_logits(logits, y, None, False).item() == pytest.approx(2 * np.log(2))


def test_multi_margin_loss_of_a_vector_and_a_0d_target_is_0d_as_pytorch():
    x = engine.tensor([0.5, 1.0, -0.2], dtype=engine.float64, requires_grad=True)
    loss = F.multi_margin_loss(x, engine.tensor(1), reduction="none", p=2,
                               weight=engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64))
    assert loss.shape == () and loss.grad_fn.name() == "MultiMarginLossBackward0"
    assert loss.item() == pytest.approx(1 / 6)
    loss.backward()
    assert np.allclose(x.grad.numpy(), [2 / 3, -2 / 3, 0.0])
    assert F.multi_margin_loss(x, engine.tensor([1]), reduction="none").shape == (1,)
