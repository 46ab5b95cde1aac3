"""The command line: ``python main.py --headless ...`` runs without a window.

Exit codes: 0 done; 1 failed (or the export could not be written); 2 bad input (one line on stderr,
never a traceback); 3 diverged or out of memory (the log is still exported); 130 interrupted (Ctrl+C;
the log of the steps done is still exported).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

from .config import DTYPES, RECIPE_DEFAULT_LR, RECIPES, ConfigError, RunConfig

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DIVERGED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints the whole usage otherwise)
        raise UsageError(message)


def _int(text: str) -> int:
    try:
        return int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 1e-6, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="main.py",
        description="Watch the classic PyTorch tutorial's two-layer net train, on the project's own engine. "
        "Without --headless the desktop app opens, with these options preset.",
    )
    p.add_argument("--headless", action="store_true", help="run without a window (for scripts, CI, servers)")
    run = p.add_argument_group("run settings")
    run.add_argument("--recipe", choices=RECIPES, default=None, help="how the step is written (default tensor)")
    run.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default cpu)")
    run.add_argument("--dtype", choices=DTYPES, default=None, help="default float32")
    run.add_argument("--batch", type=_int, default=None, metavar="N", help="batch size N (default 64)")
    run.add_argument("--d-in", type=_int, default=None, metavar="D", help="input dimension (default 1000)")
    run.add_argument("--hidden", type=_int, default=None, metavar="H", help="hidden dimension (default 100)")
    run.add_argument("--d-out", type=_int, default=None, metavar="D", help="output dimension (default 10)")
    run.add_argument("--lr", type=_float, default=None, help="learning rate (default 1e-6; 1e-4 for nn/optim)")
    run.add_argument("--iters", type=_int, default=None, help="iterations (default 500)")
    run.add_argument("--seed", type=_int, default=None, help="random seed of x, y and the weights (default 0)")
    run.add_argument("--cuda-graph", action="store_true", default=None,
                     help="GPU: capture the step as a CUDA graph after 3 warm-up steps and replay it "
                          "(tensor, autograd, function, nn)")
    out = p.add_argument_group("headless output")
    out.add_argument("--export", metavar="PATH", help="write the loss log to PATH (.csv or .json)")
    out.add_argument("--compare-grads", action="store_true",
                     help="print manual vs autograd vs numerical gradients at the end of the run")
    out.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    gui = p.add_argument_group("desktop app")
    gui.add_argument("--start", action="store_true", help="start the run when the window opens")
    gui.add_argument("--screenshot", metavar="PNG", help="save a picture of the window when the run ends, then quit")
    return p


def config_from_args(args, base: RunConfig | None = None) -> RunConfig:
    """A RunConfig from parsed options; unset options keep ``base``'s values (the tutorial's defaults)."""
    base = base or RunConfig()
    recipe = args.recipe or base.recipe
    lr = args.lr
    if lr is None:
        lr = RECIPE_DEFAULT_LR[recipe] if args.recipe else base.lr
    changes = {
        "recipe": recipe,
        "device": args.device or base.device,
        "dtype": args.dtype or base.dtype,
        "batch": args.batch if args.batch is not None else base.batch,
        "d_in": args.d_in if args.d_in is not None else base.d_in,
        "hidden": args.hidden if args.hidden is not None else base.hidden,
        "d_out": args.d_out if args.d_out is not None else base.d_out,
        "lr": lr,
        "iters": args.iters if args.iters is not None else base.iters,
        "seed": args.seed if args.seed is not None else base.seed,
        "cuda_graph": args.cuda_graph if args.cuda_graph is not None else base.cuda_graph,
    }
    return base.with_(**changes)


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
                         f"{rate:,.0f} steps/s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _fail(message: str) -> int:
    sys.stderr.write(f"main.py: error: {message}\n")
    return EXIT_BAD_INPUT


def run_headless(args) -> int:
    from . import export as export_mod
    from .runner import DIVERGED, DONE, OUT_OF_MEMORY, STOPPED, Runner

    try:
        config = config_from_args(args).validated()
    except ConfigError as exc:
        return _fail(str(exc))
    if args.export:
        try:
            export_mod.check_writable(args.export)
        except export_mod.ExportError as exc:
            return _fail(str(exc))

    runner = Runner(config)
    progress = Progress(config.iters, enabled=not args.quiet and sys.stderr.isatty())
    result = runner.run(progress)  # Ctrl+C ends it as "stopped", with the log kept
    progress.close()

    code = {DONE: EXIT_OK, DIVERGED: EXIT_DIVERGED, OUT_OF_MEMORY: EXIT_DIVERGED, STOPPED: EXIT_INTERRUPTED}.get(
        result.status, EXIT_FAILED)
    if not args.quiet:
        rate = result.steps_per_second
        rate_text = f"{rate:,.0f} steps/s" if math.isfinite(rate) else "n/a steps/s"
        print(f"{result.status}: {result.steps_done} steps, final loss {result.final_loss:.6g}, {rate_text} "
              f"({config.recipe} on {config.device}, {config.dtype})")
        if config.cuda_graph:
            print(f"CUDA graph: {result.extra['cuda_graph']['note']}")
        if result.status != DONE:
            sys.stderr.write(result.message + "\n")
    if args.compare_grads:
        from .gradients import compare

        try:
            state = runner.state if result.status in (DONE, STOPPED) else None
            report = compare(config, state, source=f"step {result.steps_done}" if state else None)
            print(report.table())
        except Exception as exc:  # the run's result stands; say why the comparison could not be made
            sys.stderr.write(f"gradient comparison failed: {type(exc).__name__}: {exc}\n")
    if args.export:
        try:
            path = export_mod.export(result, args.export)
            if not args.quiet:
                print(f"log written to {path}")
        except export_mod.ExportError as exc:
            sys.stderr.write(f"main.py: error: {exc}\n")
            return EXIT_FAILED
    return code


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _fail(str(exc))
    if not args.headless:
        from ui.main_window import launch  # only the desktop app needs Qt

        return launch(args)
    if args.start or args.screenshot:
        return _fail("--start and --screenshot belong to the desktop app; drop --headless to use them")
    return run_headless(args)


def entry() -> None:
    sys.exit(main())
