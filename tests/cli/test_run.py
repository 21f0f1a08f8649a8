"""``akgentic run``: one exchange and interactive sessions with the offline research team."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from akgentic.cli.live import LINE_CHARS
from akgentic.core import SentMessage
from akgentic.storage import TeamStatus, open_storage, sqlite_url

from .conftest import AKGENTIC, HANG, RESEARCH, Invoke, assert_in_order, child_env, run_child

QUESTION = "what is special about this framework?"
FINDINGS = (
    f"[scripted] On {QUESTION}: one, it runs offline; two, it is deterministic; "
    "three, it says it is scripted."
)


def assert_research_exchange(stdout: str) -> None:
    """The research team's exchange, as the live view prints it, ending on the answer."""
    lines = stdout.splitlines()
    expected = [
        f"@Human → @Manager: {QUESTION}",
        f"@Manager → @Worker (request): Please look into this and report back: {QUESTION}",
        "@Manager → @Human (acknowledgment): On it: I asked @Worker to look into it.",
        "⚙ @Worker → use_skill(name=three-points)",
        "✓ @Worker use_skill returned",
        f"@Worker ✎ {FINDINGS}",
        f"@Worker → @Manager (response): {FINDINGS}",
        f"@Manager → @Human (response): Here is what @Worker found: {FINDINGS}",
    ]
    assert_in_order(stdout, expected)
    assert lines[-1] == f"answer: Here is what @Worker found: {FINDINGS}"
    assert any(line.startswith("usage: 4 requests") for line in lines)
    assert any("stopped; resume it with: akgentic teams resume" in line for line in lines)


def what_the_person_sent(storage_url: str) -> list[str]:
    """What @Human sent, as the store keeps it, of the one team in the store."""
    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
        return [
            r.message.message.content
            for r in storage.events.read(team.team_id)
            if isinstance(r.message, SentMessage) and r.message.sender.name == "@Human"
        ]
    finally:
        storage.close()


def test_one_exchange_in_process(cli: Invoke, storage_url: str) -> None:
    result = cli("run", str(RESEARCH), "--message", QUESTION)

    assert result.exit_code == 0, result.output
    assert_research_exchange(result.stdout)
    assert result.stderr == ""
    storage = open_storage(storage_url)
    [team] = storage.teams.list()
    assert (team.name, team.status) == ("research", TeamStatus.STOPPED)
    assert result.stdout.splitlines()[0] == (
        f"team research ({str(team.team_id)[:8]}) started: @Manager (entry point), @Worker"
    )
    storage.close()


def test_a_card_run_through_a_link_reads_its_scenarios_beside_the_real_card(
    cli: Invoke, tmp_path: Path
) -> None:
    """``ln -s examples/teams/research.yaml link.yaml``: the run reads the scripted
    scenarios kept beside research.yaml, not ``no such file in`` the link's folder."""
    link = tmp_path / "link.yaml"
    link.symlink_to(RESEARCH)

    result = cli("run", str(link), "--message", QUESTION)

    assert result.exit_code == 0, result.output
    assert_research_exchange(result.stdout)
    assert result.stderr == ""


def test_one_exchange_with_the_console_script_and_the_default_storage(
    tmp_path: Path, data_home: Path
) -> None:
    """The default store is the user's (XDG_DATA_HOME), not the working directory's."""
    done = run_child(
        [str(AKGENTIC), "run", str(RESEARCH), "-m", QUESTION], env=child_env(), cwd=tmp_path
    )

    assert done.returncode == 0, done.stderr
    assert_research_exchange(done.stdout)
    assert "Traceback" not in done.stderr
    assert (data_home / "akgentic" / "akgentic.db").is_file()
    assert list(tmp_path.iterdir()) == []
    # the resume hint names no --storage: the default store is found from anywhere
    assert any(
        "resume it with: akgentic teams resume" in line and "--storage" not in line
        for line in done.stdout.splitlines()
    )


def test_one_exchange_with_python_dash_m(storage_url: str) -> None:
    done = run_child(
        [sys.executable, "-m", "akgentic.cli", "run", str(RESEARCH), "--message", QUESTION],
        env=child_env(storage_url),
    )

    assert done.returncode == 0, done.stderr
    assert_research_exchange(done.stdout)


