"""Language identification from character-frequency profiles: each 'document' is summarised by the log
relative frequency of the 26 letters and the space, log(count/len + 1e-3), and an MLP classifies it
into one of 6 languages (Adamax). The MLP is assembled in a loop with the activation placed *before*
each Linear (a pre-activation habit): [ReLU, Linear, ReLU, Linear, ReLU, Linear]. The very first
ReLU (net.0) therefore acts on the raw features, and log-frequencies are all negative (between
log(1e-3) and 0): the ReLU outputs exactly zero for every input and every feature, so net.1 sees an
all-zero vector and gets no weight gradient; every hidden activation is the same for every document,
the later layers can only learn a constant output (the class prior, uniform here), and the loss
stays at ~log(6). No NaN, no explosion - just a flat loss. Fix: no activation on the raw input
(net.0 becomes Identity); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "net.0"
SOURCE = ("Cavnar & Trenkle-style character n-gram language identification on log-frequency profiles; "
          "MLP builders that put nn.ReLU() before every nn.Linear (pre-activation ordering) so the first "
          "ReLU clips non-positive raw inputs - 'network outputs the same class for every input' reports")

N_LANG, N_CHAR = 6, 27


class LangID(nn.Module):
    def __init__(self, relu_on_input):
        super().__init__()
        dims = [N_CHAR, 64, 32, N_LANG]
        layers = []
        for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:])):
            act = nn.ReLU() if (i > 0 or relu_on_input) else nn.Identity()
            layers += [act, nn.Linear(d_in, d_out)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    base = torch.rand(N_CHAR, generator=g) + 0.2
    lang_profiles = torch.softmax(torch.log(base) + 0.8 * torch.randn(N_LANG, N_CHAR, generator=g), dim=1)

    def sample(B):
        lang = torch.randint(0, N_LANG, (B,), generator=g)
        length = torch.randint(40, 200, (B,), generator=g)
        feats = []
        for i in range(B):
            chars = torch.multinomial(lang_profiles[lang[i]], int(length[i]), replacement=True, generator=g)
            freq = torch.bincount(chars, minlength=N_CHAR).float() / length[i]
            feats.append(torch.log(freq + 1e-3))
        return torch.stack(feats), lang

    steps = 150
    batches = [sample(32) for _ in range(steps)]
    model = LangID(relu_on_input=not fixed)
    opt = torch.optim.Adamax(model.parameters(), lr=4e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
