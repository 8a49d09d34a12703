"""The optimizer that ends the monitored model's steps is found by what it updates, even when
another optimizer lived at the same address before it."""

from __future__ import annotations

import torch
from torch import nn

from neuraldbg.capture.optimizer_binding import OptimizerBinding
from neuraldbg.capture.watched_units import find_units


def test_an_optimizer_made_where_a_freed_one_was_is_judged_afresh():
    torch.set_num_threads(1)
    model, other = nn.Linear(3, 2), nn.Linear(3, 2)
    binding = OptimizerBinding(model.parameters(), find_units(model))
    reused = 0
    for _ in range(20):
        stranger = torch.optim.SGD(other.parameters(), lr=0.1)
        assert not binding.bind(stranger)
        freed = id(stranger)
        del stranger
        own = torch.optim.SGD(model.parameters(), lr=0.1)
        reused += id(own) == freed
        assert binding.bind(own) and binding.current() is own
        assert binding.settings("none")["optimizer"] == "SGD"
        del own
    assert reused  # the case arose (CPython reuses a freed object's memory at once)


def test_settings_follow_a_new_optimizer_at_a_reused_address():
    torch.set_num_threads(1)
    model = nn.Linear(3, 2)
    binding = OptimizerBinding(model.parameters(), find_units(model))
    first = torch.optim.SGD(model.parameters(), lr=0.1)
    binding.bind(first)
    assert binding.settings("none")["optimizer"] == "SGD"
    del first
    second = torch.optim.Adam(model.parameters(), lr=0.1)
    binding.bind(second)
    assert binding.settings("none")["optimizer"] == "Adam"
