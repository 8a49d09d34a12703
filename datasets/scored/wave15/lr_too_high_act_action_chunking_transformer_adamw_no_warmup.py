"""ACT-style action-chunking transformer policy (Zhao et al. 2023, behaviour cloning for
bimanual manipulation), reduced: proprio + a tiny image-feature token sequence go through a
post-LN transformer encoder, a set of learned query tokens decodes a chunk of K future joint
targets; L1 loss (as in ACT), AdamW.

Mechanism: the user takes lr=2e-2..5e-2 (a 'works for my MLP policy' value) with no warmup for
a post-LN transformer (ACT uses 1e-5 with AdamW).  The first AdamW steps move every weight by
~lr; the attention/FFN weights are knocked far from their init within a few steps, the
LayerNorms renormalise the damage and the policy settles on a near-constant, input-independent
chunk -- the L1 loss oscillates around its initial level instead of decreasing.

ORIGIN: None -- a global optimiser setting, every layer receives oversized updates.
Fix: lr=3e-4 (fixed=True), everything else identical.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("tonyzhaozh/act (ACT policy, lr 1e-5 AdamW); issues where raising the lr for faster "
          "training makes the policy output a constant action chunk.")


class ACTPolicy(nn.Module):
    def __init__(self, qdim, d, layers, K, n_img):
        super().__init__()
        self.K, self.qdim = K, qdim
        self.proprio = nn.Linear(qdim, d)
        self.img = nn.Linear(16, d)
        self.pos = nn.Parameter(torch.randn(1 + n_img, d) * 0.02)
        enc_layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(enc_layer, layers)
        dec_layer = nn.TransformerDecoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoder(dec_layer, 1)
        self.query = nn.Parameter(torch.randn(K, d) * 0.02)
        self.action_head = nn.Linear(d, qdim)

    def forward(self, qpos, img_tokens):
        tok = torch.cat([self.proprio(qpos)[:, None], self.img(img_tokens)], 1) + self.pos
        mem = self.encoder(tok)
        q = self.query[None].expand(qpos.shape[0], -1, -1)
        return self.action_head(self.decoder(q, mem))


def make_batch(g, bs, qdim, K, n_img, W):
    qpos = (torch.rand(bs, qdim, generator=g) * 2 - 1) * 2.5            # joint angles (rad)
    goal_feat = torch.randn(bs, n_img, 16, generator=g)
    goal = 2.5 * torch.tanh(goal_feat.mean(1) @ W)                    # target joint config (rad)
    alpha = torch.linspace(1.0 / K, 1.0, K)[None, :, None]
    chunk = qpos[:, None] + alpha * (goal[:, None] - qpos[:, None])   # smooth chunk to the goal
    return (qpos, goal_feat), chunk


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(qdim=7, d=64, layers=2, K=8, n_img=6, lr=2e-2, bs=32, steps=100),
           dict(qdim=14, d=48, layers=3, K=10, n_img=4, lr=5e-2, bs=16, steps=150),
           dict(qdim=6, d=32, layers=2, K=6, n_img=8, lr=3e-2, bs=64, steps=120)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 61)
    W = torch.randn(16, cfg["qdim"], generator=g) * 1.5
    model = ACTPolicy(cfg["qdim"], cfg["d"], cfg["layers"], cfg["K"], cfg["n_img"])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4 if fixed else cfg["lr"], weight_decay=1e-4)
    batches = [make_batch(g, cfg["bs"], cfg["qdim"], cfg["K"], cfg["n_img"], W) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=F.l1_loss, batches=batches, steps=cfg["steps"])
