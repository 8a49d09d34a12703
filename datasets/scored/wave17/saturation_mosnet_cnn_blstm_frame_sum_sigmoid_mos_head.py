"""MOSNet-style speech quality predictor (Lo et al. 2019: CNN over the magnitude spectrogram ->
BLSTM -> frame-wise FC) with a bounded MOS head MOS = 1 + 4 * sigmoid(z), MSE to the listener MOS, momentum SGD.

Mechanism: MOSNet averages frame-level scores over time; the user wrote `h.sum(dim=1)` instead
of `h.mean(dim=1)` before the utterance head. The pooled feature, and with it the gradient of
the head weights, is T (~100) times larger: within the first SGD updates z is driven to a
magnitude of tens and the sigmoid is pinned at 0 or 1 (MOS 1 or 5) for every utterance; its
derivative ~1e-10 then blocks every gradient and the MSE stays above its initial level. ORIGIN is mos_act,
the sigmoid that saturates. Fix: mean over frames (pre-activation O(1)); nothing else changed.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "mos_act"
SOURCE = "MOSNet (Lo et al. 2019) CNN-BLSTM quality predictor; sum instead of mean over frames before a 1+4*sigmoid MOS head"

N_BIN = 40


class MOSNet(nn.Module):
    def __init__(self, c, h, pool):
        super().__init__()
        self.pool = pool
        self.cnn = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(c, c, 3, padding=1, stride=(1, 2)), nn.ReLU())
        self.blstm = nn.LSTM(c * N_BIN // 2, h, batch_first=True, bidirectional=True)
        self.frame_fc = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU())
        self.out = nn.Linear(h, 1)
        self.mos_act = nn.Sigmoid()

    def forward(self, x):  # (B, T, F)
        z = self.cnn(x.unsqueeze(1))
        B, C, T, F = z.shape
        h = self.frame_fc(self.blstm(z.permute(0, 2, 1, 3).reshape(B, T, C * F))[0])
        h = h.sum(dim=1) if self.pool == "sum" else h.mean(dim=1)
        return 1.0 + 4.0 * self.mos_act(self.out(h)).squeeze(-1)


def _batch(g, n, T):
    mos = 1.0 + 4.0 * torch.rand(n, generator=g)
    clean = torch.randn(n, T, N_BIN, generator=g).abs()
    noise_lvl = (5.0 - mos).view(n, 1, 1) / 2.0  # worse quality = more noise / distortion
    x = torch.log1p(clean + noise_lvl * torch.rand(n, T, N_BIN, generator=g) * 3)
    return (x - 1.0) / 0.5, mos


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c, h = [(8, 32), (12, 24), (6, 48)][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    bs, T = [(16, 96), (12, 128), (24, 80)][seed % 3]
    steps = 60
    model = MOSNet(c, h, "mean" if fixed else "sum")
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [_batch(g, bs, T) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
