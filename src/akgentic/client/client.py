"""AkgenticClient: the verbs of ``TeamManager`` and ``TeamRuntime``, over HTTP.

A script written against a local team runs unchanged against a server::

    client = AkgenticClient("http://127.0.0.1:8080", token=None)   # or TeamManager(...)
    team = client.create_team(card)                                # TeamRuntime or RemoteTeam
    team.send("why actors?")
    for record in team.follow(idle_timeout=5):                     # EventRecords, in order
        ...

:meth:`RemoteTeam.follow` reads the team's SSE stream and decodes each event back into
an ``EventRecord``; when the connection drops it reconnects and goes on after the last
number received (a record standing for a range — a damaged pack, a gap — is past its
``last``), so nothing is lost or repeated; a team deleted meanwhile ends it with
:class:`TeamDeletedError` — known by the server's word (its ``deleted`` event, or the code
``team_not_found``), never by a bare 404, which may come from a wrong base URL or a proxy.
Any error answer raises :class:`ServerError` with the server's reason.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Collection, Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote
from uuid import UUID

import httpx
from pydantic import TypeAdapter

from akgentic.agent.accounting import UsageReport
from akgentic.client.catalog import RemoteCatalog
from akgentic.client.models import (
    NO_TOOL_ACTOR,
    TEAM_NOT_FOUND,
    TEAM_NOT_RUNNING,
    TOOL_STATE_UNREADABLE,
    Accepted,
    CardInfo,
    Health,
    HistoryPage,
    Interrupted,
    MemberInfo,
    TeamInfo,
    TeamNotice,
    TeamPage,
    ToolStateView,
    WireEvent,
)
from akgentic.client.sse import parse_sse, sse_lines
from akgentic.core import Message
from akgentic.core.excerpt import clip, exception_words, excerpt
from akgentic.core.serialization import deserialize, serialize
from akgentic.core.surrogates import replace_lone_surrogates
from akgentic.storage import EventRecord, TeamStatus
from akgentic.team import Gap, ReplayResult, TeamCard, UnknownToolError, UnreadableToolStateError
from akgentic.team.ask import Answer, Exchange, NoReplyError

__all__ = ["AkgenticClient", "RemoteTeam", "ServerError", "TeamDeletedError", "decode_event"]

_TOOL_STATE_ERRORS: dict[str, type[UnknownToolError | UnreadableToolStateError]] = {
    NO_TOOL_ACTOR: UnknownToolError,
    TOOL_STATE_UNREADABLE: UnreadableToolStateError,
}
"""The error ``TeamRuntime.tool_state`` raises for each code of a tool state's refusal."""

T = TypeVar("T")

RECONNECTS = 20
"""Consecutive failed reconnections after which ``follow`` gives up (its default
``reconnects``): with
:func:`reconnect_wait` between them, about a minute and a quarter — long enough to ride
out a server's restart."""

RESTARTING = frozenset({502, 503, 504})
"""Statuses ``follow`` takes for a server restarting behind a proxy (Bad Gateway, Service
Unavailable, Gateway Timeout) and reconnects after, as after a dropped connection."""

RECONNECT_WAIT_MAX = 5.0
"""The longest wait between two reconnections of ``follow``."""

SILENCE = 10.0
"""Seconds past its heartbeat after which ``follow`` takes a stream that says nothing, not
even a keep-alive, for a dead connection (a wedged server, a link gone quiet) and
reconnects — rather than wait out the client's whole timeout."""

TEAMS_PAGE = 500
"""Teams ``list_teams`` asks for per page (the most the server gives)."""


class ServerError(Exception):
    """The server answered an error (``status``), or could not be reached (``status`` 0).
    ``code`` is the answer's stable error code (``ErrorBody.code``), when it has one."""

    def __init__(self, status: int, detail: str, code: str | None = None) -> None:
        super().__init__(f"{status}: {detail}" if status else detail)
        self.status = status
        self.detail = detail
        self.code = code


def _unknown_field(response: httpx.Response, field: str) -> bool:
    """Whether a 422 refuses the body's ``field`` as one the server's model does not know
    (``extra_forbidden``): a server older than the field."""
    try:
        errors = response.json().get("errors") or []
        return any(
            e.get("type") == "extra_forbidden" and e.get("loc", [])[-1:] == [field] for e in errors
        )
    except (ValueError, AttributeError, TypeError):  # not an akgentic server's 422
        return False


