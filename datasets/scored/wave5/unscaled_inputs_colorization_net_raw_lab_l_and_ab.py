"""Small encoder-decoder colorization network (input: the L channel of a CIELAB image; output: the two
chroma channels a, b; MSE loss). The Lab conversion returns L in [0, 100] and a, b in roughly
[-110, 110], and both were fed to the model as they come out of the colour conversion, without the
usual L/50 - 1 and ab/110 scaling. The first conv (enc.0) therefore sees inputs ~50x larger than
its init assumes, and the targets are chroma values of +-60 for a unit-scale output: the MSE starts
in the thousands (vs ~0.14 when scaled) and its weight gradients are the product of both raw scales.
With the SGD-momentum recipe that trains the scaled version (lr 0.1), the very first update is huge,
the next forward pass overflows and the loss is inf/NaN by step 2.
Fix: standardise the input (L/50 - 1) and the targets (ab/110), nothing else."""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "enc.0"
SOURCE = ("Zhang, Isola & Efros 2016 'Colorful Image Colorization' / skimage.color.rgb2lab ranges "
          "(L in [0,100], ab in ~[-110,110]); colorization tutorials that forget to rescale Lab")


class ColorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=2, dilation=2), nn.ReLU(),
        )
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 2, 3, padding=1),
        )

    def forward(self, L):
        return self.dec(self.enc(L))


def _lab_scenes(g, n, S=24):
    """Three materials: sky (bright, smooth, blue), grass (mid, fine texture, green), brick (dark,
    stripes, red). Returns raw L in [0,100] and raw ab in ~[-80, 80]."""
    yy, xx = torch.meshgrid(torch.arange(S).float(), torch.arange(S).float(), indexing="ij")
    L = torch.zeros(n, 1, S, S); ab = torch.zeros(n, 2, S, S)
    for i in range(n):
        h1 = int(torch.randint(5, 11, (1,), generator=g)); h2 = int(torch.randint(14, 20, (1,), generator=g))
        sky, grass = yy < h1, yy >= h2
        brick = ~(sky | grass)
        L[i, 0][sky] = 85 + 5 * torch.rand(1, generator=g).item()
        L[i, 0][grass] = (55 + 8 * torch.sin(xx * 2.5 + yy * 1.7))[grass]
        L[i, 0][brick] = (30 + 10 * ((yy.long() % 3) == 0).float())[brick]
        ab[i, 0][sky], ab[i, 1][sky] = -10.0, -45.0
        ab[i, 0][grass], ab[i, 1][grass] = -55.0, 50.0
        ab[i, 0][brick], ab[i, 1][brick] = 45.0, 30.0
    L = (L + 2 * torch.randn(L.shape, generator=g)).clamp(0, 100)
    return L, ab


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = ColorNet()
    L, ab = _lab_scenes(g, 192)
    if fixed:
        L, ab = L / 50.0 - 1.0, ab / 110.0
    steps, bs = 100, 16
    batches = []
    for s in range(steps):
        idx = torch.randint(0, L.shape[0], (bs,), generator=g)
        batches.append((L[idx], ab[idx]))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
