"""Cards named by data: a name that names no card says what the author should write."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from akgentic.tool import ToolCard
from akgentic.tool.core.lookup import card_class, card_from_data


class LookupProbeCard(ToolCard):
    """A card of this test module, found by its dotted path."""


class NotACard:
    """A class that is not a card."""


@pytest.fixture
def unimported() -> Iterator[str]:
    name = "akgentic_never_imported_cards"
    assert name not in sys.modules
    yield name


def test_a_card_is_found_by_name_and_by_dotted_path() -> None:
    assert card_class("LookupProbeCard") is LookupProbeCard
    assert card_class(f"{__name__}.LookupProbeCard") is LookupProbeCard


def test_a_dotted_path_whose_module_is_not_imported_says_to_list_it(unimported: str) -> None:
    with pytest.raises(ValueError) as info:
        card_from_data({"type": f"{unimported}.Tally"})
    assert str(info.value) == (
        f"unknown tool card '{unimported}.Tally': its module '{unimported}' is not imported — "
        f"list it under the team card's imports (in Python, import it first)"
    )
    assert unimported not in sys.modules  # lookup never imports


def test_a_class_that_is_not_a_card_is_named_as_such() -> None:
    with pytest.raises(ValueError, match=r"'.*\.NotACard' is not a tool card \(the class NotACard"):
        card_class(f"{__name__}.NotACard")


def test_a_typo_gets_the_closest_names() -> None:
    with pytest.raises(ValueError, match=r"did you mean '.*\.LookupProbeCard'\?$"):
        card_class(f"{__name__}.LookupProbCard")
    with pytest.raises(
        ValueError, match=r"^unknown tool card 'MailboxTol': did you mean 'MailboxTool'"
    ):
        card_class("MailboxTol")


def test_an_attribute_missing_from_an_imported_module_is_named() -> None:
    module = types.ModuleType("akgentic_probe_empty")
    sys.modules[module.__name__] = module
    try:
        with pytest.raises(ValueError, match=r"module 'akgentic_probe_empty' has no 'Zzz'$"):
            card_class("akgentic_probe_empty.Zzz")
    finally:
        del sys.modules[module.__name__]
