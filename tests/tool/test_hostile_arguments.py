"""Every tool and command of every shipped card, called with hostile arguments.

The rule (seed 004, Error Handling): no raw exception escapes a tool callable — a bad
argument is a ``RetriableError`` the model can act on, or the call answers normally. Each
card is built on the test member its own tests use; every capability is exposed on
TOOL_CALL (and on COMMAND where it has a command form), so nothing is left out. Then each
callable gets, one parameter at a time (the others plausible): None, the wrong type, an
empty and a 1 MB string, unknown ids, out-of-range numbers — and all parameters None.
Nothing the call says back quotes the megabyte.

SearchTool is walked against the loopback Tavily. MCPTool's tools are its server's: they
are walked over the real stdio test server, the way pydantic-ai calls them (the arguments
are JSON, checked by the tool's validator, then sent), where argument validation is the
server's; there ``ModelRetry`` and ``ToolFailed`` are the model-facing forms of
``RetriableError``.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ValidationError
from pydantic_ai import ModelRetry, RunContext, ToolFailed
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from akgentic.agent.config import load_shipped_cards
from akgentic.catalog.wiring import CatalogTool
from akgentic.tool import COMMAND, TOOL_CALL, BaseToolParam, RetriableError, ToolCard, ToolFactory
from akgentic.tool.knowledge_graph import KnowledgeGraphTool
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.mcp import MCPTool
from akgentic.tool.metadata import MetadataTool, RenderMetadata
from akgentic.tool.model import ModelTool
from akgentic.tool.notification import NotificationTool
from akgentic.tool.planning import PlanningTool
from akgentic.tool.search import SearchTool
from akgentic.tool.skill import SkillEntry, Skills, SkillTool
from akgentic.tool.team import TeamTool
from akgentic.tool.toolsets import ToolsetCard
from akgentic.tool.workspace import WorkspaceTool

from .conftest import Team
from .mailbox.test_mailbox_tool import Inbox
from .mcp.conftest import stdio
from .members import Member, MemberConfig, no_embedder  # noqa: F401  (autouse: keyword-only)
from .model.test_model_tool import ROSTER, RosterAgent
from .search.tavily_server import KEY as TAVILY_KEY
from .search.tavily_server import serve as serve_tavily
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
    if origin is list and args and args[0] is not typing.Any:
        return [plausible(args[0])]  # one item: an empty list may be refused before the body
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
    return variations([p.name for p in params], base)


def variations(names: list[str], base: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each hostile value in each of ``names`` (``base`` the others), then all None."""
    for name in names:
        for value in HOSTILE:
            label = f"{name}={type(value).__name__}:{str(value)[:20]!r}"
            yield label, {**base, name: value}
    if names:
        yield "all None", dict.fromkeys(names)
    else:
        yield "no arguments", {}
        yield "an unexpected argument", {"bogus": MEGABYTE}


def hostile_failures(callee: Callee) -> list[str]:
    failures: list[str] = []
    for label, kwargs in calls(callee.shape):
        try:
            answer = callee.call(**kwargs)
        except RetriableError as exc:
            failures += too_long(f"{callee.where}({label})", exc, LONGEST_ERROR, "error")
        except Exception as exc:  # the defect this test is about
            failures.append(f"{callee.where}({label}): {type(exc).__name__}: {str(exc)[:200]}")
        else:
            failures += too_long(f"{callee.where}({label})", answer, LONGEST_ANSWER, "answer")
    return failures


def too_long(where: str, said: object, limit: int, what: str) -> list[str]:
    """A failure when what a call said back is longer than ``limit`` characters."""
    size = len(str(said))
    return [f"{where}: {what} of {size} characters"] if size > limit else []


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
    walked |= {WorkspaceTool, SearchTool, MCPTool}
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


def test_no_tool_of_the_search_card_lets_a_raw_exception_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """web_search, web_fetch and web_crawl, against the loopback Tavily."""
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_KEY)
    with serve_tavily() as tavily:
        factory = ToolFactory([everything_on(SearchTool(api_base_url=tavily.url))])
        failures = [
            f for callee in callees(factory, "SearchTool") for f in hostile_failures(callee)
        ]
        reached = {path for path, _, _ in tavily.requests}
    assert reached == {"/search", "/extract", "/crawl"}  # every tool's body was reached
    assert not failures, "\n".join(failures)


def json_plausible(schema: dict[str, Any]) -> Any:
    """A value satisfying a JSON schema's type, for the arguments not under test."""
    kind = schema.get("type")
    return {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(
        str(kind), "x"
    )


def is_json(args: dict[str, Any]) -> bool:
    """Whether a model could send ``args``: its arguments are JSON text."""
    try:
        json.dumps(args, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def test_no_tool_of_an_mcp_server_lets_a_raw_exception_out() -> None:
    """Every tool the real stdio test server lists, called as pydantic-ai calls it.

    ``crash`` goes last (it kills the server: the calls after it are answered "not
    running"); ``hang`` is answered when the short ``call_timeout`` runs out.
    """
    card = MCPTool(name="calc", connection=stdio(call_timeout=2))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def walk() -> list[str]:
        failures: list[str] = []
        [toolset] = card.get_toolsets()
        async with toolset:
            tools = await toolset.get_tools(ctx)
            assert {"calc__add", "calc__greet", "calc__crash", "calc__hang"} <= set(tools)
            for name in sorted(tools, key=lambda n: (n == "calc__crash", n)):
                tool = tools[name]
                schema = tool.tool_def.parameters_json_schema
                required = set(schema.get("required", []))
                props = schema.get("properties", {})
                base = {k: json_plausible(v) for k, v in props.items() if k in required}
                for label, args in variations(list(props), base):
                    if not is_json(args):
                        continue
                    where = f"MCP {name}({label})"
                    try:
                        valid = tool.args_validator.validate_python(args)
                        answer = await toolset.call_tool(name, valid, ctx, tool)
                    except (ModelRetry, ToolFailed, ValidationError) as exc:
                        failures += too_long(where, exc, LONGEST_ERROR, "error")
                    except Exception as exc:  # the defect this test is about
                        failures.append(f"{where}: {type(exc).__name__}: {str(exc)[:200]}")
                    else:
                        failures += too_long(where, answer, LONGEST_ANSWER, "answer")
        return failures

    failures = anyio.run(walk)
    assert not failures, "\n".join(failures)
