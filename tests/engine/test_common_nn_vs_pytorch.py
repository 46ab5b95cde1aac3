"""PyTorch's older table of module and loss tests (``torch.testing._internal.common_nn``: ``module_tests``,
``get_new_module_tests()`` and ``criterion_tests``, 282 settings: convolutions padded 'same' and 'valid', depthwise
and grouped, transposed; Fold and Unfold; pixel shuffles; EmbeddingBag; interpolation; every loss without a
batch dimension and without reduction) against PyTorch itself, as test_module_db_vs_pytorch.py does the newer one:
the engine's module (or the functional form PyTorch wraps in a module) with PyTorch's weights, on PyTorch's inputs,
must give PyTorch's outputs and the gradients of a fixed weighting of them to the float inputs and every parameter.

What the engine does otherwise on purpose is listed below (KNOWN, each with its reason); an entry that agrees
fails, so the list cannot go stale.
"""

from __future__ import annotations

import types
import warnings

import pytest

import engine
from tests.engine import opinfo

if opinfo.OP_DB is None:
    pytest.skip(opinfo.SKIP_REASON, allow_module_level=True)

from tests.engine.modulerun import difference as _difference  # noqa: E402
from tests.engine.modulerun import fresh as _fresh  # noqa: E402
from tests.engine.modulerun import run as _run  # noqa: E402
from tests.engine.modulerun import state as _state  # noqa: E402

torch = opinfo.torch
pytestmark = pytest.mark.torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal import common_nn

    TESTS = [dict(t, _criterion=False) for t in common_nn.module_tests + common_nn.get_new_module_tests()]
    TESTS += [dict(t, _criterion=True) for t in common_nn.criterion_tests]

# name -> why the engine differs
KNOWN = {
    "CrossMapLRN2d": "PyTorch's legacy (Lua) module, left out: its window always holds channel 0, and its backward "
                     "is not the gradient of its forward (torch.autograd.gradcheck fails on it)",
}
RANDOM = ("RReLU",)  # (drawn in training: the engine's generator is not PyTorch's)


def _name(test):
    if "fullname" in test:
        return test["fullname"]
    return test["module_name"] + ("_" + test["desc"] if test.get("desc") else "")


def _in_engine(value, memo):
    """A value a test's lambda closes over, in the engine's terms (a tensor, a lambda of torch calls, settings)."""
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            memo[id(value)] = opinfo.convert(value, "cpu", False)
        return memo[id(value)]
    if isinstance(value, types.FunctionType) and value.__module__.startswith("torch.testing"):  # (a test's own)
        return _engine_function(value, memo)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):  # (F.interpolate, F.gelu: by name)
        for space in (engine.nn.functional, engine):
            if hasattr(space, value.__name__):
                return getattr(space, value.__name__)
        raise opinfo.Unconvertible(value.__name__)
    if isinstance(value, dict):
        return {k: _in_engine(v, memo) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_in_engine(v, memo) for v in value)
    if isinstance(value, torch.dtype):
        return opinfo.convert(value, "cpu", False)
    return value


def _engine_function(fn, memo):
    """``fn`` (a lambda of ``torch``, ``F`` and ``nn`` calls) with those names meaning the engine's, the values it
    closes over converted."""
    names = dict(fn.__globals__, torch=engine, F=engine.nn.functional, nn=engine.nn)
    cells = tuple(types.CellType(_in_engine(c.cell_contents, memo)) for c in fn.__closure__ or ())
    out = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, cells or None)
    out.__kwdefaults__ = _in_engine(fn.__kwdefaults__, memo)
    return out


def _modules(test):
    """PyTorch's module of ``test`` and the engine's maker of the same."""
    args = test.get("constructor_args", ())
    if "module_name" in test and "constructor" not in test:
        theirs = getattr(torch.nn, test["module_name"])(*args)
        return theirs, lambda: getattr(engine.nn, test["module_name"])(*_in_engine(tuple(args), {}))
    maker = test["constructor"]
    theirs = maker(*args)
    if isinstance(maker, type) and maker.__name__ == "FunctionalModule":  # (a functional form wrapped in a module)
        free = dict(zip(maker.forward.__code__.co_freevars, (c.cell_contents for c in maker.forward.__closure__)))

        def ours():
            memo = {}
            fn, kwargs = _in_engine(free["fn"], memo), _in_engine(free["kwargs"], memo)

            class Functional(engine.nn.Module):
                def forward(self, *inputs):
                    return fn(*inputs, **kwargs)

            return Functional()

        return theirs, ours
    if isinstance(maker, type):
        return theirs, lambda: getattr(engine.nn, maker.__name__)(*_in_engine(tuple(args), {}))
    return theirs, lambda: _engine_function(maker, {})(*_in_engine(tuple(args), {}))


def _inputs(test):
    if "input_fn" in test:
        inp = test["input_fn"]()
    elif "input" in test:
        inp = test["input"]
    else:
        inp = torch.randn(test["input_size"], dtype=torch.float64)
    inputs = list(inp) if isinstance(inp, tuple) else [inp]
    if test["_criterion"]:
        if "target_fn" in test:
            inputs.append(test["target_fn"]())
        elif "target_size" in test:
            inputs.append(torch.randn(test["target_size"], dtype=torch.float64))
        elif "target" in test:
            inputs.append(test["target"])
    return [x.requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def _engine_inputs(inputs, memo):
    """The inputs in the engine's terms, those that need a gradient needing one."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            if id(x) not in memo:
                memo[id(x)] = opinfo.convert(x, "cpu", True)
            out.append(memo[id(x)])
        else:
            out.append(_in_engine(x, memo))
    return out


@pytest.mark.parametrize("test", TESTS, ids=[_name(t) for t in TESTS])
def test_the_engine_gives_pytorchs_outputs_and_gradients(test):
    name = _name(test)
    if name.startswith(RANDOM):
        pytest.skip("drawn at random in training")
    if name.endswith("_sparse"):
        pytest.skip("a sparse gradient: the engine has none (sparse=True is refused by name)")
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_default_dtype(test.get("default_dtype", torch.float64))  # (as PyTorch's test runs it)
        try:
            theirs, make_ours = _modules(test)
            theirs.to(torch.float64)
            inputs = _inputs(test)
            state = _state(theirs)
            expected = _run(torch, theirs, tuple(_fresh(inputs)), {})
        except Exception as exc:  # noqa: BLE001 - PyTorch refusing its own setting here
            pytest.skip(f"PyTorch's own run fails here: {exc}"[:200])
        finally:
            torch.set_default_dtype(default)
        try:
            ours = make_ours().to(engine.float64)
            ours.load_state_dict(state)
            memo = {}
            got = _run(engine, ours, tuple(_engine_inputs(inputs, memo)), {})
            problem = _difference(expected[0], got[0], "output")
            if problem is None and expected[1] is not None:
                problem = _difference(expected[1], got[1] or [], "gradient")
        except Exception as exc:  # noqa: BLE001 - the engine raising where PyTorch computes: a difference
            problem = f"{type(exc).__name__}: {exc}"
    if name in KNOWN:
        assert problem, f"{name} agrees: take it off KNOWN"
        return
    assert problem is None, problem
