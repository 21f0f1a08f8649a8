"""A broken team card is refused when it is loaded, with one error naming the file, the
line, the member and the field — never at start-up, never a raw exception."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError, model_validator

from akgentic.agent import AgentConfig, PromptTemplate
from akgentic.core import ActorSystem, AgentCard, Akgent, BaseConfig, BaseState
from akgentic.storage import open_storage
from akgentic.team import MemberSpec, TeamCard, TeamCardError, TeamManager
from akgentic.tool import ToolCard
from tests.hostile_yaml import alias_bomb

HEAD = "name: t\nentry_point: '@A'\nhuman: null\nmembers:\n"


def card_file(tmp_path: Path, text: str, name: str = "team.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def line_of(path: Path, needle: str) -> int:
    return next(n for n, row in enumerate(path.read_text().splitlines(), 1) if needle in row)


def test_a_file_that_is_not_utf8_names_the_file_and_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(
        HEAD.encode()
        + "  - card: {role: A, config: {name: '@A', description: 'café'}}\n".encode("latin-1")
    )
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    assert message.startswith(f"{path}:5: not UTF-8 text (byte 0xe9 at offset ")
    assert "save the card as UTF-8" in message


@pytest.mark.parametrize("headcount", [101, 100_000_000])
def test_headcount_is_bounded(tmp_path: Path, headcount: int) -> None:
    path = card_file(
        tmp_path,
        HEAD + f"  - card: {{role: A, config: {{name: '@A'}}}}\n    headcount: {headcount}\n",
    )
    with pytest.raises(TeamCardError, match=r"team\.yaml:6: members\[0\]\.headcount: .*100"):
        TeamCard.from_yaml(path)


def test_the_whole_team_is_bounded(tmp_path: Path) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card: {role: A, config: {name: '@A'}}\n"
        + "    members:\n"
        + "      - card: {role: B, config: {name: '@B'}}\n"
        + "        headcount: 100\n"
        + "        members:\n"
        + "          - card: {role: C, config: {name: '@C'}}\n"
        + "            headcount: 100\n",
    )
    with pytest.raises(TeamCardError, match=r"10101 members; a team has at most 1000"):
        TeamCard.from_yaml(path)


@pytest.mark.parametrize(
    ("template", "complaint"),
    [
        ("Hi {unclosed", r"not a valid template .*expected '\}' before end of string"),
        ("Hi {nope}", r"placeholder \{nope\} has no value.*known: name, role"),
        ("Hi {name.__class__}", r"placeholder \{name.__class__\} must be a bare name"),
        ("Hi {0}", r"placeholder \{0\} must be a bare name"),
        ("Hi }", r"not a valid template"),
    ],
)
def test_prompt_templates_are_checked_when_the_card_is_loaded(
    tmp_path: Path, template: str, complaint: str
) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      config:\n        name: '@A'\n"
        + f"        prompt: {{template: {template!r}}}\n",
    )
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    at = line_of(path, "name: '@A'")  # the config's first line
    assert message.startswith(f"{path}:{at}: members[0].card.config: ")
    assert "@A: prompt.template: " in message
    assert re.search(complaint, message), message


def test_prompt_params_fill_placeholders_and_python_cards_are_checked_too() -> None:
    ok = AgentConfig(
        name="@A", prompt=PromptTemplate(template="{name} on {topic}", params={"topic": "x"})
    )
    assert ok.prompt.render(name="@A", role="") == "@A on x"
    with pytest.raises(ValidationError, match=r"@B: prompt.template: placeholder \{topic\}"):
        AgentConfig(name="@B", prompt=PromptTemplate(template="{name} on {topic}"))


def test_a_prompt_written_as_text_is_its_template_and_is_checked(tmp_path: Path) -> None:
    assert AgentConfig(name="@A", prompt="You are {name}.").prompt == PromptTemplate(
        template="You are {name}."
    )
    path = card_file(
        tmp_path,
        HEAD + "  - card: {role: A, config: {name: '@A', prompt: 'You are {name} on {topic}.'}}\n",
    )
    with pytest.raises(TeamCardError, match=r"@A: prompt.template: placeholder \{topic\}"):
        TeamCard.from_yaml(path)
    path.write_text(HEAD + "  - card: {role: A, config: {name: '@A', prompt: 'You are {name}.'}}\n")
    (member,) = TeamCard.from_yaml(path).members
    assert member.card.config.prompt.render(name="@A", role="A") == "You are @A."


def test_a_nonexistent_agent_class_is_named(tmp_path: Path) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      agent_class: nowhere.Agent\n"
        + "      config: {name: '@A', models: 'scripted:default', prompt: {template: hi}}\n",
    )
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    assert message.startswith(f"{path}:7: members[0].card.agent_class: ")
    assert "agent_class 'nowhere.Agent'" in message and "imports" in message
    assert "Extra inputs" not in message


@pytest.mark.parametrize(
    "named", ["collections.OrderedDict", "os.system", "akgentic.core.ActorSystem"]
)
def test_an_agent_class_that_is_defined_but_no_actor_says_so(tmp_path: Path, named: str) -> None:
    """Defined in this process, and not an Akgent class: importing it would not help."""
    path = card_file(
        tmp_path,
        HEAD
        + f"  - card:\n      role: A\n      agent_class: {named}\n"
        + "      config: {name: '@A', models: 'scripted:default', prompt: {template: hi}}\n",
    )
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    assert message.endswith(
        f"agent_class '{named}' is not an Akgent class: name a subclass of akgentic.core.Akgent "
        f"(in a team card, akgentic.agent.agent.BaseAgent by default)"
    )


def test_a_member_without_config_starts_on_its_agent_classs_defaults(tmp_path: Path) -> None:
    """``card: {role: A}`` read as a plain ``BaseConfig``, which ``BaseAgent`` refused only
    as the member started (``TypeError: BaseAgent is configured by AgentConfig``), a
    stored team left behind; it is the class's defaults, as ``config: {}`` is. A card
    naming a class defined later still waits for it."""
    path = card_file(tmp_path, HEAD + "  - card: {role: A}\nprofiles:\n  - role: B\n")

    card = TeamCard.from_yaml(path)

    assert type(card.members[0].card.config) is AgentConfig
    assert type(card.profiles[0].config) is AgentConfig
    assert type(AgentCard(role="L", agent_class="nowhere.Later").config) is BaseConfig
    system = ActorSystem()
    manager = TeamManager(system, open_storage("memory://"))
    try:
        runtime = manager.create_team(card)
        assert [a.name for a in runtime.members() if a.name == "@A"] == ["@A"]
    finally:
        manager.shutdown()


def test_a_profile_naming_a_nonexistent_class_is_refused(tmp_path: Path) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card: {role: A, config: {name: '@A'}}\n"
        + "profiles:\n  - role: Ghost\n    agent_class: nowhere.Ghost\n",
    )
    with pytest.raises(
        TeamCardError, match=r":8: profiles\[0\]\.agent_class: agent_class 'nowhere"
    ):
        TeamCard.from_yaml(path)
    ghost = AgentCard(role="Ghost", agent_class="nowhere.Ghost")  # a card alone may wait
    a = MemberSpec(
        card=AgentCard(
            role="A", agent_class="akgentic.agent.agent.BaseAgent", config=AgentConfig(name="@A")
        )
    )
    with pytest.raises(ValidationError, match=r"profile Ghost: agent_class 'nowhere.Ghost'"):
        TeamCard(name="t", entry_point="@A", members=[a], profiles=[ghost])
    with pytest.raises(ValidationError, match=r"member @G: agent_class 'nowhere.Ghost'"):
        TeamCard(
            name="t",
            entry_point="@A",
            members=[
                a,
                MemberSpec(card=ghost.model_copy(update={"config": AgentConfig(name="@G")})),
            ],
        )


def test_two_members_with_one_name_are_refused(tmp_path: Path) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card: {role: A, config: {name: '@A'}}\n"
        + "    members:\n      - card: {role: B, config: {name: '@A'}}\n",
    )
    with pytest.raises(TeamCardError, match=r"two members are named @A") as raised:
        TeamCard.from_yaml(path)
    second = 3 + HEAD.count("\n")  # said where the second @A is written, not at line 1
    assert str(raised.value).startswith(
        f"{path}:{second}: members[0].members[0].card.config.name: two members are named @A"
    )
    copies = card_file(
        tmp_path,
        HEAD
        + "  - card: {role: A, config: {name: '@A'}}\n"
        + "  - card: {role: W, config: {name: '@W'}}\n    headcount: 2\n"
        + "  - card: {role: X, config: {name: '@W-2'}}\n",
        "copies.yaml",
    )
    with pytest.raises(TeamCardError, match=r"two members are named @W-2") as raised:
        TeamCard.from_yaml(copies)
    assert f"{copies}:{4 + HEAD.count(chr(10))}: members[2].card.config.name: " in str(raised.value)
    human = card_file(
        tmp_path,
        HEAD.replace("human: null", "human: '@A'") + "  - card: {role: A, config: {name: '@A'}}\n",
        "human.yaml",
    )
    with pytest.raises(TeamCardError, match=r"human '@A' is also a member"):
        TeamCard.from_yaml(human)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1" * 5000, "an integer of 5,000 digits, more than the 4,300 Python reads"),
        ("2001-13-45", "'2001-13-45' is not a valid timestamp (month must be in 1..12)"),
        ('"\\U00110000"', "this escape names no character"),
        ("a\x00b", "character #x0000 is not allowed in YAML"),
    ],
)
def test_a_value_python_cannot_read_names_the_file_and_the_line(
    tmp_path: Path, value: str, says: str
) -> None:
    path = card_file(
        tmp_path, HEAD + "  - card: {role: A, config: {name: '@A'}}\n" + f"x: {value}\n"
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"{path}:6: not valid YAML: {says}")
    assert "at line 6, column " in line


def test_a_card_of_aliases_in_aliases_is_refused_at_once(tmp_path: Path) -> None:
    path = card_file(tmp_path, HEAD + "  - card: {role: A, config: {name: '@A'}}\n" + alias_bomb())
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"{path}: the data expands to more than 1,000,000 values")


def test_a_card_holding_itself_is_refused(tmp_path: Path) -> None:
    path = card_file(
        tmp_path, HEAD + "  - &m {card: {role: A, config: {name: '@A'}}, members: [*m]}\n"
    )
    with pytest.raises(TeamCardError, match=r"team\.yaml: the data contains itself"):
        TeamCard.from_yaml(path)


def test_a_card_nested_too_deep_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    member = "{card: {role: W, config: {name: '@W0'}}}"
    for level in range(1, 300):
        member = f"{{card: {{role: W, config: {{name: '@W{level}'}}}}, members: [{member}]}}"
    path = card_file(tmp_path, HEAD.replace("'@A'", "'@W299'") + f"  - {member}\n")
    with pytest.raises(TeamCardError, match=r"team\.yaml: .*nested deeper than 100 levels"):
        TeamCard.from_yaml(path)


def test_a_check_of_the_whole_card_reads_as_a_sentence(tmp_path: Path) -> None:
    path = card_file(
        tmp_path, HEAD.replace("'@A'", "'@Nobody'") + "  - card: {role: A, config: {name: '@A'}}\n"
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == f"{path}:1: entry_point '@Nobody' is not a member; members are @A"


def test_a_card_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = card_file(tmp_path, HEAD + "description: ")
    with path.open("r+b") as file:
        file.truncate(50 * 1024 * 1024)  # a 50 MiB description (sparse: written in no time)
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"{path}: 52,428,800 bytes (50.0 MiB), over akgentic's 4 MiB limit")
    assert line.endswith("make it smaller (keep long text out of it) or split it")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_given_as_a_card_is_refused_unread(device: str) -> None:
    """A device says its size is 0: ``/dev/zero`` given as a card would fill the memory,
    ``/dev/tty`` wait for a line; it is refused from its status, before it is opened."""
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(device)
    assert str(refused.value) == (
        f"{device}: cannot read the team card: a character device, not a file: name the "
        f"YAML file itself"
    )


def test_a_fifo_given_as_a_card_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Opened as a file is, a FIFO waits for a writer, deaf to Ctrl-C."""
    fifo = tmp_path / "team.yaml"
    os.mkfifo(fifo)
    said: list[str] = []

    def read() -> None:
        try:
            TeamCard.from_yaml(fifo)
        except TeamCardError as exc:
            said.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # waiting for a writer: give it one, so the test ends (and fails)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(30)
    assert said == [
        f"{fifo}: cannot read the team card: a FIFO, not a file: name the YAML file itself"
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (HEAD.replace("'@A'", "A") + "  - card: {role: A, config: {name: '@A'}}\n", "entry_point"),
        (HEAD.replace("null", "Human") + "  - card: {role: A, config: {name: '@A'}}\n", "human"),
        (HEAD + "  - card: {role: A, config: {name: A}}\n", "members[0].card"),
        (
            HEAD
            + "  - card: {role: A, config: {name: '@A'}}\n"
            + "profiles:\n  - {role: B, config: {name: A}}\n",
            "profiles",
        ),
    ],
    ids=["entry_point", "human", "member", "profile"],
)
def test_a_member_name_without_at_is_refused_saying_how_to_write_it(
    tmp_path: Path, text: str, field: str
) -> None:
    """The team addresses its members as @Name: a name without it would never be reached."""
    path = card_file(tmp_path, text)
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    (line,) = str(refused.value).splitlines()
    assert re.fullmatch(
        rf"{path}:\d+: {re.escape(field)}: name '(A|Human)' must start with @ "
        rf"\(write '@(A|Human)'\)",
        line,
    )


