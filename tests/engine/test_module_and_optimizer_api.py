"""The rest of ``nn.Module``'s and ``optim.Optimizer``'s API a training script of one's own calls:
``add_module``/``register_module``, ``get_submodule``/``set_submodule``/``get_parameter``/``get_buffer``,
``half``, ``type``, ``del module.weight``; ``add_param_group`` (fine-tuning an unfrozen layer at its own rate), the
step hooks and the state-dict hooks; each as PyTorch's, with its refusals."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import nn


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU())
    model.add_module("head", lib.nn.Linear(4, 2))
    model.register_module("norm", lib.nn.BatchNorm1d(2))
    return model


def test_submodules_by_name_and_path():
    model = _model(engine)
    assert list(dict(model.named_children())) == ["0", "1", "head", "norm"]
    assert model.get_submodule("head") is model.head and model.get_submodule("") is model
    assert model.get_parameter("head.weight") is model.head.weight
    assert model.get_buffer("norm.running_mean") is model.norm.running_mean
    model.set_submodule("head", nn.Linear(4, 2, bias=False))
    assert model.head.bias is None
    with pytest.raises(AttributeError, match="Sequential has no attribute `tail`"):
        model.get_submodule("tail")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        model.get_submodule("head.weight")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        model.get_parameter("norm.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        model.get_buffer("norm.weight")
    with pytest.raises(KeyError, match="t contain \".\", got: a.b"):
        model.add_module("a.b", nn.ReLU())
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        model.add_module("training", nn.ReLU())
    with pytest.raises(TypeError, match="builtins.int is not a Module subclass"):
        model.add_module("x", 3)
    del model.norm
    assert "norm" not in dict(model.named_children())


def test_half_and_type_cast_the_floating_tensors_only():
    model = _model(engine).half()
    assert {p.dtype for p in model.parameters()} == {engine.float16}
    assert model.norm.num_batches_tracked.dtype == engine.int64 and model.norm.running_mean.dtype == engine.float16
    assert {p.dtype for p in model.type(engine.float64).parameters()} == {engine.float64}
    with pytest.raises(TypeError, match="the engine has no bfloat16"):
        model.bfloat16()
    assert model.share_memory() is model


def _training(lib, hooks: bool):
    model = _model(lib).double()
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    for p in model[0].parameters():
        p.requires_grad_(False)  # (frozen first, then unfrozen into a group of its own)
    opt = lib.optim.SGD([p for n, p in model.named_parameters() if not n.startswith("0.")], lr=0.1, momentum=0.9)
    for p in model[0].parameters():
        p.requires_grad_(True)
    opt.add_param_group({"params": list(model[0].parameters()), "lr": 0.01})
    calls = []
    if hooks:
        opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", len(o.param_groups))))
        opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", args, kwargs)))
    x = lib.tensor(np.random.default_rng(0).standard_normal((8, 3)))
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    return [p.detach().numpy() for p in model.parameters()], groups, calls


@pytest.mark.torch
def test_an_added_parameter_group_trains_as_pytorchs():
    torch = pytest.importorskip("torch")
    ours, our_groups, calls = _training(engine, hooks=True)
    theirs, their_groups, _ = _training(torch, hooks=False)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert our_groups == their_groups
    assert calls == [("pre", 2), ("post", (), {})] * 3


def test_add_param_group_refuses_as_pytorch():
    w, v = engine.zeros(2, requires_grad=True), engine.zeros(2, requires_grad=True)
    opt = engine.optim.Adam([w])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError, match="ordering of tensors in sets will change between runs"):
        opt.add_param_group({"params": {v}})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        opt.add_param_group({"params": [v * 2]})
    opt.add_param_group({"params": v, "betas": (0.5, 0.6)})
    assert opt.param_groups[1]["lr"] == 0.001 and opt.param_groups[1]["betas"] == (0.5, 0.6)


def test_a_step_pre_hook_may_change_the_steps_arguments_and_hooks_come_off():
    w = engine.tensor([1.0], requires_grad=True)
    opt = engine.optim.SGD([w], lr=0.5)
    seen = []

    def closure():
        seen.append("closure")
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    handle = opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": closure}))
    assert opt.step().item() == 1.0 and seen == ["closure"] and w.item() == 0.0
    handle.remove()
    assert opt.step() is None


def test_state_dict_hooks_run_around_saving_and_loading():
    w = engine.tensor([1.0], requires_grad=True)
    opt = engine.optim.Adam([w], lr=0.1)
    w.grad = engine.tensor([1.0])
    opt.step()
    events = []
    opt.register_state_dict_pre_hook(lambda o: events.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "note": "kept"})
    saved = opt.state_dict()
    assert saved["note"] == "kept" and events == ["pre"]
    fresh = engine.optim.Adam([engine.tensor([1.0], requires_grad=True)], lr=0.5)
    fresh.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "note"})
    fresh.register_load_state_dict_post_hook(lambda o: events.append("loaded"))
    fresh.load_state_dict(saved)
    assert fresh.param_groups[0]["lr"] == 0.1 and events == ["pre", "loaded"]


class _MySGD(engine.optim.Optimizer):
    """The classic exercise: SGD with momentum written by hand, its buffer in ``self.state[p]``."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @engine.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]  # (an empty dict at the first look-up, as PyTorch's defaultdict)
                if "buf" not in state:
                    state["buf"] = engine.zeros_like(p)
                state["buf"].mul_(group["momentum"]).add_(p.grad)
                p.add_(state["buf"], alpha=-group["lr"])


