"""The compiled parts, each the same steps as the Python it stands for: the autograd graph's two hot paths
(engine/autograd/_cgraph.c: recording a built-in's node, and Tensor.backward()'s walk) and the CPU backward's
masked writes, GELU and layer norm (engine/_ckernels.c: the ReLU's and clamp's gradient, grad_h[h < 0] = 0; erf
and GELU, forward and backward; layer norm's rows, forward and backward; the long passes cut across threads).
Everything else is in pyproject.toml.

``optional=True``: where no C compiler is at hand the install goes on, and the engine runs those paths in Python
(engine/autograd/_compiled.py and engine/kernels.py say which).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("engine.autograd._cgraph", ["engine/autograd/_cgraph.c"], optional=True),
                   # no FP traps are relied on: without that promise the compiler keeps erf's clamps as branches
                   # and GELU's float32 loops unvectorised
                   Extension("engine._ckernels", ["engine/_ckernels.c"], libraries=["m"],
                             extra_compile_args=["-fno-trapping-math"], optional=True)])
