"""The team-card reference (``docs/team-cards.md``), generated from the models themselves.

Every field of :class:`TeamCard`, :class:`MemberSpec`, :class:`~akgentic.core.AgentCard`,
:class:`~akgentic.agent.AgentConfig`, each shipped tool card and every model they are
made of: its type, its default and what it means, then a YAML example per model that
this module validates against the model before printing it — so a renamed field, a new
one or a changed default changes the page, and the test that compares the page with the
committed file fails until ``python3 dev.py docs`` is run.

What a field means is read, in this order, from its ``Field(description=...)``, from the
bullet of its class docstring that names it (``- ``name``: ...`` or ``- ``name`` — ...``),
or from the string literal under it in the class body. A field with none of these shows
an empty cell, which is how a missing explanation is noticed.

``python -m akgentic.team.reference [--write PATH | --check PATH]`` prints, writes or
checks the page.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import json
import re
import sys
import textwrap
import types
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from akgentic.agent import AgentConfig
from akgentic.agent.config import load_shipped_cards
from akgentic.core import AgentCard, BaseConfig
from akgentic.core.words import plain_literals
from akgentic.team.card import MemberSpec, Suggestion, TeamCard
from akgentic.tool.core import ToolCard, lookup
from akgentic.tool.core.params import BaseToolParam

__all__ = ["check", "main", "render"]

TITLE = "Team card reference"

TEAM_EXAMPLE = """\
name: analyst
description: Plans, records findings in a knowledge graph, searches them, sets reminders.
entry_point: "@Analyst"
suggestions:
  - message: study concurrency
    shows: the plan, the graph and a reminder at work
members:
  - card:
      role: Analyst
      description: Studies a topic and keeps the team's plan and graph up to date.
      config:
        name: "@Analyst"
        role: Analyst
        models: "openai-compatible:llama3.2"
        prompt:
          template: "You are {name}. Plan your work on the team plan."
        tools:
          - type: PlanningTool
          - type: KnowledgeGraphTool
    members:
      - card:
          role: Researcher
          config: {name: "@Researcher", role: Researcher}
        headcount: 2
profiles:
  - role: Reviewer
    description: Reviews an answer before it goes out.
    config: {name: "@Reviewer", role: Reviewer}
"""

EXAMPLES: dict[type[BaseModel], str] = {
    TeamCard: TEAM_EXAMPLE,
    Suggestion: "message: search actor\nshows: graph search over what was recorded\n",
    MemberSpec: """\
card:
  role: Researcher
  config: {name: "@Researcher", role: Researcher}
headcount: 2          # @Researcher-1 and @Researcher-2
members: []           # their own members, created as their children
""",
    AgentCard: """\
role: Reviewer
description: Reviews an answer before it goes out.
skills: [review]
agent_class: akgentic.agent.agent.BaseAgent   # the default in a team card
config:
  name: "@Reviewer"
  role: Reviewer
  prompt: {template: "You are {name}. Check every claim."}
""",
    AgentConfig: """\
name: "@Writer"
role: Writer
prompt:
  template: "You are {name}, who writes about {topic}."
  params: {topic: actors}
models: "openai:gpt-5.2, scripted:default"   # a roster: the first is in force
tools:
  - type: PlanningTool
  - {type: WorkspaceTool, git_journal: true}
usage_limits: {per_run: {requests: 20}}
compaction: {threshold: 0.7}
tool_timeout: 900   # seconds a tool call may take (300 by default)
""",
}
"""Examples written by hand where a model has required fields; each is validated."""

CURATED_CARD_FIELDS: dict[str, dict[str, Any]] = {
    "CatalogTool": {"instance": "web_search"},
    "MCPTool": {
        "connection": {"stdio_command": "uvx", "stdio_args": ["mcp-server-git"]},
        "name": "git",
    },
    "ToolsetCard": {
        "name": "files",
        "description": "Read and write the team's files.",
        "cards": [{"type": "WorkspaceTool"}],
    },
}
"""The fields a tool card's example sets when the card cannot be built from defaults."""


# -- what a field means -------------------------------------------------------------------
def _docstring_bullets(cls: type) -> dict[str, str]:
    """``{field: text}`` from the class docstrings' bullets naming fields."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        if not doc:
            continue
        pattern = re.compile(
            r"^\s*[-*]\s+((?:``\w+``(?:\s*[/,]\s*)?)+)\s*(?::|\u2014|\u2013|-)\s*"
            r"(.+?)(?=^\s*[-*]\s|\n\s*\n|\Z)",
            re.M | re.S,
        )
        for names, text in pattern.findall(doc):
            for name in re.findall(r"``(\w+)``", names):
                found[name] = _sentence(text)
    return found


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """``{field: text}`` from string literals right under annotated fields."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if isinstance(klass, type) and issubclass(klass, BaseModel):
            found.update(_own_attribute_docstrings(klass))
    return found


