"""Deep Sets jet-flavour tagger: per-constituent encoder phi, SUM pooling over the jet's
constituents (60-160 per jet), rho = Linear -> tanh -> Linear -> ReLU, classifier trained with
a hand-written multi-class focal loss (gamma = 2) and SGD with momentum.

Mechanism: sum pooling makes the pooled vector scale with the number of constituents (tens to
a hundred times the per-element ReLU features), and rho feeds it straight into a tanh. Almost
every tanh unit sits at +/-1 from step 0 and its derivative 1 - tanh^2 is ~0, so the classifier
sees a nearly constant, jet-independent feature vector and the gradient to phi (and to rho's
first Linear) vanishes. With balanced flavours the loss sits at its initial (chance) value;
SGD does not rescale the vanished gradients, and no value becomes non-finite.

ORIGIN: ``rho.1``, the tanh of rho: it is the unit that saturates; the sum-pooled input is
large by construction, the saturation (and the vanishing gradient) happens at this module.

Fix: mean pooling instead of sum pooling (smaller pre-activations into the tanh); the same
model, data, loss, optimiser and steps otherwise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "rho.1"
SOURCE = ("Zaheer et al. 2017 Deep Sets (sum pooling); Komiske et al. 2019 Energy/Particle Flow Networks "
          "(sum over ~100 constituents); saturated tanh after unnormalised sum pooling reported in Deep Sets "
          "re-implementations; Lin et al. 2017 focal loss")

N_FLAV = 3


class DeepSetTagger(nn.Module):
    def __init__(self, d_in, width, mean_pool):
        super().__init__()
        self.mean_pool = mean_pool
        self.phi = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width), nn.ReLU())
        self.cls = nn.Linear(width, N_FLAV)

    def forward(self, x, mask):
        h = self.phi(x) * mask.unsqueeze(-1)
        pooled = h.sum(1)
        if self.mean_pool:
            pooled = pooled / mask.sum(1, keepdim=True)
        return self.cls(self.rho(pooled))


def focal_loss(logits, y, gamma=2.0):
    logp = F.log_softmax(logits, -1).gather(1, y[:, None]).squeeze(1)
    return (-(1 - logp.exp()) ** gamma * logp).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 96, 48][seed % 3]
    batch = [32, 24, 48][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    d_in, n_max, steps = 4, 160, 150

    torch.manual_seed(seed)
    model = DeepSetTagger(d_in, width, mean_pool=fixed)

    # flavours differ in the angular spread / fragmentation of their constituents
    spread = torch.tensor([[1.0, 0.75, 0.75, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.3, 1.3, 1.0]])
    batches = []
    for _ in range(steps):
        n = torch.randint(60, n_max + 1, (batch,), generator=g)
        mask = (torch.arange(n_max)[None] < n[:, None]).float()
        y = torch.randint(0, N_FLAV, (batch,), generator=g)
        # constituents: (log pt fraction, eta, phi, charge-like) in standardised units
        x = torch.randn(batch, n_max, d_in, generator=g) * spread[y][:, None, :]
        batches.append(((x * mask.unsqueeze(-1), mask), y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": focal_loss, "batches": batches, "steps": steps}
