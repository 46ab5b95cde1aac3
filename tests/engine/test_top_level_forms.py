"""PyTorch's top-level forms of nn.functional's ops (``torch.conv2d``, ``torch.selu_``, ...), of more tensor methods
(``torch.norm``, ``torch.sin_``, ``torch.frexp``, ...), ``torch.asarray``, and the methods PyTorch has under other
names (``clip_``, ``divide_``, ...): each the same values as the engine's own form, and, where torch is installed,
as PyTorch's (dtype, shape, values)."""

from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn.functional as F


def _x(lib):
    g = np.random.default_rng(1)
    return lib.tensor(g.standard_normal((1, 2, 5, 5)).astype(np.float32))


def _w(lib):
    g = np.random.default_rng(0)
    return lib.tensor(g.standard_normal((2, 2, 3, 3)).astype(np.float32))


CASES = {  # name -> (the top-level form, the engine's own form it must equal)
    "conv2d": (lambda L: L.conv2d(_x(L), _w(L), None, 1, 1), lambda: F.conv2d(_x(engine), _w(engine), padding=1)),
    "conv_transpose2d": (lambda L: L.conv_transpose2d(_x(L), _w(L), None, 2),
                         lambda: F.conv_transpose2d(_x(engine), _w(engine), stride=2)),
    "max_pool2d": (lambda L: L.max_pool2d(_x(L), 2), lambda: F.max_pool2d(_x(engine), 2)),
    "max_pool1d": (lambda L: L.max_pool1d(_x(L)[0], 2), lambda: F.max_pool1d(_x(engine)[0], 2)),
    "avg_pool1d": (lambda L: L.avg_pool1d(_x(L)[0], 2), lambda: F.avg_pool1d(_x(engine)[0], 2)),
    "adaptive_avg_pool1d": (lambda L: L.adaptive_avg_pool1d(_x(L)[0], 3),
                            lambda: F.adaptive_avg_pool1d(_x(engine)[0], 3)),
    "selu": (lambda L: L.selu(_x(L)), lambda: F.selu(_x(engine))),
    "celu": (lambda L: L.celu(_x(L), 0.5), lambda: F.celu(_x(engine), 0.5)),
    "threshold": (lambda L: L.threshold(_x(L), 0.1, 20.0), lambda: F.threshold(_x(engine), 0.1, 20.0)),
    "hardshrink": (lambda L: L.hardshrink(_x(L), 0.3), lambda: F.hardshrink(_x(engine), 0.3)),
    "prelu": (lambda L: L.prelu(_x(L), L.tensor([0.25, 0.1])), lambda: F.prelu(_x(engine), engine.tensor([0.25, 0.1]))),
    "group_norm": (lambda L: L.group_norm(_x(L), 2), lambda: F.group_norm(_x(engine), 2)),
    "layer_norm": (lambda L: L.layer_norm(_x(L), [5, 5]), lambda: F.layer_norm(_x(engine), [5, 5])),
    "dropout, not training": (lambda L: L.dropout(_x(L), 0.5, False), lambda: _x(engine)),
    "cosine_similarity": (lambda L: L.cosine_similarity(_x(L), _x(L) * 2 + 1),
                          lambda: F.cosine_similarity(_x(engine), _x(engine) * 2 + 1)),
    "pairwise_distance": (lambda L: L.pairwise_distance(_x(L)[0, 0], _x(L)[0, 1]),
                          lambda: F.pairwise_distance(_x(engine)[0, 0], _x(engine)[0, 1])),
    "selu_": (lambda L: L.selu_(_x(L)), lambda: F.selu(_x(engine))),
    "threshold_": (lambda L: L.threshold_(_x(L), 0.0, -1.0), lambda: F.threshold(_x(engine), 0.0, -1.0)),
    "sin_": (lambda L: L.sin_(_x(L)), lambda: _x(engine).sin()),
    "clamp_": (lambda L: L.clamp_(_x(L), -0.5, 0.5), lambda: _x(engine).clamp(-0.5, 0.5)),
    "zero_": (lambda L: L.zero_(_x(L)), lambda: engine.zeros(1, 2, 5, 5)),
    "norm": (lambda L: L.norm(_x(L)), lambda: (_x(engine) ** 2).sum().sqrt()),
    "norm, dim": (lambda L: L.norm(_x(L), dim=1), lambda: (_x(engine) ** 2).sum(1).sqrt()),
    "norm, p=1 over two dims": (lambda L: L.norm(_x(L), p=1, dim=(2, 3)), lambda: _x(engine).abs().sum((2, 3))),
    "frexp": (lambda L: L.frexp(L.tensor([8.0, 0.3, -5.0, 0.0])),
              lambda: (engine.tensor([0.5, 0.6, -0.625, 0.0]), engine.tensor([4, -1, 3, 0], dtype=engine.int32))),
    "nextafter": (lambda L: L.nextafter(L.tensor([1.0]), L.tensor([2.0])) - 1,
                  lambda: engine.tensor([float(np.finfo(np.float32).eps)])),
    "clip_": (lambda L: _x(L).clip_(-0.1, 0.1), lambda: _x(engine).clamp(-0.1, 0.1)),
    "divide_": (lambda L: _x(L).divide_(2), lambda: _x(engine) / 2),
    "multiply_": (lambda L: _x(L).multiply_(3), lambda: _x(engine) * 3),
    "subtract_": (lambda L: _x(L).subtract_(1, alpha=2), lambda: _x(engine) - 2),
    "gcd_": (lambda L: L.tensor([12, 18]).gcd_(L.tensor([8, 27])), lambda: engine.tensor([4, 9])),
    "lcm_": (lambda L: L.tensor([4, 6]).lcm_(L.tensor([6, 4])), lambda: engine.tensor([12, 12])),
    "asarray of a list": (lambda L: L.asarray([1, 2, 3]), lambda: engine.tensor([1, 2, 3])),
    "asarray to float64": (lambda L: L.asarray(_x(L), dtype=L.float64), lambda: _x(engine).double()),
    "as_strided": (lambda L: L.as_strided(_x(L), (3, 4), (2, 5), 1), lambda: _x(engine).as_strided((3, 4), (2, 5), 1)),
    "as_strided_scatter of a view": (
        lambda L: L.as_strided_scatter(_x(L)[0, 1], L.zeros(2, 2), (2, 2), (5, 2), 27),
        # (the view's memory starts 25 elements into its storage: 27 is 2 into it, rows 5 apart, columns 2)
        lambda: _x(engine)[0, 1].index_put((engine.tensor([0, 0, 1, 1]), engine.tensor([2, 4, 2, 4])),
                                           engine.zeros(4))),
    "unfold_copy": (lambda L: L.unfold_copy(_x(L), 3, 2, 2), lambda: _x(engine).unfold(3, 2, 2).contiguous()),
    "permute_copy": (lambda L: L.permute_copy(_x(L), (3, 1, 2, 0)), lambda: _x(engine).permute(3, 1, 2, 0)),
    "slice_copy": (lambda L: L.slice_copy(_x(L), 2, 1, 4, 2), lambda: _x(engine)[:, :, 1:4:2]),
    "select_copy": (lambda L: L.select_copy(_x(L), -1, 3), lambda: _x(engine)[..., 3]),
    "unbind_copy": (lambda L: L.unbind_copy(_x(L)[0], 0), lambda: (_x(engine)[0, 0], _x(engine)[0, 1])),
    "split_with_sizes": (lambda L: L.split_with_sizes(_x(L), [2, 3], 3),
                         lambda: (_x(engine)[..., :2], _x(engine)[..., 2:])),
    "t_copy": (lambda L: L.t_copy(_x(L)[0, 0]), lambda: _x(engine)[0, 0].t()),
}


