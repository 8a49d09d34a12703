"""FiLM visual reasoning model (Perez et al., AAAI 2018) for a small synthetic VQA task: a GRU reads
the question, a linear FiLM generator predicts per-channel (delta_gamma, beta) for every residual
block of a BatchNorm-free conv stack over the image feature map, and a classifier answers.

Mechanism: convs get He init (right for the BN-free ReLU stack), but the generator's output Linear
was initialised by a generic helper with `normal_(0, 1)` (no fan-in scaling).  With a 64-d GRU question code,
delta_gamma and beta come out with std ~2, so every FiLM'ed block multiplies its branch by
|1 + delta_gamma| ~ 2-3 and adds a bias of the same size; without BatchNorm nothing renormalises,
and the residual stream grows geometrically with depth from step 0 (rms x2.5-3 per block: ~2 after
the first block, ~1e2-1e3 after 5-7).  The logits are correspondingly huge, the first SGD steps are
enormous and the loss goes to inf/NaN within a few steps.

ORIGIN: "film_gen" -- the generator head whose far-too-large weights produce the FiLM parameters; the
blow-up of the residual stream is a consequence of what it emits.

Fix: initialise the generator head with a small init (xavier_uniform_ with gain 0.1 and zero bias,
so gamma starts near 1 and beta near 0, as FiLM implementations do); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "film_gen"
SOURCE = ("Perez et al. 2018 'FiLM: Visual Reasoning with a General Conditioning Layer' (gamma/beta "
          "predicted by a linear generator); ethanjperez/film and TADAM re-implementations that "
          "initialise the generator head with a generic normal(0,1) weights_init")


class FiLMBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, gamma, beta):
        h = F.relu(self.conv1(x))
        h = self.conv2(h)
        h = (1 + gamma[:, :, None, None]) * h + beta[:, :, None, None]
        return x + F.relu(h)


class FiLMVQA(nn.Module):
    def __init__(self, vocab, c_img, ch, depth, n_ans, fixed):
        super().__init__()
        self.emb = nn.Embedding(vocab, 32)
        self.gru = nn.GRU(32, 64, batch_first=True)
        self.stem = nn.Conv2d(c_img, ch, 3, padding=1)
        self.blocks = nn.ModuleList([FiLMBlock(ch) for _ in range(depth)])
        self.film_gen = nn.Linear(64, 2 * ch * depth)
        self.classifier = nn.Sequential(nn.Linear(ch, 64), nn.ReLU(), nn.Linear(64, n_ans))
        self.ch, self.depth = ch, depth
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        if fixed:
            nn.init.xavier_uniform_(self.film_gen.weight, gain=0.1)
        else:
            nn.init.normal_(self.film_gen.weight, 0.0, 1.0)
        nn.init.zeros_(self.film_gen.bias)

    def forward(self, img, q):
        _, hq = self.gru(self.emb(q))
        film = self.film_gen(hq[-1]).view(-1, self.depth, 2, self.ch)
        x = F.relu(self.stem(img))
        for i, blk in enumerate(self.blocks):
            x = blk(x, film[:, i, 0], film[:, i, 1])
        return self.classifier(x.mean((2, 3)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [6, 5, 7][seed % 3]
    ch = [32, 24, 40][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [0.02, 0.015, 0.01][seed % 3]
    c_img, vocab, n_ans, steps, H = 8, 20, 4, 200, 6
    batches = []
    for _ in range(steps):
        offs = 0.6 * torch.randn(bs, c_img, 1, 1, generator=g)
        img = offs + 0.5 * torch.randn(bs, c_img, H, H, generator=g)
        attr = torch.randint(0, 2, (bs,), generator=g)      # "which of the 4 {shapes|colours} ..."
        q = torch.randint(2, vocab, (bs, 6), generator=g)
        q[:, 2] = attr                                   # the word that names the attribute family
        means = img.mean((2, 3)).view(bs, 2, 4)          # (bs, family, member)
        ans = means[torch.arange(bs), attr].argmax(1)    # "... is the most present?"
        batches.append(((img, q), ans))
    torch.manual_seed(seed)
    model = FiLMVQA(vocab, c_img, ch, depth, n_ans, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
