"""The one compiled part: Tensor.backward()'s walk in C (engine/autograd/_cgraph.c, the same walk as
engine/autograd/graph.py's, without the interpreter's bookkeeping). Everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand the install goes on, and the engine walks in Python.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("engine.autograd._cgraph", ["engine/autograd/_cgraph.c"], optional=True)])
