"""Skills from folders (card field and AKGENTIC_SKILLS_DIR) and from the skill store: broken
files reported on the team stream and skipped, duplicates reported with the first (card,
then folders by path, then store) winning; and the per-turn view of the skills that enable
a toolset, set aside while it is active and offered again after."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from akgentic.tool.core import ContextUpdater, ToolFactory
from akgentic.tool.skill import (
    MENU_HEADER,
    SKILLS_DIR_ENV,
    VIEW_HEADER,
    LoadError,
    SkillEntry,
    SkillRow,
    Skills,
    SkillsSkippedEvent,
    SkillTool,
    load_skills,
    parse_skill_file,
)

from ..conftest import EventObserver, FakeAgent

MEDIA_SKILL = """---
name: films
description: For films, enable the media toolset first.
toolset: media
---
Call enable_toolset("media"), then media_search(query).
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str = "d") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nbody of {name}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(root, "a/SKILL.md", skill_md("alpha"))
    write(root, "b/deep/er/SKILL.md", skill_md("beta"))
    write(root, "gamma.yaml", "name: gamma\ndescription: g\nbody: gamma body\n")
    write(root, "c/delta.yml", "name: delta\ndescription: dd\n")
    write(root, "c/notes.md", "not a skill: only SKILL.md counts in a folder")
    return root


def wired(card: SkillTool) -> tuple[ToolFactory, EventObserver]:
    observer = EventObserver()
    return ToolFactory([card], observer=observer), observer


def names(factory: ToolFactory) -> list[str]:
    """The skills the card was given, as /skills lists them."""
    menu = factory.get_command_registry().dispatch("/skills")
    return [line.split(" — ")[0] for line in str(menu).splitlines()[1:]]


# -- folders --------------------------------------------------------------------------------
def test_a_folder_is_read_recursively_when_the_card_is_wired(folder: Path) -> None:
    factory, observer = wired(SkillTool(skills=Skills(folders=[str(folder)])))
    assert names(factory) == ["alpha", "beta", "delta", "gamma"]
    (use_skill,) = factory.get_tools()
    assert use_skill("beta") == "beta\n\nbody of beta"
    assert use_skill("gamma") == "gamma\n\ngamma body"
    assert observer.events == []  # nothing skipped, nothing reported


