"""``torch.nn.utils.convert_parameters``: where PyTorch defines ``parameters_to_vector`` and
``vector_to_parameters`` (a script may import them from here); the engine's are in :mod:`engine.nn.utils`."""

from . import parameters_to_vector, vector_to_parameters

__all__ = ["parameters_to_vector", "vector_to_parameters"]
