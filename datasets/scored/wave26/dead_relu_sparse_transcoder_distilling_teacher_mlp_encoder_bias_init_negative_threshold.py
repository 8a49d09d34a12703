"""Sparse transcoder: a wide ReLU encoder + linear decoder trained to *distil* a frozen teacher MLP
block (input: the block's input activations, target: the block's output), with an L1 sparsity
penalty on the latent activations; Adam.

Mechanism: to "start sparse", the encoder bias is initialised to a negative threshold,
b_enc = -theta with theta = 3.5-4.5 copied from a config written for a model whose residual stream
is ~30x larger.  Here the inputs are standardised and the PyTorch default encoder init gives
pre-activations with std ~0.6, so the threshold sits 6-8 std below zero: every latent is negative
for every input from step 0.  ReLU outputs are exactly 0, encoder and decoder weights receive
exactly zero gradient, and only the decoder bias can move -- and it is already at the target mean,
where SAE recipes initialise it.  The loss sits at the teacher
output variance: the classic "dead latents" failure of sparse autoencoders/transcoders.

ORIGIN: "act" -- the encoder ReLU, where the latents are dead and the gradient stops (the bias that
puts it there lives in "encoder").

Fix: initialise the encoder bias at zero (the usual init); same width, L1 coefficient, data and
optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "act"
SOURCE = ("Dunefsky et al. 2024 'Transcoders Find Interpretable LLM Feature Circuits'; Bricken et al. "
          "2023 'Towards Monosemanticity' and Gao et al. 2024 'Scaling and evaluating sparse "
          "autoencoders' on dead latents; SAE repos initialising b_enc to a negative threshold")


class Transcoder(nn.Module):
    def __init__(self, d, m, theta):
        super().__init__()
        self.encoder = nn.Linear(d, m)
        self.act = nn.ReLU()
        self.decoder = nn.Linear(m, d)
        with torch.no_grad():
            self.encoder.bias.fill_(-theta)
            self.decoder.weight.mul_(0.1)

    def forward(self, x):
        z = self.act(self.encoder(x))
        return self.decoder(z), z


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    d = 32
    m = [128, 256, 192][seed % 3]
    bs = [128, 256, 192][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    theta = [4.0, 3.5, 4.5][seed % 3]
    l1 = 1e-3
    steps = 200
    # frozen teacher MLP block (GELU), its inputs are correlated residual-stream activations
    W_in = torch.randn(d, 4 * d, generator=g) / d ** 0.5
    W_out = torch.randn(4 * d, d, generator=g) / (4 * d) ** 0.5
    mix = torch.randn(d, d, generator=g) / d ** 0.5 + torch.eye(d)
    batches = []
    for _ in range(steps):
        x = torch.randn(bs, d, generator=g) @ mix
        x = (x - x.mean(0)) / x.std(0)
        y = F.gelu(x @ W_in) @ W_out
        batches.append((x, y))
    torch.manual_seed(seed)
    model = Transcoder(d, m, 0.0 if fixed else theta)
    with torch.no_grad():
        model.decoder.bias.copy_(batches[0][1].mean(0))       # b_dec <- target mean

    def loss_fn(out, y):
        pred, z = out
        return F.mse_loss(pred, y) + l1 * z.abs().sum(-1).mean()

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
