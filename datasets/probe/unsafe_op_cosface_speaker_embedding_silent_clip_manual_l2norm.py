"""CosFace/AM-softmax speaker-embedding CNN on magnitude spectrograms (bias-free conv stack, ReLU,
global average pooling, bias-free embedding layer), cosine classifier with margin.

Mechanism: the embedding is normalised by hand, e / e.norm(dim=1, keepdim=True). The training
set legitimately contains a few digitally silent clips (all-zero magnitude spectrogram, e.g.
muted segments kept as "non-speech" samples of a speaker's session). With bias-free convs and
ReLU their embedding is exactly the zero vector, the division is 0/0 and the logits, the loss
and then every weight become NaN. The run is calm until the first silent clip.
ORIGIN: emb, the embedding layer whose output is normalised (first NaN appears right after it).
Fix: F.normalize(e, dim=1) (norm clamped at eps=1e-12).
"""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "emb"
SOURCE = "CosFace / AM-Softmax (Wang et al. 2018) speaker-verification reimplementations with manual x / x.norm(); 'NaN loss on silent utterances' reports"


class SpkNet(nn.Module):
    def __init__(self, w, d, n_spk, fixed):
        super().__init__()
        self.fixed = fixed
        self.body = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1, bias=False), nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, padding=1, stride=2, bias=False), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.emb = nn.Linear(2 * w, d, bias=False)
        self.W = nn.Parameter(torch.randn(n_spk, d) * 0.1)

    def forward(self, x):
        e = self.emb(self.body(x))
        e = F.normalize(e, dim=1) if self.fixed else e / e.norm(dim=1, keepdim=True)
        return e @ F.normalize(self.W, dim=1).t()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    w, d, bs, lr, steps, bad = [(12, 32, 16, 0.05, 60, 23), (16, 24, 12, 0.1, 80, 40), (8, 48, 20, 0.03, 50, 14)][seed % 3]
    n_spk, F_, T = 6, 24, 32
    model = SpkNet(w, d, n_spk, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    protos = torch.rand(n_spk, F_, 1, generator=g)
    s, m = 30.0, 0.2

    def loss_fn(cos, y):
        onehot = F.one_hot(y, cos.shape[1]).to(cos.dtype)
        return F.cross_entropy(s * (cos - m * onehot), y)

    batches = []
    for i in range(steps):
        y = torch.randint(0, n_spk, (bs,), generator=g)
        x = (protos[y] * torch.rand(bs, 1, T, generator=g)).unsqueeze(1) + 0.2 * torch.rand(bs, 1, F_, T, generator=g)
        if i == bad:
            x[:2] = 0.0  # digitally silent clips (legitimate data)
        batches.append((x, y))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
