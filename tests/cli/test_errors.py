"""Errors are one readable line naming what to fix, never a traceback (except with --debug)."""

from __future__ import annotations

import json
import logging
import socket
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from akgentic.cli import app, logs
from akgentic.cli.errors import usage_words
from akgentic.core import serialization as registry
from akgentic.core import serialize
from akgentic.storage import TeamStatus, open_storage, sqlite_path, sqlite_url
from akgentic.team import TeamCard
from akgentic.tool.vector_store import backend_names
from tests.board_card import BOARD_TEAM
from tests.event_rows import unpack_events
from tests.hostile_yaml import alias_bomb

from .conftest import AKGENTIC, RESEARCH, Invoke, child_env, run_child
from .test_teams import run_once


def misspelt_card(tmp_path: Path) -> tuple[Path, int]:
    """research.yaml with ``template`` misspelt in the worker's prompt; the file and line."""
    text = RESEARCH.read_text()
    bad = text.replace(
        'template: "You are {name}, a careful', 'tempalte: "You are {name}, a careful'
    )
    assert bad != text
    path = tmp_path / "team.yaml"
    path.write_text(bad)
    line = next(n for n, row in enumerate(bad.splitlines(), 1) if "tempalte" in row)
    return path, line


def test_a_bad_team_card_names_file_line_and_field(cli: Invoke, tmp_path: Path) -> None:
    path, line = misspelt_card(tmp_path)

    result = cli("run", str(path), "-m", "hi")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {path}:{line}: members[0].members[0].card.config.prompt.tempalte: "
        "Extra inputs are not permitted; did you mean 'template'?\n"
    )


def test_debug_shows_the_traceback_in_a_real_process(tmp_path: Path) -> None:
    path, _ = misspelt_card(tmp_path)
    env = child_env(sqlite_url(tmp_path / "x.db"))

    plain = run_child([str(AKGENTIC), "run", str(path)], env=env)
    debug = run_child([str(AKGENTIC), "run", str(path), "--debug"], env=env)

    assert plain.returncode == debug.returncode == 1
    assert "Traceback" not in plain.stderr
    assert plain.stderr.startswith(f"error: {path}:")
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]


def test_debug_shows_a_hostile_value_in_the_traceback_escaped(cli: Invoke, tmp_path: Path) -> None:
    """A card's key carrying an OSC title, a BEL and ESC [2J reaches the exception's
    message; with --debug the traceback's lines show it escaped, as the error line does,
    and stay lines."""
    text = RESEARCH.read_text()
    hostile = text.replace(
        'template: "You are {name}, a careful',
        '"evil\\e]0;owned\\a\\e[2J": 1\n              template: "You are {name}, a careful',
    )
    assert hostile != text
    path = tmp_path / "team.yaml"
    path.write_text(hostile)

    result = cli("run", str(path), "--debug")

    assert result.exit_code == 1
    assert not any(c in result.stderr for c in "\x1b\x07")
    lines = result.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    shown = "prompt.evil\\x1b]0;owned\\x07\\x1b[2J: Extra inputs are not permitted"
    assert lines[-2].startswith("akgentic.team.card.TeamCardError: ") and lines[-2].endswith(shown)
    assert lines[-1].startswith("error: ") and lines[-1].endswith(shown)


def test_debug_lasts_for_its_command_only(cli: Invoke, tmp_path: Path) -> None:
    """A command run in-process with --debug (by a program, a test) leaves log lines
    without tracebacks and the akgentic logger at its level once it returns, failed or
    not: the next command, or the program's own logging, is as it was."""
    akgentic_logger = logging.getLogger("akgentic")
    level = akgentic_logger.level
    for args in (("run", str(tmp_path / "nope.yaml"), "--debug"), ("teams", "list", "--debug")):
        cli(*args)
        assert logs._FORMATTER.tracebacks is False, args
        assert akgentic_logger.level == level, args


def test_a_missing_card_file(cli: Invoke, tmp_path: Path) -> None:
    result = cli("run", str(tmp_path / "nope.yaml"))

    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {tmp_path / 'nope.yaml'}: cannot read the team card: No such file or directory\n"
    )


COMMANDS_ON_A_TEAM = (
    ["teams", "show"],
    ["teams", "stop"],
    ["teams", "resume"],
    ["teams", "delete"],
    ["events"],
    ["usage"],
)


def test_unknown_team(cli: Invoke, storage_url: str) -> None:
    """With no store yet: "no teams yet", and no store is made; with teams: list them."""
    for command in COMMANDS_ON_A_TEAM:
        result = cli(*command, "abc")

        assert result.exit_code == 1
        assert result.stderr == (
            "error: no team matches 'abc': there are no teams yet in this storage; start one "
            f"with: akgentic run TEAM.yaml --storage {storage_url}\n"
        )
    assert not sqlite_path(storage_url).parent.exists() or not sqlite_path(storage_url).exists()
    assert cli("run", str(RESEARCH), "-m", "hi").exit_code == 0
    for command in COMMANDS_ON_A_TEAM:
        result = cli(*command, "abc")

        assert result.exit_code == 1
        assert result.stderr == (
            f"error: no team matches 'abc'; list the teams with: akgentic teams list "
            f"--storage {storage_url}\n"
        )


def test_a_missing_api_key_names_its_variable(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    by_flag = cli("run", str(RESEARCH), "-m", "hi", "--model", "openai:gpt-5.2")

    assert by_flag.exit_code == 1
    [line] = by_flag.stderr.splitlines()
    assert line.startswith("error: @Manager: model 'openai:gpt-5.2' needs an API key")
    assert "export OPENAI_API_KEY=" in line


def test_the_model_comes_from_akgentic_model_too(tmp_path: Path) -> None:
    env = child_env(sqlite_url(tmp_path / "x.db"), AKGENTIC_MODEL="openai:gpt-5.2")
    env.pop("OPENAI_API_KEY", None)

    done = run_child([str(AKGENTIC), "run", str(RESEARCH), "-m", "hi"], env=env)

    assert done.returncode == 1
    assert "OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_model_spec_and_a_bad_storage_url(cli: Invoke) -> None:
    spec = cli("run", str(RESEARCH), "-m", "hi", "--model", "gpt")
    url = cli("teams", "list", "--storage", "ftp://x")

    assert spec.exit_code == url.exit_code == 1
    assert spec.stderr.startswith("error: model spec 'gpt' must read 'provider:model'")
    assert url.stderr.startswith("error: unsupported storage URL (scheme 'ftp'); accepted: ")


def test_an_unknown_model_provider_is_one_line(cli: Invoke) -> None:
    done = cli("run", str(RESEARCH), "-m", "hi", "--model", "nosuchprovider:xyz")

    assert done.exit_code == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "error: unknown model provider 'nosuchprovider' in 'nosuchprovider:xyz'; known "
        "providers: openai, anthropic,"
    )


