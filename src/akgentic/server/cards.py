"""The team cards a server knows by name, and reading the cards clients post.

Registered cards come from the operator: YAML files (or folders of them) named at start
(``--cards``), or ``TeamCard`` objects given to :func:`create_app`. Their ``imports`` are
honoured: the operator wrote them. A folder is read at its top level only: its ``*.yaml`` /
``*.yml`` files that are team cards (a mapping with ``members`` or ``entry_point``), so the
scenarios, skills, ``mcp.json`` files and subfolders kept beside the cards are passed over
without a word. A folder's broken card is reported once in :attr:`CardRegistry.problems`
and skipped, so one bad file does not keep the others from being served — and a client
asking for it by name is told why (:meth:`CardRegistry.skipped`); a card file named
itself is one the operator asked for, so when it cannot be read (or the path is not there)
:meth:`CardRegistry.load` raises :class:`TeamCardError` instead. A duplicate name is
reported and the first one wins.

A posted card is data from the network: it is validated, never imports anything, and may
only name modules the server has already imported; what it may reach on the server is
:mod:`akgentic.server.posted`'s to say: it may read in the folders named with ``--cards``
(:meth:`CardRegistry.folders`) and what the registered cards read themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from akgentic.core.excerpt import errors_words, validation_words
from akgentic.core.serialization import (
    MODEL_MARKER,
    SerializationError,
    deserialize,
    non_finite,
)
from akgentic.core.yaml_load import YamlTooLargeError, load_yaml, read_yaml_file
from akgentic.core.yaml_problem import yaml_problem
from akgentic.team import TeamCard, TeamCardError, member_names, team_card_errors
from akgentic.tool import ToolCard
from akgentic.tool.core.lookup import defined_cards_only

__all__ = ["CardError", "CardRegistry", "card_from_data", "card_from_yaml", "describe"]


class CardError(ValueError):
    """A posted card that cannot be used; the message says why."""


class CardRegistry:
    """Team cards by name, with where each came from; see the module docstring.

    ``problems`` lists, one line each, what was skipped and why; the registry logs
    nothing itself (whoever loads it reports them once). A skipped card's reason is also
    kept by the names a client would ask for it by (:meth:`skipped`).
    """

    def __init__(self) -> None:
        self._cards: dict[str, tuple[TeamCard, str]] = {}
        self._folders: list[Path] = []
        self._skipped: dict[str, str] = {}  # a skipped card's names -> its one-line reason
        self.problems: list[str] = []

    def add(self, card: TeamCard, source: str = "python") -> None:
        if card.name in self._cards:
            self.problems.append(
                f"{source}: a card named {card.name!r} is already registered (kept the first)"
            )
            return
        self._cards[card.name] = (card, source)

    def load(self, paths: Iterable[str | Path]) -> None:
        """Register the cards of these YAML files and folders (see the module docstring),
        reporting a folder's skipped files in :attr:`problems`; :class:`TeamCardError`
        when a path is not there or a file named here is not a card that reads."""
        for path in map(Path, paths):
            if not path.exists():
                raise TeamCardError(f"{path}: no such file or folder")
            if not path.is_dir():
                self.add(TeamCard.from_yaml(path), str(path))
                continue
            self._folders.append(path.resolve())
            files = [f for f in sorted(path.glob("*.y*ml")) if _is_a_card(f)]
            if not files:
                self.problems.append(
                    f"{path}: no team card in this folder (a team card is a YAML "
                    f"mapping with members and entry_point)"
                )
            for file in files:
                try:
                    self.add(TeamCard.from_yaml(file), str(file))
                except TeamCardError as exc:
                    reason = "; ".join(str(exc).splitlines())
                    self.problems.append("card skipped: " + reason)
                    for name in _names_of(file):
                        self._skipped.setdefault(name, reason)

    def folders(self) -> list[Path]:
        """The folders named at start (``--cards DIR``), resolved: the operator's, where
        posted cards may read (with what the registered cards read themselves)."""
        return list(dict.fromkeys(self._folders))

    def get(self, name: str) -> TeamCard | None:
        found = self._cards.get(name)
        return None if found is None else found[0]

    def items(self) -> list[tuple[TeamCard, str]]:
        return [self._cards[name] for name in sorted(self._cards)]

    def skipped(self, name: str) -> str | None:
        """Why no card answers to ``name`` when a folder's card file of that name (its
        ``name:``, else its file name without the suffix) was skipped at load: one line
        naming the file, its line and what to do; None when no skipped file had it, or a
        card that loaded answers to it."""
        reason = self._skipped.get(name)
        if reason is None or name in self._cards:
            return None
        return (
            f"team card {name!r} was skipped when the server started: {reason}; fix the "
            f"file and restart the server"
        )


def _is_a_card(file: Path) -> bool:
    """Whether a YAML file of a cards folder is meant as a team card: a mapping naming
    ``members`` or ``entry_point``, or a file that does not even read (reported then)."""
    if ".scenario." in file.name:
        return False
    try:
        data = load_yaml(read_yaml_file(file).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return True
    return isinstance(data, dict) and ("members" in data or "entry_point" in data)


def _names_of(file: Path) -> list[str]:
    """The names a client could ask for a card file by, read from the file as far as it
    reads: its ``name:`` when it is a string, and the file's name without the suffix."""
    names = [file.stem]
    try:
        data = load_yaml(read_yaml_file(file).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return names
    named = data.get("name") if isinstance(data, dict) else None
    return [named, *names] if isinstance(named, str) and named else names


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


def card_from_data(
    data: dict[str, Any], started: Collection[type[ToolCard]] | None = None
) -> TeamCard:
    """A card posted as JSON: plain fields, or the framework's serialized form. Its tools
    name only the card classes the server started with (``started``, else every class
    loaded: ``defined_cards_only``): posting a card never makes the server load an
    installed distribution itself, and a class something else loaded since — the
    catalog's discovery, a stored team read back — neither answers to a name nor makes
    one ambiguous. (The serialized form can still carry such a class by its
    ``__model__``: the posted-card policy refuses it, its ``cards`` reach.) A number
    JSON does not hold (NaN, Infinity, which Python's JSON and YAML read) is refused:
    the stored card would no longer be JSON."""
    odd = non_finite(data)
    if odd is not None:
        raise CardError(
            f"the card is not valid: {odd[0]}: {odd[1]} is not a number JSON holds (the "
            f"server could not store the card); give a finite number"
        )
    try:
        with defined_cards_only(started):  # the serialized form too: its tools may name cards
            if MODEL_MARKER in data:
                return _check(deserialize(data))
            try:
                return _check(TeamCard.model_validate(data))
            except ValidationError as exc:  # said with the cards it may name (did you mean)
                words = errors_words(team_card_errors(data, exc))
                raise CardError(f"the card is not valid: {words}") from None
    except ValidationError as exc:
        raise CardError(f"the card is not valid: {validation_words(exc)}") from None
    except SerializationError as exc:
        cause = exc.__cause__  # a class's validation, said as the plain form's would be
        refusal = exc.refusal_words()
        if isinstance(cause, ValidationError) and refusal is not None:
            raise CardError(f"the card does not decode: {cause.title}: {refusal}") from None
        raise CardError(f"the card does not decode: {exc}") from None


def card_from_yaml(text: str, started: Collection[type[ToolCard]] | None = None) -> TeamCard:
    """A card posted as YAML text (``started``: as for :func:`card_from_data`)."""
    try:
        data = load_yaml(text)
    except YamlTooLargeError as exc:
        raise CardError(f"card_yaml: {exc}") from None
    except yaml.YAMLError as exc:
        raise CardError(f"card_yaml is not valid YAML: {yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise CardError("card_yaml must be a mapping (name, entry_point, members)")
    return card_from_data(data, started)


def describe(card: TeamCard) -> dict[str, Any]:
    return {
        "name": card.name,
        "description": card.description,
        "entry_point": card.entry_point,
        "members": member_names(card.members),
        "human": card.human,
        "imports": list(card.imports),
    }
