"""Deep ensemble of 6 small highway-MLP regressors run as ONE batched module: member parameters are
stacked with torch.func.stack_module_state and forward is torch.vmap(torch.func.functional_call(...)).
Each member is re-initialised by a shared `_init_weights` helper that applies the highway recipe
"carry-biased gates, bias = -3" to EVERY nn.Linear, not only to the sigmoid gates: the ReLU input and
transform layers start with bias -3 against pre-activations of std ~0.6, so every ReLU outputs 0 for
every input from step 0, no gradient reaches any hidden weight, and the loss stays at the target variance.
fixed=True: the -3 bias goes only to the gate layers; the ReLU layers get bias 0.
"""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state

CAUSE = "dead_relu"
ORIGIN = "ensemble"
SOURCE = ("Highway networks (Srivastava et al. 2015) gate-bias init of -1..-3 applied by a blanket "
          "`_init_weights` to all Linear layers; deep ensembles batched with stack_module_state + "
          "vmap(functional_call) as in the PyTorch 'Model ensembling' tutorial; dying-ReLU reports "
          "'every ensemble member predicts the same constant'")

D_IN = 16
HIDDEN = 64
N_MEMBERS = 6
N_HIGHWAY = 2
BATCH = 256
STEPS = 200


class HighwayMember(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D_IN, HIDDEN)
        self.transform = nn.ModuleList(nn.Linear(HIDDEN, HIDDEN) for _ in range(N_HIGHWAY))
        self.gate = nn.ModuleList(nn.Linear(HIDDEN, HIDDEN) for _ in range(N_HIGHWAY))
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        h = F.relu(self.inp(x))
        for fc, gate in zip(self.transform, self.gate):
            t = torch.sigmoid(gate(h))
            h = t * F.relu(fc(h)) + (1 - t) * h
        return self.head(h).squeeze(-1)


def _init_weights(member: HighwayMember, fixed: bool):
    for name, mod in member.named_modules():
        if isinstance(mod, nn.Linear) and name != "head":
            if fixed and not name.startswith("gate"):
                nn.init.zeros_(mod.bias)
            else:
                nn.init.constant_(mod.bias, -3.0)    # carry-biased highway gate
    nn.init.normal_(member.head.weight, std=0.01)
    nn.init.zeros_(member.head.bias)


class VmapEnsemble(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        members = [HighwayMember() for _ in range(N_MEMBERS)]
        for m in members:
            _init_weights(m, fixed)
        params, _ = stack_module_state(members)
        self.names = list(params)
        self.stacked = nn.ParameterList(nn.Parameter(params[n]) for n in self.names)
        # stateless template on the meta device, kept out of the module tree (not trained)
        self._template = [copy.deepcopy(members[0]).to("meta")]

    def forward(self, x):
        template = self._template[0]

        def one(params, x):
            return functional_call(template, params, (x,))

        params = {n: p for n, p in zip(self.names, self.stacked)}
        return torch.vmap(one, in_dims=(0, None))(params, x)      # (members, batch)


class EnsembleRegressor(nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.ensemble = VmapEnsemble(fixed)

    def forward(self, x):
        return self.ensemble(x)


def ensemble_mse(pred, y):
    # every member is fit to the target independently; the loss is their mean
    return ((pred - y.unsqueeze(0)) ** 2).mean()


def _make_batches(seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(D_IN, generator=g) / D_IN ** 0.5
    v = torch.randn(D_IN, generator=g) / D_IN ** 0.5
    batches = []
    for _ in range(STEPS):
        x = torch.randn(BATCH, D_IN, generator=g)
        y = torch.sin(2 * x @ w) + (x @ v) ** 2 - 1.0 + 0.1 * torch.randn(BATCH, generator=g)
        batches.append((x, y))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = EnsembleRegressor(fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=optimizer, loss_fn=ensemble_mse,
                batches=_make_batches(seed), steps=STEPS, amp_dtype=None, scaler=None)
