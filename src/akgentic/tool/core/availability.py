"""A tool offered only while something holds: the harness decides, per model request.

Seed 001's rule: a knowledge-search tool is not supplied at all while its base is empty —
there is nothing to search — and returns by itself once the base fills. That is neither
an admin's mark nor a card's config: it is the data, checked by the shared harness before
each request to the model.

A card marks a tool callable with :func:`offer_while` and a zero-argument predicate; the
factory keeps the mark through its wrapper; the agent turns it into pydantic-ai's
``prepare`` hook and asks the predicate once per run (at its first model request), so the
tool's definition is sent for that run only while the predicate holds. A predicate answers
fast and never raises: the harness treats a raising predicate as true (offer the tool —
the tool itself then says what is wrong).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["offer_predicate", "offer_while", "offered_now"]

logger = logging.getLogger("akgentic.tool")

F = TypeVar("F", bound=Callable[..., Any])

_ATTRIBUTE = "__akgentic_offer_while__"


def offer_while(fn: F, predicate: Callable[[], bool]) -> F:
    """Offer ``fn`` to the model only while ``predicate()`` is true; returns ``fn``."""
    setattr(fn, _ATTRIBUTE, predicate)
    return fn


def offer_predicate(fn: Callable[..., Any]) -> Callable[[], bool] | None:
    """The predicate :func:`offer_while` put on ``fn`` (or on what it wraps), if any."""
    predicate = getattr(fn, _ATTRIBUTE, None)
    return predicate if callable(predicate) else None


def offered_now(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is to be offered now: no predicate, or one that holds (or raises)."""
    predicate = offer_predicate(fn)
    if predicate is None:
        return True
    try:
        return bool(predicate())
    except Exception as exc:
        logger.warning("%s: availability check failed (%r); offered", fn.__name__, exc)
        return True