class TeamDeletedError(ServerError):
    """The team followed was deleted: its stream said ``deleted`` after its last record (or
    the team was purged while followed). ``status`` is 410 (Gone)."""

    def __init__(self, team_id: UUID) -> None:
        super().__init__(410, f"team {team_id} was deleted")
        self.team_id = team_id


def _server_url(url: str) -> str:
    """``url`` when it can name a server (``http://HOST:PORT``, ``https://...``, a path
    after it allowed); a ``ValueError`` saying what is wrong and the form expected
    otherwise — at once, not as "cannot reach" (or httpx's ``InvalidURL``) at the first
    call: ``http://`` names no host, ``http://256.1.1.1`` no address."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        why = exception_words(exc)
        why = why[:1].lower() + why[1:]
    else:
        if parsed.scheme not in ("http", "https"):
            why = "it does not start with http:// or https://"
        elif not parsed.host:
            why = "it names no host"
        elif parsed.port is not None and not 0 < parsed.port < 65536:
            why = f"the port must be 1 to 65535, not {parsed.port}"
        else:
            return url
    raise ValueError(
        f"{excerpt(url)} is not a server URL ({why}): give it as http://HOST:PORT "
        f"(or https://HOST:PORT)"
    )


def decode_event(item: WireEvent | dict[str, Any]) -> EventRecord:
    """The ``EventRecord`` a wire event carries; a record whose message does not decode
    here (a class this process does not define) carries ``error``, as storage does."""
    wire = item if isinstance(item, WireEvent) else WireEvent.model_validate(item)
    raw = json.dumps(wire.message) if wire.message is not None else ""
    message: Message | None = None
    error = wire.error
    if wire.message is not None:
        try:
            decoded = deserialize(wire.message)
        except Exception as exc:
            error = f"team {wire.team_id}, event seq {wire.seq}: {exc}"
        else:
            if isinstance(decoded, Message):
                message = decoded
            else:
                error = f"team {wire.team_id}, event seq {wire.seq}: not a message"
    if message is None and error is None:
        error = f"team {wire.team_id}, event seq {wire.seq}: no message"
    return EventRecord(
        team_id=wire.team_id,
        seq=wire.seq,
        timestamp=wire.time,
        message=message,
        error=error if message is None else None,
        raw=raw,
        through=wire.through if message is None else None,
    )


class AkgenticClient:
    """A server's teams (see the module docstring); close it, or use it with ``with``."""

    def __repr__(self) -> str:
        return f"AkgenticClient({self.base_url!r})"

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = _server_url(base_url).rstrip("/")
        self.timeout = timeout
        """Seconds a call may take (a stream's reads: see :meth:`RemoteTeam.follow`)."""
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )
        self.catalog = RemoteCatalog(self)
        """The server's tool catalog, with ``CatalogService``'s verbs."""

    # -- plumbing --------------------------------------------------------------------------
    def request(
        self, method: str, path: str, *, allow: Collection[int] = (), **kwargs: Any
    ) -> httpx.Response:
        """One call; :class:`ServerError` for no answer, or for an error answer whose
        status is not in ``allow`` (those the caller reads itself)."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ServerError(0, _no_answer(self, exc)) from None
        if response.status_code >= 400 and response.status_code not in allow:
            raise _server_error(self, response)
        return response

    def request_json(
        self,
        method: str,
        path: str,
        shape: type[T],
        *,
        allow: Collection[int] = (),
        **kwargs: Any,
    ) -> T:
        """:meth:`request`, then the answer's JSON body read as ``shape`` (a model, or
        ``list[Model]``, ``dict[str, Any]``): the one way a call reads what the server said.
        A body that is not JSON, or not of that shape (a proxy's HTML page, another
        program at that address answering its own JSON), is a one-line
        :class:`ServerError` saying to check the base URL."""
        return self.read_json(self.request(method, path, allow=allow, **kwargs), shape)

    def read_json(self, response: httpx.Response, shape: type[T]) -> T:
        """``response``'s JSON body read as ``shape``, as :meth:`request_json` reads it."""
        try:
            return _adapter(shape).validate_json(response.content)
        except ValueError:  # not JSON, or not the shape (pydantic's ValidationError)
            raise _not_akgentic(self, response) from None

    def stream(self, path: str, **kwargs: Any) -> Any:
        return self._http.stream("GET", path, **kwargs)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AkgenticClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the server ------------------------------------------------------------------------
    def health(self) -> Health:
        """The server's health: ``status`` ``ok``, or ``draining`` (a 503: the server is
        stopping; reads still work, new work is refused). :class:`ServerError` otherwise:
        an error answer, or a 200 that is not an akgentic server's health (a proxy's page,
        another program's ``/health``) — it says to check the base URL."""
        response = self.request("GET", "/health", allow=(503,))
        if response.status_code == 503:
            with contextlib.suppress(ValueError):
                return Health.model_validate_json(response.content)
            raise _server_error(self, response)  # a 503 that is not a draining server's
        try:
            return Health.model_validate_json(response.content)
        except ValueError:  # not JSON, or not a Health (pydantic's ValidationError)
            raise _not_akgentic(self, response) from None

    def cards(self) -> list[CardInfo]:
        """The team cards the server knows by name."""
        return self.request_json("GET", "/team-cards", list[CardInfo])

    # -- teams (TeamManager's verbs) -----------------------------------------------------------
    def create_team(
        self,
        card: str | TeamCard | Path,
        *,
        name: str | None = None,
        model: str | None = None,
    ) -> RemoteTeam:
        """Start a team from a card the server knows (its name), a ``TeamCard``, or a YAML
        file (read here, so its relative scenario paths resolve on this machine)."""
        if isinstance(card, Path):
            card = TeamCard.from_yaml(card)
        body: dict[str, Any] = {"card": card if isinstance(card, str) else serialize(card)}
        if name is not None:
            body["name"] = name
        if model is not None:
            body["model"] = model
        info = self.request_json("POST", "/teams", TeamInfo, json=body)
        return RemoteTeam(self, info)

    def get_team(self, team_id: UUID | str) -> RemoteTeam:
        """The team (running or not); :class:`ServerError` 404 when there is none."""
        return RemoteTeam(self, self.info(team_id))

    def info(self, team_id: UUID | str) -> TeamInfo:
        return self.request_json("GET", team_path(team_id), TeamInfo)

    def list_teams(
        self, status: TeamStatus | None = None, *, include_deleted: bool = False
    ) -> list[TeamInfo]:
        """Every team, newest first, each once: read page by page, each page from the
        cursor the one before gave (``next``), so a team created or deleted meanwhile
        neither repeats an entry nor hides one. A server older than the cursor gives none:
        its pages are read by offset, as before."""
        found: list[TeamInfo] = []
        params: dict[str, Any] = {"limit": TEAMS_PAGE, "include_deleted": include_deleted}
        if status is not None:
            params["status"] = status.value
        while True:
            page = self.request_json("GET", "/teams", TeamPage, params=params)
            found.extend(page.items)
            if page.next is not None:
                params["after"] = page.next
            elif "next" in page.model_fields_set or not page.items or len(found) >= page.total:
                return found
            else:  # an older server: no cursor
                params["offset"] = len(found)

    def rename_team(self, team_id: UUID | str, name: str) -> TeamInfo:
        return self.request_json("PATCH", team_path(team_id), TeamInfo, json={"name": name})

    def stop_team(
        self, team_id: UUID | str, grace_timeout: float = 30.0, *, interrupt: bool = False
    ) -> TeamInfo:
        """Stop the team gracefully; returns once it has stopped. ``interrupt`` cuts the
        turns in progress at their next step, recorded as interrupted (a resume offers
        them again)."""
        return self.request_json(
            "POST",
            team_path(team_id, "/stop"),
            TeamInfo,
            params={"grace": grace_timeout, "interrupt": interrupt},
            timeout=grace_timeout + 30.0,
        )

    def resume_team(
        self,
        team_id: UUID | str,
        *,
        retry_interrupted: bool = False,
        dismiss_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> RemoteTeam:
        """Resume the team on the server. A team being stopped is resumed once its stop
        has ended — or, not ``wait_for_stop``, refused at once: :class:`ServerError` 409,
        ``code`` ``TEAM_STOPPING`` (the caller waits, and can give up, then asks
        again). A server older than ``wait_for_stop`` refuses the field (a 422 naming it as
        an extra field): the resume is asked again without it, waiting as that server does."""
        path = team_path(team_id, "/resume")
        body: dict[str, bool] = {
            "retry_interrupted": retry_interrupted,
            "dismiss_interrupted": dismiss_interrupted,
            "wait_for_stop": wait_for_stop,
        }
        response = self.request("POST", path, allow=(422,), json=body)
        if response.status_code == 422:
            if not _unknown_field(response, "wait_for_stop"):
                raise _server_error(self, response)
            del body["wait_for_stop"]
            response = self.request("POST", path, json=body)
        return RemoteTeam(self, self.read_json(response, TeamInfo))

    def ask(
        self, team_id: UUID | str, content: str, *, to: str | None = None, timeout: float = 120.0
    ) -> Answer:
        """Send ``content`` to the team and return the answer to it: :meth:`RemoteTeam.ask`."""
        return self.get_team(team_id).ask(content, to=to, timeout=timeout)

    def delete_team(self, team_id: UUID | str, *, purge: bool = False) -> None:
        self.request("DELETE", team_path(team_id), params={"purge": purge})


class RemoteTeam:
    """A team on a server, driven with ``TeamRuntime``'s verbs."""

    def __init__(self, client: AkgenticClient, info: TeamInfo) -> None:
        self.client = client
        self.info = info
        self.team_id = info.team_id
        self._card: TeamCard | None = None

    def __repr__(self) -> str:
        """What the team is and where, as last known (``refresh()`` asks again)."""
        return (
            f"RemoteTeam({self.info.name!r}, team_id={str(self.team_id)!r}, "
            f"status={self.info.status!r}, server={self.client.base_url!r})"
        )

    def _path(self, tail: str = "") -> str:
        return team_path(self.team_id, tail)

    @property
    def card(self) -> TeamCard:
        """The team's card (fetched once)."""
        if self._card is None:
            data = self.client.request_json("GET", self._path("/card"), dict[str, Any])
            card = deserialize(data)
            if not isinstance(card, TeamCard):
                raise ServerError(0, f"team {self.team_id} has no readable team card")
            self._card = card
        return self._card

    def refresh(self) -> TeamInfo:
        self.info = self.client.info(self.team_id)
        return self.info

    def is_running(self) -> bool:
        """Whether the team runs in the server (asked now)."""
        return self.refresh().running

    # -- talking to the team ---------------------------------------------------------------
    def _post(self, tail: str, body: dict[str, str]) -> Accepted:
        """Post ``body``, its text as the server takes it: a lone surrogate (which no
        request body can encode) as U+FFFD, so the message is sent, not an encoding error."""
        sound = {key: replace_lone_surrogates(value) for key, value in body.items()}
        return self.client.request_json("POST", self._path(tail), Accepted, json=sound)

    def send(self, content: str) -> UUID:
        """To the entry point; the message id once the server committed it."""
        return self._post("/messages", {"content": content}).message_id

    def send_to(self, member: str, content: str) -> UUID:
        return self._post("/messages", {"content": content, "to": member}).message_id

    def process_human_input(self, content: str, message: Message | None = None) -> UUID:
        """Answer ``message`` (a member's message to the person), or the entry point."""
        if message is None:
            return self.send(content)
        return self._post("/messages", {"content": content, "reply_to": str(message.id)}).message_id

    def command(self, command: str, to: str | None = None) -> UUID:
        """A ``/command`` for the entry point (or ``to``)."""
        body = {"command": command} if to is None else {"command": command, "to": to}
        return self._post("/commands", body).message_id

    def ask(self, content: str, *, to: str | None = None, timeout: float = 120.0) -> Answer:
        """Send ``content`` (to the entry point, or to ``to``) and return the answer to it:
        the ``response`` that member sends the person, tied to the message by its
        ``parent_id`` chain (:mod:`akgentic.team.ask` says what counts).

        The team's log position is read before the message is sent, and followed from
        there: an answer written before the stream opens is not missed. Raises
        :class:`~akgentic.client.TurnFailedError` when the team says the turn failed (or
        was interrupted), :class:`~akgentic.client.NoReplyError` when ``timeout`` seconds
        pass first (saying what still runs and how to follow it, or that the server gives
        no answer any more: it stopped, its turns with it), when the exchange ends
        without an answer, or when the team stops first (or is not running: nothing is
        sent then, ``asked`` is None); :class:`ServerError` as every
        call does (a refused message, a stream that keeps failing);
        :class:`TeamDeletedError` when the team is deleted meanwhile."""
        if not timeout > 0:  # NaN too: it would wait for nothing, the message sent
            raise ValueError(f"ask's timeout is in seconds, more than 0, not {timeout!r}")
        position = self.refresh().last_seq
        body = {"content": content} if to is None else {"content": content, "to": to}
        try:
            accepted = self._post("/messages", body)
        except ServerError as exc:
            if exc.code != TEAM_NOT_RUNNING:
                raise
            raise NoReplyError(
                None,
                f"team {self.info.name} ({self.team_id}) is not running, so nothing was sent; "
                f"resume it with client.resume_team('{self.team_id}'), then ask again",
            ) from None
        exchange = Exchange(accepted.message_id, accepted.to, self.info.human)
        stop = threading.Event()
        deadline = threading.Timer(timeout, stop.set)
        deadline.daemon = True
        deadline.start()
        heartbeat = max(0.2, min(0.5, timeout / 5))  # the deadline is noticed within one
        try:
            with contextlib.closing(
                self.follow(position + 1, stop=stop, heartbeat=heartbeat)
            ) as it:
                for record in it:
                    answer = exchange.take(record)
                    if answer is not None:
                        return answer
        finally:
            deadline.cancel()
        seq = exchange.asked_at or accepted.seq or position + 1
        follow = f"client.get_team('{self.team_id}').follow({seq})"
        gone = self._unreachable(heartbeat + SILENCE) if stop.is_set() else None
        if gone is not None:
            raise NoReplyError(
                accepted.message_id,
                f"no answer from {accepted.to} to message {accepted.message_id} within "
                f"{timeout:g}s: the server stopped answering ({gone}); its turns stopped with "
                f"it: once it is back, resume the team with "
                f"client.resume_team('{self.team_id}') and read {follow}",
            )
        if stop.is_set():
            raise NoReplyError(
                accepted.message_id,
                f"no answer from {accepted.to} to message {accepted.message_id} within "
                f"{timeout:g}s; still running: {exchange.running()}; follow it with {follow}, "
                f"or ask with a longer timeout",
            )
        raise NoReplyError(
            accepted.message_id,
            f"team {self.info.name} ({self.team_id}) stopped before {accepted.to} answered "
            f"message {accepted.message_id} (still running then: {exchange.running()}); "
            f"resume it with client.resume_team('{self.team_id}') and read {follow}",
        )

    def _unreachable(self, within: float) -> str | None:
        """Why the server gives no answer now (``ServerError``'s words, status 0), or None
        when it answers: an ask whose deadline passed while the stream kept failing says
        the server is gone, not that the turn still runs."""
        try:
            self.client.request("GET", self._path(), timeout=within)
        except ServerError as exc:
            return exc.detail if exc.status == 0 else None
        return None

    def interrupt(self) -> list[str]:
        """Cancel the turns in progress; the names of the members told."""
        return self.client.request_json("POST", self._path("/interrupt"), Interrupted).members

    def stop(self, grace_timeout: float = 30.0) -> bool:
        self.info = self.client.stop_team(self.team_id, grace_timeout)
        return not self.info.running

    # -- looking at the team ---------------------------------------------------------------
    def members(self) -> list[MemberInfo]:
        return self.client.request_json("GET", self._path("/members"), list[MemberInfo])

    def history(self, after: int = 0, offset: int = 0, limit: int = 100) -> list[EventRecord]:
        params = {"after": after, "offset": offset, "limit": limit}
        page = self.client.request_json("GET", self._path("/messages"), HistoryPage, params=params)
        return [decode_event(item) for item in page.items]

    def usage(self) -> UsageReport:
        """The team's prompt usage report, as ``akgentic.team.team_usage`` makes it."""
        return self.client.request_json("GET", self._path("/usage"), UsageReport)

    def tool_state(self, tool_id: str) -> ReplayResult:
        """``tool_id``'s state rebuilt by the server from the log, as ``TeamRuntime``'s:
        a tool the team does not have is the same :class:`~akgentic.team.UnknownToolError`
        with the same words (the server's 404 ``no_tool_actor``, kept as its cause), and a
        tool whose state the server cannot rebuild the same
        :class:`~akgentic.team.UnreadableToolStateError` (its 422 ``tool_state_unreadable``)."""
        name = tool_id if tool_id.startswith("#") else f"#{tool_id}"
        path = self._path(f"/state/{path_segment(name)}")
        try:
            view = self.client.request_json("GET", path, ToolStateView)
        except ServerError as exc:
            error = _TOOL_STATE_ERRORS.get(exc.code or "")
            if error is None:
                raise
            raise error(exc.detail, team_id=self.team_id, tool_id=name) from exc
        return ReplayResult(
            states={} if view.state is None else {name: deserialize(view.state)},
            last_seq={name: view.last_delta},
            gaps=[Gap(name, g["expected"], g["got"], g["at_seq"]) for g in view.gaps],
        )

    def follow(
        self,
        from_seq: int = 1,
        *,
        stop: threading.Event | None = None,
        idle_timeout: float | None = None,
        heartbeat: float = 0.5,
        end_when_stopped: bool = True,
        reconnects: int | None = None,
    ) -> Generator[EventRecord, None, None]:
        """The team's events from ``from_seq`` on, in order: stored ones, then live ones.

        Ends when ``stop`` is set, after ``idle_timeout`` seconds with nothing new, or
        when the team is not running and everything is read (as ``TeamRuntime.follow``;
        ``end_when_stopped=False`` keeps following a stopped team, in case it resumes).
        A dropped connection is resumed from the last event received — a stream silent
        for ``heartbeat`` + :data:`SILENCE` seconds counts as dropped, and so does a 502,
        503 or 504 (a proxy whose server restarts: :data:`RESTARTING`) — up to
        ``reconnects`` (:data:`RECONNECTS`) times in a row, or until ``idle_timeout`` has
        passed with nothing new: then :class:`ServerError` (status 0) says why, and what
        the failed attempts saw (``502 Bad Gateway 3x, connection refused 2x``). A team that is
        deleted (the stream's ``deleted`` event, after its last record; or, on a
        reconnection, a 404 with the code ``team_not_found``: purged) raises
        :class:`TeamDeletedError` once every record is yielded, whatever
        ``end_when_stopped`` says. Any other 404 is no team's stream (a wrong base URL, a
        proxy, another server): :class:`ServerError` saying what to check.
        """
        next_seq = max(from_seq, 1)
        last_news = time.monotonic()
        failures = 0
        bound = RECONNECTS if reconnects is None else reconnects
        if bound < 0:
            raise ValueError(f"follow's reconnects is a count, 0 or more, not {bound}")
        seen: Counter[str] = Counter()  # what the failures in a row were
        connected = False
        timeout = httpx.Timeout(self.client.timeout, read=heartbeat + SILENCE)
        while True:
            params = {"from_seq": next_seq, "heartbeat": heartbeat}
            try:
                with self.client.stream(
                    self._path("/events"), params=params, timeout=timeout
                ) as response:
                    if response.status_code >= 400:
                        response.read()
                        error = _server_error(self.client, response)
                        if error.status in RESTARTING:
                            raise _RestartingError(error, _status_line(response))
                        if error.code != TEAM_NOT_FOUND and error.status == 404:
                            raise _not_a_stream(self.client, response)
                        if error.code == TEAM_NOT_FOUND and connected:
                            raise TeamDeletedError(self.team_id)
                        raise error
                    if _content_type(response) != "text/event-stream":
                        response.read()  # a proxy's page, another program: not a stream
                        raise _not_akgentic(self.client, response)
                    connected = True
                    heard: list[str] = []  # its first line, a heartbeat's comment included
                    for event in parse_sse(_noting(sse_lines(response.iter_text()), heard)):
                        try:
                            if event.event == "deleted":
                                gone = TeamNotice.model_validate_json(event.data).team_id
                                raise TeamDeletedError(gone)
                            record = None
                            if event.event and event.event != "stopped":
                                record = decode_event(json.loads(event.data))
                        except ValueError:  # not JSON, or not an event (ValidationError)
                            raise _not_akgentic(self.client, response) from None
                        if record is not None:
                            if record.seq < next_seq:
                                continue  # never repeat one, whatever the server sends
                            failures = 0
                            seen.clear()
                            next_seq = record.last + 1  # past a range record
                            last_news = time.monotonic()
                            yield record
                        if stop is not None and stop.is_set():
                            return
                        if event.event == "stopped" and end_when_stopped:
                            return
                        if (
                            idle_timeout is not None
                            and time.monotonic() - last_news >= idle_timeout
                        ):
                            return
                if not heard:  # closed before a word, not even a heartbeat: back off
                    raise httpx.RemoteProtocolError(_EMPTY_STREAM)
            except (httpx.TransportError, httpx.DecodingError, _RestartingError) as exc:
                failures += 1
                why, kind = _stream_failure(self.client, exc, heartbeat)
                seen[kind] += 1
                tried = _tally(seen, failures)
                if failures > bound:
                    raise ServerError(
                        0,
                        f"the event stream keeps failing: {why} ({tried}; follow(reconnects=N) "
                        f"tries more times)",
                    ) from None
                if idle_timeout is not None and time.monotonic() - last_news >= idle_timeout:
                    raise ServerError(
                        0,
                        f"the event stream failed and nothing new came for {idle_timeout:g}s: "
                        f"{why} ({tried})",
                    ) from None
                if stop is not None and stop.wait(reconnect_wait(failures)):
                    return
                if stop is None:
                    time.sleep(reconnect_wait(failures))
                continue
            if stop is not None and stop.is_set():
                return


_EMPTY_STREAM = "the stream ended before its first event"


class _RestartingError(Exception):
    """A 502, 503 or 504 for the event stream: a proxy with no server behind it for now
    (a restart), or a server not ready yet. ``follow`` takes it as a dropped connection."""

    def __init__(self, error: ServerError, status_line: str) -> None:
        super().__init__(error.detail)
        self.error = error
        self.status_line = status_line


def _stream_failure(client: AkgenticClient, exc: Exception, heartbeat: float) -> tuple[str, str]:
    """What a failed attempt of ``follow`` says (one line, with what to do), and its kind
    in a few words (``502 Bad Gateway``, ``connection refused``) for the tally of the
    failures in a row."""
    if isinstance(exc, _RestartingError):
        return exc.error.detail, exc.status_line
    if isinstance(exc, httpx.ReadTimeout):
        silent = f"it said nothing for {heartbeat + SILENCE:g}s, not even a heartbeat"
        return silent, "silence"
    words = exception_words(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        kind = "connection refused" if "refused" in words.lower() else "no connection"
        return _no_answer(client, exc), kind
    if isinstance(exc, httpx.TimeoutException):
        return _no_answer(client, exc), "no answer in time"
    if words == _EMPTY_STREAM:
        return words, "closed before a word"
    if "reset" in words.lower():
        return words, "connection reset"
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        return words, "connection cut"
    return words, clip(words, 60)


def _tally(seen: Counter[str], failures: int) -> str:
    """``3 attempts in a row failed: 502 Bad Gateway 2x, connection refused 1x``."""
    kinds = ", ".join(f"{kind} {count}x" for kind, count in seen.most_common())
    return f"{failures} attempt{'s' if failures != 1 else ''} in a row failed: {kinds}"


def reconnect_wait(failures: int) -> float:
    """Seconds ``follow`` waits before its reconnection after ``failures`` failed ones in
    a row: from 50 ms, doubling, at most :data:`RECONNECT_WAIT_MAX` — quick after a blip,
    and no hammering of a server that is down."""
    return float(min(0.05 * 2 ** min(failures - 1, 16), RECONNECT_WAIT_MAX))


def path_segment(value: object) -> str:
    """``value`` (a team id, a tool's name) as one segment of a URL path: percent-encoded,
    ``.`` and ``..`` included, so a value from elsewhere (a form, a file) never adds a
    query (``?force=true``) or is cut short (``#``). A value holding ``/`` is refused
    (``ValueError``): servers decode ``%2F`` before they route, so it would reach another
    route (``x/credential``), and no team id or tool name holds one."""
    text = str(value)
    if "/" in text:
        raise ValueError(f"{excerpt(text)} holds a '/': no team id or tool name does")
    encoded = quote(text, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def team_path(team_id: UUID | str, tail: str = "") -> str:
    """The path of a team's route: ``/teams/<id>`` then ``tail`` (a fixed path)."""
    return f"/teams/{path_segment(team_id)}{tail}"


def _noting(lines: Iterator[str], heard: list[str]) -> Iterator[str]:
    """``lines``, keeping the first in ``heard``: whether a stream said anything at all."""
    for line in lines:
        if not heard:
            heard.append(line)
        yield line


def _no_answer(client: AkgenticClient, exc: httpx.HTTPError) -> str:
    """What a call that got no answer says, on one line, with what to do: nothing listens
    at the address (start ``akgentic serve`` there, or give the URL it serves at); the
    server took longer than the call's bound (that bound — the client's ``timeout``, or
    the call's own, as ``stop_team``'s — and how to raise it); else httpx's words."""
    words = exception_words(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        try:
            request: httpx.Request | None = exc.request
        except RuntimeError:  # raised before a request was made
            request = None
        bounds = request.extensions.get("timeout", {}) if request is not None else {}
        phase = {
            httpx.ConnectTimeout: "connect",
            httpx.WriteTimeout: "write",
            httpx.PoolTimeout: "pool",
        }.get(type(exc), "read")
        bound = bounds.get(phase) or client.timeout
        where = request.url.copy_with(query=None) if request is not None else client.base_url
        return (
            f"{where} gave no answer within {bound:g}s (the client's timeout): if the server "
            f"is busy, give it longer with AkgenticClient(timeout=SECONDS); else check that "
            f"it is not stuck (GET {client.base_url}/health)"
        )
    if isinstance(exc, httpx.ConnectError):
        why = "connection refused" if "refused" in words.lower() else words
        return (
            f"cannot reach {client.base_url} ({why}): is an akgentic server running there? "
            f"start one with `akgentic serve`, or give the URL it serves at"
        )
    return f"cannot reach {client.base_url}: {words}"


def _error_body(response: httpx.Response) -> tuple[str | None, str | None]:
    """An error answer's ``detail`` and ``code`` as the server's ``ErrorBody`` gives them;
    ``None`` for a ``detail`` the body does not have (a proxy's page, another program)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    detail, code = body.get("detail"), body.get("code")
    return (str(detail) if detail else None), (code if isinstance(code, str) else None)


def _server_error(client: AkgenticClient, response: httpx.Response) -> ServerError:
    """The :class:`ServerError` of an error answer: the body's ``detail`` and ``code``
    (an ``ErrorBody``, whose words say what to do). An answer with none — a proxy's page,
    another program's — says so, with the URL and what to check: that akgentic serve
    runs behind a proxy answering 502, 503 or 504 (it had no answer from it), else the
    base URL (a bare "404 Not Found" said neither where nor what to do)."""
    detail, code = _error_body(response)
    if detail is None:
        url = response.request.url.copy_with(query=None)
        kind = _content_type(response) or "no content type"
        advice = (
            f"a proxy there may have no server behind it: check that `akgentic serve` runs "
            f"behind {client.base_url}, then try again"
            if response.status_code in (502, 503, 504)
            else f"check that {client.base_url} is the akgentic server's address, with the "
            f"path prefix a proxy serves it under"
        )
        detail = (
            f"{url} answered {_status_line(response)} ({kind}), which is no akgentic "
            f"server's answer: {advice}"
        )
    return ServerError(response.status_code, detail, code)


def _status_line(response: httpx.Response) -> str:
    return f"{response.status_code} {response.reason_phrase}".strip()


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(shape: type[T]) -> TypeAdapter[T]:
    """The reader of ``shape``, made once (a ``TypeAdapter`` builds a validator)."""
    adapter = _ADAPTERS.get(shape)
    if adapter is None:
        adapter = _ADAPTERS[shape] = TypeAdapter(shape)
    return adapter


def _not_akgentic(client: AkgenticClient, response: httpx.Response) -> ServerError:
    """A successful answer whose body is not what an akgentic server says: the request
    reached something else (a proxy's page, another program), so the address is what to
    check — or a server of another version."""
    url = response.request.url.copy_with(query=None)
    kind = _content_type(response) or "no content type"
    return ServerError(
        response.status_code,
        f"{url} answered something that is not an akgentic server ({kind}); check that "
        f"{client.base_url} is the akgentic server's address, with the path prefix a proxy "
        f"serves it under, and that its version is this client's (GET /health says it)",
    )


def _content_type(response: httpx.Response) -> str:
    kind: str = response.headers.get("content-type", "")
    return kind.split(";")[0].strip().lower()


def _not_a_stream(client: AkgenticClient, response: httpx.Response) -> ServerError:
    """A 404 for a team's event stream that does not say the team is gone: the request
    reached no akgentic route, so the address is what to check (not the team)."""
    url = response.request.url.copy_with(query=None)
    said = _error_body(response)[0] or _status_line(response)
    return ServerError(
        404,
        f"{url} is no team's event stream ({said}); check that {client.base_url} "
        f"is the akgentic server's address, with the path prefix a proxy serves it under, "
        f"and that it is an akgentic server (GET {client.base_url}/health says its version)",
    )
