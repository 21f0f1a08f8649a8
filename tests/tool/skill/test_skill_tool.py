"""SkillTool: the menu on SYSTEM_PROMPT, use_skill on TOOL_CALL, /skills on COMMAND."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    RetriableError,
    ToolFactory,
)
from akgentic.tool.skill import MENU_HEADER, NO_SKILLS, SkillEntry, Skills, SkillTool

from ..conftest import EventObserver


class RetryError(Exception):
    """Stands in for pydantic-ai's ModelRetry."""


REFUND = SkillEntry(
    name="refund-policy",
    description="How refunds are approved, and the thresholds that need a second signature.",
    content="Refunds under 100 EUR are approved by the agent handling the case.",
)
ESCALATION = SkillEntry(
    name="escalation",
    description="When to escalate to a human, and what the handover must contain.",
    content="Escalate whenever the customer asks for a person.",
)
MENU = (
    f"{MENU_HEADER}\n"
    "refund-policy — How refunds are approved, and the thresholds that need a second "
    "signature.\n"
    "escalation — When to escalate to a human, and what the handover must contain."
)


def factory(card: SkillTool, **kwargs: Any) -> ToolFactory:
    return ToolFactory([card], observer=EventObserver(), **kwargs)


def library(**kwargs: Any) -> SkillTool:
    return SkillTool(skills=Skills(skills=[REFUND, ESCALATION], **kwargs))


# -- routing -------------------------------------------------------------------------------


def test_all_three_channels_by_default() -> None:
    built = factory(library())
    assert [p() for p in built.get_system_prompts()] == [MENU]
    assert [t.__name__ for t in built.get_tools()] == ["use_skill"]
    assert built.get_command_registry().names() == ["skills"]
    assert built.get_context_states() == []


def test_prompt_and_tool_only() -> None:
    built = factory(library(expose={SYSTEM_PROMPT, TOOL_CALL}))
    assert len(built.get_system_prompts()) == 1
    assert [t.__name__ for t in built.get_tools()] == ["use_skill"]
    assert built.get_commands() == {}


def test_false_removes_the_capability_entirely() -> None:
    built = factory(SkillTool(skills=False))
    assert built.get_system_prompts() == []
    assert built.get_tools() == []
    assert built.get_commands() == {}


def test_llm_context_exposure_is_dropped_silently() -> None:
    built = factory(library(expose={LLM_CONTEXT}))
    assert built.get_context_states() == []
    assert built.get_system_prompts() == [] and built.get_tools() == []


# -- the menu ------------------------------------------------------------------------------


def test_the_command_renders_the_prompt_menu_from_the_same_renderer() -> None:
    built = factory(library())
    (menu,) = built.get_system_prompts()
    assert built.get_command_registry().dispatch("/skills") == menu() == MENU


def test_the_menu_carries_no_content() -> None:
    (menu,) = factory(library()).get_system_prompts()
    assert REFUND.content not in menu() and ESCALATION.content not in menu()


def test_no_skills_means_an_empty_prompt_and_an_honest_command() -> None:
    built = factory(SkillTool())
    assert [p() for p in built.get_system_prompts()] == [""]
    assert built.get_command_registry().dispatch("/skills") == NO_SKILLS


# -- use_skill -----------------------------------------------------------------------------


def test_use_skill_returns_name_and_content_in_the_same_turn() -> None:
    (use_skill,) = factory(library()).get_tools()
    assert use_skill("refund-policy") == f"refund-policy\n\n{REFUND.content}"
    assert use_skill("refund-policy") == use_skill(" refund-policy ")  # no loaded-set state


def test_unknown_name_is_retriable_and_lists_the_names() -> None:
    (use_skill,) = factory(library(), retry_exception=RetryError).get_tools()
    with pytest.raises(RetryError, match="Available skills: refund-policy, escalation") as info:
        use_skill("refunds")
    assert isinstance(info.value.__cause__, RetriableError)
    assert "'refunds'" in str(info.value)


def test_configuration_after_build_does_not_leak_into_the_tool() -> None:
    card = library()
    (use_skill,) = factory(card).get_tools()
    assert isinstance(card.skills, Skills)
    card.skills.skills.append(SkillEntry(name="late", description="d", content="c"))
    with pytest.raises(RetriableError):
        use_skill("late")


