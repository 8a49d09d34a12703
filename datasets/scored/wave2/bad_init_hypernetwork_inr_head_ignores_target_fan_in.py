"""Hypernetwork that emits all weights of a deep ReLU implicit neural representation (INR):
each training signal (a 1-D wave profile) has a learned latent code (nn.Embedding), a linear
hypernetwork head maps the code to the flattened weights of a 5-7 layer coordinate MLP, and that
generated MLP is evaluated at the sample coordinates. The head keeps PyTorch's default Linear
init, which is scaled for the HEAD's fan-in (the code size) and ignores the fan-in of the target
layers it feeds: with N(0, 1) codes every generated target weight has variance ~1/3 instead of
~2/fan_in, so each generated layer multiplies the activation scale by ~sqrt(fan_in/3*2) ~ 3-4
and the output is several to 100x too large from step 0. The huge residuals give huge gradients
and the first momentum-SGD steps blow the head up until the loss is inf/NaN. The fixed run only
re-initialises the head with hyperfan-in init (std sqrt(2 / (code_dim * fan_in_target)), zero
bias), everything else identical."""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "head"
SOURCE = ("Chang, Flokas & Lipson 2020, 'Principled Weight Initialization for Hypernetworks' "
          "(ICLR): standard init of the hypernetwork output layer gives target weights of the "
          "wrong scale and exploding activations; hyperfan-in init fixes it")


class HyperINR(nn.Module):
    def __init__(self, n_signals, code_dim, width, depth, hyperfan):
        super().__init__()
        self.shapes = [(width, 1)] + [(width, width)] * (depth - 2) + [(1, width)]
        n_params = sum(o * i + o for o, i in self.shapes)
        self.codes = nn.Embedding(n_signals, code_dim)
        self.head = nn.Linear(code_dim, n_params)
        if hyperfan:
            with torch.no_grad():
                off = 0
                for o, i in self.shapes:
                    std = math.sqrt(2.0 / (code_dim * i))
                    self.head.weight[off:off + o * i].normal_(0.0, std)
                    off += o * i
                    self.head.weight[off:off + o].zero_()
                    off += o
                self.head.bias.zero_()

    def forward(self, sid, x):
        p = self.head(self.codes(sid))                     # B, P
        h = x.unsqueeze(-1)                                # B, T, 1
        off = 0
        for k, (o, i) in enumerate(self.shapes):
            W = p[:, off:off + o * i].view(-1, o, i)
            off += o * i
            b = p[:, off:off + o]
            off += o
            h = torch.einsum("bti,boi->bto", h, W) + b.unsqueeze(1)
            if k < len(self.shapes) - 1:
                h = torch.relu(h)
        return h.squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(61 + seed)
    n_signals, code_dim = 64, 16
    width = [16, 20, 24][seed % 3]
    depth = [5, 6, 7][seed % 3]
    batch = [16, 32, 24][seed % 3]
    steps = [150, 120, 140][seed % 3]
    T = 48

    x = torch.linspace(-1, 1, T)
    amp = 0.5 + torch.rand(n_signals, 1, generator=g)
    freq = 1 + 3 * torch.rand(n_signals, 1, generator=g)
    shift = torch.rand(n_signals, 1, generator=g) * 2 - 1
    Y = amp * torch.exp(-4 * (x - shift) ** 2) * torch.cos(freq * math.pi * x)

    batches = []
    for _ in range(steps):
        sid = torch.randint(0, n_signals, (batch,), generator=g)
        batches.append(((sid, x.expand(batch, T)), Y[sid]))

    model = HyperINR(n_signals, code_dim, width, depth, hyperfan=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=[3e-4, 2e-4, 3e-4][seed % 3], momentum=0.9)

    def loss_fn(out, y):
        return ((out - y) ** 2).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
