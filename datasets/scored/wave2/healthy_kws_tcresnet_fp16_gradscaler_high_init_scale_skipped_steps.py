"""TC-ResNet-style temporal-conv keyword spotter trained under fp16 autocast with a GradScaler whose
init_scale was set to 2**24 (copied from a GPU recipe) and a short growth_interval. The first ~7
backward passes overflow in fp16 (scaled gradients > 65504 become inf), the scaler detects it,
skips those optimizer steps and halves the scale each time, so the loss is flat for the first steps
and the gradients are inf while it happens; every growth_interval steps the scale doubles again and
occasionally causes another skipped step. This is the GradScaler working as designed: once the
scale settles the run trains normally and the loss falls well below its start. Healthy."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "torch.amp.GradScaler docs (dynamic loss scaling: skipped steps with inf/NaN gradients, scale backoff/growth); TC-ResNet (Choi et al. 2019) keyword spotting"


class TCBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 9, padding=4)
        self.bn1 = nn.BatchNorm1d(ch)
        self.conv2 = nn.Conv1d(ch, ch, 9, padding=4)
        self.bn2 = nn.BatchNorm1d(ch)

    def forward(self, x):
        return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))


class TCResNet(nn.Module):
    def __init__(self, n_mfcc, ch, n_blocks, n_cls):
        super().__init__()
        self.stem = nn.Conv1d(n_mfcc, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[TCBlock(ch) for _ in range(n_blocks)])
        self.fc = nn.Linear(ch, n_cls)

    def forward(self, mfcc):          # (B, n_mfcc, T): MFCC as channels, time as the conv axis
        return self.fc(self.blocks(self.stem(mfcc)).mean(-1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(18000 + seed)
    ch = [20, 16, 16][seed % 3]
    n_blocks = [2, 3, 2][seed % 3]
    bs = [20, 16, 24][seed % 3]
    steps = [80, 100, 70][seed % 3]
    n_mfcc, T, n_cls = 10, 24, 6
    templates = torch.randn(n_cls, n_mfcc, 8, generator=g)
    def make(n):
        y = torch.randint(0, n_cls, (n,), generator=g)
        x = 0.8 * torch.randn(n, n_mfcc, T, generator=g)
        s = torch.randint(0, T - 8, (n,), generator=g)
        for i in range(n):
            x[i, :, s[i]:s[i] + 8] += templates[y[i]]
        return x, y
    pool = [make(bs) for _ in range(20)]
    batches = [pool[i % 20] for i in range(steps)]
    model = TCResNet(n_mfcc, ch, n_blocks, n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=[2e-3, 1e-3, 2e-3][seed % 3])
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=[25, 30, 20][seed % 3])
    return dict(model=model, optimizer=opt, loss_fn=lambda o, y: F.cross_entropy(o, y),
                batches=batches, steps=steps, amp_dtype=torch.float16, scaler=scaler)
