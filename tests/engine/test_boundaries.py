"""The engine imports and runs with PySide6 absent, and never imports Qt, app or ui."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_works_with_pyside6_blocked():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        import engine as torch
        x = torch.randn(8, 4, requires_grad=True)
        (x.mm(torch.randn(4, 2)).clamp(min=0) ** 2).sum().backward()
        assert x.grad.shape == (8, 4)
        import app.config, app.recipes, app.runner, app.gradients, app.export, app.cli
        bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'ui')]
        assert not bad, bad
        print('ok')
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_engine_sources_import_no_qt_app_or_ui():
    for path in (ROOT / "engine").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for word in ("PySide6", "pyqtgraph", "from app", "import app", "from ui", "import ui"):
            assert word not in text, f"{path.relative_to(ROOT)} mentions {word}"


def test_ui_never_imports_cupy():
    for path in (ROOT / "ui").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import cupy" not in text and "from cupy" not in text, path.name
