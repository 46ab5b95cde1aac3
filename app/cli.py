"""The command line: the parser, the options it hands on, and the headless run (``python main.py --headless``).

``main.py`` is the composition root: it parses here, then runs headless (:func:`run_headless`) or opens the window
(``ui.launcher``) with :class:`DesktopOptions`, plain values and no argparse. This module never imports ``ui``.

Exit codes: 0 done; 1 failed (or the export could not be written); 2 bad input (one line on stderr,
never a traceback); 3 diverged or out of memory (the log is still exported); 130 interrupted (Ctrl+C;
the log of the steps done is still exported).
"""

from __future__ import annotations

import argparse
import decimal
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, fields
from pathlib import Path

from .config import DTYPES, ConfigError, RunConfig, format_rate
from .recipes import TABLE

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DIVERGED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints the whole usage otherwise)
        raise UsageError(message)


_WHOLE = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*", re.ASCII)  # 1000, 1_000; not １２ nor 1__0
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:_[0-9]+)*(?:\.(?:[0-9]+(?:_[0-9]+)*)?)?|\.[0-9]+(?:_[0-9]+)*)"
                     r"(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.ASCII | re.IGNORECASE)


def _shown(text: str, limit: int = 40) -> str:
    """A value as an error message quotes it: cut, so a 100 KB argument is not echoed whole."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text):,} characters)"


def _int(text: str) -> int:
    """A whole number: 1000, 1_000, or written as a number whose value is whole (1e6, 2.5e3); not 1.5 nor 1e-3."""
    text_ = text.strip()
    if _WHOLE.fullmatch(text_):
        return int(text_)
    if _NUMBER.fullmatch(text_):
        value = decimal.Decimal(text_.replace("_", ""))
        if value.is_finite() and value.adjusted() >= 100:  # (to_integral_value of 1e999999 would take long)
            raise argparse.ArgumentTypeError(f"{_shown(text)} is far too large")
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
    raise argparse.ArgumentTypeError(f"expected a whole number, got {_shown(text)}")


def _float(text: str) -> float:
    if not _NUMBER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a number such as 1e-6, got {_shown(text)}")
    return float(text.strip().replace("_", ""))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="main.py",
        description="Watch the PyTorch tutorial's programs train (the two-layer net, and the fit of sin(x) by a "
        "cubic), on the project's own engine. "
        "Without --headless the desktop app opens, with these options preset.",
    )
    p.add_argument("--headless", action="store_true", help="run without a window (for scripts, CI, servers)")
    p.add_argument("--script", metavar="FILE.py",
                   help="run your own training script (written for the tutorial: import torch) and plot each "
                        "backward() on a scalar as a step; the run settings below do not apply to it")
    run = p.add_argument_group("run settings")
    run.add_argument("--recipe", choices=tuple(TABLE), default=None, metavar="RECIPE",
                     help="how the step is written (default tensor): " + ", ".join(TABLE))
    run.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default cpu)")
    run.add_argument("--dtype", choices=DTYPES, default=None, help="default float32")
    run.add_argument("--batch", type=_int, default=None, metavar="N", help="batch size N (default 64)")
    run.add_argument("--d-in", type=_int, default=None, metavar="D", help="input dimension (default 1000)")
    run.add_argument("--hidden", type=_int, default=None, metavar="H", help="hidden dimension (default 100)")
    run.add_argument("--d-out", type=_int, default=None, metavar="D", help="output dimension (default 10)")
    run.add_argument("--points", type=_int, default=None, metavar="P",
                     help="the poly-* recipes: points of linspace(-pi, pi) where sin(x) is fitted (default 2000)")
    run.add_argument("--lr", type=_float, default=None,
                     help="learning rate (default: the recipe's own, as its tutorial has it)")
    run.add_argument("--iters", type=_int, default=None, help="iterations (default 500; the poly-* recipes: their "
                                                               "tutorial's, 2000 or 30000)")
    run.add_argument("--seed", type=_int, default=None, help="random seed of x, y and the weights (default 0)")
    run.add_argument("--cuda-graph", action="store_true", default=None,
                     help="GPU: capture the step as a CUDA graph after 3 warm-up steps and replay it "
                          "(tensor, autograd, function, nn)")
    out = p.add_argument_group("headless output")
    out.add_argument("--export", metavar="PATH", help="write the loss log to PATH (.csv or .json)")
    out.add_argument("--compare-grads", action="store_true",
                     help="print manual vs autograd vs numerical gradients at the end of the run (with --script: "
                          "autograd vs numerical for the leaves of the script's first step)")
    out.add_argument("--profile", action="store_true",
                     help="after the run, time its step op by op (forward, backward, update; on a GPU with CUDA "
                          "events) at the final weights, and print where the time goes")
    out.add_argument("--quiet", action="store_true",
                     help="no progress bar, no warning, no summary (a run that does not finish still says why)")
    gui = p.add_argument_group("desktop app")
    gui.add_argument("--start", action="store_true", help="start the run when the window opens")
    gui.add_argument("--screenshot", metavar="PNG", help="save a picture of the window when the run ends, then quit")
    return p


@dataclass(frozen=True)
class RunOptions:
    """The run settings given on the command line; None where an option was not given."""

    recipe: str | None = None
    device: str | None = None
    dtype: str | None = None
    batch: int | None = None
    d_in: int | None = None
    hidden: int | None = None
    d_out: int | None = None
    points: int | None = None
    lr: float | None = None
    iters: int | None = None
    seed: int | None = None
    cuda_graph: bool | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    def apply(self, base: RunConfig | None = None) -> RunConfig:
        """``base`` (the tutorial's defaults) with the given options; a new recipe brings its own default learning
        rate and iteration count unless --lr or --iters was given too."""
        base = base or RunConfig()
        changes = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        if self.recipe and self.recipe in TABLE:
            if self.lr is None:
                changes["lr"] = TABLE[self.recipe].default_lr
            if self.iters is None:
                changes["iters"] = TABLE[self.recipe].default_iters
        return base.with_(**changes)


@dataclass(frozen=True)
class DesktopOptions:
    """What the desktop app is opened with (``ui.launcher.launch``)."""

    run: RunOptions
    start: bool = False
    screenshot: Path | None = None
    script: Path | None = None


NET_SIZES = ("batch", "d_in", "hidden", "d_out")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def misplaced_options(args, recipe: str | None) -> str | None:
    """What is wrong with a run setting given where it does nothing (None when nothing is): any with --script
    (the script sets its own), --points with the two-layer net, the net's sizes with a fit of sin(x). Silently
    ignored, a learner would think they had changed the run."""
    given = [f.name for f in fields(RunOptions) if getattr(args, f.name, None) is not None]
    if getattr(args, "script", None) is not None:
        if given:
            names = ", ".join(_option(n) for n in given)
            them = "them" if len(given) > 1 else "it"
            return f"{names}: a recipe's run settings do nothing to a script, which sets its own (drop {them})"
        return None
    if recipe is None or recipe not in TABLE:
        return None
    if TABLE[recipe].family == "poly":
        sizes = [n for n in NET_SIZES if n in given]
        if sizes:
            return (f"{', '.join(_option(n) for n in sizes)}: the two-layer net's sizes do nothing to {recipe}, a "
                    "fit of sin(x) (its size is --points)")
    elif "points" in given:
        return (f"--points: the fit of sin(x)'s size does nothing to {recipe}, the two-layer net (its sizes are "
                "--batch, --d-in, --hidden, --d-out)")
    return None


def config_from_args(args, base: RunConfig | None = None) -> RunConfig:
    """A RunConfig from parsed options; unset options keep ``base``'s values (the tutorial's defaults)."""
    return RunOptions.from_args(args).apply(base)


def desktop_options(args) -> DesktopOptions:
    """The options of a run in the window; :class:`UsageError` for what only a headless run takes, or a picture
    that cannot be written."""
    if args.export is not None or args.compare_grads or args.profile or args.quiet:
        raise UsageError("--export, --compare-grads, --profile and --quiet belong to --headless runs")
    screenshot = Path(args.screenshot) if args.screenshot else None
    if screenshot is not None:
        if screenshot.suffix.lower() != ".png":
            raise UsageError(f"--screenshot {args.screenshot}: the picture is saved as PNG; give a .png file name")
        folder = screenshot.parent if str(screenshot.parent) else Path(".")
        if not folder.is_dir():
            raise UsageError(f"--screenshot {args.screenshot}: the folder {screenshot.parent} does not exist")
    script = None
    if args.script is not None:
        from .script_run import ScriptError, check_script

        try:
            script = check_script(args.script)
        except ScriptError as exc:
            raise UsageError(str(exc)) from None
    problem = misplaced_options(args, args.recipe)  # (a recipe from the saved settings may take the sizes later)
    if problem:
        raise UsageError(problem)
    return DesktopOptions(RunOptions.from_args(args), start=args.start, screenshot=screenshot, script=script)


class Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, batch) -> None:
        if not self.enabled or not len(batch.step):
            return
        now = time.monotonic()
        done = int(batch.step[-1]) + 1
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        width = 30
        filled = int(width * done / self.total)
        elapsed = float(batch.elapsed_s[-1])
        rate = done / elapsed if elapsed > 0 else 0.0
        loss = float(batch.loss[-1])
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}  loss {loss:.4g}  "
                         f"{format_rate(rate)} steps/s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def fail(message: str) -> int:
    """Say what is wrong on one line of stderr (cut at 300 characters); the exit code for bad input."""
    message = " ".join(message.split())
    if len(message) > 300:
        message = message[:299] + "…"
    sys.stderr.write(f"main.py: error: {message}\n")
    return EXIT_BAD_INPUT


class _Signals:
    """SIGINT, SIGTERM and SIGHUP end a headless run as Ctrl+C does: the run stops between steps and keeps its
    log. Later a signal interrupts the gradient comparison, but never the export: the log is written whole (no
    temporary file left) and the exit code says the run was interrupted (130)."""

    NAMES = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self):
        self.received: str | None = None
        self.defer = False
        self._saved: dict = {}

    def _handle(self, signum, frame):
        self.received = signal.Signals(signum).name
        if not self.defer:
            raise KeyboardInterrupt(self.received)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():  # Python handles signals there only
            for name in self.NAMES:
                number = getattr(signal, name, None)
                if number is not None:
                    self._saved[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc):
        for number, handler in self._saved.items():
            signal.signal(number, handler)
        return False


def run_headless(args) -> int:
    from . import export as export_mod

    if args.script is not None:
        if args.profile:  # said before the script starts, not ignored after it ran
            return fail("--profile times a recipe's step; a script's steps run in a process of its own")
        problem = misplaced_options(args, None)
        return fail(problem) if problem else run_script_headless(args)
    try:
        config = config_from_args(args).validated()
    except ConfigError as exc:
        return fail(str(exc))
    problem = misplaced_options(args, config.recipe)
    if problem:
        return fail(problem)
    if args.profile and TABLE[config.recipe].raw_numpy:
        from .inspect_step import no_engine_ops

        return fail(f"--profile: {no_engine_ops(config.recipe)}")
    if args.export is not None:  # --export "" is a bad path, not no export
        try:
            export_mod.check_writable(args.export)
        except export_mod.ExportError as exc:
            return fail(str(exc))
    with _Signals() as signals:
        return _run_and_report(args, config, signals)


def _run_and_report(args, config: RunConfig, signals: _Signals) -> int:
    from .runner import DIVERGED, DONE, OUT_OF_MEMORY, STOPPED, Runner

    if not args.quiet:
        from .stability import estimate

        try:
            stability = estimate(config)  # before the run: a rate past the edge is said, with one that works
        except KeyboardInterrupt:
            sys.stderr.write(f"interrupted ({signals.received or 'SIGINT'}) before the run's first step: no log to "
                             "export\n")
            return EXIT_INTERRUPTED
        if stability is not None and stability.likely_to_diverge(config.lr):
            sys.stderr.write(f"main.py: warning: {stability.advice(config.lr)}\n")
    runner = Runner(config, dynamics=True)
    progress = Progress(config.iters, enabled=not args.quiet and sys.stderr.isatty())
    result = runner.run(progress)  # a signal ends it as "stopped", with the log kept
    signals.defer = True  # from here a signal is noted, not raised (but in the comparison, below)
    progress.close()

    code = {DONE: EXIT_OK, DIVERGED: EXIT_DIVERGED, OUT_OF_MEMORY: EXIT_DIVERGED, STOPPED: EXIT_INTERRUPTED}.get(
        result.status, EXIT_FAILED)
    if not args.quiet:
        rate = result.steps_per_second
        rate_text = f"{format_rate(rate)} steps/s"
        print(f"{result.status}: {result.steps_done} steps, final loss {result.final_loss:.6g}, {rate_text} "
              f"({config.recipe} on {config.device}, {config.dtype})", flush=True)
        if config.cuda_graph:
            print(f"CUDA graph: {result.extra['cuda_graph']['note']}")
    if result.status != DONE:  # why the run did not finish is said, --quiet or not: it is what exit code 1/3/130 means
        sys.stderr.write(result.message + "\n")
    if args.compare_grads and signals.received is None:
        from .gradients import compare

        try:
            state = runner.state if result.status in (DONE, STOPPED) else None
            signals.defer = False
            try:
                report = compare(config, state, source=f"step {result.steps_done}" if state else None)
            finally:
                signals.defer = True
            print(report.table())
        except KeyboardInterrupt:
            sys.stderr.write(f"gradient comparison interrupted ({signals.received or 'SIGINT'}); the log is still "
                             "exported\n")
        except Exception as exc:  # the run's result stands; say why the comparison could not be made
            sys.stderr.write(f"gradient comparison failed: {type(exc).__name__}: {exc}\n")
    if args.profile and signals.received is None and result.status in (DONE, STOPPED):
        _print_profile(config, runner.state, signals)
    if args.export is not None and not _export(result, args):  # a signal now is noted: the export runs to its end
        return EXIT_FAILED
    return EXIT_INTERRUPTED if signals.received else code


def _print_profile(config: RunConfig, state, signals: _Signals) -> None:
    from .inspect_step import profile_steps

    signals.defer = False
    try:
        print(profile_steps(config, state).text(), flush=True)
    except KeyboardInterrupt:
        sys.stderr.write(f"profile interrupted ({signals.received or 'SIGINT'})\n")
    except Exception as exc:  # the run's result stands
        sys.stderr.write(f"profile failed: {type(exc).__name__}: {exc}\n")
    finally:
        signals.defer = True


def _export(result, args) -> bool:
    """Write the run's log to --export; False (said on stderr) when it cannot be written."""
    from . import export as export_mod

    try:
        path = export_mod.export(result, args.export)
    except export_mod.ExportError as exc:
        sys.stderr.write(f"main.py: error: {exc}\n")
        return False
    if not args.quiet:
        print(f"log written to {path}")
    return True


