"""Small GPT-style causal LM (token + position embeddings, 2 pre-LN blocks) trained with AdamW.

Each sequence repeats a random 8-token pattern (tokens drawn from a mildly skewed unigram), so after the
first period every token is predictable by attending back 8 positions (an induction/copy circuit),
while a model that only predicts token frequencies sits at the unigram entropy (~3.83 nats).
At lr 6e-2..1e-1 (no warmup) AdamW's updates overshoot: the attention never forms, the loss jumps and
then stalls at the unigram level without going non-finite.  fixed=True: lr = 1e-3, same model and data.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("nanoGPT/minGPT-style training with a too-high AdamW lr and no warmup: the loss plateaus at the "
          "unigram entropy (the model predicts token frequencies only) instead of learning in-context structure; "
          "cf. Wortsman et al. 2023 'Small-scale proxies for large-scale Transformer training instabilities' "
          "(lr sensitivity of small transformers) and Olsson et al. 2022 on induction-head formation")

LR_BAD = (6e-2, 8e-2, 1e-1)      # picked by seed
LR_OK = 1e-3


class Block(nn.Module):
    def __init__(self, d, n_head, T):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_head, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, x):
        t = x.shape[1]
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=self.mask[:t, :t], need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, T, d=64, n_head=4, n_layer=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(T, d)
        self.blocks = nn.Sequential(*[Block(d, n_head, T) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        return self.lm_head(self.ln_f(self.blocks(x)))


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def repeat_corpus(vocab, n_seq, T, period, g):
    freq = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float32) ** 0.3     # mildly skewed unigram
    freq = freq[torch.randperm(vocab, generator=g)]
    freq = freq / freq.sum()
    pat = torch.multinomial(freq, n_seq * period, replacement=True, generator=g).view(n_seq, period)
    reps = (T + 1 + period - 1) // period
    return pat.repeat(1, reps)[:, :T + 1], freq


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    vocab, T, bs, steps = 48, 32, 16, 300
    data, _ = repeat_corpus(vocab, bs * steps, T, 8, g)
    batches = [(data[i * bs:(i + 1) * bs, :-1], data[i * bs:(i + 1) * bs, 1:]) for i in range(steps)]
    model = TinyGPT(vocab, T)
    lr = LR_OK if fixed else LR_BAD[seed % 3]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    return dict(model=model, optimizer=opt, loss_fn=lm_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
