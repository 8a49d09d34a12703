"""Recursive (tree-structured) neural network for type inference over expression ASTs.

Model: complete binary expression trees (depth 4-6 by seed) of a small typed DSL. Leaves are
literals / variables (embedded), internal nodes are operators. A single composition layer
`compose` (Linear 2d -> d) merges the two children, the operator embedding is added, and a ReLU
follows; this is applied bottom-up level by level, and the root vector is classified into the
expression's type. Loss: cross-entropy; optimiser: SGD with momentum.

Mechanism: the model's custom init calls `nn.init.normal_(self.compose.weight)` (std 1) instead
of a fan-in scaled init. Every tree level multiplies the activation scale by about
sqrt(2d * 1 / 2) = sqrt(d) (7-10x), so at the root the activations are 1e3-1e6 times larger
than at the leaves: the logits are enormous from step 0 and the cross-entropy is in the
thousands. The gradients that flow back through the same std-1 weights are just as large; the
first momentum-SGD steps move the weights by orders of magnitude more than their size, the
scale compounds again through the levels, and within a few steps the loss is inf/NaN.

ORIGIN: `compose` -- the composition layer's init is where the scale starts to grow; it is
applied at every level, so the growth compounds with tree depth.

Fix: `nn.init.xavier_uniform_` (ReLU gain) on the composition weight; same model, data,
optimiser and steps.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "compose"
SOURCE = ("Socher et al. recursive neural networks / tree-structured program encoders; "
          "PyTorch forum threads on custom reset_parameters using nn.init.normal_ without std "
          "(activations exploding with tree depth, loss in the thousands from the first step)")


class TreeRNN(nn.Module):
    def __init__(self, n_leaf, n_op, d, n_types, depth, good_init):
        super().__init__()
        self.depth = depth
        self.leaf = nn.Embedding(n_leaf, d)
        self.op = nn.Embedding(n_op, d)
        self.compose = nn.Linear(2 * d, d)
        self.act = nn.ReLU()
        self.head = nn.Linear(d, n_types)
        with torch.no_grad():
            nn.init.normal_(self.leaf.weight, 0.0, 0.5)
            nn.init.normal_(self.op.weight, 0.0, 0.5)
            if good_init:
                nn.init.xavier_uniform_(self.compose.weight, gain=nn.init.calculate_gain("relu"))
            else:
                nn.init.normal_(self.compose.weight)
            nn.init.zeros_(self.compose.bias)

    def forward(self, leaves, ops):
        # leaves: B x 2^D ids; ops: list over levels (bottom first) of B x 2^(D-1-l) ids
        h = self.leaf(leaves)
        for lvl in range(self.depth):
            B, n, d = h.shape
            pair = h.reshape(B, n // 2, 2 * d)
            h = self.act(self.compose(pair) + self.op(ops[lvl]))
        return self.head(h.squeeze(1))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [5, 4, 6][seed % 3]
    d = [64, 96, 48][seed % 3]
    n_types = [5, 4, 6][seed % 3]
    n_leaf, n_op = 24, 6
    batch = [48, 64, 32][seed % 3]
    steps = [150, 160, 140][seed % 3]
    lr = [0.02, 0.03, 0.01][seed % 3]

    leaf_type = torch.randint(0, n_types, (n_leaf,), generator=g)
    # typing rules: ops 0-2 have a fixed result type (comparison -> bool, concat -> str, ...),
    # op 3 returns its left operand's type, op 4 its right operand's, op 5 is a cast that maps
    # the left type through a fixed table
    rule = torch.empty(n_op, n_types, n_types, dtype=torch.long)
    fixed_t = torch.randperm(n_types, generator=g)[:3]
    cast = torch.randint(0, n_types, (n_types,), generator=g)
    for o in range(3):
        rule[o] = fixed_t[o]
    rule[3] = torch.arange(n_types).view(-1, 1).expand(n_types, n_types)
    rule[4] = torch.arange(n_types).view(1, -1).expand(n_types, n_types)
    rule[5] = cast.view(-1, 1).expand(n_types, n_types)
    batches = []
    for _ in range(steps):
        leaves = torch.randint(0, n_leaf, (batch, 2 ** depth), generator=g)
        t = leaf_type[leaves]
        ops = []
        for lvl in range(depth):
            o = torch.randint(0, n_op, (batch, t.shape[1] // 2), generator=g)
            t = rule[o, t[:, 0::2], t[:, 1::2]]
            ops.append(o)
        batches.append(((leaves, ops), t.squeeze(1)))

    model = TreeRNN(n_leaf, n_op, d, n_types, depth, good_init=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