@pytest.mark.parametrize(
    "extra",
    [[], ["--base-url", "http://127.0.0.1:9/v1"]],
    ids=["model", "model-and-base-url"],
)
def test_a_model_spec_that_lists_a_model_twice_is_one_line(cli: Invoke, extra: list[str]) -> None:
    """The roster's validator refuses it (a pydantic error, not a ``ValueError`` of the
    spec's parser): one line in its own words, without pydantic's title, type or link,
    and not blamed on ``--base-url``."""
    spec = "openai-compatible:m, openai-compatible:m"
    line = one_error_line(cli, "run", str(RESEARCH), "-m", "hi", "--model", spec, *extra)
    assert line == "models: model 'openai-compatible:m' is listed twice: list each model once"


def test_any_pydantic_error_a_command_lets_out_is_one_line() -> None:
    """``explain``: whatever ``ValidationError`` escapes a command, one line naming each
    field, a validator's words without pydantic's ``Value error, ``."""
    from pydantic import BaseModel, ValidationError, field_validator

    from akgentic.cli.errors import explain

    class Settings(BaseModel):
        port: int
        url: str

        @field_validator("url")
        @classmethod
        def _http(cls, value: str) -> str:
            raise ValueError("must be an http:// URL")

    with pytest.raises(ValidationError) as refused:
        Settings.model_validate({"port": "x", "url": "ftp://h"})
    assert explain(refused.value) == (
        "port: Input should be a valid integer, unable to parse string as an integer; "
        "url: must be an http:// URL"
    )


def test_an_unexpected_error_whose_words_span_lines_is_one_line() -> None:
    """``explain``: a driver's message over several lines (psycopg's ``connection
    failed: ...`` then a tabbed ``Is the server running ...``) is one ``error:`` line,
    not one per line of the driver's text."""
    from akgentic.cli.errors import explain

    class OperationalError(Exception):
        pass

    said = explain(OperationalError("connection failed: refused\n\tIs the server running?"))

    assert said == (
        "OperationalError: connection failed: refused Is the server running? "
        "(rerun with --debug to see the traceback)"
    )


def test_a_file_path_as_storage_is_answered_with_its_url(cli: Invoke, tmp_path: Path) -> None:
    """``--storage teams.db`` (a path, the likeliest slip) names the URL to write instead."""
    absolute = cli("teams", "list", "--storage", str(tmp_path / "teams.db"))
    relative = cli("run", str(RESEARCH), "-m", "hi", "--storage", "teams.db")

    assert absolute.exit_code == relative.exit_code == 1
    [line] = absolute.stderr.splitlines()
    assert line.startswith(
        f"error: storage {str(tmp_path / 'teams.db')!r} is a path, not a URL: for a SQLite "
        f"file there, give {sqlite_url(tmp_path / 'teams.db')} (accepted: memory://"
    )
    assert relative.stderr.startswith(
        "error: storage 'teams.db' is a path, not a URL: for a SQLite file there, give "
        "sqlite:///teams.db (accepted: "
    )
    assert not (tmp_path / "teams.db").exists()


