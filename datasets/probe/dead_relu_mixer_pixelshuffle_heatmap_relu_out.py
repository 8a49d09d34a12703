"""MLP-Mixer keypoint-heatmap regressor: patch tokens -> token/channel mixing blocks ->
per-token linear -> PixelShuffle(4) back to full-resolution heatmaps, with timm-style init
(head weight and bias zero-initialised). The head was built with the same `linear + act`
pattern as the hidden layers, so the heatmaps pass through a final ReLU. Every output
pre-activation is exactly 0 at step 0, ReLU'(0) = 0, so no gradient ever reaches the head
or the trunk: the units are dead from the start and the loss stays at mean(target^2).
fixed=True: no ReLU on the heatmap output (linear heatmap logits, as in SimpleBaseline/HRNet).
"""

import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "head.act"
SOURCE = (
    "Known pattern: timm's mlp_mixer _init_weights zero-initialises the head; heatmap keypoint "
    "regression normally ends in a linear layer (SimpleBaseline, Xiao et al. 2018); a ReLU after a "
    "zero-initialised final layer gives all-zero heatmaps and zero gradients "
    "(PyTorch relu grad at 0 is 0)"
)


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, tok_hidden, ch_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(
            nn.Linear(tokens, tok_hidden), nn.GELU(), nn.Linear(tok_hidden, tokens)
        )
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(
            nn.Linear(dim, ch_hidden), nn.GELU(), nn.Linear(ch_hidden, dim)
        )

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class HeatmapHead(nn.Module):
    def __init__(self, dim, kpts, patch, grid, fixed):
        super().__init__()
        self.grid = grid
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, kpts * patch * patch)
        self.shuffle = nn.PixelShuffle(patch)
        self.act = nn.Identity() if fixed else nn.ReLU()

    def forward(self, x):
        B = x.shape[0]
        x = self.proj(self.norm(x)).transpose(1, 2).reshape(B, -1, self.grid, self.grid)
        return self.act(self.shuffle(x))


class MixerPose(nn.Module):
    def __init__(self, fixed, img=16, patch=4, dim=64, depth=3, kpts=2):
        super().__init__()
        grid = img // patch
        self.stem = nn.Conv2d(1, dim, patch, patch)
        self.blocks = nn.Sequential(*[MixerBlock(grid * grid, dim, 32, 128) for _ in range(depth)])
        self.head = HeatmapHead(dim, kpts, patch, grid, fixed)
        for name, m in self.named_modules():  # timm mlp_mixer _init_weights
            if isinstance(m, nn.Linear):
                if name.startswith("head"):
                    nn.init.zeros_(m.weight)
                    nn.init.zeros_(m.bias)
                else:
                    nn.init.xavier_uniform_(m.weight)
                    nn.init.normal_(m.bias, std=1e-6) if "mlp" in name else nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        return self.head(self.blocks(x))


def _make_batch(g, bs, img=16, kpts=2, sigma=1.5):
    # keypoint 0 is a bright blob, keypoint 1 a dark blob, on a noisy background
    yy, xx = torch.meshgrid(torch.arange(img).float(), torch.arange(img).float(), indexing="ij")
    pos = 2 + torch.rand(bs, kpts, 2, generator=g) * (img - 4)
    d2 = (yy - pos[..., 0, None, None]) ** 2 + (xx - pos[..., 1, None, None]) ** 2  # bs,k,H,W
    heat = torch.exp(-d2 / (2 * sigma**2))
    sign = torch.tensor([1.0, -1.0])[:kpts]
    x = (heat * sign[None, :, None, None]).sum(1, keepdim=True) * 2.0 + 0.3 * torch.randn(
        bs, 1, img, img, generator=g
    )
    return x, heat


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    model = MixerPose(fixed)
    steps = 200
    batches = [_make_batch(g, 32) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(
        model=model,
        optimizer=opt,
        loss_fn=nn.MSELoss(),
        batches=batches,
        steps=steps,
        amp_dtype=None,
        scaler=None,
    )
