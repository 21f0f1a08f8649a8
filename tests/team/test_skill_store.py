"""The storage bundle's skill store reaches the team's SkillTool cards — members, profiles and
the cards grouped in a ToolsetCard — when a team is created, and again when it is resumed,
in another process, from the store (not from the log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.core import ActorSystem, AgentCard, Orchestrator
from akgentic.server import load_skills_into
from akgentic.storage import SkillRecord, open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager
from akgentic.tool.skill import SKILLS_DIR_ENV, Skills, SkillsSkippedEvent, SkillTool
from akgentic.tool.toolsets import ToolsetCard


def card() -> TeamCard:
    def config(name: str, tools: list[object]) -> AgentConfig:
        return AgentConfig(name=name, role="Clerk", tools=tools)

    return TeamCard(
        name="skills",
        entry_point="@Clerk",
        members=[
            MemberSpec(
                card=AgentCard(
                    role="Clerk", agent_class=BaseAgent, config=config("@Clerk", [SkillTool()])
                )
            ),
            MemberSpec(
                card=AgentCard(
                    role="Aside",
                    agent_class=BaseAgent,
                    config=config(
                        "@Aside",
                        [ToolsetCard(name="docs", description="Docs", cards=[SkillTool()])],
                    ),
                )
            ),
        ],
        profiles=[
            AgentCard(
                role="Off",
                agent_class=BaseAgent,
                config=config("@Off", [SkillTool(skills=Skills(store=False))]),
            ),
            AgentCard(role="Temp", agent_class=BaseAgent, config=config("@Temp", [SkillTool()])),
        ],
    )


def prompt(system: ActorSystem, runtime: object, name: str) -> str:
    member = runtime.member(name)  # type: ignore[attr-defined]
    assert member is not None
    text: str = system.proxy_ask(member, BaseAgent, timeout=30).get_system_prompt()
    return text


def test_store_skills_reach_members_profiles_and_grouped_cards(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    storage.skills.upsert(
        SkillRecord(name="house-style", description="How we write.", content="Short.")
    )
    manager = TeamManager(system, storage)
    runtime = manager.create_team(card())
    assert "house-style — How we write." in prompt(system, runtime, "@Clerk")
    assert "house-style — How we write." in prompt(system, runtime, "@Aside")  # grouped card
    orchestrator = system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    off = orchestrator.get_agent_profile("Off")
    assert off is not None and off.config.tools[0].skills.stored == []  # type: ignore[attr-defined]
    temp = orchestrator.get_agent_profile("Temp")
    assert temp is not None
    [skill_card] = temp.config.tools  # type: ignore[attr-defined]
    assert [row.name for row in skill_card.skills.stored] == ["house-style"]
    manager.stop_team(runtime.team_id)
    storage.close()


def test_a_stored_skills_toolset_reaches_the_cards_and_keeps_it_out_of_the_frozen_menu(
    storage_url: str, system: ActorSystem, tmp_path: Path
) -> None:
    """``--skills-dir`` stores a skill's toolset; the team hands it to the cards with the
    row, so the skill is in the per-turn view (set aside while its toolset is active),
    not in the frozen menu — as when the card reads the folder itself."""
    folder = tmp_path / "skills"
    (folder / "plan-work").mkdir(parents=True)
    (folder / "plan-work" / "SKILL.md").write_text(
        "---\nname: plan-work\ndescription: Plan work.\ntoolset: docs\n---\nSteps.\n"
    )
    storage = open_storage(storage_url)
    assert load_skills_into(storage, folder) == []
    stored = storage.skills.get("plan-work")
    assert stored is not None and stored.toolset == "docs"
    storage.skills.upsert(SkillRecord(name="house-style", description="How.", content="B"))
    manager = TeamManager(system, storage)
    runtime = manager.create_team(card())
    text = prompt(system, runtime, "@Clerk")
    assert "house-style — How." in text and "plan-work" not in text
    orchestrator = system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    temp = orchestrator.get_agent_profile("Temp")
    assert temp is not None
    [skill_card] = temp.config.tools  # type: ignore[attr-defined]
    assert [(r.name, r.toolset) for r in skill_card.skills.stored] == [
        ("house-style", None),
        ("plan-work", "docs"),
    ]
    manager.stop_team(runtime.team_id)
    storage.close()


def test_a_resumed_team_reads_the_store_again_in_another_process(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    storage.skills.upsert(SkillRecord(name="old", description="Old rule.", content="o"))
    manager = TeamManager(system, storage)
    runtime = manager.create_team(card())
    team_id = runtime.team_id
    manager.stop_team(team_id)
    storage.skills.remove("old")
    storage.skills.upsert(SkillRecord(name="new", description="New rule.", content="n"))
    storage.close()

    elsewhere = ActorSystem()  # another process: a system and a manager of its own
    try:
        again = open_storage(storage_url)
        resumed = TeamManager(elsewhere, again).resume_team(team_id)
        text = prompt(elsewhere, resumed, "@Clerk")
        assert "new — New rule." in text and "old — Old rule." not in text
        resumed.stop()
        again.close()
    finally:
        elsewhere.shutdown(timeout=10)


def test_skills_served_from_the_folder_the_variable_names_are_not_reported_as_duplicates(
    storage_url: str, system: ActorSystem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``AKGENTIC_SKILLS_DIR=F akgentic serve`` stores F's skills (it is ``--skills-dir``'s
    variable) and every ``SkillTool()`` reads F too: one skill each, nothing to rename."""
    folder = tmp_path / "skills"
    (folder / "plan-work").mkdir(parents=True)
    (folder / "plan-work" / "SKILL.md").write_text(
        "---\nname: plan-work\ndescription: Plan work.\ntoolset: docs\n---\nSteps.\n"
    )
    (folder / "house-style.yaml").write_text("name: house-style\ndescription: How.\nbody: B\n")
    storage = open_storage(storage_url)
    assert load_skills_into(storage, folder) == []
    monkeypatch.setenv(SKILLS_DIR_ENV, str(folder))
    manager = TeamManager(system, storage)
    runtime = manager.create_team(card())
    assert "house-style — How." in prompt(system, runtime, "@Clerk")
    manager.stop_team(runtime.team_id)
    skipped = [
        r.message.event.errors  # type: ignore[union-attr]
        for r in storage.events.read(runtime.team_id)
        if isinstance(getattr(r.message, "event", None), SkillsSkippedEvent)
    ]
    assert skipped == []
    storage.close()


def test_skills_are_loaded_into_the_store_from_several_folders_the_first_of_a_name_kept(
    tmp_path: Path,
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, description in [(one, "First."), (two, "Second.")]:
        folder.mkdir()
        (folder / "tidy.yaml").write_text(f"name: tidy\ndescription: {description}\n")
    (two / "neat.yaml").write_text("name: neat\ndescription: Neat.\n")
    storage = open_storage("memory://")
    assert load_skills_into(storage, [one, two]) == [
        f"skill skipped: {two}: skill 'tidy' is in {one} too; kept that one (its folder "
        "comes first) — rename one of them"
    ]
    assert [(s.name, s.description, s.source) for s in storage.skills.list()] == [
        ("neat", "Neat.", str(two)),
        ("tidy", "First.", str(one)),
    ]
    assert load_skills_into(storage, one) == []  # one folder, as before
    storage.close()