# -- the models ----------------------------------------------------------------------------


def test_duplicate_names_in_one_list_are_refused() -> None:
    with pytest.raises(ValidationError, match="'escalation' is listed twice"):
        Skills(skills=[ESCALATION, ESCALATION])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),
        ("name", "two\nlines"),
        ("description", "  "),
        ("description", "two\u2028lines"),  # str.splitlines() breaks there, as a reader may
        ("name", "two\x85lines"),
        ("description", "two\x0blines"),
    ],
)
def test_menu_fields_are_single_non_blank_lines(field: str, value: str) -> None:
    fields = {"name": "n", "description": "d", "content": "c", field: value}
    with pytest.raises(ValidationError, match=field):
        SkillEntry(**fields)


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="body"):
        SkillEntry(name="n", description="d", content="c", body="x")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="skillz"):
        SkillTool(skillz=True)  # type: ignore[call-arg]


def test_card_round_trips() -> None:
    card = library(expose={COMMAND})
    back = deserialize(serialize(card))
    assert back == card and isinstance(back.skills, Skills)
    assert back.skills.skills[0] == REFUND


# -- in a toolset ------------------------------------------------------------------------------


FILMS = SkillEntry(
    name="films", description="Enable media for films.", content="f", toolset="media"
)


def offered_and_answer(group: Any, call: dict[str, Any]) -> tuple[list[str], str]:
    """The tool names a model is given for ``group`` (a ToolGroup), and what it reads back
    when it calls the first with ``call``."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not seen:
            seen.extend(tool.name for tool in info.function_tools)
            return ModelResponse(parts=[ToolCallPart(seen[0], call)])
        return ModelResponse(parts=[TextPart("done")])

    messages = Agent(FunctionModel(model), toolsets=[group]).run_sync("go").all_messages()
    [answer] = [
        str(part.content)
        for message in messages
        for part in message.parts
        if getattr(part, "part_kind", "") in ("tool-return", "retry-prompt")
    ]
    return seen, answer


def test_in_a_toolset_the_menu_view_command_and_retry_name_the_tool_the_model_has() -> None:
    """The set renames ``use_skill`` ``docs_use_skill``; every text of the card says that
    name, so the model's first call is one it can make."""
    from akgentic.tool.core.channels import group_tool_name
    from akgentic.tool.skill import menu_header, view_header
    from akgentic.tool.toolsets import ToolsetCard

    card = SkillTool(skills=Skills(skills=[REFUND, FILMS]))
    toolset = ToolsetCard(name="docs", description="Our procedures", cards=[card])
    built = ToolFactory([toolset], observer=EventObserver())
    assert card.called_as("use_skill") == group_tool_name("docs", "use_skill") == "docs_use_skill"
    [menu] = [p() for p in built.get_system_prompts()]
    assert menu == f"{menu_header('docs_use_skill')}\nrefund-policy — {REFUND.description}"
    assert menu.startswith("Skills you can load with docs_use_skill(name) when")
    [provider] = built.get_context_states()
    view = provider()
    assert view is not None
    assert view.render_full() == f"{view_header('docs_use_skill')}\nfilms — {FILMS.description}"
    assert str(built.get_command_registry().dispatch("/skills")).startswith(
        "Skills you can load with docs_use_skill(name)"
    )
    [group] = built.get_toolsets()
    names, answer = offered_and_answer(group, {"name": "refunds"})
    assert names == ["docs_use_skill"]
    assert answer.startswith("Unknown skill 'refunds'. Available skills: refund-policy, films.")
    assert "Call docs_use_skill with one of these names" in answer
    assert "use_skill" not in answer.replace("docs_use_skill", "")


def test_outside_a_toolset_the_texts_name_use_skill_as_before() -> None:
    card = SkillTool(skills=Skills(skills=[REFUND, FILMS]))
    built = factory(card)
    assert card.called_as("use_skill") == "use_skill"
    [menu] = [p() for p in built.get_system_prompts()]
    assert menu == f"{MENU_HEADER}\nrefund-policy — {REFUND.description}"
    assert MENU_HEADER == "Skills you can load with use_skill(name) when a task needs one:"
    (use_skill,) = built.get_tools()
    with pytest.raises(RetriableError, match="Call use_skill with one of these names"):
        use_skill("refunds")


