"""Every tool and command of every shipped card, called with hostile arguments.

The rule (seed 004, Error Handling): no raw exception escapes a tool callable — a bad
argument is a ``RetriableError`` the model can act on, or the call answers normally. Each
card is built on the test member its own tests use; every capability is exposed on
TOOL_CALL (and on COMMAND where it has a command form), so nothing is left out. Then each
callable gets, one parameter at a time (the others plausible): None, the wrong type, an
empty and a 1 MB string, unknown ids, out-of-range numbers — and all parameters None.
Nothing the call says back quotes the megabyte.
"""

from __future__ import annotations

import enum
import functools
import inspect
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from akgentic.agent.config import load_shipped_cards
from akgentic.catalog.wiring import CatalogTool
from akgentic.tool import COMMAND, TOOL_CALL, BaseToolParam, RetriableError, ToolCard, ToolFactory
from akgentic.tool.knowledge_graph import KnowledgeGraphTool
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.metadata import MetadataTool, RenderMetadata
from akgentic.tool.model import ModelTool
from akgentic.tool.notification import NotificationTool
from akgentic.tool.planning import PlanningTool
from akgentic.tool.skill import SkillEntry, Skills, SkillTool
from akgentic.tool.team import TeamTool
from akgentic.tool.toolsets import ToolsetCard
from akgentic.tool.workspace import WorkspaceTool

from .conftest import Team
from .mailbox.test_mailbox_tool import Inbox
from .members import Member, MemberConfig, no_embedder  # noqa: F401  (autouse: keyword-only)
from .model.test_model_tool import ROSTER, RosterAgent
from .team.conftest import Staffed, staffed  # noqa: F401  (the fixture, for TeamTool)

MEGABYTE = "m" * 1_000_000
HOSTILE: list[Any] = [
    None,
    "",
    "   ",
    MEGABYTE,
    "no-such-id",
    12345,
    -1,
    0,
    10**18,
    -(10**18),
    1e308,
    float("nan"),
    True,
    [None],
    [{"bogus": 1}],
    {"bogus": 1},
    object(),
]
LONGEST_ANSWER = 20_000
LONGEST_ERROR = 2_000


def everything_on(card: ToolCard) -> ToolCard:
    """``card`` with each capability it has on, exposed on TOOL_CALL and COMMAND too."""
    updates: dict[str, Any] = {}
    for name, field in type(card).model_fields.items():
        value = getattr(card, name)
        param_cls = next(
            (
                arg
                for arg in typing.get_args(field.annotation)
                if isinstance(arg, type) and issubclass(arg, BaseToolParam)
            ),
            None,
        )
        if param_cls is None or value is False:
            continue
        param = value if isinstance(value, BaseToolParam) else param_cls()
        updates[name] = param.model_copy(update={"expose": {*param.expose, TOOL_CALL, COMMAND}})
    return type(card).model_validate({**card.model_dump(exclude=set(updates)), **updates})