def test_an_empty_message_and_a_bad_option(cli: Invoke) -> None:
    empty = cli("run", str(RESEARCH), "--message", " ")
    usage = cli("events", "x", "--from", "0")

    assert empty.exit_code == 1
    assert empty.stderr == "error: --message needs some text\n"
    assert usage.exit_code == 2


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["run", "--bogus"],
            "error: no such option: --bogus (Possible options: --verbose) "
            "(see: akgentic run --help)",
        ),
        (
            ["teams", "shw"],
            "error: no such command 'shw'. Did you mean 'show'? (see: akgentic teams --help)",
        ),
        (["events"], "error: missing argument 'TEAM' (see: akgentic events --help)"),
        (["nope"], "error: no such command 'nope' (see: akgentic --help)"),
    ],
)
def test_a_command_line_the_parser_refuses_is_one_line(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    """The console script, as a user runs it: click's usage block, hint and ``Error:``
    line are one ``error:`` line that says where the help is; the exit code stays 2."""
    result = run_child(
        [str(AKGENTIC), *argv], env=child_env(sqlite_url(tmp_path / "teams.db")), cwd=tmp_path
    )

    assert result.returncode == 2
    assert result.stderr.splitlines() == [line]
    assert result.stdout == ""


def test_a_bad_option_value_is_one_line_with_the_option_named(tmp_path: Path) -> None:
    result = run_child(
        [str(AKGENTIC), "serve", "--port", "x"],
        env=child_env(sqlite_url(tmp_path / "teams.db")),
        cwd=tmp_path,
    )

    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("error: invalid value for '--port'")
    assert line.endswith("(see: akgentic serve --help)")


def test_usage_words() -> None:
    assert usage_words("Missing argument 'X'.", "akgentic run") == (
        "missing argument 'X' (see: akgentic run --help)"
    )
    assert usage_words("URL is\nbad", None) == "URL is bad"


def test_retry_and_dismiss_are_exclusive(cli: Invoke) -> None:
    result = cli("teams", "resume", "anything", "--retry-interrupted", "--dismiss-interrupted")
    assert result.exit_code != 0
    assert "choose one: --retry-interrupted or --dismiss-interrupted" in result.stderr
    assert "Traceback" not in result.output


# -- broken storage: one line naming the file or the team, the rest still works ---------------


def test_a_storage_file_of_random_bytes_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "noise.db"
    path.write_bytes(bytes(range(256)) * 16)
    runner_env = {"AKGENTIC_STORAGE": sqlite_url(path), "AKGENTIC_MODEL": None}
    result = CliRunner().invoke(app, ["teams", "list"], env=runner_env)

    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: cannot open storage {sqlite_url(path)}: {path}: file is not")


def test_a_store_locked_by_a_long_write_says_how_to_wait_longer(tmp_path: Path) -> None:
    """A command that writes (a delete) waits its busy_timeout; one that reads does not
    wait at all (``teams list`` reads beside the write transaction)."""
    path = tmp_path / "locked.db"
    store = open_storage(sqlite_url(path))
    store.teams.create("locked")
    store.close()
    url = sqlite_url(path) + "?busy_timeout=0.05"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's long write transaction
    holder.execute("DELETE FROM akgentic_leases")
    env = {"AKGENTIC_STORAGE": url, "AKGENTIC_MODEL": None}
    try:
        listed = CliRunner().invoke(app, ["teams", "list"], env=env)
        result = CliRunner().invoke(app, ["teams", "delete", "locked"], env=env)
    finally:
        holder.rollback()
        holder.close()

    assert listed.exit_code == 0, listed.output
    assert "locked" in listed.stdout
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.endswith(
        f"{path}: database is locked: another process holds the file (this one waited its "
        f"busy_timeout, 0.05 s); retry, or wait longer: add ?busy_timeout=SECONDS to the "
        f"storage URL, as in --storage '{sqlite_url(path)}?busy_timeout=120'"
    ), line


def test_a_damaged_team_is_reported_and_the_others_still_list(
    cli: Invoke, storage_url: str
) -> None:
    card = serialize(TeamCard.from_yaml(RESEARCH))
    storage = open_storage(storage_url)
    good = storage.teams.create("good", card=card).team_id
    bad = storage.teams.create("bad", card=card).team_id
    storage.close()
    conn = sqlite3.connect(sqlite_path(storage_url))
    conn.execute(
        "UPDATE akgentic_teams SET status = 'garbage', card = '{' WHERE team_id = ?", (str(bad),)
    )
    conn.commit()
    conn.close()

    listed = cli("teams", "list")
    assert listed.exit_code == 0, listed.output
    rows = [line.split()[:3] for line in listed.stdout.splitlines()[1:]]
    assert rows == [[str(good), "good", "RUNNING"], [str(bad), "bad", "DAMAGED"]]
    (warning,) = listed.stderr.splitlines()
    assert warning.startswith(f"warning: team {bad}: the stored status 'garbage'")
    damaged = cli("teams", "list", "--status", "damaged")  # the status the list shows
    assert damaged.exit_code == 0, damaged.output
    assert [line.split()[:3] for line in damaged.stdout.splitlines()[1:]] == [
        [str(bad), "bad", "DAMAGED"]
    ]

    shown = cli("teams", "show", str(bad))
    assert shown.exit_code == 0, shown.output
    assert "status:   DAMAGED" in shown.stdout and "not valid JSON" in shown.stdout

    resumed = cli("teams", "resume", str(bad), "-m", "hi")
    assert resumed.exit_code == 1
    (line,) = resumed.stderr.splitlines()
    assert line.startswith(f"error: team {bad}: the stored status 'garbage'")

    assert cli("teams", "delete", str(bad), "--purge", "--yes").exit_code == 0
    assert [line.split()[0] for line in cli("teams", "list").stdout.splitlines()[1:]] == [str(good)]


@pytest.mark.parametrize("field", ["card", "metadata"])
def test_a_team_whose_card_or_metadata_is_damaged_is_listed_damaged_and_says_what_to_do(
    cli: Invoke, storage_url: str, field: str
) -> None:
    """Only its card (or metadata) unreadable, its status fine: listed DAMAGED as
    docs/operations.md says (a resume refuses it), and the resume's one line ends with
    the ways on: a backup, the history that still reads, deleting it."""
    card = serialize(TeamCard.from_yaml(RESEARCH))
    storage = open_storage(storage_url)
    bad = storage.teams.create("bad", card=card).team_id
    storage.teams.set_status(bad, TeamStatus.STOPPED)
    storage.close()
    with closing(sqlite3.connect(sqlite_path(storage_url))) as conn, conn:
        conn.execute(f"UPDATE akgentic_teams SET {field} = '{{not a card'")

    listed = cli("teams", "list")
    assert listed.exit_code == 0, listed.output
    assert [line.split()[:3] for line in listed.stdout.splitlines()[1:]] == [
        [str(bad), "bad", "DAMAGED"]
    ]
    shown = cli("teams", "show", str(bad))
    assert "status:   DAMAGED (stored status: STOPPED)" in shown.stdout

    resumed = cli("teams", "resume", str(bad), "-m", "hi")
    assert resumed.exit_code == 1
    (line,) = resumed.stderr.splitlines()
    short = str(bad)[:8]
    assert line.startswith(f"error: team {bad}: {field}: the stored value is not valid JSON")
    assert f"restore the store {sqlite_path(storage_url)} from a backup" in line
    assert f"akgentic events {short} --storage {storage_url}" in line
    assert line.endswith(
        f"remove the team with: akgentic teams delete {short} --storage {storage_url}"
    )


@pytest.mark.parametrize(
    ("stored", "problem", "listed"),
    [
        (
            {"__model__": "akgentic.team.card.TeamCard"},
            "'s team card has no name, entry_point, members",
            "DAMAGED",
        ),
        ({}, " has no team card", "DAMAGED"),
        (
            "@Nobody",
            "'s team card fails this version's card checks: card: entry_point '@Nobody' is "
            "not a member; members are @Manager, @Worker",
            "STOPPED",  # only the full checks see it: teams list does not import them
        ),
        (
            "misspelt",
            "'s team card fails this version's card checks: entry_pont: Extra inputs are "
            "not permitted; did you mean 'entry_point'?",
            "STOPPED",
        ),
    ],
    ids=["no-fields", "empty", "entry-point", "misspelt"],
)
def test_a_stored_card_that_fails_the_checks_says_what_to_do_on_one_line(
    cli: Invoke, storage_url: str, stored: Any, problem: str, listed: str
) -> None:
    """JSON that reads but is no valid card: the resume's one line says so and the ways on,
    as for a card that is not JSON; ``show`` says the same; ``list`` flags what it can."""
    card = serialize(TeamCard.from_yaml(RESEARCH))
    if stored == "@Nobody":
        stored = {**card, "entry_point": "@Nobody"}
    elif stored == "misspelt":  # a key a later version renamed, or a hand-edited store
        stored = {**card, "entry_pont": card["entry_point"]}
    storage = open_storage(storage_url)
    bad = storage.teams.create("bad", card=card).team_id
    storage.teams.set_status(bad, TeamStatus.STOPPED)
    storage.close()
    with closing(sqlite3.connect(sqlite_path(storage_url))) as conn, conn:
        conn.execute("UPDATE akgentic_teams SET card = ?", (json.dumps(stored),))

    listed_rows = cli("teams", "list").stdout.splitlines()[1:]
    assert [row.split()[:3] for row in listed_rows] == [[str(bad), "bad", listed]]
    short = str(bad)[:8]
    resumed = cli("teams", "resume", str(bad), "-m", "hi")
    assert resumed.exit_code == 1
    (line,) = resumed.stderr.splitlines()
    assert line.startswith(f"error: team {short}{problem}; the record is kept as stored")
    if listed == "DAMAGED":  # no card at all: only a backup brings it back
        assert f"restore the store {sqlite_path(storage_url)} from a backup" in line
    else:  # a backup holds the same card: the version that stored it, or a new team
        assert "backup" not in line
        assert (
            "resume the team with the akgentic version that stored it, or start a new team" in line
        )
    assert line.endswith(
        f"remove the team with: akgentic teams delete {short} --storage {storage_url}"
    )
    shown = cli("teams", "show", str(bad))
    assert shown.exit_code == 0, shown.output
    assert f"card:     team {short}{problem}; the record is kept" in shown.stdout
    assert "a resume restores" not in shown.stdout  # it refuses the card


def test_a_broken_card_is_one_error_line_before_anything_starts(
    cli: Invoke, tmp_path: Path
) -> None:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(RESEARCH.read_bytes().replace(b"careful", "carefül".encode("latin-1")))
    crowd = tmp_path / "crowd.yaml"
    crowd.write_text(
        RESEARCH.read_text().replace(
            "      - card:\n", "      - headcount: 100000000\n        card:\n"
        )
    )
    nope = tmp_path / "nope.yaml"
    nope.write_text(RESEARCH.read_text().replace("a careful researcher", "a {nope} researcher"))
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    for path, complaint in (
        (latin1, "not UTF-8 text (byte 0xfc"),
        (bomb, "expands to more than 1,000,000 values"),
        (crowd, "headcount: Input should be less than or equal to 100"),
        (nope, "@Worker: prompt.template: placeholder {nope} has no value"),
    ):
        result = cli("run", str(path), "-m", "hi")
        assert result.exit_code == 1
        assert result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"error: {path}:") and complaint in line, line


