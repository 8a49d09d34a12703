"""Multiple imputation of survey item nonresponse with a denoising autoencoder (the MIDAS
approach of Lall & Robinson): each respondent's vector of 0/1 item responses (agree/disagree
batteries, coded 0/1, with 'don't know' treated as missing) is corrupted by dropping 20% of the
observed items, passed through an encoder-decoder, and the reconstruction of all items is
scored with MSE (the Brier score) against the observed answers; SGD.

Mechanism (saturation). The autoencoder was written after the 2006-era deep autoencoder recipe:
logistic (sigmoid) units in every hidden layer, 3-4 of them in the encoder and as many in the
decoder, sigmoid output -- but without the layer-wise RBM pretraining that made those nets
trainable. Each sigmoid layer passes at most 1/4 of the gradient and its outputs cluster at
~0.5, so the code layer carries almost no respondent-specific signal and the gradient reaching
the encoder is vanishingly small; the decoder settles on the marginal item means and the
Brier score stays at its starting level (~0.25 for balanced items).

ORIGIN = "encoder.1": the first sigmoid of the encoder, the first saturating unit on the path
from the responses to the code; the gradient loss compounds from it through the stack.

Fix: non-saturating hidden units (ELU) in encoder and decoder, keeping the sigmoid output for
the 0/1 items; same depth, widths, optimiser, learning rate, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "encoder.1"
SOURCE = ("MIDAS denoising-autoencoder multiple imputation (Lall & Robinson 2022, Political "
          "Analysis); deep sigmoid autoencoders untrainable without pretraining (Hinton & "
          "Salakhutdinov 2006; Glorot & Bengio 2010)")


class ImputationDAE(nn.Module):
    def __init__(self, n_items, width, code, depth, act):
        super().__init__()
        enc, d = [], n_items
        for _ in range(depth):
            enc += [nn.Linear(d, width), act()]
            d = width
        enc += [nn.Linear(d, code), act()]
        dec, d = [], code
        for _ in range(depth):
            dec += [nn.Linear(d, width), act()]
            d = width
        dec += [nn.Linear(d, n_items), nn.Sigmoid()]
        self.encoder = nn.Sequential(*enc)
        self.decoder = nn.Sequential(*dec)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [2, 3, 2][seed % 3]
    width = [64, 96, 128][seed % 3]
    code = [8, 6, 10][seed % 3]
    lr = [0.3, 0.2, 0.25][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200
    n_items, n_factors = 40, 3

    model = ImputationDAE(n_items, width, code, depth, nn.ELU if fixed else nn.Sigmoid)
    load = torch.randn(n_factors, n_items, generator=g) * 1.5

    def sample(n):
        f = torch.randn(n, n_factors, generator=g)
        p = torch.sigmoid(f @ load)
        items = (torch.rand(n, n_items, generator=g) < p).float()
        keep = (torch.rand(n, n_items, generator=g) > 0.2).float()     # corruption
        return items * keep, items

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
