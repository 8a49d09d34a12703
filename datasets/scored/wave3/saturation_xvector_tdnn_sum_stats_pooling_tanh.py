"""x-vector style speaker-ID TDNN (dilated Conv1d frame layers with ReLU) followed by a statistics
pooling layer and tanh segment layers. The pooling was written as a *sum* over frames (plus a sum
of squares instead of a standard deviation), so the pooled vector grows with the utterance length
(150-300 frames). The first segment layer (`segment1`) receives pre-activations of magnitude ~5-30
(median ~5), almost all of its tanh units sit at +-1 from step 0 with the same sign pattern for every
utterance, the tanh derivative is ~0 and the classifier never learns:
a silent loss plateau at ~log(n_speakers) with no non-finite value. Fix: proper mean/std statistics
pooling (pre-activations of order 1)."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "segment1"
SOURCE = "x-vector (Snyder et al. 2018) stats pooling re-implemented with sum instead of mean; known tanh saturation from un-normalised pooled statistics"

class XVector(nn.Module):
    def __init__(self, n_mels, ch, n_spk, mean_pool):
        super().__init__()
        self.frame1 = nn.Conv1d(n_mels, ch, 5, dilation=1)
        self.frame2 = nn.Conv1d(ch, ch, 3, dilation=2)
        self.frame3 = nn.Conv1d(ch, ch, 3, dilation=3)
        self.segment1 = nn.Linear(2 * ch, 64)
        self.act1 = nn.Tanh()
        self.segment2 = nn.Linear(64, 64)
        self.act2 = nn.Tanh()
        self.out = nn.Linear(64, n_spk)
        self.mean_pool = mean_pool
    def forward(self, x):
        h = F.relu(self.frame1(x)); h = F.relu(self.frame2(h)); h = F.relu(self.frame3(h))
        if self.mean_pool:
            s = torch.cat([h.mean(-1), h.std(-1)], 1)
        else:  # bug: sums over frames
            s = torch.cat([h.sum(-1), (h * h).sum(-1)], 1)
        z = self.act1(self.segment1(s))
        z = self.act2(self.segment2(z))
        return self.out(z)

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    cfg = [dict(T=200, ch=24, bs=16, lr=0.05, steps=120, spk=8),
           dict(T=300, ch=32, bs=24, lr=0.03, steps=100, spk=10),
           dict(T=150, ch=16, bs=32, lr=0.02, steps=140, spk=6)][seed % 3]
    n_mels = 20
    protos = torch.randn(cfg["spk"], n_mels, 1, generator=g)
    def batch():
        y = torch.randint(0, cfg["spk"], (cfg["bs"],), generator=g)
        x = 1.0 + 0.5 * protos[y] + 0.8 * torch.randn(cfg["bs"], n_mels, cfg["T"], generator=g)
        return x, y
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    model = XVector(n_mels, cfg["ch"], cfg["spk"], mean_pool=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
