"""The gates of torch's fused recurrent modules: nn.LSTM, nn.GRU, nn.RNN and their cells.

These modules run their sigmoid and tanh gates inside one fused op (`torch._VF.lstm`, ...), so
neither an activation module nor a functional call ever shows them, and their output (the
hidden state) says little about them: an LSTM whose input gates sit at 0 and forget gates at 1
returns ordinary hidden states while no gradient reaches its weights. On a full-statistics step
the monitor recomputes one call's gate activations from its inputs and weights (no gradient,
in float32) and credits their saturated fraction, pooled over every gate of every layer and
direction, to the module (`gate_row`).

The recomputation runs each layer again (the fused op, to get the layer's hidden states), then
every gate of every time step in two batched matmuls. It covers at most `MAX_SEQUENCES`
sequences of the batch; padding of a PackedSequence is left out. Dropout between the layers
of a multi-layer module is not applied (the upper layers see their inputs undropped), and an
initial state passed as a keyword argument is taken as zeros.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from neuraldbg.capture.watched_units import saturation_mask

#: Sequences of a batch whose gates are recomputed (a representative slice, bounded cost).
MAX_SEQUENCES = 16

_SIGMOID, _TANH = nn.Sigmoid(), nn.Tanh()


def is_fused_recurrent(module: nn.Module) -> bool:
    """An nn.LSTM, nn.GRU or tanh nn.RNN, or one of their cells: gates the monitor cannot see
    as they run. (A ReLU nn.RNN has no gate: its output is its ReLUs', measured as such.)"""
    if isinstance(module, (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell)):
        return True
    if isinstance(module, (nn.RNN, nn.RNNCell)):
        return module.nonlinearity == "tanh"
    return False


def gate_row(module: nn.Module, args: tuple[Any, ...]) -> torch.Tensor | None:
    """(saturated fraction, NaN, NaN) of the gates of one call of a fused recurrent module, as
    `functional_acts.Row`; None when the call's input is not one it can recompute."""
    if not args:
        return None
    x = args[0].data if isinstance(args[0], PackedSequence) else args[0]
    device = x.device.type if isinstance(x, torch.Tensor) else "cpu"
    with torch.no_grad(), torch.autocast(device, enabled=False):
        counts = (_cell(module, args) if isinstance(module, nn.RNNCellBase)
                  else _stack(module, args) if isinstance(module, nn.RNNBase) else None)
    if counts is None:
        return None
    saturated, total = counts
    nan = torch.full((), float("nan"), device=saturated.device)
    return torch.stack([saturated / total, nan, nan])


class _Tally:
    """Saturated and total gate elements, summed on the device."""

    def __init__(self) -> None:
        self.saturated: torch.Tensor | None = None
        self.total: torch.Tensor | None = None

    def add(self, act: nn.Module, y: torch.Tensor, mask: torch.Tensor | None) -> None:
        """Gate values `y` (..., H) of activation `act`; `mask` (...) keeps the real steps."""
        sat = saturation_mask(act, y)
        if mask is None:
            s = sat.sum(dtype=torch.float32)
            n = torch.tensor(float(sat.numel()), device=y.device)
        else:
            m = mask.unsqueeze(-1)
            s = (sat & m).sum(dtype=torch.float32)
            n = m.sum(dtype=torch.float32) * y.shape[-1]
        self.saturated = s if self.saturated is None else self.saturated + s
        self.total = n if self.total is None else self.total + n

    def result(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        if self.saturated is None or self.total is None:
            return None
        return self.saturated, self.total.clamp_min(1.0)


def _gates(module: nn.Module, gi: torch.Tensor, gh: torch.Tensor, tally: _Tally,
           mask: torch.Tensor | None) -> None:
    """Tally the gates of pre-activations gi (input part) and gh (hidden part)."""
    if isinstance(module, (nn.LSTM, nn.LSTMCell)):
        i, f, g, o = (gi + gh).chunk(4, -1)
        for gate in (i, f, o):
            tally.add(_SIGMOID, torch.sigmoid(gate), mask)
        tally.add(_TANH, torch.tanh(g), mask)
    elif isinstance(module, (nn.GRU, nn.GRUCell)):
        ir, iz, in_ = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = torch.sigmoid(ir + hr)
        tally.add(_SIGMOID, r, mask)
        tally.add(_SIGMOID, torch.sigmoid(iz + hz), mask)
        tally.add(_TANH, torch.tanh(in_ + r * hn), mask)
    else:
        tally.add(_TANH, torch.tanh(gi + gh), mask)


def _affine(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    y = x @ w.float().t()
    return y + b.float() if b is not None else y


def _cell(module: nn.RNNCellBase, args: tuple[Any, ...]
          ) -> tuple[torch.Tensor, torch.Tensor] | None:
    x = args[0]
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        return None
    x = x.detach().float()
    if x.dim() == 1:
        x = x.unsqueeze(0)
    x = x[:MAX_SEQUENCES]
    if not x.numel():
        return None
    hx = args[1] if len(args) > 1 else None
    if isinstance(hx, tuple):  # LSTMCell: (h, c)
        hx = hx[0]
    if isinstance(hx, torch.Tensor):
        h = hx.detach().float().reshape(-1, module.hidden_size)[:MAX_SEQUENCES]
    else:
        h = x.new_zeros(x.shape[0], module.hidden_size)
    tally = _Tally()
    _gates(module, _affine(x, module.weight_ih, module.bias_ih),
           _affine(h, module.weight_hh, module.bias_hh), tally, None)
    return tally.result()


def _stack(module: nn.RNNBase, args: tuple[Any, ...]
           ) -> tuple[torch.Tensor, torch.Tensor] | None:
    x, mask, lengths = _sequences(module, args[0])
    if x is None:
        return None
    layers, dirs, batch = module.num_layers, 2 if module.bidirectional else 1, x.shape[1]
    h0, c0 = _initial(module, args[1] if len(args) > 1 else None, layers * dirs, batch, x)
    tally = _Tally()
    inp = x
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [getattr(module, n + sfx).float()
                 for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")
                 if hasattr(module, n + sfx)]  # the order `torch._VF` takes them in
            b_ih, b_hh = (w[2], w[3]) if module.bias else (None, None)
            k = layer * dirs + d
            seq = inp if d == 0 else _reverse(inp, lengths)
            hs = _run(module, seq, w, h0[k:k + 1], None if c0 is None else c0[k:k + 1])
            prev = torch.cat([h0[k:k + 1], hs[:-1]])  # the state each step starts from
            # reversing each sequence within its length keeps the padding where it was: the
            # mask of real steps is the same in both directions
            _gates(module, _affine(seq, w[0], b_ih), _affine(prev, w[1], b_hh), tally, mask)
            outs.append(hs if d == 0 else _reverse(hs, lengths))
        inp = torch.cat(outs, -1) if dirs > 1 else outs[0]
    return tally.result()


def _sequences(module: nn.RNNBase, x: Any
               ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """The input as (T, B, features) float32 over at most MAX_SEQUENCES sequences, the mask
    of real steps (T, B) and the lengths, both None when every step is real."""
    if isinstance(x, PackedSequence):
        padded, lengths = pad_packed_sequence(x, batch_first=False)
        padded = padded[:, :MAX_SEQUENCES].detach().float()
        lengths = lengths[:MAX_SEQUENCES].to(padded.device)
        steps = torch.arange(padded.shape[0], device=padded.device)
        return padded, steps[:, None] < lengths[None, :], lengths
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() not in (2, 3):
        return None, None, None
    x = x.detach().float()
    if x.dim() == 2:  # unbatched (T, features)
        x = x.unsqueeze(1)
    elif module.batch_first:
        x = x.transpose(0, 1)
    x = x[:, :MAX_SEQUENCES]
    return (x, None, None) if x.numel() else (None, None, None)


def _initial(module: nn.RNNBase, hx: Any, states: int, batch: int, x: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(h0, c0) as (layers * directions, B, size) float32 (zeros where not given)."""
    h_size = module.proj_size if getattr(module, "proj_size", 0) > 0 else module.hidden_size
    lstm = isinstance(module, nn.LSTM)
    h, c = (hx if isinstance(hx, tuple) else (None, None)) if lstm else (hx, None)

    def state(t: Any, size: int) -> torch.Tensor:
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            t = t.detach().float()
            if t.dim() == 2:  # unbatched
                t = t.unsqueeze(1)
            t = t[:, :MAX_SEQUENCES] if t.dim() == 3 else t
            if t.shape == (states, batch, size):
                return t
        # not given, or not a state of this module (a custom subclass's own argument)
        return x.new_zeros(states, batch, size)

    return state(h, h_size), (state(c, module.hidden_size) if lstm else None)


def _reverse(t: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    """Each sequence of `t` (T, B, ...) reversed over its own length (padding stays after)."""
    if lengths is None:
        return t.flip(0)
    steps = torch.arange(t.shape[0], device=t.device)[:, None]
    idx = torch.where(steps < lengths[None, :], lengths[None, :] - 1 - steps, steps)
    idx = idx.reshape(*idx.shape, *([1] * (t.dim() - 2))).expand_as(t)
    return t.gather(0, idx)


def _run(module: nn.RNNBase, seq: torch.Tensor, weights: list[torch.Tensor], h0: torch.Tensor,
         c0: torch.Tensor | None) -> torch.Tensor:
    """The hidden states (T, B, size) of one layer and direction over `seq` (T, B, features)."""
    bias = module.bias
    with warnings.catch_warnings():
        # one layer's weights are not the module's flattened cuDNN buffer (a copy per call, on
        # full-statistics steps only); projections without oneDNN: the model's call said so
        warnings.filterwarnings("ignore", "RNN module weights are not part of single")
        warnings.filterwarnings("ignore", "LSTM with projections")
        if isinstance(module, nn.LSTM):
            assert c0 is not None
            return torch._VF.lstm(seq, (h0, c0), weights, bias, 1, 0.0, False, False, False)[0]
        run = torch._VF.gru if isinstance(module, nn.GRU) else torch._VF.rnn_tanh
        return run(seq, h0, weights, bias, 1, 0.0, False, False, False)[0]
