"""The headless command: summaries, exports, and exit codes (2 on bad input, never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from main import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--batch", "8", "--d-in", "20", "--hidden", "10", "--d-out", "3"]


def test_done_prints_a_summary_and_exits_0(capsys):
    code = main(["--headless", "--iters", "50", *SMALL])
    out = capsys.readouterr()
    assert code == 0
    assert out.out.startswith("done: 50 steps, final loss ") and "steps/s (tensor on cpu, float32)" in out.out
    assert out.err == ""  # no progress bar when stderr is not a terminal


def test_export_and_compare_grads(tmp_path, capsys):
    path = tmp_path / "run.json"
    code = main(["--headless", "--recipe", "autograd", "--dtype", "float64", "--iters", "20", "--export",
                 str(path), "--compare-grads", *SMALL])
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(path.read_text())["steps"] == 20
    assert "gradients at step 20 (cpu, float64)" in out
    assert out.count("[good]") == 6


def test_quiet_prints_nothing(capsys):
    assert main(["--headless", "--quiet", "--iters", "5", *SMALL]) == 0
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_quiet_still_says_why_a_run_did_not_finish(capsys):
    """Exit 3 with nothing said left a script's user guessing: --quiet drops the warning and the summary, not the
    reason, on one line of stderr."""
    assert main(["--headless", "--quiet", "--lr", "1e30", "--iters", "50", *SMALL]) == 3
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and out.err.startswith("diverged at step ")
    assert "the loss became" in out.err and "try a smaller learning rate" in out.err


@pytest.mark.parametrize("args, message", [
    (["--recipe", "autograd", "--points", "100"],
     "--points: the fit of sin(x)'s size does nothing to autograd, the two-layer net (its sizes are --batch, --d-in, "
     "--hidden, --d-out)"),
    (["--points", "100"], "--points: the fit of sin(x)'s size does nothing to tensor, the two-layer net"),
    (["--recipe", "poly-autograd", "--hidden", "5", "--batch", "3"],
     "--batch, --hidden: the two-layer net's sizes do nothing to poly-autograd, a fit of sin(x) (its size is "
     "--points)"),
    (["--script", "app/examples/two_layer_autograd.py", "--hidden", "5", "--lr", "1e-3"],
     "--hidden, --lr: a recipe's run settings do nothing to a script, which sets its own (drop them)"),
    (["--script", "app/examples/two_layer_autograd.py", "--seed", "3"],
     "--seed: a recipe's run settings do nothing to a script, which sets its own (drop it)"),
])
def test_a_setting_that_would_do_nothing_is_refused_not_ignored(args, message, capsys):
    """Found by hand: --points with the two-layer net, the net's sizes with a fit, any run setting with --script
    ran as if not given; the learner would think they had changed the run."""
    assert main(["--headless", "--quiet", "--iters", "2", *args] if "--script" not in args
                else ["--headless", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"main.py: error: {message}") and err.count("\n") == 1
    assert main(["--headless", "--quiet", "--recipe", "poly-nn", "--points", "50", "--iters", "2"]) == 0  # its own
    if "--recipe" in args or "--script" in args:  # (without one, the window's saved recipe may take them)
        assert main(args) == 2  # the window is not opened for them either
        assert capsys.readouterr().err.startswith(f"main.py: error: {message}")


def test_diverged_exits_3_and_still_exports(tmp_path, capsys):
    path = tmp_path / "run.csv"
    code = main(["--headless", "--lr", "1.0", "--export", str(path)])
    err = capsys.readouterr().err
    assert code == 3
    assert "try a smaller learning rate" in err
    assert err.startswith("main.py: warning: Learning rate 1 is likely to diverge at these settings")  # said first
    rows = path.read_text().splitlines()
    assert rows[0] == "step,loss,elapsed_s,step_ms" and rows[-1].split(",")[1] in ("inf", "nan")


def test_a_rate_likely_to_diverge_is_warned_of_before_the_run_with_one_that_works(capsys):
    from app.config import RunConfig
    from app.stability import estimate

    sizes = ["--batch", "128", "--d-in", "2000", "--hidden", "200", "--d-out", "20"]
    assert main(["--headless", "--recipe", "autograd", "--iters", "30", *sizes]) == 3
    err = capsys.readouterr().err
    suggested = estimate(RunConfig(recipe="autograd", batch=128, d_in=2000, hidden=200, d_out=20)).suggested_lr()
    assert err.startswith("main.py: warning: Learning rate 1e-06 is likely to diverge") and "diverged at step" in err
    assert f"try a smaller learning rate, such as {suggested:g}" in err  # said again after the fact
    assert main(["--headless", "--recipe", "autograd", "--iters", "30", "--lr", f"{suggested:g}", *sizes]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("args, words", [
    (["--batch", "0"], "batch: must be between 1"),
    (["--hidden", "-3"], "hidden: must be between 1"),
    (["--lr", "nan"], "lr: the learning rate must be a finite number above 0"),
    (["--lr", "-1"], "lr: the learning rate must be a finite number above 0"),
    (["--lr", "abc"], "expected a number such as 1e-6"),
    (["--recipe", "keras"], "invalid choice: 'keras'"),
    (["--device", "tpu"], "Expected one of cpu, cuda"),
    (["--device", "cuda:7"], "device: cuda:7"),
    (["--batch", "1000000", "--d-in", "1000000"], "sizes: this run needs about"),
    (["--export", "/nonexistent-folder/x.csv"], "does not exist"),
    (["--export", "x.txt"], "unknown export format"),
    (["--start"], "belong to the desktop app"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_input_exits_2_with_one_line(args, words, capsys):
    code = main(["--headless", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("main.py: error: ")
    assert words in err


def test_real_process_bad_input_has_no_traceback():
    out = subprocess.run([sys.executable, "main.py", "--headless", "--batch", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and "batch: must be between 1" in out.stderr


def _cpu_seconds(pid: int) -> float:
    """CPU time a process has used (Linux /proc; elsewhere the wall time since this was first asked)."""
    import os
    import time

    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return time.monotonic() - _cpu_seconds.__dict__.setdefault("t0", time.monotonic())


def test_ctrl_c_stops_keeps_the_log_and_exits_130(tmp_path):
    import signal
    import time

    path = tmp_path / "interrupted.csv"
    proc = subprocess.Popen([sys.executable, "main.py", "--headless", "--quiet", "--iters", "10000000", *SMALL,
                             "--export", str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120
    while _cpu_seconds(proc.pid) < 2.5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)  # imports, then some steps: by the CPU it has had, however busy the machine is
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    rows = path.read_text().splitlines()
    assert rows[0] == "step,loss,elapsed_s,step_ms" and len(rows) > 10


@pytest.mark.parametrize("args, words", [
    (["--export", "a" * 300 + ".csv"], "the file name is longer than this file system allows"),
    (["--export", ""], "the export file name is empty"),
    (["--device", ""], "device: Expected one of cpu, cuda"),
    (["--batch", "１２"], "expected a whole number, got '１２'"),
    (["--batch", "1__0"], "expected a whole number, got '1__0'"),
    (["--batch", "1.5"], "expected a whole number, got '1.5'"),
    (["--iters", "1e-3"], "expected a whole number, got '1e-3'"),
    (["--iters", "nan"], "expected a whole number, got 'nan'"),
    (["--iters", "1e999999"], "'1e999999' is far too large"),
    (["--iters", "1e20"], "iters: must be a whole number between 1 and 10,000,000"),
    (["--lr", "x" * 100_000], "… (100,000 characters)"),
])
def test_bad_values_that_slipped_through_are_refused_in_one_short_line(capsys, args, words):
    """Issue: a 300-character export name gave a traceback; --export "" was ignored; full-width digits and
    doubled underscores were taken as sizes; a 100 KB bad value was echoed whole."""
    code = main(["--headless", "--quiet", "--iters", "2", *SMALL, *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("main.py: error: ") and err.count("\n") == 1, err[:300]
    assert words in err and len(err) < 400 and "Traceback" not in err


def test_good_numbers_still_read(capsys):
    assert main(["--headless", "--quiet", "--iters", "2", "--batch", "1_0", "--d-in", "+8", "--hidden", "4",
                 "--d-out", "2", "--lr", "1E-6"]) == 0


@pytest.mark.parametrize("text, value", [("1e3", 1000), ("2.5e2", 250), ("6.4E1", 64), ("1_000", 1000),
                                         ("+8", 8), ("1.0", 1)])
def test_a_whole_number_may_be_written_as_a_number_whose_value_is_whole(text, value):
    from app.cli import parse

    assert parse(["--headless", "--iters", text]).iters == value


def test_the_numpy_recipe_runs_on_cpu_0(capsys):
    """cpu:0 is the CPU: the NumPy warm-up refused it as 'not the CPU'."""
    assert main(["--headless", "--quiet", "--recipe", "numpy", "--device", "cpu:0", "--iters", "2", *SMALL]) == 0


def test_exported_files_follow_the_umask(tmp_path):
    """mkstemp's 0600 survived the rename: every export was private whatever the umask."""
    import os

    path = tmp_path / "run.csv"
    old = os.umask(0o022)
    try:
        assert main(["--headless", "--quiet", "--iters", "2", *SMALL, "--export", str(path)]) == 0
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def _headless(tmp_path, *extra, iters="10000000"):
    import os

    path = tmp_path / "log.csv"
    proc = subprocess.Popen([sys.executable, "main.py", "--headless", "--iters", iters, *SMALL, "--export", str(path),
                             *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return proc, path


def _wait_for_steps(proc):
    import time

    deadline = time.monotonic() + 120
    while _cpu_seconds(proc.pid) < 2.5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_end_the_run_like_ctrl_c_and_keep_the_log(tmp_path, name):
    """Issue: SIGTERM and SIGHUP lost the whole log."""
    import signal

    proc, path = _headless(tmp_path, "--quiet")
    _wait_for_steps(proc)
    proc.send_signal(getattr(signal, name))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    rows = path.read_text().splitlines()
    assert rows[0] == "step,loss,elapsed_s,step_ms" and len(rows) > 10
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv"]  # no temporary file left


def test_ctrl_c_during_the_gradient_comparison_still_exports_the_log(tmp_path):
    """Issue: Ctrl+C during --compare-grads printed a KeyboardInterrupt traceback and lost the log."""
    import signal

    proc, path = _headless(tmp_path, "--compare-grads", "--dtype", "float64", "--batch", "64", "--d-in", "300",
                           "--hidden", "100", "--d-out", "10", iters="3")
    first = proc.stdout.readline()  # the run's summary, printed before the comparison starts
    assert first.startswith("done: 3 steps"), first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert path.read_text().count("\n") == 4  # the header and the 3 steps


def test_a_signal_before_the_first_step_ends_with_130_and_one_line(tmp_path, monkeypatch, capsys):
    """Found by hand: SIGTERM while the learning rate's edge was estimated (half a minute for the largest fit)
    printed a KeyboardInterrupt traceback. A real SIGTERM to this process, delivered inside the estimate."""
    import os
    import signal

    from app import stability

    real = stability.estimate

    def estimate_with_a_signal(config):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(config)

    monkeypatch.setattr(stability, "estimate", estimate_with_a_signal)
    path = tmp_path / "log.csv"
    assert main(["--headless", "--iters", "20", *SMALL, "--export", str(path)]) == 130
    out = capsys.readouterr()
    assert out.err == "interrupted (SIGTERM) before the run's first step: no log to export\n" and out.out == ""
    assert not path.exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_signal_during_the_export_is_noted_and_the_file_is_written_whole(tmp_path, monkeypatch, capsys):
    """Issue: SIGTERM during the write left a 0-byte temporary file. A real SIGTERM to this process, sent while
    the export writes: the write finishes, no temporary file stays, and the exit code says interrupted."""
    import os
    import signal

    from app import export as export_mod

    real_chunks = export_mod._csv_chunks

    def chunks_with_a_signal(log):
        for i, piece in enumerate(real_chunks(log)):
            if i == 1:
                os.kill(os.getpid(), signal.SIGTERM)  # delivered here, in the main thread, mid-write
            yield piece

    monkeypatch.setattr(export_mod, "_csv_chunks", chunks_with_a_signal)
    path = tmp_path / "log.csv"
    code = main(["--headless", "--quiet", "--iters", "20", *SMALL, "--export", str(path)])
    assert code == 130
    assert path.read_text().count("\n") == 21  # the header and every step
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back
