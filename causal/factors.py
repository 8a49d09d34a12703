"""The network's CPDs as numpy arrays, and the exact posterior of every cause under virtual
evidence, computed with numpy alone (pgmpy's import takes seconds and pulls torch, pandas and
scikit-learn; diagnosing a run needs none of them).

The causes are independent binary roots, so the joint of the causes and the evidence is
prod_c prior_c(x_c) * prod_s lambda_s(x_parents(s)), where lambda_s(x) = sum_v e_s(v) P(s = v | x)
is a symptom's virtual evidence e_s seen through its CPD (a symptom without evidence sums out to
1). That joint is one array with an axis per cause (2^n entries: the built-in symptom `outcome`
has every cause as a parent, so its CPD is as large), and each cause's posterior is one sum over
it. pgmpy's `VariableElimination` computes the same (`CausalNetwork.posteriors_pgmpy`; a test holds
them equal).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

#: The joint over this many causes takes 8 MiB; a network with more is left to pgmpy.
MAX_CAUSES = 20


class Factors:
    """The priors (cause -> P(present)) and the CPDs (symptom -> its parents, in the priors'
    order, and its table: states x parent configurations, the first parent varying slowest,
    absent before present)."""

    def __init__(self, priors: Mapping[str, float],
                 cpds: Mapping[str, tuple[Sequence[str], Sequence[Sequence[float]]]]) -> None:
        self.causes = tuple(priors)
        self._joint_prior = functools.reduce(
            np.multiply.outer, (np.array([1.0 - p, p]) for p in priors.values()), np.ones(()))
        # each table with an axis per cause (size 1 for the causes that are not its parents),
        # so that a symptom's likelihood broadcasts against the joint
        self._tables = {
            name: np.reshape(table, (len(table), *(2 if c in parents else 1
                                                   for c in self.causes)))
            for name, (parents, table) in cpds.items()}

    def _joint(self, evidence: Mapping[str, Sequence[float]]) -> np.ndarray:
        """The unnormalised joint of the causes and `evidence`: an axis per cause."""
        joint = self._joint_prior
        for name, dist in evidence.items():
            joint = joint * np.tensordot(np.asarray(dist, dtype=float), self._tables[name], 1)
        return joint

    def none_posterior(self, evidence: Mapping[str, Sequence[float]]) -> float:
        """P(every cause absent | evidence); `evidence` as in `posteriors`."""
        joint = self._joint(evidence)
        return float(joint.flat[0] / joint.sum())  # index (0, ..., 0): every cause absent

    def posteriors(self, evidence: Mapping[str, Sequence[float]]) -> dict[str, float]:
        """P(cause present | evidence) for every cause; `evidence`: symptom -> the probability
        of each of its states, in the table's order (only symptoms with a table)."""
        joint = self._joint(evidence)
        axes = tuple(range(len(self.causes)))
        out = {}
        for i, cause in enumerate(self.causes):
            absent, present = joint.sum(axis=axes[:i] + axes[i + 1:])
            out[cause] = float(present / (absent + present))
        return out
