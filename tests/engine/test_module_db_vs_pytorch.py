"""Every module of PyTorch's ModuleInfo database (``torch.testing._internal.common_modules.module_db``: the table of
``nn`` modules, constructor settings and forward inputs PyTorch tests its modules with) against PyTorch itself: each
module built with PyTorch's settings, given PyTorch's weights, and called on PyTorch's inputs in training and in eval
mode must give PyTorch's outputs, the same gradients of a fixed weighting of them to the inputs and to every
parameter, and the same buffers afterwards (running statistics); and the same module must refuse PyTorch's error
inputs (``module_error_inputs_func``) with PyTorch's exception type.

What the engine does otherwise on purpose is listed below with the reason (KNOWN); an entry whose inputs all agree
fails, so the list cannot go stale.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
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
    from torch.testing._internal.common_modules import module_db as MODULE_DB

DTYPES = ("float64", "float32", "complex128", "float16", "complex64")
INPUTS = 40  # per module, dtype and mode, at most

# (module, dtype or None for every dtype) -> why the engine differs
KNOWN: dict = {}


def _cases():
    out = []
    for info in MODULE_DB:
        for dtype in DTYPES:
            if getattr(torch, dtype) not in info.supported_dtypes("cpu"):
                continue
            for training in (True, False):
                out.append(pytest.param(info, dtype, training,
                                        id=f"{info.name}-{dtype}-{'train' if training else 'eval'}"))
    return out


def _engine_class(info):
    return getattr(engine.nn, info.module_cls.__name__)


def _convert(value, memo=None):
    """A constructor's or forward's argument in the engine's terms; a tensor given twice (KLDivLoss's ``(x, x)``)
    one engine tensor twice, as its gradient is the sum of both uses."""
    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            memo[id(value)] = opinfo.convert(value, "cpu", True)
        return memo[id(value)]
    if isinstance(value, torch.nn.TransformerEncoderLayer):  # (TransformerEncoder's layer to copy)
        attn, lin = value.self_attn, value.linear1
        act = value.activation
        return engine.nn.TransformerEncoderLayer(
            attn.embed_dim, attn.num_heads, dim_feedforward=lin.out_features, dropout=value.dropout.p,
            activation=_convert(act) if not isinstance(act, torch.nn.Module) else _engine_class_of(act)(),
            layer_norm_eps=value.norm1.eps, batch_first=attn.batch_first, norm_first=value.norm_first,
            bias=lin.bias is not None, dtype=opinfo.convert(lin.weight.dtype, "cpu", False))
    if isinstance(value, torch.device):
        return str(value)
    if callable(value) and not isinstance(value, torch.nn.Module) and getattr(value, "__name__", None):
        for space in (engine.nn.functional, engine):
            if hasattr(space, value.__name__):
                return getattr(space, value.__name__)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        items = [_convert(v, memo) for v in value]
        return type(value)(items) if type(value) in (list, tuple) else tuple(items)
    if isinstance(value, dict):
        return {k: _convert(v, memo) for k, v in value.items()}
    return opinfo.convert(value, "cpu", True)


def _engine_class_of(module):
    return getattr(engine.nn, type(module).__name__)


def _compare(info, module_input, dtype, training):
    """None where the engine's module agrees with PyTorch's on ``module_input``, else what differs; "draws" where
    PyTorch's answer is drawn at random, "torch" where PyTorch refuses its own input."""
    args, kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
    try:
        torch.manual_seed(0)
        theirs = info.module_cls(*module_input.constructor_input.args, **module_input.constructor_input.kwargs)
        theirs.to(getattr(torch, dtype)).train(training)
        if info.is_lazy:  # (materialized by a first call, which the engine's makes too)
            with torch.no_grad():
                theirs(*_fresh((args, kwargs))[0], **_fresh((args, kwargs))[1])
        # the same module again from the same state: where its two answers differ it draws at random (dropout in
        # training, FractionalMaxPool's regions), and is not compared
        twin = copy.deepcopy(theirs)
        state = _state(theirs)
        torch.manual_seed(1)
        expected = _run(torch, theirs, args, kwargs)
        torch.manual_seed(2)
        again = _run(torch, twin, *_fresh((args, kwargs)))
    except Exception:  # noqa: BLE001 - PyTorch refusing its own input
        return "torch"
    if _difference(expected[0], again[0], "output"):
        return "draws"
    ours = _engine_class(info)(*_convert(tuple(module_input.constructor_input.args)),
                               **_convert(dict(module_input.constructor_input.kwargs)))
    ours.to(getattr(engine, dtype)).train(training)
    if info.is_lazy:
        with engine.no_grad():
            ours(*_convert(tuple(args)), **_convert(dict(kwargs)))
    ours.load_state_dict(state)
    memo = {}
    got = _run(engine, ours, _convert(tuple(args), memo), _convert(dict(kwargs), memo))
    problem = _difference(expected[0], got[0], "output")
    if problem is None and expected[1] is not None:
        problem = _difference(expected[1], got[1] or [], "gradient")
    if problem is None:
        names = sorted(expected[2])
        if names != sorted(got[2]):
            return f"buffers {names} in torch, {sorted(got[2])} in the engine"
        problem = _difference([expected[2][n] for n in names], [got[2][n] for n in names], "buffer")
    return problem


