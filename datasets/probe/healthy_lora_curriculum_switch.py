"""LoRA fine-tuning (PEFT-style: rank 4, alpha 16, A kaiming-uniform, B = 0) of the q/v projections of
a frozen Transformer encoder plus a fresh classification head, on a bag-of-words polarity task with a
length curriculum: short, clear-margin sequences first, then at a seed-dependent step the loader
switches to 3x longer, near-balanced sequences.  It looks alarming: the LoRA B matrices start at
exactly zero (update/weight ratios are infinite, then ~0.8 -> 0.1 over the first ten steps), and the loss jumps
sharply at the curriculum switch before recovering.  Nothing is wrong; fixed=True is identical."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("LoRA (Hu et al. 2021) as initialised by HF PEFT (lora_B zeros, lora_A kaiming_uniform, scaling "
          "alpha/r) on a frozen encoder; sequence-length curriculum (Li et al. 2022 'stability-efficiency "
          "dilemma', short-to-long warm-up) whose switch produces a benign loss jump")

VOCAB, DIM, HEADS, LAYERS, NCLS = 200, 64, 4, 2, 2
RANK, ALPHA = 4, 16


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, RANK, bias=False)
        self.lora_B = nn.Linear(RANK, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = ALPHA / RANK

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(DIM, DIM) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.ff = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        B, T, _ = x.shape
        h = self.ln1(x)
        q, k, v = (m(h).view(B, T, HEADS, DIM // HEADS).transpose(1, 2) for m in (self.q, self.k, self.v))
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, T, DIM)
        x = x + self.o(a)
        return x + self.ff(self.ln2(x))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([EncoderLayer() for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, NCLS)

    def forward(self, tokens):
        T = tokens.shape[1]
        pos = torch.arange(T, dtype=torch.float32)[:, None] / torch.pow(
            10000.0, torch.arange(0, DIM, 2, dtype=torch.float32) / DIM)[None]
        pe = torch.zeros(T, DIM)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos), torch.cos(pos)
        x = self.embed(tokens) + pe
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))


def _batch(gen, bs, length, min_margin):
    """Tokens 0-19 are 'positive', 20-39 'negative', the rest neutral; label = majority polarity."""
    toks, labels = [], []
    while len(toks) < bs:
        t = torch.randint(40, VOCAB, (length,), generator=gen)
        n_pol = int(torch.randint(length // 4, length // 2 + 1, (1,), generator=gen))
        pol = torch.rand(n_pol, generator=gen) < 0.5
        pos_count = int(pol.sum())
        margin = abs(2 * pos_count - n_pol)
        if margin < min_margin:
            continue
        where = torch.randperm(length, generator=gen)[:n_pol]
        t[where] = torch.where(pol, torch.randint(0, 20, (n_pol,), generator=gen),
                               torch.randint(20, 40, (n_pol,), generator=gen))
        toks.append(t)
        labels.append(int(2 * pos_count > n_pol))
    return torch.stack(toks), torch.tensor(labels)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = Classifier()                      # stands in for the pretrained encoder
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:                # PEFT target_modules=["q", "v"]
        layer.q = LoRALinear(layer.q)
        layer.v = LoRALinear(layer.v)
    model.head = nn.Linear(DIM, NCLS)         # modules_to_save: fresh classifier head
    gen = torch.Generator().manual_seed(seed)
    steps, bs = 240, 32
    switch = 90 + int(torch.randint(0, 30, (1,), generator=gen))
    batches = []
    for s in range(steps):
        if s < switch:
            batches.append(_batch(gen, bs, 16, 4))     # short, clear majority
        else:
            batches.append(_batch(gen, bs, 48, 1))     # long, near-balanced
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=2e-3, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