def test_the_environment_names_the_folders_of_a_card_that_names_none(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "more"
    write(other, "x/SKILL.md", skill_md("extra"))
    monkeypatch.setenv(SKILLS_DIR_ENV, f"{folder}{os.pathsep}{other}")
    factory, _ = wired(SkillTool())
    assert names(factory) == ["alpha", "beta", "delta", "gamma", "extra"]
    factory, _ = wired(SkillTool(skills=Skills(folders=[])))  # [] opts out of the variable
    assert names(factory) == []


def test_broken_files_are_reported_on_the_team_stream_and_skipped(folder: Path) -> None:
    write(folder, "broken/SKILL.md", "no frontmatter here")
    write(folder, "bad.yaml", "name: [unclosed\n")
    write(folder, "multi.yml", "name: m\ndescription: |\n  two\n  lines\n")
    factory, observer = wired(SkillTool(skills=Skills(folders=[str(folder)])))
    assert names(factory) == ["alpha", "beta", "delta", "gamma"]
    [event] = observer.events
    assert isinstance(event, SkillsSkippedEvent)
    reasons = {Path(e.path).name: e.reason for e in event.errors}
    assert set(reasons) == {"SKILL.md", "bad.yaml", "multi.yml"}
    assert "no YAML frontmatter" in reasons["SKILL.md"]
    assert "not valid YAML" in reasons["bad.yaml"]
    assert "single line" in reasons["multi.yml"]


def test_a_missing_folder_is_reported_not_fatal(tmp_path: Path) -> None:
    factory, observer = wired(SkillTool(skills=Skills(folders=[str(tmp_path / "nope")])))
    assert names(factory) == []
    [event] = observer.events
    assert event.errors == [
        LoadError(path=str(tmp_path / "nope"), reason="no such file or directory")
    ]


def test_duplicates_first_by_path_wins_across_card_folders_and_store(folder: Path) -> None:
    write(folder, "z/SKILL.md", skill_md("alpha", "the later alpha"))
    card = SkillTool(
        skills=Skills(
            skills=[SkillEntry(name="gamma", description="inline gamma", content="mine")],
            folders=[str(folder)],
            stored=[
                SkillRow(name="delta", description="stored delta", content="x", source="s3"),
                SkillRow(name="omega", description="stored omega", content="o"),
            ],
        )
    )
    factory, observer = wired(card)
    assert names(factory) == ["gamma", "alpha", "beta", "delta", "omega"]
    (use_skill,) = factory.get_tools()
    assert use_skill("gamma") == "gamma\n\nmine"
    assert use_skill("alpha") == "alpha\n\nbody of alpha"  # a/ before z/
    [event] = observer.events
    sources = [(e.path, e.reason.split(":")[0]) for e in event.errors]
    assert sources == [
        (str(folder / "gamma.yaml"), "duplicate skill name 'gamma'"),
        (str(folder / "z" / "SKILL.md"), "duplicate skill name 'alpha'"),
        ("skill store: delta (from s3)", "duplicate skill name 'delta'"),
    ]


def test_a_store_row_loaded_from_a_folder_the_card_reads_too_is_one_skill_not_a_duplicate(
    folder: Path,
) -> None:
    """``akgentic serve --skills-dir F`` stores F's skills, and its variable,
    AKGENTIC_SKILLS_DIR=F, makes every ``SkillTool()`` read F too: the same skill twice is
    not a name clash to report (nothing to rename), and the file's copy is the one kept."""
    write(folder, "films/SKILL.md", MEDIA_SKILL)
    rows = [
        SkillRow(name=e.name, description=e.description, content=e.content, source=str(folder))
        for e in load_skills([folder]).skills
        if e.name != "alpha"
    ]
    rows.append(SkillRow(name="alpha", description="another alpha", content="x", source="s"))
    factory, observer = wired(SkillTool(skills=Skills(folders=[str(folder)], stored=rows)))
    assert names(factory) == ["alpha", "beta", "delta", "films", "gamma"]
    [event] = observer.events  # only the alpha that differs
    assert [(e.path, e.reason.split(":")[0]) for e in event.errors] == [
        ("skill store: alpha (from s)", "duplicate skill name 'alpha'")
    ]
    [films] = factory.get_context_states()
    view = films()
    assert view is not None and "films — For films" in view.render_full()  # the file's link


def test_store_rows_are_checked_and_read_only_when_the_store_is_on() -> None:
    rows = [
        SkillRow(name="ok", description="fine", content="c"),
        SkillRow(name="blank", description="", content="c"),
    ]
    factory, observer = wired(SkillTool(skills=Skills(stored=rows)))
    assert names(factory) == ["ok"]
    [event] = observer.events
    assert event.errors[0].path == "skill store: blank"
    assert "description" in event.errors[0].reason
    factory, _ = wired(SkillTool(skills=Skills(stored=rows, store=False)))
    assert names(factory) == []


def test_the_toolset_key_is_read_from_frontmatter_and_checked(tmp_path: Path) -> None:
    entry = parse_skill_file(write(tmp_path, "SKILL.md", MEDIA_SKILL))
    assert entry.toolset == "media"
    with pytest.raises(ValueError, match="'toolset' must be text"):
        parse_skill_file(
            write(tmp_path, "x/SKILL.md", "---\nname: n\ndescription: d\ntoolset: [a]\n---\n")
        )


@pytest.mark.parametrize(
    ("toolset", "reason"),
    [
        ('""', "toolset: must not be blank: leave 'toolset' out when the skill enables none"),
        (
            '"media tools"',
            "toolset: 'media tools' is no toolset name: a letter, then letters, digits or "
            "'-' (32 at most)",
        ),
        ('"tasks_board"', "toolset: 'tasks_board' is no toolset name"),
    ],
)
def test_a_toolset_that_no_toolset_can_be_named_is_refused_not_kept_in_the_view_for_ever(
    tmp_path: Path, toolset: str, reason: str
) -> None:
    """Such a skill would leave the menu for the view and never be set aside: no set has
    that name."""
    path = write(tmp_path, "SKILL.md", f"---\nname: n\ndescription: d\ntoolset: {toolset}\n---\n")
    with pytest.raises(ValueError) as refused:
        parse_skill_file(path)
    assert str(refused.value).startswith(reason)
    assert SkillEntry(name="n", description="d", content="", toolset=" media ").toolset == "media"


# -- the per-turn view ------------------------------------------------------------------------
class ToolsetAgent(FakeAgent):
    """An ActorToolObserver that also says which toolsets are active."""

    def __init__(self) -> None:
        super().__init__()
        self.active: set[str] = set()

    def active_toolsets(self) -> frozenset[str]:
        return frozenset(self.active)


def linked_card() -> SkillTool:
    return SkillTool(
        skills=Skills(
            skills=[
                SkillEntry(name="refunds", description="How refunds work.", content="r"),
                SkillEntry(
                    name="films",
                    description="Enable media for films.",
                    content="f",
                    toolset="media",
                ),
            ]
        )
    )


def test_a_skill_that_enables_a_toolset_is_in_the_view_not_the_frozen_menu() -> None:
    factory = ToolFactory([linked_card()], observer=ToolsetAgent())
    [menu] = [p() for p in factory.get_system_prompts()]
    assert menu == f"{MENU_HEADER}\nrefunds — How refunds work."
    [provider] = factory.get_context_states()
    view = provider()
    assert view is not None
    assert view.render_full() == f"{VIEW_HEADER}\nfilms — Enable media for films."
    assert "films" in str(factory.get_command_registry().dispatch("/skills"))  # humans see all


def test_the_skill_is_set_aside_while_its_toolset_is_active_and_offered_again_after() -> None:
    agent = ToolsetAgent()
    factory = ToolFactory([linked_card()], observer=agent)
    updater = ContextUpdater(agent, factory.get_context_states())
    history: list[str] = []

    def turn() -> str | None:
        block = updater.compose_update(history)
        if block:
            history.append(block)
        return block

    first = turn()
    assert first is not None and "films — Enable media for films." in first
    assert turn() is None  # nothing changed
    agent.active.add("media")
    second = turn()
    assert second is not None
    assert (
        "Skills set aside, their toolset's tools are in your list: films (media is active)."
        in second
    )
    assert "films —" not in second
    agent.active.clear()
    third = turn()
    assert third is not None and "Skills offered again:\nfilms — Enable media for films." in third


def test_without_the_view_channel_the_linked_skill_stays_in_the_menu() -> None:
    from akgentic.tool.core import COMMAND, SYSTEM_PROMPT, TOOL_CALL

    card = linked_card()
    assert isinstance(card.skills, Skills)
    card.skills.expose = {SYSTEM_PROMPT, TOOL_CALL, COMMAND}
    factory = ToolFactory([card], observer=ToolsetAgent())
    [menu] = [p() for p in factory.get_system_prompts()]
    assert "films — Enable media for films." in menu
    assert factory.get_context_states() == []


def test_an_observer_without_toolsets_offers_every_linked_skill() -> None:
    factory = ToolFactory([linked_card()], observer=FakeAgent())
    [provider] = factory.get_context_states()
    view = provider()
    assert view is not None and "films" in view.render_full()


def test_the_view_is_unavailable_never_raised_when_the_active_toolsets_cannot_be_read() -> None:
    class Broken(ToolsetAgent):
        def active_toolsets(self) -> frozenset[str]:
            raise RuntimeError("conversation gone")

    factory = ToolFactory([linked_card()], observer=(agent := Broken()))
    [provider] = factory.get_context_states()
    assert provider() is None  # a provider returns None, never raises
    updater = ContextUpdater(agent, factory.get_context_states())
    assert updater.compose_update([]) is None
    assert updater.last_failures == []  # not a provider bug: an unavailable state
