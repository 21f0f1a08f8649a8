"""Teams: cards from YAML, create / converse / stop / resume / delete, following events."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelMessagesTypeAdapter

from akgentic.agent import AgentMessage, BaseAgent
from akgentic.core import ActorSystem, AddressError, EventMessage, SentMessage
from akgentic.storage import TeamStatus, open_storage, sqlite_url
from akgentic.team import TeamCard, TeamCardError, TeamManager, TeamRuntime, replay_tool_states
from akgentic.tool.core import ToolStateEvent

from ..core.conftest import eventually

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "teams" / "research.yaml"


def final_answer(runtime: TeamRuntime) -> str:
    for record in runtime.follow(1, idle_timeout=60):
        msg = record.message
        if (
            isinstance(msg, SentMessage)
            and isinstance(msg.message, AgentMessage)
            and msg.message.type == "response"
            and msg.recipient is not None
            and msg.recipient.name == "@Human"
        ):
            return msg.message.content
    raise AssertionError("no answer reached @Human")


def test_the_example_card_loads_with_its_tree() -> None:
    card = TeamCard.from_yaml(EXAMPLE)
    assert card.entry_point == "@Manager"
    assert card.members[0].members[0].card.config.name == "@Worker"
    assert [p.role for p in card.profiles] == ["Reviewer"]
    assert card.members[0].card.config.scenario_dir == str(EXAMPLE.parent)  # type: ignore[attr-defined]


def test_a_yaml_error_names_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "name: t\n"
        "entry_point: '@A'\n"
        "members:\n"
        "  - card:\n"
        "      role: A\n"
        "      config:\n"
        "        name: '@A'\n"
        "        promt: {template: x}\n"
    )
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(bad)
    text = str(info.value)
    assert f"{bad}:8:" in text and "members[0].card.config.promt" in text
    assert "Extra inputs are not permitted" in text


def test_yaml_syntax_and_entry_point_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(broken)
    assert str(caught.value) == (
        f"{broken}:2: not valid YAML: expected ',' or ']', but got '<stream end>' at line 2, "
        "column 1 (while parsing a flow sequence at line 1, column 7)"
    )
    lost = tmp_path / "lost.yaml"
    lost.write_text(
        "name: t\nentry_point: '@B'\nmembers:\n  - card: {role: A, config: {name: '@A'}}\n"
    )
    with pytest.raises(TeamCardError, match="entry_point '@B' is not a member; members are @A"):
        TeamCard.from_yaml(lost)
    with pytest.raises(TeamCardError, match="cannot read"):
        TeamCard.from_yaml(tmp_path / "missing.yaml")


def test_headcount_names_the_copies(tmp_path: Path) -> None:
    card_file = tmp_path / "crew.yaml"
    card_file.write_text(
        "name: crew\nentry_point: '@Lead'\nhuman: null\nmembers:\n"
        "  - card: {role: Lead, config: {name: '@Lead'}}\n"
        "    members:\n      - card: {role: Hand, config: {name: '@Hand'}}\n        headcount: 3\n"
    )
    from akgentic.team.card import member_names

    assert member_names(TeamCard.from_yaml(card_file).members) == [
        "@Lead",
        "@Hand-1",
        "@Hand-2",
        "@Hand-3",
    ]


def test_create_converse_stop_and_resume_with_identical_state(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    team_id = runtime.team_id
    runtime.send("why actors?")
    assert final_answer(runtime).startswith("Here is what @Worker found:")
    manager_addr = runtime.member("@Manager")
    assert manager_addr is not None
    before_history = system.proxy_ask(manager_addr, BaseAgent, timeout=30).get_history()
    before_states = {k: v.state for k, v in storage.states.load_states(team_id).items()}
    manager.stop_team(team_id)
    assert storage.teams.get(team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
    assert manager.get_team(team_id) is None

    resumed = manager.resume_team(team_id)
    assert storage.teams.get(team_id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    names = sorted(a.name for a in resumed.members())
    assert names == ["@Human", "@Manager", "@Worker"]
    after_addr = resumed.member("@Manager")
    assert after_addr is not None and after_addr.agent_id == manager_addr.agent_id
    after_history = system.proxy_ask(after_addr, BaseAgent, timeout=30).get_history()
    dump = ModelMessagesTypeAdapter.dump_python
    assert dump(after_history, mode="json") == dump(before_history, mode="json")
    assert len(after_history) >= 2
    for agent_id, state in before_states.items():
        actor = system.get_actor(resumed.system.get_address(agent_id))  # type: ignore[arg-type]
        assert actor.state == state
    assert resumed.interrupted == []


def test_follow_has_no_gap_and_no_duplicate_across_the_live_boundary(
    storage_url: str, system: ActorSystem
) -> None:
    manager = TeamManager(system, open_storage(storage_url))
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    runtime.send("first")
    final_answer(runtime)
    seen: list[int] = []
    started = threading.Event()
    done = threading.Event()

    def follower() -> None:
        for record in runtime.follow(3, stop=done):
            seen.append(record.seq)
            started.set()

    thread = threading.Thread(target=follower)
    thread.start()
    assert started.wait(30)
    runtime.send("second")  # live events, while the follower is past the backfill
    answered = 0
    for record in runtime.follow(1, idle_timeout=60):  # until the second answer is logged
        msg = record.message
        if (
            isinstance(msg, SentMessage)
            and isinstance(msg.message, AgentMessage)
            and msg.message.type == "response"
            and msg.recipient is not None
            and msg.recipient.name == "@Human"
        ):
            answered += 1
            if answered == 2:
                break
    assert answered == 2
    last = runtime.recorder.last_seq
    runtime.recorder.wait_seq(last, 10)
    done.set()
    thread.join(30)
    assert not thread.is_alive()
    assert seen == list(range(3, seen[-1] + 1)) and seen[-1] >= last - 1


def test_list_delete_and_purge(storage_url: str, system: ActorSystem) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    first = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    second = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    assert {t.team_id for t in manager.list_teams(TeamStatus.RUNNING)} >= {
        first.team_id,
        second.team_id,
    }
    manager.delete_team(first.team_id)
    assert storage.teams.get(first.team_id).status == TeamStatus.DELETED  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="deleted"):
        manager.resume_team(first.team_id)
    manager.delete_team(second.team_id, purge=True)
    assert storage.teams.get(second.team_id) is None
    assert storage.events.read(second.team_id) == []
    with pytest.raises(LookupError, match="no team"):
        manager.delete_team(second.team_id)


def test_a_missing_api_key_fails_at_team_creation(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    manager = TeamManager(system, open_storage(storage_url))
    with pytest.raises(ValueError, match="@Manager: .*OPENAI_API_KEY"):
        manager.create_team(TeamCard.from_yaml(EXAMPLE), model="openai:gpt-5.2")
    assert manager.list_teams() == []


def test_replay_detects_gaps_and_folds_deltas() -> None:
    from akgentic.core.serialization import SerializableModel

    class Added(SerializableModel):
        items: list[str]

    def reducer(state: list[str] | None, event: ToolStateEvent) -> list[str]:
        assert isinstance(event.payload, Added)
        return [*(state or []), *event.payload.items]

    log = [
        EventMessage(event=ToolStateEvent(tool_id="#List", seq=1, payload=Added(items=["a"]))),
        EventMessage(event=ToolStateEvent(tool_id="#List", seq=2, payload=Added(items=["b"]))),
        EventMessage(event=ToolStateEvent(tool_id="#List", seq=4, payload=Added(items=["d"]))),
        EventMessage(event=ToolStateEvent(tool_id="#Other", seq=1, payload=Added(items=["x"]))),
    ]
    result = replay_tool_states(log, {"#List": reducer})
    assert result.states == {"#List": ["a", "b", "d"]}
    assert [(g.tool_id, g.expected, g.got, g.at_seq) for g in result.gaps] == [("#List", 3, 4, 3)]
    assert result.unknown_tools == {"#Other"}


def test_a_failing_store_delays_records_and_loses_none(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    real = storage.events.append_packs  # what the recorder commits its batches with
    failures = {"left": 1}

    def flaky(
        team_id: object, packs: list[bytes], states: object = (), fence: object = None
    ) -> list[int]:
        if failures["left"]:
            failures["left"] -= 1
            raise OSError("disk full (simulated)")
        return real(team_id, packs, states, fence=fence)  # type: ignore[arg-type]

    monkeypatch.setattr(storage.events, "append_packs", flaky)
    runtime.send("why actors?")  # its first batch fails, and is committed with the next
    assert final_answer(runtime).startswith("Here is what @Worker found:")
    seqs = [r.seq for r in storage.events.read(runtime.team_id)]
    assert seqs == list(range(1, len(seqs) + 1)) and failures["left"] == 0
    sent = [r.message for r in storage.events.read(runtime.team_id)]
    assert any(
        isinstance(m, SentMessage) and getattr(m.message, "content", "") == "why actors?"
        for m in sent
    )


def test_message_types_must_exist(tmp_path: Path) -> None:
    card_file = tmp_path / "typed.yaml"
    base = "name: t\nentry_point: '@A'\nmembers:\n  - card: {role: A, config: {name: '@A'}}\n"
    card_file.write_text(base + "message_types: [akgentic.agent.messages.AgentMessage]\n")
    assert TeamCard.from_yaml(card_file).message_types == ["akgentic.agent.messages.AgentMessage"]
    card_file.write_text(base + "message_types: [nowhere.Message]\n")
    with pytest.raises(TeamCardError, match=r"typed\.yaml:5: message_types.*not defined"):
        TeamCard.from_yaml(card_file)


def test_imports_are_honoured_from_yaml_and_never_from_stored_data(tmp_path: Path) -> None:
    import sys

    from akgentic.core import serialize
    from akgentic.core.serialization import deserialize

    card_file = tmp_path / "imports.yaml"
    card_file.write_text(
        "name: t\nentry_point: '@A'\nimports: [no_such_module_here]\n"
        "members:\n  - card: {role: A, config: {name: '@A'}}\n"
    )
    with pytest.raises(TeamCardError, match=r"imports\.yaml:3: imports\[0\]: cannot import"):
        TeamCard.from_yaml(card_file)
    card = TeamCard.from_yaml(EXAMPLE)
    stored = serialize(card)
    stored["imports"] = ["antigravity"]  # importing it would open a browser
    assert "antigravity" not in sys.modules
    assert deserialize(stored).imports == ["antigravity"]
    assert "antigravity" not in sys.modules


class Engagement(BaseModel):
    fiscal_year: int
    client: str


def test_team_metadata_reaches_the_prompts_and_survives_a_resume(
    storage_url: str, system: ActorSystem
) -> None:
    from akgentic.agent import AgentConfig
    from akgentic.core import AgentCard, Orchestrator
    from akgentic.team import MemberSpec
    from akgentic.tool.metadata import MetadataTool, RenderMetadata

    card = TeamCard(
        name="meta",
        entry_point="@Clerk",
        members=[
            MemberSpec(
                card=AgentCard(
                    role="Clerk",
                    agent_class=BaseAgent,
                    config=AgentConfig(
                        name="@Clerk",
                        role="Clerk",
                        tools=[
                            MetadataTool(
                                render_metadata=RenderMetadata(
                                    header="Team context",
                                    template="Fiscal year {fiscal_year} for {client}.",
                                )
                            )
                        ],
                    ),
                )
            )
        ],
    )
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(card, metadata=Engagement(fiscal_year=2026, client="Acme"))
    clerk = runtime.member("@Clerk")
    assert clerk is not None
    prompt = system.proxy_ask(clerk, BaseAgent, timeout=30).get_system_prompt()
    assert "Fiscal year 2026 for Acme." in prompt
    manager.stop_team(runtime.team_id)
    resumed = manager.resume_team(runtime.team_id)
    orchestrator = system.proxy_ask(resumed.orchestrator, Orchestrator, timeout=30)
    assert orchestrator.get_metadata() == Engagement(fiscal_year=2026, client="Acme")
    again = resumed.member("@Clerk")
    assert again is not None
    assert (
        "Fiscal year 2026 for Acme."
        in system.proxy_ask(again, BaseAgent, timeout=30).get_system_prompt()
    )


def test_a_stop_asked_by_another_process_is_obeyed(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "shared.db")
    here, there = ActorSystem(), ActorSystem()
    try:
        runner = TeamManager(here, open_storage(url), watch_interval=0.05)
        runtime = runner.create_team(TeamCard.from_yaml(EXAMPLE))
        other = TeamManager(there, open_storage(url))  # stands for another process
        assert other.get_team(runtime.team_id) is None
        other.stop_team(runtime.team_id)  # only marks the shared record
        assert here.wait_stopped(runtime.orchestrator, 15)  # the runner obeyed
        assert runner.record(runtime.team_id).status == TeamStatus.STOPPED
    finally:
        here.shutdown(10)
        there.shutdown(10)


ANALYST = EXAMPLE.parent / "analyst.yaml"


def test_the_person_writes_to_members_only_and_is_told_whom_to_address(
    storage_url: str, system: ActorSystem
) -> None:
    """A ``#`` tool actor does not converse (a ``/command`` sent to it went unanswered) and
    the person cannot write to itself: both are refused, naming the members, and nothing
    is sent; a name nobody has lists the members, not the tool actors."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(ANALYST))
    eventually(lambda: runtime.member("#PlanningTool") is not None)
    last = storage.events.last_seq(runtime.team_id)

    with pytest.raises(AddressError) as tool:
        runtime.send_to("#PlanningTool", "/planning")
    assert str(tool.value) == (
        "#PlanningTool is a tool actor, not a member: send its /commands to a member that "
        "uses it (/help lists a member's commands; members: @Analyst)"
    )
    with pytest.raises(AddressError) as person:
        runtime.send_to("@Human", "hi")
    assert (
        str(person.value) == "@Human is the person writing, not a member: address one of @Analyst"
    )
    with pytest.raises(AddressError) as nobody:
        runtime.send_to("@Nobody", "hi")
    assert str(nobody.value) == "@Nobody is not a member of this team (members: @Analyst)"
    assert not any(
        isinstance(r.message, SentMessage) and r.seq > last
        for r in storage.events.read(runtime.team_id)
    )
    manager.stop_team(runtime.team_id)