def test_interactive_lines_then_end_of_input(storage_url: str) -> None:
    lines = f"{QUESTION}\n\n/help\n@Worker report back: cats\n@Nobody hello\n"
    done = run_child([str(AKGENTIC), "run", str(RESEARCH)], env=child_env(storage_url), input=lines)

    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    ordered = [
        f"@Human → @Manager: {QUESTION}",
        f"@Manager → @Human (response): Here is what @Worker found: {FINDINGS}",
        "@Human → @Manager: /help",
        "@Manager → @Human (response): Commands (/help NAME describes one):",
        "@Human → @Worker: report back: cats",
        "⚙ @Worker → use_skill(name=three-points)",
        next(line for line in out if line.startswith("@Worker → @Human (response): [scripted]")),
        "error: @Nobody is not a member of this team (members: @Manager, @Worker); leave the "
        "name out to write to @Manager",
    ]
    assert_in_order(done.stdout, ordered)
    assert "    /hire_members roles — Hire new team members: one per role listed (repeat a " in (
        done.stdout
    )
    assert "On cats" in ordered[6]
    assert "stopped; resume it with" in out[-1]
    assert not any(line.startswith("answer:") for line in out)
    storage = open_storage(storage_url)
    assert [t.status for t in storage.teams.list()] == [TeamStatus.STOPPED]
    storage.close()


def test_interactive_in_process_quits_on_slash_quit(cli: Invoke) -> None:
    result = cli("run", str(RESEARCH), input=f"{QUESTION}\n/quit\nnever sent\n")

    assert result.exit_code == 0, result.output
    assert f"@Manager → @Human (response): Here is what @Worker found: {FINDINGS}" in result.stdout
    assert "never sent" not in result.stdout


def test_model_override_replaces_every_members_model(cli: Invoke) -> None:
    result = cli("run", str(RESEARCH), "-m", "hi", "--model", "scripted:default", "--no-stream")

    assert result.exit_code == 0, result.output
    answer = result.stdout[result.stdout.index("\nanswer: ") + 1 :]
    assert answer.startswith("answer: [scripted] This is akgentic's offline scripted model")
    assert answer.rstrip().endswith("(hireable)")  # a multi-line answer is printed whole
    assert "✎" not in result.stdout


def test_a_message_to_another_member_is_answered_by_that_member(cli: Invoke) -> None:
    result = cli("run", str(RESEARCH), "-m", "@Worker report back: dogs")

    assert result.exit_code == 0, result.output
    assert "@Human → @Worker: report back: dogs" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("answer: [scripted] On dogs: one")


def test_a_team_that_goes_quiet_answers_with_its_last_message(cli: Invoke) -> None:
    result = cli("run", str(HANG), "-m", "nod the plan", "--idle", "0.3")

    assert result.exit_code == 0, result.output
    assert "@Boss → @Human (acknowledgment): Noted: the plan" in result.stdout
    assert result.stdout.splitlines()[-1] == "answer: Noted: the plan"


NOHUMAN = HANG.with_name("nohuman.yaml")
"""A ``human: null`` card: the person writes as ``@System``, and @A answers ``@System``."""


def test_without_a_human_the_response_to_the_sender_is_the_answer(cli: Invoke) -> None:
    result = cli("run", str(NOHUMAN), "-m", "hi", "--idle", "20", "--timeout", "15")

    assert result.exit_code == 0, result.output
    assert "@A → @System (response): hello from @A" in result.stdout
    assert result.stdout.splitlines()[-1] == "answer: hello from @A"
    assert "waiting for the turns in progress" not in result.stdout  # nothing was left to do


def test_without_a_human_each_line_gets_its_answer_and_end_of_input_leaves(cli: Invoke) -> None:
    result = cli("run", str(NOHUMAN), "--idle", "20", "--timeout", "15", input="hi\nhi again\n")

    assert result.exit_code == 0, result.output
    assert result.stdout.count("@A → @System (response): hello from @A") == 2
    assert "no answer" not in result.output


BANNER = "pydantic-ai v"
"""The first line of pydantic-ai's first-run banner (``pydantic-ai v2.68.0 • Python ...``)."""

FIRST_RUN = """
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
Agent(TestModel()).run_sync("hi")
"""


def test_no_pydantic_ai_banner_inside_a_session(storage_url: str) -> None:
    """pydantic-ai shows its banner on a first run when a person (a terminal) or a coding
    agent (``AI_AGENT``) reads stderr, unless ``PYDANTIC_AI_NO_BANNER`` is set; a test run
    (``PYTEST_VERSION``) and CI never see it, so both are left out of the children here."""
    env = child_env(storage_url, AI_AGENT="reader")
    for name in ("PYTEST_VERSION", "CI", "PYDANTIC_AI_NO_BANNER"):
        env.pop(name, None)
    plain = run_child([sys.executable, "-c", FIRST_RUN], env=env)
    assert plain.returncode == 0, plain.stderr
    assert BANNER in plain.stderr  # the same environment shows it outside akgentic

    done = run_child([str(AKGENTIC), "run", str(RESEARCH), "-m", QUESTION], env=env)

    assert done.returncode == 0, done.stderr
    assert_research_exchange(done.stdout)
    assert BANNER not in done.stdout + done.stderr
    assert "Logfire" not in done.stdout + done.stderr


