"""Random convolutions, transposed convolutions, pools (max, average, adaptive, Lp), interpolation (nearest,
bilinear, bicubic, area), unfold/fold and the normalisations (batch, group, layer, instance) held to PyTorch: values
and every gradient (input, weights, biases), float64, 300 programs a seed. A first run of 600 found them all
agreeing, and ``lp_pool1d``/``lp_pool2d`` (nn.LPPool1d/2d) and ``interpolate(mode='bicubic')`` missing (added)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import engine

KINDS = ["conv1d", "conv2d", "convt2d", "convt1d", "maxpool2d", "avgpool2d", "maxpool1d", "avgpool1d",
         "adaptive_avg2d", "adaptive_max2d", "interp", "unfold", "fold", "bn", "gn", "ln", "in", "lppool", "pixel"]


def _program(rng):
    kind = rng.choice(KINDS)
    g = rng.choice([1, 1, 2])
    k = rng.randint(1, 3)
    d = rng.choice([1, 1, 2])
    return {"kind": kind, "g": g, "cin": g * rng.randint(1, 2), "cout": g * rng.randint(1, 2), "k": k,
            "s": rng.randint(1, 2), "p": rng.randint(0, k // 2), "d": d, "H": rng.randint(k * d + 1, 7),
            "W": rng.randint(k * d + 1, 7), "ceil": rng.random() < 0.3, "cip": rng.random() < 0.5,
            "bias": rng.random() < 0.5, "mode": rng.choice(["nearest", "bilinear", "bicubic", "area"]),
            "ac": rng.random() < 0.5}


def _out(L, c, x, param, draws):
    F = L.nn.functional
    kind, one, k = c["kind"], c["kind"].endswith("1d"), c["k"]
    window = [k] * (1 if one else 2)
    if kind in ("conv1d", "conv2d"):
        w = param(c["cout"], c["cin"] // c["g"], *window)
        return getattr(F, kind)(x, w, param(c["cout"]) if c["bias"] else None, c["s"], c["p"], c["d"], c["g"])
    if kind in ("convt1d", "convt2d"):
        w = param(c["cin"], c["cout"] // c["g"], *window)
        extra = min(c["s"] - 1, c["d"] - 1) if c["s"] > 1 else 0
        conv = F.conv_transpose1d if one else F.conv_transpose2d
        return conv(x, w, param(c["cout"]) if c["bias"] else None, c["s"], c["p"], extra, c["g"], c["d"])
    if kind in ("maxpool1d", "maxpool2d"):
        pool = F.max_pool1d if one else F.max_pool2d
        return pool(x, k + 1, c["s"], min(c["p"], k // 2), c["d"], c["ceil"])
    if kind in ("avgpool1d", "avgpool2d"):
        pool = F.avg_pool1d if one else F.avg_pool2d
        return pool(x, k + 1, c["s"], min(c["p"], (k + 1) // 2), c["ceil"], c["cip"])
    if kind == "adaptive_avg2d":
        return F.adaptive_avg_pool2d(x, (max(1, c["H"] // 2), 3))
    if kind == "adaptive_max2d":
        return F.adaptive_max_pool2d(x, (max(1, c["H"] // 2), 3))
    if kind == "interp":
        if c["mode"] == "area":
            return F.interpolate(x, size=(max(1, c["H"] - 1), max(1, c["W"] - 2)), mode="area")
        extra = {} if c["mode"] == "nearest" else {"align_corners": c["ac"]}
        return F.interpolate(x, size=(c["H"] + 2, c["W"] + 1), mode=c["mode"], **extra)
    if kind == "unfold":
        return F.unfold(x, k + 1, c["d"], c["p"], c["s"])
    if kind == "fold":
        blocks = (c["H"] - k + 1) * (c["W"] - k + 1)
        y = param(2, c["cin"] * k * k, blocks)
        return F.fold(y, (c["H"], c["W"]), k)
    if kind == "bn":
        return F.batch_norm(x, None, None, param(c["cin"]), param(c["cin"]), True, 0.1, 1e-5)
    if kind == "gn":
        return F.group_norm(x, c["g"] if c["cin"] % c["g"] == 0 else 1, param(c["cin"]), param(c["cin"]))
    if kind == "ln":
        return F.layer_norm(x, x.shape[-2:], param(*x.shape[-2:]), param(*x.shape[-2:]))
    if kind == "in":
        return F.instance_norm(x, weight=param(c["cin"]), bias=param(c["cin"]))
    if kind == "lppool":
        return F.lp_pool2d(x.abs() + 0.1, 2, k + 1, c["s"])
    return F.pixel_shuffle(x.repeat(1, 4, 1, 1), 2)


def _run(L, c, seed):
    draws = np.random.default_rng(seed)
    shape = (2, c["cin"], c["H"]) if c["kind"].endswith("1d") else (2, c["cin"], c["H"], c["W"])
    x = L.tensor(draws.standard_normal(shape), dtype=L.float64, requires_grad=True)
    params = []

    def param(*size):
        t = L.tensor(draws.standard_normal(size), dtype=L.float64, requires_grad=True)
        params.append(t)
        return t

    out = _out(L, c, x, param, draws)
    weights = np.cos(np.arange(out.numel()) + 0.3).reshape(tuple(out.shape))
    (out * L.tensor(weights, dtype=L.float64)).sum().backward()
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in [x, *params]]


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1])
def test_random_conv_pool_and_norm_programs_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    rng = random.Random(seed)
    different = []
    for i in range(300):
        c = _program(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes = []
            for lib in (torch, engine):
                try:
                    outcomes.append(("ok",) + _run(lib, c, seed * 1000 + i))
                except Exception as e:  # noqa: BLE001 - a refusal is compared as one
                    outcomes.append(("refused", type(e).__name__))
        theirs, ours = outcomes
        if theirs[0] != ours[0]:
            different.append((c, theirs[:2], ours[:2]))
        elif theirs[0] == "ok" and not (
                theirs[1].shape == ours[1].shape and np.allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-10)
                and all((g is None and h is None) or (g is not None and h is not None
                                                      and np.allclose(h, g, rtol=1e-7, atol=1e-9))
                        for g, h in zip(theirs[2], ours[2]))):
            different.append((c, "values or gradients"))
    assert different == []


def test_bicubic_weights_sum_to_one_and_land_on_the_pixels():
    """The cubic convolution's weights (Keys', A = -0.75) sum to 1: a constant image stays constant, edges included
    (the taps past them clamped); with align_corners=True the outputs at the pixels are the pixels; and one lit
    pixel's response, sampled every half pixel, is Keys' kernel."""
    F = engine.nn.functional
    flat = F.interpolate(engine.full((1, 1, 5, 4), 3.5, dtype=engine.float64), size=(11, 9), mode="bicubic")
    np.testing.assert_allclose(flat.numpy(), 3.5, atol=1e-12)
    image = engine.tensor(np.random.default_rng(3).standard_normal((1, 1, 8, 8)), dtype=engine.float64)
    same = F.interpolate(image, size=(15, 15), mode="bicubic", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(same[::2, ::2], image.numpy()[0, 0], atol=1e-12)
    spike = np.zeros((1, 1, 1, 9))
    spike[0, 0, 0, 4] = 1.0
    response = F.interpolate(engine.tensor(spike), size=(1, 17), mode="bicubic", align_corners=True).numpy()[0, 0, 0]
    # at half-pixel steps from the spike: 1, k(0.5), 0, k(1.5), 0 (Keys: k(0.5) = 0.59375, k(1.5) = -0.09375)
    np.testing.assert_allclose(response[8:13], [1.0, 0.59375, 0.0, -0.09375, 0.0], atol=1e-12)


def test_lp_pool_is_the_p_norm_of_each_window():
    x = engine.tensor([[[1.0, -2.0, 3.0, 4.0]]], dtype=engine.float64, requires_grad=True)
    out = engine.nn.functional.lp_pool1d(x, 2, 2)
    assert out.reshape(-1).tolist() == pytest.approx([5 ** 0.5, 5.0])
    out.sum().backward()
    assert x.grad.reshape(-1).tolist() == pytest.approx([1 / 5 ** 0.5, -2 / 5 ** 0.5, 0.6, 0.8])
    assert engine.nn.LPPool2d(float("inf"), 2)(x.reshape(1, 1, 2, 2)).item() == 4.0
    assert repr(engine.nn.LPPool1d(1.5, 2)) == "LPPool1d(norm_type=1.5, kernel_size=2, stride=None, ceil_mode=False)"