# -- a long body, in parts -----------------------------------------------------------------------


def long_skill(lines: int = 60) -> SkillEntry:
    """About 2,900 characters over ``lines`` numbered lines of 49."""
    body = "".join(f"Step {i:02d}: check the ledger entry and its receipt.\n" for i in range(lines))
    return SkillEntry(name="close-books", description="Month-end close.", content=body)


def body_of(result: str) -> str:
    """The part's text: between the header's blank line and the trailer's."""
    return result.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]


def test_a_body_over_the_bound_comes_in_parts_each_saying_how_to_ask_for_the_next() -> None:
    skill = long_skill()
    (use_skill,) = factory(SkillTool(skills=Skills(skills=[skill], part_chars=1000))).get_tools()
    first, second, third = (use_skill("close-books", part=n) for n in (1, 2, 3))
    assert first.startswith("close-books (part 1 of 3)\n\n")
    assert first.endswith('\n\n[part 1 of 3; call use_skill(name="close-books", part=2) for more]')
    assert second.endswith('[part 2 of 3; call use_skill(name="close-books", part=3) for more]')
    assert third.startswith("close-books (part 3 of 3)\n\n")
    assert third.endswith("\n\n[part 3 of 3: the end of close-books]")
    parts = [body_of(r) for r in (first, second, third)]
    assert "".join(parts) == skill.content  # nothing lost, nothing repeated
    assert all(len(p) <= 1000 for p in parts)
    assert all(p.endswith("\n") for p in parts)  # cut after a line, not inside one
    assert use_skill("close-books") == first  # part 1 by default, the same every call


def test_a_part_out_of_range_is_retriable_and_says_the_valid_range() -> None:
    card = SkillTool(skills=Skills(skills=[long_skill(), REFUND], part_chars=1000))
    (use_skill,) = factory(card, retry_exception=RetryError).get_tools()
    for part in (0, 4, -1):
        with pytest.raises(RetryError) as refused:
            use_skill("close-books", part=part)
        assert str(refused.value) == (
            f"Skill 'close-books' has 3 parts: there is no part {part}. Call use_skill with "
            "part from 1 to 3."
        )
    with pytest.raises(RetryError) as short:
        use_skill("refund-policy", part=2)
    assert str(short.value) == (
        "Skill 'refund-policy' has 1 part: there is no part 2. Call use_skill with part=1 "
        "(or leave part out)."
    )
    assert use_skill("refund-policy", part=1) == f"refund-policy\n\n{REFUND.content}"


def test_the_default_bound_keeps_a_huge_body_out_of_one_result() -> None:
    from akgentic.tool.skill import DEFAULT_PART_CHARS

    huge = SkillEntry(name="manual", description="All of it.", content="x" * 1_000_000)
    (use_skill,) = factory(SkillTool(skills=Skills(skills=[huge]))).get_tools()
    first = use_skill("manual")
    count = -(-1_000_000 // DEFAULT_PART_CHARS)
    assert first.startswith(f"manual (part 1 of {count})")
    assert len(body_of(first)) == DEFAULT_PART_CHARS  # no line break: cut at the bound
    assert len(first) < DEFAULT_PART_CHARS + 200
    last = use_skill("manual", part=count)
    assert last.endswith(f"[part {count} of {count}: the end of manual]")


def test_in_a_toolset_the_next_part_is_asked_for_by_the_tools_name_there() -> None:
    from akgentic.tool.toolsets import ToolsetCard

    card = SkillTool(skills=Skills(skills=[long_skill()], part_chars=1000))
    ToolFactory([ToolsetCard(name="docs", description="d", cards=[card])], observer=EventObserver())
    (use_skill,) = card.get_tools()
    assert use_skill("close-books").endswith(
        '[part 1 of 3; call docs_use_skill(name="close-books", part=2) for more]'
    )
    with pytest.raises(RetriableError, match=r"Call docs_use_skill with part from 1 to 3\.$"):
        use_skill("close-books", part=9)


def test_a_part_bound_too_small_to_be_useful_is_refused() -> None:
    with pytest.raises(ValidationError, match="part_chars\n  Input should be greater than or"):
        Skills(part_chars=10)
    assert Skills(part_chars=1000).part_chars == 1000
