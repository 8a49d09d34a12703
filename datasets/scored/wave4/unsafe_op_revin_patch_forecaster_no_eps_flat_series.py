"""PatchTST-style retail demand forecaster with hand-written RevIN (reversible instance
normalisation): each input window is standardised by its own mean and std, the patch MLP predicts
in normalised space and the output is de-normalised. The RevIN was written as (x-mean)/std with no
epsilon. Training is calm until a batch contains a store/item series that was out of stock for the
whole look-back window (all zeros): std=0, so (x-mean)/std = 0/0 = NaN in the forward pass and the
loss is NaN. The fix adds eps inside the sqrt (var + 1e-5), the standard RevIN formulation."""
import torch, torch.nn as nn, math
CAUSE = "unsafe_op"
ORIGIN = "revin"
SOURCE = "RevIN (Kim et al. 2022) reimplementations without eps; 'NaN loss with zero sales series' issue reports"

class RevIN(nn.Module):
    def __init__(self, eps):
        super().__init__(); self.eps = eps; self.w = nn.Parameter(torch.ones(1)); self.b = nn.Parameter(torch.zeros(1))
    def forward(self, x):
        mu = x.mean(1, keepdim=True); sd = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps)
        return (x - mu) / sd * self.w + self.b, mu, sd

class PatchForecaster(nn.Module):
    def __init__(self, L, P, H, d, eps):
        super().__init__(); self.P = P; self.revin = RevIN(eps)
        self.embed = nn.Linear(P, d); self.mix = nn.Sequential(nn.Linear(d * (L // P), 64), nn.GELU(), nn.Linear(64, H))
    def forward(self, x):
        z, mu, sd = self.revin(x)
        p = z.unfold(1, self.P, self.P); e = self.embed(p).flatten(1)
        y = self.mix(e)
        return (y - self.revin.b) / self.revin.w * sd + mu

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    L, H = 48, 12; P = [8, 12, 6][seed % 3]; d = [16, 12, 16][seed % 3]
    steps = [80, 60, 100][seed % 3]; bs = [32, 16, 24][seed % 3]; bad = [30, 17, 62][seed % 3]
    model = PatchForecaster(L, P, H, d, 1e-5 if fixed else 0.0)
    batches = []
    for i in range(steps):
        t = torch.arange(L + H, dtype=torch.float32)
        lvl = 5 + 10 * torch.rand(bs, 1, generator=g)
        w = lvl * (1 + 0.3 * torch.sin(2 * math.pi * (t + torch.randint(0, 7, (bs, 1), generator=g)) / 7)) + torch.randn(bs, L + H, generator=g)
        if i == bad:
            w[0] = 0.0  # out-of-stock item: zero sales over the whole window
        batches.append((w[:, :L].contiguous(), w[:, L:].contiguous()))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.L1Loss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
