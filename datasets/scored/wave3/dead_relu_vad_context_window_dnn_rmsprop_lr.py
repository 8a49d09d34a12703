"""Frame-level voice-activity detector (VAD): a DNN over a context window of stacked log-compressed (non-negative, un-centred) mel magnitudes
(input tuple: features and a per-frame energy feature), ReLU hidden layers and a two-class head. It is
trained with RMSprop at lr 0.03-0.1, a value taken from a tutorial that used it for a tiny logistic
model. RMSprop's first updates are ~lr/sqrt(1-alpha) ~ 10x lr per parameter, all of the same
magnitude regardless of the gradient, so the first steps move every bias and weight of the first
hidden layer (`hidden.0`) by ~0.3-0.5: its pre-activations become negative for every frame, the
ReLUs die, and the classifier falls back to the speech/non-speech prior. The loss plateaus at the
prior entropy with finite values. ORIGIN: hidden.0. Fix: lr 1e-3."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "hidden.0"
SOURCE = "DNN VAD (Zhang & Wu 2013 style context-window DNN); dying ReLU with an over-large RMSprop lr"

class VADNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in + 1
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.hidden = nn.Sequential(*layers)
        self.head = nn.Linear(d, 2)
    def forward(self, feats, energy):
        return self.head(self.hidden(torch.cat([feats, energy], 1)))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(10000 + seed)
    cfg = [dict(ctx=5, width=64, depth=2, bs=64, lr=0.05, steps=100),
           dict(ctx=7, width=48, depth=3, bs=48, lr=0.03, steps=80),
           dict(ctx=3, width=64, depth=2, bs=96, lr=0.1, steps=120)][seed % 3]
    lr = 1e-3 if fixed else cfg["lr"]
    n_mels = 16
    speech_shape = torch.rand(n_mels, generator=g)
    def batch():
        y = (torch.rand(cfg["bs"], generator=g) < 0.4).long()     # 40% speech frames
        p = torch.rand(cfg["bs"], cfg["ctx"], n_mels, generator=g) * 0.6
        p = p + y.view(-1, 1, 1) * (0.5 * speech_shape) * torch.rand(cfg["bs"], 1, 1, generator=g)
        feats = torch.log1p(4 * p).flatten(1)                    # log-compressed mel magnitudes (>= 0)
        energy = feats.mean(1, keepdim=True)
        return (feats, energy), y
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    model = VADNet(cfg["ctx"] * n_mels, cfg["width"], cfg["depth"])
    opt = torch.optim.RMSprop(model.parameters(), lr=lr, alpha=0.99)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
