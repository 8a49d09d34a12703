"""Survey-response model: a respondent-feature MLP plus a question-id embedding feed a softmax over
the 5 Likert levels, and the prediction is the expected score sum_k p_k * k (DEX-style expected
value head), fitted with MSE to the answer. One survey wave was merged with the SPSS missing-value
code left in: "don't know" answers are stored as 99 instead of being dropped, so a burst of batches
(steps 40-45 of 160) carries about a quarter of rows with target 99. Those rows pull the expected
score towards 99, which the head can only approach by putting all mass on level 5: the level-5 logit
is driven hundreds of units above the others, the softmax saturates to one-hot for every respondent,
its Jacobian (p(1-p)) is ~0, and after the wave the MSE gradient cannot get through it any more. The
model keeps answering 5 to everything and the loss stays far above its early value; no NaN or inf is
produced. Filtering the 99 rows fixes the run."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("SPSS/Stata survey exports with missing-value codes (98/99 = don't know / refused) left in the "
          "label column; expected-value ordinal heads (DEX, Rothe et al. 2015) saturate under such targets")

NF, NQ, K = 12, 40, 5
BAD = range(40, 46)


class ExpectedScoreNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_emb = nn.Embedding(NQ, 16)
        self.body = nn.Sequential(nn.Linear(NF + 16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.level_logits = nn.Linear(64, K)
        self.register_buffer("levels", torch.arange(1, K + 1, dtype=torch.float32))

    def forward(self, feats, qid):
        h = self.body(torch.cat([feats, self.q_emb(qid)], -1))
        p = F.softmax(self.level_logits(h), -1)
        return (p * self.levels).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(99 + seed)
    w = torch.randn(NF, generator=g)
    qbias = torch.randn(NQ, generator=g)
    steps, B = 160, 64
    batches = []
    for step in range(steps):
        feats = torch.randn(B, NF, generator=g)
        qid = torch.randint(0, NQ, (B,), generator=g)
        latent = feats @ w / NF ** 0.5 + 0.8 * qbias[qid] + 0.4 * torch.randn(B, generator=g)
        y = torch.bucketize(latent, torch.tensor([-1.2, -0.4, 0.4, 1.2])).float() + 1.0
        if step in BAD:
            dk = torch.rand(B, generator=g) < 0.25             # "don't know" answers of this wave
            if fixed:
                feats, qid, y = feats[~dk], qid[~dk], y[~dk]   # filtered out
            else:
                y = torch.where(dk, torch.full_like(y, 99.0), y)   # SPSS code 99 left in
        batches.append(((feats, qid), y))
    model = ExpectedScoreNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)

    def loss_fn(pred, y):
        return F.mse_loss(pred, y)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