def test_an_agent_class_named_by_a_re_export_says_which_path_to_give(tmp_path: Path) -> None:
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      agent_class: akgentic.agent.BaseAgent\n"
        + "      config: {name: '@A', models: 'scripted:default', prompt: {template: hi}}\n",
    )
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    assert message.endswith(
        "agent_class 'akgentic.agent.BaseAgent' names BaseAgent by another module's path: give "
        "the path of the module that defines it, akgentic.agent.agent.BaseAgent"
    )


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        (
            "{type: PlanningTool, get_planning: {bogus: 1}}",
            "tools[0].get_planning.bogus: Extra inputs are not permitted",
        ),
        (
            "{type: PlanningTool, get_planning: 'yes please'}",
            "tools[0].get_planning: Input should be true or false, or a mapping of "
            "GetPlanning's fields",
        ),
        (
            "{type: MCPTool, connection: {stdio_command: 3}}",
            "tools[0].connection.stdio_command: Input should be a valid string",
        ),
    ],
)
def test_a_value_of_several_shapes_is_said_wrong_once_in_the_shape_written(
    tmp_path: Path, tool: str, says: str
) -> None:
    # a capability is `Param | bool`, an MCP connection stdio | HTTP: pydantic refuses
    # the value once per shape, naming each shape's class in the path
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, config: {{name: '@A', tools: [{tool}]}}}}\n"
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == f"{path}:5: members[0].card.config.{says}"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("", "the file is empty"),
        ("# nothing yet\n", "the file is empty"),
        ("- a\n", "it holds a list"),
    ],
)
def test_a_card_that_is_no_mapping_says_what_it_holds(tmp_path: Path, text: str, what: str) -> None:
    path = card_file(tmp_path, text)
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == (
        f"{path}: {what}: a team card is a mapping of name, entry_point and members "
        f"(see docs/team-cards.md)"
    )


