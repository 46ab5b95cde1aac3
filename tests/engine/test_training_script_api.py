"""The parts of PyTorch a learner's own training script reaches for past the tutorial: the functional arithmetic
(``torch.add(x, y, out=r)``), rounding, ``std``/``var``, ``chunk``/``split``/``repeat``, ``new_*``, ``nn.ModuleList``,
``nn.Dropout``, ``nn.init``, ``torch.utils.data``, ``torch.save``/``torch.load`` with optimizer checkpoints, and
``optim.lr_scheduler``. Values are asserted here; where torch is installed, the same calls are made on both and
compared (gradients included)."""

from __future__ import annotations

import io
import math
import pickle
import warnings

import numpy as np
import pytest

import engine
from engine.utils.data import ConcatDataset, DataLoader, Subset, TensorDataset, default_collate, random_split


def _t(values, grad=False, dtype=engine.float32):
    return engine.tensor(values, dtype=dtype, requires_grad=grad)


# ----------------------------------------------------------------------------- functional arithmetic

def test_add_sub_mul_div_as_functions():
    a, b = _t([1.0, 2.0, 3.0]), _t([4.0, 5.0, 6.0])
    assert engine.add(a, b, alpha=2).tolist() == [9.0, 12.0, 15.0]
    assert engine.sub(a, b, alpha=0.5).tolist() == [-1.0, -0.5, 0.0]
    assert engine.mul(a, 2).tolist() == [2.0, 4.0, 6.0] and engine.multiply(a, b).tolist() == [4.0, 10.0, 18.0]
    assert engine.div(b, a).tolist() == pytest.approx([4.0, 2.5, 2.0])
    assert engine.true_divide is engine.div and engine.subtract is engine.sub and engine.divide is engine.div
    assert engine.neg(a).tolist() == [-1.0, -2.0, -3.0] and engine.square(a).tolist() == [1.0, 4.0, 9.0]


def test_div_rounding_modes_keep_integers_integer():
    n = engine.tensor([7, -7, 6])
    floor = engine.div(n, 2, rounding_mode="floor")
    trunc = engine.div(n, 2, rounding_mode="trunc")
    assert floor.tolist() == [3, -4, 3] and floor.dtype == engine.int64
    assert trunc.tolist() == [3, -3, 3] and trunc.dtype == engine.int64
    assert engine.div(n, 2).tolist() == [3.5, -3.5, 3.0] and engine.div(n, 2).dtype == engine.float32
    assert engine.div(_t([7.5, -7.5]), 2, rounding_mode="floor").tolist() == [3.0, -4.0]
    with pytest.raises(ValueError, match="rounding_mode"):
        engine.div(n, 2, rounding_mode="round")


def test_out_writes_into_the_given_tensor():
    a = engine.arange(4.0)
    r = engine.empty(4)
    assert engine.add(a, a, out=r) is r and r.tolist() == [0.0, 2.0, 4.0, 6.0]
    small = engine.empty(1)
    engine.mul(a, 3, out=small)  # resized to the result, as PyTorch resizes
    assert small.tolist() == [0.0, 3.0, 6.0, 9.0]
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        engine.add(_t([1.0], grad=True), 1, out=engine.empty(1))
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        engine.add(a, a, out=[0, 0, 0, 0])


def test_rounding_family_values_dtypes_and_zero_gradient():
    x = _t([-1.5, -0.5, 0.5, 1.5, 2.7], grad=True)
    assert x.floor().tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0]
    assert x.ceil().tolist() == [-1.0, -0.0, 1.0, 2.0, 3.0]
    assert x.round().tolist() == [-2.0, -0.0, 0.0, 2.0, 3.0]  # half to even, as PyTorch
    assert x.trunc().tolist() == [-1.0, -0.0, 0.0, 1.0, 2.0]
    assert x.sign().tolist() == [-1.0, -1.0, 1.0, 1.0, 1.0]
    assert engine.round(_t([1.2345, 2.5678]), decimals=2).tolist() == pytest.approx([1.23, 2.57])
    loss = (x.floor() + x.ceil() + x.round() + x.trunc() + x.sign()).sum() + (x * 0).sum()
    loss.backward()
    assert x.grad.tolist() == [0.0] * 5  # a zero gradient, not none: PyTorch's definition
    assert x.floor().grad_fn.name() == "FloorBackward0" and x.sign().grad_fn.name() == "SignBackward0"
    ints = engine.tensor([-3, 0, 4])
    assert ints.floor().dtype == engine.int64 and ints.floor().tolist() == [-3, 0, 4]
    assert ints.sign().tolist() == [-1, 0, 1] and ints.sign().dtype == engine.int64


# ----------------------------------------------------------------------------- statistics

def test_var_and_std_with_pytorchs_defaults():
    rows = np.array([[1.0, 2.0, 4.0, 7.0], [0.5, 0.5, 3.0, -1.0], [2.0, 9.0, 1.0, 0.0]])
    x = engine.tensor(rows, dtype=engine.float64)
    assert x.var().item() == pytest.approx(rows.var(ddof=1))  # unbiased by default
    assert x.std().item() == pytest.approx(rows.std(ddof=1))
    assert x.var(unbiased=False).item() == pytest.approx(rows.var())
    assert engine.var(x, False).item() == pytest.approx(rows.var())  # the legacy positional unbiased
    np.testing.assert_allclose(x.std(1).numpy(), rows.std(axis=1, ddof=1))
    np.testing.assert_allclose(x.var(dim=0, keepdim=True).numpy(), rows.var(axis=0, ddof=1, keepdims=True))
    np.testing.assert_allclose(engine.std(x, dim=(0, 1), correction=0).numpy(), rows.std())
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom is <= 0"):
        assert math.isnan(_t([3.0]).var().item())  # one sample, unbiased: NaN and a warning, as PyTorch


def test_norms_of_every_order():
    x = engine.tensor([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]], dtype=engine.float64)
    assert x.norm().item() == pytest.approx(math.sqrt(34)) and x.norm("fro").item() == pytest.approx(math.sqrt(34))
    assert x.norm(1).item() == 12.0 and x.norm(0).item() == 5.0
    assert x.norm(float("inf")).item() == 4.0 and x.norm(float("-inf")).item() == 0.0
    assert x.norm(3).item() == pytest.approx((27 + 64 + 1 + 8 + 8) ** (1 / 3))
    assert x.norm(2, 1).tolist() == pytest.approx([5.0, 3.0])
    assert x.norm(1, 0, True).tolist() == [[4.0, 6.0, 2.0]] and x.norm(float("inf"), 1).tolist() == [4.0, 2.0]
    assert x.norm("nuc").item() == pytest.approx(float(np.linalg.svd(x.numpy(), compute_uv=False).sum()))
    with pytest.raises(ValueError, match="p must be a number"):
        x.norm("max")


