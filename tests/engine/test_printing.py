"""Tensors print as PyTorch prints them (engine/printing.py), and torch.tensor's dtype inference and torch.Size's
behaviour are PyTorch's: a script's output reads the same with the engine as with torch.

The expected strings were printed by torch 2.13.0 (only its dtype names, ``torch.float64``, read ``engine.float64``
here); where torch is installed the same tensors, and random ones, are printed by both and compared.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import printing

f64 = engine.float64


@pytest.fixture(autouse=True)
def _default_print_options():
    engine.set_printoptions(profile="default")
    yield
    engine.set_printoptions(profile="default")


CASES = [
    ("whole numbers", lambda t: t.tensor([1., 2., 3.])),
    ("fixed point", lambda t: t.tensor([0.5, 0.25])),
    ("nan is padded", lambda t: t.tensor([float("nan"), 1.5])),
    ("inf in int mode", lambda t: t.tensor([float("inf"), -1.0, 0.0])),
    ("negative zero", lambda t: t.tensor([-0.0, 2.0])),
    ("tiny: scientific", lambda t: t.tensor([1e-5, 1.0])),
    ("spread: scientific", lambda t: t.tensor([1e-3, 1.0, 100.0])),
    ("large whole numbers: scientific", lambda t: t.tensor([123456789.0, 1.0])),
    ("wide fixed", lambda t: t.tensor([3.14159265, 100.0])),
    ("all zeros", lambda t: t.zeros(3)),
    ("all nan", lambda t: t.tensor([float("nan"), float("nan")])),
    ("0-d", lambda t: t.tensor(1.5)),
    ("0-d whole", lambda t: t.tensor(3.0)),
    ("0-d int", lambda t: t.tensor(3)),
    ("ints", lambda t: t.tensor([[1, -20], [300, 4]])),
    ("bools", lambda t: t.tensor([True, False])),
    ("float64 suffix", lambda t: t.tensor([0.1, 0.2], dtype=t.float64)),
    ("int32 suffix", lambda t: t.tensor([1, 2], dtype=t.int32)),
    ("float16", lambda t: t.tensor([0.1, 1000.0], dtype=t.float16)),
    ("empty", lambda t: t.tensor([])),
    ("empty int64", lambda t: t.tensor([], dtype=t.int64)),
    ("empty 2-d", lambda t: t.zeros(2, 0)),
    ("summary 1-d", lambda t: t.arange(2000.0)),
    ("summary 2-d", lambda t: t.arange(40 * 50.0).reshape(40, 50) / 7),
    ("summary 3-d ints", lambda t: t.arange(11 * 12 * 13).reshape(11, 12, 13)),
    ("wrapping", lambda t: t.tensor(np.linspace(-3, 3, 30))),
    ("wrapping float64 suffix", lambda t: t.tensor(np.linspace(-3, 3, 12), dtype=t.float64)),
    ("3-d", lambda t: t.tensor(np.arange(12.0).reshape(2, 3, 2) / 4)),
    ("requires grad", lambda t: t.tensor([1.25, 2.0], requires_grad=True)),
    ("requires grad, float64, wrapped", lambda t: t.tensor(np.linspace(0, 1, 13), dtype=t.float64, requires_grad=True)),
    ("column", lambda t: t.tensor(np.linspace(0, 1, 4)).reshape(4, 1)),
    ("1001 elements, short rows", lambda t: t.ones(1001, 1)),
]

OPTIONS = [
    ("precision 2", dict(precision=2), lambda t: t.tensor([3.14159, 2.71828])),
    ("sci_mode off", dict(sci_mode=False), lambda t: t.tensor([1e-5, 1.0])),
    ("sci_mode on", dict(sci_mode=True), lambda t: t.tensor([0.5, 2.0])),
    ("profile short", dict(profile="short"), lambda t: t.arange(1200.0) / 3),
    ("profile full", dict(profile="full"), lambda t: t.arange(1005)),
    ("threshold 5", dict(threshold=5), lambda t: t.arange(10.0)),
    ("edgeitems 0", dict(threshold=5, edgeitems=0), lambda t: t.arange(10.0).reshape(2, 5)),
    ("linewidth 30", dict(linewidth=30), lambda t: t.tensor(np.linspace(0, 1, 9))),
]

# printed by torch 2.13.0, its dtype names read engine.: repr(make(torch)) for each case above
EXPECTED = json.loads((Path(__file__).parent / "torch_prints.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, make", CASES, ids=[c[0] for c in CASES])
def test_prints_as_pytorch(name, make):
    assert repr(make(engine)) == EXPECTED[name]
    assert str(make(engine)) == EXPECTED[name]


@pytest.mark.parametrize("name, options, make", OPTIONS, ids=[c[0] for c in OPTIONS])
def test_print_options_as_pytorchs(name, options, make):
    engine.set_printoptions(**options)
    assert repr(make(engine)) == EXPECTED["options: " + name]


def test_an_option_left_out_is_kept_but_sci_mode_which_every_call_sets():
    engine.set_printoptions(precision=2, sci_mode=False)
    engine.set_printoptions(linewidth=100)
    assert printing.get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 3, "linewidth": 100,
                                           "sci_mode": None}


@pytest.mark.parametrize("options, named", [
    ({"precision": -1}, "precision"), ({"precision": 2.5}, "precision"), ({"edgeitems": "3"}, "edgeitems"),
    ({"linewidth": 0}, "linewidth"), ({"threshold": float("nan")}, "threshold"), ({"profile": "long"}, "profile"),
    ({"sci_mode": 1}, "sci_mode"),
])
def test_a_bad_print_option_is_refused_by_name_and_changes_nothing(options, named):
    before = printing.get_printoptions()
    with pytest.raises(ValueError, match=named):
        engine.set_printoptions(**options)
    assert printing.get_printoptions() == before


def test_a_large_gpu_tensor_is_cut_down_before_it_is_copied(simulated_gpu, monkeypatch):
    from engine import backend

    x = engine.arange(1000 * 1000.0, device="cuda").reshape(1000, 1000)
    copied = []
    real = backend.to_host
    module = importlib.import_module("engine.tensor")
    monkeypatch.setattr(module, "to_host", lambda a: copied.append(a.shape) or real(a))
    text = repr(x)
    assert copied == [(6, 6)]
    assert text.startswith("tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,")
    assert text.endswith("1.0000e+06,\n         1.0000e+06]], device='cuda:0')")  # 999999 to 4 decimals


def test_the_device_is_shown_where_it_is_not_the_default(simulated_gpu):
    assert repr(engine.ones(2, device="cuda")) == "tensor([1., 1.], device='cuda:0')"
    engine.set_default_device("cuda")
    try:
        assert repr(engine.ones(2)) == "tensor([1., 1.])"
        assert repr(engine.ones(2, device="cpu")) == "tensor([1., 1.], device='cpu')"
    finally:
        engine.set_default_device("cpu")


def test_a_gradient_function_and_requires_grad():
    w = engine.tensor([1.5, -2.0], requires_grad=True)
    assert repr(w) == "tensor([ 1.5000, -2.0000], requires_grad=True)"
    assert repr(w * 2) == "tensor([ 3., -4.], grad_fn=<MulBackward0>)"
    parameter = engine.nn.Parameter(engine.tensor([0.25]))
    assert repr(parameter) == "Parameter containing:\ntensor([0.2500], requires_grad=True)"


def test_max_over_a_dimension_prints_as_pytorchs_return_type():
    result = engine.arange(6.0).reshape(2, 3).max(dim=1)
    assert repr(result) == "engine.return_types.max(\nvalues=tensor([2., 5.]),\nindices=tensor([2, 2]))"
    values, indices = result  # still the named pair
    assert values.tolist() == [2.0, 5.0] and result.indices.tolist() == [2, 2]
    assert repr(engine.arange(3.0).min(dim=0)).startswith("engine.return_types.min(\nvalues=tensor(0.)")


# ----------------------------------------------------------------------------- torch.tensor's dtype, torch.Size

INFERRED = [  # torch 2.13.0's dtype for each
    ([np.float64(0.1)], f64), (np.float64(0.1), f64), ([np.float32(0.1)], engine.float32),
    ([np.int32(1)], engine.int32), ([np.int64(1), 1.5], engine.float32), ([1, np.float64(2.0)], f64),
    ([np.float16(1)], engine.float16), ([np.bool_(True)], engine.bool), ([np.float32(1), np.float64(2)], f64),
    ([[np.float64(1)], [1.0]], f64), ([True, 1], engine.int64), ([1, 2.0], engine.float32),
    ([np.int32(1), np.int64(2)], engine.int64), ([np.uint8(3)], engine.uint8), ([np.float64(1), True], f64),
    ([1.5, 2.5], engine.float32), ([[1, 2], [3, 4]], engine.int64), ([True, False], engine.bool),
]


@pytest.mark.parametrize("data, dtype", INFERRED, ids=[repr(d) for d, _ in INFERRED])
def test_tensor_infers_the_dtype_as_pytorch(data, dtype):
    assert engine.tensor(data).dtype == dtype


def test_tensor_infers_from_tensors_inside_a_list_too():
    t = engine.tensor([engine.tensor(1.5, dtype=f64), 2])
    assert t.dtype == f64 and t.tolist() == [1.5, 2.0]


def test_a_numpy_scalar_the_engine_has_no_dtype_for_is_named():
    with pytest.raises(TypeError, match="uint32"):
        engine.tensor([np.uint32(3)])
    assert engine.tensor([np.int8(3)]).dtype == engine.int8  # (as PyTorch's: its own dtype)


def test_size_slices_and_sums_to_a_size():
    s = engine.zeros(2, 3, 4).shape
    assert type(s[1:]) is engine.Size and s[1:].numel() == 12 and repr(s[1:]) == "engine.Size([3, 4])"
    assert type(s[0]) is int and s[-1] == 4
    assert type(s + (5,)) is engine.Size and s + (5,) == (2, 3, 4, 5)
    assert type((1,) + s) is engine.Size and (1,) + s == (1, 2, 3, 4)
    assert type(s * 2) is engine.Size and type(2 * s) is engine.Size and len(2 * s) == 6
    assert s == (2, 3, 4) and hash(s) == hash((2, 3, 4))
    with pytest.raises(TypeError, match="not list"):
        s + [1]


# ----------------------------------------------------------------------------- against torch itself

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.torch
@pytest.mark.parametrize("name, make", CASES, ids=[c[0] for c in CASES])
def test_the_expected_strings_are_torchs(name, make):
    torch = _torch()
    assert repr(make(torch)).replace("torch.", "engine.") == EXPECTED[name]


@pytest.mark.torch
def test_sizes_and_return_types_print_as_torchs():
    torch = _torch()
    for lib_expr in ("lib.zeros(2, 3).shape", "lib.zeros(2, 3, 4).shape[1:]", "lib.zeros(2).shape + (1,)",
                     "lib.arange(6.0).reshape(2, 3).max(dim=1)", "lib.tensor([3, 1, 2]).min(dim=0)"):
        theirs = repr(eval(lib_expr, {"lib": torch})).replace("torch.", "engine.")  # noqa: S307 - our own text
        assert repr(eval(lib_expr, {"lib": engine})) == theirs, lib_expr  # noqa: S307


_MAGNITUDES = st.sampled_from([1e-9, 1e-5, 1e-3, 0.1, 1.0, 7.0, 1e3, 1e5, 1e9])
_SHAPES = st.sampled_from([(), (1,), (5,), (3, 4), (2, 3, 2), (40, 30), (1001,), (3, 400), (12, 9, 11)])


@pytest.mark.torch
@settings(max_examples=150, deadline=None)
@given(shape=_SHAPES, scale=_MAGNITUDES, whole=st.booleans(), special=st.booleans(),
       dtype=st.sampled_from(["float32", "float64", "float16", "int64", "int32", "bool"]), seed=st.integers(0, 2**16))
def test_random_tensors_print_as_in_torch(shape, scale, whole, special, dtype, seed):
    torch = _torch()
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * scale
    if whole:
        values = np.round(values)
    if special and values.size:
        flat = values.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], 3)
    if dtype == "bool":
        values = values > 0
    elif dtype.startswith("int"):
        values = np.nan_to_num(values, posinf=7, neginf=-7).clip(-1e9, 1e9).astype(dtype)
    else:
        with np.errstate(over="ignore"):  # past float16's range: inf, which prints too
            values = values.astype(dtype)
    values = np.array(values)  # (a 0-d array, not a NumPy scalar)
    ours = repr(engine.from_numpy(values.copy()))
    theirs = repr(torch.from_numpy(values.copy())).replace("torch.", "engine.")
    # "engine.float64" is a character longer than "torch.float64": where torch's suffix just fits on the line,
    # ours goes on the next, by the same rule
    assert _suffixes_on_one_line(ours) == _suffixes_on_one_line(theirs)


def _suffixes_on_one_line(text):
    return re.sub(r",\n {7}(?=[a-z])", ", ", text)  # a suffix wrapped under "tensor(", not a row of numbers


# ----------------------------------------------------------------------------- modules and optimizers

def test_an_optimizer_prints_its_parameter_groups_as_pytorchs():
    model = engine.nn.Linear(3, 2)
    sgd = engine.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    assert repr(sgd) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.001\n    maximize: False\n    momentum: 0.9\n"
                         "    nesterov: False\n    weight_decay: 0\n)")  # torch 2.13's, line for line
    assert repr(engine.optim.LBFGS(model.parameters())).splitlines()[2:] == [
        "    history_size: 100", "    line_search_fn: None", "    lr: 1", "    max_eval: 25", "    max_iter: 20",
        "    tolerance_change: 1e-09", "    tolerance_grad: 1e-07", ")"]
    assert repr(engine.optim.Rprop(model.parameters())).splitlines()[2:] == [
        "    capturable: False", "    differentiable: False", "    etas: (0.5, 1.2)", "    foreach: None",
        "    lr: 0.01", "    maximize: False", "    step_sizes: (1e-06, 50)", ")"]
    assert repr(engine.optim.ASGD(model.parameters())).splitlines()[2:] == [
        "    alpha: 0.75", "    capturable: False", "    differentiable: False", "    foreach: None",
        "    lambd: 0.0001", "    lr: 0.01", "    maximize: False", "    t0: 1000000.0", "    weight_decay: 0", ")"]
    two = engine.optim.Adam([{"params": [model.weight]}, {"params": [model.bias], "lr": 0.1}])
    assert repr(two).splitlines()[:14] == [  # torch 2.13's, line for line
        "Adam (", "Parameter Group 0", "    amsgrad: False", "    betas: (0.9, 0.999)", "    capturable: False",
        "    decoupled_weight_decay: False", "    differentiable: False", "    eps: 1e-08", "    foreach: None",
        "    fused: None", "    lr: 0.001", "    maximize: False", "    weight_decay: 0", "Parameter Group 1"]
    assert "    decoupled_weight_decay: True" in repr(engine.optim.AdamW(model.parameters()))
    assert "Parameter Group 1" in repr(two) and "    lr: 0.1" in repr(two)


def test_flatten_prints_its_dimensions():
    assert repr(engine.nn.Flatten(0, 1)) == "Flatten(start_dim=0, end_dim=1)"
    assert repr(engine.nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
