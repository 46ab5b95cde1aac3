"""A learner's own script, run in a child process and watched: steps, prints, errors, control, exit codes."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import engine
from app import script_child
from app.script_run import ScriptError, ScriptRun, check_script, wait_for_end
from main import main

TRAIN = """
import torch
torch.manual_seed(0)
x = torch.randn(16, 8)
y = torch.randn(16, 2)
w = torch.randn(8, 2, requires_grad=True)
for t in range({steps}):
    loss = (x.mm(w) - y).pow(2).sum()
    print("loss", repr(loss.item()))
    loss.backward()
    with torch.no_grad():
        w -= 1e-3 * w.grad
        w.grad = None
{after}
"""


def script(tmp_path, body: str, name: str = "train.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def run_to_end(path, timeout=60):
    run = ScriptRun(path)
    run.start()
    printed = []
    wait_for_end(run, lambda kind, text: printed.append((kind, text)), timeout=timeout)
    return run, "".join(t for k, t in printed if k == "out"), "".join(t for k, t in printed if k == "err")


def printed_losses(out: str) -> list[float]:
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith("loss ")]


def test_each_backward_is_a_step_whose_loss_is_what_the_script_printed(tmp_path):
    run, out, err = run_to_end(script(tmp_path, TRAIN.format(steps=30, after="")))
    assert run.status() == ("done", "done: 30 steps") and err == ""
    np.testing.assert_array_equal(run.log.loss, printed_losses(out))  # bit for bit: repr round-trips
    np.testing.assert_array_equal(run.log.step, np.arange(30))
    assert np.all(np.diff(run.log.elapsed_s) >= 0) and np.all(run.log.step_ms >= 0)
    result = run.result()
    assert result.config is None and result.extra["script"].endswith("train.py") and run.device == "cpu"


def test_import_torch_and_import_engine_as_torch_are_the_engine(tmp_path):
    body = """
    import torch, engine
    import torch.nn as nn
    assert torch is engine and nn is engine.nn
    w = torch.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    print(w.grad.tolist())
    """
    run, out, _ = run_to_end(script(tmp_path, body))
    assert run.status()[0] == "done" and len(run.log) == 1 and out.strip() == "[3.0, 3.0]"


def test_a_script_without_backward_is_stepped_by_its_item_calls(tmp_path):
    body = """
    import torch
    w = torch.ones(3)
    for t in range(5):
        loss = (w * (t + 1)).sum()
        print("loss", repr(loss.item()))
    """
    run, out, _ = run_to_end(script(tmp_path, body))
    assert len(run.log) == 5 and list(run.log.loss) == printed_losses(out) == [3.0, 6.0, 9.0, 12.0, 15.0]


def test_a_script_with_no_tensor_is_stepped_by_its_print_t_loss_lines(tmp_path):
    """The NumPy warm-up's only word of its loss is print(t, loss): those lines are its steps, numbered by t
    (every tenth iteration here), their milliseconds per iteration; other prints are not steps."""
    body = """
    import numpy as np
    print("start", 1.5)
    print(3, 2.5, "three")
    w = np.float32(4.0)
    for t in range(50):
        w = w * np.float32(0.9)
        if t % 10 == 9:
            print(t, np.square(w))
    print(True, 1.0)
    print(99, 1.0, file=__import__("sys").stderr)
    """
    run, out, err = run_to_end(script(tmp_path, body))
    assert run.status() == ("done", "done: 5 steps")
    np.testing.assert_array_equal(run.log.step, [9, 19, 29, 39, 49])
    expected = [float(np.square(np.float32(4.0) * np.float32(0.9) ** (t + 1))) for t in (9, 19, 29, 39, 49)]
    np.testing.assert_allclose(run.log.loss, expected, rtol=1e-6)
    np.testing.assert_allclose(run.log.step_ms[1:], np.diff(run.log.elapsed_s) * 1e3 / 10, rtol=1e-9)
    assert out.splitlines()[:2] == ["start 1.5", "3 2.5 three"] and err == "99 1.0\n"  # printed as ever


def test_a_tensor_script_printing_t_and_its_item_is_one_step_per_iteration(tmp_path):
    body = """
    import torch
    w = torch.ones(3)
    for t in range(4):
        print(t, (w * (t + 1)).sum().item())
    print(10, 7.0)  # after an .item() step, a print is only a print
    """
    run, _, _ = run_to_end(script(tmp_path, body))
    assert list(run.log.step) == [0, 1, 2, 3] and list(run.log.loss) == [3.0, 6.0, 9.0, 12.0]


def test_a_script_that_raises_mid_run_keeps_its_steps_and_says_why(tmp_path):
    run, out, err = run_to_end(script(tmp_path, TRAIN.format(steps=7, after="raise ValueError('bad data')")))
    status, message = run.status()
    assert status == "failed" and "raised after 7 steps: ValueError: bad data" in message
    assert len(run.log) == 7
    assert err.startswith("Traceback (most recent call last):") and "train.py\", line 14" in err
    assert "script_child" not in err and "runpy" not in err  # the learner's frames only


def _stop_a_script_that_loops_for_ever(tmp_path) -> float:
    """Seconds from Stop to the run's end, for a script looping without a step; the log is checked kept."""
    body = TRAIN.format(steps=5, after="while True:\n    pass")
    run = ScriptRun(script(tmp_path, body))
    run.start()
    deadline = time.monotonic() + 30
    while len(run.log) < 5 and time.monotonic() < deadline:
        run.poll(0.1)
    assert len(run.log) == 5
    started = time.monotonic()
    run.stop()  # it never reaches another step: asked, then terminated
    wait_for_end(run, lambda *_: None, timeout=10)
    assert run.status() == ("stopped", "stopped after 5 steps") and len(run.log) == 5
    return time.monotonic() - started


