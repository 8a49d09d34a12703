"""Text read from a run file is printed: control characters in it (terminal escape sequences,
newlines, bidirectional overrides) are escaped, so a crafted file cannot fake report lines."""

from __future__ import annotations

from typing import Any


def printable(text: str) -> str:
    """`text` with every non-printable character (except the space) written as an escape."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def printable_strings(obj: Any) -> Any:
    """A JSON value with `printable` applied to every string in it, keys included."""
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, dict):
        return {printable(str(k)): printable_strings(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [printable_strings(v) for v in obj]
    return obj