def test_the_cli_readme_sample_is_what_a_run_prints(cli: Invoke, storage_url: str) -> None:
    """The first console block of the CLI README, line by line (``...`` cuts a line short;
    the team id differs): a drifted number (``usage: 4 requests, 415 input``) fails here."""
    readme = (Path(__file__).resolve().parents[2] / "src/akgentic/cli/README.md").read_text()
    block = readme.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    command, sample = block[0], block[1:]
    assert command == f'$ akgentic run examples/teams/research.yaml --message "{QUESTION}"'

    result = cli("run", str(RESEARCH), "--message", QUESTION)

    assert result.exit_code == 0, result.output
    short = result.stdout.split("(", 1)[1][:8]
    shown = [
        line.replace(short, "3ef9dccb").replace(f" --storage {storage_url}", "")  # the default's
        for line in result.stdout.splitlines()
    ]
    assert len(shown) == len(sample)
    for line, expected in zip(shown, sample, strict=True):
        if expected.endswith(" ..."):
            assert line.startswith(expected.removesuffix(" ...")), (line, expected)
        else:
            assert line == expected


def test_a_failed_turn_ends_the_exchange_at_once_saying_why(cli: Invoke) -> None:
    """The turn's End (outcome failed) ends the wait: no idle wait, no "went quiet"."""
    result = cli("run", str(HANG), "-m", "fail", "--idle", "20", "--timeout", "900")

    assert result.exit_code == 1, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: @Boss: ")
    assert "no_such_tool" in error
    assert "went quiet" not in result.output


def test_after_a_failed_turn_the_session_goes_on(cli: Invoke) -> None:
    result = cli("run", str(HANG), "--idle", "20", "--timeout", "900", input="fail\ngo on\n")

    assert result.exit_code == 0, result.output
    assert_in_order(
        result.stdout,
        ["@Human → @Boss: go on", "@Boss → @Human (response): [scripted] done: go on"],
    )
    failed = [line for line in result.stdout.splitlines() if "no_such_tool" in line]
    assert len(failed) == 1 and failed[0].startswith("✗ @Boss error: ")  # said once


def test_control_characters_a_team_says_are_printed_escaped(cli: Invoke) -> None:
    """Text from a person, a model or a tool never reaches the terminal as control codes:
    ``ESC [2J`` would clear the screen, an OSC sequence retitle it. The live view, the
    ``answer:`` line and ``events`` print each control character escaped (``\\x1b``), BEL
    included (rich's ``Text`` would drop it without a trace)."""
    hostile = "\x1b]0;owned\x07 \x1b[2J dogs\x9b"
    result = cli("run", str(RESEARCH), "-m", f"@Worker report back: {hostile}")

    assert result.exit_code == 0, result.output
    assert not any(c in result.output for c in "\x1b\x07\x9b")
    shown = "\\x1b]0;owned\\x07 \\x1b[2J dogs\\x9b"
    assert f"@Human → @Worker: report back: {shown}" in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1].startswith(f"answer: [scripted] On {shown}: one")
    team = result.stdout.split("resume it with: akgentic teams resume ")[1].split()[0]
    events = cli("events", team)
    assert events.exit_code == 0, events.output
    assert "\x1b" not in events.output and f"report back: {shown}" in events.stdout


def test_a_pasted_megabyte_line_is_echoed_clipped_and_delivered_whole(
    cli: Invoke, storage_url: str
) -> None:
    """The live view echoes a typed line clipped (saying how long it was); the member gets
    all of it: @Boss answers ``Noted: <what followed nod>``, every character of it."""
    body = "".join(f"{n:07d}," for n in range(131_072))[: 1_048_576 - len("nod ")]
    line = f"nod {body}"
    assert len(line) == 1_048_576

    result = cli("run", str(HANG), "--idle", "0.3", input=f"{line}\n")

    assert result.exit_code == 0, result.output[-2000:]
    out = result.stdout.splitlines()
    echo = f"@Human → @Boss: {line[: LINE_CHARS - 1]}… (1,048,576 characters)"
    assert echo in out
    assert not any(len(row) > 1_000 for row in out if row.startswith("@Human → "))
    assert f"@Boss → @Human (acknowledgment): Noted: {body}" in out
    assert what_the_person_sent(storage_url) == [line]


