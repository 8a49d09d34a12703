"""Topic classifier on hashed word/bigram TF-IDF vectors (HashingVectorizer(alternate_sign=False)
+ TfidfTransformer(norm=None) style, so every feature is >= 0 and a document's vector has a
norm of ~20) feeding a 2-hidden-layer ReLU MLP, trained with momentum SGD at lr=0.2, the rate
the author used for the linear (logistic-regression) baseline on the same features. Because the
inputs are non-negative and large, the first updates of hidden1 have the same sign on all active
coordinates and are huge, so hidden1's outputs jump to the hundreds; the next steps push the
second ReLU layer (hidden2), whose pre-activations and gradients are now enormous, far below
zero for *every* document. hidden2's ReLUs output exactly 0, receive exactly zero gradient and
never come back; the classifier is left with its output bias and the loss plateaus at
log(K) = 2.08. Nothing becomes non-finite. Fixed: lr=0.03, nothing else changed."""
import torch, torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "hidden2"
SOURCE = ("'Dying ReLU' from one oversized SGD step on non-centred, non-negative inputs (CS231n notes on "
          "non-zero-centred inputs; forum threads 'MLP on tf-idf features stuck at log(num_classes)')")

F, H, K, B = 512, 48, 8, 32


class TfidfMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden1 = nn.Linear(F, H)
        self.hidden2 = nn.Linear(H, H)
        self.classifier = nn.Linear(H, K)

    def forward(self, x):
        h = torch.relu(self.hidden1(x))
        h = torch.relu(self.hidden2(h))
        return self.classifier(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 99)
    model = TfidfMLP()
    idf = 1.0 + 5.0 * torch.rand(F, generator=g)
    topic_buckets = torch.randperm(F, generator=g)[:K * 12].view(K, 12)
    n_batches = 30
    data = []
    for _ in range(n_batches):
        y = torch.randint(0, K, (B,), generator=g)
        counts = (torch.rand(B, F, generator=g) < 0.03).float() * torch.randint(1, 4, (B, F), generator=g)
        for i in range(B):
            sel = topic_buckets[y[i], torch.randint(0, 12, (4,), generator=g)]
            counts[i, sel] += torch.randint(1, 4, (4,), generator=g).float()
        data.append((counts * idf, y))
    steps = 150
    batches = [data[i % n_batches] for i in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=0.03 if fixed else 0.2, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
