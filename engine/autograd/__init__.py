"""Autograd: grad mode (:mod:`.grad_mode`), the ``Function`` every op is made of (:mod:`.function`), and the
backward walk (:mod:`.graph`). ``implementation()`` says whether recording and the walk run compiled
(:mod:`._compiled`) or in Python."""

from __future__ import annotations

from ._compiled import kind as implementation
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .describe import GraphDescription, GraphNode, describe  # noqa: E402 - after graph: it imports Tensor
from .function import Function
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck  # (the functions shadow the module, as in PyTorch)
from .graph import backward, grad, unbroadcast
from .variable import Variable

__all__ = ["Function", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "backward", "grad", "unbroadcast", "describe", "GraphDescription", "GraphNode", "implementation",
           "gradcheck", "gradgradcheck", "detect_anomaly", "set_detect_anomaly", "Variable"]
