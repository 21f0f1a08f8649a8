"""The storage bundle's skill store, handed to the team's SkillTool cards.

The skill store is shared by every team of a storage, and the tool layer may not import
the storage: so the team reads the store when it creates or resumes a team and writes its
rows, as :class:`~akgentic.tool.skill.SkillRow` projections, into every SkillTool card
(``Skills.stored``) of every member and profile configuration — including the cards grouped
in a ToolsetCard. A card whose ``Skills.store`` is off is left alone. Read at resume, the
store is what a team resumed in another process (or on another machine sharing the store)
gets its skills from; a folder that only one machine has is not.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from akgentic.storage import SkillStore
from akgentic.tool.core import ToolCard
from akgentic.tool.skill import SkillRow, Skills, SkillTool
from akgentic.tool.toolsets import ToolsetCard

__all__ = ["give_stored_skills", "resolve_skill_folders", "stored_skill_rows"]


def stored_skill_rows(store: SkillStore) -> list[SkillRow]:
    """Every skill of the store, as rows the tool layer reads."""
    return [
        SkillRow(
            name=r.name,
            description=r.description,
            content=r.content,
            source=r.source,
            toolset=r.toolset,
        )
        for r in store.list()
    ]


def _skill_cards(cards: Sequence[ToolCard]) -> Iterator[SkillTool]:
    for card in cards:
        if isinstance(card, SkillTool):
            yield card
        elif isinstance(card, ToolsetCard):
            yield from _skill_cards(card.cards)


def give_stored_skills(config: Any, rows: list[SkillRow]) -> None:
    """Put ``rows`` into every SkillTool of ``config`` (its ``tools``) that reads the store."""
    for card in _skill_cards(getattr(config, "tools", None) or []):
        if card.skills is True:
            card.skills = Skills(stored=list(rows))
        elif isinstance(card.skills, Skills) and card.skills.store:
            card.skills.stored = list(rows)


def resolve_skill_folders(config: Any, base: Path) -> None:
    """Make the relative skill folders of ``config``'s SkillTool cards relative to ``base``
    (a team YAML's folder), as its scenario paths are."""
    for card in _skill_cards(getattr(config, "tools", None) or []):
        if isinstance(card.skills, Skills) and card.skills.folders:
            card.skills.folders = [str((base / f).resolve()) for f in card.skills.folders]
