"""Keyword-spotting CNN with a trainable PCEN front end (per-channel energy normalisation, as in
LEAF / Wang et al. 2017): M_t = (1-s) M_{t-1} + s E_t with M_0 = E_0, then
PCEN = (E / M^alpha + delta)^r - delta^r. The hand-written layer dropped the epsilon in the
denominator ((eps + M)^alpha in the paper). Ordinary clips always have a noise floor, so E and M
are strictly positive and training is calm. A few clips in the corpus are left-padded with exact
digital silence (short utterances aligned to the end of the window): for them E_0 = M_0 = 0,
0 / 0^alpha = NaN is born inside the PCEN layer at the step their batch arrives and the loss is NaN.
Fixed: eps = 1e-6 inside the power, as in the published PCEN."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "frontend"
SOURCE = "PCEN (Wang et al. 2017, 'Trainable frontend for robust and far-field keyword spotting'); LEAF/torchaudio-style PCEN layers add eps to the smoother; NaN reports with zero-padded audio"


class PCEN(nn.Module):
    def __init__(self, n_mels, eps):
        super().__init__()
        self.eps = eps
        self.log_s = nn.Parameter(torch.full((n_mels,), -3.0))       # smoothing coefficient
        self.log_alpha = nn.Parameter(torch.full((n_mels,), -0.02))  # alpha ~ 0.98
        self.log_delta = nn.Parameter(torch.full((n_mels,), 0.69))   # delta ~ 2
        self.log_r = nn.Parameter(torch.full((n_mels,), -0.69))      # r ~ 0.5

    def forward(self, E):  # E: (B, n_mels, T) filterbank energies, >= 0
        s = torch.sigmoid(self.log_s).unsqueeze(-1)
        alpha = self.log_alpha.exp().clamp(max=1.0).unsqueeze(-1)
        delta = self.log_delta.exp().unsqueeze(-1)
        r = self.log_r.exp().unsqueeze(-1)
        M = [E[..., 0]]
        for t in range(1, E.shape[-1]):
            M.append((1 - s[..., 0]) * M[-1] + s[..., 0] * E[..., t])
        M = torch.stack(M, -1)
        return (E / (self.eps + M) ** alpha + delta) ** r - delta ** r


class KWSNet(nn.Module):
    def __init__(self, n_mels, width, n_cls, eps):
        super().__init__()
        self.frontend = PCEN(n_mels, eps)
        self.conv1 = nn.Conv1d(n_mels, width, 5, padding=2)
        self.conv2 = nn.Conv1d(width, width, 5, padding=2)
        self.head = nn.Linear(width, n_cls)

    def forward(self, E):
        h = self.frontend(E)
        h = F.relu(self.conv1(h))
        h = F.relu(self.conv2(h))
        return self.head(h.mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    n_mels, T, n_cls = 20, 32, 6
    width = [32, 24, 40][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [80, 90, 70][seed % 3]
    bad_step = [23, 41, 12][seed % 3]
    templates = torch.rand(n_cls, n_mels, 8, generator=g) ** 3 * 6
    def make(n):
        y = torch.randint(0, n_cls, (n,), generator=g)
        gain = 10 ** (torch.rand(n, 1, 1, generator=g) * 4 - 2)          # 40 dB loudness range
        E = 0.05 * torch.rand(n, n_mels, T, generator=g)                  # noise floor
        start = torch.randint(4, T - 12, (n,), generator=g)
        for i in range(n):
            E[i, :, start[i]:start[i] + 8] += templates[y[i]]
        return E * gain, y
    batches = []
    for step in range(steps):
        E, y = make(bs)
        if step == bad_step:
            E[0, :, :10] = 0.0  # short utterance left-padded with digital silence
        batches.append((E, y))
    model = KWSNet(n_mels, width, n_cls, eps=1e-6 if fixed else 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=[2e-3, 3e-3, 2e-3][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
