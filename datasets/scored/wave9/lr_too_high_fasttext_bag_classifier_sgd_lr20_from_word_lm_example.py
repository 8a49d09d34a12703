"""fastText-style supervised text classifier in PyTorch: mean-pooled EmbeddingBag over word and
hashed-bigram ids, one small tanh hidden layer, softmax over labels, plain SGD. The training loop
was lifted from pytorch/examples word_language_model together with its default lr=20 (meant for
an LSTM LM with gradient clipping at 0.25). For this model a good constant SGD lr is ~2; at 20
every step overshoots by an order of magnitude (update/weight ratios ~1): the output layer's
weights are thrown back and forth, the logits swing to hundreds in favour of one wrong class
after another, and the cross-entropy jumps from 1.8 to ~100-500 after the first update and
bounces there for the whole run. It never becomes non-finite; the run simply never learns.
Fixed: lr=2.0, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("pytorch/examples word_language_model main.py default --lr 20 (plain SGD + clip 0.25) copied "
          "into an unrelated classifier; Joulin et al. 2016 fastText architecture")

V, NB, D, H, K, T, B = 200, 512, 32, 32, 6, 14, 32


class FastTextish(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(V + NB, D, mode="mean")
        self.hidden = nn.Linear(D, H)
        self.out = nn.Linear(H, K)

    def forward(self, ids, offsets):
        return self.out(torch.tanh(self.hidden(self.bag(ids, offsets))))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 4)
    model = FastTextish()
    nn.init.uniform_(model.bag.weight, -0.5, 0.5)
    label_words = torch.randperm(V, generator=g)[:K * 10].view(K, 10)
    n_batches = 25
    data = []
    for _ in range(n_batches):
        y = torch.randint(0, K, (B,), generator=g)
        seqs, offs, pos = [], [], 0
        for i in range(B):
            w = torch.randint(0, V, (T,), generator=g)
            w[torch.randint(0, T, (3,), generator=g)] = label_words[y[i], torch.randint(0, 10, (3,), generator=g)]
            bigrams = V + (w[:-1] * 31 + w[1:]) % NB              # hashed bigram buckets
            ids = torch.cat([w, bigrams])
            seqs.append(ids); offs.append(pos); pos += len(ids)
        data.append(((torch.cat(seqs), torch.tensor(offs)), y))
    steps = 200
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=2.0 if fixed else 20.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
