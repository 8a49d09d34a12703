"""Job-posting salary regression: a tiny causal transformer decoder reads the posting, the last
token's hidden state goes through a Linear regression head (GPT-style sequence regression), MSE
loss. The targets are raw annual salaries in USD (~30k-200k) instead of standardised values.

Mechanism: the head is initialised to predict ~0, so the MSE starts at ~1e10; Adam moves the head
weights/bias by ~lr per step, i.e. a few units of dollars, so after the whole run the predictions
are still ~0 and the loss is essentially unchanged (a stall), while the encoder receives only
useless 'increase everything' gradients.
ORIGIN: head, the regression output layer that has to produce the unscaled targets.
Fix: standardise the targets (z-score with the training mean/std) before the MSE.
"""
import torch, torch.nn as nn, torch.nn.functional as F
CAUSE = "unscaled_inputs"
ORIGIN = "head"
SOURCE = "HF *ForSequenceClassification with num_labels=1 (last-token pooling) on raw salary / price targets; Kaggle job-salary prediction"

class SalaryGPT(nn.Module):
    def __init__(s, V, d, L, T):
        super().__init__()
        s.tok = nn.Embedding(V, d); s.pos = nn.Embedding(T, d)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        s.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        s.ln_f = nn.LayerNorm(d); s.head = nn.Linear(d, 1)
    def forward(s, x):
        T = x.shape[1]
        h = s.blocks(s.tok(x) + s.pos(torch.arange(T)), mask=nn.Transformer.generate_square_subsequent_mask(T), is_causal=True)
        return s.head(s.ln_f(h[:, -1])).squeeze(-1)

def build(seed: int, fixed: bool = False) -> dict:
    L, d, lr, B = [(2, 32, 1e-3, 32), (1, 48, 2e-3, 24), (3, 32, 1e-3, 16)][seed % 3]
    torch.manual_seed(seed)
    V, T, steps = 50, 16, 100
    model = SalaryGPT(V, d, L, T)
    g = torch.Generator().manual_seed(88 + seed)
    word_val = torch.randn(V, generator=g) * 8000.0           # seniority / location words
    batches = []
    for _ in range(steps):
        x = torch.randint(0, V, (B, T), generator=g)
        usd = 90000.0 + word_val[x].sum(1) + 3000.0 * torch.randn(B, generator=g)
        y = (usd - 90000.0) / 30000.0 if fixed else usd
        batches.append((x, y))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps)
