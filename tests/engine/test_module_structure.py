"""What a module says about itself, held to PyTorch for 28 kinds of module (layers, norms, recurrent and
attention layers, containers): its named parameters and buffers (names, shapes, dtypes, order), ``state_dict``,
``named_modules``, ``named_children``, ``repr``, ``train``/``eval``, ``requires_grad_``, ``double()``, ``apply``'s
order, and ``load_state_dict`` (strict and not, and its errors in PyTorch's words).

A first run found: ``load_state_dict``'s error said "missing keys [...]" in one line where PyTorch's lists
``Missing key(s) in state_dict: "weight".`` and ``Unexpected key(s) ...`` and each ``size mismatch for ...`` on
lines of their own (what one searches for), and a size mismatch stopped the load half way without naming the
others; ``ParameterList`` and ``ParameterDict`` printed their entries unindented, ``ParameterDict({...})`` kept a
plain dict's order where PyTorch sorts its keys, and a module with both an ``extra_repr`` and children printed the
extra text inside the parentheses' first line."""

from __future__ import annotations

import warnings

import pytest

import engine


def _modules(lib):
    nn = lib.nn
    return {
        "Linear": lambda: nn.Linear(3, 2), "LinearNoBias": lambda: nn.Linear(3, 2, bias=False),
        "Conv1d": lambda: nn.Conv1d(2, 3, 3, padding=1),
        "Conv2d": lambda: nn.Conv2d(2, 3, (3, 2), stride=2, bias=False),
        "ConvT2d": lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
        "BatchNorm1d": lambda: nn.BatchNorm1d(4), "BatchNorm2dNoAffine": lambda: nn.BatchNorm2d(4, affine=False),
        "BatchNorm1dNoTrack": lambda: nn.BatchNorm1d(4, track_running_stats=False),
        "LayerNorm": lambda: nn.LayerNorm([2, 3]), "GroupNorm": lambda: nn.GroupNorm(2, 4),
        "Embedding": lambda: nn.Embedding(10, 3, padding_idx=0), "EmbeddingBag": lambda: nn.EmbeddingBag(10, 3),
        "RNN": lambda: nn.RNN(3, 4, num_layers=2, bidirectional=True), "LSTM": lambda: nn.LSTM(3, 4),
        "GRU": lambda: nn.GRU(3, 4, batch_first=True, bias=False), "LSTMCell": lambda: nn.LSTMCell(3, 4),
        "MultiheadAttention": lambda: nn.MultiheadAttention(8, 2),
        "MultiheadAttention kdim": lambda: nn.MultiheadAttention(8, 2, kdim=5, vdim=6, bias=False),
        "TransformerEncoderLayer": lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
        "TransformerDecoderLayer": lambda: nn.TransformerDecoderLayer(8, 2, 16, norm_first=True),
        "Transformer": lambda: nn.Transformer(8, 2, 1, 1, 16),
        "Sequential": lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 4), nn.Tanh()),
                                            nn.Linear(4, 1)),
        "ModuleDict": lambda: nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ModuleList([nn.Linear(2, 1),
                                                                                      nn.BatchNorm1d(1)])}),
        "ModuleList repeated": lambda: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
        "PReLU": lambda: nn.PReLU(3), "Bilinear": lambda: nn.Bilinear(2, 3, 4), "RMSNorm": lambda: nn.RMSNorm(4),
        "ParameterList": lambda: nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(3))]),
        "ParameterList one": lambda: nn.ParameterList([nn.Parameter(lib.ones(2))]),
        "ParameterDict": lambda: nn.ParameterDict({"w": nn.Parameter(lib.ones(2)),
                                                   "b": nn.Parameter(lib.zeros(3, dtype=lib.float64))}),
        "extra_repr and children": lambda: _with_extra(lib),
    }


