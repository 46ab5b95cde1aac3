"""gradscope: watch the classic PyTorch tutorial train, on the project's own NumPy/CuPy engine.

    python main.py                  the desktop app
    python main.py --headless ...   the same runs without a window (see --help)
"""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
