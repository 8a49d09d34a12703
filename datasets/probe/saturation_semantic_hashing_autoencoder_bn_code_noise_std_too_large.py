"""Semantic-hashing autoencoder (Salakhutdinov & Hinton 2009) for binary
document codes used in recommendation/retrieval: log1p word counts -> ReLU
encoder -> BatchNorm -> sigmoid code layer (16-32 bits) -> ReLU decoder ->
softmax over the vocabulary, trained with the multinomial NLL of the
document's words (per word).  To force the codes towards 0/1, Gaussian noise is added to the code
pre-activations during training.  The decoder output bias is initialised to
the log unigram frequencies (standard practice), Adam.

Mechanism: the noise standard deviation (8) was copied from a write-up of
the original RBM-pretrained model, whose code pre-activations were already
tens of units wide.  Here the code pre-activations are batch-normalised to
unit scale (so the network cannot simply outgrow the noise), and
sigmoid(z + 8*eps) is 0 or 1 almost regardless of z: the code units are saturated on essentially
every sample, their derivative sigmoid'(.) ~ 0 cuts the gradient to the
encoder, and the decoder receives random bits that carry no information about
the document.  The loss stays at the unigram-entropy level it started from
while the fixed run learns topic-specific reconstructions.

ORIGIN is ``code_act``: the sigmoid code layer is the saturating unit.

Fix: a noise level matched to the pre-activation scale (std 0.3), which keeps
the sigmoid in its responsive range while still encouraging binary codes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "code_act"
SOURCE = ("Semantic hashing (Salakhutdinov & Hinton 2009) noise-injected sigmoid code "
          "layer; noise std taken over from a different pre-activation scale")


class SemanticHashAE(nn.Module):
    def __init__(self, vocab, hidden, bits, noise_std, log_unigram):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(vocab, hidden), nn.ReLU(), nn.Linear(hidden, bits), nn.BatchNorm1d(bits))
        self.code_act = nn.Sigmoid()
        self.decoder = nn.Sequential(nn.Linear(bits, hidden), nn.ReLU(), nn.Linear(hidden, vocab))
        with torch.no_grad():
            self.decoder[2].bias.copy_(log_unigram)
        self.noise_std = noise_std

    def forward(self, counts):
        z = self.encoder(torch.log1p(counts))
        if self.training:
            z = z + self.noise_std * torch.randn_like(z)
        return self.decoder(self.code_act(z))


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(vocab=600, topics=10, hidden=256, bits=24, bs=64, lr=2e-3, steps=150),
        dict(vocab=400, topics=8, hidden=128, bits=16, bs=48, lr=3e-3, steps=130),
        dict(vocab=800, topics=12, hidden=256, bits=32, bs=96, lr=2e-3, steps=120),
    ][seed % 3]
    g = torch.Generator().manual_seed(1984 + seed)
    V, K = cfg["vocab"], cfg["topics"]
    topic_word = torch.softmax(torch.randn(K, V, generator=g) * 3.0, dim=1)
    n_docs = 2000
    docs = torch.zeros(n_docs, V)
    for d in range(n_docs):
        k = torch.multinomial(torch.ones(K), 2, replacement=False, generator=g)
        w = torch.rand(1, generator=g)
        p = w * topic_word[k[0]] + (1 - w) * topic_word[k[1]]
        length = int(torch.randint(40, 200, (1,), generator=g))
        docs[d] = torch.bincount(torch.multinomial(p, length, replacement=True, generator=g), minlength=V).float()
    unigram = docs.sum(0) + 1.0
    log_unigram = torch.log(unigram / unigram.sum())

    torch.manual_seed(seed)
    model = SemanticHashAE(V, cfg["hidden"], cfg["bits"], 0.3 if fixed else 8.0, log_unigram)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])

    def loss_fn(logits, counts):
        return -(F.log_softmax(logits, dim=1) * counts).sum() / counts.sum()

    batches = []
    for _ in range(cfg["steps"]):
        idx = torch.randint(0, n_docs, (cfg["bs"],), generator=g)
        batches.append((docs[idx], docs[idx]))
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=cfg["steps"])