@pytest.mark.parametrize(("info", "dtype", "training"), _cases())
def test_the_engine_module_gives_pytorchs_outputs_gradients_and_buffers(info, dtype, training):
    known = any(k in KNOWN for k in ((info.name, None), (info.name, dtype)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype), requires_grad=True,
                                         training=training)[:INPUTS]
    compared, differed = 0, []
    for k, module_input in enumerate(inputs):
        if module_input.forward_input is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                problem = _compare(info, module_input, dtype, training)
            except opinfo.Unconvertible:
                continue
            except Exception as exc:  # noqa: BLE001 - the engine raising where PyTorch computes: a difference
                problem = f"{type(exc).__name__}: {exc}"
        if problem in ("draws", "torch"):
            continue
        if problem:
            differed.append(f"input {k} ({module_input.desc or 'default'}): {problem}"[:300])
        compared += 1
    if known:
        assert differed, f"every input agrees: take {info.name} off KNOWN"
        return
    assert not differed, "\n".join(differed[:5])
    if not compared:
        pytest.skip("no input both run (all drawn at random)")


def _engine_run(info, module_input, dtype, training, device, state):
    """The engine's module on ``device`` from ``state`` (the CPU's), run on the inputs moved there."""
    args, kwargs = module_input.forward_input.args, module_input.forward_input.kwargs
    module = _engine_class(info)(*_convert(tuple(module_input.constructor_input.args)),
                                 **_convert(dict(module_input.constructor_input.kwargs)))
    module.to(getattr(engine, dtype)).train(training)
    memo = {}
    args, kwargs = _convert(tuple(args), memo), _convert(dict(kwargs), memo)
    if info.is_lazy:
        with engine.no_grad():
            module(*args, **kwargs)
    module.load_state_dict(state)
    module.to(device)
    moved = {}

    def to(value):
        if isinstance(value, engine.Tensor):
            if id(value) not in moved:
                out = value.detach().to(device)
                moved[id(value)] = out.requires_grad_(value.requires_grad)
            return moved[id(value)]
        if isinstance(value, (list, tuple)):
            return type(value)(to(v) for v in value)
        if isinstance(value, dict):
            return {k: to(v) for k, v in value.items()}
        return value

    return _run(engine, module, to(args), to(kwargs))


@pytest.mark.parametrize(("info", "dtype", "training"),
                         [p for p in _cases() if p.values[1] in ("float64", "float32")])