def test_a_teams_entry_point_cannot_be_fired_by_another_member_nor_after_a_resume(
    storage_url: str, system: ActorSystem
) -> None:
    """@Clerk (the entry point) and @Peer both start with the team: @Peer's fire_member
    refuses @Clerk, as its answer marked failed says; the orchestrator knows the card's
    entry point, on a resume too."""
    from akgentic.agent import AgentConfig
    from akgentic.core import AgentCard, Orchestrator
    from akgentic.team import MemberSpec

    def root(name: str) -> MemberSpec:
        config = AgentConfig(name=name, role=name[1:])
        return MemberSpec(card=AgentCard(role=name[1:], agent_class=BaseAgent, config=config))

    card = TeamCard(name="desk", entry_point="@Clerk", members=[root("@Clerk"), root("@Peer")])
    manager = TeamManager(system, open_storage(storage_url))
    runtime = manager.create_team(card)
    command = runtime.send_to("@Peer", "/fire_member @Clerk")
    for record in runtime.follow(1, idle_timeout=60):
        sent = record.message
        if isinstance(sent, SentMessage) and sent.message.parent_id == command:
            break
    else:
        raise AssertionError("@Peer did not answer the command")
    reply = sent.message
    assert isinstance(reply, AgentMessage) and reply.failed
    assert reply.content.startswith("@Clerk is the team's entry point, the member the person ")
    assert runtime.member("@Clerk") is not None
    manager.stop_team(runtime.team_id)
    resumed = manager.resume_team(runtime.team_id)
    orchestrator = system.proxy_ask(resumed.orchestrator, Orchestrator, timeout=30)
    assert orchestrator.get_entry_point() == "@Clerk"


