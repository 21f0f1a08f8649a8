"""The HTTP API's bodies: what ``akgentic.server`` answers and ``AkgenticClient`` reads.

They are the contract between the two, so they live here, beside the client (which needs
no web framework), and the server imports them. Request bodies forbid unknown fields, so
a misspelt field is a 422 naming it, never silently ignored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    model_validator,
)

from akgentic.core.surrogates import replace_lone_surrogates
from akgentic.storage import check_team_name

__all__ = [
    "NO_TOOL_ACTOR",
    "TEAM_NOT_FOUND",
    "TEAM_NOT_RUNNING",
    "TEAM_STOPPING",
    "TOOL_STATE_UNREADABLE",
    "Accepted",
    "CardInfo",
    "CreateTeam",
    "ErrorBody",
    "Health",
    "HistoryPage",
    "Interrupted",
    "MemberInfo",
    "PostCommand",
    "PostMessage",
    "RenameTeam",
    "ResumeTeam",
    "StopInProgress",
    "TeamInfo",
    "TeamNotice",
    "TeamPage",
    "ToolStateView",
    "WireEvent",
]

MAX_CONTENT = 200_000
"""Characters one message may carry."""


TeamName = Annotated[
    str,
    Field(min_length=1, max_length=200, description="The team's title: printable text."),
    AfterValidator(check_team_name),
]
"""A team's name as a request gives it: the store's rule (no control characters), checked
before anything starts, so a refused name is a 422 and never a team half made."""


TEAM_NOT_FOUND = "team_not_found"
"""The ``code`` of a 404 that says the server has no team with that id (never created, or
purged). A client tells it from a 404 of a route the server does not have (a wrong base
URL, a proxy in between, a server of another version), whose body has no ``code``."""
TEAM_NOT_RUNNING = "team_not_running"
"""The code of the 409 that refuses a message, a command or an interrupt for a team that is
not running (stopped, or stopped while the message was on its way; not one another process
runs): nothing was sent; resume the team, then send again. ``RemoteTeam.ask`` raises
``NoReplyError`` for it, in the client's words."""
TEAM_STOPPING = "team_stopping"
"""The code of a resume's 409 (``ResumeTeam.wait_for_stop`` false) for a team whose stop is
in progress: nothing was resumed; ask again once ``TeamInfo.stopping`` is null."""
NO_TOOL_ACTOR = "no_tool_actor"
"""The code of a tool state's 404 (``GET /teams/{id}/state/{tool}``) for a tool actor the
team does not have: ``detail`` names the ones it has. ``RemoteTeam.tool_state`` raises
``akgentic.team.UnknownToolError`` for it, as ``TeamRuntime.tool_state`` does."""
TOOL_STATE_UNREADABLE = "tool_state_unreadable"
"""The code of a tool state's 422 (``GET /teams/{id}/state/{tool}``) for a tool actor of the
team whose state the server cannot rebuild (its deltas are logged, but no reducer and no
snapshot that decodes there): ``detail`` says what to import. ``RemoteTeam.tool_state``
raises ``akgentic.team.UnreadableToolStateError`` for it, as ``TeamRuntime.tool_state``
does."""


class ErrorBody(BaseModel):
    """Every error answer's body. ``detail`` says what went wrong and what to do; ``code``,
    on the errors a client acts on, is stable across versions (the words of ``detail``
    are not): :data:`TEAM_NOT_FOUND`, :data:`TEAM_NOT_RUNNING`, :data:`TEAM_STOPPING`,
    :data:`NO_TOOL_ACTOR`, :data:`TOOL_STATE_UNREADABLE`. A 422 refusing the request's
    fields adds ``errors``, one per invalid field."""

    detail: str
    code: str | None = Field(
        default=None,
        description=(
            "A stable code: 'team_not_found' (404: no team has this id), 'team_not_running' "
            "(409: a message, command or interrupt for a stopped team: nothing was sent; "
            "resume it first), 'team_stopping' "
            "(409: a resume asked not to wait for the team's stop in progress), 'no_tool_actor' "
            "(404: the team has no such tool actor), 'tool_state_unreadable' (422: the server "
            "cannot rebuild that tool actor's state)."
        ),
    )
    errors: list[dict[str, Any]] | None = None


class _Request(BaseModel):
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")


class Health(BaseModel):
    """``GET /health``: ``ok`` (200), or ``draining`` (503): the server is stopping — it
    stops its teams, refuses new work and still answers reads — and exits once they have
    stopped."""

    status: Literal["ok", "draining"] = "ok"
    version: str
    teams_running: int


class CardInfo(BaseModel):
    """A team card the server knows by name."""

    name: str
    description: str = ""
    entry_point: str
    members: list[str]
    human: str | None = Field(default=None, description="The person's proxy, e.g. '@Human'.")
    source: str = Field(description="Where the server read it (a file path, or 'python').")
    imports: list[str] = Field(
        default_factory=list,
        description="The modules its classes live in (the card's 'imports'): a client "
        "reading its team's messages imports them first, as the server did.",
    )


