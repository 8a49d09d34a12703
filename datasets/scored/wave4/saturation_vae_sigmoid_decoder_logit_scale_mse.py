"""VAE on binary-ish 'images' whose decoder maps its last linear layer through sigmoid(k * logits)
with a sharpening factor k (meant to make outputs crisper) and is trained with a Gaussian/MSE
reconstruction term on the probabilities instead of BCE-with-logits. With k = 200 the decoder's output
pre-activations start at |k*logit| ~ 50-200, every output unit sits on a flat tail of the sigmoid,
sigmoid' ~ 0, and neither decoder nor encoder receives useful gradient: the ELBO stays flat with no
NaN. Fix: k = 1 (pre-activations in the sigmoid's linear range)."""
import torch, torch.nn as nn
CAUSE = "saturation"
ORIGIN = "dec.out"
SOURCE = "Common VAE pitfall: sigmoid output + MSE reconstruction with saturated logits (PyTorch forum 'VAE outputs all 0/1, loss not decreasing')"
class Dec(nn.Module):
    def __init__(s, z, h, d, k):
        super().__init__(); s.hid = nn.Sequential(nn.Linear(z, h), nn.ReLU()); s.out = nn.Linear(h, d); s.k = k
    def forward(s, z): return torch.sigmoid(s.k * s.out(s.hid(z)))
class VAE(nn.Module):
    def __init__(s, d, h, z, k):
        super().__init__(); s.enc = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, 2 * z)); s.dec = Dec(z, h, d, k)
    def forward(s, x):
        mu, lv = s.enc(x).chunk(2, -1)
        z = mu + torch.randn_like(mu) * (0.5 * lv).exp()
        return {"recon": s.dec(z), "mu": mu, "logvar": lv}
def loss_fn(o, x):
    rec = ((o["recon"] - x) ** 2).sum(-1).mean()
    kl = -0.5 * (1 + o["logvar"] - o["mu"] ** 2 - o["logvar"].exp()).sum(-1).mean()
    return rec + 0.1 * kl
def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    d, h, z = 64, 48 + 16 * seed, 4 + 2 * seed
    steps, bs = 150, 32 + 16 * seed
    model = VAE(d, h, z, 1.0 if fixed else 200.0)
    protos = (torch.rand(6, d, generator=g) < 0.4).float()
    batches = []
    for _ in range(steps):
        idx = torch.randint(0, 6, (bs,), generator=g)
        x = protos[idx].clone(); flip = torch.rand(bs, d, generator=g) < 0.05
        x[flip] = 1 - x[flip]; batches.append((x, x))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps, amp_dtype=None, scaler=None)
