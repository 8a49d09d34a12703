"""Nutrition5k-style multimodal, multi-task nutrition regressor: precomputed dish-image features and a
bag-of-ingredients text embedding are fused by an MLP, with one head per target (total calories,
total mass, fat, carbohydrate, protein); the loss is the sum of the per-task MSEs; AdamW with a
fine-tuning learning rate.

Mechanism: the targets are used in raw units -- kcal (~250-650) and grams (mass ~100-250, macros
~5-60) -- instead of being standardised per task.  The heads start near 0, so the loss is ~2e5 from
step 0 and is dominated by the calorie and mass heads.  AdamW moves every weight by at most ~lr per
step whatever the gradient size, so with lr ~1e-4 the outputs can only creep towards values in
the hundreds: after the whole run the predictions are still far below the target means and the
loss has barely moved (the run stalls), while the same model on standardised targets learns.

ORIGIN: "heads.kcal" -- the calorie head, whose raw-unit target dominates the summed loss (the mass
head is in the same situation).

Fix: standardise every target with its dataset mean/std (and compute the loss in standardised
units, predictions de-standardised at inference), as the Nutrition5k baselines do for their
regression heads; same model, data, optimiser and lr.
"""
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "heads.kcal"
SOURCE = ("Thames et al. 2021 'Nutrition5k: Towards Automatic Nutritional Understanding of Generic "
          "Food' (multi-task calorie/mass/macronutrient regression); forum threads 'regression loss "
          "stuck at huge value with Adam, targets not normalised'")

TASKS = ["kcal", "mass", "fat", "carb", "protein"]


class NutritionNet(nn.Module):
    def __init__(self, d_img, vocab, d_word, h):
        super().__init__()
        self.ingr = nn.EmbeddingBag(vocab, d_word, mode="mean")
        self.fuse = nn.Sequential(nn.Linear(d_img + d_word, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.heads = nn.ModuleDict({t: nn.Linear(h, 1) for t in TASKS})

    def forward(self, img, ingredients):
        z = self.fuse(torch.cat([img, self.ingr(ingredients)], -1))
        return torch.cat([self.heads[t](z) for t in TASKS], -1)        # (B, 5)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    h = [128, 96, 160][seed % 3]
    bs = [32, 64, 48][seed % 3]
    lr = [1.2e-4, 1e-4, 8e-5][seed % 3]
    d_img, vocab, d_word, n_ingr, steps = 48, 120, 32, 6, 200
    # per-ingredient nutrition per typical portion: fat, carb, protein (g) and mass (g)
    fat_g = torch.rand(vocab, generator=g) * 15
    carb_g = torch.rand(vocab, generator=g) * 30
    prot_g = torch.rand(vocab, generator=g) * 20
    mass_g = 20 + torch.rand(vocab, generator=g) * 80
    ingr_img = torch.randn(vocab, d_img, generator=g) / n_ingr ** 0.5
    vis_mix = torch.randn(5, d_img, generator=g) * 0.5

    def dishes(n):
        ingr = torch.randint(0, vocab, (n, n_ingr), generator=g)
        portion = 0.2 + 0.5 * torch.rand(n, n_ingr, generator=g)
        return ingr, portion

    def nutrition(ingr, portion):
        fat = (fat_g[ingr] * portion).sum(1)
        carb = (carb_g[ingr] * portion).sum(1)
        prot = (prot_g[ingr] * portion).sum(1)
        mass = (mass_g[ingr] * portion).sum(1)
        return torch.stack([9 * fat + 4 * carb + 4 * prot, mass, fat, carb, prot], 1)

    y_ref = nutrition(*dishes(4096))                   # training-set statistics
    mean, std = y_ref.mean(0), y_ref.std(0)
    batches = []
    for _ in range(steps):
        ingr, portion = dishes(bs)
        y = nutrition(ingr, portion)
        # the image features see the portion sizes (food volume) of what is on the plate
        img = (ingr_img[ingr] * portion[..., None]).sum(1) + ((y - mean) / std) @ vis_mix \
            + 0.3 * torch.randn(bs, d_img, generator=g)
        if fixed:
            y = (y - mean) / std
        batches.append(((img, ingr), y))
    torch.manual_seed(seed)
    model = NutritionNet(d_img, vocab, d_word, h)

    def loss_fn(pred, y):
        return ((pred - y) ** 2).mean(0).sum()                         # sum of per-task MSEs

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