class CreateTeam(_Request):
    """Create a team from a card: exactly one of ``card`` (a registered card's name, or a
    card as JSON) and ``card_yaml`` (a card as YAML text)."""

    card: str | dict[str, Any] | None = Field(
        default=None, description="A registered card name, or a team card as JSON."
    )
    card_yaml: str | None = Field(default=None, max_length=MAX_CONTENT)
    name: TeamName | None = None
    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="A model roster spec every member gets, e.g. 'scripted:default'.",
    )

    @model_validator(mode="after")
    def _one_card(self) -> CreateTeam:
        if (self.card is None) == (self.card_yaml is None):
            raise ValueError(
                "give exactly one of 'card' (a card name or a card as JSON) and 'card_yaml'"
            )
        return self


class RenameTeam(_Request):
    name: TeamName


class ResumeTeam(_Request):
    """What to do with the turns a crash interrupted: deliver them again, or give them up."""

    # strict: "yes" or 1 is a 422 naming the field, not read as true
    retry_interrupted: StrictBool = False
    dismiss_interrupted: StrictBool = False
    wait_for_stop: StrictBool = Field(
        default=True,
        description=(
            "A team being stopped is resumed once its stop has ended (true), or refused at "
            "once: 409 with code 'team_stopping' (false), for a client that waits itself "
            "(GET /teams/{id}: stopping) and can give the wait up."
        ),
    )


def _encodable(value: Any) -> Any:
    """A body's text with its lone surrogates as U+FFFD (``"\\udce9"`` in the JSON):
    pydantic would refuse it with words no person understands, and a message holding
    one could never be answered (:mod:`akgentic.core.surrogates`)."""
    return replace_lone_surrogates(value) if isinstance(value, str) else value


def _some_text(content: str) -> str:
    """Words for a member: a message with none (empty, or spaces and newlines only) would
    start a model turn about nothing, so both are refused alike."""
    if not content.strip():
        raise ValueError("the message has no text (it is empty or only whitespace): send some text")
    return content


class PostMessage(_Request):
    """The person's words: to the entry point, to ``to`` (a member name), or in answer
    to ``reply_to`` (the id of a message a member sent the person)."""

    content: Annotated[
        str,
        Field(max_length=MAX_CONTENT, json_schema_extra={"pattern": r"\S"}),
        BeforeValidator(_encodable),
        AfterValidator(_some_text),
    ]
    to: str | None = Field(default=None, min_length=1, max_length=200)
    reply_to: UUID | None = None

    @model_validator(mode="after")
    def _one_recipient(self) -> PostMessage:
        if self.to is not None and self.reply_to is not None:
            raise ValueError("give at most one of 'to' and 'reply_to'")
        return self


def _a_command(command: str) -> str:
    """A command as a person types it: ``/`` then its name, no space between (the page
    sends whatever starts with ``/``, so the refusal says what a command looks like)."""
    if len(command) < 2 or command[0] != "/" or command[1].isspace():
        raise ValueError("a command is '/' and its name, with no space between, e.g. /help")
    return command


class PostCommand(_Request):
    """A ``/command`` for a member (the entry point unless ``to`` names another)."""

    command: Annotated[
        str,
        Field(max_length=MAX_CONTENT, json_schema_extra={"minLength": 2, "pattern": r"^/\S"}),
        BeforeValidator(_encodable),
        AfterValidator(_a_command),
    ]
    to: str | None = Field(default=None, min_length=1, max_length=200)


class Accepted(BaseModel):
    """A message accepted into the team: committed to its log at ``seq``."""

    message_id: UUID
    seq: int | None = None
    to: str


class Interrupted(BaseModel):
    members: list[str] = Field(description="The members told to cancel their turn.")


class MemberInfo(BaseModel):
    """One member of a team: who it is, and for agents their model, commands, whether
    they are in a turn now, and their usage."""

    name: str
    role: str
    agent_id: UUID
    kind: Literal["agent", "tool", "human"]
    model: str | None = Field(default=None, description="The model in force, 'provider:model'.")
    commands: list[str] = Field(default_factory=list)
    busy: bool = Field(default=False, description="In a turn now (the team runs here).")
    usage: dict[str, int] = Field(default_factory=dict)


class StopInProgress(BaseModel):
    """A stop of a team in progress: a resume asked now waits for it (at most ``up_to``)."""

    pid: int = Field(description="The process stopping the team (the server's own when it is).")
    host: str = Field(description="The host that process runs on.")
    up_to: float = Field(
        description="How long a resume asked now would wait for the stop at most (seconds): "
        "past it, the resume is a 409 saying the team is still stopping."
    )
    saving: bool = Field(
        default=False,
        description="Its turns have ended: the stop still tries to write the team's last "
        "records, which the store refuses.",
    )


