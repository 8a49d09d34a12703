"""The registry: which symptoms and cause nodes the causal network is assembled from.

Built-in causes and users' causes register the same way (one call, or an entry point in the
`neuraldbg.causes` group). Every change bumps `version`, which is what the network cache keys on,
so a registration after a diagnosis is picked up by the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from causal.causes.base import CauseNode
from causal.errors import NeuralDbgError, RegistryError
from causal.symptoms.base import Symptom

T = TypeVar("T")

#: The entry-point group that plugins use to contribute causes and symptoms.
ENTRY_POINT_GROUP = "neuraldbg.causes"




def _instance(obj: Any, base: type[T], what: str) -> T:
    """`obj` if it is an instance of `base`, `obj()` if it is a subclass, else RegistryError."""
    if isinstance(obj, type) and issubclass(obj, base):
        try:
            return obj()
        except TypeError as e:
            raise RegistryError(
                f"{what} class {obj.__name__} cannot be instantiated without arguments ({e}); "
                "register an instance instead") from e
    if isinstance(obj, base):
        return obj
    raise RegistryError(
        f"expected a {base.__name__} subclass or instance to register as a {what}, got {obj!r}")


class Registry:
    """Symptoms and cause nodes by name. Registration validates; `version` counts changes."""

    def __init__(self) -> None:
        self._symptoms: dict[str, Symptom] = {}
        self._causes: dict[str, CauseNode] = {}
        self.version = 0

    def register_symptom(self, symptom: T, *, replace: bool = False) -> T:
        """Register a Symptom subclass or instance; returns its argument (usable as a decorator).

        A name already registered raises `RegistryError` unless `replace=True`.
        """
        sym = _instance(symptom, Symptom, "symptom")
        sym.check()
        if sym.name in self._causes:
            raise RegistryError(f"symptom {sym.name!r}: a cause already has that name; rename one")
        if sym.name in self._symptoms and not replace:
            raise RegistryError(
                f"symptom {sym.name!r} is already registered ({self._symptoms[sym.name]!r}); "
                "pick another name, or pass replace=True to override it")
        self._symptoms[sym.name] = sym
        self.version += 1
        return symptom

    def register_cause(self, cause: T, *, replace: bool = False) -> T:
        """Register a CauseNode subclass or instance; returns its argument (usable as a decorator).

        Its symptoms must be registered first. A name already registered raises `RegistryError`
        unless `replace=True`; an invalid declaration raises `CauseError`.
        """
        node = _instance(cause, CauseNode, "cause")
        node.check(self._symptoms)
        if node.name in self._symptoms:
            raise RegistryError(f"cause {node.name!r}: a symptom already has that name; rename one")
        if node.name in self._causes and not replace:
            raise RegistryError(
                f"cause {node.name!r} is already registered ({self._causes[node.name]!r}); pick "
                "another name, or pass replace=True to override it")
        self._causes[node.name] = node
        self.version += 1
        return cause

    def unregister_cause(self, name: str) -> CauseNode:
        """Remove a cause by name and return it; an unknown name raises `RegistryError`."""
        if name not in self._causes:
            raise RegistryError(
                f"no cause named {name!r} is registered (registered: {sorted(self._causes)})")
        self.version += 1
        return self._causes.pop(name)

    def symptoms(self) -> dict[str, Symptom]:
        """Registered symptoms by name, in registration order (a copy)."""
        return dict(self._symptoms)

    def causes(self) -> dict[str, CauseNode]:
        """Registered cause nodes by name, in registration order (a copy)."""
        return dict(self._causes)

    def copy(self) -> Registry:
        """An independent registry with the same entries (e.g. to try a cause in isolation)."""
        new = Registry()
        new._symptoms = dict(self._symptoms)
        new._causes = dict(self._causes)
        return new

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> list[str]:
        """Register every cause and symptom that installed packages declare under `group`.

        Symptoms are registered before causes. Loading twice is harmless: an entry whose class
        is already registered under its name is skipped. Returns the names registered.
        """
        import importlib.metadata

        symptoms: list[tuple[str, Symptom | CauseNode]] = []
        causes: list[tuple[str, Symptom | CauseNode]] = []
        for ep in importlib.metadata.entry_points(group=group):
            label = f"entry point {ep.name!r} ({ep.value}) in group {group!r}"
            try:
                obj = ep.load()
            except Exception as e:
                raise RegistryError(
                    f"{label} failed to load: {type(e).__name__}: {e}; fix or uninstall the "
                    "package that declares it") from e
            try:
                if (isinstance(obj, type) and issubclass(obj, Symptom)) or isinstance(obj, Symptom):
                    symptoms.append((label, _instance(obj, Symptom, "symptom")))
                elif (isinstance(obj, type) and issubclass(obj, CauseNode)) or isinstance(
                        obj, CauseNode):
                    causes.append((label, _instance(obj, CauseNode, "cause")))
                else:
                    raise RegistryError(f"it loaded {obj!r}, not a CauseNode or Symptom")
            except RegistryError as e:
                raise RegistryError(f"{label}: {e}") from e
        added = []
        for label, item in [*symptoms, *causes]:
            known: Mapping[str, object] = (
                self._symptoms if isinstance(item, Symptom) else self._causes)
            if type(known.get(item.name)) is type(item):
                continue  # already registered (e.g. loaded twice)
            try:
                if isinstance(item, Symptom):
                    self.register_symptom(item)
                else:
                    self.register_cause(item)
            except NeuralDbgError as e:
                raise RegistryError(f"{label}: {e}") from e
            added.append(item.name)
        return added

    def __repr__(self) -> str:
        return (f"<Registry v{self.version}: {len(self._causes)} causes, "
                f"{len(self._symptoms)} symptoms>")


#: The default registry: built-in causes and users' causes register here.
REGISTRY = Registry()


def register_symptom(symptom: T, *, replace: bool = False) -> T:
    """Register a symptom in the default registry (see `Registry.register_symptom`)."""
    return REGISTRY.register_symptom(symptom, replace=replace)


def register_cause(cause: T, *, replace: bool = False) -> T:
    """Register a cause node in the default registry (see `Registry.register_cause`)."""
    return REGISTRY.register_cause(cause, replace=replace)


def unregister_cause(name: str) -> CauseNode:
    """Remove a cause from the default registry."""
    return REGISTRY.unregister_cause(name)


def load_entry_points(group: str = ENTRY_POINT_GROUP) -> list[str]:
    """Register the causes and symptoms that installed packages declare, in the default registry."""
    return REGISTRY.load_entry_points(group)
