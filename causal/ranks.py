"""The per-rank run files of one distributed run, read together: which rank went non-finite
first, at which step and where the value was born there; the other ranks' non-finite values are
that one's consequences (the all-reduce spreads a rank's non-finite gradients to every rank,
whose own records show them a step later, or in their backward pass)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from causal.errors import ArgumentError
from causal.schema.run import Event, Run

#: Where a value born on its own rank shows first; a backward-born one may be the all-reduce's.
_OWN_BIRTH = ("input", "forward", "loss")


@dataclass(frozen=True)
class RankFailure:
    """One rank's first non-finite value."""

    rank: int
    step: int
    origin: Event


@dataclass(frozen=True)
class Ranks:
    """The ranks' runs by rank, their failures in order (the first is the root), the world size."""

    runs: dict[int, Run]
    failures: tuple[RankFailure, ...]
    world_size: int | None

    @property
    def first(self) -> RankFailure | None:
        return self.failures[0] if self.failures else None


def rank_of(run: Run, position: int) -> int:
    """A run's rank: recorded in its meta, else a number in its file name (run-r1, rank1),
    else its position in the list."""
    rank = run.meta.get("rank")
    if isinstance(rank, int) and not isinstance(rank, bool):
        return rank
    match = re.search(r"(?:rank|r)(\d+)\D*$", str(run.path or ""))
    return int(match.group(1)) if match else position


def merge_ranks(runs: Sequence[Run]) -> Ranks:
    """The ranks of one distributed run, and which went non-finite first (earliest step; at the
    same step, a value born in the rank's own input, forward or loss before one born in a
    backward pass, which the all-reduce may have brought; then the lowest rank)."""
    by_rank: dict[int, Run] = {}
    for i, run in enumerate(runs):
        rank = rank_of(run, i)
        if rank in by_rank:
            raise ArgumentError(f"two run files for rank {rank} ({by_rank[rank].path} and "
                                f"{run.path}): pass one file per rank of one run")
        by_rank[rank] = run
    sizes = {int(w) for w in (run.meta.get("world_size") for run in runs)
             if isinstance(w, int) and not isinstance(w, bool)}
    if len(sizes) > 1:
        raise ArgumentError(f"the run files come from runs of different world sizes "
                            f"({sorted(sizes)}): pass the files of one distributed run")
    failures = []
    for rank, run in by_rank.items():
        origin = run.first_nonfinite
        if origin is not None:
            failures.append(RankFailure(rank, origin.step, origin))
    failures.sort(key=lambda f: (f.step, str(f.origin.birth.direction) not in _OWN_BIRTH,
                                 f.rank))
    return Ranks(dict(sorted(by_rank.items())), tuple(failures),
                 next(iter(sizes)) if sizes else None)


def format_ranks(ranks: Ranks) -> str:
    """The lines that come before the first rank's diagnosis."""
    n = len(ranks.runs)
    world = f", world size {ranks.world_size}" if ranks.world_size else ""
    first = ranks.first
    if first is None:
        return f"Distributed run: {n} rank files{world}; no rank recorded a non-finite value."
    birth = first.origin.birth
    where = f"born in the {birth.direction or '?'} pass" if birth.direction in (
        "forward", "backward") else f"born in the {birth.direction or '?'}"
    lines = [f"Distributed run: {n} rank files{world}. Rank {first.rank} went non-finite "
             f"first, at step {first.step} ({where}, at '{first.origin.layer_name}')."]
    later = ranks.failures[1:]
    if later:
        lines.append("  consequences (the gradients' all-reduce or reduce-scatter spreads it): "
                     + ", ".join(f"rank {f.rank} from step {f.step}" for f in later))
    clean = [r for r in ranks.runs if r not in {f.rank for f in ranks.failures}]
    if clean:
        lines.append("  no non-finite value on rank " + ", ".join(map(str, clean)))
    if any(run.meta.get("sharded_params") for run in ranks.runs.values()):
        lines.append("  the parameters are sharded (FSDP2 / tensor parallel): each rank's "
                     "weight and gradient statistics are of its own shard, and a value "
                     "reduce-scattered from another rank shows in the backward pass")
    lines.append(f"Diagnosis on rank {first.rank}:")
    return "\n".join(lines)
