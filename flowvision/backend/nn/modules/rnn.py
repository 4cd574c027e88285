"""RNN, LSTM, GRU and their cells with torch's parameter names, initialisation, gate order and shapes.

Each time step is composed from ``F.linear`` and the gate activations, so autograd differentiates through the
sequence; the Python loop is over time steps (each step is whole-batch matrix work), never over elements.
A ``PackedSequence`` input runs each time step on the rows still active at that step (``batch_sizes[t]``, longest
first, as torch packs them), so padding never enters the states; LSTM ``proj_size`` projects ``h`` by ``weight_hr``.
"""
from __future__ import annotations

import math

from .module import Module
from ..parameter import Parameter
from ... import _creation as C
from ..._tensor import Tensor

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _F():
    from .. import functional
    return functional


def _stack(ts, dim):
    from ..._ops.shape import stack
    return stack(ts, dim)


def _cat(ts, dim):
    from ..._ops.shape import cat
    return cat(ts, dim)


def _rnn_tanh(x, h, w_ih, w_hh, b_ih, b_hh):
    F = _F()
    return (F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)).tanh()


def _rnn_relu(x, h, w_ih, w_hh, b_ih, b_hh):
    F = _F()
    return (F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)).relu()


def _lstm(x, state, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    F = _F()
    h, c = state
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)  # torch's gate order: input, forget, cell, output
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr)), c


def _gru(x, h, w_ih, w_hh, b_ih, b_hh):
    F = _F()
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)  # reset, update, new
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (1 - z) * n + z * h