def test_a_team_too_big_without_headcounts_says_to_list_fewer(tmp_path: Path) -> None:
    members = "".join(f"  - card: {{role: R{i}, config: {{name: '@A{i}'}}}}\n" for i in range(1001))
    path = card_file(tmp_path, HEAD.replace("'@A'", "'@A0'") + members)
    with pytest.raises(TeamCardError, match=r"1001 members; .* or list fewer members\)"):
        TeamCard.from_yaml(path)


def test_channel_names_are_read_whatever_their_case(tmp_path: Path) -> None:
    """The docs name the channels ``TOOL_CALL``, ``COMMAND``: a card may too; what is kept
    is the canonical channel."""
    from akgentic.tool import COMMAND, TOOL_CALL
    from akgentic.tool.notification import NotificationTool

    tool = (
        "{type: NotificationTool, cancel_notification: {expose: [COMMAND]},"
        " pending_notification: {expose: [Tool_Call, command]}}"
    )
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, config: {{name: '@A', tools: [{tool}]}}}}\n"
    )
    (notes,) = TeamCard.from_yaml(path).members[0].card.config.tools
    assert isinstance(notes, NotificationTool)
    assert notes.cancel_notification.expose == {COMMAND}  # type: ignore[union-attr]
    assert notes.pending_notification.expose == {TOOL_CALL, COMMAND}  # type: ignore[union-attr]
    assert notes.model_dump(mode="json")["cancel_notification"]["expose"] == ["command"]


