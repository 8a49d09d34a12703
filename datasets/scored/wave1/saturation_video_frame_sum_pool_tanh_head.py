"""Frame-level video classifier (a tiny 2D CNN applied to every frame, a temporal pooling over the
clip, then a tanh embedding layer and a linear classifier) where the temporal pooling is a SUM
over the 32 frames instead of a mean. The per-frame features come out of a ReLU + global average
pool, so (like any BN-ReLU backbone's pooled features) they are all positive and share a large
common component; summing 32 of them multiplies that common component by 32, and the
pre-activations of the tanh embedding layer land at a median |z| of ~4-6 (60-80% of them beyond
|z| = 3) with the same sign for ~98% of the clips. The tanh units sit on their plateaus, so the
embedding carries almost no class information and tanh'(z) (< 0.01 for most units) starves the
frame encoder of gradient; with plain SGD + momentum nothing pulls the units back: the loss hovers
at or above log(K) and never comes down, without a single non-finite value. The fix divides by the
clip length (mean pooling), which keeps the pre-activations in tanh's linear range; nothing else
changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "embed_act"
SOURCE = ('Known pattern: bag-of-frames video classifiers that sum-pool frame features before a tanh '
          'projection; vanishing gradients through saturated tanh (Glorot & Bengio 2010)')

T, HW, K = 32, 12, 6


class FrameEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(32)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return x.mean(dim=(2, 3))


class ClipClassifier(nn.Module):
    def __init__(self, sum_pool):
        super().__init__()
        self.sum_pool = sum_pool
        self.frames = FrameEncoder()
        self.embed = nn.Linear(32, 32)
        self.embed_act = nn.Tanh()
        self.head = nn.Linear(32, K)

    def forward(self, clip):                       # clip: (B, T, 1, H, W)
        b, t = clip.shape[:2]
        f = self.frames(clip.reshape(b * t, *clip.shape[2:])).reshape(b, t, -1)
        pooled = f.sum(1) if self.sum_pool else f.mean(1)
        return self.head(self.embed_act(self.embed(pooled)))


def _make_clips(g, n):
    y = torch.randint(0, K, (n,), generator=g)
    ii = torch.arange(HW).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    clips = torch.empty(n, T, 1, HW, HW)
    for i in range(n):
        ang = float(y[i]) * 3.14159 / K
        freq = 0.9
        phase = torch.rand(T, 1, 1, generator=g) * 6.28
        pat = torch.sin(freq * (xx * torch.cos(torch.tensor(ang)) + yy * torch.sin(torch.tensor(ang))) + phase)
        present = (torch.rand(T, 1, 1, generator=g) < 0.6).float()
        clips[i, :, 0] = 0.5 + 0.5 * present * pat + 0.3 * torch.randn(T, HW, HW, generator=g)
    return clips, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ClipClassifier(sum_pool=not fixed)
    batches = [_make_clips(g, 12) for _ in range(8)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    steps = 120
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
