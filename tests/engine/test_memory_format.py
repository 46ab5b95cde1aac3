"""Memory formats (``torch.memory_format``) and PyTorch's top-level constants: ``contiguous_format``,
``channels_last``, ``channels_last_3d`` and ``preserve_format`` taken wherever PyTorch takes ``memory_format=``
(``contiguous``, ``is_contiguous``, ``clone``, ``to``, ``empty`` and the ``*_like`` creators, ``Module.to``), with
PyTorch's strides (the engine's arrays have strides of their own, so the formats are real), the same values, and
PyTorch's errors; ``torch.pi``/``e``/``inf``/``nan``/``newaxis``; ``default_generator``."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import engine
from tests.engine.helpers import HAVE_TORCH

RNG = np.random.default_rng(12)
X4 = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
X5 = RNG.standard_normal((2, 3, 2, 4, 5)).astype(np.float32)


def _cases(lib):
    """Each (name, tensor) whose strides and values are compared."""
    cl, cl3, cf, pf = lib.channels_last, lib.channels_last_3d, lib.contiguous_format, lib.preserve_format
    x, x5 = lib.tensor(X4), lib.tensor(X5)
    y = x.contiguous(memory_format=cl)
    permuted = x.permute(0, 2, 1, 3)  # dense, in another order
    sliced = x[:, :, ::2]  # not dense: row-major copies
    t2 = lib.tensor(X4[0, 0]).t()
    return [
        ("channels_last", y), ("channels_last_3d", x5.contiguous(memory_format=cl3)),
        ("back to contiguous", y.contiguous()), ("contiguous format", y.contiguous(memory_format=cf)),
        ("already channels last", y.contiguous(memory_format=cl)),
        ("zeros_like keeps it", lib.zeros_like(y)), ("ones_like float64", lib.ones_like(y, dtype=lib.float64)),
        ("empty_like contiguous", lib.empty_like(y, memory_format=cf).fill_(1)),
        ("full_like", lib.full_like(y, 2.5)), ("zeros_like channels_last", lib.zeros_like(x, memory_format=cl)),
        ("zeros_like of a permuted", lib.zeros_like(permuted)), ("zeros_like of a slice", lib.zeros_like(sliced)),
        ("zeros_like of a transposed", lib.zeros_like(t2)),
        ("clone keeps it", y.clone()), ("clone of a permuted", permuted.clone()),
        ("clone of a slice", sliced.clone()), ("clone of a transposed", t2.clone()),
        ("clone contiguous", y.clone(memory_format=cf)), ("clone channels_last", x.clone(memory_format=cl)),
        ("clone preserve", permuted.clone(memory_format=pf)),
        ("to channels_last", x.to(memory_format=cl)), ("to float64 keeps it", y.to(lib.float64)),
        ("to float64 channels_last", x.to(lib.float64, memory_format=cl)), ("double keeps it", y.double()),
        ("elementwise keeps it", y * 2 + 1), ("empty channels_last", lib.empty(2, 3, 4, 5, memory_format=cl).zero_()),
        ("empty channels_last_3d", lib.empty(1, 2, 3, 4, 5, memory_format=cl3).zero_()),
    ]


def _seen(lib):
    return [(name, tuple(t.stride()), t.is_contiguous(), t.is_contiguous(memory_format=lib.channels_last),
             t.detach().cpu().numpy().copy()) for name, t in _cases(lib)]


@pytest.mark.torch
def test_strides_contiguity_and_values_are_torchs():
    import torch

    for mine, theirs in zip(_seen(engine), _seen(torch)):
        assert mine[:4] == theirs[:4], mine[0]
        np.testing.assert_array_equal(mine[4], theirs[4], err_msg=mine[0])


def test_channels_last_lies_channels_innermost_and_keeps_the_values():
    """Without PyTorch: (N, C, H, W) stored as N, H, W, C; the values those of the row-major tensor."""
    x = engine.tensor(X4)
    y = x.contiguous(memory_format=engine.channels_last)
    assert y.stride() == (60, 1, 15, 3) and not y.is_contiguous()
    assert y.is_contiguous(memory_format=engine.channels_last) and y.numpy().transpose(0, 2, 3, 1).flags.c_contiguous
    np.testing.assert_array_equal(y.numpy(), X4)
    assert y.contiguous(memory_format=engine.channels_last) is y and x.contiguous() is x
    assert x.to(memory_format=engine.contiguous_format) is x  # nothing to do: itself, as PyTorch's


def test_a_recorded_layout_change_is_a_clone_and_passes_the_gradient():
    x = engine.tensor(X4, requires_grad=True)
    y = x.contiguous(memory_format=engine.channels_last)
    assert y.grad_fn.name() == "CloneBackward0" and y.stride() == (60, 1, 15, 3)
    (y * engine.tensor(X4)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), X4)
    z = x.clone(memory_format=engine.channels_last)
    assert z.grad_fn.name() == "CloneBackward0" and z.is_contiguous(memory_format=engine.channels_last)


def test_a_module_lays_out_its_4d_weights_and_leaves_the_rest():
    conv = engine.nn.Conv2d(3, 4, 3).to(memory_format=engine.channels_last)
    assert conv.weight.stride() == (27, 1, 9, 3) and conv.bias.stride() == (1,)
    assert isinstance(conv.weight, engine.nn.Parameter) and conv.weight.requires_grad
    out = conv(engine.tensor(X4).contiguous(memory_format=engine.channels_last))
    plain = engine.nn.functional.conv2d(engine.tensor(X4), conv.weight.detach().contiguous(), conv.bias.detach())
    np.testing.assert_allclose(out.detach().numpy(), plain.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda: engine.randn(2, 3).contiguous(memory_format=engine.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
    (lambda: engine.randn(2, 3, 4, 5).contiguous(memory_format=engine.channels_last_3d), RuntimeError,
     "required rank 5 tensor to use channels_last_3d format"),
    (lambda: engine.zeros_like(engine.randn(2, 3), memory_format=engine.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
    (lambda: engine.empty(2, 3, memory_format=engine.preserve_format), RuntimeError,
     "unsupported memory format Preserve"),
    (lambda: engine.randn(2, 3).t().contiguous(memory_format=engine.preserve_format), RuntimeError,
     "preserve memory format is unsupported by the contiguous operator"),
    (lambda: engine.zeros_like(engine.randn(2), memory_format="channels_last"), TypeError,
     "zeros_like\\(\\): argument 'memory_format' must be torch.memory_format, not str"),
])
def test_bad_formats_are_refused_in_torchs_words(call, error, message):
    with pytest.raises(error, match=message):
        call()
    if HAVE_TORCH:  # and PyTorch refuses the same calls
        import torch

        source = call.__code__
        with pytest.raises(error):
            eval(source, {"engine": torch, "pytest": pytest})


def test_the_formats_are_singletons_and_print_as_names():
    assert repr(engine.channels_last) == "engine.channels_last"
    assert isinstance(engine.preserve_format, engine.memory_format)
    for fmt in (engine.contiguous_format, engine.preserve_format, engine.channels_last, engine.channels_last_3d):
        assert pickle.loads(pickle.dumps(fmt)) is fmt and copy.deepcopy(fmt) is fmt


def test_torchs_constants():
    assert (engine.pi, engine.e, engine.inf) == (math.pi, math.e, math.inf) and math.isnan(engine.nan)
    assert engine.tensor([1.0, 2.0])[:, engine.newaxis].shape == (2, 1)
    scores = engine.tensor([[1.0, 2.0], [3.0, 4.0]]).masked_fill(engine.tensor([[False, True], [False, False]]),
                                                                  -engine.inf)
    assert engine.softmax(scores, dim=-1)[0].tolist() == [1.0, 0.0]


def test_default_generator_is_the_global_cpu_generator():
    assert engine.manual_seed(5) is engine.default_generator and engine.default_generator.initial_seed() == 5
    first = engine.randn(4).tolist()
    engine.default_generator.manual_seed(5)
    assert engine.randn(4).tolist() == first and engine.initial_seed() == 5
    state = engine.default_generator.get_state()
    after = engine.rand(3).tolist()
    engine.default_generator.set_state(state)
    assert engine.rand(3, generator=engine.default_generator).tolist() == after
    assert engine.get_rng_state().tolist() == engine.default_generator.get_state().tolist()
