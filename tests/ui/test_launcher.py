"""Opening the window where there is no display: one line that says so, and exit 2, not Qt's abort."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ui.launcher import missing_display

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("environ, platform, refused", [
    ({}, "linux", True),
    ({"DISPLAY": ":0"}, "linux", False),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),  # a platform that needs no display
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
    ({}, "darwin", False),
    ({}, "win32", False),
    ({}, "freebsd14", True),
])
def test_which_machines_have_no_display(environ, platform, refused):
    assert (missing_display(environ, platform) is not None) == refused


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display variables are X11's and Wayland's")
def test_the_app_without_a_display_says_so_in_one_line_and_exits_2():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run([sys.executable, "main.py", "--recipe", "poly-tensor"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr == ("main.py: error: there is no display to open the window on (neither DISPLAY nor "
                          "WAYLAND_DISPLAY is set); `python main.py --headless` trains without a window\n")
    assert out.stdout == ""
