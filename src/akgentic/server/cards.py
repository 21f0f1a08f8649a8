"""The team cards a server knows by name, and reading the cards clients post.

Registered cards come from the operator: YAML files (or folders of them) named at start
(``--cards``), or ``TeamCard`` objects given to :func:`create_app`. Their ``imports`` are
honoured: the operator wrote them. A broken file is reported and skipped; a duplicate name
is reported too and the first one wins.

A posted card is data from the network: it is validated, never imports anything, and may
only name modules the server has already imported.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from akgentic.core.serialization import MODEL_MARKER, SerializationError, deserialize
from akgentic.team import TeamCard, TeamCardError, member_names

__all__ = ["CardError", "CardRegistry", "card_from_data", "card_from_yaml", "describe"]

logger = logging.getLogger("akgentic.server")


class CardError(ValueError):
    """A posted card that cannot be used; the message says why."""


class CardRegistry:
    """Team cards by name, with where each came from."""

    def __init__(self) -> None:
        self._cards: dict[str, tuple[TeamCard, str]] = {}
        self.errors: list[str] = []

    def add(self, card: TeamCard, source: str = "python") -> None:
        if card.name in self._cards:
            problem = f"{source}: a card named {card.name!r} is already registered (kept first)"
            self.errors.append(problem)
            logger.warning(problem)
            return
        self._cards[card.name] = (card, source)

    def load(self, paths: Iterable[str | Path]) -> None:
        """Register the cards of these YAML files and folders (``*.yaml``/``*.yml``, not
        scenario files), reporting the broken ones in :attr:`errors`."""
        for path in map(Path, paths):
            files = (
                sorted(p for p in path.rglob("*.y*ml") if ".scenario." not in p.name)
                if path.is_dir()
                else [path]
            )
            if not path.exists():
                self.errors.append(f"{path}: no such file or folder")
            for file in files:
                try:
                    self.add(TeamCard.from_yaml(file), str(file))
                except TeamCardError as exc:
                    self.errors.append(str(exc))
                    logger.warning("card skipped: %s", exc)

    def get(self, name: str) -> TeamCard | None:
        found = self._cards.get(name)
        return None if found is None else found[0]

    def items(self) -> list[tuple[TeamCard, str]]:
        return [self._cards[name] for name in sorted(self._cards)]


def _check(card: object) -> TeamCard:
    if not isinstance(card, TeamCard):
        raise CardError(f"this is a {type(card).__name__}, not a team card")
    missing = [m for m in card.imports if m not in sys.modules]
    if missing:
        raise CardError(
            f"a posted card cannot import code ({', '.join(missing)}): ask the operator to "
            f"register the card on the server (akgentic serve --cards)"
        )
    return card


def card_from_data(data: dict[str, Any]) -> TeamCard:
    """A card posted as JSON: plain fields, or the framework's serialized form."""
    try:
        if MODEL_MARKER in data:
            return _check(deserialize(data))
        return _check(TeamCard.model_validate(data))
    except ValidationError as exc:
        raise CardError(_explain(exc)) from None
    except SerializationError as exc:
        raise CardError(f"the card does not decode: {exc}") from None


def card_from_yaml(text: str) -> TeamCard:
    """A card posted as YAML text."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CardError(f"card_yaml is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CardError("card_yaml must be a mapping (name, entry_point, members)")
    return card_from_data(data)


def _explain(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "(top)"
        parts.append(f"{where}: {error['msg']}")
    more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return "the card is not valid: " + "; ".join(parts) + more


def describe(card: TeamCard) -> dict[str, Any]:
    return {
        "name": card.name,
        "description": card.description,
        "entry_point": card.entry_point,
        "members": member_names(card.members),
    }
