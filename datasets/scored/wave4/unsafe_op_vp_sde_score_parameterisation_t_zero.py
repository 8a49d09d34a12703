"""Score-based diffusion (VP-SDE) trained with denoising score matching. The network output is
parameterised as score = F(x_t, t) / sigma(t) with sigma(t)^2 = 1 - exp(-int beta), and the diffusion
times are drawn from a discrete grid randint(0, T) / T that includes t = 0. At t = 0 sigma is exactly
0, the division yields inf/NaN inside the score head, and the loss is non-finite the first time a
batch draws t = 0 (a calm run until then). Fix: clamp sigma with an epsilon (sigma.clamp_min(1e-3))."""
import torch, torch.nn as nn, math
CAUSE = "unsafe_op"
ORIGIN = "score_head"
SOURCE = "Song et al. 2021 score SDE: sample t ~ U(eps, 1) with eps=1e-5; reports of NaN when t=0 is sampled"
def sigma_t(t, b0=0.1, b1=20.0):
    return (1 - torch.exp(-(b0 * t + 0.5 * (b1 - b0) * t ** 2))).sqrt()
class ScoreHead(nn.Module):
    def __init__(s, eps): super().__init__(); s.eps = eps
    def forward(s, f, t):
        sig = sigma_t(t)
        if s.eps > 0: sig = sig.clamp_min(s.eps)
        return f / sig[:, None]
class ScoreNet(nn.Module):
    def __init__(s, d, h, eps):
        super().__init__(); s.net = nn.Sequential(nn.Linear(d + 1, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, d)); s.score_head = ScoreHead(eps)
    def forward(s, x, t): return s.score_head(s.net(torch.cat([x, t[:, None]], -1)), t)
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    d, h, T = 2, 48 + 16 * seed, 1000
    steps, bs = 120, 64 + 32 * seed
    zero_step = 20 + 17 * seed
    model = ScoreNet(d, h, 1e-3 if fixed else 0.0)
    batches = []
    for k in range(steps):
        ang = torch.randint(0, 8, (bs,), generator=g).float() * math.pi / 4
        x0 = torch.stack([ang.cos(), ang.sin()], -1) * 2 + 0.1 * torch.randn(bs, 2, generator=g)
        ti = torch.randint(1, T, (bs,), generator=g)
        if k == zero_step: ti[0] = 0
        t = ti.float() / T
        lm = torch.exp(-0.25 * t ** 2 * 19.9 - 0.5 * 0.1 * t)
        z = torch.randn(bs, d, generator=g)
        sig = sigma_t(t)
        xt = lm[:, None] * x0 + sig[:, None] * z
        batches.append(((xt, t), {"z": z, "sigma": sig}))
    def loss_fn(score, tgt):  # lambda(t)=sigma^2 weighting: || sigma * score + z ||^2
        return ((tgt["sigma"][:, None] * score + tgt["z"]) ** 2).sum(-1).mean()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
