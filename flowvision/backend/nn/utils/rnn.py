"""``nn.utils.rnn``: padding helpers and ``PackedSequence`` (consumed by RNN / LSTM / GRU) with torch's layout."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

__all__ = ["pad_sequence", "unpad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpack_sequence", "PackedSequence"]


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Stack variable-length tensors (L_i, *) into (L_max, B, *) (or (B, L_max, *)), padding with a value."""
    from ... import _creation as C
    from ..._ops.shape import stack
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        pad = C.full((max_len - s.shape[0], *s.shape[1:]), padding_value, dtype=s.dtype)
        from ..._ops.shape import cat
        out.append(cat([s, pad] if padding_side == "right" else [pad, s], 0))
    res = stack(out, 0)
    return res if batch_first else res.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False):
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(lengths)]


class PackedSequence(namedtuple("PackedSequence", "data batch_sizes sorted_indices unsorted_indices")):
    """torch's packed batch: ``data`` holds the active rows of every time step back to back (longest sequences
    first), ``batch_sizes[t]`` how many rows step t has (int64, on the CPU), and the permutation to and from the
    caller's batch order (None when the batch was already sorted)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def float(self):
        return self.to(dtype=_D().float32)

    def double(self):
        return self.to(dtype=_D().float64)

    def cpu(self):
        return self.to("cpu")

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _D():
    from ... import _dtype
    return _dtype


def _invert_permutation(perm):
    from ... import _creation as C
    inv = np.empty(perm.numel(), np.int64)
    inv[perm.numpy().astype(np.int64)] = np.arange(perm.numel(), dtype=np.int64)
    return C.tensor(inv)


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (``batch_first``: (B, T, *)) whose sequence b has ``lengths[b]`` steps."""
    from ... import _creation as C
    from ..._tensor import Tensor
    from ..._ops.shape import cat
    lens = np.asarray(lengths.tolist() if isinstance(lengths, Tensor) else list(lengths), dtype=np.int64).reshape(-1)
    x = input.transpose(0, 1) if batch_first else input
    if lens.shape[0] != x.shape[1]:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.shape[0]} "
                         f"(batch_size={x.shape[1]})")
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lens.max(initial=0) > x.shape[0]:
        raise RuntimeError(f"lengths must not exceed the padded length {x.shape[0]}, got {int(lens.max())}")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = np.arange(lens.shape[0])
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = C.tensor(order.astype(np.int64))
        x = x.index_select(1, sorted_indices)
        lens = lens[order]
    T = int(lens[0]) if lens.size else 0
    batch_sizes = np.array([(lens > t).sum() for t in range(T)], dtype=np.int64)
    data = cat([x[t, :int(b)] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, C.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length=None):
    """Inverse of ``pack_padded_sequence``: (padded batch in the caller's order, lengths as an int64 tensor)."""
    from ... import _creation as C
    from ..._ops.shape import cat, stack
    bs = [int(b) for b in sequence.batch_sizes.tolist()]
    T, B = len(bs), bs[0]
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {T}")
    data = sequence.data
    rows, off = [], 0
    for b in bs:
        step = data[off:off + b]
        off += b
        if b < B:
            step = cat([step, C.full((B - b, *data.shape[1:]), padding_value, dtype=data.dtype)], 0)
        rows.append(step)
    for _ in range(T, total_length or T):
        rows.append(C.full((B, *data.shape[1:]), padding_value, dtype=data.dtype))
    out = stack(rows, 0)
    lens = (np.asarray(bs)[None, :] > np.arange(B)[:, None]).sum(1).astype(np.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lens = lens[sequence.unsorted_indices.numpy().astype(np.int64)]
    return (out.transpose(0, 1) if batch_first else out), C.tensor(lens)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (longest first unless ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence):
    """The list of unpadded sequences in a PackedSequence (caller's order)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
