"""What a run's evidence depends on besides the run: a fingerprint of what the symptoms compute.

Fitted parameters were fitted on the evidence today's symptom code extracts, so they record this
fingerprint, and a change in it means `neuraldbg fit` must run again. It hashes the code, not its
text: each registered symptom's name, states and class, as syntax trees without docstrings or
imports, where every name the code uses that is a function, class or constant of `causal` is
replaced by the fingerprint of what it refers to (its own tree, recursively, or its value). So
moving a helper to another module, renaming it, or editing a docstring or comment leaves the
fingerprint as it is; changing what any symptom computes, or any helper it reaches, does not.
"""

from __future__ import annotations

import ast
import enum
import hashlib
import inspect
import sys
import textwrap
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from causal.registry import Registry

_CYCLE = "<cycle>"


def symptom_signature(registry: Registry) -> str:
    """A short hash of what every registered symptom computes (see the module docstring)."""
    hasher = _Hasher()
    parts = []
    for name in sorted(registry.symptoms()):
        sym = registry.symptoms()[name]
        parts.append(f"{name}:{','.join(sym.states)}:{hasher.of(type(sym))}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


class _Hasher:
    """Content hashes of functions and classes, each computed once (Merkle-style)."""

    def __init__(self) -> None:
        self.done: dict[int, str] = {}
        self.busy: set[int] = set()

    def of(self, obj: Any) -> str:
        obj = inspect.unwrap(obj) if callable(obj) else obj
        key = id(obj)
        if key in self.done:
            return self.done[key]
        if key in self.busy:  # (mutual) recursion: the cycle is hashed by its entry point
            return _CYCLE
        self.busy.add(key)
        try:
            digest = self._tree_hash(obj)
        finally:
            self.busy.discard(key)
        self.done[key] = digest
        return digest

    def _tree_hash(self, obj: Any) -> str:
        try:
            source = textwrap.dedent(inspect.getsource(obj))
        except (OSError, TypeError):  # no source (built in, generated): its name stands for it
            return f"name:{getattr(obj, '__qualname__', repr(obj))}"
        tree = ast.parse(source)
        namespace = vars(sys.modules[obj.__module__]) if obj.__module__ in sys.modules else {}
        tree = _Normalise(namespace, self).visit(tree)
        return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()[:16]


class _Normalise(ast.NodeTransformer):
    """Drops docstrings, imports and the definition's own name; replaces names of `causal`'s
    functions, classes and constants by the fingerprint of what they are."""

    def __init__(self, namespace: dict[str, Any], hasher: _Hasher) -> None:
        self.namespace = namespace
        self.hasher = hasher
        self.depth = 0

    def _strip(self, node: Any) -> Any:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        if self.depth == 0 and hasattr(node, "name"):
            node.name = "_"  # a rename of the definition itself is no change
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _strip

    def visit_Module(self, node: ast.Module) -> Any:
        self.generic_visit(node)
        return node

    def visit_Import(self, node: ast.Import) -> Any:
        return None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        return None

    def visit_Name(self, node: ast.Name) -> Any:
        if not isinstance(node.ctx, ast.Load) or node.id not in self.namespace:
            return node
        value = self.namespace[node.id]
        token = _token(value, self.hasher)
        return node if token is None else ast.copy_location(ast.Name(token, node.ctx), node)


def _token(value: Any, hasher: _Hasher) -> str | None:
    """What a name stands for, when it is `causal`'s own: a content hash or a value."""
    module = getattr(value, "__module__", None) or ""
    ours = module == "causal" or module.startswith("causal.")
    if isinstance(value, enum.Enum):
        return f"enum:{value.value!r}"
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return f"enum_type:{sorted(repr(m.value) for m in value)}"
    if ours and (inspect.isfunction(value) or inspect.isclass(value)):
        return f"def:{hasher.of(value)}"
    if isinstance(value, int | float | str | bytes | bool | tuple | frozenset
                  | types.MappingProxyType):
        return f"value:{_stable_repr(value)}"
    return None


def _stable_repr(value: Any) -> str:
    if isinstance(value, types.MappingProxyType | dict):
        return "{" + ",".join(f"{_stable_repr(k)}:{_stable_repr(v)}"
                              for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, frozenset | set):
        return "{" + ",".join(sorted(_stable_repr(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ",".join(_stable_repr(v) for v in value) + ")"
    if isinstance(value, enum.Enum):
        return repr(value.value)
    return repr(value)
