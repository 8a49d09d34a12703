"""A GRU learns the 3-bit flip-flop task (Sussillo & Barak 2013): three input channels carry rare +1/-1
pulses and each output channel must hold the sign of the last pulse on its channel. The solution a
GRU finds is a set of attractors: update gates are pushed towards 1 between pulses (hold the state)
and towards 0 on a pulse (overwrite it), so as training proceeds a growing share of the update-gate
activations (about a fifth by the end of this run) is pinned within 0.05 of 0 or 1 and their
sigmoid slope is tiny - what a saturation check looks for. Here that is the learned memory
mechanism, not a failure: the inputs are O(1), the recurrent weights stay moderate, gradients keep
flowing through the non-saturated gates, and the MSE falls by an order of magnitude. Trained with
RMSprop (lr 1e-2)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Sussillo & Barak 2013 'Opening the Black Box: Low-Dimensional Dynamics in High-Dimensional "
          "Recurrent Neural Networks' (3-bit flip-flop)")

T, H, BITS = 60, 32, 3


class FlipFlopGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(BITS, H, batch_first=True)
        self.readout = nn.Linear(H, BITS)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.readout(h)


def make_batch(g, bs):
    pulses = (torch.rand(bs, T, BITS, generator=g) < 0.06).float()
    signs = torch.randint(0, 2, (bs, T, BITS), generator=g).float() * 2 - 1
    x = pulses * signs
    y = torch.zeros(bs, T, BITS)
    state = torch.zeros(bs, BITS)
    for t in range(T):
        state = torch.where(pulses[:, t] > 0, signs[:, t], state)
        y[:, t] = state
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = FlipFlopGRU()
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
    steps = 200
    batches = [make_batch(g, 32) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=F.mse_loss, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