def test_an_optimizer_of_ones_own_keeps_its_state_by_parameter_and_checkpoints(tmp_path):
    w = engine.tensor([1.0, -2.0], dtype=engine.float64, requires_grad=True)
    opt = _MySGD([w])
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    # by hand: g = 2w; buf = g1 then 0.9 g1 + g2
    w1 = np.array([1.0, -2.0]) * (1 - 0.2)
    buf = 0.9 * np.array([2.0, -4.0]) + 2 * w1
    np.testing.assert_allclose(w.detach().numpy(), w1 - 0.1 * buf, rtol=1e-14)
    assert list(opt.state) == [w] and isinstance(opt.state[w]["buf"], engine.Tensor)
    engine.save(opt.state_dict(), tmp_path / "opt.pt")
    fresh = _MySGD([engine.zeros(2, dtype=engine.float64, requires_grad=True)])
    fresh.load_state_dict(engine.load(tmp_path / "opt.pt"))
    (p,) = fresh.param_groups[0]["params"]
    assert isinstance(fresh.state[p]["buf"], engine.Tensor)
    np.testing.assert_allclose(fresh.state[p]["buf"].numpy(), buf, rtol=1e-14)
    adam = engine.optim.Adam([w])
    w.grad = engine.ones(2, dtype=engine.float64)
    adam.step()
    assert sorted(adam.state[w]) == ["exp_avg", "exp_avg_sq", "step"]  # (the engine's own: keyed by the parameter)


def _with_extra(lib):
    class WithExtra(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.count = 3

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

    return lib.nn.Sequential(WithExtra(), lib.nn.BatchNorm1d(2))


@pytest.mark.torch
def test_state_dict_extra_state_prefix_and_hooks_are_pytorchs():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, engine):
        model = _with_extra(lib)
        calls = []
        note = calls.append
        model[1].register_state_dict_pre_hook(lambda m, prefix, keep_vars, note=note: note(("pre", prefix, keep_vars)))
        model.register_state_dict_post_hook(lambda m, sd, prefix, meta, note=note: note(("post", prefix, len(sd))))
        keys = list(model.state_dict(prefix="model.", keep_vars=True))
        sd = model.state_dict()
        fresh = _with_extra(lib)
        fresh[0].count = 0
        fresh.register_load_state_dict_post_hook(lambda m, incompatible: incompatible.missing_keys.clear())
        del sd["1.running_var"]
        result = fresh.load_state_dict(sd)  # (the post-hook forgives the missing key: strict loading passes)
        results.append((keys, calls, fresh[0].count, list(result.missing_keys), list(result.unexpected_keys)))
    assert results[0] == results[1]
    assert results[1][2] == 3 and results[1][0][0] == "model.0._extra_state"


