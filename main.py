"""gradscope: watch the classic PyTorch tutorial train, on the project's own NumPy/CuPy engine.

    python main.py                  the desktop app
    python main.py --headless ...   the same runs without a window (see --help)

The composition root: the only module that imports both ``app`` (the command line, the runs) and ``ui`` (the
window). It parses, then runs headless or opens the window.
"""

from __future__ import annotations

import sys

from app import cli


def main(argv=None) -> int:
    try:
        args = cli.parse(argv)
        if args.headless:
            return cli.run_headless(args)
        options = cli.desktop_options(args)
    except cli.UsageError as exc:
        return cli.fail(str(exc))
    from ui.launcher import launch  # only the desktop app needs Qt

    return launch(options)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