ANALYST = RESEARCH.parent / "analyst.yaml"


def edited_analyst(tmp_path: Path, old: str, new: str, needle: str) -> tuple[Path, int]:
    """analyst.yaml with ``old`` replaced by ``new``, beside its scenario; the file and
    the line of its first row holding ``needle``."""
    text = ANALYST.read_text()
    bad = text.replace(old, new)
    assert bad != text
    path = tmp_path / "analyst.yaml"
    path.write_text(bad)
    (path.parent / "analyst.scenario.yaml").write_bytes(
        ANALYST.with_name("analyst.scenario.yaml").read_bytes()
    )
    line = next(n for n, row in enumerate(bad.splitlines(), 1) if needle in row)
    return path, line


@pytest.mark.parametrize(
    ("tool", "setting", "field", "complaint"),
    [
        (
            "PlanningTool",
            "vector_store: {backend: faiss}",
            "members[0].card.config.tools[0].vector_store.backend",
            "unknown vector store backend 'faiss': use one of {backends}, leave it out for "
            "the default, or register your own (register_backend) in a module imported first",
        ),
        (
            "NotificationTool",
            "message_class: acme.messages.Reminder",
            "members[0].card.config.tools[2].message_class",
            "NotificationTool message_class 'acme.messages.Reminder' names no class defined "
            "in this process: import the module that defines it first (a YAML card lists it "
            "under imports) and name that module (module.QualName, not a re-export), or "
            "leave message_class out for the default",
        ),
    ],
)
def test_a_card_naming_an_unknown_backend_or_message_class_is_refused_as_it_is_read(
    cli: Invoke,
    storage_url: str,
    tmp_path: Path,
    tool: str,
    setting: str,
    field: str,
    complaint: str,
) -> None:
    """Refused when the card is read, on one line naming the file, line, field, the value
    and what to do — not first by the member that wires it once the team starts."""
    path, line = edited_analyst(
        tmp_path,
        f"- type: {tool}\n",
        f"- type: {tool}\n            {setting}\n",
        setting.split(":")[0],
    )

    result = cli("run", str(path), "-m", "hi")

    assert result.exit_code == 1
    assert result.stdout == ""  # nothing started
    backends = ", ".join(backend_names())  # the built-in three, and any a test registered
    said = complaint.format(backends=backends)
    assert result.stderr == f"error: {path}:{line}: {field}: {said}\n"
    storage = open_storage(storage_url)
    assert storage.teams.list() == []
    storage.close()


def test_a_tool_card_listed_twice_in_a_member_is_refused_as_the_card_is_read(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    """Not at team start as a raw ValueError with the team left in storage: one line
    naming the file, the member, the card's position and what to do."""
    path, line = edited_analyst(
        tmp_path,
        "- type: NotificationTool\n",
        "- type: NotificationTool\n          - type: PlanningTool\n",
        "- type: PlanningTool",
    )

    result = cli("run", str(path), "-m", "hi")

    assert result.exit_code == 1
    assert result.stdout == ""  # nothing started
    assert result.stderr == (
        f"error: {path}:{line}: members[0].card.config.tools: @Analyst: tools[3] (PlanningTool) "
        "turns on get_planning, get_planning_task, update_planning, search_planning again, as "
        "tools[0] (PlanningTool) does: a member has each capability once. Remove the duplicate "
        "card, or turn those off on one of them (get_planning: false)\n"
    )
    storage = open_storage(storage_url)
    assert storage.teams.list() == []
    storage.close()


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (
            (
                "- type: NotificationTool\n",
                "- type: NotificationTool\n            message_class: stored_reminders.Reminder\n",
            ),
            "message_class: NotificationTool message_class 'stored_reminders.Reminder' names "
            "no class defined in this process",
        ),
        (
            ("entry_point:", "message_types: [stored_reminders.Reminder]\nentry_point:"),
            "message_types: message type 'stored_reminders.Reminder' is not defined",
        ),
    ],
    ids=["message_class", "message_types"],
)
def test_a_stored_card_naming_a_class_of_its_imports_says_to_import_them(
    cli: Invoke,
    storage_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    edit: tuple[str, str],
    complaint: str,
) -> None:
    """Read without the modules its card imports, a card naming a class they define fails
    its checks: the line says to pass them with --import, not that an older version stored
    it; with them, the card reads."""
    (tmp_path / "stored_reminders.py").write_text(
        "from akgentic.core import UserMessage\n\n\nclass Reminder(UserMessage):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    text = (
        ANALYST.read_text()
        .replace(*edit)
        .replace("entry_point:", "imports: [stored_reminders]\nentry_point:", 1)
    )
    (tmp_path / "team.yaml").write_text(text)
    card = TeamCard.from_yaml(tmp_path / "team.yaml")  # imports stored_reminders
    storage = open_storage(storage_url)
    team = storage.teams.create("reminders", card=serialize(card)).team_id
    storage.teams.set_status(team, TeamStatus.STOPPED)
    storage.close()
    monkeypatch.delitem(sys.modules, "stored_reminders")  # a new process: not imported
    monkeypatch.delitem(registry._registry, "stored_reminders.Reminder")
    short = str(team)[:8]

    resumed = cli("teams", "resume", short, "-m", "hi")

    assert resumed.exit_code == 1
    (line,) = resumed.stderr.splitlines()
    assert line.startswith(
        f"error: team {short}'s team card fails its checks without the modules it imports: "
        f"{complaint}"
    )
    assert line.endswith(
        "; its card imports stored_reminders: rerun with --import stored_reminders"
    )
    shown = cli("teams", "show", short, "--import", "stored_reminders")
    assert shown.exit_code == 0 and "reminders" in shown.stdout
    assert "fails" not in shown.stdout, shown.stdout


