"""lr_too_high: a small post-LN Transformer encoder with a learned positional embedding,
trained under bfloat16 autocast with AdamW at lr 0.03-0.05 and no warmup.

Model and data
    Sequence reversal over 32 tokens (length 12-16): the target at position i is the input
    at position L-1-i, so the model must use the learned positional embedding
    (``nn.Embedding(max_len, d)`` added to the token embedding). Two
    ``nn.TransformerEncoderLayer`` (d 64, 4 heads, post-LN: PyTorch's default
    norm_first=False, dropout 0) and a Linear head (std 0.02 init). Forward and loss run
    under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (the logits are bfloat16; the loss
    upcasts them). Batch 32, 250 steps.

Mechanism (measured, seeds 0/1/2)
    1. The step-0 update/weight ratio is 0.41 / 0.69 / 0.56 (median over weight matrices;
       up to 1.5-2.6) against 0.014 with lr 1e-3.
    2. Within 5 steps the weight RMS of the first layer's attention/FFN projections grows
       from ~0.09 to 0.13-0.18 and the loss overshoots to 3.9 / 4.4 / 4.1; by step 5 the
       logits no longer depend on the input (std over the batch 0.001-0.003 vs 0.10 at
       init): the post-LN residual stream has collapsed to a constant.
    3. The model predicts the uniform distribution: the loss settles at ln 32 = 3.47 for the
       remaining ~240 steps while the weights keep growing (RMS 0.62-0.69 at the end); mean
       of the last 10% / min of the first 5 = 0.99 -> stall. Nothing is non-finite: bfloat16
       has float32's range.
    With lr 1e-3 (fixed) the same model learns the reversal: 0.022-0.024 nats at step 250
    (r ~ 0.007).

ORIGIN
    None: the fault is the optimiser's learning rate, not a module.

fixed=True
    Only the learning rate changes: AdamW lr = 1e-3 (still bfloat16, no warmup).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("post-LN Transformers need a small lr or warmup: Xiong et al. 2020 'On Layer "
          "Normalization in the Transformer Architecture', Liu et al. 2020 and "
          "LiyuanLucasLiu/Transformer-Clinic#16 (post-LN without warmup does not converge)")


class TinyEncoder(nn.Module):
    def __init__(self, vocab, max_len, d, heads, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)  # learned positional embedding
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        h = self.tok(ids) + self.pos(pos)[None]
        return self.head(self.encoder(h))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    vocab, bs, steps = 32, 32, 250
    L = [16, 12, 14][seed % 3]
    ids = torch.randint(0, vocab, (bs * steps, L), generator=g)
    tgt = ids.flip(1)  # sequence reversal: needs the positional embedding
    batches = [(ids[i*bs:(i+1)*bs], tgt[i*bs:(i+1)*bs]) for i in range(steps)]
    torch.manual_seed(seed)
    model = TinyEncoder(vocab, 64, 64, 4, 2)
    lr = 1e-3 if fixed else [0.03, 0.05, 0.04][seed % 3]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16, scaler=None)
