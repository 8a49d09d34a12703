"""Simple-Baselines-style pose net (strided conv backbone + deconv head) whose ReLUs die
in the first few Adam steps; it then predicts the same blank heatmap for every image.

Mechanism
---------
Top-down keypoint estimation in the style of "Simple Baselines for Human Pose
Estimation": a strided conv backbone (conv1/act1, conv2/act2, conv3/act3), one
transposed-conv upsampling stage, and a 1x1 `final_layer` that emits one heatmap per
keypoint.  `final_layer` gets the reference init N(0, 0.001), bias 0.  Training regresses
Gaussian target heatmaps (peak 1, sigma 1-1.5 px) with a per-pixel MSE.  The optimiser
is Adam, but the lr (2e-2 .. 3e-2) was carried over from an SGD recipe.

Each target heatmap is near zero except for one small Gaussian bump, so most output
pixels say "lower the output".  Adam moves every weight and bias by ~lr per step whatever the gradient's size,
and this gradient points the same way for several steps.  The first updates therefore
shift the pre-activations of the second backbone conv (`backbone.conv2`, the first
layer with a strided, channel-doubling receptive field) negative for every unit at every
position of every image.  By step ~4 `backbone.act2` outputs exactly 0 and passes
exactly 0 gradient.  Its units cannot come back: conv2's weights get no gradient, and
the layers after it see only biases, so their ReLUs (act3, head.act) die a few steps
later.  From then on the net's output is input-independent, `final_layer` can only
learn the mean heatmap, and the loss sits flat at var(target) for the rest of training.
The loss itself shows nothing dramatic: no spike, no NaN, just a plateau reached within
~5 steps.

ORIGIN = "backbone.act2": the first ReLU whose units all go dead (by step ~4); the
later ReLUs die as a consequence.

Seed variation: input/heatmap size, widths, number of keypoints, batch size, Gaussian
sigma, lr.

Fix: LeakyReLU(0.1) instead of ReLU (same init, data, optimiser and lr).  Units
pushed negative keep a 10 % gradient and recover, and the net learns to localise the
keypoints.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "backbone.act2"
SOURCE = ("Simple Baselines / HRNet pose repos: issues 'predicted heatmaps are all zeros / identical for every "
          "image' with MSE on mostly-zero Gaussian heatmaps; dying-ReLU threads about Adam run at an SGD-sized "
          "lr (Karpathy, 'Yes you should understand backprop': dead ReLUs after a large update)")


class PoseNet(nn.Module):
    def __init__(self, c, k, fixed):
        super().__init__()
        act = (lambda: nn.LeakyReLU(0.1)) if fixed else nn.ReLU
        self.backbone = nn.Sequential()
        self.backbone.add_module("conv1", nn.Conv2d(3, c, 3, stride=2, padding=1))
        self.backbone.add_module("act1", act())
        self.backbone.add_module("conv2", nn.Conv2d(c, 2 * c, 3, stride=2, padding=1))
        self.backbone.add_module("act2", act())
        self.backbone.add_module("conv3", nn.Conv2d(2 * c, 2 * c, 3, padding=1))
        self.backbone.add_module("act3", act())
        self.head = nn.Sequential()
        self.head.add_module("deconv", nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1))
        self.head.add_module("act", act())
        self.head.add_module("final_layer", nn.Conv2d(c, k, 1))
        # Simple Baselines init for the heatmap layer: N(0, 0.001), bias 0
        nn.init.normal_(self.head.final_layer.weight, std=0.001)
        nn.init.zeros_(self.head.final_layer.bias)

    def forward(self, x):
        return self.head(self.backbone(x))


def _batch(g, b, s, k, sigma, colors):
    hs = s // 2
    img = 0.3 * torch.randn(b, 3, s, s, generator=g)
    yy, xx = torch.meshgrid(torch.arange(s, dtype=torch.float32), torch.arange(s, dtype=torch.float32),
                            indexing="ij")
    hy, hx = torch.meshgrid(torch.arange(hs, dtype=torch.float32), torch.arange(hs, dtype=torch.float32),
                            indexing="ij")
    heat = torch.zeros(b, k, hs, hs)
    margin = 3
    for i in range(b):
        for j in range(k):
            py = margin + torch.rand(1, generator=g).item() * (hs - 1 - 2 * margin)
            px = margin + torch.rand(1, generator=g).item() * (hs - 1 - 2 * margin)
            # marker in the image at the full-res location
            blob = torch.exp(-((yy - 2 * py - 0.5) ** 2 + (xx - 2 * px - 0.5) ** 2) / (2 * 1.2 ** 2))
            img[i] += colors[j].view(3, 1, 1) * blob
            heat[i, j] = torch.exp(-((hy - py) ** 2 + (hx - px) ** 2) / (2 * sigma ** 2))
    return img, heat


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4200 + seed)
    s = [40, 48, 44][seed % 3]
    c = [12, 16, 8][(seed // 3) % 3]
    k = [3, 4, 5][(seed + 1) % 3]
    b = [8, 12, 16][seed % 3]
    sigma = [1.0, 1.5, 1.25][(seed // 2) % 3]
    # lr cycles over six seeds; seed 1 (48 px input, width 12, batch 12) needs the top of the SGD-recipe
    # range for its first Adam steps to push every act2 unit negative (at 2e-2 a few units survive)
    lr = [2.5e-2, 3e-2, 3e-2, 2.5e-2, 2e-2, 3e-2][seed % 6]
    steps = 150

    colors = torch.randn(k, 3, generator=g)
    colors = 2.0 * colors / colors.norm(dim=1, keepdim=True)
    model = PoseNet(c, k, fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [_batch(g, b, s, k, sigma, colors) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
