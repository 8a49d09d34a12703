"""Validated-turnout model for a pre-election survey: respondent covariates (standardised age,
education, income, residential tenure, past-vote indicators, political interest, registration
recency ...) -> MLP -> logit of having voted according to the voter file; BCE-with-logits, SGD
with momentum.

Mechanism (saturation). The network was ported from an R `nnet`/SPSS Neural Networks model, so
every hidden layer uses the logistic (sigmoid) activation, and it was made 'deep' (4-5 hidden
layers) for flexibility. A sigmoid's derivative is at most 0.25 and its outputs are all
positive and centred near 0.5, so each layer shrinks the back-propagated gradient by 4x or more
and the deeper layers sit at a near-constant output around their operating point (the top layers
saturate towards 0/1 as in Glorot & Bengio 2010). The gradient reaching the layers that see the
covariates is 1e-3-1e-5 of that at the output; the output layer can only learn the marginal
turnout rate from a near-constant input, and the loss stays near log 2.

ORIGIN = "net.1": the first sigmoid, the first saturating non-linearity through which every
gradient to the input layer has to pass; the shrinkage compounds from there upward.

Fix: non-saturating activations (ReLU) in the hidden layers; same widths, depth, optimiser,
learning rate, data and steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "net.1"
SOURCE = ("Vanishing gradients in deep logistic-sigmoid networks (Glorot & Bengio 2010, "
          "'Understanding the difficulty of training deep feedforward neural networks'); "
          "validated-turnout models on survey + voter-file data (Ansolabehere & Hersh 2012)")


class TurnoutNet(nn.Module):
    def __init__(self, d_in, width, depth, act):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), act()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    depth = [5, 4, 5][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [0.05, 0.06, 0.04][seed % 3]
    bs = [128, 96, 160][seed % 3]
    steps = 200
    D = 12

    model = TurnoutNet(D, width, depth, nn.ReLU if fixed else nn.Sigmoid)
    w = torch.randn(D, generator=g) * 0.8

    def sample(n):
        x = torch.randn(n, D, generator=g)
        logit = x @ w + 0.8 * x[:, 0] * x[:, 1]
        y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
        return x, y

    batches = [sample(bs) for _ in range(steps)]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
