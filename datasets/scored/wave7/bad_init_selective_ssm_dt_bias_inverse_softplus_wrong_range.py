"""A minimal selective state-space (Mamba/S6-style) layer over token ids regresses, at every
position, a slowly decaying balance of "up" vs "down" tokens seen so far (a memory of tens of steps).
The step size is Delta = softplus(dt_proj(dt_t)) with a rank-1 dt_t, and the state update is
h_t = exp(Delta*A) h_{t-1} + Delta*B_t u_t. Mamba initialises dt_proj's bias as the inverse softplus
of a log-uniform dt in [1e-3, 1e-1]; here the config passed dt_min = 1e-8, dt_max = 1e-7 (exponents
off by five). With Delta ~ 1e-7 the input reaching the state is scaled by 1e-7, so the state-space
path that must hold the memory contributes nothing to the output, its gradients (and the gradient
into the dt bias, through softplus' ~ 1e-7) are equally tiny, the short conv + skip path (D*u) only
sees the last two tokens, and the loss stays at the target variance. With the standard [1e-3, 1e-1]
range the same layer learns the running balance."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "mixer.dt_proj"
SOURCE = ("Gu & Dao 2023 'Mamba' (dt_proj bias = inverse softplus of dt ~ LogUniform[1e-3, 1e-1]); "
          "a step-size init far from the data's time scale")

V, D, EXP, N, T, WARM = 8, 16, 1, 4, 48, 12


class SelectiveSSM(nn.Module):
    def __init__(self, d, expand, n, dt_min, dt_max):
        super().__init__()
        di = d * expand
        self.in_proj = nn.Linear(d, 2 * di)
        self.conv = nn.Conv1d(di, di, kernel_size=2, groups=di, padding=1)
        self.dt_rank = 1
        self.x_proj = nn.Linear(di, self.dt_rank + 2 * n, bias=False)   # dt (low rank), B_t, C_t
        self.dt_proj = nn.Linear(self.dt_rank, di)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(di, 1))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, d)
        dt = torch.exp(torch.rand(di) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
        with torch.no_grad():
            nn.init.uniform_(self.dt_proj.weight, -self.dt_rank ** -0.5, self.dt_rank ** -0.5)
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))   # inverse softplus
        self.n = n

    def forward(self, x):
        Bsz, L, _ = x.shape
        u, z = self.in_proj(x).chunk(2, -1)
        u = F.silu(self.conv(u.transpose(1, 2))[..., :L].transpose(1, 2))
        dt, Bt, Ct = self.x_proj(u).split([self.dt_rank, self.n, self.n], -1)
        delta = F.softplus(self.dt_proj(dt))              # (B, L, di)
        A = -torch.exp(self.A_log)                        # (di, n)
        h = torch.zeros(Bsz, u.shape[-1], self.n)
        ys = []
        for t in range(L):
            dA = torch.exp(delta[:, t].unsqueeze(-1) * A)
            dBu = delta[:, t].unsqueeze(-1) * Bt[:, t].unsqueeze(1) * u[:, t].unsqueeze(-1)
            h = dA * h + dBu
            ys.append((h * Ct[:, t].unsqueeze(1)).sum(-1))
        y = torch.stack(ys, 1) + self.D * u
        return self.out_proj(y * F.silu(z))


class RecallModel(nn.Module):
    def __init__(self, dt_min, dt_max):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.mixer = SelectiveSSM(D, EXP, N, dt_min, dt_max)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 1)

    def forward(self, ids):
        x = self.emb(ids)
        return self.head(self.norm(x + self.mixer(x))).squeeze(-1)


def make_batch(g, bs):
    # target: slowly decaying balance of "up" (id 0) vs "down" (id 1) tokens seen so far
    ids = torch.randint(0, V, (bs, T), generator=g)
    sig = (ids == 0).float() - (ids == 1).float()
    y = torch.zeros(bs, T)
    acc = torch.zeros(bs)
    for t in range(T):
        acc = 0.99 * acc + sig[:, t]
        y[:, t] = acc / 2.0
    return ids, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = RecallModel(*((1e-3, 1e-1) if fixed else (1e-8, 1e-7)))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    steps = 150
    batches = [make_batch(g, 16) for _ in range(steps)]
    loss_fn = lambda out, y: F.mse_loss(out[:, WARM:], y[:, WARM:])
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