def plausible(hint: Any) -> Any:
    """A value that satisfies ``hint``, for the parameters not under test."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return plausible(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return plausible(next(a for a in args if a is not type(None)))
    if origin in (list, tuple, set) or hint in (list, tuple, set):
        return []
    if origin is dict or hint is dict:
        return {}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if hint is bool:
        return False
    if hint is int:
        return 1
    if hint is float:
        return 1.0
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return None
    return "x"


@dataclass
class Callee:
    where: str
    shape: Callable[..., Any]
    """The callable whose signature the arguments are made for."""
    call: Callable[..., Any]
    """How it is called: the tool itself, or the command registry by name."""


def callees(factory: ToolFactory, card: str) -> Iterator[Callee]:
    for fn in factory.get_tools():
        yield Callee(f"{card} tool {fn.__name__}", fn, fn)
    registry = factory.get_command_registry()
    for name in registry.names():
        command = registry.get(name)
        assert command is not None
        yield Callee(f"{card} /{name}", command, functools.partial(registry.call, name))


def calls(fn: Callable[..., Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, kwargs): each hostile value in each parameter, then every parameter None."""
    params = [
        p
        for p in inspect.signature(fn, eval_str=True).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    base = {p.name: plausible(p.annotation) for p in params if p.default is inspect.Parameter.empty}
    for p in params:
        for value in HOSTILE:
            label = f"{p.name}={type(value).__name__}:{str(value)[:20]!r}"
            yield label, {**base, p.name: value}
    if params:
        yield "all None", {p.name: None for p in params}
    else:
        yield "no arguments", {}
        yield "an unexpected argument", {"bogus": MEGABYTE}


def hostile_failures(callee: Callee) -> list[str]:
    failures: list[str] = []
    for label, kwargs in calls(callee.shape):
        try:
            answer = callee.call(**kwargs)
        except RetriableError as exc:
            if len(str(exc)) > LONGEST_ERROR:
                failures.append(f"{callee.where}({label}): error of {len(str(exc))} characters")
        except Exception as exc:  # the defect this test is about
            failures.append(f"{callee.where}({label}): {type(exc).__name__}: {str(exc)[:200]}")
        else:
            if len(str(answer)) > LONGEST_ANSWER:
                failures.append(f"{callee.where}({label}): answer of {len(str(answer))} chars")
    return failures


# -- the cards, each on the member its own tests use ----------------------------------------

SKILLS = Skills(
    skills=[SkillEntry(name="refund-policy", description="Refunds.", content="Under 100 EUR.")]
)


def shared_state_cards() -> list[ToolCard]:
    return [
        PlanningTool(),
        KnowledgeGraphTool(),
        NotificationTool(),
        SkillTool(skills=SKILLS),
        MetadataTool(render_metadata=RenderMetadata(template="Year: {fiscal_year}.")),
    ]


def test_no_tool_of_a_shared_state_card_lets_a_raw_exception_out(team: Team) -> None:
    cards = [everything_on(card) for card in shared_state_cards()]
    address = team.system.createActor(
        Member,
        config=MemberConfig(name="@Member", cards=cards),
        team_id=team.orchestrator.team_id,
    )
    member = team.system.get_actor(address)
    failures: list[str] = []
    for card in cards:
        factory = ToolFactory([card], observer=member)
        for callee in callees(factory, type(card).__name__):
            failures += hostile_failures(callee)
    assert not failures, "\n".join(failures)


def test_no_tool_of_the_team_card_lets_a_raw_exception_out(staffed: Staffed) -> None:  # noqa: F811
    factory = ToolFactory([everything_on(TeamTool())], observer=staffed.manager)
    failures = [f for callee in callees(factory, "TeamTool") for f in hostile_failures(callee)]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("card", "observer"),
    [
        (ModelTool(), lambda: RosterAgent(ROSTER)),
        (MailboxTool(), lambda: Inbox()),
    ],
    ids=["ModelTool", "MailboxTool"],
)
def test_no_tool_of_an_agent_card_lets_a_raw_exception_out(
    card: ToolCard, observer: Callable[[], Any]
) -> None:
    agent = observer()
    factory = ToolFactory([everything_on(card)], observer=agent)
    failures = [
        f for callee in callees(factory, type(card).__name__) for f in hostile_failures(callee)
    ]
    assert not failures, "\n".join(failures)


def test_the_walk_covers_every_shipped_card() -> None:
    """The walk above is only as good as its reach: every card akgentic ships."""
    load_shipped_cards()
    shipped: set[type[ToolCard]] = set()
    stack: list[type[ToolCard]] = [ToolCard]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("akgentic."):
                shipped.add(sub)
    walked = {type(c) for c in shared_state_cards()} | {TeamTool, ModelTool, MailboxTool}
    walked |= {WorkspaceTool}
    # Wrappers own no tool of their own: a ToolsetCard's tools are its member cards' and a
    # CatalogTool's are its instance's card's, each walked as itself.
    wrappers = {ToolsetCard, CatalogTool}
    assert shipped - wrappers == walked


def test_no_tool_of_the_workspace_card_lets_a_raw_exception_out(
    team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every workspace capability, exec and the journal included, on a private tree."""
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(tmp_path / "workspaces"))
    monkeypatch.setenv("AKGENTIC_PRINCIPAL", "alice")
    card = everything_on(WorkspaceTool(workspace_exec=True, git_journal=True))
    address = team.system.createActor(
        Member,
        config=MemberConfig(name="@Member", cards=[card]),
        team_id=team.orchestrator.team_id,
    )
    factory = ToolFactory([card], observer=team.system.get_actor(address))
    failures = [f for callee in callees(factory, "WorkspaceTool") for f in hostile_failures(callee)]
    assert not failures, "\n".join(failures)
