"""MoCo-v2 self-supervised pre-training of a small conv encoder: a query encoder trained by SGD, a
key encoder updated as an exponential moving average *inside forward* (as in the reference
implementation), and a FIFO queue of 256 negative keys (pre-filled with real keys from a warm-up pass) refreshed
every step.  The InfoNCE loss
looks alarming: it starts near log(K+1) = 5.5, stays high (the task gets harder as the queue fills
with keys from an ever better key encoder), is noisy because the negatives change every step, and
the key encoder/queue receive no gradient at all.  All of this is normal; the loss still falls
well below its start and nothing is broken."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("He et al. 2020 MoCo / Chen et al. 2020 MoCo v2 (facebookresearch/moco: momentum update and "
          "dequeue_and_enqueue inside forward, InfoNCE with queue, tau=0.2)")


def encoder(c=16, d=32):
    return nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                         nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(2 * c, 2 * c), nn.ReLU(), nn.Linear(2 * c, d))


class MoCo(nn.Module):
    def __init__(self, d=32, K=256, m=0.99, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = encoder(d=d)
        self.encoder_k = encoder(d=d)
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.copy_(pq.data); pk.requires_grad_(False)
        self.register_buffer("queue", F.normalize(torch.randn(d, K), dim=0))
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.mul_(self.m).add_(pq.data, alpha=1 - self.m)

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.clone().detach()
        logits = torch.cat([l_pos, l_neg], 1) / self.T
        with torch.no_grad():                          # dequeue and enqueue
            n = k.shape[0]; p = int(self.ptr)
            self.queue[:, p:p + n] = k.t(); self.ptr.fill_((p + n) % self.K)
        return logits


def _views(g, n, s=16):
    ys, xs = torch.meshgrid(torch.arange(s + 4).float(), torch.arange(s + 4).float(), indexing="ij")
    v1, v2 = [], []
    for _ in range(n):
        k = (0.3 + 0.9 * torch.rand(3, 2, generator=g)) * torch.randn(3, 2, generator=g).sign()
        ph = 6.28 * torch.rand(3, generator=g)
        col = torch.rand(3, generator=g)
        base = col[:, None, None] * torch.sin(k[:, 0, None, None] * xs + k[:, 1, None, None] * ys + ph[:, None, None])
        outs = []
        for _ in range(2):
            ox, oy = torch.randint(0, 5, (2,), generator=g).tolist()
            v = base[:, oy:oy + s, ox:ox + s] * (0.7 + 0.6 * torch.rand(1, generator=g))
            outs.append(v + 0.1 * torch.randn(3, s, s, generator=g))
        v1.append(outs[0]); v2.append(outs[1])
    return (torch.stack(v1), torch.stack(v2)), torch.zeros(n, dtype=torch.long)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = MoCo()
    pool = [_views(g, 32) for _ in range(16)]
    with torch.no_grad():          # pre-fill the queue with real keys instead of random vectors
        keys = [F.normalize(model.encoder_k(pool[-1 - i][0][1]), dim=1) for i in range(8)]
        model.queue.copy_(torch.cat(keys).t()[:, :model.K])
    steps = 150
    batches = [pool[i % len(pool)] for i in range(steps)]

    def loss_fn(logits, y):
        return F.cross_entropy(logits, y)          # positive key is class 0

    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.06,
                          momentum=0.9, weight_decay=1e-4)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