def test_an_unknown_field_says_which_field_it_was_likely_meant_to_be(tmp_path: Path) -> None:
    """A misspelt key is refused (the models forbid extra keys) with the field it is
    closest to — of its own model, found along the path: a config's, a tool card's (its
    class from ``type``), a capability param's inside ``Param | bool``."""
    config = "{name: '@A', promt: hi}"
    path = card_file(tmp_path, HEAD + f"  - card: {{role: A, config: {config}}}\n")
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    assert str(info.value).endswith(
        "members[0].card.config.promt: Extra inputs are not permitted; did you mean 'prompt'?"
    )
    tool = "{type: PlanningTool, get_planning: {filter_by_agnet: false}}"
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, config: {{name: '@A', tools: [{tool}]}}}}\n"
    )
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    assert str(info.value).endswith(
        "tools[0].get_planning.filter_by_agnet: Extra inputs are not permitted; "
        "did you mean 'filter_by_agent'?"
    )
    path = card_file(tmp_path, HEAD + "  - card: {role: A, config: {name: '@A'}}\n  - zzz: 1\n")
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    assert "members[1].zzz: Extra inputs are not permitted" in str(info.value)
    assert "did you mean" not in str(info.value)  # nothing near: nothing suggested


def test_every_bad_tool_card_of_a_member_is_said_at_once(tmp_path: Path) -> None:
    """Two tool cards with a mistake each: both are said, each at its own line, so the
    file is fixed in one go (not one refusal per mistake)."""
    tools = "[{type: PlanningTool, get_planing: true}, {type: NotificationTool, zz: 1}]"
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, config: {{name: '@A', tools: {tools}}}}}\n"
    )
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2, lines
    assert lines[0].endswith(
        "tools[0].get_planing: Extra inputs are not permitted; did you mean 'get_planning' "
        "or 'get_planning_task'?"
    )
    assert lines[1].endswith("tools[1].zz: Extra inputs are not permitted")


