"""Deep character-window MLP tagger for Universal Dependencies morphological features
(e.g. Case/Number bundles of a low-resource agglutinative treebank), one word-final
character window per token.

Mechanism: the training script re-initialises every Linear layer in a loop with
``nn.init.normal_(m.weight)`` -- the std argument was forgotten, so the weights are N(0, 1)
instead of N(0, 2/fan_in).  With fan-in ~100-160 every ReLU layer multiplies the activation
scale by roughly sqrt(fan_in / 2) ~ 8, so after 5-7 layers the logits are ~1e5-1e7 at step 0.
Cross-entropy on such logits is enormous, the first SGD update is of the same order and the
weights/loss overflow to inf/NaN within the first few steps.

ORIGIN: ``layers.0`` -- the first hidden Linear is where the too-large scale first enters
(its output is already ~sqrt(fan_in) too large) and every later layer multiplies it again;
all layers share the same bad init, so the earliest one is named.

Fix (fixed=True): the same loop uses Kaiming-normal initialisation (fan_in, relu gain) with
zero biases; model, data, optimiser and steps are unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "layers.0"
SOURCE = ("Known pattern: nn.init.normal_(weight) without std in a custom init loop (PyTorch forum "
          "'loss becomes nan after first iteration with custom weight init'); He et al. 2015 on "
          "activation variance growth with depth in ReLU nets; UD/SIGMORPHON char-window taggers.")

N_CHARS = 42
WINDOW = 7


class CharWindowTagger(nn.Module):
    def __init__(self, n_tags, emb, width, depth):
        super().__init__()
        self.emb = nn.Embedding(N_CHARS, emb)
        layers = []
        d = emb * WINDOW
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.layers = nn.Sequential(*layers)
        self.out = nn.Linear(d, n_tags)

    def forward(self, chars):
        h = self.emb(chars).flatten(1)
        return self.out(self.layers(h))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = [6, 5, 7][seed % 3]
    width = [128, 160, 96][seed % 3]
    lr = [0.15, 0.1, 0.2][seed % 3]
    bs = [64, 96, 48][seed % 3]
    n_tags = 12
    steps = 200

    torch.manual_seed(seed)
    model = CharWindowTagger(n_tags, emb=16, width=width, depth=depth)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            else:
                nn.init.normal_(m.weight)          # std defaults to 1.0
            nn.init.zeros_(m.bias)

    # synthetic "suffix -> feature bundle" grammar: the tag is decided by the word-final
    # character with a vowel-harmony shift from the stem character at position 3
    suffix_table = torch.randint(0, n_tags, (N_CHARS,), generator=g)
    harmony = torch.randint(0, 2, (N_CHARS,), generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randint(1, N_CHARS, (bs, WINDOW), generator=g)
        y = (suffix_table[x[:, 6]] + harmony[x[:, 3]]) % n_tags
        batches.append((x, y))

    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(),
                batches=batches, steps=steps)
