"""The fit's fingerprint follows what the symptoms compute, not their source text: a move, a
rename or a docstring leaves it, a changed computation does not."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

from causal.calibration.fingerprint import symptom_signature
from causal.registry import Registry

HELPERS = '''
"""Helpers."""
LIMIT = {limit}


def {helper}(values):
    """The share of values over the limit."""
    return sum(v > LIMIT for v in values) / max(len(values), 1)
'''

SYMPTOM = '''
"""A symptom for the fingerprint test."""
from causal.symptoms.base import Symptom
{import_line}


class Over(Symptom):
    """{doc}"""

    name = "over_limit"
    states = ("normal", "over")
    description = "values over the limit"

    def observe(self, run):
        share = {helper}([s for s, _ in run.series.get("loss", [])])
        return self.hard("over" if share > 0.5 else "normal")
'''


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _signature(tmp_path, case, *, helper="share_over", limit="0.5", doc="Values over a limit.",
               moved=False):
    """Build one variant of the symptom module (the helper in it, or `moved` to another) under
    a `causal.` name, as the fingerprint only follows `causal`'s own code."""
    folder = tmp_path / case
    folder.mkdir()
    helpers = HELPERS.format(limit=limit, helper=helper)
    names = [f"causal._fp_{case}_helpers", f"causal._fp_{case}_symptom"]
    if moved:
        (folder / "helpers.py").write_text(helpers)
        _load(names[0], folder / "helpers.py")
        text = SYMPTOM.format(import_line=f"from {names[0]} import {helper}", helper=helper,
                              doc=doc)
    else:
        text = helpers + SYMPTOM.format(import_line="", helper=helper, doc=doc)
    (folder / "symptom.py").write_text(textwrap.dedent(text))
    module = _load(names[1], folder / "symptom.py")
    reg = Registry()
    reg.register_symptom(module.Over())
    try:
        return symptom_signature(reg)
    finally:
        for n in names:
            sys.modules.pop(n, None)


@pytest.fixture
def base(tmp_path):
    return _signature(tmp_path, "base")


def test_a_docstring_a_rename_and_a_move_keep_the_fingerprint(tmp_path, base):
    assert _signature(tmp_path, "doc", doc="Another docstring entirely.") == base
    assert _signature(tmp_path, "renamed", helper="_fraction_above") == base
    assert _signature(tmp_path, "moved", moved=True) == base
    assert _signature(tmp_path, "all", helper="frac", doc="x", moved=True) == base


def test_a_changed_computation_changes_the_fingerprint(tmp_path, base):
    assert _signature(tmp_path, "limit", limit="0.6") != base