def test_stopping_a_team_whose_status_is_garbled_repairs_it(cli: Invoke, storage_url: str) -> None:
    card = serialize(TeamCard.from_yaml(RESEARCH))
    storage = open_storage(storage_url)
    team = storage.teams.create("garbled", card=card).team_id
    storage.close()
    conn = sqlite3.connect(sqlite_path(storage_url))
    conn.execute("UPDATE akgentic_teams SET status = ''")
    conn.commit()
    conn.close()

    stopped = cli("teams", "stop", str(team))
    assert stopped.exit_code == 0, stopped.output
    listed = cli("teams", "list")
    assert [line.split()[2] for line in listed.stdout.splitlines()[1:]] == ["STOPPED"]
    assert listed.stderr == ""


def test_a_resume_of_a_team_whose_status_is_garbled_says_how_to_repair_it(
    cli: Invoke, storage_url: str
) -> None:
    """The resume refuses a damaged row; for a status, ``teams stop`` repairs it: said."""
    team = run_once(cli)
    conn = sqlite3.connect(sqlite_path(storage_url))
    conn.execute("UPDATE akgentic_teams SET status = 'WEIRD'")
    conn.commit()
    conn.close()
    short = str(team)[:8]

    refused = cli("teams", "resume", short, "-m", "again")

    assert refused.exit_code == 1
    [line] = refused.stderr.splitlines()
    assert line.endswith(
        f"; repair it with: akgentic teams stop {short} --storage {storage_url}, then resume it"
    )
    assert cli("teams", "stop", short).exit_code == 0
    assert cli("teams", "resume", short, "-m", "again").exit_code == 0


# -- every command, against real failures: one `error:` line that says what to do ---------


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A loopback port bound by nobody listening: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def one_error_line(cli: Invoke, *args: str, input: str | None = None) -> str:
    result = cli(*args, input=input)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    return line.removeprefix("error: ")


def test_serve_on_a_port_in_use_says_to_choose_another(cli: Invoke, busy_port: int) -> None:
    line = one_error_line(cli, "serve", "--port", str(busy_port))
    assert line == (
        f"cannot listen on 127.0.0.1:{busy_port}: the address is in use (another akgentic "
        "serve?): choose another port with --port, or stop what holds it"
    )


def test_serve_with_cards_that_do_not_exist(cli: Invoke, tmp_path: Path) -> None:
    line = one_error_line(cli, "serve", "--port", "0", "--cards", str(tmp_path / "nope"))
    assert line == f"{tmp_path / 'nope'}: no such file or folder"


def test_serve_with_a_card_file_that_cannot_be_read_refuses_to_start(
    cli: Invoke, tmp_path: Path
) -> None:
    card = tmp_path / "long.yaml"
    card.write_text(RESEARCH.read_text() + "max_turns: " + "1" * 5000 + "\n")
    line = one_error_line(cli, "serve", "--port", "0", "--cards", str(card))
    assert line.startswith(f"{card}:")
    assert "not valid YAML: an integer of 5,000 digits, more than the 4,300 Python reads" in line


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://256.1.1.1:1", "invalid IPv4 address: '256.1.1.1'"),
        ("http://", "it names no host"),
        ("localhost:8080", "it does not start with http:// or https://"),
        ("http://127.0.0.1:99999", "the port must be 1 to 65535, not 99999"),
    ],
)
def test_a_server_url_that_is_not_one_says_the_form_expected(
    cli: Invoke, url: str, why: str
) -> None:
    line = one_error_line(cli, "teams", "list", "--server", url)
    assert line == (
        f"{url!r} is not a server URL ({why}): give it as http://HOST:PORT (or https://HOST:PORT)"
    )


@pytest.mark.parametrize(
    "command",
    [["run", str(RESEARCH), "-m", "hi"], ["events", "research"], ["usage", "research"]],
    ids=lambda c: c[0],
)
def test_a_server_that_does_not_answer_is_named(
    cli: Invoke, command: list[str], refusing_port: int
) -> None:
    url = f"http://127.0.0.1:{refusing_port}"
    line = one_error_line(cli, *command, "--server", url)
    assert line.startswith(f"server {url}: cannot reach {url} (connection refused)")
    assert "akgentic serve" in line


def test_a_postgres_server_that_does_not_answer_is_one_line(
    cli: Invoke, refusing_port: int
) -> None:
    url = f"postgresql://akgentic@127.0.0.1:{refusing_port}/teams"
    line = one_error_line(cli, "teams", "list", "--storage", url)
    assert line.startswith(f"cannot open storage {url}: ")
    assert "refused" in line.lower()


def test_a_postgres_url_s_password_is_never_printed(cli: Invoke, refusing_port: int) -> None:
    """The line that names a store it cannot open shows its password as ``***``: an
    error line ends up in terminals, CI logs and a service's journal."""
    url = f"postgresql://app:s3cret-pw@127.0.0.1:{refusing_port}/teams?connect_timeout=5"
    line = one_error_line(cli, "teams", "list", "--storage", url)
    shown = f"postgresql://app:***@127.0.0.1:{refusing_port}/teams?connect_timeout=5"
    assert line.startswith(f"cannot open storage {shown}: ")
    assert "s3cret" not in line


