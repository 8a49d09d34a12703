"""DeViSE visual-semantic embedding (Frome et al. 2013) with a deep visual transform.

Pre-extracted CNN image features go through a BN-free ReLU MLP and a final linear map into the
(frozen) word-vector space of the class names; the score of class j is the dot product with the
word vector t_j and the loss is DeViSE's hinge rank loss
    sum_{j != y} max(0, margin - t_y . Mv + t_j . Mv).

Mechanism: the user copied the Caffe ``gaussian std 0.01`` weight filler for every Linear of the
visual transform.  With fan-in 128..192 and ReLU, each layer multiplies the activation scale by
0.01*sqrt(fan_in/2) ~ 0.1, so after 5-7 layers the projected vector Mv is ~1e-6 of its proper
size from step 0: every score is ~0, every hinge term sits at exactly `margin`, and the
gradient reaching each layer is scaled by the product of the other tiny layers.  SGD makes no
visible progress; the loss hovers around margin*(K-1) (only the last bias moves).

ORIGIN: ``visual.0`` -- the first Linear of the visual transform; the geometric shrinkage starts
there and compounds through every later layer (all share the bad filler).

Fix: Kaiming-normal (fan_in, relu) init of the Linears (the PyTorch-recommended init for ReLU MLPs).
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "visual.0"
SOURCE = ("DeViSE (Frome et al., NeurIPS 2013) hinge rank loss onto frozen word vectors; Caffe "
          "'gaussian std: 0.01' filler kept for a deep BN-free MLP (vanishing activations, "
          "He et al. 2015 discussion of std 0.01 init)")


class DeViSE(nn.Module):
    def __init__(self, in_dim, width, depth, word_vecs, fixed):
        super().__init__()
        layers, d = [], in_dim
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, word_vecs.shape[1]))
        self.visual = nn.Sequential(*layers)
        self.register_buffer("word_vecs", word_vecs)        # frozen skip-gram label embeddings
        for m in self.visual.modules():
            if isinstance(m, nn.Linear):
                if fixed:
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                else:
                    nn.init.normal_(m.weight, 0.0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, feats):
        return self.visual(feats) @ self.word_vecs.t()        # [B, K] similarity scores


def hinge_rank_loss(scores, y, margin=0.1):
    pos = scores.gather(1, y[:, None])
    viol = (margin - pos + scores).clamp_min(0)
    viol = viol.scatter(1, y[:, None], 0.0)
    return viol.sum(1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(width=128, depth=5, lr=0.02, bs=32, steps=120, k=20),
           dict(width=192, depth=6, lr=0.01, bs=48, steps=100, k=30),
           dict(width=160, depth=4, lr=0.03, bs=24, steps=140, k=16)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    in_dim, wdim = 96, 50
    word_vecs = torch.randn(cfg["k"], wdim, generator=g)
    word_vecs = word_vecs / word_vecs.norm(dim=1, keepdim=True)
    protos = torch.randn(cfg["k"], in_dim, generator=g)

    model = DeViSE(in_dim, cfg["width"], cfg["depth"], word_vecs, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)

    batches = []
    for _ in range(cfg["steps"]):
        y = torch.randint(0, cfg["k"], (cfg["bs"],), generator=g)
        feats = torch.relu(protos[y] + 0.8 * torch.randn(cfg["bs"], in_dim, generator=g))  # pool5-like
        batches.append((feats, y))
    return dict(model=model, optimizer=opt, loss_fn=hinge_rank_loss, batches=batches,
                steps=cfg["steps"])
