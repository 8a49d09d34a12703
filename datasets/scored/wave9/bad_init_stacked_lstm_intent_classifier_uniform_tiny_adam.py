"""Spoken-language-understanding intent classifier: token ids -> embedding -> a 5-layer stack of
LSTMs -> linear intent head, trained with Adam. The author re-initialised *every*
parameter of the stack with nn.init.uniform_(p, -0.002, 0.002), a mis-copied version of the
classic "uniform(-0.08, 0.08)" seq2seq recipe. With such tiny input/recurrent weights every gate
sits at 0.5 and each LSTM layer hands the next one a signal roughly 100x smaller than its own
input, so the last layer's output is ~1e-8 and the gradients reaching the lower layers are smaller
still (Adam's epsilon swallows them): the head only sees a constant, the balanced intent loss sits at log(K) and never moves. No
value ever becomes non-finite; the run simply stalls. Fixed: PyTorch's default init
(uniform +-1/sqrt(hidden) LSTM weights, N(0,1) embedding), nothing else changed."""
import torch, torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "lstm_layers.0"
SOURCE = ("Sutskever et al. 2014 uniform(-0.08,0.08) LSTM init recipe mis-copied with a far smaller "
          "range; PyTorch forum threads 'stacked LSTM loss stuck at log(num_classes)'")

V, E, H, K, T, B, L = 60, 32, 32, 6, 12, 32, 5


class IntentLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E, padding_idx=0)
        self.lstm_layers = nn.ModuleList([nn.LSTM(E if i == 0 else H, H, batch_first=True) for i in range(L)])
        self.head = nn.Linear(H, K)

    def forward(self, ids, mask):
        h = self.embed(ids)
        for lstm in self.lstm_layers:
            h, _ = lstm(h)
        m = mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def _data(g, n):
    # intent is decided by which keyword token (from a per-intent set) appears in the utterance
    keywords = torch.arange(1, 1 + K * 3).view(K, 3)
    batches = []
    for _ in range(n):
        y = torch.randint(0, K, (B,), generator=g)
        ids = torch.randint(1 + K * 3, V, (B, T), generator=g)
        lens = torch.randint(6, T + 1, (B,), generator=g)
        pos = (torch.rand(B, generator=g) * (lens - 1).float()).long()
        kw = keywords[y, torch.randint(0, 3, (B,), generator=g)]
        ids[torch.arange(B), pos] = kw
        mask = torch.arange(T).unsqueeze(0) < lens.unsqueeze(1)
        ids = ids.masked_fill(~mask, 0)
        batches.append(((ids, mask), y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(1000 + seed)
    model = IntentLSTM()
    if fixed:
        pass  # PyTorch defaults: N(0,1) embedding, uniform(+-1/sqrt(H)) LSTM weights, kaiming-uniform head
    else:
        for p in model.parameters():
            nn.init.uniform_(p, -0.002, 0.002)
    steps = 150
    data = _data(g, 40)
    batches = [data[i % len(data)] for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