@functools.cache
def _own_attribute_docstrings(klass: type[BaseModel]) -> dict[str, str]:
    """:func:`_attribute_docstrings` of one class's own body, read once a process: a base
    (``SerializableModel``, ``BaseToolParam``) is in most models' MRO, and reading a
    class's source tokenizes its whole file. Callers only read the result."""
    found: dict[str, str] = {}
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return found
    body = ast.parse(source).body[0]
    if not isinstance(body, ast.ClassDef):
        return found
    for node, following in itertools.pairwise(body.body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            found[node.target.id] = " ".join(following.value.value.split())
    return found


def _prose(cls: type, names: list[str]) -> dict[str, str]:
    """``{field: the first sentence of a class docstring naming it}``."""
    found: dict[str, str] = {}
    for klass in cls.__mro__:
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        for block in re.split(r"\n\s*\n|\n\s*[-*]\s", doc):
            for sentence in re.split(r"(?<=\.)\s+(?=[A-Z`(])", " ".join(block.split())):
                if sentence.endswith(":"):  # introduces what follows: explains nothing
                    continue
                for name in names:
                    if name not in found and f"``{name}``" in sentence:
                        found[name] = sentence
    return found


def _sentence(text: str) -> str:
    """A bullet's text on one line, ended as a sentence: a list's items end in ``;``."""
    text = " ".join(text.split())
    return f"{text[:-1]}." if text.endswith((";", ",")) else text


def _meanings(model: type[BaseModel]) -> dict[str, str]:
    meanings = {
        **_prose(model, list(model.model_fields)),
        **_attribute_docstrings(model),
        **_docstring_bullets(model),
    }
    for name, info in model.model_fields.items():
        if info.description:
            meanings[name] = " ".join(info.description.split())
    return meanings


def _summary(cls: type) -> str:
    """The class docstring's first paragraph, on one line."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    return " ".join(doc.split("\n\n")[0].split())


# -- types and defaults --------------------------------------------------------------------
def _anchor(cls: type) -> str:
    return cls.__name__.lower()


def _type_name(annotation: Any, documented: set[type]) -> str:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is Annotated:
        return _type_name(args[0], documented)
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a, documented) for a in args)
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (list, set, frozenset, tuple):
        inner = ", ".join(_type_name(a, documented) for a in args if a is not Ellipsis)
        return f"{'list' if origin in (list, tuple) else 'set'}[{inner}]"
    if origin is dict:
        return f"dict[{', '.join(_type_name(a, documented) for a in args)}]"
    if isinstance(annotation, type):
        if issubclass(annotation, Enum):
            return " | ".join(json.dumps(member.value) for member in annotation)
        if annotation in documented:
            return f"[{annotation.__name__}](#{_anchor(annotation)})"
        if issubclass(annotation, ToolCard):
            return "[tool card](#tool-cards)"
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=True)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    return f"`{json.dumps(_plain(value), ensure_ascii=False)}`"


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The models a field's type names (not tool cards, not a bare BaseConfig)."""
    if isinstance(annotation, type):
        if (
            issubclass(annotation, BaseModel)
            and not issubclass(annotation, ToolCard)
            and annotation is not BaseConfig
        ):
            yield annotation
        return
    for arg in get_args(annotation):
        yield from _models_in(arg)


# -- the page ---------------------------------------------------------------------------------
def _cell(text: str) -> str:
    """Text for a table cell: reStructuredText literals as Markdown code, no pipes."""
    return plain_literals(text).replace("|", "\\|").replace("\n", " ")


def _table(model: type[BaseModel], documented: set[type]) -> list[str]:
    meanings = _meanings(model)
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        meaning = meanings.get(name, "")
        annotation = info.annotation
        params = [
            a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseToolParam)
        ]
        if not meaning and params:
            meaning = f"{_summary(params[0])} `false` removes it; a mapping sets its fields."
        parts = [m for m in _models_in(annotation) if m in documented]
        if not meaning and parts:
            meaning = _summary(parts[0])
        rows.append(
            f"| `{name}` | {_cell(_type_name(annotation, documented))} | {_cell(_default(info))} "
            f"| {_cell(meaning)} |"
        )
    return rows


def _example(model: type[BaseModel], data: Any, *, wrap_tool: bool = False) -> list[str]:
    """``data`` validated against ``model`` (so the example cannot drift), as YAML."""
    if isinstance(data, str):
        text = data
        loaded = yaml.safe_load(text)
    else:
        loaded = data
        payload = [{"type": model.__name__, **data}] if wrap_tool else data
        text = yaml.safe_dump(
            {"tools": payload} if wrap_tool else payload,
            sort_keys=False,
            width=88,
            allow_unicode=True,
        )
    model.model_validate(loaded)
    return ["```yaml", text.rstrip("\n"), "```"]