def test_an_interrupt_while_the_stop_writes_the_last_records_asks_nothing_of_the_team(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses the log's writes as the team stops: while the stop tries to
    write its last records (its members stopped, its orchestrator busy with them until
    the tries end), cancelling the turns — a Ctrl-C then — cancels nothing and asks the
    orchestrator nothing (it would answer only once the tries are over: the Ctrl-C was
    said 50 s late). The store taking writes again, the stop ends as usual."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    runtime.send("why actors?")
    final_answer(runtime)
    down = threading.Event()
    down.set()
    for name in ("append_packs", "append_encoded"):
        real = getattr(storage.events, name)

        def refusing(*args: object, _real: Callable[..., list[int]] = real, **kw: object) -> Any:
            if down.is_set():
                raise OSError("database or disk is full (simulated)")
            return _real(*args, **kw)

        monkeypatch.setattr(storage.events, name, refusing)
    stop = threading.Thread(target=manager.stop_team, args=(runtime.team_id,))
    stop.start()
    eventually(lambda: runtime.recorder.closing)

    def asked() -> list[object]:
        raise AssertionError("the orchestrator was asked for its members")

    monkeypatch.setattr(runtime, "members", asked)
    assert runtime.cancel_turns() == []
    down.clear()
    stop.join(60)
    assert not stop.is_alive()
    assert storage.teams.get(runtime.team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
