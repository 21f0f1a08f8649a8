"""For tests of hostile YAML: a few hundred bytes that expand to millions of values."""

from __future__ import annotations


def alias_bomb(levels: int = 8, width: int = 9) -> str:
    """``levels`` anchors (``l0`` ... ), each a list of ``width`` aliases of the one before:
    under 500 bytes that expand to ``width ** levels`` values (43 million by default)."""
    first = f"l0: &l0 [{', '.join(['x'] * width)}]\n"
    return first + "".join(
        f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]\n" for n in range(1, levels)
    )
