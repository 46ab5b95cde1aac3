"""``engine.nn.utils.rnn``: sequences of different lengths in one batch, as ``torch.nn.utils.rnn``'s.

``pad_sequence`` stacks them with padding; ``pack_padded_sequence`` keeps only the real steps, time-major, longest
sequence first (``PackedSequence``: ``data``, ``batch_sizes``, ``sorted_indices``, ``unsorted_indices``), which
nn.RNN/LSTM/GRU read so that no sequence runs past its end (its final state is the one at its own last step);
``pad_packed_sequence`` turns a packed output back into a padded batch and its lengths.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """The real steps of a batch of sequences, time-major: ``data[:batch_sizes[0]]`` is every sequence's first step
    (longest first), then the second steps of those that have one, and so on. ``sorted_indices`` put the batch in
    that order, ``unsorted_indices`` back."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def to(self, *args, **kwargs) -> PackedSequence:
        return type(self)(self.data.to(*args, **kwargs), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)


def _invert(permutation: Tensor) -> Tensor:
    order = permutation.cpu().numpy() if isinstance(permutation, Tensor) else np.asarray(permutation)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return creation.tensor(inverse, dtype=dtypes.int64, device=permutation.device)


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"lengths must be a 1D tensor, got {lengths.dim()}D")
        return [int(v) for v in lengths.cpu().tolist()]
    return [int(v) for v in lengths]


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Tensors of shape ``(L_i, *)`` stacked into ``(L_max, B, *)`` (``(B, L_max, *)`` with ``batch_first``), each
    padded with ``padding_value`` after its end (before it with ``padding_side='left'``)."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = creation.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = creation.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return creation.stack(rows, 0 if batch_first else 1)


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """The real steps of a padded batch, ``lengths[i]`` of sequence ``i``: see :class:`PackedSequence`."""
    lengths = _lengths_list(lengths)
    if len(lengths) != input.shape[0 if batch_first else 1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} (batch_size="
                           f"{input.shape[0 if batch_first else 1]})")
    if any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable: ties keep their order
        sorted_indices = creation.tensor(order, dtype=dtypes.int64, device=input.device)
    x = input.transpose(0, 1) if batch_first else input
    if lengths[order[0]] > x.shape[0]:
        raise RuntimeError(f"a length {lengths[order[0]]} is longer than the padded sequences ({x.shape[0]} steps)")
    if sorted_indices is not None:
        x = x[:, sorted_indices]
    ordered = [lengths[i] for i in order]
    batch_sizes = [sum(1 for n in ordered if n > t) for t in range(ordered[0])]
    data = creation.cat([x[t, :b] for t, b in enumerate(batch_sizes)])
    inverse = None
    if sorted_indices is not None:  # from the host's list: reading the device's indices back would wait for it
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        inverse = creation.tensor(back, device=input.device)
    return PackedSequence(data, creation.tensor(batch_sizes, dtype=dtypes.int64), sorted_indices, inverse)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple:
    """The padded batch (in the order the sequences were given) and their lengths (an int64 CPU tensor)."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    steps, batch = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    rows, start = [], 0
    for b in batch_sizes:
        step = data[start:start + b]
        if b < batch:
            step = creation.cat([step, creation.full((batch - b, *data.shape[1:]), padding_value, dtype=data.dtype,
                                                     device=data.device)])
        rows.append(step)
        start += b
    for _ in range(steps - len(batch_sizes)):
        rows.append(creation.full((batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device))
    padded = creation.stack(rows)  # (steps, B, *), longest first
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded[:, sequence.unsorted_indices]
        back = sequence.unsorted_indices.cpu().tolist()
        lengths = [lengths[i] for i in back]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, creation.tensor(lengths, dtype=dtypes.int64)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The sequences of a padded batch, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
