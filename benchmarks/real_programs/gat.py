"""pytorch/examples gat/main.py: two GraphAttentionLayers (8 heads averaged, hidden 64, then one
head), ELU between them, log-softmax, dense adjacency with self-loops, dropout 0.6, NLLLoss on the
training nodes, Adam (lr 0.005, weight decay 5e-4), full-batch: one step an epoch, each followed
by the example's evaluation on the training and validation nodes (model.eval(), no_grad).
Changes: a random graph with 7 communities (250 nodes, sparse class-dependent bag-of-words
features, row-normalised as the Cora loader does) instead of Cora's 2708 nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Adam

from ._data import block_graph

NAME = "gat"
EXPECT = "healthy"
STEPS = 100
EXAMPLE = "gat/main.py"


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool = False,
                 dropout: float = 0.4, leaky_relu_slope: float = 0.2) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat:
            self.out_features = out_features
            assert out_features % n_heads == 0
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.softmax = nn.Softmax(dim=1)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed: torch.Tensor) -> torch.Tensor:
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self, h: torch.Tensor, adj_mat: torch.Tensor) -> torch.Tensor:
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask)
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            return h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        return h_prime.mean(dim=0)


class GAT(nn.Module):
    def __init__(self, in_features: int, n_hidden: int, n_heads: int, num_classes: int,
                 concat: bool = False, dropout: float = 0.4,
                 leaky_relu_slope: float = 0.2) -> None:
        super().__init__()
        self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden,
                                        n_heads=n_heads, concat=concat, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)
        self.gat2 = GraphAttentionLayer(in_features=n_hidden, out_features=num_classes,
                                        n_heads=1, concat=False, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)

    def forward(self, input_tensor: torch.Tensor, adj_mat: torch.Tensor) -> torch.Tensor:
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def test(model: nn.Module, criterion: nn.Module, input: tuple[torch.Tensor, torch.Tensor],
         target: torch.Tensor, mask: torch.Tensor) -> tuple[float, float]:
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


def run(dbg_factory: Callable[[nn.Module], Any], steps: int) -> list[float]:
    torch.manual_seed(13)
    features, labels, adj_mat = block_graph(250, classes=7, features=300, seed=109)
    idx = torch.randperm(len(labels))
    idx_val, idx_train = idx[50:100], idx[100:]  # idx[:50]: the test nodes
    gat_net = GAT(in_features=features.shape[1], n_hidden=64, n_heads=8,
                  num_classes=int(labels.max().item()) + 1, concat=False, dropout=0.6,
                  leaky_relu_slope=0.2)
    optimizer = Adam(gat_net.parameters(), lr=0.005, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    losses: list[float] = []
    with dbg_factory(gat_net) as dbg:
        for _ in range(steps):  # epochs: train_iter
            gat_net.train()
            optimizer.zero_grad()
            output = gat_net(features, adj_mat)
            loss = criterion(output[idx_train], labels[idx_train])
            loss.backward()
            dbg.record_loss(loss)
            optimizer.step()
            losses.append(loss.item())
            test(gat_net, criterion, (features, adj_mat), labels, idx_train)
            test(gat_net, criterion, (features, adj_mat), labels, idx_val)
    return losses
