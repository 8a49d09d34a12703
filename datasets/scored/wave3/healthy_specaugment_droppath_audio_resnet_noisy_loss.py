"""Audio-event classifier: a small ResNet over log-mel spectrograms with stochastic depth (DropPath,
per-sample drop probability 0.2-0.4 on every residual branch) and SpecAugment (random time and
frequency masks, sometimes covering most of the informative band). It looks alarming: the training
loss is very noisy, with sudden spikes on the steps where the masks hide the class cue or most
residual branches are dropped, and it is non-monotone step to step; RMSprop's effective step also
jumps. All of that is regularisation noise: the trend falls steadily and the model fits. Healthy."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "PANNs/AST-style audio tagging recipes with SpecAugment (Park et al. 2019) and stochastic depth (Huang et al. 2016)"

class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__(); self.p = p
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = (torch.rand(x.shape[0], 1, 1, 1) > self.p).float()
        return x * keep / (1 - self.p)

class Block(nn.Module):
    def __init__(self, c, p):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1); self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1); self.bn2 = nn.BatchNorm2d(c)
        self.drop = DropPath(p)
    def forward(self, x):
        return F.relu(x + self.drop(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))))

class AudioResNet(nn.Module):
    def __init__(self, c, n_blocks, p, n_cls):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.Sequential(*[Block(c, p * (i + 1) / n_blocks) for i in range(n_blocks)])
        self.head = nn.Linear(c, n_cls)
    def forward(self, mel):
        return self.head(self.blocks(self.stem(mel)).mean((2, 3)))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(14000 + seed)
    cfg = [dict(c=12, nb=3, p=0.3, bs=16, T=32, lr=1e-3, steps=100, n_cls=6),
           dict(c=16, nb=2, p=0.2, bs=12, T=40, lr=2e-3, steps=80, n_cls=5),
           dict(c=8, nb=4, p=0.4, bs=20, T=24, lr=1e-3, steps=120, n_cls=8)][seed % 3]
    F_, T = 20, cfg["T"]
    protos = torch.randn(cfg["n_cls"], 1, F_, 1, generator=g)
    def batch():
        y = torch.randint(0, cfg["n_cls"], (cfg["bs"],), generator=g)
        x = protos[y] + 0.7 * torch.randn(cfg["bs"], 1, F_, T, generator=g)
        for b in range(cfg["bs"]):   # SpecAugment
            fw = int(torch.randint(0, F_ // 2, (1,), generator=g)); f0 = int(torch.randint(0, F_ - fw + 1, (1,), generator=g))
            tw = int(torch.randint(0, T // 2, (1,), generator=g)); t0 = int(torch.randint(0, T - tw + 1, (1,), generator=g))
            x[b, :, f0:f0 + fw, :] = 0.0; x[b, :, :, t0:t0 + tw] = 0.0
        return x, y
    batches = [batch() for _ in range(cfg["steps"])]
    model = AudioResNet(cfg["c"], cfg["nb"], cfg["p"], cfg["n_cls"])
    opt = torch.optim.RMSprop(model.parameters(), lr=cfg["lr"], alpha=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
