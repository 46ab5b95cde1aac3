"""What :mod:`benchmarks.gpt_step` and :mod:`benchmarks.cnn_step` share: each library timed in child processes of
its own, alternating (one library's idle threads would otherwise spin beside the other's work on a small machine,
and slow it); the medians as a table, with the engine/torch ratio where torch is installed; the command line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np


def children(module: str, rounds: int, processes: int) -> dict:
    """``python -m <module> --child <library>`` for each library, ``processes`` times, alternating: their figures
    (the JSON each child prints), by library."""
    names = ["engine"] + (["torch"] if importlib.util.find_spec("torch") is not None else [])
    runs = {name: [] for name in names}
    for _ in range(processes):
        for name in names:
            done = subprocess.run([sys.executable, "-m", module, "--child", name, "--rounds", str(rounds)],
                                  capture_output=True, text=True, check=True,
                                  cwd=Path(__file__).resolve().parent.parent)
            runs[name].append(json.loads(done.stdout))
    return runs


def table(runs: dict, rows: tuple) -> list[str]:
    """One line per ``(key, what)`` of ``rows``: each library's median over its processes, and the ratio; then the
    machine and the libraries' versions and threads."""
    ms = {name: {key: statistics.median(r[key] for r in rs) for key, _ in rows} for name, rs in runs.items()}
    lines = []
    for key, what in rows:
        line = f"  {what:38s} engine {ms['engine'][key]:8.3f} ms"
        if "torch" in ms:
            line += f"   torch {ms['torch'][key]:8.3f} ms   engine/torch {ms['engine'][key] / ms['torch'][key]:.2f}"
        lines.append(line)
    info = f"  ({platform.machine()}, numpy {np.__version__}, engine threads {runs['engine'][0]['threads']}"
    if "torch" in runs:
        info += f", torch {runs['torch'][0]['version']} with {runs['torch'][0]['threads']} threads"
    lines.append(info + ")")
    return lines


def main(argv, prog: str, doc: str, default_out: Path, one_library, measure) -> int:
    """The command line both share: ``--rounds``, ``--out``; a child (``--child``) prints its library's figures
    (``one_library(name, rounds, 3)``) as JSON; else the table of ``measure(rounds)``, printed and written."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of interleaved timing (default 5)")
    parser.add_argument("--out", type=Path, default=default_out, help="where to write the table")
    parser.add_argument("--child", choices=["engine", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.child:
        print(json.dumps(one_library(args.child, args.rounds, 3)))
        return 0
    text = "\n".join(measure(args.rounds)) + "\n"
    print(text, end="")
    try:
        args.out.write_text(text)
    except OSError as e:
        print(f"could not write {args.out}: {e}")
        return 1
    return 0
