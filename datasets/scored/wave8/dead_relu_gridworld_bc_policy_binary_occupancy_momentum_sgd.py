"""Behaviour-cloning policy for a 7x7 gridworld navigation task: the observation is three binary
planes (walls, agent, goal) flattened to a 147-d 0/1 vector, a 2-hidden-layer ReLU MLP outputs
logits over the 4 moves and is trained with cross-entropy against the planner's action.  The
learning rate, lr=1.5 with momentum 0.9, was copied from a run that used 3x larger batches
(linear scaling rule) and was never scaled back down for batch 128.  The inputs are all >= 0 and the hidden activations too, so the first large updates
move each unit's weights and bias coherently; every unit pushed downwards becomes negative for
every grid, and within a few steps the whole second hidden layer (and most of the first) is
silent.  Only the output bias still learns, the expert's actions are balanced, so the loss stays
at ~log 4 for the rest of the run, finite throughout.  The fix goes back to lr=0.5, at which the
ReLUs survive and the policy is learned."""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "policy.3"
SOURCE = ("Behaviour cloning on binary gridworld observations (MiniGrid-style); dying-ReLU after large "
          "momentum-SGD steps (lr linearly scaled for a larger batch) on non-negative inputs (Lu et al. 2019 'Dying ReLU and initialization')")

G = 7
D_IN, HID, N_ACT = 3 * G * G, 64, 4


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(D_IN, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU(),
                                    nn.Linear(HID, N_ACT))

    def forward(self, obs):
        return self.policy(obs)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)

    def sample(n):
        walls = (torch.rand(n, G, G, generator=g) < 0.15).float()
        agent = torch.randint(0, G * G, (n,), generator=g)
        goal = torch.randint(0, G * G, (n,), generator=g)
        ap = torch.zeros(n, G * G).scatter_(1, agent[:, None], 1.0)
        gp = torch.zeros(n, G * G).scatter_(1, goal[:, None], 1.0)
        walls = walls.view(n, -1) * (1 - ap) * (1 - gp)
        dr = goal // G - agent // G
        dc = goal % G - agent % G
        # planner: move along the axis with the larger remaining distance (0 up,1 down,2 left,3 right)
        vert = dr.abs() >= dc.abs()
        act = torch.where(vert, torch.where(dr > 0, 1, 0), torch.where(dc > 0, 3, 2))
        obs = torch.cat([walls, ap, gp], dim=1)
        return obs, act

    steps = 200
    batches = [sample(128) for _ in range(steps)]
    model = Policy()
    opt = torch.optim.SGD(model.parameters(), lr=0.5 if fixed else 1.5, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
