"""``nn.functional.ctc_loss`` and ``nn.CTCLoss`` against PyTorch 2.13 on random batches: the loss and the
gradients at the logits and at the log-probabilities (PyTorch's CtcLossBackward0 form), for padded and
concatenated targets, repeated labels, empty targets, another blank, unbatched input, float32, impossible
alignments with and without ``zero_infinity``; the refusals; and the CuPy stand-in as the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import engine


def _case(seed):
    rng = np.random.default_rng(seed)
    t, n, c = rng.integers(1, 14), rng.integers(1, 5), rng.integers(2, 7)
    blank = int(rng.integers(0, c)) if seed % 3 == 0 else 0
    target_lengths = rng.integers(0, 6, n)
    input_lengths = rng.integers(1, t + 1, n)
    input_lengths[0] = t
    labels = [l for l in range(c) if l != blank]
    targets = rng.choice(labels, (n, 6))
    if seed % 4 == 1:
        targets[:, 1] = targets[:, 0]  # (repeated labels need a blank between them)
    return dict(x=rng.standard_normal((t, n, c)), targets=targets, il=input_lengths, tl=target_lengths,
                blank=blank, reduction=["mean", "sum", "none"][seed % 3], zero_infinity=seed % 2 == 0,
                concatenated=seed % 5 == 2, dtype="float32" if seed % 7 == 3 else "float64", tuples=seed % 2 == 1)


def _run(lib, case):
    dtype = getattr(lib, case["dtype"])
    x = lib.tensor(case["x"], dtype=dtype, requires_grad=True)
    lp = x.log_softmax(2)
    lp.retain_grad()
    targets = case["targets"]
    if case["concatenated"]:
        targets = np.concatenate([row[:k] for row, k in zip(targets, case["tl"])]).astype(np.int64)
    # (the lengths as tensors, or as tuples: PyTorch takes both of one kind; the engine either)
    if case["tuples"]:
        il, tl = tuple(case["il"].tolist()), tuple(case["tl"].tolist())
    else:
        il, tl = lib.tensor(case["il"]), lib.tensor(case["tl"])
    loss = lib.nn.functional.ctc_loss(lp, lib.tensor(targets), il, tl,
                                      blank=case["blank"], reduction=case["reduction"],
                                      zero_infinity=case["zero_infinity"])
    weights = lib.arange(1.0, 1.0 + loss.numel(), dtype=dtype).reshape(loss.shape)
    (loss * weights).sum().backward()
    return loss.detach().numpy(), x.grad.numpy(), lp.grad.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(40))
def test_ctc_loss_and_its_gradients_are_pytorchs(seed):
    torch = pytest.importorskip("torch")
    case = _case(seed)
    tol = 2e-5 if case["dtype"] == "float32" else 1e-10
    for ours, theirs in zip(_run(engine, case), _run(torch, case)):
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.torch
def test_the_module_and_unbatched_input_are_pytorchs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((9, 5))
    out = []
    for lib in (torch, engine):
        lp = lib.tensor(x, requires_grad=True).log_softmax(1)
        loss = lib.nn.CTCLoss(blank=4)(lp, lib.tensor([0, 1, 1]), lib.tensor(9), lib.tensor(3))
        loss.backward()
        out.append(loss.item())
    assert out[0] == pytest.approx(out[1], rel=1e-12)


def test_an_impossible_alignment_is_infinite_unless_zeroed():
    lp = engine.full((2, 1, 3), -np.log(3.0), dtype=engine.float64, requires_grad=True)
    targets = engine.tensor([[1, 1]])  # needs 3 frames (a blank between the repeats): 2 are given
    loss = engine.nn.functional.ctc_loss(lp, targets, [2], [2], reduction="sum")
    assert loss.item() == float("inf")
    zeroed = engine.nn.functional.ctc_loss(lp, targets, [2], [2], reduction="sum", zero_infinity=True)
    zeroed.backward()
    assert zeroed.item() == 0.0 and lp.grad.abs().sum().item() == 0.0
    one = engine.nn.functional.ctc_loss(engine.full((3, 1, 2), -np.log(2.0), dtype=engine.float64),
                                        engine.tensor([[1]]), [3], [1], reduction="none")
    assert one.item() == pytest.approx(-np.log(6 / 8))  # 6 of the 8 paths of 3 frames over {blank, 1} give "1"


def test_refusals_name_the_problem():
    lp = engine.zeros(4, 2, 3).log_softmax(2)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 4, but got value 5"):
        engine.nn.functional.ctc_loss(lp, engine.tensor([[1], [2]]), [5, 4], [1, 1])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        engine.nn.functional.ctc_loss(lp, engine.tensor([[1], [2]]), [4, 4], [1, 1], blank=3)
    with pytest.raises(RuntimeError, match="input_lengths must have one length per sample \\(2\\), got 3"):
        engine.nn.functional.ctc_loss(lp, engine.tensor([[1], [2]]), [4, 4, 4], [1, 1])
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        engine.nn.CTCLoss(reduction="avg")


def test_on_the_cupy_stand_in_as_on_the_cpu(simulated_gpu):
    case = _case(5)
    x = case["x"]
    out = []
    for dev in ("cpu", "cuda"):
        logits = engine.tensor(x, device=dev, requires_grad=True)
        loss = engine.nn.functional.ctc_loss(logits.log_softmax(2), engine.tensor(case["targets"], device=dev),
                                             engine.tensor(case["il"]), engine.tensor(case["tl"]), reduction="sum")
        loss.backward()
        assert loss.device.type == dev
        out.append((loss.item(), logits.grad.cpu().numpy()))
    assert out[1][0] == pytest.approx(out[0][0], rel=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10, atol=1e-12)