def test_a_script_that_loops_for_ever_is_stopped_and_keeps_its_log(tmp_path):
    assert _stop_a_script_that_loops_for_ever(tmp_path) < 5.0  # a busy machine: the second is checked below


@pytest.mark.timing
def test_a_script_that_loops_for_ever_is_stopped_within_a_second(tmp_path):
    assert _stop_a_script_that_loops_for_ever(tmp_path) < 1.0  # asked, 0.3 s; terminated, at most 0.5 s more


def test_pause_step_and_resume_count_steps_exactly(tmp_path):
    run = ScriptRun(script(tmp_path, TRAIN.format(steps=200, after="")))
    run.start()
    run.pause()  # it waits at its next step
    deadline = time.monotonic() + 30

    def settle():
        """Poll until a step has come (the script's start, its engine imported, can take longer than the quiet
        period on a busy machine) and then none for 0.5 s; the step count then."""
        while not len(run.log) and time.monotonic() < deadline:
            run.poll(0.05)
        last, quiet = len(run.log), time.monotonic()
        while time.monotonic() - quiet < 0.5 and time.monotonic() < deadline:
            run.poll(0.05)
            if len(run.log) != last:
                last, quiet = len(run.log), time.monotonic()
        return last

    paused_at = settle()
    assert 1 <= paused_at < 200 and run.is_paused()
    run.step()
    assert settle() == paused_at + 1
    run.step()
    run.step()
    assert settle() == paused_at + 3
    run.resume()
    wait_for_end(run, lambda *_: None, timeout=30)
    assert run.status() == ("done", "done: 200 steps")


