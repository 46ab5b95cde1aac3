"""``engine.nn``: the layers and losses the tutorial's later steps use."""

from . import functional, init, utils
from .modules import (
    ELU,
    BatchNorm1d,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    Module,
    ModuleList,
    MSELoss,
    NLLLoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)

__all__ = ["functional", "init", "utils", "Module", "Parameter", "Linear", "ReLU", "Sigmoid", "Tanh", "Identity",
           "Flatten", "Sequential", "ModuleList", "Softmax", "LogSoftmax", "Dropout", "MSELoss", "L1Loss",
           "CrossEntropyLoss", "LeakyReLU", "LayerNorm", "BatchNorm1d", "BCELoss", "BCEWithLogitsLoss", "NLLLoss",
           "SiLU", "ELU", "Softplus"]
