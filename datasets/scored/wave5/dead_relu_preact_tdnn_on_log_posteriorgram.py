"""A keyword spotter runs on phone posteriorgrams produced by an upstream (frozen) acoustic
model, stored as per-frame log-posteriors (log_softmax output, so every value is <= 0). The
spotter is a pre-activation TDNN copied from a ResNet-v2 style code base: each block is
ReLU -> dilated Conv1d, and the normalisation layer that originally came before the first ReLU
was dropped. The very first ReLU therefore sees an input that is negative everywhere (log
probabilities lie in about [-12, 0)) and outputs exactly zero for every frame of every
utterance: the first convolution only ever sees zeros, every later layer sees a constant, all
weight gradients below the head are zero, and the loss sits at log 2 with no NaN. The fix only
restores a (parameter-free, per-utterance mean/variance) normalisation in front of that first
ReLU, so its input is centred and about half of it passes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "blocks.0.act"
SOURCE = ("pre-activation (ReLU-first) blocks fed directly with non-positive features such as "
          "log-posteriors / log-probabilities; 'ReLU before the first conv kills a negative input'")

NPH, NFR = 20, 60
KEYWORD = [5, 9, 2]


class PreActBlock(nn.Module):
    def __init__(self, cin, cout, dil, norm=False):
        super().__init__()
        self.norm = norm
        self.act = nn.ReLU()
        self.conv = nn.Conv1d(cin, cout, 3, dilation=dil, padding=dil)

    def forward(self, x):
        if self.norm:   # parameter-free per-utterance mean/variance normalisation over time
            x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
        return self.conv(self.act(x))


class PreActTDNN(nn.Module):
    def __init__(self, norm_first):
        super().__init__()
        self.blocks = nn.Sequential(PreActBlock(NPH, 32, 1, norm_first),
                                    PreActBlock(32, 32, 2),
                                    PreActBlock(32, 32, 4))
        self.head = nn.Linear(32, 2)

    def forward(self, logpost):                          # (B, NPH, NFR), values <= 0
        h = F.relu(self.blocks(logpost))
        return self.head(h.max(-1).values)


def _batch(g, bs):
    y = torch.randint(0, 2, (bs,), generator=g)
    dom = torch.randint(0, NPH, (bs, NFR // 3), generator=g)
    for i in range(bs):
        if y[i] == 1:
            s = int(torch.randint(0, NFR // 3 - len(KEYWORD), (1,), generator=g))
            dom[i, s:s + len(KEYWORD)] = torch.tensor(KEYWORD)
        else:   # make sure the exact keyword sequence does not occur by chance
            for s in range(NFR // 3 - len(KEYWORD) + 1):
                if dom[i, s:s + len(KEYWORD)].tolist() == KEYWORD:
                    dom[i, s] = (KEYWORD[0] + 1) % NPH
    dom = dom.repeat_interleave(3, dim=1)                # each phone lasts 3 frames
    logits = 4.0 * F.one_hot(dom, NPH).float() + 1.0 * torch.randn(bs, NFR, NPH, generator=g)
    return F.log_softmax(logits, -1).transpose(1, 2).contiguous(), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = PreActTDNN(norm_first=fixed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps, bs = 150, 32
    batches = [_batch(g, bs) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
