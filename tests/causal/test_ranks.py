"""Reading the per-rank runs of one distributed run together: the first rank to go non-finite
is the root, the others' values its consequences (hand-written runs; gloo ranks in
tests/test_distributed.py)."""

from __future__ import annotations

import pytest

from causal.errors import ArgumentError
from causal.ranks import format_ranks, merge_ranks
from causal.schema.run import Event, Run


def _run(rank: int, step: int | None, direction: str = "forward", world: int = 3) -> Run:
    events = () if step is None else (Event(step, "net.1", "nonfinite_origin", "finite", "inf",
                                             1.0, {"direction": direction}),)
    return Run(meta={"rank": rank, "world_size": world}, events=events, path=f"run-r{rank}.ndbg")


def test_the_earliest_step_wins_then_an_own_birth_then_the_lowest_rank() -> None:
    ranks = merge_ranks([_run(0, 9), _run(1, 7, "backward"), _run(2, 7, "forward")])
    assert [f.rank for f in ranks.failures] == [2, 1, 0]
    text = format_ranks(ranks)
    assert text.startswith("Distributed run: 3 rank files, world size 3. Rank 2 went "
                           "non-finite first, at step 7 (born in the forward pass, at 'net.1').")
    assert "rank 1 from step 7, rank 0 from step 9" in text


def test_ranks_without_a_failure_and_rank_numbers_from_file_names() -> None:
    runs = [Run(meta={}, path="out/rank1.ndbg"), Run(meta={}, path="out/rank0.ndbg")]
    ranks = merge_ranks(runs)
    assert list(ranks.runs) == [0, 1] and ranks.first is None
    assert "no rank recorded a non-finite value" in format_ranks(ranks)


def test_files_that_are_not_one_run_are_refused() -> None:
    with pytest.raises(ArgumentError, match="two run files for rank 0"):
        merge_ranks([_run(0, 1), _run(0, 2)])
    with pytest.raises(ArgumentError, match="different world sizes"):
        merge_ranks([_run(0, 1, world=2), _run(1, 2, world=4)])
