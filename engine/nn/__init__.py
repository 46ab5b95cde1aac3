"""``engine.nn``: the layers and losses the tutorial's later steps use."""

from . import functional
from .modules import (
    CrossEntropyLoss,
    Flatten,
    Identity,
    Linear,
    Module,
    MSELoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)

__all__ = ["functional", "Module", "Parameter", "Linear", "ReLU", "Sigmoid", "Tanh", "Identity", "Flatten",
           "Sequential", "MSELoss", "CrossEntropyLoss"]