def test_softmax_methods_and_functions():
    x = _t([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    p = x.softmax(1)
    np.testing.assert_allclose(p.numpy().sum(axis=1), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(p.numpy()[1], [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(engine.log_softmax(x, 1).numpy(), np.log(p.numpy()), rtol=1e-5)
    np.testing.assert_allclose(engine.softmax(x, dim=0).numpy().sum(axis=0), [1.0] * 3, rtol=1e-6)


# ----------------------------------------------------------------------------- pieces and tiles

def test_split_chunk_unbind_and_their_gradients():
    x = engine.arange(10.0, requires_grad=True)
    assert [p.tolist() for p in x.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.tolist() for p in x.split([2, 3, 5])] == [[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]
    assert [len(p) for p in x.chunk(3)] == [4, 4, 2] and [len(p) for p in engine.chunk(x, 4)] == [3, 3, 3, 1]
    m = engine.arange(6.0).view(2, 3)
    assert [p.tolist() for p in m.unbind(1)] == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert [p.shape for p in engine.split(m, 2, dim=1)] == [(2, 2), (2, 1)]
    a, b = x.split([3, 7])
    (a * 2).sum().backward()
    assert x.grad.tolist() == [2.0] * 3 + [0.0] * 7  # each piece's gradient reaches only its own elements
    with pytest.raises(RuntimeError, match="sum exactly to 10"):
        x.split([3, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        x.chunk(0)
    scalar = engine.tensor(1.0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        scalar.split(1)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        scalar.chunk(2)
    with pytest.raises(IndexError, match="has no dimensions"):
        scalar.unbind()


def test_repeat_tiles_and_sums_the_gradient_back():
    x = _t([[1.0, 2.0]], grad=True)
    r = x.repeat(2, 3)
    assert r.tolist() == [[1.0, 2.0] * 3] * 2
    assert _t([1.0, 2.0]).repeat(2, 1, 2).shape == (2, 1, 4)  # more sizes than dimensions: leading ones
    (r * engine.arange(12.0).view(2, 6)).sum().backward()
    assert x.grad.tolist() == [[0 + 2 + 4 + 6 + 8 + 10, 1 + 3 + 5 + 7 + 9 + 11]]
    with pytest.raises(RuntimeError, match="can not be smaller"):
        x.repeat(2)


def test_new_tensors_take_the_source_dtype_and_device(device):
    x = engine.zeros(2, dtype=engine.float64, device=device)
    for t in (x.new_zeros(3), x.new_ones((2, 2)), x.new_empty(4), x.new_full((2,), 7.0), x.new_tensor([1, 2])):
        assert t.dtype == engine.float64 and t.device == x.device and not t.requires_grad
    assert x.new_full((2,), 7.0).tolist() == [7.0, 7.0] and x.new_ones(2, 2).sum().item() == 4.0
    assert x.new_zeros(2, dtype=engine.int64).dtype == engine.int64
    assert x.new_tensor([1.5], requires_grad=True).requires_grad


def test_masked_fill_in_place_where_outer_reshape_as():
    x = _t([1.0, -2.0, 3.0])
    assert x.masked_fill_(x < 0, 0.0) is x and x.tolist() == [1.0, 0.0, 3.0]
    w = _t([1.0, -2.0], grad=True)
    y = w * 1
    y.masked_fill_(y < 0, 5.0)
    y.sum().backward()
    assert y.tolist() == [1.0, 5.0] and w.grad.tolist() == [1.0, 0.0]
    assert x.where(x > 1, _t([9.0, 9.0, 9.0])).tolist() == [9.0, 9.0, 3.0]
    assert engine.outer(_t([1.0, 2.0]), _t([3.0, 4.0, 5.0])).tolist() == [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    assert engine.arange(6.0).reshape_as(engine.zeros(3, 2)).shape == (3, 2)


def test_a_list_of_losses_becomes_a_tensor_on_any_device(device):
    """losses.append(loss) then torch.tensor(losses): each one-element tensor is read as its value, as PyTorch reads
    it (a GPU run's losses were refused by NumPy's conversion); a longer tensor is refused as PyTorch refuses it."""
    x = engine.arange(4.0, device=device, requires_grad=True)
    losses = [x.sum(), x.mean(), x[1:2]]
    t = engine.tensor(losses)
    assert t.tolist() == [6.0, 1.5, 1.0] and t.dtype == engine.float32 and not t.requires_grad
    assert t.device == engine.device("cpu")  # made where engine.tensor makes tensors, as PyTorch
    ints = [engine.tensor(1, dtype=engine.int32, device=device), engine.tensor(2, dtype=engine.int32, device=device)]
    assert engine.tensor(ints).dtype == engine.int32
    assert engine.tensor([[engine.tensor(1.0, device=device), 2.0]]).tolist() == [[1.0, 2.0]]
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        engine.tensor([engine.ones(2, device=device), engine.ones(2, device=device)])


# ----------------------------------------------------------------------------- nn

def test_module_list_registers_its_modules_and_prints_as_pytorch():
    layers = engine.nn.ModuleList([engine.nn.Linear(2, 2), engine.nn.Linear(2, 2), engine.nn.ReLU()])
    layers.append(engine.nn.Linear(2, 3))

    class Net(engine.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = layers

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    net = Net()
    assert len(list(net.parameters())) == 6 and len(layers) == 4
    assert [n for n, _ in net.named_parameters()][:2] == ["layers.0.weight", "layers.0.bias"]
    assert net(engine.ones(5, 2)).shape == (5, 3)
    assert repr(layers) == ("ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
                            "  (2): ReLU()\n  (3): Linear(in_features=2, out_features=3, bias=True)\n)")
    assert isinstance(layers[1:3], engine.nn.ModuleList) and len(layers[1:3]) == 2
    assert layers[-1].out_features == 3
    with pytest.raises(TypeError, match="holds Modules"):
        layers.append(engine.ones(2))
    with pytest.raises(IndexError):
        layers[4]


def test_dropout_zeroes_about_p_and_scales_the_rest_in_training_only():
    engine.manual_seed(3)
    drop = engine.nn.Dropout(0.25)
    x = engine.ones(200, 100, requires_grad=True)
    y = drop(x)
    kept = (y != 0).float().mean().item()
    assert 0.73 < kept < 0.77  # 20,000 draws: 0.75 within ~10 standard deviations
    values = np.unique(y.detach().numpy())
    assert len(values) == 2 and values[0] == 0.0 and values[1] == pytest.approx(1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())  # the gradient passes where it kept
    drop.eval()
    assert drop(x) is x
    assert repr(drop) == "Dropout(p=0.25, inplace=False)"
    assert engine.nn.functional.dropout(x, 1.0).abs().sum().item() == 0.0
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        engine.nn.Dropout(1.5)


def test_l1_loss_softmax_modules_and_the_mse_loss_repr():
    a, b = _t([1.0, -2.0, 3.0]), _t([0.0, 0.0, 0.0])
    assert engine.nn.L1Loss()(a, b).item() == pytest.approx(2.0)
    assert engine.nn.L1Loss(reduction="sum")(a, b).item() == pytest.approx(6.0)
    assert repr(engine.nn.MSELoss(reduction="sum")) == "MSELoss()"  # PyTorch prints no reduction
    assert repr(engine.nn.Softmax(dim=1)) == "Softmax(dim=1)"
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        p = engine.nn.Softmax()(engine.zeros(2, 4))
    assert p.tolist() == [[0.25] * 4] * 2  # dim 1 for a 2-D input, PyTorch's legacy choice
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        engine.nn.L1Loss(reduction="avg")


def test_one_hot_as_pytorchs():
    labels = engine.tensor([2, 0, 1])
    assert engine.nn.functional.one_hot(labels).tolist() == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    wide = engine.nn.functional.one_hot(labels.view(3, 1), 4)
    assert wide.shape == (3, 1, 4) and wide.dtype == engine.int64 and wide.sum().item() == 3
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        engine.nn.functional.one_hot(labels, 2)
    with pytest.raises(RuntimeError, match="LongTensor"):
        engine.nn.functional.one_hot(labels.float())


def test_init_functions_fill_in_place_within_pytorchs_bounds():
    engine.manual_seed(0)
    w = engine.nn.Parameter(engine.empty(300, 200))
    out = engine.nn.init.xavier_uniform_(w)
    assert out is w and w.grad_fn is None and w.requires_grad
    bound = math.sqrt(6 / (300 + 200))
    assert w.abs().max().item() <= bound and w.abs().max().item() > 0.99 * bound
    engine.nn.init.kaiming_uniform_(w, a=math.sqrt(5))  # nn.Linear's own start
    assert w.abs().max().item() <= 1 / math.sqrt(200) + 1e-7
    engine.nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert w.std().item() == pytest.approx(math.sqrt(2 / 200), rel=0.02)
    engine.nn.init.zeros_(w)
    assert w.abs().sum().item() == 0.0
    engine.nn.init.constant_(w, 0.5)
    assert w.mean().item() == 0.5
    assert engine.nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert engine.nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        engine.nn.init.xavier_uniform_(engine.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        engine.nn.init.calculate_gain("swish")


def test_clip_grad_norm_scales_all_gradients_as_one_vector(device):
    a = engine.zeros(2, device=device, requires_grad=True)
    b = engine.zeros(1, device=device, requires_grad=True)
    ((a * engine.tensor([3.0, 0.0], device=device)).sum() + (b * 4.0).sum()).backward()  # [3, 0] and [4]: norm 5
    total = engine.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0) and total.device == a.device
    assert a.grad.tolist() == pytest.approx([0.6, 0.0], rel=1e-5) and b.grad.tolist() == pytest.approx([0.8], rel=1e-5)
    assert engine.nn.utils.clip_grad_norm_([a, b], max_norm=10.0).item() == pytest.approx(1.0, rel=1e-5)
    assert a.grad.tolist() == pytest.approx([0.6, 0.0], rel=1e-5)  # under the bound: unchanged
    assert engine.nn.utils.clip_grad_norm_(a, 0.3, norm_type=float("inf")).item() == pytest.approx(0.6, rel=1e-5)
    assert a.grad.tolist() == pytest.approx([0.3, 0.0], rel=1e-4)
    engine.nn.utils.clip_grad_value_([b], 0.5)
    assert b.grad.tolist() == [0.5]
    b.grad.fill_(float("nan"))
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        engine.nn.utils.clip_grad_norm_([b], 1.0, error_if_nonfinite=True)


def test_parameter_vectors_go_both_ways():
    model = engine.nn.Linear(3, 2)
    vec = engine.nn.utils.parameters_to_vector(model.parameters())
    assert vec.shape == (8,)
    engine.nn.utils.vector_to_parameters(engine.arange(8.0), model.parameters())
    assert model.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and model.bias.tolist() == [6.0, 7.0]
    with pytest.raises(RuntimeError, match="the vector has 3 elements, the parameters 8"):
        engine.nn.utils.vector_to_parameters(engine.arange(3.0), model.parameters())


def test_adamw_decays_the_weights_apart_from_the_gradient():
    w = engine.tensor([1.0, -2.0], dtype=engine.float64, requires_grad=True)
    opt = engine.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    (w * engine.tensor([2.0, -3.0], dtype=engine.float64)).sum().backward()
    opt.step()
    # first step: the weights shrink by lr * weight_decay, then Adam moves each by lr against its gradient's sign
    assert w.tolist() == pytest.approx([1.0 * 0.95 - 0.1, -2.0 * 0.95 + 0.1], abs=1e-7)
    assert repr(opt).startswith("AdamW (") and opt.param_groups[0]["weight_decay"] == 0.5


def test_batch_norm_trains_on_the_batch_and_evaluates_on_running_averages():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(8, 3)) * [1.0, 3.0, 0.5] + [0.0, 5.0, -2.0]
    bn = engine.nn.BatchNorm1d(3).double()
    x = engine.tensor(rows, dtype=engine.float64)
    y = bn(x).detach().numpy()
    np.testing.assert_allclose(y, (rows - rows.mean(0)) / np.sqrt(rows.var(0) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * rows.mean(0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * rows.var(0, ddof=1), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1 and bn.num_batches_tracked.dtype == engine.int64
    bn.eval()
    np.testing.assert_allclose(bn(x).detach().numpy(), (rows - bn.running_mean.numpy())
                               / np.sqrt(bn.running_var.numpy() + 1e-5), rtol=1e-10)
    assert bn.num_batches_tracked.item() == 1  # evaluation leaves the averages alone
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    cumulative = engine.nn.BatchNorm1d(4, momentum=None).double()
    seq = engine.tensor(rng.normal(size=(5, 4, 6)), dtype=engine.float64)
    cumulative(seq)
    cumulative(seq * 2)
    per_channel = seq.numpy().transpose(1, 0, 2).reshape(4, -1)
    np.testing.assert_allclose(cumulative.running_var.numpy(), per_channel.var(1, ddof=1) * (1 + 4) / 2, rtol=1e-10)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        engine.nn.BatchNorm1d(3)(engine.ones(1, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        engine.nn.BatchNorm1d(3)(engine.ones(2, 3, 4, 5))
    assert repr(engine.nn.BatchNorm1d(3, affine=False)) == ("BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=False, "
                                                            "bias=False, track_running_stats=True)")


def test_buffers_move_with_the_module_and_keep_integer_counts():
    class Counter(engine.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = engine.nn.Linear(2, 2)
            self.register_buffer("seen", engine.tensor(0))
            self.register_buffer("scratch", engine.zeros(2), persistent=False)

    m = Counter()
    assert [n for n, _ in m.named_buffers()] == ["seen", "scratch"]
    assert list(m.state_dict()) == ["seen", "lin.weight", "lin.bias"]  # module by module: its own first
    m.double()
    assert m.lin.weight.dtype == engine.float64 and m.scratch.dtype == engine.float64
    assert m.seen.dtype == engine.int64
    m.seen = engine.tensor(5)
    assert m.state_dict()["seen"].item() == 5
    fresh = Counter()
    assert repr(fresh.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
    assert fresh.seen.item() == 5
    result = fresh.load_state_dict({"seen": engine.tensor(1)}, strict=False)
    assert result.missing_keys == ["lin.weight", "lin.bias"] and result.unexpected_keys == []
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer"):
        m.register_buffer("bad", [1, 2])
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("lin", engine.zeros(1))


def test_layer_norm_and_leaky_relu():
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(3, 5)) * 4 + 2
    out = engine.nn.LayerNorm(5).double()(engine.tensor(rows, dtype=engine.float64)).detach().numpy()
    expected = (rows - rows.mean(1, keepdims=True)) / np.sqrt(rows.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, expected, rtol=1e-10)
    with pytest.raises(RuntimeError, match="expected input with shape"):
        engine.nn.LayerNorm(4)(engine.ones(2, 5))
    x = engine.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = engine.nn.LeakyReLU(0.2)(x)
    y.sum().backward()
    assert y.tolist() == pytest.approx([-0.4, 0.0, 3.0]) and x.grad.tolist() == pytest.approx([0.2, 0.2, 1.0])
    assert repr(engine.nn.LayerNorm(5)) == "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=True)"


def test_binary_cross_entropy_stays_finite_where_a_sigmoid_saturates(device):
    p = engine.tensor([0.0, 0.2, 0.9, 1.0], device=device, requires_grad=True)  # float32 sigmoid(20) is 1.0
    y = engine.tensor([0.0, 1.0, 1.0, 1.0], device=device)
    loss = engine.nn.BCELoss()(p, y)
    loss.backward()
    assert loss.item() == pytest.approx((-math.log(0.2) - math.log(0.9)) / 4, rel=1e-6)
    assert p.grad.tolist() == pytest.approx([0.0, -1.25, -1 / 3.6, 0.0], rel=1e-5)  # (x - y) / (x (1 - x)) / 4
    assert loss.grad_fn.name() == "BinaryCrossEntropyBackward0"  # the reduction inside the node, as PyTorch's
    assert engine.nn.BCELoss(reduction="none")(p, y).shape == (4,)
    off = engine.tensor([0.0, 1.0, 1.0, 0.0], device=device)
    assert engine.nn.BCELoss(reduction="sum")(p.detach(), off).item() == pytest.approx(100 - math.log(0.2 * 0.9))
    with pytest.raises(ValueError, match="different to the input size"):
        engine.nn.BCELoss()(p, y[:2])


def test_binary_cross_entropy_with_logits_has_the_sigmoids_gradient_everywhere(device):
    x = engine.tensor([-100.0, -1.0, 0.0, 1.0, 100.0], device=device, requires_grad=True)
    y = engine.tensor([1.0, 1.0, 1.0, 0.0, 0.0], device=device)
    loss = engine.nn.BCEWithLogitsLoss(reduction="sum")(x, y)
    loss.backward()
    expected = sum(-math.log(1 / (1 + math.exp(-v))) if t else -math.log(1 - 1 / (1 + math.exp(-v)))
                   for v, t in ((-1.0, 1), (0.0, 1), (1.0, 0))) + 200.0
    assert loss.item() == pytest.approx(expected, rel=1e-6)  # no overflow at +-100
    sigmoid = [1 / (1 + math.exp(-v)) for v in (-100.0, -1.0, 0.0, 1.0, 100.0)]
    assert x.grad.tolist() == pytest.approx([s - t for s, t in zip(sigmoid, [1, 1, 1, 0, 0])], abs=1e-6)
    assert x.grad.tolist()[2] == -0.5  # a logit of exactly 0 (a zero-initialised model's): sigmoid(0) - 1
    weighted = engine.nn.BCEWithLogitsLoss(pos_weight=engine.tensor(3.0, device=device), reduction="none")(
        engine.zeros(2, device=device), engine.tensor([1.0, 0.0], device=device))
    assert weighted.tolist() == pytest.approx([3 * math.log(2), math.log(2)])


def test_nll_loss_module_comparisons_and_normal():
    logp = engine.log_softmax(engine.tensor([[1.0, 2.0, 0.5], [0.1, 0.1, 3.0]]), 1)
    target = engine.tensor([1, 2])
    assert engine.nn.NLLLoss()(logp, target).item() == pytest.approx(
        -(logp[0, 1].item() + logp[1, 2].item()) / 2)
    a, b = engine.tensor([1.0, 2.0, 3.0]), engine.tensor([1.0, 0.0, 4.0])
    assert engine.eq(a, b).tolist() == [True, False, False] and engine.ne(a, b).tolist() == [False, True, True]
    assert engine.lt(a, b).tolist() == [False, False, True] and engine.ge(a, 2).tolist() == [False, True, True]
    engine.manual_seed(0)
    draws = engine.normal(2.0, 3.0, (20000,))
    assert abs(draws.mean().item() - 2.0) < 0.1 and abs(draws.std().item() - 3.0) < 0.1
    assert engine.normal(engine.zeros(3, 1), engine.ones(1, 4)).shape == (3, 4)
    per_element = engine.normal(engine.tensor([0.0, 100.0]), 0.0)
    assert per_element.tolist() == [0.0, 100.0] and not per_element.requires_grad
    with pytest.raises(TypeError, match="needs size="):
        engine.normal(0.0, 1.0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        engine.normal(engine.zeros(2), -1.0)


def test_activations_past_relu():
    x = engine.tensor([-3.0, 0.0, 2.0], dtype=engine.float64, requires_grad=True)
    assert engine.nn.SiLU()(x).tolist() == pytest.approx([-3 / (1 + math.exp(3)), 0.0, 2 / (1 + math.exp(-2))])
    assert engine.nn.ELU(0.5)(x).tolist() == pytest.approx([0.5 * (math.exp(-3) - 1), 0.0, 2.0])
    assert engine.nn.Softplus()(x).tolist() == pytest.approx([math.log1p(math.exp(-3)), math.log(2), math.log1p(
        math.exp(2))])
    big = engine.tensor([1000.0, -1000.0], dtype=engine.float64, requires_grad=True)
    (engine.nn.ELU()(big).sum() + engine.nn.Softplus()(big).sum()).backward()
    assert big.grad.tolist() == [2.0, 0.0]  # no overflow in a branch not taken
    assert repr(engine.nn.Softplus(beta=2.0)) == "Softplus(beta=2.0, threshold=20.0)"


def test_a_whole_training_script_runs_on_the_device_without_host_syncs_per_step(device, request):
    """The parts a script past the tutorial uses, together, on each device; on the stand-in GPU a step (forward,
    backward, clipping, AdamW, the schedule) makes no host synchronisation: only loss.item() waits."""
    from tests import fake_cupy

    engine.manual_seed(0)
    x = engine.randn(64, 5, device=device)
    y = (x[:, :1] > 0).float()
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = engine.nn.Sequential(engine.nn.Linear(5, 16), engine.nn.BatchNorm1d(16), engine.nn.LeakyReLU(0.1),
                                 engine.nn.Dropout(0.1), engine.nn.LayerNorm(16), engine.nn.Linear(16, 1)).to(device)
    opt = engine.optim.AdamW(model.parameters(), lr=0.05)
    schedule = engine.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    loss_fn = engine.nn.BCEWithLogitsLoss()
    sim = "cuda-sim" in request.node.callspec.id
    losses = []
    for _ in range(6):
        model.train()
        for xb, yb in loader:
            with fake_cupy.count_syncs() as seen:
                loss = loss_fn(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                engine.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            if sim:
                assert seen == [], seen
            losses.append(loss.item())
        schedule.step()
    assert sum(losses[-4:]) < sum(losses[:4])  # it learns
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05 / 8)
    assert all(t.device.type == device for t in model.state_dict().values())
    model.eval()
    with engine.no_grad():
        accuracy = ((model(x) > 0).float() == y).float().mean().item()
    assert accuracy > 0.8


# ----------------------------------------------------------------------------- utils.data

def test_data_loader_batches_in_order_and_shuffled():
    X, Y = engine.arange(20.0).view(10, 2), engine.arange(10)  # noqa: N806
    data = TensorDataset(X, Y)
    assert len(data) == 10 and data[3][1].item() == 3
    batches = list(DataLoader(data, batch_size=4))
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    assert len(DataLoader(data, batch_size=4)) == 3 and len(DataLoader(data, batch_size=4, drop_last=True)) == 2
    assert [len(y) for _, y in DataLoader(data, batch_size=4, drop_last=True)] == [4, 4]
    engine.manual_seed(5)
    first = [y.tolist() for _, y in DataLoader(data, batch_size=3, shuffle=True)]
    engine.manual_seed(5)
    again = [y.tolist() for _, y in DataLoader(data, batch_size=3, shuffle=True)]
    assert first == again and sorted(sum(first, [])) == list(range(10)) and sum(first, []) != list(range(10))
    for x, y in DataLoader(data, batch_size=3, shuffle=True):  # the rows still go together
        assert (x[:, 0] == 2 * y.float()).all()


def test_a_tensor_datasets_gathered_batches_equal_collated_ones():
    data = TensorDataset(engine.randn(7, 3), engine.arange(7))
    fast = list(DataLoader(data, batch_size=3))
    slow = list(DataLoader(data, batch_size=3, collate_fn=default_collate))
    for (fx, fy), (sx, sy) in zip(fast, slow):
        assert engine.equal(fx, sx) and engine.equal(fy, sy) and fy.dtype == sy.dtype


def test_default_collate_as_pytorchs():
    batch = default_collate([(1, 2.0, "a", {"k": np.float32(1)}), (3, 4.0, "b", {"k": np.float32(2)})])
    ints, floats, words, dicts = batch
    assert ints.dtype == engine.int64 and ints.tolist() == [1, 3]
    assert floats.dtype == engine.float64 and words == ["a", "b"]
    assert dicts["k"].tolist() == [1.0, 2.0] and dicts["k"].dtype == engine.float32
    assert default_collate([np.zeros(2), np.ones(2)]).shape == (2, 2)
    with pytest.raises(TypeError, match="must contain tensors"):
        default_collate([object(), object()])


def test_datasets_split_subset_and_concatenate():
    data = TensorDataset(engine.arange(10))
    engine.manual_seed(1)
    train, test = random_split(data, [0.8, 0.2])
    assert (len(train), len(test)) == (8, 2)
    seen = sorted(train[i][0].item() for i in range(8)) + sorted(test[i][0].item() for i in range(2))
    assert sorted(seen) == list(range(10))
    a, b, c = random_split(data, [0.34, 0.33, 0.33])
    assert [len(a), len(b), len(c)] == [4, 3, 3]  # the remainder shared from the first, as PyTorch
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(data, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(data, [1.2, -0.2])
    with pytest.raises(ValueError, match="whole numbers of samples"):
        random_split(data, [12, -2])
    both = ConcatDataset([Subset(data, [0, 1]), data])
    assert len(both) == 12 and both[2][0].item() == 0 and both[-1][0].item() == 9
    assert [y[0].tolist() for y in DataLoader(Subset(data, [5, 6, 7]), batch_size=2)] == [[5, 6], [7]]
    assert [s[0].item() for s in DataLoader(data, batch_size=None)][:3] == [0, 1, 2]  # unbatched


def test_data_loader_refuses_bad_settings_by_name():
    data = TensorDataset(engine.arange(4))
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        DataLoader(data, batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(data, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(engine.arange(4), engine.arange(5))
    assert [y.tolist() for (y,) in DataLoader(data, batch_size=2, num_workers=2, pin_memory=True,
                                              persistent_workers=True, prefetch_factor=2)] == [[0, 1], [2, 3]]
    with pytest.raises(TypeError, match="shufle"):
        DataLoader(data, shufle=True)  # a misspelt option is not silently ignored


def test_a_data_loader_over_gpu_tensors_keeps_them_there(device):
    data = TensorDataset(engine.arange(6.0, device=device).view(3, 2), engine.arange(3, device=device))
    for x, y in DataLoader(data, batch_size=2, shuffle=True):
        assert x.device == y.device == data.tensors[0].device and x.device.type == device


def test_a_generator_of_its_own_repeats_its_stream_and_leaves_the_global_one_alone():
    def split_order(seed):
        train, _ = random_split(TensorDataset(engine.arange(20)), [0.5, 0.5],
                                generator=engine.Generator().manual_seed(seed))
        return [train[i][0].item() for i in range(10)]

    engine.manual_seed(3)
    expected_next = engine.rand(3).tolist()
    engine.manual_seed(3)
    assert split_order(42) == split_order(42) != split_order(43)
    assert engine.rand(3).tolist() == expected_next  # the splits drew nothing from the global generator
    g = engine.Generator()
    assert g.manual_seed(7) is g and g.initial_seed() == 7 and g.device == engine.device("cpu")
    first = engine.randn(4, generator=g).tolist()
    g.manual_seed(7)
    assert engine.randn(4, generator=g).tolist() == first
    g.manual_seed(7)
    assert engine.randn(4, generator=engine.Generator().manual_seed(8)).tolist() != first
    assert engine.randint(0, 100, (5,), generator=g.manual_seed(1)).tolist() == \
        engine.randint(0, 100, (5,), generator=engine.Generator().manual_seed(1)).tolist()
    assert engine.randperm(6, generator=g.manual_seed(2)).tolist() == \
        engine.randperm(6, generator=engine.Generator().manual_seed(2)).tolist()
    a, b = engine.empty(3).uniform_(generator=g.manual_seed(4)), engine.empty(3).uniform_(generator=g.manual_seed(4))
    assert engine.equal(a, b) and engine.equal(engine.normal(0.0, 1.0, (3,), generator=g.manual_seed(5)),
                                               engine.normal(0.0, 1.0, (3,), generator=g.manual_seed(5)))
    orders = [[y.tolist() for (y,) in DataLoader(TensorDataset(engine.arange(6)), batch_size=6, shuffle=True,
                                                   generator=engine.Generator().manual_seed(9))] for _ in range(2)]
    assert orders[0] == orders[1]
    with pytest.raises(TypeError, match="must be an engine.Generator"):
        engine.randn(2, generator=np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="CPU generators only"):
        engine.Generator("cuda")


def test_a_cpu_generator_for_a_gpu_tensor_is_refused_as_pytorch_refuses_it(cuda_device):
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        engine.randn(2, device=cuda_device, generator=engine.Generator())


def test_a_scripts_device_choice_and_cudnn_switches_read_as_pytorchs():
    import engine.backends.cudnn as cudnn  # the spelling scripts use

    device = "cuda" if engine.cuda.is_available() else "mps" if engine.backends.mps.is_available() else "cpu"
    assert device == ("cuda" if engine.cuda.is_available() else "cpu")  # no Metal GPU: the engine drives none
    assert engine.backends.mps.is_built() is False and cudnn.is_available() is False and cudnn.version() is None
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)  # PyTorch's defaults
    saved = cudnn.benchmark
    try:
        engine.backends.cudnn.benchmark = True
        assert cudnn.benchmark is True  # kept, as a script sets it (the engine calls no cuDNN: nothing changes)
    finally:
        cudnn.benchmark = saved


# ----------------------------------------------------------------------------- save and load

def test_a_state_dict_goes_to_a_file_and_back(tmp_path):
    engine.manual_seed(0)
    model = engine.nn.Sequential(engine.nn.Linear(3, 4), engine.nn.ReLU(), engine.nn.Linear(4, 1))
    path = tmp_path / "model.pt"
    engine.save(model.state_dict(), path)
    fresh = engine.nn.Sequential(engine.nn.Linear(3, 4), engine.nn.ReLU(), engine.nn.Linear(4, 1))
    fresh.load_state_dict(engine.load(path))
    for (name, p), (_, q) in zip(model.named_parameters(), fresh.named_parameters()):
        assert engine.equal(p, q) and p.dtype == q.dtype, name
    whole = tmp_path / "whole.pt"
    engine.save(model, whole)
    with pytest.raises(pickle.UnpicklingError, match="holds engine.nn.modules.Sequential.*weights_only=False"):
        engine.load(whole)
    again = engine.load(whole, weights_only=False)
    assert isinstance(again[0].weight, engine.nn.Parameter) and again[0].weight.requires_grad
    buffer = io.BytesIO()
    engine.save({"step": 3, "w": engine.ones(2, dtype=engine.float64)}, buffer)
    buffer.seek(0)
    loaded = engine.load(buffer)
    assert loaded["step"] == 3 and loaded["w"].dtype == engine.float64


def test_a_failed_save_leaves_the_old_file_and_no_litter(tmp_path):
    path = tmp_path / "ckpt.pt"
    engine.save({"w": engine.ones(2)}, path)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        engine.save({"w": engine.ones(2), "f": lambda: 0}, path)  # a lambda cannot be pickled
    assert engine.load(path)["w"].tolist() == [1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]
    with pytest.raises(RuntimeError, match="Parent directory .*nowhere does not exist"):
        engine.save({}, tmp_path / "nowhere" / "x.pt")


def test_load_says_what_it_cannot_read(tmp_path):
    zip_file = tmp_path / "torch.pt"
    zip_file.write_bytes(b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(RuntimeError, match="zip archive, the format of PyTorch's own torch.save"):
        engine.load(zip_file)
    with pytest.raises(TypeError, match="unexpected keyword argument 'weights'"):
        engine.load(zip_file, weights=True)  # a misspelt option is not ignored
    with pytest.raises(ValueError, match="mmap=True"):
        engine.load(zip_file, mmap=True)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a pickle at all")
    with pytest.raises(pickle.UnpicklingError, match="not a file that engine.save wrote"):
        engine.load(junk)


def test_a_gpu_checkpoint_loads_on_the_cpu_with_map_location(tmp_path, device):
    path = tmp_path / "gpu.pt"
    engine.save({"w": engine.arange(3.0, device=device, requires_grad=True)}, path)
    w = engine.load(path, map_location="cpu")["w"]
    assert w.device == engine.device("cpu") and w.tolist() == [0.0, 1.0, 2.0] and w.requires_grad
    saved_on = str(engine.arange(1.0, device=device).device)  # "cpu" or "cuda:0": the names a file keeps
    assert engine.load(path, map_location={saved_on: "cpu"})["w"].device == engine.device("cpu")
    assert engine.load(path, map_location={"cuda:7": "cpu"})["w"].device.type == device  # no such entry: kept


def test_a_cuda_checkpoint_without_cuda_names_map_location(tmp_path):
    from engine.tensor import _rebuild

    class OnCuda:
        def __reduce__(self):
            return (_rebuild, (np.arange(3.0), "cuda:0", False))

    path = tmp_path / "cuda.pt"
    path.write_bytes(pickle.dumps({"w": OnCuda()}))
    if engine.cuda.is_available():
        pytest.skip("CUDA is here: the tensor would load onto it")
    with pytest.raises(engine.CudaUnavailableError, match="saved on cuda:0.*map_location='cpu'"):
        engine.load(path)
    assert engine.load(path, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0]


def test_an_optimizer_checkpoint_resumes_the_run_exactly(tmp_path):
    def run(steps, model, opt):
        engine.manual_seed(7)
        x, y = engine.randn(16, 3), engine.randn(16, 1)
        for _ in range(steps):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            opt.step()

    def fresh():
        engine.manual_seed(0)
        model = engine.nn.Linear(3, 1)
        return model, engine.optim.Adam(model.parameters(), lr=0.05)

    straight, opt = fresh()
    run(10, straight, opt)
    half, opt = fresh()
    run(5, half, opt)
    path = tmp_path / "ckpt.pt"
    engine.save({"model": half.state_dict(), "optimizer": opt.state_dict()}, path)
    resumed, opt2 = fresh()
    checkpoint = engine.load(path)
    resumed.load_state_dict(checkpoint["model"])
    opt2.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["optimizer"]["param_groups"][0]["params"] == [0, 1]
    assert checkpoint["optimizer"]["state"][0]["step"] == 5
    run(5, resumed, opt2)
    for p, q in zip(straight.parameters(), resumed.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt2.load_state_dict({"state": {}, "param_groups": []})


# ----------------------------------------------------------------------------- lr_scheduler

SCHEDULES = {  # torch 2.13.0's get_last_lr() after each of 8 steps, from lr 0.1
    "StepLR": (lambda o: engine.optim.lr_scheduler.StepLR(o, 3, 0.5),
               [0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025]),
    "MultiStepLR": (lambda o: engine.optim.lr_scheduler.MultiStepLR(o, [2, 5, 5], 0.3),
                    [0.1, 0.03, 0.03, 0.03, 0.0026999999999999997, 0.0026999999999999997, 0.0026999999999999997,
                     0.0026999999999999997]),
    "ExponentialLR": (lambda o: engine.optim.lr_scheduler.ExponentialLR(o, 0.9),
                      [0.09000000000000001, 0.08100000000000002, 0.07290000000000002, 0.06561000000000002,
                       0.05904900000000002, 0.05314410000000002, 0.04782969000000002, 0.043046721000000024]),
    "CosineAnnealingLR": (lambda o: engine.optim.lr_scheduler.CosineAnnealingLR(o, 4, 0.001),
                          [0.0855017856687341, 0.0505, 0.0154982143312659, 0.001, 0.015498214331265896,
                           0.05050000000000001, 0.08550178566873413, 0.10000000000000003]),
    "LambdaLR": (lambda o: engine.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)),
                 [0.05, 0.03333333333333333, 0.025, 0.020000000000000004, 0.016666666666666666,
                  0.014285714285714285, 0.0125, 0.011111111111111112]),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_give_pytorchs_rates_to_the_last_bit(name):
    make, expected = SCHEDULES[name]
    w = engine.zeros(2, requires_grad=True)
    opt = engine.optim.SGD([w], lr=0.1)
    scheduler = make(opt)
    rates = []
    for _ in range(8):
        opt.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
        assert opt.param_groups[0]["lr"] == rates[-1]
    assert rates == expected


def test_a_schedule_resumes_from_a_checkpoint(tmp_path):
    def fresh():
        opt = engine.optim.SGD([engine.zeros(1, requires_grad=True)], lr=0.1)
        return opt, engine.optim.lr_scheduler.MultiStepLR(opt, [2, 4], 0.5)

    opt, schedule = fresh()
    for _ in range(3):
        opt.step()
        schedule.step()
    engine.save({"optimizer": opt.state_dict(), "schedule": schedule.state_dict()}, tmp_path / "ckpt.pt")
    checkpoint = engine.load(tmp_path / "ckpt.pt")  # weights-only: a Counter (the milestones) is plain data
    opt2, schedule2 = fresh()
    opt2.load_state_dict(checkpoint["optimizer"])
    schedule2.load_state_dict(checkpoint["schedule"])
    opt.step(), opt2.step()
    schedule.step(), schedule2.step()
    assert schedule2.get_last_lr() == schedule.get_last_lr() == [0.025]


def test_a_scheduler_stepped_before_the_optimizer_warns():
    opt = engine.optim.SGD([engine.zeros(1, requires_grad=True)], lr=0.1)
    scheduler = engine.optim.lr_scheduler.StepLR(opt, 1)
    with pytest.warns(UserWarning, match=r"before `optimizer.step\(\)`"):
        scheduler.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        scheduler.step()
    with pytest.raises(ValueError, match="step_size must be a positive integer"):
        engine.optim.lr_scheduler.StepLR(opt, 0)


# ----------------------------------------------------------------------------- against PyTorch

@pytest.mark.torch
def test_the_same_calls_in_torch_give_the_same_values_and_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    base = rng.normal(size=(4, 5))

    def calls(lib):
        x = lib.tensor(base, dtype=lib.float64, requires_grad=True)
        outs = [x.std(), x.var(1), x.std(0, unbiased=False), lib.var(x, dim=1, keepdim=True, correction=0),
                lib.add(x, x * 2, alpha=3), lib.sub(x, 1.5, alpha=2), x.repeat(2, 1) * lib.arange(8.0,
                dtype=lib.float64).view(8, 1), lib.cat(x.split([2, 3], 1), 1), lib.stack(x.chunk(2, 0)),
                lib.stack(x.unbind(1)), x.softmax(1), x.log_softmax(0), x.floor() + x, x.round() * x,
                lib.nn.functional.l1_loss(x, lib.zeros(4, 5, dtype=lib.float64)), lib.outer(x[0], x[1]),
                x.new_ones(2).sum() * x.sum(), x.norm(3), x.norm(1, 0), x.norm(float("inf"), 1)]
        total = sum(o.sum() for o in outs)
        total.backward()
        return [o.detach().numpy() for o in outs], x.grad.numpy()

    mine, my_grad = calls(engine)
    theirs, their_grad = calls(torch)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"output {i}")
    np.testing.assert_allclose(my_grad, their_grad, rtol=1e-10, atol=1e-12)
    assert [int(v) for v in engine.div(engine.tensor([7, -7]), 2, rounding_mode="floor")] == \
        torch.div(torch.tensor([7, -7]), 2, rounding_mode="floor").tolist()


@pytest.mark.torch
def test_adamw_and_clipping_follow_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0, x, y = rng.normal(size=(4, 3)), rng.normal(size=(8, 4)), rng.normal(size=(8, 3))

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        opt = lib.optim.AdamW([w], lr=0.05, weight_decay=0.1)
        norms = []
        for _ in range(20):
            opt.zero_grad()
            ((lib.tensor(x) @ w - lib.tensor(y)) ** 2).mean().backward()
            norms.append(lib.nn.utils.clip_grad_norm_([w], 0.5).item())
            opt.step()
        return w.detach().numpy(), norms

    (mine, my_norms), (theirs, their_norms) = run(engine), run(torch)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(my_norms, their_norms, rtol=1e-12)


@pytest.mark.torch
def test_normalisation_layers_follow_torch_with_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    data, weights = rng.normal(size=(6, 4, 3)) * 2 + 1, rng.normal(size=(6, 4, 3))

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        bn, ln = lib.nn.BatchNorm1d(4).double(), lib.nn.LayerNorm((4, 3)).double()
        total = (bn(x) * lib.tensor(weights)).sum() + (ln(x) ** 2 * lib.tensor(weights)).sum()
        total = total + lib.nn.functional.leaky_relu(x, 0.1).sum()
        total.backward()
        bn.eval()
        return [x.grad.numpy(), bn.running_mean.numpy(), bn.running_var.numpy(), bn(x).detach().numpy(),
                bn.weight.grad.numpy(), ln.bias.grad.numpy()]

    for i, (a, b) in enumerate(zip(run(engine), run(torch))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=f"item {i}")


@pytest.mark.torch
def test_binary_losses_follow_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    logits = np.concatenate([rng.normal(size=20) * 4, [0.0, 30.0, -30.0]])
    labels = (rng.random(size=23) > 0.5).astype(np.float64)
    weights = rng.random(size=23)

    def run(lib):
        x = lib.tensor(logits, requires_grad=True)
        y = lib.tensor(labels)
        total = lib.nn.BCEWithLogitsLoss(weight=lib.tensor(weights), pos_weight=lib.tensor(2.5))(x, y)
        total = total + lib.nn.BCELoss(reduction="sum")(lib.sigmoid(x), y)
        total.backward()
        return total.item(), x.grad.numpy()

    (mine, my_grad), (theirs, their_grad) = run(engine), run(torch)
    assert mine == pytest.approx(theirs, rel=1e-12)
    np.testing.assert_allclose(my_grad, their_grad, rtol=1e-9, atol=1e-12)


@pytest.mark.torch
def test_the_schedules_are_torchs():
    torch = pytest.importorskip("torch")
    makers = {"StepLR": lambda o, m: m.StepLR(o, 3, 0.5), "MultiStepLR": lambda o, m: m.MultiStepLR(o, [2, 5, 5], 0.3),
              "ExponentialLR": lambda o, m: m.ExponentialLR(o, 0.9),
              "CosineAnnealingLR": lambda o, m: m.CosineAnnealingLR(o, 4, 0.001),
              "LambdaLR": lambda o, m: m.LambdaLR(o, lambda e: 1 / (e + 1))}
    for name, make in makers.items():
        opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
        scheduler = make(opt, torch.optim.lr_scheduler)
        rates = []
        for _ in range(8):
            opt.step()
            scheduler.step()
            rates.append(scheduler.get_last_lr()[0])
        assert rates == SCHEDULES[name][1], name


@pytest.mark.torch
def test_module_list_and_dropout_print_as_torchs():
    torch = pytest.importorskip("torch")
    for lib_a, lib_b in ((engine, torch),):
        def build(lib):
            return lib.nn.ModuleList([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Dropout(0.1),
                                      lib.nn.Softmax(dim=1), lib.nn.L1Loss(), lib.nn.MSELoss(reduction="sum")])

        assert repr(build(lib_a)) == repr(build(lib_b))


# ----------------------------------------------------------------------------- forward hooks

def _hooked_calls(lib):
    """Forward hooks as a script uses them: activations captured, an input and an output replaced, the order
    (prepend), keywords, removal by handle and by ``with``; returns what was seen, the outputs, and the gradient."""
    lib.manual_seed(0)
    seen = []
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p, v in zip(net.parameters(), (0.1, -0.2, 0.3, 0.05)):
            p.copy_(lib.linspace(-1, 1, p.numel()).view(p.shape) * v)
    capture = net[1].register_forward_hook(lambda m, args, out: seen.append(("relu", out.detach().clone())))
    net[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))  # doubles the input
    net[0].register_forward_pre_hook(lambda m, args: seen.append(("first", args[0].sum().item())), prepend=True)
    last = net[2].register_forward_hook(lambda m, args, out: out + 1)  # shifts the output
    net[2].register_forward_hook(lambda m, args, kwargs, out: seen.append(("kw", sorted(kwargs))), with_kwargs=True)
    x = lib.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], requires_grad=True)
    first = net(x)
    first.sum().backward()  # through the replaced input and output
    capture.remove()
    last.remove()
    second = net(x)
    with net[2].register_forward_hook(lambda m, args, out: out * 0):
        third = net(x)
    fourth = net(x)
    return seen, [t.detach().numpy() for t in (first, second, third, fourth)], x.grad.numpy()


def test_forward_hooks_see_and_replace_as_pytorchs():
    seen, outs, grad = _hooked_calls(engine)
    assert [s[0] for s in seen] == ["first", "relu", "kw", "first", "kw", "first", "kw", "first", "kw"]
    assert seen[0][1] == pytest.approx(-1.0)  # the prepended hook saw the input before it was doubled
    assert (seen[1][1].numpy() >= 0).all() and seen[2][1] == []
    np.testing.assert_array_equal(outs[0], outs[1] + 1)  # the output hook's shift, gone once removed
    np.testing.assert_array_equal(outs[2], np.zeros_like(outs[2]))  # the with-block's hook...
    np.testing.assert_array_equal(outs[3], outs[1])  # ...removed at its end
    assert grad.shape == (2, 3) and np.abs(grad).sum() > 0


def test_forward_hook_errors_and_always_call():
    lin = engine.nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda m, args, kwargs: 1, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, "
                                           r"new_kwargs\), but got 1."):
        lin(engine.ones(1, 2))
    with pytest.raises(TypeError, match="a hook must be callable, got int"):
        lin.register_forward_hook(3)
    broken = engine.nn.Linear(2, 2)
    calls = []
    broken.register_forward_hook(lambda m, args, out: calls.append(out), always_call=True)
    broken.register_forward_hook(lambda m, args, out: calls.append("plain"))
    with pytest.raises(RuntimeError):
        broken(engine.ones(1, 3))  # the wrong width: the forward raises
    assert calls == [None]  # only the always_call hook, given no output


@pytest.mark.torch
def test_forward_hooks_follow_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = _hooked_calls(engine), _hooked_calls(torch)
    assert [s[0] for s in mine[0]] == [s[0] for s in theirs[0]]
    for a, b in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-6)


# ----------------------------------------------------------------------------- embeddings and running sums

def test_an_embedding_picks_rows_and_adds_the_gradients_of_a_row_picked_twice(device, request):
    from tests import fake_cupy

    table = engine.nn.Embedding(5, 2, padding_idx=0).to(device)
    with engine.no_grad():
        table.weight.copy_(engine.arange(10.0, device=device).view(5, 2))
    ids = engine.tensor([[1, 3, 1], [0, 4, 1]], device=device)
    scale = engine.tensor([1.0, 10.0], device=device)
    with fake_cupy.count_syncs() as seen:  # the lookup and its backward wait for nothing on a GPU
        out = table(ids)
        (out * scale).sum().backward()
    if "cuda-sim" in request.node.callspec.id:
        assert seen == [], seen
    assert out.shape == (2, 3, 2) and out[0, 1].tolist() == [6.0, 7.0] and out.grad_fn.name() == "EmbeddingBackward0"
    # row 1 picked three times, row 0 the padding: no gradient
    assert table.weight.grad.tolist() == [[0.0, 0.0], [3.0, 30.0], [0.0, 0.0], [1.0, 10.0], [1.0, 10.0]]
    scaled = engine.nn.Embedding(3, 1, scale_grad_by_freq=True).to(device)
    scaled(engine.tensor([2, 2, 1, 2], device=device)).sum().backward()
    assert scaled.weight.grad.flatten().tolist() == [0.0, 1.0, 1.0]  # each row's sum over how often it was picked
    assert repr(table) == "Embedding(5, 2, padding_idx=0)"


def test_embedding_max_norm_renormalises_the_rows_it_picks_in_place():
    table = engine.nn.Embedding(4, 2, max_norm=1.0)
    with engine.no_grad():
        table.weight.copy_(engine.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]]))
    table(engine.tensor([0, 1, 0]))
    np.testing.assert_allclose(table.weight.detach().norm(dim=1).numpy(), [1.0, 0.5, 10.0, 1.0], rtol=1e-6)
    # a row scaled once is just under max_norm (1 / (5 + 1e-7) of it), and is left alone after, as PyTorch's; a
    # row at max_norm exactly is not scaled (the engine scaled both by max_norm / (norm + 1e-7) at every call)
    once = table.weight.detach().clone().double()
    table(engine.tensor([0, 3, 0]))
    assert engine.equal(table.weight.detach().double(), once)
    assert table.weight[3].tolist() == [1.0, 0.0]


def test_embedding_from_pretrained_and_refusals():
    frozen = engine.nn.Embedding.from_pretrained(engine.ones(3, 2))
    assert repr(frozen) == "Embedding(3, 2)" and not frozen.weight.requires_grad
    assert engine.nn.Embedding.from_pretrained(engine.ones(3, 2), freeze=False).weight.requires_grad
    assert engine.nn.Embedding(10, 3, padding_idx=-1).padding_idx == 9
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        engine.nn.Embedding(10, 3, padding_idx=10)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -2: \[-2, 3\]"):
        engine.nn.Embedding(-2, 3)
    with pytest.raises(ValueError, match="sparse=True .* is PyTorch's but not the engine's"):
        engine.nn.Embedding(4, 3, sparse=True)
    with pytest.raises(IndexError, match=r"index out of range in self \(indices from 0 to 10 into 10 rows\)"):
        engine.nn.Embedding(10, 3)(engine.tensor([0, 10]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int"):
        engine.nn.Embedding(10, 3)(engine.tensor([1.0]))


def test_cumsum_runs_along_a_dimension_and_its_gradient_runs_back(device):
    x = engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device, requires_grad=True)
    y = x.cumsum(1)
    assert y.tolist() == [[1.0, 3.0, 6.0], [4.0, 9.0, 15.0]] and engine.cumsum(x, 0).tolist() == [
        [1.0, 2.0, 3.0], [5.0, 7.0, 9.0]]
    (y * engine.tensor([1.0, 10.0, 100.0], device=device)).sum().backward()
    assert x.grad.tolist() == [[111.0, 110.0, 100.0]] * 2  # each element counts in every sum after it
    assert engine.tensor([1, 2, 3], dtype=engine.int32).cumsum(0).dtype == engine.int64
    assert engine.tensor([True, False, True]).cumsum(-1).tolist() == [1, 1, 2]
    assert engine.tensor(2.0).cumsum(0).item() == 2.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.cumsum(2)


@pytest.mark.torch
def test_embedding_and_cumsum_follow_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    table = rng.normal(size=(6, 3))
    ids = rng.integers(0, 6, (4, 5))
    results = []
    for lib in (engine, torch):
        w = lib.tensor(table, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(ids), w, padding_idx=2, scale_grad_by_freq=True)
        run = out.cumsum(1)
        (run * lib.arange(run.numel(), dtype=lib.float64).view(run.shape)).sum().backward()
        results.append((run.detach().numpy(), w.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    made = ["Embedding(10, 3)", "Embedding(10, 3, padding_idx=0)", "Embedding(10, 3, max_norm=1.0, norm_type=1.0, "
            "scale_grad_by_freq=True)"]
    for text in made:
        assert repr(eval("nn." + text, {"nn": engine.nn})) == repr(eval("nn." + text, {"nn": torch.nn}))  # noqa: S307


# ----------------------------------------------------------------------------- sampling, and NumPy's argument names

def test_multinomial_draws_each_category_at_its_weights_share(device, request):
    from tests import fake_cupy

    weights = engine.tensor([0.0, 1.0, 3.0, 0.0, 6.0], device=device)  # not normalised; two zeros
    engine.manual_seed(3)
    with fake_cupy.count_syncs() as seen:  # a draw waits for nothing on a GPU
        draws = engine.multinomial(weights, 20000, replacement=True)
    if "cuda-sim" in request.node.callspec.id:
        assert seen == [], seen
    assert draws.dtype == engine.int64 and draws.shape == (20000,) and draws.device.type == device
    counts = np.bincount(draws.cpu().numpy(), minlength=5) / 20000
    assert counts[0] == counts[3] == 0  # a weight of 0 is never drawn
    np.testing.assert_allclose(counts[[1, 2, 4]], [0.1, 0.3, 0.6], atol=0.015)
    # rows, without replacement: distinct indices, the first one at the weights' odds
    rows = engine.tensor([[1.0, 1.0, 8.0], [5.0, 0.0, 5.0]], device=device).repeat(2000, 1)
    picked = rows.multinomial(2).cpu().numpy()
    assert picked.shape == (4000, 2) and (picked[:, 0] != picked[:, 1]).all()
    firsts = picked[0::2, 0]
    np.testing.assert_allclose(np.bincount(firsts, minlength=3) / 2000, [0.1, 0.1, 0.8], atol=0.03)
    assert not (picked[1::2] == 1).any()  # the second row's zero weight: never, while others remain


def test_multinomial_repeats_with_a_generator_and_refuses_bad_weights():
    g = engine.Generator().manual_seed(2147483647)
    first = engine.multinomial(engine.tensor([0.2, 0.3, 0.5]), 10, True, generator=g).tolist()
    g.manual_seed(2147483647)
    assert engine.multinomial(engine.tensor([0.2, 0.3, 0.5]), 10, True, generator=g).tolist() == first
    assert engine.tensor([0.0, 1.0, 0.0]).multinomial(2).tolist()[0] == 1  # then a weight of 0: nothing else left
    for call, message in [
        (lambda: engine.multinomial(engine.tensor([1, 2]), 1), "only supports floating-point dtypes for input"),
        (lambda: engine.multinomial(engine.tensor([0.2, 0.8]), 0), "cannot sample n_sample <= 0 samples"),
        (lambda: engine.multinomial(engine.tensor([0.2, 0.8]), 3), "cannot sample n_sample > prob_dist.size"),
        (lambda: engine.multinomial(engine.tensor([-0.2, 0.8]), 1), "contains either `inf`, `nan` or element < 0"),
        (lambda: engine.multinomial(engine.tensor([float("nan"), 1.0]), 1), "either `inf`, `nan` or element < 0"),
        (lambda: engine.multinomial(engine.zeros(2), 1), r"invalid multinomial distribution \(sum of probabilities"),
        (lambda: engine.multinomial(engine.ones(2, 2, 2), 1), "prob_dist must be 1 or 2 dim"),
    ]:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_numpys_axis_and_keepdims_are_taken_as_pytorch_takes_them():
    x = engine.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.sum(1, keepdims=True).tolist() == [[6.0], [15.0]] == x.sum(axis=1, keepdim=True).tolist()
    assert engine.sum(x, axis=0).tolist() == [5.0, 7.0, 9.0] and x.mean(axis=1).tolist() == [2.0, 5.0]
    assert x.max(axis=1).values.tolist() == [3.0, 6.0] and x.min(axis=0, keepdims=True).values.shape == (1, 3)
    assert x.amax(axis=0).tolist() == [4.0, 5.0, 6.0] and x.argmax(axis=1).tolist() == [2, 2]
    assert engine.argmin(x, axis=1, keepdims=True).tolist() == [[0], [0]]
    assert x.std(axis=1).tolist() == x.std(1).tolist() and engine.var(x, axis=0, keepdims=True).shape == (1, 3)
    assert x.softmax(axis=1).equal(x.softmax(1)) and engine.log_softmax(x, axis=0).equal(x.log_softmax(0))
    assert x.cumsum(axis=1).equal(x.cumsum(1)) and x.unsqueeze(axis=0).shape == (1, 2, 3)
    assert engine.cat([x, x], axis=1).shape == (2, 6) and engine.stack([x, x], axis=0).shape == (2, 2, 3)
    with pytest.raises(TypeError, match="got both 'dim' and its alias 'axis'"):
        x.sum(0, axis=1)
    with pytest.raises(TypeError, match=r"softmax\(\) missing 1 required positional argument: 'dim'"):
        x.softmax()


@pytest.mark.torch
def test_numpys_names_give_torchs_values():
    torch = pytest.importorskip("torch")
    base = np.arange(6.0).reshape(2, 3)
    calls = ["x.sum(1, keepdims=True)", "x.mean(axis=0)", "x.max(axis=1, keepdims=True).values", "x.amax(axis=0)",
             "x.argmax(axis=1)", "x.std(axis=1, keepdims=True)", "x.var(axis=0)", "x.softmax(axis=1)",
             "x.cumsum(axis=0)", "x.unsqueeze(axis=1)", "lib.cat([x, x], axis=1)", "lib.sum(x, axis=1)"]
    for call in calls:
        mine = eval(call, {"x": engine.tensor(base), "lib": engine})  # noqa: S307
        theirs = eval(call, {"x": torch.tensor(base), "lib": torch})  # noqa: S307
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, err_msg=call)


# ----------------------------------------------------------------------------- a causal mask, and "Let's build GPT"

def test_tril_and_triu_keep_a_triangle_and_its_gradient(device):
    x = engine.arange(1.0, 10.0, device=device).view(3, 3).requires_grad_()
    assert engine.tril(x).tolist() == [[1.0, 0.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 9.0]]
    assert x.triu(1).tolist() == [[0.0, 2.0, 3.0], [0.0, 0.0, 6.0], [0.0, 0.0, 0.0]]
    assert x.tril(-1).grad_fn.name() == "TrilBackward0" and x.triu().grad_fn.name() == "TriuBackward0"
    (x.tril() * 2).sum().backward()
    assert x.grad.tolist() == [[2.0, 0.0, 0.0], [2.0, 2.0, 0.0], [2.0, 2.0, 2.0]]
    batch = engine.ones(2, 2, 3, device=device)
    assert batch.tril().sum().item() == 2 * 3 and engine.ones(2, 4).triu(2).sum().item() == 3  # last two dims
    mask = engine.ones(4, 4, device=device)
    mask.tril_()
    assert mask.sum().item() == 10
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        engine.ones(3).tril()


def test_randint_takes_pytorchs_high_and_size_overload():
    engine.manual_seed(0)
    draws = engine.randint(5, (1000,))
    assert draws.shape == (1000,) and draws.dtype == engine.int64
    assert draws.min().item() == 0 and draws.max().item() == 4
    assert engine.randint(2, 4, (3,)).shape == (3,)


def _tiny_gpt(lib, vocab=11, n_embd=8, block=6):
    """One block of "Let's build GPT": token and position embeddings, a causal self-attention head (a tril mask
    filled with -inf), layer norms, a feed-forward net and the head, as the lecture writes them."""
    nn, F = lib.nn, lib.nn.functional

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.key = nn.Linear(n_embd, n_embd, bias=False)
            self.query = nn.Linear(n_embd, n_embd, bias=False)
            self.value = nn.Linear(n_embd, n_embd, bias=False)
            self.register_buffer("tril", lib.tril(lib.ones(block, block)))

        def forward(self, x):
            B, T, C = x.shape  # noqa: N806 - the lecture's names
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            return F.softmax(wei, dim=-1) @ self.value(x)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, n_embd)
            self.pos = nn.Embedding(block, n_embd)
            self.ln1, self.ln2, self.ln_f = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.sa = Head()
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd))
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets):
            B, T = idx.shape  # noqa: N806
            x = self.tok(idx) + self.pos(lib.arange(T))
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))

    return GPT()


@pytest.mark.torch
def test_a_gpt_block_from_the_same_weights_gives_torchs_loss_and_gradients():
    torch = pytest.importorskip("torch")
    theirs = _tiny_gpt(torch).double()
    mine = _tiny_gpt(engine).double()
    mine.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(9)
    idx, targets = rng.integers(0, 11, (4, 6)), rng.integers(0, 11, (4, 6))
    results = []
    for lib, model in ((engine, mine), (torch, theirs)):
        loss = model(lib.tensor(idx), lib.tensor(targets))
        loss.backward()
        results.append((loss.item(), {n: p.grad.numpy() for n, p in model.named_parameters()}))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    assert list(results[0][1]) == list(results[1][1])
    for name in results[0][1]:
        np.testing.assert_allclose(results[0][1][name], results[1][1][name], rtol=1e-9, atol=1e-12, err_msg=name)


def _module_dict(lib):
    d = lib.nn.ModuleDict(dict(wte=lib.nn.Embedding(5, 3), h=lib.nn.ModuleList([lib.nn.Linear(3, 3)] * 2)))
    d["ln_f"] = lib.nn.LayerNorm(3)
    d.update([("head", lib.nn.Linear(3, 5))])
    return d


def test_module_dict_registers_its_modules_by_name_in_order():
    d = _module_dict(engine)
    assert list(d) == ["wte", "h", "ln_f", "head"] and len(d) == 4 and "h" in d and "x" not in d
    assert list(d.state_dict()) == ["wte.weight", "h.0.weight", "h.0.bias", "h.1.weight", "h.1.bias", "ln_f.weight",
                                    "ln_f.bias", "head.weight", "head.bias"]
    assert d["head"].out_features == 5 and d.head is d["head"]
    # the Linear held twice: one module (modules(), apply()), saved under both of its names (as PyTorch saves it)
    assert len(list(d.modules())) == 6 and len(list(d.named_modules(remove_duplicate=False))) == 7
    assert sum(p.numel() for p in d.parameters()) == 15 + 12 + 6 + 20  # the list's two entries are one Linear
    assert isinstance(d.pop("head"), engine.nn.Linear) and list(d.keys()) == ["wte", "h", "ln_f"]
    del d["ln_f"]
    assert [k for k, _ in d.items()] == ["wte", "h"]
    with pytest.raises(TypeError, match="ModuleDict holds Modules, not int"):
        d["x"] = 3
    with pytest.raises(ValueError, match="ModuleDict update sequence element has length 3; 2 is required"):
        d.update([("a", engine.nn.ReLU(), 1)])
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


@pytest.mark.torch
def test_module_dict_prints_and_keys_as_torchs():
    torch = pytest.importorskip("torch")
    mine, theirs = _module_dict(engine), _module_dict(torch)
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())


# ----------------------------------------------------------------------------- Tensor.register_hook


def _hooked_run(lib):
    """What register_hook is used for: look at a gradient, change it (clip it), on a leaf and in the middle."""
    seen = {}
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 2)
    out = {"grad": lib.autograd.grad((x * 3).sum(), x)[0].tolist()}
    (x * 3).sum().backward()
    out["leaf"] = x.grad.tolist()
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    out["removed"] = x.grad.tolist()
    x.grad = None
    a = x * 2

    def look(g):
        seen["a"] = g.tolist()  # and returns None: the gradient goes on as it was

    a.register_hook(look)
    a.register_hook(lambda g: g + 1)
    a.retain_grad()
    (a * a).sum().backward()
    out["middle"] = (seen["a"], a.grad.tolist(), x.grad.tolist())
    w = lib.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    w.register_hook(lambda g: g.clamp(-1, 1))
    out["grad clipped"] = lib.autograd.grad((w * w * 5).sum(), w)[0].tolist()  # the hook sees the sum of both
    for _ in range(2):  # the second time through a zero_()'d .grad: the tutorial's way
        (w * w * 5).sum().backward()
        out.setdefault("clipped", []).append(w.grad.tolist())
        w.grad.zero_()
    return out


@pytest.mark.torch
@pytest.mark.usefixtures("graph_core")
def test_register_hook_sees_and_replaces_a_gradient_as_torchs():
    torch = pytest.importorskip("torch")
    mine, theirs = _hooked_run(engine), _hooked_run(torch)
    assert mine == theirs
    assert mine["grad"] == [6.0, 6.0] and mine["removed"] == [3.0, 3.0]
    assert mine["middle"] == ([4.0, 8.0], [5.0, 9.0], [10.0, 18.0])  # seen before the +1; .grad after it


@pytest.mark.usefixtures("graph_core")
def test_register_hook_refuses_what_torch_refuses():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        engine.tensor([1.0]).register_hook(lambda g: g)
    x = engine.tensor([1.0, 2.0], requires_grad=True)
    b = x * 1
    b.register_hook(lambda g: engine.ones(3))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the size of value"):
        b.sum().backward()
    c = x * 1
    c.register_hook(lambda g: [1.0, 2.0])
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'list'"):
        c.sum().backward()
    with x.register_hook(lambda g: g * 0) as handle:  # a handle is a context manager too
        (x * 2).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and isinstance(handle, engine.utils.hooks.RemovableHandle)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