def _section(
    model: type[BaseModel],
    level: int,
    documented: set[type],
    example: list[str] | None,
    heading: str | None = None,
) -> list[str]:
    lines = [f"{'#' * level} {heading or model.__name__}", "", plain_literals(_summary(model)), ""]
    lines += _table(model, documented)
    if example:
        lines += ["", *example]
    return [*lines, ""]


def _parts_of(roots: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """Every model the roots' fields name, transitively, in the order first met."""
    seen: list[type[BaseModel]] = []
    queue = list(roots)
    while queue:
        model = queue.pop(0)
        for info in model.model_fields.values():
            for part in _models_in(info.annotation):
                if part not in seen and part not in roots:
                    seen.append(part)
                    queue.append(part)
    return seen


def shipped_cards() -> list[type[ToolCard]]:
    """The tool cards this package ships, by name."""
    load_shipped_cards()
    import akgentic.catalog  # noqa: F401  (CatalogTool, a card naming a catalog instance)

    classes = lookup.card_classes().values()
    return sorted(
        {c for c in classes if c.__module__.startswith("akgentic.")}, key=lambda c: c.__name__
    )


def _card_example(card: type[ToolCard]) -> list[str]:
    fields = CURATED_CARD_FIELDS.get(card.__name__)
    data = fields if fields is not None else card().model_dump(mode="json")
    return _example(card, data, wrap_tool=True)


def render() -> str:
    """The whole page, as Markdown."""
    team_models: list[type[BaseModel]] = [TeamCard, Suggestion, MemberSpec, AgentCard, AgentConfig]
    cards = shipped_cards()
    team_parts = [p for p in _parts_of(team_models) if p not in team_models]
    card_parts = [p for p in _parts_of(list(cards)) if p not in team_parts]
    documented: set[type] = {*team_models, *team_parts, *card_parts}
    lines = [
        f"# {TITLE}",
        "",
        "<!-- generated by `python3 dev.py docs` from the models; do not edit by hand: "
        "tests/tooling/test_docs.py fails when this file is stale -->",
        "",
        "A team card is a YAML file (`akgentic run team.yaml`, `TeamCard.from_yaml`). Every "
        "model below refuses unknown fields, naming the file, the line and the field (and the "
        "field a misspelt key was likely meant to be); a file's mistakes are all said at "
        "once, one line each. Each example is checked against its model when this page is "
        "generated.",
        "",
        "A relative path a card holds (`mcp_config`, a `scripted:` scenario, a SkillTool "
        "folder) is read from the card file's folder. A card reached through a symbolic "
        "link reads them from the folder of the file the link points to, so a card kept in "
        "a repository and linked from elsewhere finds the files kept beside it.",
        "",
        "- [TeamCard](#teamcard), [Suggestion](#suggestion), [MemberSpec](#memberspec), "
        "[AgentCard](#agentcard), [AgentConfig](#agentconfig)",
        "- parts: " + ", ".join(f"[{p.__name__}](#{_anchor(p)})" for p in team_parts),
        "- [tool cards](#tool-cards): "
        + ", ".join(f"[{c.__name__}](#{_anchor(c)})" for c in cards),
        "- parts of tool cards: " + ", ".join(f"[{p.__name__}](#{_anchor(p)})" for p in card_parts),
        "",
        "## The team",
        "",
    ]
    for model in team_models:
        example = _example(model, EXAMPLES[model])
        lines += _section(model, 3, documented, example)
    lines += ["### Parts of a team card", ""]
    for part in team_parts:
        lines += _section(part, 4, documented, None)
    lines += [
        "## Tool cards",
        "",
        "An agent's `tools:` lists cards as `{type: Name, field: value...}` (a bare name "
        "takes every default). A capability field (`Param | bool`) is on with `true`, off "
        "with `false`, or set with a mapping of its param's fields. A member has each "
        "capability once: two cards turning the same one on (a card listed twice) are "
        "refused as the card is read. Each card's README beside its code "
        "(`src/akgentic/tool/<card>/README.md`) tells how it behaves.",
        "",
    ]
    for card in cards:
        lines += _section(card, 3, documented, _card_example(card))
    lines += ["### Parts of tool cards", ""]
    for part in card_parts:
        lines += _section(part, 4, documented, None)
    return "\n".join(lines).rstrip("\n") + "\n"


def check(path: Path) -> bool:
    """Whether the file at ``path`` is the page as :func:`render` makes it now."""
    return path.is_file() and path.read_text(encoding="utf-8") == render()


def main(argv: list[str] | None = None) -> int:
    """``[--write PATH | --check PATH]``: print, write, or check the page."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--write":
        Path(args[1]).write_text(render(), encoding="utf-8")
        print(f"wrote {args[1]}")
        return 0
    if len(args) == 2 and args[0] == "--check":
        if check(Path(args[1])):
            return 0
        print(f"{args[1]} is stale: regenerate it with python3 dev.py docs", file=sys.stderr)
        return 1
    if args:
        print("usage: python -m akgentic.team.reference [--write PATH | --check PATH]")
        return 2
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
