"""The layout's rules, checked on the code itself: every module imports, the import graph of
`neuraldbg` and `causal` has no cycle (every import counts: lazy, under TYPE_CHECKING or not),
and `causal` never imports `neuraldbg` or torch."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("neuraldbg", "causal")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The project modules `name` imports anywhere in its code."""
    out = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # `import a.b.c` of a name in a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        graph.add_edges_from((name, target) for target in _imports(name, path))
    return graph


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_imports(name):
    importlib.import_module(name)


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join([*c, c[0]]) for c in cycles[:10])


def test_inference_never_imports_capture_or_torch():
    for name, path in MODULES.items():
        if not name.startswith("causal"):
            continue
        assert not any(t.startswith("neuraldbg") for t in _imports(name, path)), name
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                    for a in n.names}
        imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and not n.level}
        assert "torch" not in imported, name


def test_the_stages_form_layers():
    """Between subpackages and top-level modules (`neuraldbg.capture`, `neuraldbg.monitor`,
    `causal.schema`...) the imports have no cycle either: capture <- nonfinite <- detect <-
    step_capture <- monitor <- suite, integrations, cli; schema <- symptoms <- causes <- network."""
    stages = nx.DiGraph()
    for a, b in import_graph().edges():
        sa, sb = ".".join(a.split(".")[:2]), ".".join(b.split(".")[:2])
        if sa != sb:
            stages.add_edge(sa, sb)
    cycles = list(nx.simple_cycles(stages))
    assert not cycles, "cycles between stages: " + "; ".join(
        " -> ".join([*c, c[0]]) for c in cycles[:10])


def _vocabulary_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals naming a state or an event kind where the vocabulary's enums belong:
    compared with an event's kind or state, or collected with others of them."""
    from causal.schema.vocabulary import EventKind, State

    words = {m.value for m in State} | {m.value for m in EventKind}
    found: dict[int, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            event_attr = any(isinstance(n, ast.Attribute) and n.attr in
                             ("kind", "from_state", "to_state") for s in sides for n in ast.walk(s))
            for s in sides:
                consts = list(s.elts) if isinstance(s, ast.Tuple | ast.Set | ast.List) else [s]
                for c in consts:
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and (
                            c.value in words and (event_attr or c.value not in
                                                  ("nan", "inf", "finite", "loss"))):
                        found[id(c)] = (c.lineno, c.value)
        elif isinstance(node, ast.Set | ast.Tuple | ast.List) and len(node.elts) > 1 and all(
                isinstance(e, ast.Constant) and e.value in words - {"nan", "inf", "finite", "loss"}
                for e in node.elts):
            found.update({id(e): (e.lineno, e.value) for e in node.elts
                          if isinstance(e, ast.Constant)})
    return sorted(found.values())


def test_states_and_event_kinds_are_named_by_the_vocabulary():
    """No state or event-kind name is written as a string outside causal/schema/vocabulary.py:
    `e.to_state == State.GRAD_EXPLODING`, not `== "grad_exploding"`."""
    offenders = []
    for name, path in MODULES.items():
        if name == "causal.schema.vocabulary":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{path.relative_to(REPO)}:{line}: {word!r}"
                      for line, word in _vocabulary_literals(tree)]
    assert not offenders, "use the enums of causal.schema.vocabulary:\n" + "\n".join(offenders)


def test_events_hold_the_vocabulary_enums():
    from causal.schema.run import Event, EventKind, State

    ev = Event.from_dict({"step": 3, "layer_name": "fc", "kind": "grad",
                          "from_state": "grad_healthy", "to_state": "grad_exploding",
                          "value": 1e4})
    assert type(ev.kind) is EventKind and type(ev.to_state) is State
    assert ev == Event(3, "fc", EventKind.GRAD, State.GRAD_HEALTHY, State.GRAD_EXPLODING, 1e4)
    with pytest.raises(ValueError, match="grad_explodnig"):
        Event(3, "fc", "grad", "grad_healthy", "grad_explodnig", 1e4)


def test_the_vocabulary_check_sees_strings_where_enums_belong():
    code = ('if e.to_state == "grad_exploding" or ev.kind in ("grad", "grad_finite"):\n'
            '    pass\n'
            'TROUBLE = frozenset({"loss_spike", "activation_dead"})\n'
            'x = float("nan"); y = "loss" in host; z = ("forward", "loss")\n')
    found = _vocabulary_literals(ast.parse(code))
    assert sorted(w for _, w in found) == sorted(
        ["grad_exploding", "grad", "grad_finite", "loss_spike", "activation_dead"])
