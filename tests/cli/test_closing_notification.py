"""``akgentic run -m`` and ``ask`` count one answer: a member that only tells the person
(a ``notification``) and finishes has answered with it."""

from __future__ import annotations

from akgentic.core import SentMessage
from akgentic.storage import open_storage
from akgentic.team import Answer, Exchange
from tests.cli.conftest import Invoke
from tests.server.conftest import TURNS


def test_run_m_prints_the_closing_notification_as_ask_returns_it(
    cli: Invoke, storage_url: str
) -> None:
    done = cli("run", str(TURNS), "--idle", "0.5", "-m", "tell the news")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == "answer: Noted: the news"
    store = open_storage(storage_url)  # the same log, read by ask's rule: the same answer
    try:
        [team] = store.teams.list()
        records = store.events.read(team.team_id)
    finally:
        store.close()
    asked = next(
        r.message.message.id
        for r in records
        if isinstance(r.message, SentMessage)
        and getattr(r.message.message, "content", "") == "tell the news"
    )
    exchange = Exchange(asked, "@Boss", "@Human")
    answer: Answer | None = None
    for record in records:
        answer = exchange.take(record)
        if answer is not None:
            break
    assert answer is not None and (answer.sender, answer.content) == ("@Boss", "Noted: the news")