def _with_extra(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = lib.nn.Linear(2, 2)

        def extra_repr(self):
            return "depth=3\nwidth=2"

    return Block()


def _name(x) -> str:
    return str(x).rsplit(".", 1)[-1]


def _facts(lib, make) -> dict:
    lib.manual_seed(0)
    m = make()
    out = {
        "params": [(n, tuple(p.shape), p.requires_grad) for n, p in m.named_parameters()],
        "buffers": [(n, tuple(b.shape), _name(b.dtype)) for n, b in m.named_buffers()],
        "state_dict": [(k, tuple(v.shape), _name(v.dtype)) for k, v in m.state_dict().items()],
        "modules": [(n, type(x).__name__) for n, x in m.named_modules()],
        "children": [n for n, _ in m.named_children()],
        "repr": repr(m).replace("torch.", "").replace("engine.", ""),
        "training": m.training,
    }
    m.eval()
    out["eval"] = [x.training for x in m.modules()]
    m.requires_grad_(False)
    out["requires_grad_"] = [p.requires_grad for p in m.parameters()]
    out["numel"] = sum(p.numel() for p in m.parameters())
    keys = make().load_state_dict(m.state_dict())
    out["load"] = (list(keys.missing_keys), list(keys.unexpected_keys))
    partial = m.state_dict()
    partial.pop(next(iter(partial)))
    partial["extra.key"] = lib.ones(1)
    try:
        make().load_state_dict(partial)
        out["strict"] = "loaded"
    except RuntimeError as e:
        out["strict"] = str(e).replace("torch.", "engine.")
    keys = make().load_state_dict(partial, strict=False)
    out["not strict"] = (list(keys.missing_keys), list(keys.unexpected_keys))
    m.double()
    out["double"] = sorted({_name(p.dtype) for p in m.parameters()} | {_name(b.dtype) for b in m.buffers()})
    seen = []
    m.apply(lambda s: seen.append(type(s).__name__))
    out["apply"] = seen
    return out


CASES = sorted(_modules(engine))


@pytest.mark.torch
@pytest.mark.parametrize("name", CASES)
def test_a_module_says_what_pytorchs_says(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's note on nested tensors for the Transformer)
        theirs = _facts(torch, _modules(torch)[name])
    ours = _facts(engine, _modules(engine)[name])
    assert ours == theirs


def test_load_state_dict_errors_in_pytorchs_words():
    m = engine.nn.Linear(3, 2)
    bad = {"bias": engine.ones(5), "foo": engine.ones(1)}
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(bad)
    assert str(info.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "weight". \n\tUnexpected '
        'key(s) in state_dict: "foo". \n\tsize mismatch for bias: copying a param with shape engine.Size([5]) from '
        "checkpoint, the shape in current model is engine.Size([2]).")
    with pytest.raises(RuntimeError, match="size mismatch for weight"):  # whatever strict says
        m.load_state_dict({"weight": engine.ones(3, 3), "bias": engine.full((2,), 7.0)}, strict=False)
    assert m.bias.tolist() == [7.0, 7.0]  # (what fits is copied, as in PyTorch)
    keys = m.load_state_dict({"weight": engine.ones(2, 3), "x": engine.ones(1)}, strict=False)
    assert keys.missing_keys == ["bias"] and keys.unexpected_keys == ["x"]


def test_reprs_in_pytorchs_layout():
    nn = engine.nn
    assert repr(nn.ParameterList([nn.Parameter(engine.ones(2)), nn.Parameter(engine.zeros(3))])) == (
        "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
        "    (1): Parameter containing: [torch.float32 of size 3]\n)")
    assert repr(nn.ParameterList([nn.Parameter(engine.ones(2))])) == (
        "ParameterList(  (0): Parameter containing: [torch.float32 of size 2])")  # (PyTorch's own two spaces)
    d = nn.ParameterDict({"w": nn.Parameter(engine.ones(2)), "b": nn.Parameter(engine.zeros(3))})
    assert list(d.keys()) == ["b", "w"]  # a plain dict's keys sorted, as PyTorch's ParameterDict does
    assert repr(_with_extra(engine)) == ("Block(\n  depth=3\n  width=2\n  (inner): Linear(in_features=2, "
                                         "out_features=2, bias=True)\n)")
