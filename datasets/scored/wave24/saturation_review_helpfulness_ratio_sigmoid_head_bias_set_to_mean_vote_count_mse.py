"""Review-helpfulness model for a marketplace: EmbeddingBag(mean) over the review text tokens,
concatenated with star rating / length / verified-purchase features -> MLP -> sigmoid ->
predicted helpful-vote RATIO (helpful / total votes), MSE loss, SGD with momentum.

Mechanism: following the "initialise the final bias to the target mean" advice, the author
set head.bias to the mean of the helpfulness column -- but took the mean HELPFUL-VOTE COUNT
(8-15 votes) from the raw table instead of the logit of the mean ratio. The output
pre-activation is therefore ~8-15 for every review, the sigmoid is pinned at ~1.0, and with
MSE the gradient 2 (p - y) p (1 - p) carries a factor p (1 - p) of 1e-4..1e-7: the head bias,
head weights and everything upstream receive essentially no gradient. The prediction stays
"every review is 100% helpful" and the loss stays at its initial level.

ORIGIN: "head", the output Linear whose pre-activation (its bias) saturates the sigmoid
(applied functionally right after it).

Fix: initialise head.bias to logit(mean helpful ratio), i.e. an order-1
pre-activation; same model, data, optimiser and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "head"
SOURCE = ("Amazon review helpfulness prediction (helpful-vote ratio regression, e.g. McAuley "
          "datasets); Karpathy 'A Recipe for Training Neural Networks' -- 'init well: set the "
          "final layer bias to the target mean' applied without the link function; sigmoid + "
          "MSE vanishing gradient at saturation")


class HelpfulnessNet(nn.Module):
    def __init__(self, vocab, emb, n_meta, hid):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, emb, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(emb + n_meta, hid), nn.ReLU(), nn.Linear(hid, hid),
                                 nn.ReLU())
        self.head = nn.Linear(hid, 1)

    def forward(self, tokens, meta):
        h = self.mlp(torch.cat([self.bag(tokens), meta], 1))
        return torch.sigmoid(self.head(h)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    vocab, n_meta, L, steps = 2000, 4, 40, 150
    emb = [32, 48, 64][seed % 3]
    hid = [64, 96, 48][seed % 3]
    bs = [64, 96, 128][seed % 3]
    lr = [0.1, 0.15, 0.2][seed % 3]
    mean_votes = [8.3, 11.7, 14.6][seed % 3]     # mean helpful-vote COUNT in this category
    torch.manual_seed(seed)
    model = HelpfulnessNet(vocab, emb, n_meta, hid)
    word_w = torch.randn(vocab, generator=g) * 0.7
    batches, ratios = [], []
    for _ in range(steps):
        tok = torch.randint(0, vocab, (bs, L), generator=g)
        stars = torch.randint(1, 6, (bs,), generator=g).float()
        length = torch.rand(bs, generator=g)
        verified = (torch.rand(bs, generator=g) < 0.7).float()
        meta = torch.stack([(stars - 3) / 1.4, length * 2 - 1, verified, (stars == 1).float()], 1)
        z = (0.4 + word_w[tok].mean(1) * 4 + 2.5 * (2 * length - 1) + 1.0 * (verified - 0.7)
             - 0.8 * meta[:, 0] ** 2)
        ratio = torch.sigmoid(z + 0.1 * torch.randn(bs, generator=g))
        ratios.append(ratio)
        batches.append(((tok, meta), ratio))
    with torch.no_grad():
        if fixed:
            m = torch.cat(ratios).mean().item()
            model.head.bias.fill_(math.log(m / (1 - m)))
        else:
            model.head.bias.fill_(mean_votes)      # BUG: mean vote count, not logit(mean ratio)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
