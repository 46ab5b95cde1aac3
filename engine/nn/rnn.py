"""``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells, as PyTorch's: the same parameters (names, shapes, gate order,
initialisation), the same equations and the same inputs and outputs, written with the engine's ops, so that
autograd runs back through every time step (backpropagation through time) and the graph shows each step's nodes.

For a whole sequence the input's products with ``weight_ih`` are taken in one matrix product before the steps;
only the hidden state's product is made step by step. A packed batch (``nn.utils.rnn.pack_padded_sequence``) runs
padded, each sequence's state kept as it is past its end, so its final state is its own last step's, and comes out
packed. An LSTM with ``proj_size`` projects each step's hidden state down by ``weight_hr`` (the state it returns
and carries is the projected one), as PyTorch's.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import creation
from ..tensor import Tensor
from . import functional as F
from . import init
from .modules import Module, Parameter
from .utils.rnn import PackedSequence, pad_packed_sequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _check_sizes(input_size, hidden_size, least_input=0):
    """PyTorch's checks of the sizes, in its order: RNN, LSTM and GRU take an input_size of 1 or more
    (``least_input``), the cells (which PyTorch does not check) 0 or more."""
    for name, value, least in (("input_size", input_size, least_input), ("hidden_size", hidden_size, 1)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value < least:
            raise ValueError(f"{name} must be greater than {'zero' if least else 'or equal to zero'}")


def _rnn_step(mode, x_part, h, c, w_hh, b_hh, w_hr=None):
    """One time step from the input's share of the gates (``x W_ih^T + b_ih``, computed before) and the state
    (an LSTM's hidden state projected by ``w_hr`` where it has ``proj_size``)."""
    hh = F.linear(h, w_hh, b_hh)  # (one AddmmBackward0 with a bias, as PyTorch's cells record it)
    # (PyTorch's cells, written as ATen's lstm_cell and gru_cell are: the gates one unsafe_chunk, each op in
    # their order, so that the graph and the rounding are theirs)
    if mode == "LSTM":
        i, f, g, o = (hh + x_part).unsafe_chunk(4, 1)  # (the state's share first, as PyTorch's cells add them)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h if w_hr is None else h @ w_hr.t()), c
    if mode == "GRU":
        i_r, i_z, i_n = x_part.unsafe_chunk(3, 1)
        h_r, h_z, h_n = hh.unsafe_chunk(3, 1)
        r, z = (h_r + i_r).sigmoid(), (h_z + i_z).sigmoid()
        n = (i_n + h_n * r).tanh()
        return (h - n) * z + n, None
    pre = hh + x_part
    return (pre.tanh() if mode == "RNN_TANH" else pre.relu()), None


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrent net that RNN, LSTM and GRU are."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        for name, value in (("bias", bias), ("batch_first", batch_first)):  # (PyTorch's checks, in its order)
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        _check_sizes(input_size, hidden_size, least_input=1)
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if isinstance(proj_size, bool) or not isinstance(proj_size, int):
            raise TypeError(f"proj_size should be of type int, got: {type(proj_size).__name__}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                          f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          UserWarning, stacklevel=3)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size or hidden_size  # (the state carried and returned: projected, with proj_size)
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(creation.empty(*shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in (-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch's."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for name in self._flat_weights_names:
            init.uniform_(getattr(self, name), -bound, bound)

    @property
    def all_weights(self) -> list:
        names = self._flat_weights_names
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _states(self, hx, batch: int, like: Tensor, unbatched: bool):
        """The initial (h, c) as per-layer-and-direction lists of ``(N, H)`` tensors, zeros where not given."""
        directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * directions, batch, self.hidden_size)
        expected_h = (self.num_layers * directions, batch, self.proj_size or self.hidden_size)
        lstm = self.mode == "LSTM"

        def zeros(shape):
            return creation.zeros(*shape, dtype=like.dtype, device=like.device)

        if hx is None:
            h0, c0 = zeros(expected_h), (zeros(expected) if lstm else None)
        elif lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise RuntimeError("LSTM expects its hidden state as a tuple (h_0, c_0)")
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        states = []
        names = ("hidden[0]", "hidden[1]") if lstm else ("hidden", None)  # (PyTorch's words)
        for which, t, shape in ((names[0], h0, expected_h), (names[1], c0, expected)):
            if t is None:
                states.append(None)
                continue
            if unbatched and hx is not None:
                if t.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {t.dim()}-D tensor")
                t = t.unsqueeze(1)
            if tuple(t.shape) != shape:
                raise RuntimeError(f"Expected {which} size {shape}, got {list(t.shape)}")
            states.append(list(t.unbind(0)))
        return states[0], states[1]

    def forward(self, input, hx=None):  # noqa: A002
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:  # padded, longest first; each sequence's state stops at its own end
            x, lengths = pad_packed_sequence(PackedSequence(packed.data, packed.batch_sizes))
            if hx is not None and packed.sorted_indices is not None:
                order = packed.sorted_indices
                hx = tuple(h[:, order] for h in hx) if isinstance(hx, (tuple, list)) else hx[:, order]
            lengths = np.asarray(lengths.tolist())
            live = creation.tensor((np.arange(x.shape[0])[:, None] < lengths[None, :])[:, :, None],
                                   device=x.device)  # (steps, B, 1): where a step is real
            return self._run(x, hx, False, live, packed)
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__} takes a tensor or a PackedSequence, not {type(input).__name__}")
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        unbatched = input.dim() == 2
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
        return self._run(x, hx, unbatched, None, None)

    def _run(self, x, hx, unbatched, live, packed):
        """The layers over a time-major ``x`` (steps, batch, features); ``live``: where each step is real (a
        packed batch), the state kept as it was past a sequence's end."""
        weight = getattr(self, self._flat_weights_names[0])
        if x.dtype != weight.dtype:
            theirs, ours = x.dtype, weight.dtype
            raise ValueError(f"RNN input dtype ({theirs}) does not match weight dtype ({ours}). Convert input: "
                             f"input.to({ours}), or convert model: model.to({theirs})")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{x.shape[-1]}")
        steps, batch = x.shape[0], x.shape[1]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        hs, cs = self._states(hx, batch, x, unbatched)
        directions = 2 if self.bidirectional else 1
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                w_ih, w_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
                b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
                b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
                w_hr = getattr(self, "weight_hr" + suffix) if self.proj_size else None
                x_parts = F.linear(x, w_ih, b_ih)  # every step's input share of the gates, in one product
                h, c = hs[k], (cs[k] if cs is not None else None)
                order = range(steps - 1, -1, -1) if direction else range(steps)
                out = [None] * steps
                for t in order:
                    h_new, c_new = _rnn_step(self.mode, x_parts[t], h, c, w_hh, b_hh, w_hr)
                    if live is not None:
                        h_new = h_new.where(live[t], h)
                        c_new = c_new.where(live[t], c) if c is not None else None
                    h, c = h_new, c_new
                    out[t] = h
                outputs.append(creation.stack(out))
                last_h.append(h)
                last_c.append(c)
            x = outputs[0] if directions == 1 else creation.cat(outputs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        h_n = creation.stack(last_h)
        c_n = creation.stack(last_c) if self.mode == "LSTM" else None
        if packed is not None:  # the real steps packed again; the states in the order the batch was given
            sizes = [int(b) for b in packed.batch_sizes.tolist()]
            x = PackedSequence(creation.cat([x[t, :b] for t, b in enumerate(sizes)]), packed.batch_sizes,
                               packed.sorted_indices, packed.unsorted_indices)
            if packed.unsorted_indices is not None:
                h_n = h_n[:, packed.unsorted_indices]
                c_n = c_n[:, packed.unsorted_indices] if c_n is not None else None
        elif unbatched:
            x, h_n = x.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if c_n is not None else None
        elif self.batch_first:
            x = x.transpose(0, 1)
        return (x, (h_n, c_n)) if self.mode == "LSTM" else (x, h_n)


class RNN(RNNBase):
    """Elman's recurrent net: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: input, forget, cell and output gates (PyTorch's order in the weights: i, f, g, o);
    returns ``output, (h_n, c_n)``."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit: reset and update gates and the new state (PyTorch's order: r, z, n), with
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class RNNCellBase(Module):
    """One step of RNN, LSTM or GRU, for a loop written by hand."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        _check_sizes(input_size, hidden_size)
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias
        gate_size = _GATES[mode] * hidden_size
        self.weight_ih = Parameter(creation.empty(gate_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(creation.empty(gate_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(gate_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(gate_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx):  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if isinstance(hx, (tuple, list)):  # (an LSTMCell's (h, c): PyTorch's words for each)
            for i, t in enumerate(hx):
                if t is not None and t.dim() not in (1, 2):
                    raise ValueError(f"{type(self).__name__}: Expected hx[{i}] to be 1D or 2D, got {t.dim()}D "
                                     "instead")
        elif hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        states = []
        for t in (hx if isinstance(hx, (tuple, list)) else (hx,)):
            if t is None:
                t = creation.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            elif unbatched:
                t = t.unsqueeze(0)
            if t.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden0 batch size {t.shape[0]}")
            if t.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {t.shape[1]}, expected "
                                   f"{self.hidden_size}")
            states.append(t)
        return x, states, unbatched

    def _step(self, x, h, c):
        return _rnn_step(self.mode, F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, bias,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002
        x, (h,), unbatched = self._prepare(input, hx)
        h, _ = self._step(x, h, None)
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device=device, dtype=dtype)

    def forward(self, input, hx=None):  # noqa: A002
        x, states, unbatched = self._prepare(input, (None, None) if hx is None else hx)
        h, c = self._step(x, states[0], states[1])
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device=device, dtype=dtype)

    def forward(self, input, hx=None):  # noqa: A002
        x, (h,), unbatched = self._prepare(input, hx)
        h, _ = self._step(x, h, None)
        return h.squeeze(0) if unbatched else h