def _parts(out):
    return out if isinstance(out, tuple) else (out,)


def _same(a, b):
    a, b = a.detach(), b.detach()
    return (str(a.dtype).rsplit(".", 1)[1] == str(b.dtype).rsplit(".", 1)[1] and tuple(a.shape) == tuple(b.shape)
            and np.allclose(np.asarray(a.tolist(), dtype=np.float64), np.asarray(b.tolist(), dtype=np.float64),
                            rtol=1e-5, atol=1e-6))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_top_level_form_is_the_engines_own(name):
    form, own = CASES[name]
    got, want = _parts(form(engine)), _parts(own())
    assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_top_level_form_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    form, _ = CASES[name]
    got, theirs = _parts(form(engine)), _parts(form(torch))
    assert len(got) == len(theirs) and all(_same(a, b) for a, b in zip(got, theirs))


def test_in_place_forms_write_their_input_and_return_it():
    x = engine.tensor([0.5, -2.0])
    assert engine.sin_(x) is x and x.tolist() == pytest.approx([np.sin(0.5), np.sin(-2.0)])
    y = engine.tensor([-1.0, 1.0])
    assert engine.selu_(y) is y and y[1].item() == pytest.approx(1.0507009873554805)
    n = engine.tensor([12, 18])
    assert n.gcd_(engine.tensor([8, 27])) is n and n.tolist() == [4, 9]


