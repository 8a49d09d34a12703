"""xLSTM-style sLSTM (exponential input gate with stabiliser state) counting tokens - healthy.

What it is
----------
A single sLSTM layer (Beck et al. 2024, "xLSTM") reads a sequence of 20 tokens
and must say which of tokens {0, 1, 2} occurs most often.  The cell uses the
exponential input gate i = exp(i~), a sigmoid forget gate written in log space,
a normaliser state n and the stabiliser state m_t = max(log f_t + m_{t-1}, i~_t):
gates are evaluated as exp(i~ - m_t) and exp(log f_t + m_{t-1} - m_t), so no
exponential ever exceeds 1 and h = o * c / n stays bounded.  Forget-gate biases
are initialised on linspace(3, 6) as in the xLSTM code.  A LayerNorm and a
linear head read the last hidden state; Adam at 3e-3..5e-3, fp32.

Why it is healthy
-----------------
The exponentials, the division by the normaliser and the saturating forget
gates look like hazards, but the stabiliser keeps every value finite and the
loss falls from ~ln(3) to a few hundredths within ~100 steps on every seed,
with ordinary minibatch noise afterwards.  Nothing needs fixing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("xLSTM: Extended Long Short-Term Memory (Beck et al. 2024), sLSTM cell with exponential gating and "
          "stabiliser state m_t (eqs. for stabilised gates); NX-AI/xlstm forget-gate bias init linspace(3, 6)")


class SLSTMCell(nn.Module):
    def __init__(self, din, hidden):
        super().__init__()
        self.hidden = hidden
        self.W = nn.Linear(din, 4 * hidden)
        self.R = nn.Linear(hidden, 4 * hidden, bias=False)
        with torch.no_grad():
            self.W.bias[3 * hidden:].copy_(torch.linspace(3.0, 6.0, hidden))

    def forward(self, xs):
        bsz, steps, _ = xs.shape
        h = xs.new_zeros(bsz, self.hidden)
        c = torch.zeros_like(h)
        n = torch.zeros_like(h)
        m = torch.zeros_like(h)
        wx = self.W(xs)
        outs = []
        for t in range(steps):
            z_t, i_t, o_t, f_t = (wx[:, t] + self.R(h)).chunk(4, -1)
            log_f = F.logsigmoid(f_t)
            m_new = torch.maximum(log_f + m, i_t)
            i = torch.exp(i_t - m_new)
            f = torch.exp(log_f + m - m_new)
            c = f * c + i * torch.tanh(z_t)
            n = f * n + i
            h = torch.sigmoid(o_t) * c / n
            m = m_new
            outs.append(h)
        return torch.stack(outs, 1)


class CountingSLSTM(nn.Module):
    def __init__(self, vocab, dim, hidden, n_cls):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = SLSTMCell(dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, tokens):
        return self.head(self.norm(self.cell(self.embed(tokens))[:, -1]))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    lr = [3e-3, 4e-3, 5e-3][seed % 3]
    vocab, length, batch, steps = 6, 20, 32, 250
    batches = []
    for _ in range(steps):
        tok = torch.randint(0, vocab, (batch, length), generator=g)
        counts = torch.stack([(tok == k).sum(1) for k in range(3)], 1).float() - 0.1 * torch.arange(3)
        batches.append((tok, counts.argmax(1)))          # ties go to the smaller token id
    model = CountingSLSTM(vocab, 16, 48, 3)
    return dict(model=model, optimizer=torch.optim.Adam(model.parameters(), lr=lr), loss_fn=F.cross_entropy,
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
