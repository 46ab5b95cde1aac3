"""The one compiled part: the autograd graph's two hot paths in C (engine/autograd/_cgraph.c: recording a
built-in's node, and Tensor.backward()'s walk), each the same steps as the Python it stands for. Everything else
is in pyproject.toml.

``optional=True``: where no C compiler is at hand the install goes on, and the engine runs those paths in Python
(engine/autograd/_compiled.py says which).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("engine.autograd._cgraph", ["engine/autograd/_cgraph.c"], optional=True)])