def parse(argv=None) -> argparse.Namespace:
    """The parsed command line; :class:`UsageError` (one line) for a bad one."""
    args = build_parser().parse_args(argv)
    if args.headless and (args.start or args.screenshot):
        raise UsageError("--start and --screenshot belong to the desktop app; drop --headless to use them")
    return args


def _print_script_check(event: dict, name: str) -> None:
    """``--compare-grads`` of a script: autograd against float64 finite differences for each leaf of its first
    step's loss (the table the window's Gradients tab shows), or why the check could not be made."""
    if event.get("t") != "check":
        sys.stderr.write(f"gradient comparison failed: {event.get('why', 'the check could not be made')}\n")
        return
    from .gradients import script_report

    try:
        report = script_report(event, f"step {event['step']} of {name} (leaves of the loss's graph)")
    except (KeyError, ValueError, TypeError) as exc:
        sys.stderr.write(f"gradient comparison failed: its report could not be read: {exc}\n")
        return
    print(report.table(), flush=True)


def run_script_headless(args) -> int:
    """``--headless --script FILE``: the script's prints as they come, then a summary; exit 0 done, 1 it raised
    after its first step, 2 it cannot be run (missing, not Python, raised before its first step, no step at all),
    130 stopped by a signal (the steps done are kept and exported)."""
    from . import export as export_mod
    from .script_run import DONE, ScriptError, ScriptRun, wait_for_end

    try:
        run = ScriptRun(args.script)
        if args.export is not None:
            export_mod.check_writable(args.export)
    except (ScriptError, export_mod.ExportError) as exc:
        return fail(str(exc))

    name = Path(args.script).name
    checked = []

    def show(kind, text):
        if kind in ("out", "err") and not args.quiet:
            stream = sys.stdout if kind == "out" else sys.stderr
            stream.write(text)
            stream.flush()
        elif kind == "check":
            checked.append(text)
            _print_script_check(text, name)

    with _Signals() as signals:
        run.start()
        if args.compare_grads:
            run.check()  # at the script's first step: the one step a headless run can name before it ends
        try:
            wait_for_end(run, show)
        except KeyboardInterrupt:
            signals.defer = True
            run.stop()
            wait_for_end(run, show)
        signals.defer = True
    result = run.result()
    if args.compare_grads and not checked and not signals.received:
        sys.stderr.write(f"gradient comparison not made: {name} ended before a step it could be made at\n")
    if not args.quiet:
        print(f"{result.status}: {result.steps_done} steps" + (f", final loss {result.final_loss:.6g}"
                                                                if result.steps_done else "")
              + f" (script {name} on {run.device or 'cpu'})", flush=True)
    if args.export is not None and result.steps_done and not _export(result, args):
        return EXIT_FAILED
    if signals.received:
        return EXIT_INTERRUPTED
    if result.status == DONE:
        return EXIT_OK
    if result.steps_done == 0:
        return fail(f"{name}: {result.message}")
    sys.stderr.write(f"main.py: {name}: {result.message}\n")
    return EXIT_FAILED