def test_the_engine_module_on_the_device_gives_the_cpus_outputs_gradients_and_buffers(info, dtype, training,
                                                                                      cuda_device, request):
    """The same modules on the GPU stand-in (or a GPU) against the engine's CPU: the device paths of the modules'
    code (RNN loops, attention, the losses' index checks) driven by PyTorch's inputs."""
    tol = {"float64": 1e-9, "float32": 1e-4} if "cuda-sim" in request.node.callspec.id else {"float64": 1e-7,
                                                                                              "float32": 2e-3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = info.module_inputs_func(info, device="cpu", dtype=getattr(torch, dtype), requires_grad=True,
                                         training=training)[:INPUTS]
    compared = 0
    for k, module_input in enumerate(inputs):
        if module_input.forward_input is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            theirs = info.module_cls(*module_input.constructor_input.args, **module_input.constructor_input.kwargs)
            theirs.to(getattr(torch, dtype))
            if info.is_lazy:
                with torch.no_grad():
                    theirs(*_fresh((module_input.forward_input.args, module_input.forward_input.kwargs))[0])
            state = _state(theirs)
            engine.manual_seed(0)
            try:
                cpu = _engine_run(info, module_input, dtype, training, "cpu", state)
            except Exception:  # noqa: BLE001 - the CPU refusing is the sweep against PyTorch's subject
                continue
            engine.manual_seed(0)
            engine.cuda.manual_seed(0)
            gpu = _engine_run(info, module_input, dtype, training, "cuda", state)
        for what, a, b in (("output", cpu[0], gpu[0]), ("gradient", cpu[1] or [], gpu[1] or [])):
            assert len(a) == len(b), f"input {k}: {what}s: {len(a)} on the CPU, {len(b)} on the device"
            for i, (x, y) in enumerate(zip(a, b)):
                assert (x is None) == (y is None), f"input {k}: {what} {i} on one device only"
                if x is not None:
                    np.testing.assert_allclose(y, x, rtol=tol[dtype], atol=tol[dtype], equal_nan=True,
                                               err_msg=f"input {k} ({module_input.desc}): {what} {i}")
        assert sorted(cpu[2]) == sorted(gpu[2]), f"input {k}: buffers"
        for name in cpu[2]:
            np.testing.assert_allclose(gpu[2][name], cpu[2][name], rtol=tol[dtype], atol=tol[dtype],
                                       err_msg=f"input {k}: buffer {name}")
        compared += 1
    if not compared:
        pytest.skip("no input the engine's CPU path runs")


def _error_cases():
    out = []
    for info in MODULE_DB:
        if info.module_error_inputs_func is None:
            continue
        for training in (True, False):
            out.append(pytest.param(info, training, id=f"{info.name}-{'train' if training else 'eval'}"))
    return out


def _raise_from(lib, info, given, training, error_on):
    """The exception that building ``lib``'s module of ``given`` (a ModuleInput) or calling it raises, and at which
    of the two steps (a ModuleErrorEnum), or (None, None)."""
    args, kwargs = given.constructor_input.args, given.constructor_input.kwargs
    forward = given.forward_input  # (None where the constructor is what refuses)
    fargs, fkwargs = (forward.args, forward.kwargs) if forward is not None else ((), {})
    if lib is engine:
        args, kwargs, fargs, fkwargs = _convert(tuple(args)), _convert(dict(kwargs)), _convert(tuple(fargs)), \
            _convert(dict(fkwargs))
    try:
        module = (info.module_cls if lib is torch else _engine_class(info))(*args, **kwargs)
        module.to(lib.float64).train(training)
    except Exception as exc:  # noqa: BLE001 - the refusal under test
        return exc, type(error_on).CONSTRUCTION_ERROR
    try:
        if forward is not None:
            module(*fargs, **fkwargs)
    except Exception as exc:  # noqa: BLE001
        return exc, type(error_on).FORWARD_ERROR
    return None, None


@pytest.mark.parametrize(("info", "training"), _error_cases())
def test_the_engine_module_refuses_pytorchs_error_inputs_as_pytorch_does(info, training):
    """Where PyTorch's module refuses an input of its error table (a bad constructor setting or a bad forward
    input), the engine's refuses it at the same step, with the same exception type and words PyTorch's table
    asks for (``error_regex``)."""
    import re

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = info.module_error_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                               training=training)
    checked, differed = 0, []
    for k, error in enumerate(errors):
        given = error.module_error_input
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs, stage = _raise_from(torch, info, given, training, error.error_on)
            if not (isinstance(theirs, error.error_type) and stage == error.error_on
                    and re.search(error.error_regex, str(theirs))):
                continue  # (the table's entry is not what PyTorch does here: eps=0.0 in eval mode computes)
            ours, our_stage = _raise_from(engine, info, given, training, error.error_on)
        checked += 1
        where = f"error input {k} ({error.error_type.__name__} {error.error_regex!r})"
        if ours is None:
            differed.append(f"{where}: the engine computes")
        elif our_stage != stage or not isinstance(ours, error.error_type) or not re.search(error.error_regex,
                                                                                            str(ours)):
            differed.append(f"{where}: the engine's {type(ours).__name__} at {our_stage.name}: {ours}"[:300])
    assert not differed, "\n".join(differed)
    if not checked:
        pytest.skip("PyTorch refuses none of its error inputs in this mode")
