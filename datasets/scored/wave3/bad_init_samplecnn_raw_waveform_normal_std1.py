"""SampleCNN-style music auto-tagger on raw waveforms: a stack of Conv1d(kernel 3, stride 3) + ReLU
blocks without batch normalisation, followed by global max pooling and a multi-label sigmoid head.
A custom init loop (ported from a TF1 codebase) initialises every conv kernel with N(0, 1) instead of
He/Kaiming (std = sqrt(2 / (3*C_in))). Each block multiplies the activation scale by several times
(~sqrt(3*C_in/2)), so after 5-7 blocks the logits are in the thousands from step 0, BCE-with-logits
is enormous, the gradients are of the same size and SGD with momentum cannot undo the geometric
blow-up: the first updates overflow the weights and the loss becomes inf/NaN within a few steps.
ORIGIN is the first badly initialised conv (the stem), where the activation scale starts to grow."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "stem"
SOURCE = "SampleCNN (Lee et al. 2017) raw-waveform tagger; TF1 random_normal(stddev=1.0) kernel init ported to PyTorch"

class SampleCNN(nn.Module):
    def __init__(self, depth, ch, n_tags):
        super().__init__()
        self.stem = nn.Conv1d(1, ch, 3, stride=3)
        self.blocks = nn.ModuleList([nn.Conv1d(ch, ch, 3, stride=3) for _ in range(depth)])
        self.head = nn.Linear(ch, n_tags)
    def forward(self, x):
        h = F.relu(self.stem(x))
        for b in self.blocks:
            h = F.relu(b(h))
        return self.head(h.amax(-1))

def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3000 + seed)
    cfg = [dict(depth=5, ch=16, bs=8, lr=0.05, steps=80),
           dict(depth=6, ch=12, bs=8, lr=0.03, steps=100),
           dict(depth=4, ch=24, bs=10, lr=0.05, steps=120)][seed % 3]
    n_tags = 6
    L = 3 ** (cfg["depth"] + 2)
    model = SampleCNN(cfg["depth"], cfg["ch"], n_tags)
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv1d):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight, 0.0, 1.0)
            nn.init.zeros_(m.bias)
    freqs = torch.linspace(0.02, 0.4, n_tags)
    t = torch.arange(L).float()
    def batch():
        y = (torch.rand(cfg["bs"], n_tags, generator=g) < 0.35).float()
        phase = torch.rand(cfg["bs"], n_tags, 1, generator=g) * 6.28
        x = (y.unsqueeze(-1) * torch.sin(freqs.view(1, -1, 1) * t * 3.14159 + phase)).sum(1, keepdim=True)
        x = 0.5 * x + 0.05 * torch.randn(cfg["bs"], 1, L, generator=g)
        return x, y
    data = [batch() for _ in range(8)]
    batches = [data[i % 8] for i in range(cfg["steps"])]
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=cfg["steps"], amp_dtype=None, scaler=None)