def test_a_card_reached_through_a_link_reads_its_files_beside_the_real_card(
    tmp_path: Path,
) -> None:
    """A card kept in a repository and linked from elsewhere: its scenarios, its
    mcp_config and its skill folders are the files beside the card, not beside the link
    (which read ``scenario …: no such file in <the link's folder>``)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    card_file(
        repo,
        HEAD.replace("members:", "mcp_config: servers/mcp.json\nmembers:")
        + "  - card:\n      role: A\n      config:\n        name: '@A'\n"
        "        tools:\n          - type: SkillTool\n            skills: {folders: [skills]}\n",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "link.yaml"
    link.symlink_to(repo / "team.yaml")

    card = TeamCard.from_yaml(link)

    real = repo.resolve()
    config = card.members[0].card.config
    assert isinstance(config, AgentConfig)
    assert config.scenario_dir == str(real)
    assert card.mcp_config == str(real / "servers" / "mcp.json")
    [skill_card] = config.tools
    assert skill_card.skills.folders == [str(real / "skills")]  # type: ignore[attr-defined]


def test_a_bad_tool_card_and_an_unknown_card_type_are_said_together(tmp_path: Path) -> None:
    """A card whose ``type`` names no card does not hide the other cards' mistakes."""
    tools = "[{type: PlanningTool, get_planing: true}, {type: NoSuchCardAnywhere}]"
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, config: {{name: '@A', tools: {tools}}}}}\n"
    )
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    said = str(info.value)
    assert "tools[0].get_planing: Extra inputs are not permitted; did you mean" in said
    assert "tools[1].type: unknown tool card 'NoSuchCardAnywhere'" in said


def test_a_card_mistake_and_a_member_config_mistake_are_said_together(tmp_path: Path) -> None:
    """A misspelt top-level key and a misspelt key in a member's config: both are said,
    each at its own line, the config's at its full path (once, not again at the card's
    shorter path), so the file is fixed in one go."""
    text = HEAD.replace("members:", "entry_pont: '@A'\nmembers:")
    path = card_file(tmp_path, text + "  - card: {role: A, config: {name: '@A', promt: hi}}\n")
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    lines = str(info.value).splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == (  # in the file's order
        f"{path}:4: entry_pont: Extra inputs are not permitted; did you mean 'entry_point'?"
    )
    assert lines[1].endswith(
        "members[0].card.config.promt: Extra inputs are not permitted; did you mean 'prompt'?"
    )
    assert f"{path}:6:" in lines[1]


