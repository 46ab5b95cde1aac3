"""Every optimizer of PyTorch's OptimizerInfo database (``torch.testing._internal.common_optimizers.optim_db``: the
optimizers, settings, learning-rate schedules and error inputs PyTorch tests its optimizers with) against PyTorch
itself: from the same weights, each setting's steps (a closure's for LBFGS) must give PyTorch's weights after every
step, and the same state afterwards (momentum buffers, running averages, step counts); each schedule PyTorch pairs
with an optimizer the same learning rates; and PyTorch's error inputs (bad settings, bad parameter lists) must be
refused, or warned of, with PyTorch's exception type and words.

The same settings run on the GPU stand-in (or a GPU) against the engine's CPU, and in float32 against PyTorch
(to 2e-5; L-BFGS left out there: its twenty line-search iterations a step turn float32 rounding into 5e-2).
SparseAdam (sparse gradients, which the engine does not have) is left out.
"""

from __future__ import annotations

import re
import types
import warnings

import numpy as np
import pytest

import engine
from tests.engine import opinfo

if opinfo.OP_DB is None:
    pytest.skip(opinfo.SKIP_REASON, allow_module_level=True)

torch = opinfo.torch
pytestmark = pytest.mark.torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_optimizers import OptimizerErrorEnum
    from torch.testing._internal.common_optimizers import optim_db as OPTIM_DB

OPTIMS = [info for info in OPTIM_DB if info.optim_cls.__name__ != "SparseAdam"]
STEPS = 6
# L-BFGS's step is up to 20 iterations, and its small-lr runs drift apart from rounding (1.6e-14 after the first
# step, 1e-7 after the sixth: ill-conditioned, not a different formula); two steps are 40 iterations
STEPS_OF = {"LBFGS": 2}
# L-BFGS's H_diag once converged is y.s / y.y of gradients that differ in their last digits (|g| ~ 2e-5): rounding
# moves it by about 5e-7 of itself while the weights agree to 1e-15
STATE_TOLERANCE = {("LBFGS", "H_diag"): 1e-6}
TOLERANCE = 1e-10  # (float64: the same formulas in the same order agree to rounding)
TOLERANCE_OF = {"float32": 2e-5}  # (six float32 steps: a few roundings apart, up to 4e-7 of the weights seen)


def _label(info):
    return info.optim_cls.__name__