class TeamInfo(BaseModel):
    team_id: UUID
    name: str
    card_name: str
    status: Literal["RUNNING", "STOPPED", "DELETED", "DAMAGED"]
    """DAMAGED: the stored record cannot be read whole (its card, its status, its metadata
    or a time); ``GET /teams/{id}/card`` and a resume say why."""
    running: bool = Field(description="Whether the team runs in this server.")
    created_at: datetime | None
    updated_at: datetime | None
    entry_point: str | None = None
    human: str | None = None
    last_seq: int = 0
    last_activity: datetime | None = Field(
        default=None, description="When the team's last record was written."
    )
    interrupted: list[UUID] = Field(
        default_factory=list,
        description="Messages whose turn a crash or a stop interrupted: a resume offers them "
        "again. Listed for a team running here; for one that is not, by GET /teams/{id} only. "
        "Never a turn a live team is on: for a team another process runs, the turns an "
        "earlier run left, which its next resume offers once it has stopped.",
    )
    out_of_order: dict[UUID, int] = Field(
        default_factory=dict,
        description="For a team running here: the interrupted turns this run delivered again "
        "(retry_interrupted) that could not be redone in their place, each with how many "
        "newer messages its recipient had taken on before it (answered first). A resume "
        "redoes them before the messages queued behind them; a turn the team went on "
        "without (retried on a running team, or left unsettled by an earlier run) comes after.",
    )
    first_seq: int | None = Field(
        default=None,
        description="For a team running here: the seq of the first record its current run "
        "wrote (its creation, or the resume that started it); what that run does is from "
        "there on. A resume that waited for a stop in progress begins after that stop's last "
        "records (the cancel of a grace that ran out, the turn it cut), so following the "
        "answer of POST /teams/{id}/resume from first_seq shows nothing of that stop. A "
        "resume of a team already running (settling its interrupted turns) starts no run: "
        "its first_seq is that run's, from before the resume. None for a team not running "
        "here.",
    )
    max_agent_hops: int | None = Field(
        default=None,
        description="Its card's max_agent_hops: the most messages its agents send one another "
        "in a row since a person last wrote (a Message event's agentHops counts them); null: "
        "no bound.",
    )
    imports: list[str] = Field(
        default_factory=list,
        description="The modules its card names in 'imports': a Python client imports them "
        "(--import) to read the team's messages. Not the modules the server imported for it.",
    )
    stopping: StopInProgress | None = Field(
        default=None,
        description="For one team asked for (GET /teams/{id}): its stop in progress — by this "
        "server, or by another process over the same store — which a resume asked now waits "
        "for (POST /teams/{id}/resume answers once it has ended): who stops it, how long the "
        "resume would wait at most. A client says so, and may wait for it to be null before "
        "asking the resume (its own wait, which it can give up on). Null when no stop is in "
        "progress (a team another process is resuming is not stopping), and in a page of "
        "teams.",
    )


class TeamPage(BaseModel):
    items: list[TeamInfo]
    total: int
    offset: int
    limit: int
    next: str | None = Field(
        default=None,
        description="While more teams follow: the cursor to pass as 'after' for the next "
        "page (a team created or deleted meanwhile neither repeats nor hides an entry, as "
        "an offset would). None on the last page.",
    )


class WireEvent(BaseModel):
    """One record of a team's log as the API sends it (SSE ``data`` and history items).

    ``type`` and ``data`` are the protocol (``StartResponse``, ``AppendText``,
    ``ToolCall``, ``ToolResult``, ``Error``, ``Interrupted``, ``End``, ``Message``,
    ``ToolState``, ``Commands``, ``Usage``...; see the server's README), for any language.
    ``message`` is the stored record itself, serialized with its class markers, which a
    Python client decodes back into the framework's objects. A row that could not be
    decoded has ``type`` ``Corrupt`` and ``error`` saying why.
    """

    seq: int
    team_id: UUID
    time: datetime | None
    """None when the stored time cannot be read (a damaged row)."""
    through: int | None = None
    """Set on a ``Corrupt`` record that stands for the numbers ``seq`` to ``through`` (a
    damaged event pack, a gap: ``EventRecord.through``); a reader goes on after it. An
    older server leaves it out."""
    type: str
    sender: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    message: dict[str, Any] | None = None
    error: str | None = None


class TeamNotice(BaseModel):
    """The data of an event stream's ``stopped`` and ``deleted`` events: which team.

    ``stopped``: the team is not running and everything is sent (the stream stays open and
    goes on if the team is resumed). ``deleted``: the team is DELETED (or purged) and
    everything is sent; it is the stream's last event, and the server closes the stream."""

    team_id: UUID


class HistoryPage(BaseModel):
    items: list[WireEvent]
    last_seq: int = Field(description="The team's last sequence number when read.")


class ToolStateView(BaseModel):
    """A tool actor's state, rebuilt by replaying the team's log (``replay_tool_states``)."""

    tool_id: str
    state: dict[str, Any] | None = Field(
        description=(
            "The state, serialized. Before the tool's first delta, the state it starts from "
            "(an empty plan or graph), or None for a tool the server does not ship."
        )
    )
    last_delta: int = Field(description="The last delta number folded in (0: none yet).")
    gaps: list[dict[str, int]] = Field(
        default_factory=list, description="Deltas that were missed (the state may be wrong)."
    )