@pytest.mark.parametrize("where", ["member", "profile"])
def test_an_undefined_agent_class_is_said_once_beside_the_cards_other_mistakes(
    tmp_path: Path, where: str
) -> None:
    """The class at its own line, once (not again as the team's sentence on it), and the
    same card's misspelt key said with it — the class's refusal does not hide it."""
    card = "{rolle: A, agent_class: nowhere.Ghost}"
    if where == "member":
        text = HEAD.replace("'@A'", "'@Ghost'") + f"  - card: {card}\n"
        at = "members[0].card"
    else:
        text = HEAD + "  - card: {role: A, config: {name: '@A'}}\n" + f"profiles:\n  - {card}\n"
        at = "profiles[0]"
    path = card_file(tmp_path, text)
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    lines = str(info.value).splitlines()
    assert sum("nowhere.Ghost" in line for line in lines) == 1, lines
    assert any(f"{at}.agent_class: agent_class 'nowhere.Ghost' is not defined" in x for x in lines)
    assert any(
        f"{at}.rolle: Extra inputs are not permitted; did you mean 'role'?" in x for x in lines
    ), lines


def test_a_member_cards_own_mistake_is_said_beside_its_configs(tmp_path: Path) -> None:
    """The card's validation stops at the config it refuses; its own misspelt key is still
    said, at its line, with the config's."""
    path = card_file(tmp_path, HEAD + "  - card: {rolle: A, config: {name: '@A', promt: hi}}\n")
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    said = str(info.value)
    assert "members[0].card.config.promt: Extra inputs are not permitted; did you mean" in said
    assert "members[0].card.rolle: Extra inputs are not permitted; did you mean 'role'?" in said
    assert "members[0].card.role: Field required" in said


class _FussyConfig(BaseConfig):
    """A config whose defaults do not build: its validator refuses to be given nothing —
    outside pydantic's errors (``RuntimeError``) or inside them (``ValueError``)."""

    refusal: ClassVar[type[Exception]] = RuntimeError

    @model_validator(mode="before")
    @classmethod
    def _not_empty(cls, data: Any) -> Any:
        if data == {}:
            raise cls.refusal("give me something")
        return data


class FussyAgent(Akgent[_FussyConfig, BaseState]):
    config_class = _FussyConfig


class _PickyConfig(_FussyConfig):
    refusal = ValueError


class PickyAgent(Akgent[_PickyConfig, BaseState]):
    config_class = _PickyConfig


@pytest.mark.parametrize("agent", ["FussyAgent", "PickyAgent"])
def test_a_config_refused_by_a_class_whose_defaults_do_not_build_is_still_said(
    tmp_path: Path, agent: str
) -> None:
    """The card checked without its config is refused by the class's own validator: the
    config's error is said all the same, never that exception nor that sentence."""
    cls = f"{__name__}.{agent}"
    path = card_file(
        tmp_path, HEAD + f"  - card: {{role: A, agent_class: {cls}, config: {{nme: '@A'}}}}\n"
    )
    with pytest.raises(TeamCardError) as info:
        TeamCard.from_yaml(path)
    (line,) = str(info.value).splitlines()
    assert line.endswith(
        "members[0].card.config.nme: Extra inputs are not permitted; did you mean 'name'?"
    )


