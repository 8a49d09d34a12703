"""C3D-style video classifier (two 3x3x3 Conv3d + ReLU stages with 3D max-pooling, a third Conv3d +
ReLU, global average pool, linear) recognising the motion direction of a moving object in short
grey-level clips, trained with Adam at lr = 6e-2 (a value copied from a linear-probe notebook) and
no warmup. Adam's first updates move every weight by ~lr regardless of gradient size; the gradient
on the conv biases and on the mostly-positive-input filters has a common sign across units (every
clip has the same bright-object-on-dark-background statistics), so within a few steps the
pre-activations of a ReLU stage are negative for every voxel of every clip. Dead units pass no
gradient, their weights stop moving, and the network output becomes a constant: the loss settles
at log(4) and stays there with perfectly finite numbers. The fixed run uses lr = 1e-3; nothing
else changes.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.1"
SOURCE = ('Tran et al. 2015 C3D; dying ReLU under too large steps (CS231n notes on dead ReLUs with a '
          "high learning rate; Lu et al. 2019 'Dying ReLU and Initialization')")

T, S, K = 8, 16, 4


class C3DLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool3d((1, 2, 2)),
            nn.Conv3d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool3d(2),
            nn.Conv3d(16, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, K)

    def forward(self, clip):
        return self.fc(self.features(clip).mean(dim=(2, 3, 4)))


def _make_batch(g, n):
    y = torch.randint(0, K, (n,), generator=g)
    dirs = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    ii = torch.arange(S).float()
    yy, xx = torch.meshgrid(ii, ii, indexing="ij")
    clips = torch.zeros(n, 1, T, S, S)
    for i in range(n):
        p0 = torch.rand(2, generator=g) * 6 + 5
        v = dirs[y[i]] * (0.8 + 0.6 * float(torch.rand(1, generator=g)))
        for t in range(T):
            cx, cy = (p0 + v * (t - T / 2)).tolist()
            clips[i, 0, t] = torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 4.0)
    return clips + 0.05 * torch.randn(clips.shape, generator=g), y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    batches = [_make_batch(g, 16) for _ in range(10)]
    model = C3DLite()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 6e-2)
    steps = 100
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
