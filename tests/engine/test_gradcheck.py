"""``engine.autograd.gradcheck`` and ``gradgradcheck``, held to PyTorch's: the same verdict on the same functions
(right and wrong custom Functions, several outputs, integer outputs, outputs cut from the graph, a backward that
is not deterministic or ignores its gradient), in slow and fast mode, the same Jacobians in the message, the same
warnings and refusals. The "Extending PyTorch" recipe, ``gradcheck(LinearFunction.apply, ...)``, is a case.

Before this, ``engine.gradcheck`` checked one random projection of the first output only, and passed wherever a
gradient was NaN, so a backward that forgot a mask or a second output went unseen; and ``from torch.autograd
import gradcheck`` (the recipe's line) raised ImportError."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import engine
from engine.autograd.gradcheck import GradcheckError
from tests.engine.helpers import HAVE_TORCH


def _functions(lib):
    """name -> a Function class (or plain function) written once for both libraries."""
    Function = lib.autograd.Function

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0)

    class ForgotTheMask(MyReLU):
        @staticmethod
        def backward(ctx, g):
            return g.clone()

    class LinearFunction(Function):  # the "Extending PyTorch" page's
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class BiasTwice(LinearFunction):
        @staticmethod
        def backward(ctx, grad_output):
            gi, gw, gb = LinearFunction.backward(ctx, grad_output)
            return gi, gw, gb * 2

    class SplitHalves(Function):  # two outputs; the second's gradient is wrong
        @staticmethod
        def forward(ctx, x):
            return x[:2] * 2, x[2:] ** 2

        @staticmethod
        def backward(ctx, g1, g2):
            return lib.cat([g1 * 2, g2])

    class Noisy(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3 + lib.rand(g.shape, dtype=g.dtype) * 1e-3

    class IgnoresGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return lib.ones(3, dtype=lib.float64)  # right for g = 1 only

    class CubeOnce(Function):  # its backward is not itself recorded as a function of x
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    return {
        "relu": MyReLU.apply,
        "relu_forgot_mask": ForgotTheMask.apply,
        "linear": LinearFunction.apply,
        "linear_bias_twice": BiasTwice.apply,
        "split_halves": SplitHalves.apply,
        "noisy": Noisy.apply,
        "ignores_grad": IgnoresGrad.apply,
        "cube_once": CubeOnce.apply,
        "builtins": lambda a, b: (a.mm(b).tanh() ** 2, a.sum(1).exp()),
        "int_output": lambda a: (a * 2, a.long()),
        "detached_output": lambda a: (a * 2).detach(),  # depends on a, and says it does not
        "detached_but_depends": lambda a: (a * 2).detach() + a.detach(),
        "constant": lambda a: lib.ones(2, dtype=lib.float64),  # no output requires grad, and none depends on a
    }


def _inputs(lib, name):
    rng = np.random.default_rng(7)

    def t(*shape):
        return lib.tensor(rng.uniform(-1, 1, shape), dtype=lib.float64, requires_grad=True)

    if name in ("linear", "linear_bias_twice"):
        return (t(5, 4), t(3, 4), t(3))
    if name == "builtins":
        return (t(2, 3), t(3, 2))
    if name.startswith("relu"):
        x = rng.uniform(-1, 1, (2, 3))
        x[np.abs(x) < 0.05] = 0.5  # (no element within eps of the kink)
        return (lib.tensor(x, dtype=lib.float64, requires_grad=True),)
    return (t(4) if name == "split_halves" else t(3),)


CASES = [
    "relu", "relu_forgot_mask", "linear", "linear_bias_twice", "split_halves", "noisy", "ignores_grad",
    "cube_once", "builtins", "int_output", "detached_output", "detached_but_depends", "constant"]


def _verdict(lib, name, fast):
    fn = _functions(lib)[name]
    try:
        return lib.autograd.gradcheck(fn, _inputs(lib, name), fast_mode=fast)
    except Exception as e:  # noqa: BLE001 - the kind and first line are what is compared
        return type(e).__name__, str(e).splitlines()[0]


EXPECTED = {  # the verdicts PyTorch 2.13 gives (held to it below where torch is installed)
    "relu": True, "linear": True, "builtins": True, "int_output": True, "cube_once": True, "constant": True,
    "relu_forgot_mask": ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,"),
    "linear_bias_twice": ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 2,"),
    "split_halves": ("GradcheckError", "Jacobian mismatch for output 1 with respect to input 0,"),
    "noisy": ("GradcheckError", "Backward is not reentrant, i.e., running backward with same input and "
              "grad_output multiple times gives different values, although analytical gradient matches numerical "
              "gradient.The tolerance for nondeterminism was 0.0."),
    "ignores_grad": ("GradcheckError", "backward not multiplied by grad_output"),
    "detached_output": ("GradcheckError", "Numerical gradient for function expected to be zero"),
    "detached_but_depends": ("GradcheckError", "Numerical gradient for function expected to be zero"),
}


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name", CASES)
def test_the_verdict_is_pytorchs(name, fast, device):
    engine.set_default_device(device)
    try:
        got = _verdict(engine, name, fast)
    finally:
        engine.set_default_device("cpu")
    assert got == EXPECTED[name]


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference")
@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name", CASES)
def test_expected_verdicts_are_what_pytorch_says(name, fast):
    import torch

    assert _verdict(torch, name, fast) == EXPECTED[name]


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference")
@pytest.mark.parametrize("name", ["relu_forgot_mask", "linear_bias_twice", "split_halves"])
def test_the_message_shows_pytorchs_jacobians(name):
    import torch

    messages = []
    for lib in (engine, torch):
        with pytest.raises(Exception) as info:
            lib.autograd.gradcheck(_functions(lib)[name], _inputs(lib, name))
        messages.append(str(info.value).replace("torch.float64", "engine.float64"))
    mine, theirs = messages
    body, worst = mine.rstrip("\n").rsplit("\n", 1)  # a last line of the engine's own, naming the worst element
    # (the same Jacobians; "engine.float64" is a letter longer than "torch.float64", which can wrap a line)
    assert body.split() == theirs.split()
    assert re.fullmatch(r"The worst element: d output\[[\d, ]*\] / d input\[[\d, ]*\]: numerical \S+, analytical "
                        r"\S+\.", worst)


def test_the_worst_element_is_named():
    x = engine.tensor([[-1.0, 2.0], [0.5, -3.0]], dtype=engine.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        engine.autograd.gradcheck(_functions(engine)["relu_forgot_mask"], (x,))
    # d relu(x)[0, 0] / d x[0, 0] is 0 at x = -1; the forgotten mask passed 1
    assert str(info.value).endswith("The worst element: d output[0, 0] / d input[0, 0]: numerical 0, "
                                    "analytical 1.\n")
    assert engine.autograd.gradcheck(_functions(engine)["relu_forgot_mask"], (x,), raise_exception=False) is False


def test_the_tutorial_recipe_imports_and_passes():
    """The "Extending PyTorch" page: ``from torch.autograd import gradcheck`` on LinearFunction, 20x20 and 30x20."""
    from engine.autograd import gradcheck  # noqa: F401 - the recipe's import
    from engine.autograd.gradcheck import GradcheckError as Error

    assert Error is GradcheckError
    engine.manual_seed(0)
    inp = (engine.randn(20, 20, dtype=engine.double, requires_grad=True),
           engine.randn(30, 20, dtype=engine.double, requires_grad=True))
    assert gradcheck(_functions(engine)["linear"], inp, eps=1e-6, atol=1e-4)


def test_gradgradcheck_finds_a_backward_that_is_not_differentiable():
    x = engine.tensor([0.5, -1.0, 2.0], dtype=engine.float64, requires_grad=True)
    assert engine.autograd.gradgradcheck(lambda t: t ** 3, (x,))
    assert engine.autograd.gradgradcheck(lambda a, b: (a.mm(b).sigmoid(), a * b.sum()),
                                         (engine.rand(2, 3, dtype=engine.float64, requires_grad=True),
                                          engine.rand(3, 2, dtype=engine.float64, requires_grad=True)))
    # the backward's x.detach() cuts d(grad)/dx: the second derivative is missing
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        engine.autograd.gradgradcheck(_functions(engine)["cube_once"], (x,))
    assert engine.autograd.gradgradcheck(_functions(engine)["cube_once"], (x,), fast_mode=True,
                                         raise_exception=False) is False


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is the reference")
def test_gradgradcheck_verdicts_are_pytorchs():
    import torch

    for lib in (engine, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: t ** 3, (x,))
        assert not lib.autograd.gradgradcheck(_functions(lib)["cube_once"], (x,), raise_exception=False)
        assert lib.autograd.gradgradcheck(lambda t: t.sin(), (x,), gen_non_contig_grad_outputs=True)


def test_warnings_and_refusals_are_pytorchs():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert engine.autograd.gradcheck(engine.sin, (engine.ones(3, requires_grad=True),), atol=1e-2)
    assert [str(w.message) for w in caught] == [
        "Input #0 requires gradient and is not a double precision floating point or complex. This check will likely "
        "fail if all the inputs are not of double precision floating point or complex. "]
    with pytest.raises(ValueError, match="expects at least one input tensor to require gradient"):
        engine.autograd.gradcheck(engine.sin, (engine.ones(3, dtype=engine.float64),))
    expanded = engine.ones(1, dtype=engine.float64, requires_grad=True).expand(3)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        engine.autograd.gradcheck(engine.sin, (expanded,))
    with pytest.raises(ValueError, match="no forward-mode AD"):
        engine.autograd.gradcheck(engine.sin, (engine.ones(3, dtype=engine.float64, requires_grad=True),),
                                  check_forward_ad=True)
    with pytest.raises(ValueError, match="no vmap"):
        engine.autograd.gradcheck(engine.sin, (engine.ones(3, dtype=engine.float64, requires_grad=True),),
                                  check_batched_grad=True)


def test_a_transposed_input_is_perturbed_where_it_lives():
    """A non-contiguous input (a transpose): each element is perturbed in the input's own memory (a flat copy of
    it, which the old check made, changed nothing, and every numerical derivative came out 0)."""
    base = engine.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=engine.float64)
    x = base.t().requires_grad_()
    assert not x.is_contiguous()
    assert engine.autograd.gradcheck(lambda t: (t * t).sum(0), (x,))
    assert base.tolist() == (np.arange(6.0).reshape(2, 3) / 7).tolist()  # put back as it was
