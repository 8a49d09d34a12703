"""Seq2seq GRU forecaster for continuous-glucose-monitor (CGM) data in type-1 diabetes: the encoder
reads 2 h of 5-min history (glucose in mg/dL, carbohydrate intake in grams, insulin boluses in
units), the decoder predicts the next 60 min with teacher forcing (its input at each step is the
previous true glucose reading). Everything is fed and regressed in raw clinical units: glucose
~70-300 mg/dL, carbs up to ~80 g. The GRU gates receive pre-activations of order 10-20 and sit
saturated, and the targets are ~150 while a freshly initialised network outputs ~0, so the MSE
starts around 1.5e4. Adam moves each weight by at most ~lr per step, so the output layer can
only shift its prediction by a few mg/dL over the whole run: the loss stays at ~1.5e4 (a silent
stall, no NaN). The fixed run standardises inputs and targets with fixed population statistics
(glucose mean 140 / std 45 mg/dL, carbs / 50 g, insulin / 5 U) and nothing else."""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "encoder"
SOURCE = ("OhioT1DM-style CGM forecasting with seq2seq RNNs and teacher forcing; the usual "
          "'loss is huge and does not decrease' report resolved by standardising inputs/targets")

HIST, HORIZON = 24, 12
G_MEAN, G_STD, CARB_S, INS_S = 140.0, 45.0, 50.0, 5.0


class Seq2SeqGlucose(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(3, 48, batch_first=True)
        self.decoder = nn.GRU(1, 48, batch_first=True)
        self.head = nn.Linear(48, 1)

    def forward(self, history, dec_in):
        _, h = self.encoder(history)
        out, _ = self.decoder(dec_in, h)
        return self.head(out).squeeze(-1)


def simulate(g, n):
    # toy glucose-insulin-carb dynamics (Bergman-like first-order responses), 5-min steps
    T = HIST + HORIZON
    gl = 110 + 40 * torch.randn(n, generator=g).clamp(-2, 2)
    carb_state = torch.zeros(n); ins_state = torch.zeros(n)
    gs, cs, ins = [], [], []
    for t in range(T):
        meal = (torch.rand(n, generator=g) < 0.04).float() * (20 + 60 * torch.rand(n, generator=g))
        bolus = meal / 10 * (0.7 + 0.6 * torch.rand(n, generator=g))
        carb_state = 0.85 * carb_state + meal
        ins_state = 0.92 * ins_state + bolus
        gl = gl + 0.45 * 0.15 * carb_state - 2.2 * 0.08 * ins_state + 0.03 * (120 - gl) \
            + 2.0 * torch.randn(n, generator=g)
        gl = gl.clamp(40, 400)
        gs.append(gl); cs.append(meal); ins.append(bolus)
    return torch.stack(gs, 1), torch.stack(cs, 1), torch.stack(ins, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Seq2SeqGlucose()
    steps = 120
    batches = []
    for _ in range(steps):
        gl, carbs, ins = simulate(g, 32)
        if fixed:
            gl, carbs, ins = (gl - G_MEAN) / G_STD, carbs / CARB_S, ins / INS_S
        hist = torch.stack([gl[:, :HIST], carbs[:, :HIST], ins[:, :HIST]], dim=2)
        dec_in = gl[:, HIST - 1: HIST + HORIZON - 1].unsqueeze(-1)      # teacher forcing
        target = gl[:, HIST:]
        batches.append(((hist, dec_in), target))
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