def _inputs(info, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return info.optim_inputs_func(device="cpu", dtype=getattr(torch, dtype))


def _cases(dtypes=("float64", "complex128", "float32")):
    out = []
    for info in OPTIMS:
        for dtype in dtypes:
            if (dtype == "complex128" and not info.supports_complex) or (dtype, _label(info)) == ("float32", "LBFGS"):
                continue  # (float32 L-BFGS: 20 line-search iterations a step turn float32 rounding into 5e-2)
            out.append(pytest.param(info, dtype, id=f"{_label(info)}-{dtype}"))
    return out


def _convert(value, memo):
    """A setting or a parameter list in the engine's terms: a torch tensor given twice one engine tensor twice (a
    duplicated parameter must stay a duplicate)."""
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            out = opinfo.convert(value, "cpu", False)
            memo[id(value)] = out.requires_grad_(True) if value.requires_grad else out
            if value.grad is not None:  # (a step's error input comes with its gradient)
                out.grad = opinfo.convert(value.grad, "cpu", False)
        return memo[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: _convert(v, memo) for k, v in value.items()}
    if isinstance(value, types.GeneratorType):
        return (_convert(v, memo) for v in value)
    return opinfo.convert(value, "cpu", False)


def _problem(lib, dtype, muon, device="cpu"):
    """Weights (a 3x2 matrix and, but for Muon, which takes matrices only, a bias), data and a loss: the same
    numbers in either library."""
    rng = np.random.default_rng(0)

    def draw(*shape, grad=False):
        a = rng.standard_normal(shape)
        a = a + 1j * rng.standard_normal(shape) if dtype == "complex128" else a.astype(dtype)
        return lib.tensor(a, device=device, requires_grad=grad)

    weight = draw(3, 2, grad=True)
    bias = None if muon else draw(3, grad=True)
    x, y = draw(5, 2), draw(5, 3)

    def loss():
        out = x @ weight.T + (0 if bias is None else bias)
        if dtype == "complex128":
            return ((out - y).abs() ** 2).sum() + (weight.abs() ** 4).sum() * 0.1
        return ((out.tanh() - y.tanh()) ** 2).sum() + (weight ** 4).sum() * 0.1

    return [p for p in (weight, bias) if p is not None], loss


def _host(value):
    if isinstance(value, torch.Tensor):
        return value.detach().resolve_conj().numpy()
    if isinstance(value, engine.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _train(lib, info, kwargs, dtype, schedules=(), steps=None, device="cpu"):
    """The weights after each step, the learning rates, and the state at the end (per weight: name -> array)."""
    params, loss_of = _problem(lib, dtype, _label(info) == "Muon", device)
    optim_cls = info.optim_cls if lib is torch else getattr(engine.optim, _label(info))
    opt = optim_cls(params, **kwargs)
    schedulers = [make(opt) for make in schedules]
    history, rates = [], []
    steps = steps or STEPS_OF.get(_label(info), STEPS)

    def closure():
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss

    for _ in range(steps):
        if info.step_requires_closure:
            loss = opt.step(closure)
        else:
            loss = closure()
            opt.step()
        for scheduler in schedulers:
            if type(scheduler).__name__ == "ReduceLROnPlateau":
                scheduler.step(float(loss))
            else:
                scheduler.step()
        history.append([_host(p).copy() for p in params])
        rates.append([float(group["lr"]) for group in opt.param_groups])
    state = [{k: _host(v) for k, v in opt.state[p].items() if not isinstance(v, (list, dict, type(None)))}
             for p in params]
    return history, rates, state


def _close(a, b, what, tol=TOLERANCE):
    if np.asarray(a).dtype == np.float32:
        tol = max(tol, TOLERANCE_OF["float32"])
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} in torch, {b.shape} in the engine"
    np.testing.assert_allclose(b.astype(complex), a.astype(complex), rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize(("info", "dtype"), _cases())
def test_each_setting_steps_to_pytorchs_weights_and_state(info, dtype):
    compared = 0
    for optim_input in _inputs(info, dtype):
        what = f"{_label(info)}({optim_input.desc or 'default'}: {optim_input.kwargs})"
        if optim_input.params is not None:
            pytest.fail(f"{what}: a parameter list of its own, which this test does not read")
        kwargs = dict(optim_input.kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = _train(torch, info, kwargs, dtype)
            ours = _train(engine, info, _convert(kwargs, {}), dtype)
        for step, (a, b) in enumerate(zip(theirs[0], ours[0])):
            for i, (x, y) in enumerate(zip(a, b)):
                _close(x, y, f"{what}: weight {i} after step {step + 1}")
        for i, (a, b) in enumerate(zip(theirs[2], ours[2])):
            assert sorted(a) == sorted(b), f"{what}: weight {i}'s state holds {sorted(a)} in torch, {sorted(b)}"
            for key in a:
                _close(a[key], b[key], f"{what}: weight {i}'s state {key!r}",
                       STATE_TOLERANCE.get((_label(info), key), TOLERANCE))
        compared += 1
    assert compared


@pytest.mark.parametrize(("info", "dtype"), _cases(("float64", "complex128")))
def test_each_setting_steps_on_the_device_as_on_the_cpu(info, dtype, cuda_device, request):
    """The engine's optimizers on the GPU stand-in (or a GPU) against its CPU: the same weights after each step and
    the same state (the device paths of the updates: CuPy's functions, the stand-in held to their contract)."""
    tol = 1e-12 if "cuda-sim" in request.node.callspec.id else 1e-9
    for optim_input in _inputs(info, dtype):
        what = f"{_label(info)}({optim_input.desc or 'default'})"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cpu = _train(engine, info, _convert(dict(optim_input.kwargs), {}), dtype)
            gpu = _train(engine, info, _convert(dict(optim_input.kwargs), {}), dtype, device="cuda")
        for step, (a, b) in enumerate(zip(cpu[0], gpu[0])):
            for i, (x, y) in enumerate(zip(a, b)):
                _close(x, y, f"{what}: weight {i} after step {step + 1}", tol)
        for i, (a, b) in enumerate(zip(cpu[2], gpu[2])):
            assert sorted(a) == sorted(b), f"{what}: weight {i}'s state holds {sorted(a)} on the CPU, {sorted(b)}"
            for key in a:
                _close(a[key], b[key], f"{what}: weight {i}'s state {key!r}",
                       max(tol, STATE_TOLERANCE.get((_label(info), key), 0.0)))


def _schedule_cases():
    out = []
    for info in OPTIMS:
        for k, schedules in enumerate(info.scheduler_inputs or ()):
            if schedules:
                out.append(pytest.param(info, k, id=f"{_label(info)}-{k}"))
    return out


def _in_engine(make):
    """A schedule's maker (``lambda opt: StepLR(opt, ...)``) with its schedule's name meaning the engine's."""
    names = dict(make.__globals__, **{n: getattr(engine.optim.lr_scheduler, n) for n in make.__code__.co_names
                                       if hasattr(engine.optim.lr_scheduler, n)})
    return types.FunctionType(make.__code__, names, make.__name__, make.__defaults__, make.__closure__)


@pytest.mark.parametrize(("info", "k"), _schedule_cases())
def test_the_schedules_pytorch_pairs_with_each_optimizer_give_its_learning_rates_and_weights(info, k):
    schedules = info.scheduler_inputs[k]
    kwargs = {"lr": 0.5} if _label(info) in ("SGD", "Adam", "ASGD", "Adagrad") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _train(torch, info, kwargs, "float64", schedules, steps=12)
        ours = _train(engine, info, kwargs, "float64", [_in_engine(m) for m in schedules], steps=12)
    for step, (a, b) in enumerate(zip(theirs[1], ours[1])):
        np.testing.assert_allclose(b, a, rtol=1e-12, err_msg=f"the learning rate after step {step + 1}")
    for i, (x, y) in enumerate(zip(theirs[0][-1], ours[0][-1])):
        _close(x, y, f"weight {i} after the last step")


def _error_cases():
    out = []
    for info in OPTIMS:
        if info.optim_error_inputs_func is not None:
            out.append(pytest.param(info, id=_label(info)))
    return out


def _outcome(lib, info, error_input):
    """What building the optimizer of ``error_input`` and one step (for a STEP_ERROR) does: (exception or warning,
    the step it came at), or (None, None)."""
    params, kwargs = error_input.params, dict(error_input.kwargs)
    if params is None:  # (a setting's error: one weight to hold)
        params = [torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64, requires_grad=True)]
    optim_cls = info.optim_cls
    if lib is engine:
        memo = {}
        params, kwargs = _convert(params, memo), _convert(kwargs, memo)
        optim_cls = getattr(engine.optim, _label(info))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            opt = optim_cls(params, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the refusal under test
            return exc, OptimizerErrorEnum.CONSTRUCTION_ERROR
        if caught:
            return caught[0].message, OptimizerErrorEnum.CONSTRUCTION_ERROR
        try:
            opt.step(lambda: 0.0) if info.step_requires_closure else opt.step()
        except Exception as exc:  # noqa: BLE001
            return exc, OptimizerErrorEnum.STEP_ERROR
        if caught:
            return caught[0].message, OptimizerErrorEnum.STEP_ERROR
    return None, None


def _fits(outcome, error):
    raised, stage = outcome
    return (raised is not None and stage == error.error_on and isinstance(raised, error.error_type)
            and re.search(error.error_regex, str(raised)) is not None)


@pytest.mark.parametrize("info", _error_cases())
def test_the_engine_refuses_pytorchs_error_inputs_as_pytorch_does(info):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors = info.optim_error_inputs_func(device="cpu", dtype=torch.float64)
    checked, differed = 0, []
    for k, error in enumerate(errors):
        if not _fits(_outcome(torch, info, error.optimizer_error_input), error):
            continue  # (the table's entry is not what PyTorch does on the CPU)
        ours = _outcome(engine, info, error.optimizer_error_input)
        checked += 1
        if not _fits(ours, error):
            got = "nothing" if ours[0] is None else f"{type(ours[0]).__name__} at {ours[1].name}: {ours[0]}"
            differed.append(f"error input {k} ({error.error_type.__name__} {error.error_regex!r}): the engine: "
                            f"{got}"[:300])
    assert not differed, "\n".join(differed)
    assert checked