def test_a_storage_url_in_the_old_spelling(cli: Invoke, tmp_path: Path) -> None:
    line = one_error_line(cli, "run", str(RESEARCH), "-m", "hi", "--storage", "sqlite://t.db")
    assert line == (
        "'sqlite://t.db' has two slashes, which name a host: write sqlite:///t.db for a file "
        "relative to the working directory, or sqlite:////t.db for the absolute path /t.db"
    )


def test_catalog_refusals(cli: Invoke) -> None:
    assert one_error_line(cli, "catalog", "enable", "nope").startswith(
        "no tool type or catalog instance is called 'nope'; types: "
    )
    assert one_error_line(cli, "catalog", "set-credential", "web_search", "--stdin", input="") == (
        "no credential on standard input (one line is read)"
    )
    assert one_error_line(cli, "catalog", "configure", "web_search", "--json", "{bad").startswith(
        "--json"
    )
    assert one_error_line(cli, "catalog", "configure", "vector.qdrant", "--set", "url=q:1") == (
        "config of vector.qdrant does not validate: url: must be an http:// or https:// URL, "
        "e.g. http://localhost:8000, got 'q:1'"
    )


# -- failures inside a running team: the stream's line, no traceback without --debug -------

GLOSSARY = RESEARCH.parent / "glossary.yaml"


@pytest.mark.parametrize(
    "server",
    [
        {"command": "${AKGENTIC_PYTHON}", "args": ["-c", "raise SystemExit(3)"]},  # dies
        {"command": "no-such-mcp-server"},  # cannot be started at all
    ],
    ids=["dies", "nocmd"],
)
def test_a_server_that_cannot_start_and_a_failed_handler_show_no_traceback(
    tmp_path: Path, server: dict[str, object]
) -> None:
    """The glossary's scenario calls a tool of a server that is not there: the agent warns
    once and its handler fails (ScenarioError) — each one line, in a real process."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"glossary": server}}))
    argv = [str(AKGENTIC), "run", str(GLOSSARY), "--mcp-config", str(config), "-m", "define x"]
    env = child_env(sqlite_url(tmp_path / "x.db"))

    plain = run_child(argv, env=env, cwd=tmp_path)
    debug = run_child([*argv, "--debug"], env=env, cwd=tmp_path)

    assert plain.returncode == debug.returncode == 1
    assert "Traceback" not in plain.stdout + plain.stderr
    lines = plain.stdout.splitlines()
    [warning] = [line for line in lines if "cannot start" in line]
    assert warning.startswith("! @Librarian MCP server 'glossary' (")
    [failed] = [line for line in lines if line.startswith("✗")]
    assert failed.startswith("✗ @Librarian error: handler for UserMessage raised: ScenarioError")
    why = failed.removeprefix("✗ @Librarian error: handler for UserMessage raised: ")
    assert plain.stderr.splitlines() == [f"error: @Librarian: {why}"]  # the failed turn's End
    assert "Traceback (most recent call last)" in debug.stderr


def test_a_yaml_syntax_error_in_a_card_is_one_line_naming_the_file(
    cli: Invoke, tmp_path: Path
) -> None:
    card = tmp_path / "bad.yaml"
    card.write_text("name: x\nmembers:\n  - card: [\n   role: a\n")
    line = one_error_line(cli, "run", str(card), "-m", "hi")
    assert line == (
        f"{card}:5: not valid YAML: expected ',' or ']', but got '<stream end>' at line 5, "
        "column 1 (while parsing a flow sequence at line 3, column 11)"
    )


def test_a_skipped_skill_is_one_line_of_the_session_naming_its_file(tmp_path: Path) -> None:
    """Not a ``WARNING akgentic...`` log line on stderr next to the session's own lines."""
    broken = tmp_path / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: [x\ndescription: y\n---\nbody\n")
    text = RESEARCH.read_text()
    scenario = str(RESEARCH.with_name("research.scenario.yaml"))
    text = text.replace("scripted:research.scenario.yaml", f"scripted:{scenario}")
    inline = "                skills:\n                  skills:\n"
    assert inline in text
    folders = f"                skills:\n                  folders: [{broken.parent.parent}]\n"
    card = tmp_path / "research.yaml"
    card.write_text(text.replace(inline, folders + "                  skills:\n"))

    done = run_child(
        [str(AKGENTIC), "run", str(card), "-m", "hi"],
        env=child_env(sqlite_url(tmp_path / "x.db")),
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    [line] = [line for line in done.stdout.splitlines() if line.startswith("! ")]
    assert line == (
        f"! @Worker skill {broken} skipped: the frontmatter is not valid YAML: expected ',' "
        "or ']', but got ':' at line 3, column 12 (while parsing a flow sequence at line 2, "
        "column 7)"
    )


def test_a_message_to_no_member_is_refused_before_the_team_starts(
    cli: Invoke, storage_url: str
) -> None:
    assert _refused_before_start(cli, storage_url, "@Nobody hello") == (
        "error: @Nobody is not a member of this team (members: @Manager, @Worker): "
        "address one of them, or leave the name out to write to @Manager"
    )
    assert _refused_before_start(cli, storage_url, "@Human hello") == (
        "error: @Human is the person writing, not a member: address one of @Manager, @Worker, "
        "or leave the name out to write to @Manager"
    )


def _refused_before_start(cli: Invoke, storage_url: str, message: str) -> str:
    """The one stderr line of ``run -m message``, refused before any team started (exit 1,
    nothing on stdout, no team in the store)."""
    result = cli("run", str(RESEARCH), "-m", message)
    assert result.exit_code == 1
    assert result.stdout == ""  # nothing started: no "team ... started" line
    (line,) = result.stderr.splitlines()
    storage = open_storage(storage_url)
    assert storage.teams.list() == []
    storage.close()
    return line


def test_a_name_alone_or_in_the_wrong_case_says_what_to_write(
    cli: Invoke, storage_url: str
) -> None:
    """``-m "@Worker"`` would send the text ``@Worker`` to the entry point, and
    ``@worker`` is @Worker mistyped: both are refused before the team starts, in one line
    saying what to write instead."""
    assert _refused_before_start(cli, storage_url, "@Worker") == (
        "error: a message goes after the name: @Worker <your message>, e.g. @Worker what is next?"
    )
    assert _refused_before_start(cli, storage_url, "@worker hi") == (
        "error: @worker is not a member of this team (did you mean '@Worker'? members: "
        "@Manager, @Worker): address one of them, or leave the name out to write to @Manager"
    )


def test_in_a_session_a_name_alone_or_in_the_wrong_case_is_not_sent(cli: Invoke) -> None:
    """Typed in a session, the same two lines are said, not sent, and the session goes on."""
    result = cli("run", str(RESEARCH), input="@Worker\n@worker hi\n/quit\n")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        "error: a message goes after the name: @Worker <your message>, e.g. @Worker what "
        "is next?" in lines
    )
    assert (
        "error: @worker is not a member of this team (did you mean '@Worker'? members: "
        "@Manager, @Worker); leave the name out to write to @Manager" in lines
    )
    assert not [line for line in lines if line.startswith("@Human →")]  # nothing was sent


def test_a_card_whose_tool_actor_cannot_start_fails_the_run_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-board"
    path = tmp_path / "board.yaml"
    path.write_text(BOARD_TEAM.format(directory=missing))
    storage = sqlite_url(tmp_path / "x.db")
    env = child_env(storage)

    plain = run_child([str(AKGENTIC), "run", str(path), "-m", "hi"], env=env)
    debug = run_child([str(AKGENTIC), "run", str(path), "-m", "hi", "--debug"], env=env)

    assert plain.returncode == debug.returncode == 1
    assert plain.stdout == ""  # no turn ran
    assert plain.stderr == (
        "error: team board: @Lead could not start: BoardTool: its tool "
        f"actor #Board could not start: FileNotFoundError: [Errno 2] No such file or "
        f"directory: '{missing}'\n"
    )
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]
    assert open_storage(storage).teams.list() == []  # nothing left to resume


