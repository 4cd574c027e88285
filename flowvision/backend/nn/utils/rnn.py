"""``nn.utils.rnn``: padding helpers. ``PackedSequence`` is not supported by the recurrent layers here, so the
pack functions raise ``NotImplementedError``; ``pad_sequence`` / ``unpad_sequence`` work."""
from __future__ import annotations

__all__ = ["pad_sequence", "unpad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "PackedSequence"]


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


class PackedSequence:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("PackedSequence is not supported: pass padded batches (pad_sequence) to the "
                                  "recurrent layers")


def pack_padded_sequence(*args, **kwargs):
    raise NotImplementedError("pack_padded_sequence is not supported: pass the padded batch to the RNN directly")


pad_packed_sequence = pack_sequence = pack_padded_sequence
