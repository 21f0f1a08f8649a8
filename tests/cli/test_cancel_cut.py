"""A ``-m`` exchange whose turn a cancel cut while the team went on — the web page's
interrupt button (``POST /teams/{id}/interrupt``: ``TeamRuntime.interrupt``, called here
as the route calls it), or a ``/stop`` from another client — has no answer: the session
says the turn was cut and by whom, never takes the agent's "The run was cancelled." for
the answer, and offers no ``--retry-interrupted``: a cancel's cut is not listed as
interrupted, nothing of it is kept to retry. The model cuts its own turn: its request
calls the interrupt before it answers, so the cut is decided at the step boundary after
it — nothing sleeps."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from rich.console import Console

from akgentic.cli import chat
from akgentic.cli.live import LiveView
from akgentic.cli.watch import Reply
from akgentic.llm import register_model
from akgentic.storage import TeamStatus, open_storage
from akgentic.team import TeamManager, TeamRuntime

from ..core.conftest import eventually
from .conftest import Invoke

SOLO = (
    "name: solo\n"
    "entry_point: '@Analyst'\n"
    "members:\n"
    "  - card:\n"
    "      role: Analyst\n"
    "      config: {name: '@Analyst', role: Analyst, models: 'registered:cut-by-page'}\n"
)


@pytest.fixture
def runtimes(monkeypatch: pytest.MonkeyPatch) -> list[TeamRuntime]:
    """The teams the session creates, as the server holds them for the page's routes."""
    created: list[TeamRuntime] = []
    create = TeamManager.create_team

    def keep(manager: TeamManager, *args: Any, **kwargs: Any) -> TeamRuntime:
        created.append(create(manager, *args, **kwargs))
        return created[-1]

    monkeypatch.setattr(TeamManager, "create_team", keep)
    return created


def run_cut_by_page(
    cli: Invoke, tmp_path: Path, runtimes: list[TeamRuntime], then: Callable[[], None]
) -> Any:
    """``run solo -m hello`` whose one model request presses the page's interrupt button
    (the route's ``TeamRuntime.interrupt``), calls ``then``, and answers."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [runtime] = runtimes
        assert runtime.interrupt() == ["@Analyst"]
        then()
        return ModelResponse(parts=[TextPart("an answer the cut leaves unsent")])

    card = tmp_path / "solo.yaml"
    card.write_text(SOLO)
    with register_model("cut-by-page", FunctionModel(answer)):
        return cli("run", str(card), "-m", "hello", "--idle", "60")


CUT = (
    "error: @Analyst's turn was cut before it answered: interrupted from another client "
    "(the web page's interrupt button, or a /stop sent as @Human elsewhere)"
)


def test_run_m_whose_turn_the_page_cut_says_so_and_offers_no_retry(
    cli: Invoke, storage_url: str, tmp_path: Path, runtimes: list[TeamRuntime]
) -> None:
    ran = run_cut_by_page(cli, tmp_path, runtimes, lambda: None)

    assert ran.exit_code == 1, ran.output
    assert "answer:" not in ran.stdout  # "The run was cancelled." is no answer
    short = str(runtimes[0].team_id)[:8]
    assert ran.stderr.splitlines() == [
        f"{CUT}; nothing of it is kept to retry: to ask again, resume it with: akgentic "
        f"teams resume {short} --storage {storage_url} -m MESSAGE"
    ]
    assert "--retry-interrupted" not in ran.output
    assert "interrupted turns: none" in cli("teams", "show", short).stdout.splitlines()


def test_run_m_whose_turn_the_page_cut_and_whose_team_then_stopped_says_both(
    cli: Invoke, storage_url: str, tmp_path: Path, runtimes: list[TeamRuntime]
) -> None:
    """The page cut the turn, and the team was stopped from elsewhere as it ended (as
    ``teams stop`` does): the error says both, and still offers no --retry-interrupted —
    the stop cut nothing, there is nothing to retry."""

    def stop_from_elsewhere() -> None:
        store = open_storage(storage_url)
        try:
            store.teams.set_status(runtimes[0].team_id, TeamStatus.STOPPED)
        finally:
            store.close()
        eventually(lambda: runtimes[0].stop_reason is not None)  # its manager saw it

    ran = run_cut_by_page(cli, tmp_path, runtimes, stop_from_elsewhere)

    assert ran.exit_code == 1, ran.output
    short = str(runtimes[0].team_id)[:8]
    assert ran.stderr.splitlines() == [
        f"{CUT}; then the team stopped: it was stopped from elsewhere (akgentic teams stop); "
        f"nothing of it is kept to retry: to ask again, resume it with: akgentic teams "
        f"resume {short} --storage {storage_url} -m MESSAGE"
    ]
    assert "--retry-interrupted" not in ran.output
    assert "interrupted turns: none" in cli("teams", "show", short).stdout.splitlines()


@pytest.mark.parametrize(("listed", "retry"), [(True, True), (None, True), (False, False)])
def test_a_stopped_exchange_offers_a_retry_only_when_its_cut_turn_is_listed(
    listed: bool | None, retry: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team stopped with a turn of the exchange unfinished: ``--retry-interrupted`` is
    offered when the team's log lists the turn as interrupted, or when the list could not
    be read (its server gone: the resume lists them); not when it is not listed."""
    reply = Reply("stopped", owed="cut")
    console = Console(file=io.StringIO())
    view = LiveView(console, human="@Human", known={"@Human"})
    hint = "resume it with: akgentic teams resume 12345678"

    code = chat._answer(
        console, reply, chat.ChatOptions(message="q"), None, view, hint, listed=listed
    )

    assert code == 1
    said = capsys.readouterr().err.strip()
    assert said.startswith("error: the team stopped before answering; a turn the answer ")
    assert said.endswith(f"{hint} --retry-interrupted" if retry else f"{hint} -m MESSAGE")
