"""Spiking neural network (one layer of leaky integrate-and-fire neurons + leaky non-spiking
readout, max-over-time logits) classifying spike-train time series (Randman-style: each class is
a smooth random manifold of firing times), trained with surrogate gradients: the forward pass
uses a Heaviside spike at threshold 1, the backward pass the derivative of sigmoid(k (u - 1)).
The surrogate steepness k=500 was taken as "closer to the true Heaviside is better". With k that
large the surrogate sigmoid is saturated everywhere except within ~0.01 of threshold, so its
derivative is ~0 for almost every neuron and time step: the hidden weights get almost no
gradient, the spike pattern never adapts and only the readout slowly fits the fixed random spike
features: the loss stays near chance level (a silent stall).
The fixed run only uses k=10 (smaller pre-activation of the surrogate sigmoid), as recommended by
Zenke & Vogels 2021; the forward pass is identical."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "lif"
SOURCE = ("Zenke & Vogels 2021 'The remarkable robustness of surrogate gradient learning' (too steep "
          "sigmoid surrogates stall learning); Neftci et al. 2019 surrogate gradient SNNs")


class SigmoidSurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, k):
        ctx.save_for_backward(v)
        ctx.k = k
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad):
        (v,) = ctx.saved_tensors
        s = torch.sigmoid(ctx.k * v)
        return grad * ctx.k * s * (1 - s), None


class LIFLayer(nn.Module):
    def __init__(self, d_in, d_h, k, beta=0.9):
        super().__init__()
        self.fc = nn.Linear(d_in, d_h)
        self.k, self.beta = k, beta

    def forward(self, x):                       # x: B x T x d_in spikes
        cur = self.fc(x)
        u = torch.zeros_like(cur[:, 0])
        spikes = []
        for t in range(cur.shape[1]):
            u = self.beta * u + cur[:, t]
            s = SigmoidSurrogateSpike.apply(u - 1.0, self.k)
            u = u - s                           # soft reset
            spikes.append(s)
        return torch.stack(spikes, 1)


class SNN(nn.Module):
    def __init__(self, d_in, d_h, n_cls, k):
        super().__init__()
        self.lif = LIFLayer(d_in, d_h, k)
        self.readout = nn.Linear(d_h, n_cls)

    def forward(self, x):
        s = self.lif(x)
        cur = self.readout(s)
        v = torch.zeros_like(cur[:, 0]); vs = []
        for t in range(cur.shape[1]):
            v = 0.9 * v + cur[:, t]
            vs.append(v)
        return torch.stack(vs, 1).max(1).values


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_in, T, n_cls = 40, 50, 4
    # each class: smooth random map from a 1-d latent to firing times of the 40 input channels
    freq = torch.randn(n_cls, d_in, 3, generator=g)
    phase = 2 * math.pi * torch.rand(n_cls, d_in, 3, generator=g)
    batches = []
    for _ in range(15):
        y = torch.randint(0, n_cls, (64,), generator=g)
        z = torch.rand(64, 1, 1, generator=g)
        tf = (torch.sin(freq[y] * z * 3 + phase[y]).sum(-1) / 3 + 1) / 2          # 64 x d_in in [0,1]
        tf = (tf * (T - 1) + 1.0 * torch.randn(64, d_in, generator=g)).round().clamp(0, T - 1).long()
        x = torch.zeros(64, T, d_in)
        x.scatter_(1, tf[:, None, :], 1.0)
        batches.append((x, y))
    model = SNN(d_in, 64, n_cls, k=10.0 if fixed else 500.0)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    steps = 90
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
