"""bad_init: a DCGAN-style ConvTranspose generator trained as the decoder of a conv
autoencoder, initialised with ``nn.init.normal_(m.weight)`` (std 1.0 instead of 0.02/kaiming).

Model and data
    32x32 single-channel images of Gaussian blobs scaled to [-1, 1]. Encoder: three stride-2
    Conv2d+ReLU and a Linear to a 16-32-d latent (PyTorch default init). Decoder ("netG"):
    Linear -> ReLU -> Unflatten(4C, 4, 4) -> ConvTranspose2d(4C, 2C) -> ReLU ->
    ConvTranspose2d(2C, C) -> ReLU -> ConvTranspose2d(C, 1), kernel 4, stride 2. MSE
    reconstruction loss, SGD lr 0.01, momentum 0.9 (a usual autoencoder recipe).
    The user applies ``decoder.apply(weights_init)`` where weights_init calls
    ``nn.init.normal_(m.weight)`` (mean 0, std 1 by default; the DCGAN recipe is std 0.02)
    and zeroes the biases.

Mechanism (measured, seeds 0/1/2)
    1. With unit-variance weights each ConvTranspose2d multiplies the activation std by
       ~sqrt(fan_in/2) ~ 8-12: at step 0 the decoder's activation std is 0.14 -> 1.4-1.6 ->
       11-17 -> 56-132 at the output (decoder.0 / .3 / .5 / .7), i.e. it grows
       geometrically with depth, while the targets have std ~0.6.
    2. The first MSE is 5.4e3 / 9.5e3 / 2.7e4. Back-propagated through the same
       over-scaled decoder, the gradient reaches 2e3-3e4 per element in the (correctly
       initialised) encoder, and one SGD step with lr 0.01 turns encoder weights of ~0.1 into
       values of 20-300; the second loss is 7e25 / 2e28 / inf.
    3. The next forward overflows float32: the loss is non-finite at step 2 / 2 / 1 and NaN
       from then on.
    With kaiming (fan_in, ReLU gain) initialisation (fixed) the output std at step 0 is
    0.03-0.04, the first loss is 0.63-0.70 and the same recipe trains to 0.23-0.25
    (r = 0.46-0.63).

ORIGIN
    "decoder.0": the first layer with the wrong init (the decoder's input Linear); every
    decoder layer after it has the same init and the scale grows from there.

fixed=True
    Only the initialisation changes: weights_init uses
    ``nn.init.kaiming_normal_(m.weight, nonlinearity="relu")`` (biases still zero).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "decoder.0"
SOURCE = ("DCGAN weights_init (pytorch/examples: normal_(w, 0.0, 0.02); pytorch/examples#516, "
          "FluxML/model-zoo#309 on the 0.02 std) written as nn.init.normal_(m.weight), whose "
          "default std is 1.0; VinceShieh/spark-ffm#12 (too-wide init -> overflow and NaN loss)")


class AutoEncoder(nn.Module):
    def __init__(self, ch, zdim):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, ch, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(ch, 2 * ch, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(2 * ch, 4 * ch, 4, 2, 1), nn.ReLU(),
            nn.Flatten(), nn.Linear(4 * ch * 16, zdim),
        )
        self.decoder = nn.Sequential(
            nn.Linear(zdim, 4 * ch * 16), nn.ReLU(), nn.Unflatten(1, (4 * ch, 4, 4)),
            nn.ConvTranspose2d(4 * ch, 2 * ch, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(2 * ch, ch, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(ch, 1, 4, 2, 1),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def weights_init(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
        nn.init.normal_(m.weight)
        nn.init.zeros_(m.bias)


def weights_init_fixed(m):
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        nn.init.zeros_(m.bias)


def _digits(g, n, size=32):
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    imgs = torch.zeros(n, size, size)
    for k in range(3):
        cx = torch.rand(n, 1, 1, generator=g) * 1.4 - 0.7
        cy = torch.rand(n, 1, 1, generator=g) * 1.4 - 0.7
        sx = 0.1 + 0.3 * torch.rand(n, 1, 1, generator=g)
        sy = 0.1 + 0.3 * torch.rand(n, 1, 1, generator=g)
        imgs = imgs + torch.exp(-((xx - cx) ** 2 / (2 * sx ** 2) + (yy - cy) ** 2 / (2 * sy ** 2)))
    imgs = imgs / imgs.amax((1, 2), keepdim=True)
    return ((imgs - 0.5) / 0.5)[:, None]


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(6000 + seed)
    bs, steps = 32, 150
    x = _digits(g, bs * steps)
    batches = [(x[i*bs:(i+1)*bs], x[i*bs:(i+1)*bs]) for i in range(steps)]
    torch.manual_seed(seed)
    model = AutoEncoder([16, 24, 32][seed % 3], [16, 32, 24][seed % 3])
    model.decoder.apply(weights_init_fixed if fixed else weights_init)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
