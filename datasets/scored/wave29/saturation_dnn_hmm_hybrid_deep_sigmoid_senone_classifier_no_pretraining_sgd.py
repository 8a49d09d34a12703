"""DNN-HMM hybrid acoustic model with 6-8 sigmoid hidden layers trained from scratch with SGD.

Mechanism: a 2012-style hybrid acoustic model (11 stacked MFCC frames -> 6-8 sigmoid hidden
layers -> softmax over tied HMM states, cross-entropy) is re-implemented without the RBM/
layer-wise pre-training the original recipe relied on (Glorot-normalised init, zero biases).  Each
sigmoid layer's pre-activations are small, so units sit around sigmoid(0)=0.5 where the
derivative is at most 0.25, and their outputs (all ~0.5, with a spread of only ~0.1) pass a
weak, increasingly scrambled signal upwards.  Backward, every layer multiplies the error signal
by sigmoid' <= 0.25 and by the layer's weights, so the bottom layers receive weight gradients
1e-3..1e-5 of the output layer's.  Only the top layers move, but their inputs carry almost no
class information; plain SGD makes no headway and the cross-entropy stays at log(n_states) --
a stall without non-finite values.

ORIGIN: ``dnn.1`` -- the first sigmoid is where the gradient starts being cut by <= 0.25 per
layer; the vanishing compounds from there up the stack.

Fix: ReLU hidden units (Zeiler et al. 2013; Dahl et al. 2013), same init, data, optimiser, steps.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "dnn.1"
SOURCE = ("Hinton et al. 2012, 'Deep neural networks for acoustic modeling in speech recognition' "
          "(sigmoid DNNs needed pre-training); Glorot & Bengio 2010 (sigmoid deep nets stall); "
          "Zeiler et al. 2013, 'On rectified linear units for speech processing'")


class HybridDNN(nn.Module):
    def __init__(self, n_in, width, depth, n_states, act):
        super().__init__()
        mods, d = [], n_in
        for _ in range(depth):
            mods += [nn.Linear(d, width), act()]
            d = width
        self.dnn = nn.Sequential(*mods)
        self.out = nn.Linear(d, n_states)

    def forward(self, x):
        return self.out(self.dnn(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(10000 + seed)
    depth = [6, 7, 8][seed % 3]
    width = [256, 192, 128][seed % 3]
    bs = [64, 48, 32][seed % 3]
    lr = [0.1, 0.15, 0.08][seed % 3]
    n_mfcc, ctx, n_states, steps = 13, 11, 16, 200

    # each tied state: a mean MFCC trajectory over the context window + speaker/channel noise
    means = torch.randn(n_states, ctx, n_mfcc, generator=g)
    means = torch.nn.functional.avg_pool1d(means.transpose(1, 2), 3, 1, 1).transpose(1, 2) * 1.2
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_states, (bs,), generator=g)
        x = means[y] + 0.8 * torch.randn(bs, ctx, n_mfcc, generator=g)
        x = x + 0.3 * torch.randn(bs, 1, n_mfcc, generator=g)          # channel offset
        batches.append((x.flatten(1), y))

    torch.manual_seed(seed)
    model = HybridDNN(ctx * n_mfcc, width, depth, n_states, nn.ReLU if fixed else nn.Sigmoid)
    for m in model.modules():                       # Glorot-normalised init, zero biases
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=steps)
