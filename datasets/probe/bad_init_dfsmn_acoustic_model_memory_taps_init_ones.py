"""Deep-FSMN (Zhang et al. 2018) frame-level acoustic model (fbank frames -> senone-like
state posteriors).  Each FSMN layer is hidden Linear+ReLU -> linear projection -> memory
block: a per-channel FIR filter over N1 past and N2 future frames (a depthwise Conv1d),
added to the projection and to the previous layer's memory through a skip connection.

Bug: the user initialises the memory-block filter taps with `nn.init.ones_`, reasoning
"start as a moving average" -- but forgets the 1/(N1+N2+1) normalisation.  Speech
projections are strongly correlated across neighbouring frames, so each memory block
output is ~(N1+N2+1) times its input; with the skip connection and the following
projection layers the activation scale multiplies by several times per layer from
step 0.  The logits start tens of times too large (cross entropy 15-70 instead of
ln(24) ~ 3.2) and, worse, the backward pass is amplified by the same factors: the
first momentum-SGD step (Kaldi-style recipe lr) throws the early layers so far that the
loss jumps to 1e3-1e12 and becomes NaN within a few steps.

ORIGIN: `layers.0.memory` -- the first memory block whose taps are wrongly initialised;
the geometric growth starts at its output.

Fix: keep the default (kaiming-uniform, fan-in scaled) init of the memory taps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0.memory"
SOURCE = ("DFSMN / FSMN acoustic models (Zhang et al., 'Deep-FSMN for large vocabulary "
          "continuous speech recognition', ICASSP 2018) and Kaldi/PyTorch ports where the "
          "memory block is a depthwise FIR; moving-average init of FIR taps without the "
          "1/(2N+1) factor")


class FSMNLayer(nn.Module):
    def __init__(self, din, hidden, proj, lookback, lookahead, first):
        super().__init__()
        self.hidden = nn.Linear(din, hidden)
        self.act = nn.ReLU()
        self.proj = nn.Linear(hidden, proj, bias=False)
        self.lookback, self.lookahead = lookback, lookahead
        self.memory = nn.Conv1d(proj, proj, lookback + lookahead + 1, groups=proj, bias=False)
        self.first = first

    def forward(self, x, prev_mem):
        # x: (B, T, din)
        p = self.proj(self.act(self.hidden(x)))
        pt = F.pad(p.transpose(1, 2), (self.lookback, self.lookahead))
        m = p + self.memory(pt).transpose(1, 2)
        if not self.first:
            m = m + prev_mem  # DFSMN skip connection between memory blocks
        return m


class DFSMN(nn.Module):
    def __init__(self, feat, n_layers, hidden, proj, lookback, lookahead, n_states):
        super().__init__()
        self.inp = nn.Linear(feat, proj)
        self.layers = nn.ModuleList(
            FSMNLayer(proj, hidden, proj, lookback, lookahead, i == 0) for i in range(n_layers))
        self.out_hidden = nn.Linear(proj, hidden)
        self.out_act = nn.ReLU()
        self.out = nn.Linear(hidden, n_states)

    def forward(self, feats):
        x = self.inp(feats)
        mem = None
        for layer in self.layers:
            mem = layer(x, mem)
            x = mem
        return self.out(self.out_act(self.out_hidden(x)))  # (B, T, n_states)


def _utterances(g, n, bs, T, feat, n_states, means):
    batches = []
    for _ in range(n):
        labels = torch.empty(bs, T, dtype=torch.long)
        for b in range(bs):
            t = 0
            while t < T:
                d = int(torch.randint(4, 12, (1,), generator=g))
                labels[b, t:t + d] = torch.randint(0, n_states, (1,), generator=g)
                t += d
        x = means[labels] + 0.8 * torch.randn(bs, T, feat, generator=g)
        # fbank-like temporal smoothing (overlapping analysis windows)
        x = F.avg_pool1d(x.transpose(1, 2), 3, 1, 1, count_include_pad=False).transpose(1, 2)
        batches.append((x, labels))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_layers=4, hidden=96, proj=48, lb=8, la=4, bs=8, T=60, lr=0.05, steps=80),
           dict(n_layers=6, hidden=64, proj=32, lb=6, la=2, bs=6, T=50, lr=0.03, steps=90),
           dict(n_layers=3, hidden=128, proj=48, lb=10, la=5, bs=8, T=64, lr=0.05, steps=70)][seed % 3]
    feat, n_states = 40, 24
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    means = 1.5 * torch.randn(n_states, feat, generator=g)
    model = DFSMN(feat, cfg["n_layers"], cfg["hidden"], cfg["proj"], cfg["lb"], cfg["la"], n_states)
    if not fixed:
        for layer in model.layers:
            nn.init.ones_(layer.memory.weight)  # "moving average" start, missing 1/(N1+N2+1)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    batches = _utterances(g, cfg["steps"], cfg["bs"], cfg["T"], feat, n_states, means)

    def loss_fn(logits, labels):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
