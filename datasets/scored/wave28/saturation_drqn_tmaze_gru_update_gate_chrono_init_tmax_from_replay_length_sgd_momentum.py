"""Recurrent Q-network (DRQN-style GRU) on a synthetic T-maze memory task.

Data: episodes of length T = 12-20.  At t = 0 the observation carries a cue (+1/-1, which arm holds
the reward); the following observations are a noisy corridor signal with no cue.  At the junction
(last step) the network must output Q(left), Q(right) -- the targets are the exact action values
(+1 for the cued arm, -0.5 for the other, plus a small corridor-length cost).  Model: obs encoder ->
nn.GRU -> Q head on the last hidden state; loss = MSE on both action values.

Mechanism: the GRU gates were "chrono-initialised" (Tallec & Ollivier 2018) so the update gate
starts near "keep": bias_z = log(U(1, T_max - 1)).  T_max was taken from the replay buffer's stored
sequence length (~10^4-10^5 steps) instead of the episode horizon, so bias_z ~ 7-11 and the update
gate z = sigmoid(. + bias_z) is saturated at 1 for every unit: h_t = z*h_{t-1} + (1-z)*n_t lets in
~1e-4 of each input.  The hidden state never picks up the cue, the Q head outputs the same values for
both cue types, and the gradient to the encoder and the gate is multiplied by z(1-z) ~ 1e-4: SGD
stalls at the loss of the cue-blind prediction while the fixed run learns the memory.

ORIGIN: "gru", the recurrent layer whose update-gate sigmoids saturate.

Fix: chrono initialisation with T_max = the episode horizon (bias_z = log(U(1, T - 1)) <= ~3, smaller
gate pre-activations); same model, data and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "gru"
SOURCE = ("Chrono initialization of gated RNNs (Tallec & Ollivier 2018 'Can recurrent neural networks "
          "warp time?'); DRQN (Hausknecht & Stone 2015) on T-maze memory tasks (Bakker 2002); "
          "saturated sigmoid gates stop gradient flow (Hochreiter & Schmidhuber 1997)")


class DRQN(nn.Module):
    def __init__(self, obs_dim, hidden, t_max, gen):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.q_head = nn.Linear(hidden, 2)
        H = hidden
        with torch.no_grad():
            # PyTorch gate order in bias_ih/bias_hh: reset | update | new
            chrono = torch.log(1 + torch.rand(H, generator=gen) * (t_max - 2))
            self.gru.bias_ih_l0[H:2 * H].copy_(chrono)
            self.gru.bias_hh_l0[H:2 * H].zero_()

    def forward(self, obs):
        out, _ = self.gru(self.encoder(obs))
        return self.q_head(out[:, -1])


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    T = [12, 16, 20][seed % 3]
    hidden = [32, 48, 64][seed % 3]
    batch = [32, 64, 48][seed % 3]
    lr = [0.05, 0.03, 0.04][seed % 3]
    replay_seq_len = [20000, 50000, 100000][seed % 3]
    obs_dim = 4
    steps = 200

    batches = []
    for _ in range(steps):
        cue = torch.where(torch.rand(batch, generator=g) < 0.5, -1.0, 1.0)
        obs = torch.zeros(batch, T, obs_dim)
        obs[:, 0, 0] = cue
        obs[:, :, 1] = 0.3 * torch.randn(batch, T, generator=g)          # corridor texture
        obs[:, :, 2] = torch.linspace(0, 1, T)                              # progress signal
        obs[:, -1, 3] = 1.0                                                 # junction flag
        q = torch.stack([torch.where(cue > 0, 1.0, -0.5), torch.where(cue > 0, -0.5, 1.0)], -1)
        q = q - 0.01 * T
        batches.append((obs, q))

    torch.manual_seed(seed)
    init_gen = torch.Generator().manual_seed(seed + 100)
    model = DRQN(obs_dim, hidden, t_max=T if fixed else replay_seq_len, gen=init_gen)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": lambda q, y: F.mse_loss(q, y),
            "batches": batches, "steps": steps}
