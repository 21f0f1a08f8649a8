"""A team card's ``imports`` that Python cannot find say where to run from."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from akgentic.team import TeamCard
from akgentic.team.card import TeamCardError

CARD = (
    "name: t\nentry_point: '@A'\nimports: [{module}]\n"
    "members:\n  - card: {{role: A, config: {{name: '@A'}}}}\n"
)


def test_a_package_beside_the_card_but_off_sys_path_says_how_to_reach_it(tmp_path: Path) -> None:
    package = tmp_path / "akgentic_beside_cards"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tally.py").write_text("")
    card_file = tmp_path / "team.yaml"
    card_file.write_text(CARD.format(module="akgentic_beside_cards.tally"))
    assert str(tmp_path) not in sys.path
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(card_file)
    assert str(info.value) == (
        f"{card_file}:3: imports[0]: cannot import 'akgentic_beside_cards.tally': No module "
        f"named 'akgentic_beside_cards' — akgentic_beside_cards is beside this card, but Python "
        f"looks on sys.path: run akgentic from {tmp_path.resolve()}, or set "
        f"PYTHONPATH={tmp_path.resolve()}"
    )


def test_a_package_found_nowhere_says_to_put_it_on_the_path(tmp_path: Path) -> None:
    card_file = tmp_path / "team.yaml"
    card_file.write_text(CARD.format(module="akgentic_nowhere_cards.tally"))
    with pytest.raises(TeamCardError, match=r"run from the folder holding akgentic_nowhere_cards"):
        TeamCard.from_yaml(card_file)


def test_a_module_missing_inside_a_found_package_gets_no_path_advice(tmp_path: Path) -> None:
    card_file = tmp_path / "team.yaml"
    card_file.write_text(CARD.format(module="akgentic.tool.no_such_card"))
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(card_file)
    assert str(info.value).endswith("No module named 'akgentic.tool.no_such_card'")