def test_asarray_shares_where_it_can_and_copies_or_refuses_where_it_cannot():
    a = np.ones(3, dtype=np.float32)
    shared = engine.asarray(a)
    a[0] = 5.0
    assert shared[0].item() == 5.0
    copied = engine.asarray(a, copy=True)
    a[1] = 7.0
    assert copied[1].item() == 1.0
    t = engine.ones(2)
    assert engine.asarray(t) is t
    with pytest.raises(ValueError, match="can't alias the given object without a copy"):
        engine.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="can't alias the given object without a copy"):
        engine.asarray(t, dtype=engine.float64, copy=False)
    same = engine.asarray(t, requires_grad=True)
    assert same is t and t.requires_grad  # (as PyTorch's: the tensor itself, now requiring grad)


def test_plain_answers_and_refusals():
    x = engine.ones(2)
    assert (x.is_neg(), x.is_conj(), engine.is_inference_mode_enabled()) == (False,) * 3
    with engine.inference_mode():
        assert engine.is_inference_mode_enabled() and not engine.is_grad_enabled()
        with engine.inference_mode(False):
            assert not engine.is_inference_mode_enabled()
        assert engine.is_inference_mode_enabled()
    assert not engine.is_inference_mode_enabled()
    assert engine.inference_mode()(engine.is_inference_mode_enabled)()
    assert x.resolve_neg() is x and x.resolve_conj() is x
    with pytest.raises(TypeError, match=r"conv2d\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        engine.conv2d(1.0, x)
    with pytest.raises(RuntimeError, match=r"torch.frexp\(\) only supports floating-point dtypes"):
        engine.frexp(engine.tensor([1, 2]))


def test_on_the_cupy_stand_in(simulated_gpu):
    """frexp, nextafter and gcd/lcm call CuPy's functions of those names (the stand-in serves them, as CuPy 14.2)."""
    m, e = engine.frexp(engine.tensor([8.0, -5.0], device="cuda"))
    assert m.device.type == "cuda" and m.tolist() == [0.5, -0.625] and e.tolist() == [4, 3]
    assert (engine.nextafter(engine.tensor([1.0], device="cuda"), engine.tensor([0.0], device="cuda")).item()
            == np.nextafter(np.float32(1.0), np.float32(0.0)))
    n = engine.tensor([12, 18], device="cuda")
    assert n.gcd_(engine.tensor([8, 27], device="cuda")).tolist() == [4, 9]


def test_the_top_level_aliases_are_pytorchs():
    """``torch.vmap``, ``torch.GradScaler`` and ``torch.OutOfMemoryError`` are the same objects as their modules'
    names, as in PyTorch; ``except torch.cuda.OutOfMemoryError`` catches the engine's (CuPy's and NumPy's are
    MemoryErrors)."""
    assert engine.vmap is engine.func.vmap and engine.GradScaler is engine.amp.GradScaler
    assert engine.OutOfMemoryError is engine.cuda.OutOfMemoryError
    assert engine.vmap(lambda x: x * 2)(engine.ones(3)).tolist() == [2.0, 2.0, 2.0]
    caught = None
    try:
        raise MemoryError("out of memory allocating 8 GiB")
    except engine.cuda.OutOfMemoryError as error:
        caught = error
    assert str(caught) == "out of memory allocating 8 GiB"
