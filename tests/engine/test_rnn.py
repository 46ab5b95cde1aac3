"""nn.RNN, nn.LSTM, nn.GRU and their cells against torch 2.13: the same parameters (names, shapes, order, reprs),
outputs, final states and every gradient (through each time step: backpropagation through time) from the same
weights, in every combination of layers, directions, batch_first, bias, unbatched input and given initial state,
and for packed batches of sequences of different lengths (nn.utils.rnn); their refusals; a sequence model that
learns; and on the CuPy stand-in an LSTM step, packed or not, without host syncs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import engine
from engine import nn

_KINDS = ["RNN", "RNN_relu", "LSTM", "GRU", "LSTM_proj"]
_CONFIGS = list(itertools.product([1, 2], [False, True], [False, True], [True, False], [False, True], [False, True]))


def _pair(torch, kind, **kw):
    cls = kind.split("_")[0]
    if kind == "RNN_relu":
        kw["nonlinearity"] = "relu"
    if kind == "LSTM_proj":  # (the hidden state projected from 4 to 2 by weight_hr at every step)
        kw["proj_size"] = 2
    theirs = getattr(torch.nn, cls)(3, 4, **kw).double()
    mine = getattr(nn, cls)(3, 4, **kw).double()
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return cls, mine, theirs


@pytest.mark.torch
@pytest.mark.parametrize("kind", _KINDS)
def test_recurrent_nets_give_torchs_outputs_states_and_gradients(kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for layers, bidirectional, batch_first, bias, unbatched, give_state in _CONFIGS:
        kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
        cls, mine, theirs = _pair(torch, kind, **kw)
        steps, batch, directions = 5, 2, 2 if bidirectional else 1
        shape = (steps, 3) if unbatched else ((batch, steps, 3) if batch_first else (steps, batch, 3))
        state_shape = (layers * directions, 4) if unbatched else (layers * directions, batch, 4)
        h_shape = state_shape[:-1] + (2 if kind == "LSTM_proj" else 4,)
        x, h0, c0 = rng.standard_normal(shape), rng.standard_normal(h_shape), rng.standard_normal(state_shape)
        results = []
        for lib, model in ((engine, mine), (torch, theirs)):
            xt = lib.tensor(x, requires_grad=True)
            given = [lib.tensor(h0, requires_grad=True), lib.tensor(c0, requires_grad=True)]
            hx = None if not give_state else (tuple(given) if cls == "LSTM" else given[0])
            out, state = model(xt, hx)
            finals = list(state) if cls == "LSTM" else [state]
            ((out * out).sum() + sum((h * h * 0.5).sum() for h in finals)).backward()
            seen = [out.detach().numpy()] + [h.detach().numpy() for h in finals]
            seen += [xt.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
            if give_state:
                seen += [g.grad.numpy() for g in given[:2 if cls == "LSTM" else 1]]
            results.append(seen)
        for a, b in zip(*results):
            assert a.shape == b.shape, (kind, kw, unbatched)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=f"{kind} {kw} unbatched={unbatched}")


@pytest.mark.torch
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_give_torchs_steps(cls):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    theirs = getattr(torch.nn, cls)(3, 4).double()
    mine = getattr(nn, cls)(3, 4).double()
    mine.load_state_dict({k: engine.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    for x_shape, h_shape in (((2, 3), (2, 4)), ((3,), (4,))):
        x, h = rng.standard_normal(x_shape), rng.standard_normal(h_shape)
        results = []
        for lib, cell in ((engine, mine), (torch, theirs)):
            cell.zero_grad()
            xt = lib.tensor(x, requires_grad=True)
            out = cell(xt, (lib.tensor(h), lib.tensor(h)) if cls == "LSTMCell" else lib.tensor(h))
            out = out[0] * out[1] if cls == "LSTMCell" else out
            (out * out).sum().backward()
            results.append([out.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in cell.parameters()])
            default = cell(xt)  # no state given: zeros
            results[-1].append((default[0] if cls == "LSTMCell" else default).detach().numpy())
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.torch
def test_parameters_and_reprs_are_torchs():
    torch = pytest.importorskip("torch")
    for make in (lambda lib: lib.nn.RNN(10, 20, num_layers=2), lambda lib: lib.nn.RNN(3, 4, nonlinearity="relu"),
                 lambda lib: lib.nn.LSTM(10, 20, batch_first=True, bias=False),
                 lambda lib: lib.nn.GRU(10, 20, bidirectional=True, dropout=0.5, num_layers=2),
                 lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"), lambda lib: lib.nn.LSTMCell(3, 4, bias=False),
                 lambda lib: lib.nn.GRUCell(3, 4)):
        mine, theirs = make(engine), make(torch)
        assert repr(mine) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        bound = 1 / np.sqrt(mine.hidden_size)  # every weight uniform in (-1/sqrt(H), 1/sqrt(H)), as torch's
        assert all(float(p.abs().max()) <= bound for p in mine.parameters())


def test_dropout_runs_between_layers_in_training_only():
    engine.manual_seed(0)
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = engine.randn(6, 2, 3)
    a, b = gru(x)[0], gru(x)[0]
    assert not a.allclose(b)  # two draws of the mask between the layers
    gru.eval()
    assert gru(x)[0].allclose(gru(x)[0])


def test_recurrent_nets_refuse_what_torch_refuses_by_name():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 7"):
        lstm(engine.randn(5, 2, 7))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[2, 2, 4\]"):
        nn.GRU(3, 4)(engine.randn(5, 2, 3), engine.randn(2, 2, 4))
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(3, 0)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'. Select from 'tanh' or 'relu'."):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        nn.RNNCell(3, 4)(engine.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.RNNCell(3, 4)(engine.randn(2, 3), engine.randn(3, 4))
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero to disable projections"):
        nn.LSTM(3, 4, proj_size=-1)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 2\), got \[1, 2, 4\]"):
        nn.LSTM(3, 4, proj_size=2)(engine.randn(5, 2, 3), (engine.randn(1, 2, 4), engine.randn(1, 2, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 2\]"):
        nn.LSTM(3, 4, proj_size=2)(engine.randn(5, 2, 3), (engine.randn(1, 2, 2), engine.randn(1, 2, 2)))
    with pytest.raises(RuntimeError, match="LSTM expects its hidden state as a tuple"):
        lstm(engine.randn(5, 2, 3), engine.randn(1, 2, 4))


def test_an_lstm_learns_to_add_up_a_sequence():
    """Sum of a sequence of numbers, read one at a time: a task for a memory (backpropagation through time)."""
    engine.manual_seed(0)
    rng = np.random.default_rng(0)
    lstm, head = nn.LSTM(1, 16, batch_first=True), nn.Linear(16, 1)
    opt = engine.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=0.01)
    losses = []
    for _ in range(150):
        x = rng.uniform(-1, 1, (32, 8, 1)).astype(np.float32)
        out, (h, _) = lstm(engine.tensor(x))
        loss = ((head(h[-1]) - engine.tensor(x.sum(1))) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[:10]) > 1.0 and np.mean(losses[-10:]) < 0.1 * np.mean(losses[:10])


def test_an_lstm_step_on_the_gpu_gives_the_cpus_values_without_host_syncs(cuda_device):
    from tests import fake_cupy

    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 2, 3))

    def run(dev):
        engine.manual_seed(3)
        lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).double().to(dev)
        with fake_cupy.count_syncs() as seen:
            out, (h, c) = lstm(engine.tensor(x, device=dev))
            packed = engine.nn.utils.rnn.pack_padded_sequence(engine.tensor(x, device=dev), [3, 5],
                                                              enforce_sorted=False)
            packed_out, (hp, _) = lstm(packed)
            (out.sum() + h.sum() + c.sum() + packed_out.data.sum() + hp.sum()).backward()
        if fake_cupy.active():
            assert seen == [], seen
        return [out.detach().cpu().numpy(), hp.detach().cpu().numpy()] + [p.grad.cpu().numpy()
                                                                          for p in lstm.parameters()]

    for a, b in zip(run("cpu"), run(cuda_device)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ----------------------------------------------------------------------------- padded and packed sequences


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "LSTM_proj"])
def test_packed_sequences_run_each_to_its_own_end_as_torchs(kind):
    """A batch of sequences of lengths 5, 3, 3, 1 (sorted, or not with enforce_sorted=False), packed: the output
    packed again, padded back with its lengths, the final states each at its sequence's own last step (in the
    order given), and every gradient, as torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for layers, bidirectional, enforce_sorted, give_state, batch_first in itertools.product(
            [1, 2], [False, True], [True, False], [False, True], [False, True]):
        kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        cls, mine, theirs = _pair(torch, kind, **kw)
        lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
        x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
        state_shape = (layers * (2 if bidirectional else 1), 4, 4)
        h_shape = state_shape[:-1] + (2 if kind == "LSTM_proj" else 4,)
        h0, c0 = rng.standard_normal(h_shape), rng.standard_normal(state_shape)
        results = []
        for lib, model in ((engine, mine), (torch, theirs)):
            xt = lib.tensor(x, requires_grad=True)
            packed = lib.nn.utils.rnn.pack_padded_sequence(xt, lib.tensor(lengths), batch_first=batch_first,
                                                           enforce_sorted=enforce_sorted)
            given = [lib.tensor(h0, requires_grad=True), lib.tensor(c0, requires_grad=True)]
            hx = None if not give_state else (tuple(given) if cls == "LSTM" else given[0])
            out, state = model(packed, hx)
            padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first, padding_value=-1.0)
            finals = list(state) if cls == "LSTM" else [state]
            ((padded * padded).sum() + sum((h * h).sum() for h in finals)).backward()
            seen = [padded.detach().numpy(), lens.numpy(), out.data.detach().numpy(), out.batch_sizes.numpy()]
            seen += [h.detach().numpy() for h in finals] + [xt.grad.numpy()]
            seen += [p.grad.numpy() for p in model.parameters()]
            if give_state:
                seen += [g.grad.numpy() for g in given[:2 if cls == "LSTM" else 1]]
            results.append(seen)
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=str((kind, kw, enforce_sorted)))


@pytest.mark.torch
def test_pad_and_pack_sequences_as_torchs():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    results = []
    for lib in (engine, torch):
        seqs = [lib.tensor(a) for a in arrays]
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_sequence(seqs, enforce_sorted=False)
        results.append([rnn.pad_sequence(seqs, batch_first=True, padding_value=9.0).numpy(),
                        rnn.pad_sequence(seqs, padding_side="left").numpy(), packed.data.numpy(),
                        packed.batch_sizes.numpy(), packed.sorted_indices.numpy(), packed.unsorted_indices.numpy(),
                        *[s.numpy() for s in rnn.unpack_sequence(packed)],
                        rnn.pad_packed_sequence(packed, total_length=6)[0].numpy()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    rnn = engine.nn.utils.rnn
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                           "is True"):
        rnn.pack_padded_sequence(engine.zeros(4, 2, 1), [2, 4])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        rnn.pack_padded_sequence(engine.zeros(4, 2, 1), [4, 0])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest sequence"):
        rnn.pad_packed_sequence(rnn.pack_sequence([engine.ones(3, 1)]), total_length=2)
