"""A small Transformer encoder (input projection, two pre-LN self-attention blocks with a key
padding mask, masked mean pooling) regresses a property of variable-length multichannel sensor
sequences, trained with AdamW. The sequences are stored as a dense array padded to the maximum length;
one shard of the dataset was exported from a dataframe whose missing cells are NaN, so one batch
around step 70 arrives with its padding filled with NaN instead of 0. The mask is applied to the
attention scores (masked_fill -inf), which looks like it should make padding harmless, but the value
vectors of the padded positions are NaN and softmax weight 0 * NaN = NaN inside the attention
matmul, so every valid position of those sequences turns NaN, the loss is NaN and the NaN gradients
destroy the weights for the rest of the run. Cleaning the padding of that batch (filling it with 0
as in every other batch) gives a normal run."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = "in_proj"
SOURCE = ("PyTorch forum / issue reports 'NaN in padded positions propagates through "
          "MultiheadAttention despite key_padding_mask' (0 * NaN = NaN in attn @ V)")

F_IN, D, HEADS, T_MAX = 6, 32, 4, 24


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.h = heads

    def forward(self, x, mask):
        B, T, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        s = s.masked_fill(~mask[:, None, None, :], float("-inf"))
        a = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d)
        x = x + self.o(a)
        return x + self.ff(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(F_IN, D)
        self.pos = nn.Parameter(torch.randn(T_MAX, D) * 0.02)
        self.blocks = nn.ModuleList([Block(D, HEADS) for _ in range(2)])
        self.head = nn.Linear(D, 1)

    def forward(self, x, mask):
        h = self.in_proj(x) + self.pos
        for blk in self.blocks:
            h = blk(h, mask)
        m = mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1)
        return self.head(pooled).squeeze(-1)


def make_batch(g, bs, w, pad_value=0.0):
    lengths = torch.randint(8, T_MAX + 1, (bs,), generator=g)
    mask = torch.arange(T_MAX).unsqueeze(0) < lengths.unsqueeze(1)
    x = torch.randn(bs, T_MAX, F_IN, generator=g)
    # target: mean over valid steps of a nonlinear per-step reading
    per_step = torch.tanh(x @ w) + 0.3 * x[..., 0] * x[..., 1]
    y = (per_step * mask).sum(1) / lengths
    x = torch.where(mask.unsqueeze(-1), x, torch.full_like(x, pad_value))
    return (x, mask), y / y.std()


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    w = torch.randn(F_IN, generator=g)
    steps, bad_step = 120, 70
    batches = []
    for step in range(steps):
        pad = float("nan") if (step == bad_step and not fixed) else 0.0
        batches.append(make_batch(g, 32, w, pad_value=pad))
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