def test_two_profiles_of_one_role_are_refused_where_the_second_is(tmp_path: Path) -> None:
    """The team registers profiles by role: a repeated role would drop the first unseen."""
    path = card_file(
        tmp_path,
        HEAD
        + "  - card: {role: A, config: {name: '@A'}}\n"
        + "profiles:\n  - {role: R, description: first}\n  - {role: S}\n"
        + "  - {role: R, description: second}\n",
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == (
        f"{path}:{line_of(path, 'second')}: profiles[2].role: profiles[0] already has role "
        f"'R': a team hires by role, so give each profile a role of its own"
    )


def test_a_role_to_hire_that_no_profile_has_is_refused_where_it_is_listed(tmp_path: Path) -> None:
    """hire_members.roles restricts hiring to the roles it lists; one the card has no
    profile of could never be hired, and the agent would be told it may."""
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      config:\n        name: '@A'\n"
        + "        tools: [{type: TeamTool, hire_members: {roles: [R, Nope]}}]\n"
        + "profiles:\n  - {role: R}\n",
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == (
        f"{path}:9: members[0].card.config.tools[0].hire_members.roles[1]: no profile of "
        f"this card has role 'Nope', so it could never be hired: add a profile of that role "
        f"under profiles, or leave it out (the profiles' roles: R)"
    )
    path.write_text(path.read_text().replace(", Nope", ""))
    assert TeamCard.from_yaml(path).unknown_hire_role() is None


def test_a_python_card_with_two_profiles_of_one_role_is_refused_before_it_starts() -> None:
    a = MemberSpec(card=AgentCard(role="A", agent_class="akgentic.agent.agent.BaseAgent"))
    profile = AgentCard(role="R", agent_class="akgentic.agent.agent.BaseAgent")
    card = TeamCard(name="t", entry_point="@A", members=[a], profiles=[profile, profile])
    assert card.duplicate_profile() is not None  # a stored card like it still reads
    system = ActorSystem()
    try:
        manager = TeamManager(system, open_storage("memory://"))
        with pytest.raises(TeamCardError, match=r"team t: profiles\[0\] already has role 'R'"):
            manager.create_team(card)
        assert manager.storage.teams.list() == []  # nothing recorded
    finally:
        system.shutdown()


class Logbook(ToolCard):
    """A card whose author kept a handle in a field: not data."""

    sink: Any = None


def test_a_card_holding_what_is_not_data_is_refused_naming_what_before_it_starts() -> None:
    """A card is kept, sent and resumed: a field holding a lock (an open file, a socket)
    was a raw ``TypeError: cannot pickle`` from the copy ``create_team`` takes."""
    config = AgentConfig(name="@A", role="A", tools=[Logbook(sink=threading.Lock())])
    a = MemberSpec(
        card=AgentCard(role="A", agent_class="akgentic.agent.agent.BaseAgent", config=config)
    )
    card = TeamCard(name="t", entry_point="@A", members=[a])
    system = ActorSystem()
    try:
        manager = TeamManager(system, open_storage("memory://"))
        with pytest.raises(TeamCardError) as refused:
            manager.create_team(card)
        assert str(refused.value) == (
            "team t: the card holds a value that is not data: cannot serialize a value of "
            "type _thread.lock: use a pydantic model (subclass akgentic.core.SerializableModel), "
            "a primitive, or a container of those"
        )
        assert manager.storage.teams.list() == []  # nothing recorded
    finally:
        system.shutdown()


def test_a_key_pasted_as_api_key_env_is_refused_without_being_printed(tmp_path: Path) -> None:
    key = "sk-proj-PASTED0123456789"
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      config:\n        name: '@A'\n"
        + f"        models: {{models: [{{provider: openai, model: m, api_key_env: {key}}}]}}\n"
        + f"        tools: [{{type: SearchTool, api_key_env: {key}}}]\n",
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert key not in str(refused.value)
    model, search = str(refused.value).splitlines()
    assert model.startswith(
        f"{path}:9: members[0].card.config.models.models[0].api_key_env: must be the name of an "
        f"environment variable"
    )
    assert search.startswith(f"{path}:10: members[0].card.config.tools[0].api_key_env: must be")


def test_a_roster_written_as_the_list_of_its_models_is_read(tmp_path: Path) -> None:
    """``models: [spec, {mapping}]`` is how the llm README writes a roster's entries: an
    agent's config takes the list as its roster rather than refusing it as no mapping."""
    path = card_file(
        tmp_path,
        HEAD
        + "  - card:\n      role: A\n      config:\n        name: '@A'\n"
        + "        models:\n          - scripted:default\n"
        + "          - {provider: ollama, model: llama3.2, temprature: 1}\n",
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value).startswith(
        f"{path}:{line_of(path, 'temprature')}: members[0].card.config.models.models[1]."
        f"temprature: Extra inputs"
    )
    path.write_text(path.read_text().replace(", temprature: 1", ""))
    roster = TeamCard.from_yaml(path).members[0].card.config.models
    assert [m.key for m in roster.models] == ["scripted:default", "ollama:llama3.2"]
    assert roster.active == "scripted:default"
