"""What a posted card may reach on the server host: nothing the operator did not allow.

A card posted to ``POST /teams`` (``card`` as JSON, or ``card_yaml``) is data from a
client, not code from the operator. It composes agents, prompts, models and the shipped
tools freely, and the team it makes lives in the server's storage and workspaces like any
other; but a few fields of a card reach past the team into the host, and a posted card may
carry them only when the operator allows that reach (``akgentic serve --allow-posted
REACH``, :attr:`ServerSettings.allow_posted`):

- ``processes`` — a command the server would start: an MCPTool over stdio
  (``connection.stdio_command``), and an ``mcp_config`` file outside the cards folders
  (its servers are started for every agent).
- ``paths`` — a server file or folder outside the cards folders: a scripted scenario
  (``scripted:<file>``, resolved against ``scenario_dir`` or the server's working folder),
  SkillTool ``folders``, ``mcp_config``, a local embedding model's folder.
- ``endpoints`` — where the server sends requests, and which of its environment variables
  it sends: a model's ``base_url`` and ``api_key_env``, an MCP server over HTTP (its URL and
  headers may expand ``${VAR}`` from the server's environment), SearchTool's
  ``api_base_url`` and ``api_key_env``, an embeddings ``base_url``, and ``network`` for
  workspace commands. An ``openai-compatible`` or ``ollama`` ``base_url`` is one too: the
  request leaves from the server's network, so a posted URL could reach hosts only the
  server sees.

The **cards folders** are the operator's: the folders named with ``--cards``
(:meth:`CardRegistry.folders`), and every file and folder a registered card reads itself
(its scenarios, skill folders, ``mcp_config``: :meth:`PostedCardPolicy.for_cards`). A
posted card may read there — scenarios, skills, an ``mcp.json`` and so start the servers
it lists — which is what ``akgentic run CARD.yaml --server URL`` needs for a card kept in
the server's cards folder. A card file named alone (``--cards card.yaml``) opens only
what that card reads, not its whole folder.

A registered card (posted by its name) is the operator's and is not checked; the ``model``
a request overrides every member's roster with is, on any card (a ``scripted:`` file is a
path). A refusal is :class:`PostedCardRefusedError` (answered 403), naming every field and the
``--allow-posted`` value that would let it through.

What this does not check: workspace trees (``WorkspaceTool``), which live under the
server's workspace root — the server's data, not the host's files; a posted card may name
a shared tree (``workspace_id``) as the server's own teams do — and whose
``workspace_exec`` commands run in the sandbox only, on its allowlist; catalog instances a
card names (the operator configured them); the fields of the card classes the server
started with beyond the shipped ones (those the operator's ``--cards`` and ``--import``
loaded: the operator's to vouch for), which this policy does not know.

- ``cards`` — a tool card of a class loaded after the server started: an installed
  distribution's, loaded since by the catalog's discovery (it loads every
  ``akgentic.tools`` entry point) or by reading back a stored team made of it. Its fields
  may reach anything, and this policy knows only the shipped cards'. The classes a server
  started with are taken once, when its app is made (:attr:`PostedCardPolicy.started`).
  A card that names such a class is not even read (the server reads names among the
  classes it started with: a 422); this check catches the one spelling that carries the
  class itself, the framework's JSON form (``__model__``).
  A posted card never makes the server load a distribution itself.

A team is checked when it is created: a resume rebuilds the card the server accepted
then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

from akgentic.agent import AgentConfig
from akgentic.llm import ModelConfig, ModelRoster
from akgentic.server.cards import CardError
from akgentic.team import TeamCard
from akgentic.tool import ToolCard
from akgentic.tool.mcp import MCPHTTPConnectionConfig, MCPStdioConnectionConfig
from akgentic.tool.search import SearchTool
from akgentic.tool.skill import Skills
from akgentic.tool.vector_store import EmbeddingConfig
from akgentic.tool.workspace import WorkspaceExec

__all__ = ["REACHES", "PostedCardPolicy", "PostedCardRefusedError", "Reach", "Reaching", "reaching"]

Reach = Literal["processes", "paths", "endpoints", "cards"]
REACHES: tuple[Reach, ...] = get_args(Reach)

_WHAT: dict[Reach, str] = {
    "processes": "starts a process on the server",
    "paths": "reads a server path outside the cards folders",
    "endpoints": "chooses where the server sends requests or which of its variables it sends",
    "cards": "uses a card class loaded after the server started, whose fields this policy "
    "does not know",
}

SHOWN = 5
"""How many refused fields a refusal lists."""


@dataclass(frozen=True)
class Reaching:
    """One field of a card that reaches the host: where it is, how, and what it names;
    ``path`` is the server path it reads (when it is in the cards folders, the field is
    the operator's to give: it passes)."""

    where: str
    reach: Reach
    what: str
    path: Path | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.where} {_WHAT[self.reach]} ({self.what}; --allow-posted {self.reach})"