def test_a_load_pre_hook_renames_an_old_checkpoints_entries_and_assign_takes_the_tensors():
    lin = nn.Linear(2, 2)

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    lin.register_load_state_dict_pre_hook(rename)
    lin.load_state_dict({"w": engine.ones(2, 2), "bias": engine.zeros(2)})
    assert lin.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    new = {"weight": engine.full((2, 2), 5.0), "bias": engine.zeros(2)}
    lin.load_state_dict(new, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad and lin.weight.tolist() == [[5.0] * 2] * 2
    new["weight"].fill_(7.0)
    assert lin.weight.tolist() == [[7.0] * 2] * 2  # (assigned: the same memory, not a copy)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        lin.load_state_dict([1, 2])


def test_a_parameters_or_childs_name_takes_only_its_kind_or_none():
    """PyTorch's refusals: a plain tensor set as a weight would leave the optimizer's parameter untouched."""
    m = engine.nn.Linear(3, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight' "
                                        r"\(torch.nn.Parameter or None expected\)"):
        m.weight = engine.ones(2, 3)
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'bias'"):
        m.bias = 3
    assert isinstance(m.weight, engine.nn.Parameter) and len(list(m.parameters())) == 2
    m.bias = None
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    seq = engine.nn.Sequential(engine.nn.Linear(1, 1), engine.nn.ReLU())
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module '1' \(torch.nn.Module or None "
                                        r"expected\)"):
        setattr(seq, "1", 3)
    with pytest.raises(IndexError, match="^index 5 is out of range$"):
        seq[5]
    assert isinstance(seq[-1], engine.nn.ReLU)


@pytest.mark.parametrize(("name", "param", "error", "message"), [
    ("a.b", None, KeyError, "parameter name can.{1,2}t contain"),  # (a KeyError's text is its repr)
    ("", None, KeyError, "parameter name can.{1,2}t be empty string"),
    ("training", None, KeyError, "attribute 'training' already exists"),
    (3, None, TypeError, "parameter name should be a string. Got int"),
    ("q", "tensor", TypeError, r"cannot assign 'torch.FloatTensor' object to parameter 'q' \(torch.nn.Parameter or "
                               r"None required\)"),
])
def test_register_parameter_checks_as_pytorch(name, param, error, message):
    m = engine.nn.Linear(3, 2)
    with pytest.raises(error, match=message):
        m.register_parameter(name, engine.ones(2) if param == "tensor" else param)
    assert sorted(m._parameters) == ["bias", "weight"]


def test_register_parameter_takes_a_parameter_or_none():
    m = engine.nn.Linear(3, 2)
    m.register_parameter("scale", engine.nn.Parameter(engine.ones(2)))
    m.register_parameter("bias", None)
    assert [n for n, _ in m.named_parameters()] == ["weight", "scale"]


@pytest.mark.parametrize("make", [engine.optim.SGD, engine.optim.Adam, engine.optim.RMSprop, engine.optim.Adagrad])
def test_a_negative_weight_decay_is_refused(make):
    with pytest.raises(ValueError, match="Invalid weight_decay value: -1"):
        make([engine.nn.Parameter(engine.ones(2))], lr=0.1, weight_decay=-1)


@pytest.mark.parametrize(("code", "error", "message"), [
    ("engine.empty(3).normal_(std=-1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("engine.nn.init.normal_(engine.empty(3), std=-1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("engine.empty(3).uniform_(2, 1)", RuntimeError, "uniform_ expects to return a [from, to) range, but found "
                                                     "from=2 > to=1"),
    ("engine.nn.init.uniform_(engine.empty(3), 2, 1)", RuntimeError, "uniform_ expects to return a [from, to) "
                                                                      "range, but found from=2 > to=1"),
    ("engine.empty(3, dtype=engine.long).normal_()", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("engine.nn.init.uniform_(engine.empty(3, dtype=engine.long))", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("engine.nn.init.kaiming_normal_(engine.empty(3, 4), mode='bad')", ValueError,
     "Mode bad not supported, please use one of ['fan_in', 'fan_out']"),
    ("engine.nn.init._calculate_fan_in_and_fan_out(engine.empty(3))", ValueError,
     "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"),
])
def test_random_fills_refuse_as_pytorch(code, error, message):
    """A negative std, a reversed range or an integer tensor drawn into refuse (the engine filled them: flipped
    or NaN-free garbage, truncated integers), in PyTorch 2.13's words."""
    with pytest.raises(error) as refusal:
        eval(code, {"engine": engine})  # noqa: S307 - the table's own expressions
    assert str(refusal.value) == message


def test_the_fan_in_and_out_as_scripts_ask_for_them():
    """``init._calculate_fan_in_and_fan_out``: PyTorch's private name, which scripts' own ``reset_parameters``
    call (``nn.Linear``'s copy of it does)."""
    fans = engine.nn.init._calculate_fan_in_and_fan_out
    assert fans(engine.empty(3, 4)) == (4, 3) and fans(engine.empty(2, 3, 4, 5)) == (60, 40)
    assert engine.empty(3).uniform_(1, 1).tolist() == [1.0, 1.0, 1.0]
    assert engine.empty(3).normal_(std=0).tolist() == [0.0, 0.0, 0.0]


OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}),
              ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}), ("Adagrad", {"lr": 0.1}),
              ("Adamax", {"lr": 0.1}), ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1}), ("Adadelta", {"lr": 1.0}),
              ("Rprop", {"lr": 0.1}), ("ASGD", {"lr": 0.1}), ("Adafactor", {"lr": 0.1}), ("Muon", {"lr": 0.1})]


