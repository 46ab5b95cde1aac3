"""The tutorial's programs, as scripts to run in the app (File -> Examples, or ``main.py --script``) or to copy
and edit, written with ``import torch`` (inside the app ``torch`` is the project's engine). The seed tutorials'
own listings are here as they were given (the NumPy warm-up, tensors, the custom Function, logistic regression:
tests/engine/test_seeds.py runs them), with the tutorial's autograd, nn and optim programs and today's fit of
sin(x), and that fit as one's own training script is often written (a DataLoader's shuffled mini-batches, a
learning-rate schedule, a held-out set, a checkpoint saved and loaded back), a first convolutional net on digits
it draws itself, a denoising autoencoder that rebuilds those digits from noise with transposed convolutions, a
physics-informed network that learns sin(x) from the equation it solves (gradients of gradients), a spectral layer
with complex weights that learns how heat spreads (torch.fft), a character-level
model that makes up names (makemore's, after the tutorial), a recurrent net that reads a surname letter by letter and tells its language, and a small GPT
built as GPT-2 is (nanoGPT's), writing like the text it read."""

from __future__ import annotations

import importlib.resources

TITLES = {
    "two_layer_numpy.py": "Two-layer net: NumPy (stepped by its print(t, loss))",
    "two_layer_tensor.py": "Two-layer net: tensors, backward written by hand",
    "two_layer_autograd.py": "Two-layer net: autograd",
    "two_layer_custom_function.py": "Two-layer net: a custom autograd.Function",
    "two_layer_nn.py": "Two-layer net: nn",
    "two_layer_optim.py": "Two-layer net: optim",
    "polynomial_autograd.py": "Fit sin(x): autograd (today's tutorial)",
    "polynomial_nn_optim.py": "Fit sin(x): nn and optim.RMSprop (today's tutorial)",
    "logistic_regression.py": "Logistic regression from scratch (What is torch.nn really?)",
    "minibatch_schedule_checkpoint.py": "Past the tutorial: mini-batches, a schedule, a checkpoint",
    "cnn_digits.py": "Past the tutorial: a small CNN reads drawn digits (Conv2d, MaxPool2d)",
    "denoising_autoencoder.py": "Past the tutorial: an autoencoder cleans noisy digits (ConvTranspose2d, OneCycleLR)",
    "physics_informed.py": "Past the tutorial: a physics-informed net learns sin(x) from u'' + u = 0 (create_graph)",
    "spectral_heat.py": "Past the tutorial: a spectral layer learns how heat spreads (torch.fft, complex weights)",
    "names_mlp.py": "Past the tutorial: a character-level model makes up names (Embedding, multinomial)",
    "names_rnn.py": "Past the tutorial: a recurrent net tells a surname's language (nn.RNN, letter by letter)",
    "tiny_gpt.py": "Past the tutorial: a small GPT learns to write like a text (attention, GELU, AdamW, top-k)",
}


def examples() -> list[tuple[str, str]]:
    """(title, path) of each example, in the tutorial's order."""
    folder = importlib.resources.files(__name__)
    return [(title, str(folder / name)) for name, title in TITLES.items() if (folder / name).is_file()]
