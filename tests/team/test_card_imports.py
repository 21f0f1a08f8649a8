"""A team card's ``imports`` that Python cannot find say where to run from; a card an
installed distribution declares (an ``akgentic.tools`` entry point) needs no imports."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from akgentic.team import TeamCard
from akgentic.team.card import TeamCardError
from tests.catalog.distributions import make_distribution

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


@pytest.mark.parametrize(
    ("module", "says"),
    [
        ("akgentic_card_boom", "cannot import 'akgentic_card_boom': RuntimeError: boom"),
        ("akgentic_card_unclosed", "cannot import 'akgentic_card_unclosed': SyntaxError: "),
        ("''", "'' is not a module name: give a dotted name such as my_cards"),
        ("'.x'", "'.x' is not a module name: give a dotted name such as my_cards"),
        ("cards/tally.py", "'cards/tally.py' is a file, not a module name: give 'tally' (and"),
    ],
)
def test_a_module_that_fails_as_it_runs_or_a_name_that_is_no_module_is_the_cards_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, says: str
) -> None:
    """Whatever an import raises is the card's one line: a cards folder's server skips the
    card instead of stopping on it."""
    (tmp_path / "akgentic_card_boom.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "akgentic_card_unclosed.py").write_text("x = (\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    card_file = tmp_path / "team.yaml"
    card_file.write_text(CARD.format(module=module))
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(card_file)
    (line,) = str(info.value).splitlines()
    assert line.startswith(f"{card_file}:3: imports[0]: {says}")


def test_a_card_an_installed_distribution_declares_needs_no_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"Jira{uuid.uuid4().hex[:8]}"  # no other test defines it
    dist = make_distribution(tmp_path / "site", class_name=name)  # jira = <package>:<name>
    monkeypatch.syspath_prepend(str(dist.root))
    try:
        for tool, site in (
            (name, "https://jira.example"),  # its class name (first: not yet imported)
            ("{type: jira, site: 'https://jira.acme'}", "https://jira.acme"),  # its entry point
        ):
            card_file = tmp_path / "team.yaml"
            card_file.write_text(
                "name: t\nentry_point: '@A'\n"
                f"members:\n  - card: {{role: A, config: {{name: '@A', tools: [{tool}]}}}}\n"
            )
            card = TeamCard.from_yaml(card_file)
            [jira] = [t for t in card.members[0].card.config.tools if type(t).__name__ == name]
            assert (type(jira).__module__, jira.site) == (dist.package, site)
    finally:
        dist.forget()
