"""Sound-source direction-of-arrival (DOA) regressor for a small microphone array: per-frame Conv1d
-ReLU encoder over inter-channel phase/level features, clip pooling over time, linear head and a
tanh output predicting (sin azimuth, cos azimuth) in [-1, 1], trained with MSE. The clip pooling was
written as a sum over the T frames instead of a mean, so the head's pre-activations are ~T times too
large (tens) for every clip. tanh is flat there (derivative ~1e-8 or exactly 0 in float32): the
outputs are stuck at +-1, almost no gradient reaches the head or the encoder, and the loss stays at
its initial level for the whole run, a silent stall with finite values. Mean pooling, which keeps
the pre-activations of order 1, trains normally."""
import torch, torch.nn as nn, math
CAUSE = "saturation"
ORIGIN = "out_act"
SOURCE = "SELDnet-style DOA regression with tanh outputs; 'tanh output stuck at 1/-1, loss not changing' threads"

class DOANet(nn.Module):
    def __init__(self, Fdim, ch, mean_pool):
        super().__init__(); self.mean_pool = mean_pool
        self.encoder = nn.Sequential(nn.Conv1d(Fdim, ch, 3, padding=1), nn.ReLU(), nn.Conv1d(ch, ch, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(ch, 2); self.out_act = nn.Tanh()
    def forward(self, x):
        f = self.encoder(x)
        clip = f.mean(-1) if self.mean_pool else f.sum(-1)
        return self.out_act(self.head(clip))

def build(seed, fixed=False):
    torch.manual_seed(seed); g = torch.Generator().manual_seed(seed)
    Fdim = [16, 24, 12][seed % 3]; ch = [24, 32, 16][seed % 3]; T = [300, 400, 250][seed % 3]
    steps = [100, 120, 80][seed % 3]; bs = [16, 16, 24][seed % 3]
    model = DOANet(Fdim, ch, mean_pool=fixed)
    freqs = torch.linspace(0.2, 1.0, Fdim).view(1, Fdim, 1)
    def make():
        az = (torch.rand(bs, generator=g) * 2 - 1) * math.pi
        ipd = torch.sin(freqs * 3.0 * torch.sin(az).view(bs, 1, 1) + 0.1 * torch.randn(bs, Fdim, T, generator=g))
        ild = 0.5 * torch.cos(az).view(bs, 1, 1) * freqs + 0.1 * torch.randn(bs, Fdim, T, generator=g)
        x = ipd + ild
        return x, torch.stack([torch.sin(az), torch.cos(az)], 1)
    batches = [make() for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps, amp_dtype=None, scaler=None)
