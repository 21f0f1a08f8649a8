"""TeamCard: a team composed once, in Python or in YAML.

A card names the team, its members (a tree: a member's ``members`` are created as its
children), how many of each (``headcount``, at most 100; a team has at most 1000
members, each with a name of its own), the profiles the team may hire later, the
member that receives what the person types (``entry_point``), the message classes the
team uses (``message_types``, checked to exist), and the modules to import before
building (``imports``: honoured by :meth:`TeamCard.from_yaml` only — a YAML file is code
the user wrote; a card decoded from storage never imports what it names), and the MCP
servers every agent gets (``mcp_config``: a Claude Desktop ``mcp.json``, relative to the
YAML's folder; see ``akgentic.team.mcp``), and what a newcomer might type first
(``suggestions``: shown by ``akgentic run`` when no ``--message`` is given), and how many
messages agents may send one another in a row since the person last wrote
(``max_agent_hops``: past it, the agent is told to report to the person).

Everything that would fail later is refused when the card is built — an agent class
that is not defined, a prompt template that would not render, two members with one
name, a member name (or ``entry_point``, ``human``) without its ``@`` — and YAML errors
name the file, the line and the field::

    team.yaml:12: members[0].card.config.prompt.tempalte: Extra inputs are not permitted
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import yaml
from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from akgentic.core import (
    AgentCard,
    Message,
    NotUtf8Error,
    YamlShapeError,
    YamlTooLargeError,
    load_yaml,
    read_yaml_file,
    yaml_problem,
    yaml_text,
)
from akgentic.core.agent import actor_class_for
from akgentic.core.agent_card import agent_class_problem
from akgentic.core.excerpt import exception_line, field_errors, validator_words
from akgentic.core.orchestrator import DEFAULT_MAX_AGENT_HOPS
from akgentic.core.serialization import (
    SerializableModel,
    SerializationError,
    registered_class,
)
from akgentic.core.words import module_name_problem
from akgentic.storage import check_team_name
from akgentic.tool.team import HireMembers, TeamTool

__all__ = [
    "MAX_HEADCOUNT",
    "MAX_TEAM_SIZE",
    "MemberSpec",
    "Suggestion",
    "TeamCard",
    "TeamCardError",
    "check_member_name",
    "import_hint",
    "member_names",
    "team_card_errors",
    "team_size",
    "walk",
]

DEFAULT_AGENT_CLASS = "akgentic.agent.agent.BaseAgent"
MAX_HEADCOUNT = 100
"""The most copies one member spec makes."""
MAX_TEAM_SIZE = 1000
"""The most members a card's tree creates (each member is an actor, a thread)."""


class DuplicateMemberError(ValueError):
    """Two members the card creates have one name (``name``); a YAML card says it at the
    second one's line."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"two members are named {name}: give each member a name of its own "
            f"(a headcount of n names the copies {name}-1 ... {name}-n)"
        )
        self.name = name


class TeamCardError(ValueError):
    """A team card that cannot be read; the message names file, line and field."""


class MemberSpec(SerializableModel):
    """``headcount`` copies of ``card``; each copy creates ``members`` as its children.

    With a headcount above one, the copies are named ``@Name-1``, ``@Name-2``...
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    card: AgentCard = Field(description="The member: its role, agent class and config.")
    headcount: int = Field(
        default=1,
        ge=1,
        le=MAX_HEADCOUNT,
        description=f"How many copies (at most {MAX_HEADCOUNT}), named @Name-1, @Name-2...",
    )
    members: list[MemberSpec] = Field(
        default_factory=list, description="Members each copy creates as its children."
    )

    @field_validator("card", mode="before")
    @classmethod
    def _default_agent_class(cls, value: Any) -> Any:  # BaseAgent, unless the card says
        if isinstance(value, dict) and "agent_class" not in value:
            return {**value, "agent_class": DEFAULT_AGENT_CLASS}
        return value

    @field_validator("card")
    @classmethod
    def _member_name_has_at(cls, value: AgentCard) -> AgentCard:
        if value.config.name:  # empty: named @role
            check_member_name(value.config.name)
        return value


