"""The engine imports and runs with PySide6 absent, and never imports Qt, app or ui."""

from __future__ import annotations

import os
import re
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
            # whole words: "import apply" imports no app
            assert re.search(rf"\b{word}\b", text) is None, f"{path.relative_to(ROOT)} mentions {word}"


def test_ui_never_imports_cupy():
    for path in (ROOT / "ui").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import cupy" not in text and "from cupy" not in text, path.name


def test_only_main_is_the_composition_root():
    """main.py imports app and ui; nothing imports main (import-linter's layers take packages only)."""
    for folder in ("engine", "app", "ui", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "import main" not in text and "from main " not in text, path.relative_to(ROOT)
    text = (ROOT / "main.py").read_text(encoding="utf-8")
    assert "from app import cli" in text and "from ui.launcher import launch" in text


def test_the_import_contracts_hold():
    """`make lint` runs import-linter; this runs the same contracts in the suite (they need no network)."""
    out = subprocess.run([sys.executable, "-c", "import importlinter.cli as c, sys; sys.exit(c.lint_imports())"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken." in out.stdout


def _engine_import_graph() -> dict[str, set[str]]:
    """Module -> the engine modules it imports (at any level, lazily too), read from the sources."""
    import ast

    modules = {}
    for path in (ROOT / "engine").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                subs = {f"{target}.{a.name}" for a in node.names} & modules.keys()
                graph[name] |= (subs or {target}) & modules.keys() - {name}
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names} & modules.keys() - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_engines_only_import_cycle_is_tensor_autograd_functions():
    """Tensor methods call their Functions, Functions make Tensors, the walk runs Functions: that circle belongs
    (as tinygrad's tensor <-> mlops). Anything else in a circle is an accident: error texts, the capture flag,
    the legacy types and memory accounting live in leaves. (engine.tensor_math is the rest of Tensor's methods,
    mixed into it.)"""
    core = {"engine.tensor", "engine.tensor_math", "engine.autograd.function", "engine.autograd.graph",
            "engine.functions", "engine.functions.arithmetic", "engine.functions.elementwise",
            "engine.functions.reduction", "engine.functions.shape", "engine.functions.conv",
            "engine.functions.loss", "engine.functions.linalg", "engine.functions.activation",
            "engine.functions.distance", "engine.functions.attention", "engine.functions.complex_ops",
            "engine.functions.spectral"}
    assert _cycles(_engine_import_graph()) == [core]


def test_every_package_of_the_project_is_in_the_wheel():
    """pyproject.toml lists its packages by name: a new subpackage left out of the list imports in a checkout
    (and an editable install) but is missing from a built wheel (engine.optim and engine.utils once were)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts) for top in ("engine", "app", "ui")
             for init in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set(), "packages missing from [tool.setuptools] packages"
    assert [p for p in listed if not (ROOT / p.replace(".", "/")).is_dir()] == []  # ui.resources: data, no code
