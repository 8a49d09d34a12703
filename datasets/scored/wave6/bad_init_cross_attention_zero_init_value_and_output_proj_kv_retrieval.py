"""Cross-attention 'zero-initialised so it starts as a no-op' - on two consecutive matrices.

An encoder-decoder for key-value retrieval: the encoder reads 8 (key, value) pairs, the
decoder reads 4 query keys and must return the paired values; the only path from the source
to the decoder is one cross-attention layer.  Following the adapter / ControlNet habit of
zero-initialising a new branch so the decoder starts unchanged, the author zeroed the
output projection - and the value projection as well.  With W_v = 0 and W_o = 0 the branch
output is 0, the gradient of W_o is (attention output)^T g = 0 and the gradient of W_v is
mem^T att^T (g W_o^T) = 0, and W_q/W_k get nothing either: the branch is a saddle it never
leaves, with any optimizer.  The decoder never sees the source, the value is unpredictable
from the query key alone and the loss stays at log(16) (stall, no NaN).
Fix: initialise W_v normally (xavier); W_o stays zero, which is the safe version of the trick.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "decoder.cross_attn.v_proj"
SOURCE = ("Zero-init of a new branch (ControlNet 'zero convolution', adapter/LoRA B=0, Flamingo "
          "gated xattn) applied to two consecutive layers; LoRA issues report A=B=0 gives no "
          "gradient at all")

NK, NV, NP, NQ = 16, 16, 8, 4


class CrossAttention(nn.Module):
    def __init__(self, d, h, fixed):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.o_proj = nn.Linear(d, d)
        nn.init.zeros_(self.o_proj.weight)
        nn.init.zeros_(self.o_proj.bias)
        if fixed:
            nn.init.xavier_uniform_(self.v_proj.weight)
        else:
            nn.init.zeros_(self.v_proj.weight)
        nn.init.zeros_(self.v_proj.bias)

    def forward(self, x, mem):
        B, Lq, D = x.shape
        Lk = mem.shape[1]
        q = self.q_proj(x).view(B, Lq, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(mem).view(B, Lk, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(mem).view(B, Lk, self.h, self.dh).transpose(1, 2)
        att = (q @ k.transpose(-1, -2) / math.sqrt(self.dh)).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, Lq, D)
        return self.o_proj(y)


class Decoder(nn.Module):
    def __init__(self, d, h, fixed):
        super().__init__()
        self.q_emb = nn.Embedding(NK, d)
        self.norm_q = nn.LayerNorm(d)
        self.norm_m = nn.LayerNorm(d)
        self.cross_attn = CrossAttention(d, h, fixed)
        self.norm_f = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm_out = nn.LayerNorm(d)
        self.head = nn.Linear(d, NV)

    def forward(self, qkeys, mem):
        x = self.q_emb(qkeys)
        x = x + self.cross_attn(self.norm_q(x), self.norm_m(mem))
        x = x + self.ffn(self.norm_f(x))
        return self.head(self.norm_out(x))


class KVRetriever(nn.Module):
    def __init__(self, fixed, d=32, h=4):
        super().__init__()
        self.k_emb = nn.Embedding(NK, d)
        self.v_emb = nn.Embedding(NV, d)
        layer = nn.TransformerEncoderLayer(d, h, 64, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.decoder = Decoder(d, h, fixed)

    def forward(self, keys, values, qkeys):
        mem = self.encoder(self.k_emb(keys) + self.v_emb(values))
        return self.decoder(qkeys, mem)


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = KVRetriever(fixed)
    steps, bs = 250, 32
    batches = []
    for _ in range(steps):
        keys = torch.stack([torch.randperm(NK, generator=g)[:NP] for _ in range(bs)])
        values = torch.randint(0, NV, (bs, NP), generator=g)
        pick = torch.stack([torch.randperm(NP, generator=g)[:NQ] for _ in range(bs)])
        qkeys = keys.gather(1, pick)
        target = values.gather(1, pick)
        batches.append(((keys, values, qkeys), target))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    def loss_fn(logits, target):
        return F.cross_entropy(logits.reshape(-1, NV), target.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
