"""The one mechanism behind the Migration section's compatibility façades."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["facade_getattr"]


def facade_getattr(
    module: str, shimmed: dict[str, str], withdrawn: dict[str, str], hint: str = ""
) -> Callable[[str], Any]:
    """A module ``__getattr__``: shimmed names resolve from their new home with a
    DeprecationWarning (on access, never at import); withdrawn names raise ImportError
    naming where to import them from."""

    def resolve(name: str) -> Any:
        home = shimmed.get(name)
        if home is not None:
            warnings.warn(
                f"{module}.{name} moved to {home}; import it from there{hint}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(home), name)
        new_home = withdrawn.get(name)
        if new_home is not None:
            raise ImportError(
                f"{module}.{name} was withdrawn; import it from {new_home}", name=name
            )
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return resolve
