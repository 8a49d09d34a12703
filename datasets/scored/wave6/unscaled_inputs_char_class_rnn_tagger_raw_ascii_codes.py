"""Character-class tagger (lower / upper / digit / space / punctuation) over short strings: a small
nn.GRU reading one scalar feature per character, trained with SGD + momentum. The author feeds the
raw code point, float(ord(c)) (32..126), instead of a one-hot/embedding or a standardised value.
The first layer that reads it, the GRU's input projection (rnn), produces pre-activations
w*ord(c) of magnitude ~5-20 for most units: the sigmoid gates and tanh candidate are pinned at their
limits for every character, and because all code points are large and positive the pinned value is
the same for every character (set by sign(w) alone), so the hidden state barely depends on the
input. The few gradients that do reach weight_ih are scaled by ord(c) ~ 80, so SGD's occasional
updates there are violent and just re-pin the units. The loss stays at the class-prior entropy
(log 5), with bumps when the output layer overshoots. Fix: standardise the input,
(ord(c) - 79) / 27; nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "rnn"
SOURCE = ("beginner char-RNN/tagger code feeding ord(char) as a float feature; 'LSTM predicts the same class for "
          "every character' forum reports; LeCun et al. 'Efficient BackProp' (normalise inputs)")

LOWER = list(range(97, 123))
UPPER = list(range(65, 91))
DIGIT = list(range(48, 58))
PUNCT = [ord(c) for c in ".,;:!?'\"()-/&%$#@"]


def _char_class(code):
    if code in LOWER:
        return 0
    if code in UPPER:
        return 1
    if code in DIGIT:
        return 2
    if code == 32:
        return 3
    return 4


class CharClassTagger(nn.Module):
    def __init__(self, standardise):
        super().__init__()
        self.standardise = standardise
        self.rnn = nn.GRU(1, 32, batch_first=True)
        self.tag_head = nn.Linear(32, 5)

    def forward(self, codes):
        x = codes.unsqueeze(-1)
        if self.standardise:
            x = (x - 79.0) / 27.0
        h, _ = self.rnn(x)
        return self.tag_head(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    pools = [torch.tensor(LOWER), torch.tensor(UPPER), torch.tensor(DIGIT), torch.tensor([32]), torch.tensor(PUNCT)]
    table = torch.tensor([_char_class(c) for c in range(128)])

    def sample(B, T=24):
        cls = torch.multinomial(torch.tensor([0.2, 0.2, 0.2, 0.2, 0.2]), B * T, replacement=True, generator=g)
        codes = torch.empty(B * T, dtype=torch.long)
        for k, pool in enumerate(pools):
            idx = (cls == k).nonzero().squeeze(-1)
            codes[idx] = pool[torch.randint(0, len(pool), (len(idx),), generator=g)]
        codes = codes.view(B, T)
        return codes.float(), table[codes]

    steps = 150
    batches = [sample(32) for _ in range(steps)]
    model = CharClassTagger(standardise=fixed)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

    def loss_fn(out, y):
        return F.cross_entropy(out.reshape(-1, 5), y.reshape(-1))

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