def test_a_resume_whose_tool_actor_cannot_start_says_why_and_keeps_the_team(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    board = tmp_path / "board"
    board.mkdir()
    path = tmp_path / "board.yaml"
    path.write_text(BOARD_TEAM.format(directory=board))
    ran = cli("run", str(path), "-m", "hi")
    assert ran.exit_code == 0, ran.output
    store = open_storage(storage_url)
    [team] = store.teams.list()
    short = str(team.team_id)[:8]
    last = store.events.last_seq(team.team_id)
    board.rename(tmp_path / "moved")

    refused = cli("teams", "resume", short, "-m", "again", "--import", "tests.board_card")

    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert refused.stderr == (
        f"error: team board ({short}) was not resumed, nothing changed: @Lead could not start: "
        "BoardTool: its tool actor #Board could not start: "
        f"FileNotFoundError: [Errno 2] No such file or directory: '{board}'; fix that and "
        f"resume again: akgentic teams resume {short} --storage {storage_url} --import "
        "tests.board_card\n"
    )
    assert store.events.last_seq(team.team_id) == last
    (tmp_path / "moved").rename(board)
    resumed = cli("teams", "resume", short, "-m", "again", "--import", "tests.board_card")
    assert resumed.exit_code == 0, resumed.output
    store.close()


RAW_SERVER = Path(__file__).parents[1] / "tool" / "mcp" / "raw_server.py"
"""A bare stdio MCP server serving the tool list its ``$RAW_TOOLS`` file holds."""

MCP_TEAM = """\
name: docs
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        models: "scripted:default"
        tools:
          - {{type: MCPTool, name: one, tool_prefix: docs, connection: {one}}}
          - {{type: MCPTool, name: two, tool_prefix: docs_web, connection: {two}}}
"""


def test_a_resume_whose_mcp_servers_now_clash_says_what_can_be_done_and_keeps_the_team(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    """Server 'one' serves web_search after the run: 'docs_web_search', as 'two' names its
    search. The stored card cannot be changed, so the line says what can be done."""
    listings = {name: tmp_path / f"{name}.tools.json" for name in ("one", "two")}
    for name, tool in (("one", "echo"), ("two", "search")):
        listings[name].write_text(json.dumps([{"name": tool, "inputSchema": {"type": "object"}}]))
    connections = {
        name: json.dumps(
            {
                "stdio_command": sys.executable,
                "stdio_args": [str(RAW_SERVER)],
                "stdio_env": {"RAW_TOOLS": str(listing)},
            }
        )
        for name, listing in listings.items()
    }
    path = tmp_path / "docs.yaml"
    path.write_text(MCP_TEAM.format(**connections))
    ran = cli("run", str(path), "-m", "hi")
    assert ran.exit_code == 0, ran.output
    store = open_storage(storage_url)
    [team] = store.teams.list()
    short = str(team.team_id)[:8]
    last = store.events.last_seq(team.team_id)
    newer = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "web_search")]
    listings["one"].write_text(json.dumps(newer))

    refused = cli("teams", "resume", short, "-m", "again")

    assert refused.exit_code == 1
    assert refused.stdout == ""
    assert refused.stderr.startswith(
        f"error: team docs ({short}) was not resumed, nothing changed: team docs: @Lead: MCP "
        "servers 'one' ("
    )
    assert refused.stderr.endswith(
        ") both serve a tool named 'docs_web_search' (their 'web_search' and 'search'); the "
        "agent's first turn would fail. A stored team's cards cannot be changed, and its MCP "
        "servers are listed anew at each resume: have them serve the tools they served when "
        "the team was created (the server's earlier version, say) and resume again, or create "
        "a new team from its card with another tool_prefix for MCP server 'two'. To resume "
        f"it: akgentic teams resume {short} --storage {storage_url}\n"
    )
    assert refused.stderr.count("\n") == 1
    assert store.events.last_seq(team.team_id) == last
    assert store.teams.get(team.team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
    listings["one"].write_text(json.dumps(newer[:1]))
    resumed = cli("teams", "resume", short, "-m", "again")
    assert resumed.exit_code == 0, resumed.output
    store.close()


# -- an unreadable event log: a resume refuses it, the stored team unchanged ------------------


def stored_rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return [
            *db.execute("SELECT * FROM akgentic_teams ORDER BY team_id"),
            *db.execute("SELECT * FROM akgentic_event_packs ORDER BY team_id, first_seq"),
            *db.execute("SELECT * FROM akgentic_events ORDER BY team_id, seq"),
        ]


def test_a_team_whose_whole_log_is_unreadable_is_not_resumed(cli: Invoke, storage_url: str) -> None:
    team_id = run_once(cli)
    path = sqlite_path(storage_url)
    with sqlite3.connect(path) as db:
        assert db.execute("UPDATE akgentic_event_packs SET data = x'00ff13'").rowcount > 0
    before = stored_rows(path)

    shown = cli("teams", "show", "research")
    resumed = cli("teams", "resume", "research", "-m", "hello?")

    assert shown.exit_code == 0, shown.output
    assert "a resume restores" not in shown.stdout
    assert "log:      unreadable, a resume refuses it: its numbering cannot be vouched for: " in (
        shown.stdout
    )
    with sqlite3.connect(path) as db:
        packs = db.execute("SELECT COUNT(*) FROM akgentic_event_packs").fetchone()[0]
    corrupt = [line for line in shown.stdout.splitlines() if line.startswith("corrupt: ")]
    assert len(corrupt) == packs  # one line per damaged pack, not one per event
    assert resumed.exit_code == 1, resumed.output
    assert resumed.stdout == ""
    (line,) = resumed.stderr.splitlines()
    assert line.startswith(
        f"error: team research ({str(team_id)[:8]}) was not resumed, nothing changed: its event "
        f"log is unreadable: its numbering cannot be vouched for: "
    ), line
    assert line.endswith(
        f"restore the store {path} from a backup (see what still reads with: akgentic events "
        f"{str(team_id)[:8]} --storage {storage_url})"
    ), line
    assert stored_rows(path) == before


@pytest.mark.parametrize(
    ("damage", "seqs"),
    [
        ("UPDATE akgentic_event_packs SET last_seq = 100000000 WHERE first_seq = {first}", None),
        ("DELETE FROM akgentic_event_packs WHERE first_seq = {first}", "missing from the log"),
    ],
    ids=["claimed-range", "gap"],
)
def test_a_log_with_a_damaged_pack_range_or_a_gap_is_said_once_and_not_resumed(
    cli: Invoke, storage_url: str, damage: str, seqs: str | None
) -> None:
    """A pack row claiming a hundred million numbers, or a pack row deleted: ``events``
    prints one CORRUPT line for the range, ``teams show`` one corrupt line and a last seq
    it does not vouch for, and a resume refuses the log (nothing written), in bounded
    memory and time (the claimed range is never walked one number at a time)."""
    run_once(cli)
    path = sqlite_path(storage_url)
    with sqlite3.connect(path) as db:
        firsts, lasts = zip(
            *db.execute("SELECT first_seq, last_seq FROM akgentic_event_packs ORDER BY first_seq"),
            strict=True,
        )
        first = firsts[len(firsts) // 2]
        end = lasts[len(firsts) // 2]
        assert db.execute(damage.format(first=first)).rowcount == 1
    high = 100000000 if seqs is None else end
    before = stored_rows(path)

    listed = cli("events", "research")
    shown = cli("teams", "show", "research")
    resumed = cli("teams", "resume", "research", "-m", "hello?")

    assert listed.exit_code == 0, listed.output
    corrupt = [line for line in listed.stdout.splitlines() if "CORRUPT" in line]
    assert len(corrupt) == 1, corrupt
    assert corrupt[0].split()[0] == str(first)
    # a pack of one record (how records fall into packs varies with timing) is one seq
    said = f"event seq {first}" if first == high else f"event seqs {first} to {high}"
    assert f"{said}: " in corrupt[0]
    assert seqs is None or seqs in corrupt[0]
    assert shown.exit_code == 0, shown.output
    (line,) = [line for line in shown.stdout.splitlines() if line.startswith("corrupt: ")]
    shown_seqs = f"seq {first}" if first == high else f"seqs {first}-{high}"
    assert line.startswith(f"corrupt: event {shown_seqs}: ")
    assert "not vouched for" in shown.stdout
    assert resumed.exit_code == 1, resumed.output
    (error,) = resumed.stderr.splitlines()
    assert "its event log is unreadable: its numbering cannot be vouched for: " in error
    assert error.endswith(f"--storage {storage_url})"), error
    assert stored_rows(path) == before


def test_a_log_hiding_a_members_start_is_not_resumed_but_one_with_a_bad_event_is(
    cli: Invoke, storage_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    team_id = run_once(cli)
    path = sqlite_path(storage_url)
    unpack_events(path, team_id)
    with sqlite3.connect(path) as db:
        rows = list(
            db.execute(
                "SELECT seq, payload FROM akgentic_events WHERE team_id = ? ORDER BY seq",
                (str(team_id),),
            )
        )
        starts = [
            seq
            for seq, payload in rows
            if payload.startswith('{"__model__":"akgentic.core.messages.orchestrator.StartMessage"')
            and json.loads(payload)["sender"]["name"] == "@Worker"
        ]
        last = rows[-1][0]
        for seq in (starts[0], last - 1, last):
            db.execute(
                "UPDATE akgentic_events SET payload = '{' WHERE team_id = ? AND seq = ?",
                (str(team_id), seq),
            )

    refused = cli("teams", "resume", "research", "-m", "hello?")
    assert refused.exit_code == 1, refused.output
    assert (
        f"its event log is unreadable: 3 of its events cannot be read (seq {starts[0]}-{last}), "
        f"and no readable one starts @Worker: its start may be among them;"
    ) in refused.stderr

    with sqlite3.connect(path) as db:  # the start read again: two bad events are skipped
        db.execute(
            "UPDATE akgentic_events SET payload = ? WHERE team_id = ? AND seq = ?",
            (dict(rows)[starts[0]], str(team_id), starts[0]),
        )
    with caplog.at_level(logging.ERROR, logger="akgentic"):
        resumed = cli("teams", "resume", "research", "-m", "hello?")
    assert resumed.exit_code == 0, resumed.output
    skipped = [r.getMessage() for r in caplog.records if "skipped on restore" in r.getMessage()]
    assert len(skipped) == 1, skipped
    assert skipped[0].startswith(
        f"team {team_id}: 2 unreadable events skipped on restore (seq {last - 1}-{last}); "
    )


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("cards/tally.py", "'cards/tally.py' is a file, not a module name: give 'tally' (and run"),
        ("", "'' is not a module name: give a dotted name such as my_cards or pkg.cards"),
        ("tally ", "'tally ' is not a module name: give a dotted name such as my_cards"),
    ],
)
def test_an_import_that_names_no_module_says_which_name_to_give(
    cli: Invoke, given: str, says: str
) -> None:
    """A file's path, or an empty name from an unset variable, read as Python's own
    refusals (``Empty module name``, ``'tally' is not a package``), naming no fix."""
    for command in (["run", str(RESEARCH), "-m", "hi"], ["teams", "show", "x"]):
        result = cli(*command, "--import", given)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"error: --import: {says}")
        assert len(result.stderr.splitlines()) == 1