def _state_after_two_steps(L, name, kwargs, meddle):  # noqa: N803
    p = L.nn.Parameter(L.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3), dtype=L.float32))
    opt = getattr(L.optim, name)([p], **kwargs)
    for step in range(3):
        p.grad = L.tensor(np.cos(np.arange(6.0) + step).reshape(2, 3), dtype=L.float32)
        opt.step()
        if step == 0 and meddle:
            for state in opt.state.values():  # (the idiom that moves a loaded optimizer's state to a device)
                for key, value in state.items():
                    if isinstance(value, L.Tensor) and value.dim():
                        state[key] = value.to("cpu")
                        value.mul_(0.5)  # (in place: the optimizer sees it)
    state = opt.state[p]
    shown = {k: (type(v).__name__, str(v.dtype).split(".")[-1] if isinstance(v, L.Tensor) else None,
                 np.asarray(v.tolist() if isinstance(v, L.Tensor) else v, dtype=np.float64)) for k, v in state.items()}
    return shown, p.detach().numpy()


@pytest.mark.torch
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_state_holds_tensors_as_pytorchs(name, kwargs):
    """``optimizer.state[p]``: the engine's optimizers keep raw arrays for speed, shown as Tensors on the same
    memory (and the step count a 0-d float32 Tensor), as PyTorch's; what a script does to them in place reaches
    the next step."""
    torch = pytest.importorskip("torch")
    for meddle in (False, True):
        (ours, our_p), (theirs, their_p) = (_state_after_two_steps(L, name, kwargs, meddle) for L in (engine, torch))
        assert sorted(ours) == sorted(theirs)
        for key in theirs:
            assert ours[key][:2] == theirs[key][:2], (key, ours[key][:2], theirs[key][:2])
            np.testing.assert_allclose(ours[key][2], theirs[key][2], rtol=1e-5, atol=1e-6, err_msg=key)
        np.testing.assert_allclose(our_p, their_p, rtol=1e-5, atol=1e-6)