class PostedCardRefusedError(CardError):
    """A posted card (or model override) reaching past the team further than allowed."""

    def __init__(self, refused: Sequence[Reaching], *, posted: bool = True) -> None:
        """``posted``: the card was posted; else only the request's ``model`` override of a
        registered card reaches (the message then does not ask to register the card)."""
        self.refused = list(refused)
        shown = "; ".join(str(r) for r in refused[:SHOWN])
        more = f" (and {len(refused) - SHOWN} more)" if len(refused) > SHOWN else ""
        reaches = " ".join(
            f"--allow-posted {r}" for r in REACHES if any(x.reach == r for x in refused)
        )
        classes = (
            " or start it with the card class's module (--import MODULE)"
            if any(x.reach == "cards" for x in refused)
            else ""
        )
        if not posted:
            super().__init__(
                f"the request's model may not reach the server host: {shown}{more}. Give a "
                f"model without a server path (a scenario in the card's folder), or let "
                f"requests do this (akgentic serve {reaches})"
            )
            return
        super().__init__(
            f"a posted card is data and may not reach the server host: {shown}{more}. "
            f"Register the card with the server (akgentic serve --cards){classes}, or let "
            f"posted cards do this (akgentic serve {reaches})"
        )


@dataclass(frozen=True)
class PostedCardPolicy:
    """What posted cards may reach (``allowed``), where they may read (``folders``:
    folders and files, resolved), and the card classes the server started with
    (``started``: any other is the ``cards`` reach; None: every class passes)."""

    allowed: frozenset[Reach] = frozenset()
    folders: tuple[Path, ...] = field(default=())
    started: frozenset[type[ToolCard]] | None = None

    @classmethod
    def for_cards(
        cls,
        allowed: Iterable[Reach],
        folders: Iterable[Path],
        cards: Iterable[TeamCard],
        started: frozenset[type[ToolCard]] | None = None,
    ) -> PostedCardPolicy:
        """The policy of a server whose cards folders are ``folders``, whose registered
        cards are ``cards`` (what those cards read is the operator's too) and which
        started with the card classes ``started``."""
        read = [r.path for card in cards for r in reaching(card) if r.path is not None]
        found = [p.resolve() for p in [*folders, *read]]
        return cls(frozenset(allowed), tuple(dict.fromkeys(found)), started)

    def check(self, card: TeamCard, *, posted: bool, model: str | None = None) -> None:
        """Refuse a posted ``card`` reaching further than allowed, and a ``model``
        override (on any card) naming a scenario outside the cards folders."""
        found = reaching(card, self.started) if posted else []
        if model is not None:
            found += _model_override(card, model)
        refused = [
            r
            for r in dict.fromkeys(found)
            if r.reach not in self.allowed and not (r.path is not None and self._inside(r.path))
        ]
        if refused:
            raise PostedCardRefusedError(refused, posted=posted)

    def _inside(self, path: Path) -> bool:
        real = path.resolve()
        return any(real.is_relative_to(folder) for folder in self.folders)