@pytest.mark.parametrize("body, words", [
    (None, "no such file"),
    ("def broken(:\n", "is not a Python program this app can run: invalid syntax (line 1)"),
    ("\x00\x01binary", "is not a Python program this app can run"),
])
def test_a_script_that_cannot_run_is_refused_before_it_starts(tmp_path, body, words):
    path = tmp_path / "s.py"
    if body is not None:
        path.write_bytes(body.encode("latin-1"))
    with pytest.raises(ScriptError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_script(path)


def test_headless_exit_codes_and_export(tmp_path, capsys):
    good = script(tmp_path, TRAIN.format(steps=12, after=""))
    log = tmp_path / "log.json"
    assert main(["--headless", "--script", str(good), "--export", str(log)]) == 0
    out = capsys.readouterr().out
    assert "done: 12 steps, final loss" in out and "(script train.py on cpu)" in out
    saved = json.loads(log.read_text())
    assert saved["steps"] == 12 and saved["config"] is None and saved["loss"] == printed_losses(out)

    assert main(["--headless", "--script", str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err.strip() == f"main.py: error: {tmp_path / 'missing.py'}: no such file"
    silent = script(tmp_path, "print('hello')\n", "silent.py")
    assert main(["--headless", "--script", str(silent)]) == 2
    assert "never called backward()" in capsys.readouterr().err
    early = script(tmp_path, "import torch\nraise RuntimeError('at import')\n", "early.py")
    assert main(["--headless", "--script", str(early)]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: at import" in err and "raised before its first step" in err
    late = script(tmp_path, TRAIN.format(steps=3, after="raise KeyError('late')"), "late.py")
    assert main(["--headless", "--script", str(late)]) == 1
    assert "raised after 3 steps: KeyError" in capsys.readouterr().err


def test_the_examples_run_on_the_engine():
    from app.examples import examples

    found = dict((title, path) for title, path in examples())
    assert len(found) == 17
    for title, path in found.items():
        run, out, err = run_to_end(path, timeout=120)
        assert run.status()[0] == "done", (title, err[-500:])
        assert run.log.loss[-1] < run.log.loss[0]  # it learns
        if "NumPy" in title:  # stepped by its print(t, loss): 500 steps, the losses it printed
            assert len(run.log) == 500 and run.log.step[-1] == 499
            np.testing.assert_array_equal(run.log.loss, [float(line.split()[1]) for line in out.splitlines()])


# ---------------------------------------------------------------------------- the gradient check of a script

CUSTOM = """
import torch
torch.manual_seed(1)

class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        {mask}
        return grad_input

x = torch.randn(32, 20, dtype=torch.{dtype})
y = torch.randn(32, 3, dtype=torch.{dtype})
w1 = torch.randn(20, 16, dtype=torch.{dtype}, requires_grad=True)
w2 = torch.randn(16, 3, dtype=torch.{dtype}, requires_grad=True)
for t in range(400):
    loss = (MyReLU.apply(x.mm(w1)).mm(w2) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w1 -= 1e-4 * w1.grad
        w2 -= 1e-4 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
"""


def check_at(path, after_steps=3):
    from app.gradients import script_report

    run = ScriptRun(path)
    run.start()
    deadline = time.monotonic() + 60
    while len(run.log) < after_steps and time.monotonic() < deadline:
        run.poll(0.05)
    run.check()
    event = None
    while event is None and time.monotonic() < deadline:
        event = next((v for k, v in run.poll(0.1) if k == "check"), None)
    run.stop()
    wait_for_end(run, lambda *_: None, timeout=10)
    assert event is not None
    return event, (script_report(event, "test") if event["t"] == "check" else None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_scripts_correct_gradients_are_graded_good_and_a_wrong_backward_bad(tmp_path, dtype):
    right = script(tmp_path, CUSTOM.format(mask="grad_input[input < 0] = 0", dtype=dtype), "right.py")
    event, report = check_at(right)
    assert report.params == ("w1 (20×16)", "w2 (16×3)") and report.pairs == (("autograd", "numerical"),)
    assert report.dtype == dtype and report.worst_grade() != "bad", report.table()
    probed = report.sampled["w1 (20×16)"]
    assert probed == 320  # every element of a small leaf
    wrong = script(tmp_path, CUSTOM.format(mask="pass  # the ReLU mask forgotten", dtype=dtype), "wrong.py")
    _, report = check_at(wrong)
    grades = {param: report.stats[(param, ("autograd", "numerical"))].grade(report.dtype) for param in report.params}
    assert grades == {"w1 (20×16)": "bad", "w2 (16×3)": report.stats[
        ("w2 (16×3)", ("autograd", "numerical"))].grade(report.dtype)}
    assert grades["w2 (16×3)"] != "bad"  # w2 does not pass through the ReLU


COMPLEX = """
import torch
torch.manual_seed(2)

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        z, = ctx.saved_tensors
        return g * 2 * {factor}

w = torch.randn(6, dtype=torch.cdouble, requires_grad=True)
x = torch.randn(16, 6, dtype=torch.cdouble)
y = torch.randn(16, dtype=torch.cdouble)
for t in range(100000):
    loss = (x @ Square.apply(w) - y).abs().pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 1e-4 * w.grad
        w.grad.zero_()
"""


def test_a_complex_leaf_is_checked_by_its_real_and_imaginary_parts_and_a_missing_conjugate_found(tmp_path):
    right = script(tmp_path, COMPLEX.format(factor="z.conj()"), "right.py")
    event, report = check_at(right)
    assert report.params == ("w (6 complex: real, imaginary)",) and report.dtype == "float64"
    assert event["leaves"][0]["shape"] == [6, 2] and report.worst_grade() != "bad", report.table()
    wrong = script(tmp_path, COMPLEX.format(factor="z  # the conjugate forgotten"), "wrong.py")
    _, report = check_at(wrong)
    assert report.worst_grade() == "bad", report.table()


def test_a_write_into_a_tensor_made_outside_the_graph_is_replayed():
    """The spectral example writes its weighted modes into zeros_like(...) (an in-place write the tape records as
    an op on a tensor no op made): the check follows the write, and grades the complex weights' gradient."""
    event, report = check_at("app/examples/spectral_heat.py")
    assert event["t"] == "check", event
    assert report.params == ("model.weight (12 complex: real, imaginary)",)
    assert report.worst_grade() != "bad", report.table()


def test_a_step_the_tape_cannot_replay_is_said_not_graded(tmp_path):
    body = """
    import torch
    x = torch.randn(8, 4)
    w = torch.randn(4, 2, requires_grad=True)
    for t in range(100000):
        h = x.mm(w)
        h.data.mul_(2)  # changed behind autograd's back: the recorded step no longer gives this loss
        loss = h.pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w -= 1e-4 * w.grad
            w.grad = None
    """
    event, report = check_at(script(tmp_path, body))
    assert event["t"] == "check_failed" and "could not be replayed" in event["why"] and report is None
    items = script(tmp_path, "import torch\nw = torch.ones(3)\nt = 0\nwhile True:\n    t += 1\n"
                             "    print((w * t).sum().item())\n", "items.py")
    event, _ = check_at(items)
    assert event["t"] == "check_failed" and "calls no backward()" in event["why"]


def test_a_process_the_script_leaves_running_does_not_hold_the_run_open(tmp_path):
    body = TRAIN.format(steps=3, after="import subprocess, sys\n"
                        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(15)'])  # keeps stdout open")
    started = time.monotonic()
    run, _, _ = run_to_end(script(tmp_path, body), timeout=30)
    assert run.status() == ("done", "done: 3 steps") and time.monotonic() - started < 12  # not the 15 s sleep


@pytest.mark.parametrize("planted", [False, True])
def test_the_script_check_never_alarms_on_correct_gradients_and_always_on_the_planted_bug(planted):
    """In process, step by step (the child does the same at the step it is asked for). Step 227 of this net once
    raised a false alarm: both central differences straddled a ReLU's kink, so their difference looked small;
    a third step (h/4) shows that halving the step no longer quarters the error there."""
    import engine
    from app import script_check
    from app.gradients import script_report

    engine.manual_seed(1)

    class MyReLU(engine.autograd.Function):
        @staticmethod
        def forward(ctx, input):  # noqa: A002
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors  # noqa: A001
            grad_input = grad_output.clone()
            if not planted:
                grad_input[input < 0] = 0
            return grad_input

    f64 = engine.float64
    x, y = engine.randn(32, 20, dtype=f64), engine.randn(32, 3, dtype=f64)
    w1 = engine.randn(20, 16, dtype=f64, requires_grad=True)
    w2 = engine.randn(16, 3, dtype=f64, requires_grad=True)
    tape = script_check.Tape(engine)
    w1_grades = []
    for t in range(232):
        checked = t >= 200 or t % 20 == 0
        if checked:
            tape.install()
        loss = (MyReLU.apply(x.mm(w1)).mm(w2) - y).pow(2).sum()
        if checked:
            tape.recording = False
            report = script_report(script_check.check(engine, tape, loss, t), "test")
            tape.remove()
            w1_grades.append(report.stats[(report.params[0], ("autograd", "numerical"))].grade("float64"))
        loss.backward()
        with engine.no_grad():
            w1 -= 1e-4 * w1.grad
            w2 -= 1e-4 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    assert len(w1_grades) == 42  # steps 0, 20, ..., 180 and 200 to 231 (227 among them)
    assert set(w1_grades) == ({"bad"} if planted else set(w1_grades) - {"bad"})
    assert ("bad" in w1_grades) == planted


# ----------------------------------------------------------------------------- beyond the engine

def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is what is looked at
        return exc
    raise AssertionError("it did not raise")


class _OwnNet(engine.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = engine.nn.Linear(2, 1)


def _sgd():
    return engine.optim.SGD([engine.zeros(1, requires_grad=True)], lr=0.1)


BEYOND = [  # (what raises, the PyTorch name it lacks, or None for a script's own mistake)
    (lambda: engine.zeros(8).to_sparse(), "torch.Tensor.to_sparse"),
    (lambda: engine.nn.SyncBatchNorm, "torch.nn.SyncBatchNorm"),
    (lambda: engine.nn.functional.conv_tbc, "torch.nn.functional.conv_tbc"),
    (lambda: engine.nn.Linear(2, 1).xpu, "torch.nn.Module.xpu"),
    (lambda: _OwnNet().xpu, "torch.nn.Module.xpu"),  # its own
    (lambda: _sgd().profile_hook_step, "torch.optim.Optimizer.profile_hook_step"),
    (lambda: engine.lobpcg, "torch.lobpcg"),
    (lambda: _OwnNet().lin, None),  # misspelt: PyTorch has no such name either
    (lambda: engine.nn.Linear(2, 1).wieght, None),
    (lambda: engine.zeros(1).bakward, None),
    (lambda: [].std, None),  # not the engine's object
    (lambda: __import__("torch.utlis"), None),
    (lambda: __import__("numpyy"), None),
]


@pytest.mark.parametrize("make, expected", BEYOND, ids=[str(e) if e else f"own mistake {i}" for i, (_, e) in
                                                        enumerate(BEYOND)])
def test_a_part_of_pytorch_the_engine_has_not_is_named_and_a_typo_is_not(make, expected, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", engine)  # as in the script's process
    hint = script_child.beyond_the_engine(_raised(make))
    if expected is None:
        assert hint is None
    else:
        assert hint == (f"{expected} is PyTorch's but not the engine's: gradscope's engine has the API of the "
                        "tutorial \"Learning PyTorch with examples\" and what a first training script adds to it, not "
                        "all of PyTorch's")


def test_a_module_of_pytorch_the_engine_has_not_is_named():
    hint = script_child.beyond_the_engine(ModuleNotFoundError("No module named 'torch.utils'", name="torch.utils"))
    assert hint.startswith("torch.utils is PyTorch's but not the engine's")
    assert script_child.beyond_the_engine(ModuleNotFoundError("x", name="torch.utlis")) is None


def test_a_script_using_more_than_the_engine_has_is_told_so(tmp_path):
    run, out, err = run_to_end(script(tmp_path, """
        import torch
        x = torch.randn(8, 3)
        loss = x.to_sparse()
    """))
    status, message = run.status()
    assert status == "failed"
    assert message == ("the script raised before its first step: AttributeError: 'Tensor' object has no attribute "
                       "'to_sparse' (torch.Tensor.to_sparse is PyTorch's but not the engine's: gradscope's "
                       "engine has the API of the tutorial \"Learning PyTorch with examples\" and what a first "
                       "training script adds to it, not all of PyTorch's)")
    assert err.splitlines()[-1].startswith("torch.Tensor.to_sparse is PyTorch's but not the engine's")


# Writes app/torch_names.json's content from the torch installed (run it in a fresh interpreter: which submodules
# an import has loaded changes dir(torch)): python -c "from tests.app.test_script_run import TORCH_NAMES as s; exec(s)"
TORCH_NAMES = """
import json, sys
import torch, torch.nn, torch.nn.functional, torch.optim, torch.cuda, torch.autograd
def public(obj):
    return sorted(n for n in dir(obj) if not n.startswith("_") or n == "__matmul__")
places = {"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional,
          "torch.optim": torch.optim, "torch.cuda": torch.cuda, "torch.autograd": torch.autograd,
          "torch.Tensor": torch.Tensor, "torch.nn.Module": torch.nn.Module,
          "torch.optim.Optimizer": torch.optim.Optimizer}
names = {place: public(obj) for place, obj in places.items()}
json.dump({"torch": torch.__version__, "names": names}, sys.stdout, indent=0, separators=(",", ":"))
print()
"""


@pytest.mark.torch
def test_the_list_of_pytorchs_names_is_torchs():
    """app/torch_names.json is what TORCH_NAMES writes from torch 2.13 in a fresh interpreter."""
    torch = pytest.importorskip("torch")
    shipped = (Path(__file__).parents[2] / "app" / "torch_names.json").read_text(encoding="utf-8")
    assert json.loads(shipped)["torch"].startswith("2.13")
    if not torch.__version__.startswith("2.13"):
        pytest.skip(f"torch {torch.__version__} is installed; the list is 2.13's")
    import subprocess

    made = subprocess.run([sys.executable, "-c", TORCH_NAMES], capture_output=True, text=True, timeout=300,
                          check=True).stdout
    assert json.loads(made) == json.loads(shipped)


def test_compare_grads_headless_checks_a_scripts_first_step(tmp_path, capsys):
    """--headless --script --compare-grads was taken and did nothing; it checks the script's first step (the one a
    headless run can name before the script ends), and a wrong backward is graded bad."""
    right = script(tmp_path, CUSTOM.format(mask="grad_input[input < 0] = 0", dtype="float64"), "right.py")
    assert main(["--headless", "--quiet", "--script", str(right), "--compare-grads"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "gradients at step 1 of right.py (leaves of the loss's graph) (cpu, float64)"
    rows = [line for line in out if line.startswith("w1 ") or line.startswith("w2 ")]  # the script's names
    assert [r.split(" autograd")[0].strip() for r in rows] == ["w1 (20×16)", "w2 (16×3)"]
    assert not any(r.endswith("[bad]") for r in rows), out
    wrong = script(tmp_path, CUSTOM.format(mask="pass", dtype="float64"), "wrong.py")
    assert main(["--headless", "--quiet", "--script", str(wrong), "--compare-grads"]) == 0  # the run itself is fine
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("w1 ")]
    assert rows and rows[0].endswith("[bad]")
    stepless = script(tmp_path, "import torch\nprint(torch.ones(2).sum())\n", "stepless.py")
    assert main(["--headless", "--quiet", "--script", str(stepless), "--compare-grads"]) == 2
    assert "gradient comparison not made: stepless.py ended before a step" in capsys.readouterr().err


# ---------------------------------------------------------------------------- inside a script's step

CNN = """
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(32, 1, 8, 8)
y = torch.randint(0, 3, (32,))
model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scale = torch.ones(1, requires_grad=True)
for t in range({steps}):
    loss = nn.functional.cross_entropy(model(x) * scale, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def inside_at(path, after_steps=3, paused=False):
    run = ScriptRun(path)
    run.start()
    deadline = time.monotonic() + 60
    while len(run.log) < after_steps and time.monotonic() < deadline:
        run.poll(0.05)
    if paused:
        run.pause()
        time.sleep(0.3)
        run.poll(0.05)
    before = len(run.log)
    run.look_inside()
    event = None
    while event is None and time.monotonic() < deadline:
        event = next((v for k, v in run.poll(0.1) if k == "inside"), None)
    return run, event, before


def test_a_look_inside_a_running_script_gives_its_graph_with_its_names_and_a_profile_of_its_step(tmp_path):
    run, event, _ = inside_at(script(tmp_path, CNN.format(steps=100000)))
    run.stop()
    wait_for_end(run, lambda *_: None, timeout=10)
    assert event is not None and event["t"] == "inside", event
    assert event["last"] == event["first"] + 1 and event["problems"] == []
    graph = event["graph"]
    assert graph["recipe"] == "train.py" and graph["source"] == "your script's own backward()"
    nodes = graph["graph"]["nodes"]
    leaves = {n["name"] for n in nodes if n["kind"] == "leaf"}
    # the script's own names: a module's parameters by the module's variable, a tensor by its own
    assert leaves == {"model.0.weight", "model.0.bias", "model.4.weight", "model.4.bias", "scale"}
    conv = next(n for n in nodes if n["op"] == "Convolution")
    assert conv["grad_fn"] == "ConvolutionBackward0" and conv["shape"] == [32, 4, 6, 6]
    relu = next(n for n in nodes if n["op"] == "ReLU")
    assert 0.2 < relu["output"]["zeros"] < 0.8 and relu["grad"] is not None  # the mask, and its gradient
    profile = event["profile"]
    ops = {r["op"] for r in profile["rows"]}
    assert {"Convolution", "Convolution backward", "MaxPool", "SGD.step"} <= ops  # the whole iteration
    assert profile["steps"] == 1 and profile["profiled_step_ms"] > 0 and profile["plain_step_ms"] > 0
    assert sum(profile["categories_ms"].values()) == pytest.approx(profile["profiled_step_ms"], rel=0.05)
    # no step lost or doubled by the look
    np.testing.assert_array_equal(run.log.step, np.arange(len(run.log)))


def test_a_paused_script_takes_the_two_steps_a_look_needs_and_waits_again(tmp_path):
    run, event, before = inside_at(script(tmp_path, CNN.format(steps=100000)), paused=True)
    assert event is not None and event["t"] == "inside"
    time.sleep(0.5)
    run.poll(0.05)
    assert len(run.log) == before + 2 and event["first"] == before and event["last"] == before + 1
    run.stop()
    wait_for_end(run, lambda *_: None, timeout=10)


def test_a_look_at_a_script_without_backward_says_why(tmp_path):
    items = script(tmp_path, "import torch\nw = torch.ones(3)\nt = 0\nwhile True:\n    t += 1\n"
                             "    print((w * t).sum().item())\n", "items.py")
    run, event, _ = inside_at(items)
    run.stop()
    wait_for_end(run, lambda *_: None, timeout=10)
    assert event["t"] == "inside_failed" and "calls no backward()" in event["why"]


def test_a_script_that_ends_during_a_look_is_answered(qtbot, tmp_path):
    from app.worker import ScriptThread

    path = script(tmp_path, CNN.format(steps=3).replace("for t in", "import time\ntime.sleep(0.5)\nfor t in"))
    thread = ScriptThread(path)
    failed = []
    thread.worker.inside_failed.connect(failed.append)
    thread.start()
    thread.worker.look_inside("run #1")  # asked before its first step; three steps: the look can finish...
    qtbot.waitUntil(lambda: not thread.is_running(), timeout=30_000)
    thread.join()
    path2 = script(tmp_path, CNN.format(steps=1).replace("for t in", "import time\ntime.sleep(0.5)\nfor t in"),
                   "one.py")
    thread = ScriptThread(path2)
    thread.worker.inside_failed.connect(failed.append)
    thread.start()
    thread.worker.look_inside("run #2")  # ...one step: it cannot
    qtbot.waitUntil(lambda: not thread.is_running(), timeout=30_000)
    thread.join()
    assert failed == ["the script ended before the two steps a look inside takes (the graph of one, the profile "
                      "of the next)"]


def test_a_scripts_weights_are_sampled_by_their_own_names_with_the_update_it_made(tmp_path):
    """The update here is w -= 1e-3 * w.grad: each full sample's update ratio is 1e-3 x its gradient norm over its
    weight norm, the figures of the same step (float64, so that a small update keeps its digits)."""
    body = TRAIN.format(steps=2000, after="").replace("torch.randn(8, 2, requires_grad=True)",
                                                      "torch.randn(8, 2, dtype=torch.float64, requires_grad=True)")
    body = body.replace("torch.randn(16, 8)", "torch.randn(16, 8, dtype=torch.float64)").replace(
        "torch.randn(16, 2)", "torch.randn(16, 2, dtype=torch.float64)")
    run, _, _ = run_to_end(script(tmp_path, body))
    assert run.status()[0] == "done" and len(run.samples) > 10  # spaced to the budget: a few percent of the time
    assert all(list(s) == ["step", "full", "w"] for s in run.samples)
    full = [s["w"] for s in run.samples if s["full"] and s["w"]["update_ratio"] is not None]
    assert len(full) >= 3
    for figures in full:
        assert figures["update_ratio"] == pytest.approx(1e-3 * figures["grad_norm"] / figures["weight_norm"],
                                                        rel=1e-9)
        assert sum(figures["weights"]["counts"]) == 16 and sum(figures["grads"]["counts"]) == 16  # w is 8 x 2
    assert 0 < run.sampling_cost < 0.5
    dynamics = run.result().extra["dynamics"]
    assert dynamics["params"] == ["w"] and len(dynamics["samples"]) == len(run.samples)


def test_a_complex_weights_dynamics_are_those_of_its_real_and_imaginary_parts(tmp_path):
    """Norms of the moduli (sqrt(sum |z|^2)), the update ratio of the same, histograms over the parts: 2 x 6 values
    for a weight of 6 complex elements. (The parts were cast away, with NumPy's warning, before.)"""
    run, _, err = run_to_end(script(tmp_path, COMPLEX.format(factor="z.conj()").replace("range(100000)",
                                                                                          "range(400)")))
    assert run.status()[0] == "done", err
    full = [s for s in run.samples if s["full"]]
    assert full and "ComplexWarning" not in err
    first = full[0]["w (2)" if "w (2)" in full[0] else "w"]
    engine.manual_seed(2)  # the script's own first draw
    w0 = engine.randn(6, dtype=engine.cdouble).numpy()
    assert first["weight_norm"] == pytest.approx(float(np.sqrt(np.sum(np.abs(w0) ** 2))), rel=1e-12)
    assert sum(first["weights"]["counts"]) == 12 and first["weights"]["lo"] == pytest.approx(
        min(w0.real.min(), w0.imag.min()))


def test_parameters_named_alike_or_as_a_samples_own_keys_are_kept_apart(tmp_path):
    body = """
    import torch
    step = torch.ones(3, requires_grad=True)  # named as a sample's own key
    w = torch.zeros(2, requires_grad=True)
    def train():
        w = torch.full((2,), 2.0, requires_grad=True)  # a local of the same name as the global w
        for t in range(3):
            loss = (step.sum() + (w * globals()["w"]).sum()) ** 2
            loss.backward()
    train()
    """
    run, _, err = run_to_end(script(tmp_path, body))
    assert run.status()[0] == "done", err
    names = [k for k, v in run.samples[0].items() if isinstance(v, dict)]
    assert sorted(names) == ["step (2)", "w", "w (2)"]
    first = run.samples[0]
    assert first["step"] == 0 and first["step (2)"]["weight_norm"] == pytest.approx(3 ** 0.5)
    assert sorted(first[n]["weight_norm"] for n in ("w", "w (2)")) == [0.0, pytest.approx(8 ** 0.5)]


def test_the_engines_own_item_calls_are_not_a_scripts_steps(tmp_path):
    """An embedding's index check and one_hot's class count call .item() inside the engine: before the first
    backward() those were taken for the script's item-stepped losses (a first step of loss 0)."""
    body = """
    import torch
    import torch.nn.functional as F
    table = torch.nn.Embedding(5, 3)
    ids = torch.tensor([1, 4, 2])
    for t in range(4):
        loss = (table(ids) + F.one_hot(ids).float().sum()).pow(2).mean()
        loss.backward()
    """
    run, _, err = run_to_end(script(tmp_path, body))
    assert run.status() == ("done", "done: 4 steps"), err
    assert (run.log.loss > 1).all()  # every step a loss of the script's, none the engine's index 0
    items = """
    import torch
    import torch.nn.functional as F
    for t in range(3):
        codes = F.one_hot(torch.tensor([0, 2]))  # its own .item() calls, in the engine
        print(float((codes.float() * (t + 1)).sum().item()))
    """
    run, out, err = run_to_end(script(tmp_path, items, "items.py"))
    assert run.status() == ("done", "done: 3 steps"), err
    assert run.log.loss.tolist() == [2.0, 4.0, 6.0]