class RNNBase(Module):
    _gates = 1

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None):
        super().__init__()
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError("hidden_size and num_layers must be positive")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = {"LSTM": 4, "GRU": 3}.get(mode, 1) * hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                real_h = proj_size or hidden_size
                in_size = input_size if layer == 0 else real_h * dirs
                names = [("weight_ih" + sfx, (gate, in_size)), ("weight_hh" + sfx, (gate, real_h))]
                if bias:
                    names += [("bias_ih" + sfx, (gate,)), ("bias_hh" + sfx, (gate,))]
                if proj_size:
                    names.append(("weight_hr" + sfx, (proj_size, hidden_size)))
                for name, shape in names:
                    setattr(self, name, Parameter(C.empty(*shape, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            p.data.uniform_(-stdv, stdv)

    def flatten_parameters(self) -> None:
        """No-op: parameters are used in place (torch compacts them for cuDNN)."""

    @property
    def all_weights(self):
        k = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        return [[getattr(self, n) for n in self._flat_weights_names[i:i + k]]
                for i in range(0, len(self._flat_weights_names), k)]

    def _cell(self):
        return {"RNN_TANH": _rnn_tanh, "RNN_RELU": _rnn_relu, "LSTM": _lstm, "GRU": _gru}[self.mode]

    def _weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        w = [getattr(self, "weight_ih" + sfx), getattr(self, "weight_hh" + sfx)]
        w += [getattr(self, "bias_ih" + sfx), getattr(self, "bias_hh" + sfx)] if self.bias else [None, None]
        if self.proj_size:
            w.append(getattr(self, "weight_hr" + sfx))
        return w

    def forward(self, input, hx=None):
        from ..utils.rnn import PackedSequence
        packed = isinstance(input, PackedSequence)
        if not packed and not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__} expects a Tensor or a PackedSequence, got {type(input).__name__}")
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        real_h = self.proj_size or self.hidden_size
        if packed:
            batch_sizes = [int(b) for b in input.batch_sizes.tolist()]
            B, batched = batch_sizes[0], True
            offs = [0]
            for b in batch_sizes:
                offs.append(offs[-1] + b)
            steps_in = [input.data[offs[t]:offs[t + 1]] for t in range(len(batch_sizes))]
            feat = input.data.shape[-1]
            ref = input.data
        else:
            batched = input.ndim == 3
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
            x = input if batched else input.unsqueeze(1 if not self.batch_first else 0)
            if self.batch_first:
                x = x.transpose(0, 1)
            B = x.shape[1]
            batch_sizes = [B] * x.shape[0]
            steps_in = [x[t] for t in range(x.shape[0])]
            feat = x.shape[-1]
            ref = x
        if feat != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {feat}")
        if hx is None:
            h0 = C.zeros(self.num_layers * dirs, B, real_h, dtype=ref.dtype, device=ref.device)
            c0 = C.zeros(self.num_layers * dirs, B, self.hidden_size, dtype=ref.dtype, device=ref.device)
            hx = (h0, c0) if lstm else h0
        else:
            if not batched:
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
            if packed and input.sorted_indices is not None:  # the caller's hx is in the original batch order
                hx = tuple(h.index_select(1, input.sorted_indices) for h in hx) if lstm else \
                    hx.index_select(1, input.sorted_indices)
        expects = [(self.num_layers * dirs, B, real_h)] + ([(self.num_layers * dirs, B, self.hidden_size)]
                                                             if lstm else [])
        for h, expect in zip(hx if lstm else (hx,), expects):
            if tuple(h.shape) != expect:
                raise RuntimeError(f"Expected hidden size {expect}, got {list(h.shape)}")
        cell = self._cell()
        F = _F()
        h_n, c_n = [], []
        layer_in = steps_in
        T = len(batch_sizes)
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                state = (hx[0][k], hx[1][k]) if lstm else hx[k]
                w = self._weights(layer, d)
                seq = [None] * T
                for t in (range(T - 1, -1, -1) if d else range(T)):
                    bs = batch_sizes[t]
                    if bs == B:
                        state = cell(layer_in[t], state, *w)
                        seq[t] = state[0] if lstm else state
                        continue
                    # packed input: only the first bs rows (the longest sequences) are still running; the rest keep
                    # their state (forward: already final; reverse: not started yet)
                    cur = tuple(s[:bs] for s in state) if lstm else state[:bs]
                    new = cell(layer_in[t], cur, *w)
                    seq[t] = new[0] if lstm else new
                    state = tuple(_cat([n, s[bs:]], 0) for n, s in zip(new, state)) if lstm else \
                        _cat([new, state[bs:]], 0)
                outs.append(seq)
                if lstm:
                    h_n.append(state[0])
                    c_n.append(state[1])
                else:
                    h_n.append(state)
            layer_in = outs[0] if dirs == 1 else [_cat([a, b], -1) for a, b in zip(outs[0], outs[1])]
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = [F.dropout(s, self.dropout, True) for s in layer_in]
        hn = _stack(h_n, 0)
        hidden = (hn, _stack(c_n, 0)) if lstm else hn
        if packed:
            if input.unsorted_indices is not None:
                hidden = tuple(h.index_select(1, input.unsorted_indices) for h in hidden) if lstm else \
                    hidden.index_select(1, input.unsorted_indices)
            out = PackedSequence(_cat(layer_in, 0), input.batch_sizes, input.sorted_indices, input.unsorted_indices)
            return out, hidden
        out = _stack(layer_in, 0)
        out = out.transpose(0, 1) if self.batch_first else out
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        return out, hidden

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _bind(signature_fn, args, kwargs):
    """torch declares RNN/LSTM/GRU.__init__(*args, **kwargs); bind them to the documented signature."""
    import inspect
    return inspect.signature(signature_fn).bind(*args, **kwargs).arguments


def _rnn_sig(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False, dropout=0.0,
             bidirectional=False, device=None, dtype=None):
    pass


def _lstm_sig(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
              proj_size=0, device=None, dtype=None):
    pass


def _gru_sig(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
             device=None, dtype=None):
    pass


class RNN(RNNBase):
    """Elman RNN with tanh or relu (``nonlinearity``):
    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        a = _bind(_rnn_sig, args, kwargs)
        nonlinearity = a.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", **a)


class LSTM(RNNBase):
    """``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", **_bind(_lstm_sig, args, kwargs))


class GRU(RNNBase):
    """``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", **_bind(_gru_sig, args, kwargs))


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(C.empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(C.empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(C.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(C.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            p.data.uniform_(-stdv, stdv)

    def _prep(self, input, hx, n_states):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            z = C.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
            hx = (z, z) if n_states == 2 else z
        elif not batched:
            hx = tuple(h.unsqueeze(0) for h in hx) if n_states == 2 else hx.unsqueeze(0)
        return x, hx, batched

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, h, batched = self._prep(input, hx, 1)
        fn = _rnn_tanh if self.nonlinearity == "tanh" else _rnn_relu
        out = fn(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, state, batched = self._prep(input, hx, 2)
        h, c = _lstm(x, state, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, h, batched = self._prep(input, hx, 1)
        out = _gru(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)