def reaching(card: TeamCard, started: frozenset[type[ToolCard]] | None = None) -> list[Reaching]:
    """Every field of ``card`` that reaches the host (see the module docstring); with
    ``started``, every tool card of a class not among them too (the ``cards`` reach)."""
    return list(_walk(card, "", None, started))


def _walk(
    node: Any, where: str, base: str | None, started: frozenset[type[ToolCard]] | None
) -> Iterator[Reaching]:
    """The fields under ``node`` that reach the host; ``base`` is the scenario folder of
    the agent config being walked."""
    if isinstance(node, list | tuple):
        for i, item in enumerate(node):
            yield from _walk(item, f"{where}[{i}]", base, started)
        return
    if isinstance(node, dict):
        for key, item in node.items():
            yield from _walk(item, f"{where}.{key}", base, started)
        return
    if not isinstance(node, BaseModel):
        return
    if isinstance(node, AgentConfig):
        base = node.scenario_dir
    if started is not None and isinstance(node, ToolCard) and type(node) not in started:
        cls = type(node)
        yield Reaching(where, "cards", f"{cls.__module__}.{cls.__qualname__}")
    yield from _fields_of(node, where, base)
    for name in type(node).model_fields:
        yield from _walk(getattr(node, name), _join(where, name), base, started)


def _fields_of(node: BaseModel, where: str, base: str | None) -> Iterator[Reaching]:
    def at(name: str) -> str:
        return _join(where, name)

    if isinstance(node, TeamCard) and node.mcp_config:
        path = Path(node.mcp_config)
        yield Reaching(at("mcp_config"), "paths", node.mcp_config, path)
        yield Reaching(at("mcp_config"), "processes", "the servers of that file", path)
    elif isinstance(node, MCPStdioConnectionConfig):
        yield Reaching(at("stdio_command"), "processes", node.stdio_command)
    elif isinstance(node, MCPHTTPConnectionConfig):
        yield Reaching(at("url"), "endpoints", node.url)
    elif isinstance(node, ModelConfig):
        yield from _model(node, where, base)
    elif isinstance(node, SearchTool):
        if node.api_base_url is not None:
            yield Reaching(at("api_base_url"), "endpoints", node.api_base_url)
        if node.api_key_env != SearchTool.model_fields["api_key_env"].default:
            yield Reaching(at("api_key_env"), "endpoints", node.api_key_env)
    elif isinstance(node, EmbeddingConfig):
        if node.base_url is not None:
            yield Reaching(at("base_url"), "endpoints", node.base_url)
        if node.provider == "local" and node.model:
            yield Reaching(at("model"), "paths", node.model, Path(node.model))
    elif isinstance(node, Skills):
        for i, folder in enumerate(node.folders or ()):
            yield Reaching(f"{at('folders')}[{i}]", "paths", folder, Path(folder))
    elif isinstance(node, WorkspaceExec) and node.network:
        yield Reaching(at("network"), "endpoints", "network access for commands")


def _model(config: ModelConfig, where: str, base: str | None) -> Iterator[Reaching]:
    if config.base_url is not None:
        yield Reaching(_join(where, "base_url"), "endpoints", config.base_url)
    if config.api_key_env is not None:
        yield Reaching(_join(where, "api_key_env"), "endpoints", config.api_key_env)
    if config.provider == "scripted" and config.model != "default":
        path = Path(config.model)
        if base is not None and not path.is_absolute():
            path = Path(base) / path
        yield Reaching(_join(where, "model"), "paths", f"scripted:{config.model}", path)


def _model_override(card: TeamCard, spec: str) -> list[Reaching]:
    """What a ``model`` override reaches, on every agent of ``card``."""
    try:
        roster = ModelRoster.from_spec(spec)
    except ValueError:
        return []  # not a roster: the team's creation says why
    found: list[Reaching] = []
    for config in card.configs():
        base = config.scenario_dir if isinstance(config, AgentConfig) else None
        for model in roster.models:
            found += _model(model, "model", base)
    return found


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
