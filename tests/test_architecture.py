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