class Suggestion(SerializableModel):
    """A message worth typing to this team, and what it shows (the tools it puts to work)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="What to type.")
    shows: str = Field(default="", description="What it shows: the tools it puts to work.")


class TeamCard(SerializableModel):
    """A team's composition; see the module docstring."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="The team's name (teams list, show).")
    description: str = Field(default="", description="One line on what the team does.")
    entry_point: str = Field(
        min_length=1, description="The member that receives what the person types."
    )
    members: list[MemberSpec] = Field(
        min_length=1,
        description=f"The members, a tree (at most {MAX_TEAM_SIZE} in all, each named once).",
    )
    profiles: list[AgentCard] = Field(
        default_factory=list,
        description="Roles the team may hire later (TeamTool's hire_members); agent_class "
        "defaults to BaseAgent.",
    )
    message_types: list[str] = Field(
        default_factory=list,
        description="Dotted paths of the Message classes the team uses; each must exist.",
    )
    human: str | None = Field(
        default="@Human", description="The person's name in the team; null: no person."
    )
    imports: list[str] = Field(
        default_factory=list,
        description="Modules to import before the card is read (your own cards, agents, "
        "messages); honoured in YAML files only, never from stored data. A card an installed "
        "distribution declares (an akgentic.tools entry point) needs none.",
    )
    mcp_config: str | None = Field(
        default=None,
        description="A Claude Desktop mcp.json, relative to the YAML's folder: every agent "
        "gets its servers' tools.",
    )
    suggestions: list[Suggestion] = Field(
        default_factory=list,
        description="What a newcomer might type first: akgentic run prints them when no "
        "--message is given.",
    )
    max_agent_hops: int | None = Field(
        default=DEFAULT_MAX_AGENT_HOPS,
        ge=1,
        description="The most messages agents send one another in a row since the person (or "
        "a program: the API, the CLI) last wrote; the agent that would send one more is told "
        "to stop and report to the person, and the team's stream says why (a warning). A "
        "person's message starts the count again. null: no bound (two agents answering each "
        "other would do so for ever). A whole number, 1 or more: a boolean is refused.",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_class_first(cls, data: Any) -> Any:
        # BaseAgent, the default member class, must exist before configs validate. The
        # card's own ``imports`` are done by from_yaml only: a card decoded from stored
        # data never imports what the data names.
        importlib.import_module("akgentic.agent")
        return data

    @field_validator("max_agent_hops", mode="before")
    @classmethod
    def _hops_not_a_bool(cls, value: Any) -> Any:
        """``true`` is no count of messages (pydantic's lax int took it as 1: every agent
        stopped at its first message to another)."""
        if isinstance(value, bool):
            raise ValueError(
                "a boolean is not a count: give a whole number of messages, 1 or more "
                "(null: no bound)"
            )
        return value

    @field_validator("name")
    @classmethod
    def _printable_name(cls, value: str) -> str:
        """The team takes the card's name: the store's rule, checked here so the error
        names the card's file and line (a YAML block scalar ends in a newline)."""
        return check_team_name(value)

    @field_validator("entry_point", "human")
    @classmethod
    def _names_a_member(cls, value: str | None) -> str | None:
        return value if value is None else check_member_name(value)

    @field_validator("profiles")
    @classmethod
    def _profile_names_have_at(cls, value: list[AgentCard]) -> list[AgentCard]:
        for profile in value:
            if profile.config.name:
                check_member_name(profile.config.name)
        return value

    @field_validator("profiles", mode="before")
    @classmethod
    def _default_profile_class(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [
                {**v, "agent_class": DEFAULT_AGENT_CLASS}
                if isinstance(v, dict) and "agent_class" not in v
                else v
                for v in value
            ]
        return value

    @field_validator("message_types")
    @classmethod
    def _message_types_exist(cls, value: list[str]) -> list[str]:
        for path in value:
            try:
                found = registered_class(path)
            except SerializationError:
                raise ValueError(
                    f"message type {path!r} is not defined: import its module first "
                    f"(a YAML card can list it under imports)"
                ) from None
            if not (isinstance(found, type) and issubclass(found, Message)):
                raise ValueError(f"message type {path!r} is not a Message subclass")
        return value

    @model_validator(mode="after")
    def _members_are_sound(self) -> TeamCard:
        size = team_size(self.members)  # counted before the names are listed
        if size > MAX_TEAM_SIZE:
            raise ValueError(
                f"the members' tree creates {size} members; a team has at most "
                f"{MAX_TEAM_SIZE} (lower the headcounts, or list fewer members)"
            )
        names = member_names(self.members)
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise DuplicateMemberError(name)
            seen.add(name)
        if self.human is not None and self.human in seen:
            raise ValueError(f"human {self.human!r} is also a member: rename one of them")
        if self.entry_point not in seen:
            raise ValueError(
                f"entry_point {self.entry_point!r} is not a member; members are {', '.join(names)}"
            )
        for name, spec, _ in walk(self.members):
            if (problem := spec.card.agent_class_problem()) is not None:
                raise ValueError(f"member {name}: {problem}")
        for profile in self.profiles:
            if (problem := profile.agent_class_problem()) is not None:
                raise ValueError(f"profile {profile.role}: {problem}")
        return self

    @classmethod
    def from_yaml(cls, path: str | Path) -> TeamCard:
        """Read a card from a YAML file; errors name the file, the line and the field."""
        path = Path(path)
        try:
            raw = read_yaml_file(path)
        except YamlTooLargeError as exc:
            raise TeamCardError(f"{path}: {exc}") from None
        except OSError as exc:
            raise TeamCardError(f"{path}: cannot read the team card: {exc.strerror}") from None
        try:
            text = yaml_text(raw, "card")
        except NotUtf8Error as exc:
            raise TeamCardError(f"{path}:{exc.line}: {exc}") from None
        try:
            data = load_yaml(text)
        except YamlShapeError as exc:
            raise TeamCardError(f"{path}: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            raise TeamCardError(f"{path}{line}: not valid YAML: {yaml_problem(exc)}") from None
        node = yaml.compose(text)  # the text read: its lines, for the errors that follow
        if not isinstance(data, dict):
            what = "the file is empty" if data is None else f"it holds a {_yaml_kind(data)}"
            raise TeamCardError(
                f"{path}: {what}: a team card is a mapping of name, entry_point and members "
                f"(see docs/team-cards.md)"
            )
        imports = data.get("imports") or []
        for index, module in enumerate(imports if isinstance(imports, list) else []):
            problem = _import_problem(str(module), path)
            if problem is not None:
                raise TeamCardError(_line(path, node, ("imports", index), problem))
        try:
            card = cls.model_validate(data)
        except ValidationError as exc:  # said in the file's order, one line each
            for error in exc.errors():
                duplicate = (error.get("ctx") or {}).get("error")
                if isinstance(duplicate, DuplicateMemberError):  # at the second one's line
                    at = _second_named(data.get("members"), duplicate.name)
                    raise TeamCardError(_line(path, node, at, str(duplicate))) from None
            found = sorted(team_card_errors(data, exc), key=lambda e: _line_number(node, e[0]))
            raise TeamCardError("\n".join(_line(path, node, *error) for error in found)) from None
        if (duplicate := card.duplicate_profile()) is not None:
            index, problem = duplicate
            raise TeamCardError(_line(path, node, ("profiles", index, "role"), problem))
        if (unknown := card.unknown_hire_role()) is not None:
            raise TeamCardError(_line(path, node, *unknown))
        # the real file's folder: a card linked from elsewhere reads the files beside it
        card.resolve_paths(path.resolve().parent)
        return card

    def unknown_hire_role(self) -> tuple[tuple[Any, ...], str] | None:
        """The first role a ``TeamTool``'s ``hire_members.roles`` lists that no profile
        of this card has, as ``(where, why)``: a YAML card registers no profile but its
        own, so such a role could never be hired — the agent would be told it may hire
        what does not exist. None when every listed role is a profile's."""
        known = [profile.role for profile in self.profiles]
        configs: list[tuple[tuple[Any, ...], Any]] = [
            (("profiles", index, "config"), profile.config)
            for index, profile in enumerate(self.profiles)
        ]

        def members(specs: list[MemberSpec], at: tuple[Any, ...]) -> None:
            for index, spec in enumerate(specs):
                configs.append(((*at, index, "card", "config"), spec.card.config))
                members(spec.members, (*at, index, "members"))

        members(self.members, ("members",))
        for at, config in configs:
            for number, tool in enumerate(getattr(config, "tools", None) or []):
                hire = tool.hire_members if isinstance(tool, TeamTool) else None
                for index, role in enumerate(
                    (hire.roles or []) if isinstance(hire, HireMembers) else []
                ):
                    if role not in known:
                        listed = ", ".join(known) or "none"
                        return (*at, "tools", number, "hire_members", "roles", index), (
                            f"no profile of this card has role {role!r}, so it could never "
                            f"be hired: add a profile of that role under profiles, or leave "
                            f"it out (the profiles' roles: {listed})"
                        )
        return None

    def duplicate_profile(self) -> tuple[int, str] | None:
        """The first profile whose role an earlier one has, as ``(its index, why)``; None
        when every role is listed once. The team registers profiles by role, a later one
        replacing the earlier, so a repeated role would drop a profile without a word. A
        new team (:meth:`from_yaml`, ``TeamManager.create_team``) is refused for it; a
        stored card is not, so a team kept before this check still resumes."""
        first: dict[str, int] = {}
        for index, profile in enumerate(self.profiles):
            if profile.role in first:
                return index, (
                    f"profiles[{first[profile.role]}] already has role {profile.role!r}: a "
                    f"team hires by role, so give each profile a role of its own"
                )
            first[profile.role] = index
        return None

    def configs(self) -> list[Any]:
        """Every member spec's config (once per spec, whatever its headcount), parents
        first, then every profile's: the objects a team's members are built from."""
        found: list[Any] = []

        def visit(specs: list[MemberSpec]) -> None:
            for spec in specs:
                found.append(spec.card.config)
                visit(spec.members)

        visit(self.members)
        return found + [profile.config for profile in self.profiles]

    def resolve_paths(self, base: Path) -> None:
        """Relative scenario paths in member configs, a relative ``mcp_config``, relative
        skill folders and the folder an MCPTool's stdio server runs in are relative to
        ``base`` (the folder of the YAML file, a symbolic link followed to the file it
        names) unless a config names its own ``scenario_dir``."""
        from akgentic.team.mcp import resolve_server_folders
        from akgentic.team.skills import resolve_skill_folders

        if self.mcp_config and not Path(self.mcp_config).is_absolute():
            self.mcp_config = str((base / self.mcp_config).resolve())
        for config in self.configs():
            if getattr(config, "scenario_dir", "unset") is None:
                config.scenario_dir = str(base.resolve())
            resolve_skill_folders(config, base)
            resolve_server_folders(config, base)


def _yaml_kind(data: object) -> str:
    """What a YAML document that is no mapping holds, in YAML's words."""
    if isinstance(data, list):
        return "list"
    if isinstance(data, str):
        return "string"
    return "single value"


def check_member_name(name: str) -> str:
    """``name`` when it is a member's address name: the team addresses its members as
    ``@Name`` (``akgentic.core.address.address_name``: ``#`` is a tool actor's), so a name
    without the ``@`` would be created but never reached; a ``ValueError`` otherwise."""
    if not name.startswith("@"):
        raise ValueError(f"name {name!r} must start with @ (write {'@' + name.lstrip('#')!r})")
    return name


def team_size(members: list[MemberSpec]) -> int:
    """How many members the tree creates, counted without listing them."""
    return sum(spec.headcount * (1 + team_size(spec.members)) for spec in members)


def member_names(members: list[MemberSpec]) -> list[str]:
    """Every member name the tree creates, parents before children."""
    return [name for name, _, _ in walk(members)]


def walk(
    members: list[MemberSpec], parent: str | None = None
) -> Iterator[tuple[str, MemberSpec, str | None]]:
    """(name, spec, parent name) for each member the tree creates, parents first."""
    for spec in members:
        base = spec.card.config.name or f"@{spec.card.role}"
        names = (
            [base] if spec.headcount == 1 else [f"{base}-{i}" for i in range(1, spec.headcount + 1)]
        )
        for name in names:
            yield name, spec, parent
            yield from walk(spec.members, name)


def _import_problem(module: str, card_path: Path) -> str | None:
    """Why ``module`` (a card's ``imports`` entry) does not import, None when it does. An
    import runs the module's code, which may raise anything (a ``SyntaxError``, its own
    ``RuntimeError``), and a name like ``""`` or ``".x"`` is refused with a ``ValueError``
    or a ``TypeError``: each is the card's error, never one escaping its reader (a cards
    folder's server would stop on it instead of skipping the card); a file's path given
    for a module says which name to give instead."""
    if (problem := module_name_problem(module)) is not None:
        return problem
    try:
        importlib.import_module(module)
    except ImportError as exc:
        return f"cannot import {module!r}: {exc}{import_hint(module, exc, card_path)}"
    except Exception as exc:
        return f"cannot import {module!r}: {exception_line(exc)}"
    return None


def import_hint(module: str, exc: ImportError, card_path: Path | None = None) -> str:
    """What to do when ``module``'s own package is not on ``sys.path`` (``" — …"``), or
    "" when it was found and failed on its own. ``card_path``: the card that named it,
    whose folder is the likely home of a module beside it."""
    top = module.split(".", 1)[0]
    if not isinstance(exc, ModuleNotFoundError) or exc.name != top:
        return ""  # found, but it (or one of its own imports) failed: the error says why
    folder = card_path.resolve().parent if card_path is not None else None
    if folder is not None and ((folder / top).is_dir() or (folder / f"{top}.py").is_file()):
        return (
            f" — {top} is beside this card, but Python looks on sys.path: run akgentic "
            f"from {folder}, or set PYTHONPATH={folder}"
        )
    return (
        f" — Python looks on sys.path: run from the folder holding {top}, or add that "
        f"folder to PYTHONPATH"
    )


def _second_named(members: Any, name: str) -> tuple[Any, ...]:
    """Where, in a card's data, the second member named ``name`` is written (its
    ``config.name``, or its ``role`` when that makes the name): the members' tree walked
    as :func:`walk` walks it, headcounts and all. ``()`` — the card itself — when the
    data does not say it as written (a name the card's checks rewrote)."""

    def named(nodes: Any, loc: tuple[Any, ...]) -> Iterator[tuple[str, tuple[Any, ...]]]:
        for index, spec in enumerate(nodes if isinstance(nodes, list) else []):
            if not isinstance(spec, dict):
                continue
            card: dict[str, Any] = spec["card"] if isinstance(spec.get("card"), dict) else {}
            config: dict[str, Any] = card["config"] if isinstance(card.get("config"), dict) else {}
            written = config.get("name")
            at = (*loc, index, "card", *(("config", "name") if written else ("role",)))
            base = written or f"@{card.get('role')}"
            count = spec.get("headcount", 1)
            copies = [base] if count == 1 else [f"{base}-{i}" for i in range(1, count + 1)]
            for copy in copies:
                yield copy, at
                yield from named(spec.get("members"), (*loc, index, "members"))

    places = [at for each, at in named(members, ("members",)) if each == name]
    return places[1] if len(places) > 1 else ()


def _line_number(root: yaml.Node | None, loc: tuple[Any, ...]) -> int:
    """The line (from 1) of the deepest YAML node along ``loc``; 0 when there is none."""
    node = _node_at(root, loc)
    return node.start_mark.line + 1 if node is not None else 0


def _line(path: Path, root: yaml.Node | None, loc: tuple[Any, ...], msg: str) -> str:
    """``team.yaml:12: members[0].card.config.name: <what is wrong>``; a check of the whole
    card names no field, and a validator's words come without pydantic's "Value error, "."""
    number = _line_number(root, loc)
    line = f":{number}" if number else ""
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return f"{path}{line}: {f'{field}: ' if field else ''}{validator_words(msg)}"


def team_card_errors(data: Any, exc: ValidationError) -> list[tuple[tuple[Any, ...], str]]:
    """Why ``data`` is no team card (``exc``: ``TeamCard``'s refusal of it), each error at
    its full path, all of them at once: a member's config checked with its own agent
    class's config class (``members.0.card.config.tools.1.max_results``, a misspelt key
    with the field it was likely meant to be), an agent class that is not defined, then the
    card's other errors (:func:`field_errors`). What the card's own refusal says again at a
    shorter path is left out: everything under a member card whose config was refused (its
    config check stops the card's validation), and, for a class that is not defined or no
    agent, the card's refusal at the card itself and the team's sentence on it. How a card
    is said, from a YAML file or posted to the server."""
    found = list(_config_errors(data)) if isinstance(data, dict) else []
    configs = {card for card, loc, _ in found if loc[len(card) : len(card) + 1] == ("config",)}
    classes = {(card, msg) for card, loc, msg in found if loc[len(card) :] == ("agent_class",)}

    def said_already(loc: tuple[Any, ...], msg: str) -> bool:
        return any(loc[: len(card)] == card for card in configs) or any(
            loc == card or (not loc and msg.endswith(problem)) for card, problem in classes
        )

    rest = [
        (loc, msg) for loc, msg in field_errors(TeamCard, exc, data) if not said_already(loc, msg)
    ]
    return [(loc, msg) for _, loc, msg in found] + rest


_Error = tuple[tuple[Any, ...], tuple[Any, ...], str]
"""(a card's path, an error's path under it, what is wrong), as :func:`_config_errors` says."""


def _config_errors(data: dict[str, Any]) -> Iterator[_Error]:
    """Check each member's and profile's agent class, and validate its config with that
    class's config class, so an error keeps its full path
    (``members[0].card.config.prompt``) and so its line: ``(the card's path, the error's
    path — the card's, then ``agent_class`` or ``config`` —, what is wrong)``."""
    importlib.import_module("akgentic.agent")

    def cards(members: Any, loc: tuple[Any, ...]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
        if not isinstance(members, list):
            return
        for i, member in enumerate(members):
            if isinstance(member, dict):
                yield member.get("card"), (*loc, i, "card")
                yield from cards(member.get("members"), (*loc, i, "members"))

    found = list(cards(data.get("members"), ("members",)))
    profiles = data.get("profiles")
    if isinstance(profiles, list):
        found += [(p, ("profiles", i)) for i, p in enumerate(profiles)]
    for card, loc in found:
        if not isinstance(card, dict):
            continue
        path = card.get("agent_class", DEFAULT_AGENT_CLASS)
        if not isinstance(path, str):  # the card's own validation says what it should be
            continue
        problem = agent_class_problem(path)
        if problem is not None:
            yield loc, (*loc, "agent_class"), problem
            continue
        if not isinstance(card.get("config"), dict):
            continue
        agent_class = actor_class_for(path)
        try:
            agent_class.config_class.model_validate(card["config"])
        except ValidationError as exc:
            for where, msg in field_errors(agent_class.config_class, exc, card["config"]):
                yield loc, (*loc, "config", *where), msg
            yield from _card_errors({**card, "agent_class": path}, loc)


def _card_errors(card: dict[str, Any], loc: tuple[Any, ...]) -> Iterator[_Error]:
    """A member card's own mistakes (a misspelt key, a missing role), said beside its
    config's: the card's validation stops at a config it refuses, so they are found by
    validating the card without it (its class's defaults)."""
    rest = {key: value for key, value in card.items() if key != "config"}
    try:
        AgentCard.model_validate(rest)
    except ValidationError as exc:
        for where, msg in field_errors(AgentCard, exc, rest):
            # the defaults refused (at the config, or the card's sentence on building
            # them): the config's own errors say why
            if where and where[:1] != ("config",):
                yield loc, (*loc, *where), msg
    except Exception:  # a class whose defaults do not build: its config's errors say enough
        return


def _node_at(root: yaml.Node | None, loc: tuple[Any, ...]) -> yaml.Node | None:
    """The deepest YAML node along ``loc`` (for its line number). A field name met at a
    list is the wrapper a validator put around it (a roster written as the list of its
    models is ``models.models``): the path goes on into the list."""
    node = root
    found = root
    for part in loc:
        if isinstance(node, yaml.SequenceNode) and isinstance(part, str):
            continue
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        else:
            break
        found = node
    return found
