"""Cards named by data: a name that names no card says what the author should write."""

from __future__ import annotations

import sys
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.core.serialization import SerializationError, deserialize, serialize
from akgentic.team import TeamCard, TeamCardError
from akgentic.tool import ToolCard
from akgentic.tool.core.installed import deserialize_installed
from akgentic.tool.core.lookup import card_class, card_from_data, defined_cards_only
from tests.catalog.distributions import Distribution, make_distribution
from tests.tool.twins import first, second


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


def test_a_card_is_found_through_a_module_that_re_exports_it() -> None:
    """The public path of a shipped card (its package re-exports it) names it as the
    path of the submodule that defines it does."""
    from akgentic.tool.planning import PlanningTool

    assert PlanningTool.__module__ == "akgentic.tool.planning.planning"
    assert card_class("akgentic.tool.planning.PlanningTool") is PlanningTool
    assert card_from_data({"type": "akgentic.tool.planning.PlanningTool"}) == PlanningTool()


def test_a_name_never_runs_a_modules_getattr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module's ``__getattr__`` may import or raise (pydantic's lazy names do both): a
    name read from data is looked up in the module's namespace only, so a posted
    ``pydantic.BaseSettings`` is an unknown card, not a 500 nor an import."""
    lazy = types.ModuleType("lazy_names_module")

    def refuse(name: str) -> object:
        raise RuntimeError(f"{name} was asked for")

    lazy.__getattr__ = refuse  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "lazy_names_module", lazy)
    for posted in (False, True):
        with pytest.raises(ValueError) as info:
            if posted:
                with defined_cards_only():
                    card_class("lazy_names_module.Anything")
            else:
                card_class("lazy_names_module.Anything")
        assert str(info.value).startswith(
            "unknown tool card 'lazy_names_module.Anything': module 'lazy_names_module' has "
            "no 'Anything'"
        )


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


TWINS = "tests.tool.twins.first.LookupTwinCard, tests.tool.twins.second.LookupTwinCard"


def test_a_class_name_two_cards_share_names_neither_and_lists_their_dotted_paths() -> None:
    with pytest.raises(ValueError) as info:
        card_class("LookupTwinCard")
    assert str(info.value) == (
        f"tool card 'LookupTwinCard' is ambiguous: 2 loaded cards have that class name "
        f"({TWINS}); write the dotted path of the one you mean"
    )
    assert card_class("tests.tool.twins.first.LookupTwinCard") is first.LookupTwinCard
    assert card_class("tests.tool.twins.second.LookupTwinCard") is second.LookupTwinCard
    stored = serialize(second.LookupTwinCard())  # stored data names the dotted path
    assert type(deserialize(stored)) is second.LookupTwinCard


def test_a_yaml_team_naming_a_shared_class_name_is_refused_in_one_line(tmp_path: Path) -> None:
    card_file = tmp_path / "team.yaml"
    text = (
        "name: t\nentry_point: '@A'\nimports: [tests.tool.twins.first, tests.tool.twins.second]\n"
        "members:\n  - card: {{role: A, config: {{name: '@A', tools: [{tool}]}}}}\n"
    )
    card_file.write_text(text.format(tool="LookupTwinCard"))
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(card_file)
    [line] = str(info.value).splitlines()
    assert line.endswith(
        f"tool card 'LookupTwinCard' is ambiguous: 2 loaded cards have that class name "
        f"({TWINS}); write the dotted path of the one you mean"
    )
    card_file.write_text(text.format(tool="{type: tests.tool.twins.second.LookupTwinCard}"))
    tools = TeamCard.from_yaml(card_file).members[0].card.config.tools
    assert [type(t) for t in tools if type(t).__name__ == "LookupTwinCard"] == [
        second.LookupTwinCard
    ]


def test_a_card_defined_again_under_the_same_path_is_not_ambiguous() -> None:
    """A module reloaded, a class made twice: the later one replaces the earlier, as in
    the serialization registry; the two never compete for the name."""

    def define() -> type[ToolCard]:
        class LookupRedefinedCard(ToolCard):
            pass

        return LookupRedefinedCard

    earlier, later = define(), define()
    assert earlier is not later
    assert card_class("LookupRedefinedCard") is later


# Cards installed distributions declare under the entry-point group ``akgentic.tools``.

Install = Callable[..., Distribution]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """Installs throwaway distributions for one test: their folders on sys.path (undone
    by monkeypatch), their packages dropped from sys.modules after."""
    made: list[Distribution] = []

    def make(**kwargs: Any) -> Distribution:
        dist = make_distribution(tmp_path / f"site{len(made)}", **kwargs)
        monkeypatch.syspath_prepend(str(dist.root))
        made.append(dist)
        return dist

    yield make
    for dist in made:
        dist.forget()


def _unique(stem: str) -> str:
    """A class name no other test defines (a card class outlives its test's sys.modules)."""
    return f"{stem}{uuid.uuid4().hex[:8]}"


def test_an_entry_point_card_is_found_by_its_name_class_and_path_and_loaded_only_then(
    install: Install,
) -> None:
    name = _unique("Jira")
    dist = install(class_name=name)
    assert dist.package not in sys.modules
    card = card_from_data({"type": "jira", "site": "https://jira.acme"})
    assert (type(card).__module__, type(card).__name__) == (dist.package, name)
    assert card.site == "https://jira.acme"  # type: ignore[attr-defined]
    assert card_class(name) is type(card)
    assert card_class(f"{dist.package}.{name}") is type(card)
    assert isinstance(card_from_data(name), type(card))


def test_a_module_entry_point_s_declared_card_is_found_by_entry_point_and_class_name(
    install: Install,
) -> None:
    name = _unique("Jira")
    dist = install(class_name=name, entry_point="{package}")
    found = card_class(name)  # a bare class name: the module entry points are loaded
    assert (found.__module__, found.__name__) == (dist.package, name)
    assert card_class("jira") is found


def test_an_entry_point_that_fails_to_load_names_it_its_distribution_and_the_cause(
    install: Install,
) -> None:
    dist = install(module_source="raise RuntimeError('half\\ninstalled')")
    with pytest.raises(ValueError) as info:
        card_from_data({"type": "jira"})
    assert str(info.value) == (
        f"tool card 'jira': entry point jira = {dist.package}:JiraTool ({dist.package} 1.0) "
        f"failed to load: RuntimeError: half installed (fix or reinstall that distribution)"
    )


def test_an_entry_point_that_names_no_card_says_so(install: Install) -> None:
    dist = install(module_source="class Plain:\n    pass\n", entry_point="{package}:Plain")
    with pytest.raises(ValueError) as info:
        card_class("jira")
    assert str(info.value) == (
        f"'jira' is not a tool card: entry point jira = {dist.package}:Plain ({dist.package} "
        f"1.0) declares Plain, not a subclass of akgentic.tool.ToolCard (a tools entry names "
        f"a card class)"
    )


def test_an_unknown_name_lists_the_installed_cards_and_imports_nothing(install: Install) -> None:
    name = _unique("Jira")
    dist = install(class_name=name)
    with pytest.raises(ValueError) as info:
        card_class("jirra")
    message = str(info.value)
    assert message.startswith("unknown tool card 'jirra': did you mean 'jira'?; known cards are ")
    assert f"; installed (akgentic.tools entry points): jira ({name}) (a card of" in message
    with pytest.raises(ValueError, match=r"its module 'acme_elsewhere' is not imported"):
        card_class("acme_elsewhere.JiraTool")
    assert dist.package not in sys.modules  # no entry point matched: none was loaded
    assert "acme_elsewhere" not in sys.modules


def test_a_broken_module_entry_point_does_not_answer_for_another_name(install: Install) -> None:
    broken = install(module_source="raise RuntimeError('half installed')", entry_point="{package}")
    with pytest.raises(ValueError, match=r"^unknown tool card 'NoSuchCard': known cards"):
        card_class("NoSuchCard")
    assert broken.package not in sys.modules  # it failed: Python keeps no half module


def test_stored_data_naming_an_installed_card_loads_its_entry_point(install: Install) -> None:
    """What a resume in a new process does with a stored card: the marker names a class no
    one imported yet, and the entry point whose module holds it is loaded to read it."""
    name = f"Jira{uuid.uuid4().hex[:8]}"
    dist = install(class_name=name)
    stored = {"cards": [{"__model__": f"{dist.package}.{name}", "site": "https://j.acme"}]}
    assert dist.package not in sys.modules
    decoded = deserialize_installed(stored)
    [card] = decoded["cards"]
    assert (type(card).__name__, card.site) == (name, "https://j.acme")


def test_stored_data_naming_no_installed_class_raises_and_imports_nothing(
    install: Install, unimported: str, caplog: pytest.LogCaptureFixture
) -> None:
    broken = install(module_source="raise RuntimeError('half installed')", entry_point="{package}")
    for path in (f"{unimported}.Tally", f"{broken.package}.Tally"):
        with pytest.raises(SerializationError, match=f"unknown __model__ '{path}'"):
            deserialize_installed({"__model__": path})
    assert unimported not in sys.modules  # data picks among entry points, imports nothing
    assert f"entry point jira = {broken.package}" in caplog.text  # the broken one: logged
    assert "RuntimeError: half installed" in caplog.text


POSTED = (
    "; a posted card names only the cards the server started with (the operator adds one "
    "by starting the server with its module: akgentic serve --import MODULE, or with a "
    "card that uses it: --cards; or lets posted cards use every loaded one: --allow-posted "
    "cards)"
)


def test_under_defined_cards_only_an_unknown_name_offers_only_the_loaded_cards(
    install: Install, unimported: str
) -> None:
    """A posted card can use neither an entry point nor an imports line: the message
    offers what it may name, and how the operator makes a card loadable."""
    name = _unique("Jira")
    dist = install(class_name=name)
    with defined_cards_only(), pytest.raises(ValueError) as info:
        card_class("jirra")
    message = str(info.value)
    assert message.startswith("unknown tool card 'jirra': known cards are ")
    assert message.endswith(POSTED)
    known = message.removeprefix("unknown tool card 'jirra': known cards are ")
    known = known.removesuffix(POSTED).split(", ")
    assert "LookupProbeCard" in known and "MailboxTool" in known
    assert first.LookupTwinCard.__module__ + ".LookupTwinCard" in known  # shared: its path
    assert "LookupTwinCard" not in known
    assert "akgentic.tools" not in message and "imports" not in message
    assert name not in message and "did you mean" not in message  # not offered...
    assert dist.package not in sys.modules  # ...nor loaded
    with defined_cards_only(), pytest.raises(ValueError) as info:
        card_class(f"{unimported}.Tally")
    assert str(info.value) == (
        f"unknown tool card '{unimported}.Tally': its module '{unimported}' is not loaded" + POSTED
    )


TWIN = """
from akgentic.tool import ToolCard


class {name}(ToolCard):
    \"\"\"A card whose class name another module's card shares.\"\"\"
"""


def test_among_the_cards_a_server_started_with_a_later_twin_is_neither_found_nor_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server reads a posted card among the classes it started with: a card of the same
    class name loaded since (an installed distribution the catalog's discovery loaded)
    does not make the name ambiguous, and is not found by its own path either."""
    name = _unique("Twin")
    early, late = f"early_{name.lower()}", f"late_{name.lower()}"
    for module in (early, late):
        (tmp_path / f"{module}.py").write_text(TWIN.format(name=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        started_card = getattr(__import__(early), name)
        started = frozenset(card_class(n) for n in ("LookupProbeCard", name))
        later_card = getattr(__import__(late), name)

        with defined_cards_only(started):
            assert card_class(name) is started_card
            assert card_class(f"{early}.{name}") is started_card
            with pytest.raises(ValueError) as info:
                card_class(f"{late}.{name}")
            assert str(info.value) == (
                f"unknown tool card '{late}.{name}': the server did not start with it" + POSTED
            )
            with pytest.raises(ValueError) as info:
                card_class("Nope")
            assert str(info.value) == (
                f"unknown tool card 'Nope': known cards are LookupProbeCard, {name}" + POSTED
            )
        with pytest.raises(ValueError, match=f"tool card '{name}' is ambiguous"):
            card_class(name)  # anywhere else, both are defined: the author writes a path
        assert card_class(f"{late}.{name}") is later_card
    finally:
        sys.modules.pop(early, None)
        sys.modules.pop(late, None)