@pytest.mark.parametrize("typed", ["caf\udce9", "caf\ud800"])
def test_a_message_whose_bytes_are_not_utf8_is_answered(
    cli: Invoke, storage_url: str, typed: str
) -> None:
    """``-m`` in a Latin-1 shell: Python hands the byte 0xe9 over as the lone surrogate
    U+DCE9 (a Windows command line may hold another kind), which no model request can
    encode. The message is read as a typed line is, each such character U+FFFD, and
    answered — not a turn failed on a serialization error."""
    result = cli("run", str(RESEARCH), "-m", typed)

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("answer: Here is what @Worker found: ")
    assert "On caf\ufffd: one" in result.stdout.splitlines()[-1]
    assert what_the_person_sent(storage_url) == ["caf\ufffd"]


def test_an_unknown_or_failed_command_exits_1_with_its_one_line_error(cli: Invoke) -> None:
    """A script can tell a failed ``/command`` from an answered one: the answer, marked
    ``failed`` by the agent, is the one ``error:`` line on stderr and the exit code is 1,
    as for a failed turn; a command that ran still answers and exits 0."""
    unknown = cli("run", str(RESEARCH), "-m", "/nope")

    assert unknown.exit_code == 1, unknown.output
    [error] = [line for line in unknown.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: @Manager: Unknown command /nope. Commands: /")
    assert error.endswith("(/help describes them)")
    assert not any(line.startswith("answer:") for line in unknown.stdout.splitlines())

    refused = cli("run", str(RESEARCH), "-m", "/help one two")
    assert refused.exit_code == 1, refused.output
    [error] = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: @Manager: /help: too many")

    asked = cli("run", str(RESEARCH), "-m", "/help nosuch")  # about a command nobody has
    assert asked.exit_code == 1, asked.output
    [error] = [line for line in asked.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: @Manager: /help: no command named nosuch; commands: /")
    assert error.endswith(", /help (/help NAME describes one)")

    helped = cli("run", str(RESEARCH), "-m", "/help")
    assert helped.exit_code == 0, helped.output
    assert "answer: Commands (/help NAME describes one):" in helped.stdout.splitlines()
    assert "error:" not in helped.stderr


def test_the_resume_hint_is_quoted_for_a_shell(tmp_path: Path) -> None:
    """A storage URL with a query (``?`` is a glob: zsh says "no matches found") is quoted
    in the hint, so the hint pasted into a shell resumes the team."""
    url = sqlite_url(tmp_path / "x.db") + "?busy_timeout=3"
    done = run_child(
        [str(AKGENTIC), "run", str(RESEARCH), "-m", QUESTION, "--storage", url], env=child_env()
    )

    assert done.returncode == 0, done.stderr
    [hint] = [line for line in done.stdout.splitlines() if "resume it with: " in line]
    command = hint.split("resume it with: ")[1]
    assert command.endswith(f" --storage '{url}'")
    words = shlex.split(command)
    assert words[:3] == ["akgentic", "teams", "resume"] and words[-2:] == ["--storage", url]
    shown = run_child([str(AKGENTIC), *words[1:2], "show", *words[3:]], env=child_env())
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("team:     research (")


def test_an_in_memory_team_gets_no_resume_hint(cli: Invoke) -> None:
    """``memory://`` keeps nothing once the process ends: no hint to resume what is gone,
    but a line that says the team was not kept."""
    result = cli("run", str(RESEARCH), "-m", QUESTION, "--storage", "memory://")

    assert result.exit_code == 0, result.output
    assert "resume it with" not in result.output
    assert any(
        line.endswith(
            "stopped; the team was not kept: an in-memory storage (memory://) ends "
            "with this process"
        )
        for line in result.stdout.splitlines()
    )


def test_run_imports_what_import_names_and_its_resume_line_carries_it_on(cli: Invoke) -> None:
    """``--import`` on ``run`` imports a module before the card is read; the resume line
    names the card's own modules, then the others given, each once."""
    given = ["tests.board_card", "tests.cli.hang_tool", "tests.board_card"]
    result = cli("run", str(HANG), "-m", "hi", *(w for m in given for w in ("--import", m)))
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.stdout.splitlines() if "resume it with:" in line]
    command = line.split("resume it with: akgentic ", 1)[1]
    assert command.endswith("--import tests.cli.hang_tool --import tests.board_card")
    again = cli(*command.split(), "-m", "again")  # a resume's own line carries them on too
    assert again.exit_code == 0, again.output
    assert f"resume it with: akgentic {command}" in again.stdout
    result = cli("run", str(RESEARCH), "-m", "hi", "--import", "tests.no_such_module")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("error: --import tests.no_such_module: ")
