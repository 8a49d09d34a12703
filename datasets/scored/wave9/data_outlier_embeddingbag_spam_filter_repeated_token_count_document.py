"""Bag-of-words spam/ham classifier: nn.EmbeddingBag(mode='sum') weighted by per-document term
counts, a small ReLU MLP on top, momentum SGD. Ordinary e-mails have term counts of 1-5 and train
fine. One message in the corpus is a whitelisted (ham) newsletter whose scraped body is a single
spam-typical token repeated ~40,000 times (an unsplit filler blob the tokenizer maps to one id).
In the batch that holds it, the summed bag is four orders of magnitude larger than any other,
the logits are ~1e4-1e5, the cross-entropy spikes and the SGD step it produces throws the MLP
weights so far that the following losses are astronomically large and turn NaN (or, on
some seeds, the MLP is left dead and sits at chance for the rest of the run). Fixed: the same data
with that one corrupt document filtered out of its batch, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "data_outlier"
ORIGIN = "bag"
SOURCE = ("Known pattern in e-mail/web text pipelines: degenerate documents with one token repeated "
          "tens of thousands of times (Enron/C4 dedup & repetition filters) blowing up count-weighted "
          "bag-of-words models")

V, D, H, B = 500, 32, 32, 32


class SpamBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(V, D, mode="sum")
        self.fc1 = nn.Linear(D, H)
        self.out = nn.Linear(H, 2)

    def forward(self, tokens, offsets, counts):
        h = self.bag(tokens, offsets, per_sample_weights=counts)
        return self.out(torch.relu(self.fc1(h)))


def _batch(g, spam_words, n):
    toks, offs, cnts, ys = [], [], [], []
    pos = 0
    for _ in range(n):
        y = int(torch.rand(1, generator=g).item() < 0.5)
        L = int(torch.randint(5, 15, (1,), generator=g))
        t = torch.randint(0, V, (L,), generator=g)
        if y == 1:
            k = int(torch.randint(2, 5, (1,), generator=g))
            t[:k] = spam_words[torch.randint(0, len(spam_words), (k,), generator=g)]
        t = torch.unique(t)
        c = torch.randint(1, 4, (len(t),), generator=g).float()
        toks.append(t); cnts.append(c); offs.append(pos); ys.append(y); pos += len(t)
    return [toks, offs, cnts, ys]


def _pack(parts):
    toks, offs, cnts, ys = parts
    return (torch.cat(toks), torch.tensor(offs), torch.cat(cnts)), torch.tensor(ys)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 31337)
    model = SpamBag()
    nn.init.normal_(model.bag.weight, std=0.1)
    spam_words = torch.randperm(V, generator=g)[:25]
    n_batches = 40
    raw = [_batch(g, spam_words, B) for _ in range(n_batches)]
    # the junk page: a whitelisted (ham) newsletter whose body is one "offer"-type token repeated ~40k times
    toks, offs, cnts, ys = raw[23]
    junk = torch.tensor([int(spam_words[0]), 7, 123])
    junk_counts = torch.tensor([41000.0, 1.0, 2.0])
    if not fixed:
        toks.append(junk); cnts.append(junk_counts); ys.append(0)
        offs.append(sum(len(t) for t in toks[:-1]))
    data = [_pack(p) for p in raw]
    steps = 160
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
