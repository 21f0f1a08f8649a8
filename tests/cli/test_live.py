"""The live view and the one-line summaries, on hand-made records (no team needed)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from uuid import uuid4

import pytest
from rich.console import Console

from akgentic.agent import AgentMessage
from akgentic.cli import logs
from akgentic.cli.describe import Describer, last_exchange
from akgentic.cli.live import LINE_CHARS, LiveView
from akgentic.cli.output import ASCII
from akgentic.cli.teams import _show_exchange
from akgentic.core import (
    ActorAddressProxy,
    ErrorMessage,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    UserMessage,
    WarningMessage,
)
from akgentic.llm import (
    LlmAnswerRestartedEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolReturnEvent,
)
from akgentic.storage import EventRecord
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.notification.models import NotificationDelta

TEAM = uuid4()
HUMAN = ActorAddressProxy(agent_id=uuid4(), name="@Human")
WORKER = ActorAddressProxy(agent_id=uuid4(), name="@Worker")
PLANNER = ActorAddressProxy(agent_id=uuid4(), name="@Planner")


def record(seq: int, message: Message | None, error: str | None = None) -> EventRecord:
    return EventRecord(
        team_id=TEAM,
        seq=seq,
        timestamp=datetime.now(UTC),
        message=message,
        error=error,
        raw="{}",
    )


def event(sender: ActorAddressProxy, payload: object) -> EventMessage:
    return EventMessage(sender=sender, event=payload)


def view(*, ascii_only: bool = False, verbose: bool = False) -> tuple[LiveView, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=40, soft_wrap=True, highlight=False)
    live = LiveView(console, human="@Human", known={"@Human", "@Worker"}, verbose=verbose)
    if ascii_only:
        live.marks = ASCII
    return live, buffer


def test_streamed_text_errors_warnings_tool_state_and_joins() -> None:
    live, out = view()
    answer = AgentMessage(content="done:\nfirst\nsecond", type="response", sender=WORKER)
    records = [
        event(WORKER, LlmTextDeltaEvent(run_id="r", delta="[scripted] ")),
        event(WORKER, LlmTextDeltaEvent(run_id="r", delta="partial")),
        event(
            WORKER,
            ToolReturnEvent(
                run_id="r", tool_name="search", tool_call_id="1", success=False, outcome="retried"
            ),
        ),
        event(WORKER, LlmTextDeltaEvent(run_id="r", delta=" more")),
        SentMessage(sender=WORKER, recipient=HUMAN, message=answer),
        event(
            WORKER,
            ToolStateEvent(tool_id="#Notifier", seq=3, payload=NotificationDelta(delivered=["a"])),
        ),
        ErrorMessage(sender=WORKER, content="the tool broke", traceback="Traceback..."),
        WarningMessage(sender=WORKER, content="nobody handles Ping"),
        StartMessage(sender=PLANNER, config=NotificationDelta()),
        StartMessage(sender=WORKER, config=NotificationDelta()),
        event(
            WORKER,
            LlmUsageEvent(run_id="r", model="m", requests=2, input_tokens=10, output_tokens=5),
        ),
    ]
    for seq, message in enumerate(records, 1):
        live.render(record(seq, message))
    live.render(record(99, None, error="team x, event seq 99: cannot decode the stored payload"))
    live.finish()

    assert out.getvalue().splitlines() == [
        "@Worker ✎ [scripted] partial",
        "✗ @Worker search retried",
        "@Worker ✎  more",
        "@Worker → @Human (response): done:",
        "  first",
        "  second",
        "◆ #Notifier state changed (NotificationDelta #3)",
        "✗ @Worker error: the tool broke",
        "! @Worker warning: nobody handles Ping",
        "+ @Planner joined",
        "✗ event 99 could not be read: team x, event seq 99: cannot decode the stored payload",
    ]
    assert str(live.usage) == "2 requests, 10 input / 5 output tokens"


@pytest.mark.parametrize("debug", [False, True])
def test_a_members_traceback_is_printed_with_debug_only(debug: bool) -> None:
    """``-v`` shows every event, a member's error as its one line; its traceback comes
    with ``--debug``, as every traceback the CLI prints."""
    live, out = view(verbose=True)
    before = logs.show_tracebacks(debug)
    try:
        live.render(record(1, ErrorMessage(sender=WORKER, content="it broke", traceback="Tb!")))
        live.finish()
    finally:
        logs.show_tracebacks(before)
    lines = out.getvalue().splitlines()
    assert lines[0] == "✗ @Worker error: it broke"
    assert ("Tb!" in lines) is debug


def test_ascii_marks_when_the_output_is_not_unicode() -> None:
    live, out = view(ascii_only=True)
    sent = SentMessage(
        sender=HUMAN, recipient=WORKER, message=AgentMessage(content="hi", type="request")
    )

    live.render(record(1, sent))

    assert out.getvalue() == "@Human -> @Worker (request): hi\n"


def test_describer_names_what_was_received() -> None:
    describer = Describer()
    message = AgentMessage(content="look  into\nthis", type="request")
    sent = SentMessage(sender=HUMAN, recipient=WORKER, message=message)

    assert describer.describe(record(1, sent)) == (
        "SentMessage",
        "@Human → @Worker (request): look into this",
    )
    received = ReceivedMessage(sender=WORKER, message_id=message.id)
    unknown = ProcessedMessage(sender=WORKER, message_id=uuid4())
    assert describer.describe(record(2, received)) == (
        "ReceivedMessage",
        "@Worker received @Human's request",
    )
    assert describer.describe(record(3, unknown))[1].startswith("@Worker processed message ")
    assert describer.describe(record(4, None, error="bad row")) == ("CORRUPT", "bad row")
    restarted = event(WORKER, LlmAnswerRestartedEvent(run_id="r", chars=1200))
    assert describer.describe(record(5, restarted))[1] == (
        "@Worker: its answer was cut off (1,200 characters dropped): it starts again"
    )


def test_a_line_printed_while_the_prompt_waits_goes_above_it_and_the_prompt_follows() -> None:
    live, buffer = view()
    note = AgentMessage(content="reminder", type="notification", sender=WORKER)

    live.prompt("you> ")
    live.render(record(1, SentMessage(message=note, recipient=HUMAN, sender=WORKER)))
    live.render(record(2, event(WORKER, LlmTextDeltaEvent(delta="thinking", index=0, run_id="r"))))
    live.note("a note")
    live.answered()  # the person pressed Enter: what follows is not on the prompt's line
    live.note("after")

    assert buffer.getvalue() == (
        "you> \n"
        "@Worker → @Human (notification): reminder\n"
        "you> \n"
        "@Worker ✎ thinking\n"
        "a note\n"
        "you> after\n"  # (the terminal echoed the person's Enter after the prompt)
    )


def test_the_answer_to_a_failed_command_is_red_and_a_result_is_not() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=True, color_system="standard")
    live = LiveView(console, human="@Human", known={"@Human", "@Worker"})
    for content, failed in (("Unknown command /nope.", True), ("Conversation cleared.", False)):
        answer = AgentMessage(content=content, type="response", failed=failed, sender=WORKER)
        live.render(record(1, SentMessage(sender=WORKER, recipient=HUMAN, message=answer)))
    unknown, cleared = buffer.getvalue().splitlines()
    assert "\x1b[31m" in unknown and "Unknown command /nope." in unknown
    assert "\x1b[31m" not in cleared and "\x1b[1m" in cleared  # to the person: bold


def test_the_persons_own_message_is_echoed_clipped_and_the_teams_are_whole() -> None:
    live, buffer = view()
    pasted = "p" * 1_048_576
    said = AgentMessage(content=pasted, type="request", sender=HUMAN)
    answer = AgentMessage(content="q" * 2000, type="response", sender=WORKER)

    live.render(record(1, SentMessage(sender=HUMAN, recipient=WORKER, message=said)))
    live.render(record(2, SentMessage(sender=WORKER, recipient=HUMAN, message=answer)))

    echo, reply = buffer.getvalue().splitlines()
    assert echo == f"@Human → @Worker (request): {'p' * (LINE_CHARS - 1)}… (1,048,576 characters)"
    assert reply == f"@Worker → @Human (response): {'q' * 2000}"


def test_a_paste_a_member_passes_on_is_clipped_as_the_echo_is_and_whole_with_verbose() -> None:
    boss = ActorAddressProxy(agent_id=uuid4(), name="@Boss")
    pasted = AgentMessage(content="p" * 1_048_576, type="request", sender=boss)
    passed = record(1, SentMessage(sender=boss, recipient=WORKER, message=pasted))
    clipped = f"@Boss → @Worker (request): {'p' * (LINE_CHARS - 1)}… (1,048,576 characters)"

    live, buffer = view()
    live.render(passed)
    assert buffer.getvalue().splitlines() == [clipped]

    live, buffer = view(verbose=True)
    live.render(passed)
    assert buffer.getvalue().splitlines() == [f"@Boss → @Worker (request): {'p' * 1_048_576}"]


def test_a_hostile_member_name_stays_on_its_line_and_injects_nothing() -> None:
    """A member named with a newline and ESC sequences (a card or a stored log may hold
    one) is printed escaped on one line wherever the live view or ``events`` names it: it
    cannot forge a ``@Boss → @Human`` line or retitle the terminal."""
    evil = ActorAddressProxy(agent_id=uuid4(), name="@Evil\n@Boss → @Human: \x1b]0;pwned\x07")
    shown = "@Evil\\x0a@Boss → @Human: \\x1b]0;pwned\\x07"
    live, out = view()
    said = AgentMessage(content="hi", type="request")
    records = [
        SentMessage(sender=evil, recipient=WORKER, message=said),
        SentMessage(sender=WORKER, recipient=evil, message=said),
        event(evil, LlmTextDeltaEvent(run_id="r", delta="typing")),
        ErrorMessage(sender=evil, content="broke"),
        StartMessage(sender=evil, config=NotificationDelta()),
        event(evil, ToolStateEvent(tool_id="#T\r\x1b[2J", seq=1, payload=NotificationDelta())),
    ]
    for seq, message in enumerate(records, 1):
        live.render(record(seq, message))
    live.finish()
    assert out.getvalue().splitlines() == [
        f"{shown} → @Worker (request): hi",
        f"@Worker → {shown} (request): hi",
        f"{shown} ✎ typing",
        f"✗ {shown} error: broke",
        f"+ {shown} joined",
        "◆ #T\\x0d\\x1b[2J state changed (NotificationDelta #1)",
    ]
    describer = Describer()
    summaries = [describer.describe(record(seq, m))[1] for seq, m in enumerate(records, 1)]
    assert summaries[0] == f"{shown} → @Worker (request): hi"
    assert summaries[3] == f"{shown}: broke"
    assert summaries[4] == f"{shown} started ()"
    assert all("\n" not in s and "\x1b" not in s for s in summaries)


def test_the_last_exchange_is_the_person_s_last_message_and_the_answers_to_them_after_it() -> None:
    first = UserMessage(content="first", sender=HUMAN)
    second = UserMessage(content="second\x1b]0;t\x07", sender=HUMAN)
    answers = [
        AgentMessage(content=f"answer {n}", type="response", sender=WORKER) for n in range(7)
    ]
    log = [
        record(1, SentMessage(sender=HUMAN, recipient=WORKER, message=first)),
        record(2, SentMessage(sender=WORKER, recipient=HUMAN, message=answers[0])),
        record(3, SentMessage(sender=HUMAN, recipient=WORKER, message=second)),
        record(4, SentMessage(sender=WORKER, recipient=PLANNER, message=answers[1])),  # not to them
        record(5, None, error="undecodable"),
        *(
            record(5 + n, SentMessage(sender=WORKER, recipient=HUMAN, message=answers[n]))
            for n in range(1, 7)
        ),
    ]

    exchange = last_exchange(log, "@Human")

    assert [sent.message for sent in exchange] == [second, *answers[1:]]
    assert last_exchange(log[:4], "@Human") == []  # unanswered: listed as interrupted instead
    buffer = io.StringIO()
    _show_exchange(Console(file=buffer, width=40, soft_wrap=True), exchange, "last exchange:")
    assert buffer.getvalue().splitlines() == [
        "last exchange:",
        "  @Human → @Worker: second\\x1b]0;t\\x07",
        "  ... 1 earlier answer: akgentic events lists it",
        *(f"  @Worker → @Human (response): answer {n}" for n in range(2, 7)),
    ]


def test_a_long_answer_in_the_last_exchange_is_clipped_on_one_line() -> None:
    answer = AgentMessage(content="word\n" * 100, type="response", sender=WORKER)
    log = [
        record(1, SentMessage(sender=HUMAN, recipient=WORKER, message=UserMessage(content="hi"))),
        record(2, SentMessage(sender=WORKER, recipient=HUMAN, message=answer)),
    ]
    buffer = io.StringIO()
    _show_exchange(
        Console(file=buffer, width=40, soft_wrap=True), last_exchange(log, "@Human"), "x"
    )
    shown = buffer.getvalue().splitlines()
    assert len(shown) == 3 and shown[2].endswith("… (528 characters)")


_CONTROL = re.compile(r"\x1b\[(\d*)([A-Za-z])|(.)", re.DOTALL)


def screen(output: str, width: int) -> list[str]:
    """The rows a terminal ``width`` columns wide shows once it has written ``output``:
    text wrapping at the last column, newline, carriage return, cursor up (``ESC[nA``),
    erase in line (``ESC[2K``); colours (``ESC[...m``) change nothing here."""
    rows: list[list[str]] = [[]]
    row = col = 0
    for match in _CONTROL.finditer(re.sub(r"\x1b\[[0-9;]*m", "", output)):
        number, code, char = match.groups()
        if code == "A":
            row = max(0, row - int(number or 1))
        elif code == "K":
            rows[row] = []
        elif char == "\r":
            col = 0
        elif char == "\n":
            row, col = row + 1, 0
        elif char is not None:
            if col == width:  # the pending wrap of a full row
                row, col = row + 1, 0
            while len(rows) <= row:
                rows.append([])
            line = [*rows[row], *[" "] * max(0, col - len(rows[row]))]
            rows[row] = [*line[:col], char, *line[col + 1 :]]
            col += 1
        while len(rows) <= row:
            rows.append([])
    return ["".join(r).rstrip() for r in rows if "".join(r).strip()]


def terminal_view(width: int) -> tuple[LiveView, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=True, soft_wrap=True)
    return LiveView(console, human="@Human", known={"@Human", "@Worker"}), buffer


def delta(text: str) -> EventMessage:
    return event(WORKER, LlmTextDeltaEvent(run_id="r", delta=text))


def test_an_answer_cut_off_on_a_terminal_is_erased_and_the_whole_one_replaces_it() -> None:
    """The cut answer ran over three rows of the terminal; the text of the run's earlier
    answer on the same stretch stays."""
    live, out = terminal_view(20)
    partial = "cut off after a long while\nand a line"
    records = [
        delta("Earlier. " + partial[:12]),  # one delta, only its end dropped
        delta(partial[12:]),
        event(WORKER, LlmAnswerRestartedEvent(run_id="r", chars=len(partial))),
        delta("The whole answer."),
    ]
    for seq, message in enumerate(records, 1):
        live.render(record(seq, message))
    live.finish()
    assert screen(out.getvalue(), 20) == ["@Worker ✎ Earlier. T", "he whole answer."]


def test_an_answer_cut_off_in_a_pipe_or_after_another_line_is_said_cut_off() -> None:
    """Printed text cannot be erased there: a line says it was no answer."""
    live, out = view()
    records = [
        delta("Hello"),
        event(WORKER, LlmAnswerRestartedEvent(run_id="r", chars=5)),
        delta("Hello there."),
    ]
    for seq, message in enumerate(records, 1):
        live.render(record(seq, message))
    live.finish()
    assert out.getvalue().splitlines() == [
        "@Worker ✎ Hello",
        "! @Worker's answer above was cut off: it starts again",
        "@Worker ✎ Hello there.",
    ]
    terminal, shown = terminal_view(80)
    terminal.render(record(1, delta("Hello")))
    terminal.note("a note")
    terminal.render(record(2, event(WORKER, LlmAnswerRestartedEvent(run_id="r", chars=5))))
    assert screen(shown.getvalue(), 80) == [
        "@Worker ✎ Hello",
        "a note",
        "! @Worker's answer above was cut off: it starts again",
    ]
