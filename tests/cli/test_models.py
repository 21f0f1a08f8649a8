"""Models from the command line: ``--base-url`` for OpenAI-compatible servers (and
``OPENAI_BASE_URL``), and what the user reads when a model cannot be used — the host
that was tried, the variable to set — on one ``error:`` line, the traceback only with
``--debug``. The servers are real HTTP servers on loopback; nothing leaves the machine."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.storage import TeamStatus, open_storage

from .conftest import AKGENTIC, RESEARCH, Invoke, assert_resume_hints, child_env, run_child
from .echo_server import echo, serve

LOCAL = "openai-compatible:llama3.2"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound by nobody listening: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_base_url_points_the_team_at_an_openai_compatible_server(
    cli: Invoke, storage_url: str
) -> None:
    with serve(echo) as (url, requests):
        done = cli("run", str(RESEARCH), "--model", LOCAL, "--base-url", url, "-m", "ping")
        assert done.exit_code == 0, done.output
        assert done.stdout.splitlines()[-1] == "answer: pong: ping"
        assert {r["model"] for r in requests} == {"llama3.2"}
        # the endpoint is stored with the team's models: a resume needs neither flag
        store = open_storage(storage_url)
        [team] = store.teams.list()
        store.close()
        again = cli("teams", "resume", str(team.team_id)[:8], "-m", "again")
        assert again.exit_code == 0, again.output
        assert again.stdout.splitlines()[-1] == "answer: pong: again"
    assert len(requests) == 2


def test_base_url_alone_points_the_card_s_own_openai_compatible_models(
    cli: Invoke, tmp_path: Path
) -> None:
    card = tmp_path / "local.yaml"
    card.write_text(RESEARCH.read_text().replace("scripted:research.scenario.yaml", LOCAL))
    with serve(echo) as (url, requests):
        done = cli("run", str(card), "--base-url", url, "-m", "ping")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == "answer: pong: ping"
    assert requests


def test_openai_base_url_from_the_environment(storage_url: str) -> None:
    with serve(echo) as (url, _):
        env = child_env(storage_url, AKGENTIC_MODEL=LOCAL, OPENAI_BASE_URL=url)
        done = run_child([str(AKGENTIC), "run", str(RESEARCH), "-m", "ping"], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "answer: pong: ping"


def test_an_openai_compatible_model_without_an_endpoint_says_how_to_give_one(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    done = cli("run", str(RESEARCH), "--model", LOCAL, "-m", "hi")
    assert done.exit_code == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("error: @Manager: model 'openai-compatible:llama3.2': provider")
    assert "--base-url URL" in line and "OPENAI_BASE_URL" in line


def test_base_url_misuse_is_one_line_saying_what_to_add(cli: Invoke) -> None:
    scripted = cli("run", str(RESEARCH), "--base-url", "http://127.0.0.1:1/v1", "-m", "hi")
    assert scripted.exit_code == 1
    assert scripted.stderr == (
        "error: --base-url is for openai-compatible and ollama models, and team 'research' "
        "has none: add --model openai-compatible:MODEL\n"
    )
    hosted = cli(
        "run", str(RESEARCH), "--model", "openai:gpt-5.2", "--base-url", "http://x:1/v1", "-m", "hi"
    )
    assert hosted.exit_code == 1
    assert hosted.stderr.startswith("error: --base-url: a base URL is for openai-compatible")
    resume = cli("teams", "resume", "anything", "--base-url", "http://127.0.0.1:1/v1")
    assert resume.exit_code == 1
    assert resume.stderr == (
        "error: on resume, --base-url goes with --model (the members keep the models they "
        "were created with): add --model openai-compatible:MODEL\n"
    )


def test_a_refused_connection_names_the_host_on_one_line(
    storage_url: str, closed_port: int
) -> None:
    """A real subprocess against a loopback port nobody listens on."""
    url = f"http://127.0.0.1:{closed_port}/v1"
    argv = [str(AKGENTIC), "run", str(RESEARCH), "--model", LOCAL, "--base-url", url]
    plain = run_child([*argv, "-m", "hi"], env=child_env(storage_url))
    debug = run_child([*argv, "-m", "hi", "--debug"], env=child_env(storage_url))

    assert plain.returncode == debug.returncode == 1
    expected = (
        f"error: @Manager: cannot reach model '{LOCAL}' at {url}/chat/completions "
        f"(connection refused): is its server running there? Check the model's base_url "
        f"(akgentic run --base-url URL, or OPENAI_BASE_URL)"
    )
    assert plain.stderr.splitlines() == [expected]  # no log line, no traceback
    assert "Traceback" not in plain.stdout
    shown = [line for line in plain.stdout.splitlines() if "cannot reach" in line]
    assert shown == [f"✗ @Manager error: {expected.removeprefix('error: @Manager: ')}"]
    assert "Traceback (most recent call last)" in debug.stderr
    assert "pydantic_ai.exceptions.ModelConnectionError" in debug.stderr
    assert debug.stderr.splitlines()[-1] == expected


def test_on_a_terminal_an_unreachable_model_is_said_once(
    storage_url: str, closed_port: int
) -> None:
    """The live view's ``✗ @Manager error: cannot reach ...`` line is the one line the
    person reads on a terminal: the ending ``error:`` line does not say it again (a
    redirected output still gets it on stderr, as the test above shows)."""
    url = f"http://127.0.0.1:{closed_port}/v1"
    argv = [str(AKGENTIC), "run", str(RESEARCH), "--model", LOCAL, "--base-url", url, "-m", "hi"]
    main, side = pty.openpty()
    with subprocess.Popen(
        argv, env=child_env(storage_url), stdin=subprocess.DEVNULL, stdout=side, stderr=side
    ) as child:
        os.close(side)
        shown = b""
        with contextlib.suppress(OSError):  # EIO: the child closed the terminal
            while chunk := os.read(main, 65536):
                shown += chunk
        os.close(main)
        assert child.wait(timeout=120) == 1
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode())
    said = [line for line in text.splitlines() if "cannot reach" in line]
    assert len(said) == 1 and said[0].startswith(f"✗ @Manager error: cannot reach model '{LOCAL}'")


def test_a_refused_key_names_its_variable(storage_url: str) -> None:
    with serve(echo, fail=401) as (url, requests):
        env = child_env(storage_url, OPENAI_API_KEY="sk-wrong", OPENAI_BASE_URL=url)
        done = run_child(
            [str(AKGENTIC), "run", str(RESEARCH), "--model", "openai:gpt-5.2", "-m", "hi"],
            env=env,
        )
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(
        f"error: @Manager: model 'openai:gpt-5.2' at {url}/chat/completions refused the key "
        "in OPENAI_API_KEY (HTTP 401"
    )
    assert line.endswith("check the key")
    assert requests  # it really asked


def test_a_resume_without_the_key_says_which_and_changes_nothing(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    created = cli("run", str(RESEARCH), "--model", "openai:gpt-5.2", input="")
    assert created.exit_code == 0, created.output  # no line typed: no request made
    store = open_storage(storage_url)
    [team] = store.teams.list()
    last = store.events.last_seq(team.team_id)
    short = str(team.team_id)[:8]
    monkeypatch.delenv("OPENAI_API_KEY")

    refused = cli("teams", "resume", short, "-m", "hello")

    assert refused.exit_code == 1
    assert refused.stderr == (
        f"error: team research ({short}) was not resumed, nothing changed: @Manager's model "
        "'openai:gpt-5.2' needs an API key in OPENAI_API_KEY, which is not set here: export "
        "OPENAI_API_KEY=<your key> and resume again, or resume it on another model: akgentic "
        f"teams resume {short} --storage {storage_url} --model SPEC (scripted:default runs "
        "offline)\n"
    )
    assert store.teams.get(team.team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
    assert store.events.last_seq(team.team_id) == last
    store.close()
    offline = cli("teams", "resume", short, "--model", "scripted:default", "-m", "hello")
    assert offline.exit_code == 0, offline.output


def test_a_timeout_cuts_the_model_request_in_flight_and_keeps_the_turn(cli: Invoke) -> None:
    """No answer within --timeout while the model is still answering: the turn is cut as
    by a Ctrl-C — at once, not after the stop's grace of 30s — and kept as interrupted."""
    from tests.examples.openai_compatible import Stall
    from tests.examples.openai_compatible import serve as serve_held

    stall = Stall()  # the answer's first word, then nothing until the test ends
    with serve_held(lambda body: ("Hello there.", None), stall=stall) as (url, _):
        done = cli(
            "run", str(RESEARCH), "--model", LOCAL, "--base-url", url, "-m", "hi", "--timeout", "1"
        )
    assert done.exit_code == 1, done.output
    out = done.stdout.splitlines()
    assert any(line.startswith("no answer within 1s: cancelling the turns") for line in out)
    cut = out.index(next(line for line in out if line.endswith("stopped; 1 interrupted turn:")))
    assert out[cut + 1] == "  @Human → @Manager: hi"
    assert_resume_hints(out[cut + 2 : cut + 6], "akgentic teams resume ")
    assert (
        done.stderr.splitlines()[-1]
        == "error: no answer within 1s (raise it with --timeout SECONDS)"
    )
    assert "grace" not in done.output


def test_a_scenario_file_in_model_is_read_from_the_current_folder_and_kept_for_a_resume(
    cli: Invoke, storage_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "mine.yaml").write_text(
        'name: mine\nroles:\n  "*": {default: {text: "from my folder"}}\n'
    )
    monkeypatch.chdir(here)  # not the card's folder (examples/teams)
    done = cli("run", str(RESEARCH), "--model", "scripted:mine.yaml", "-m", "ping")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[-1] == "answer: from my folder"
    store = open_storage(storage_url)
    [team] = store.teams.list()
    store.close()
    monkeypatch.chdir(tmp_path)  # the team kept the file's absolute path
    again = cli("teams", "resume", str(team.team_id)[:8], "-m", "again")
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[-1] == "answer: from my folder"


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["--model", "openai-compatible:llama 3", "--base-url", "http://127.0.0.1:1/v1"],
            None,
            "error: model 'openai-compatible:llama 3': model names have no spaces; write it "
            "as the server lists it, e.g. 'openai-compatible:llama3'",
        ),
        (
            ["--model", LOCAL],
            "localhost:11434/v1",
            f"error: @Manager: model '{LOCAL}': OPENAI_BASE_URL 'localhost:11434/v1' is not an "
            "http(s) URL: e.g. http://localhost:11434/v1",
        ),
    ],
    ids=["spaced-name", "schemeless-env"],
)
def test_a_model_that_cannot_be_asked_is_refused_before_the_team_starts(
    cli: Invoke,
    storage_url: str,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: str | None,
    expected: str,
) -> None:
    """Both were created, then failed at the first request (the server refusing the name,
    the client finding no scheme): now one line, and no team is stored."""
    if env is not None:
        monkeypatch.setenv("OPENAI_BASE_URL", env)
    done = cli("run", str(RESEARCH), *args, "-m", "hi")
    assert done.exit_code == 1
    assert done.stderr.splitlines() == [expected]
    store = open_storage(storage_url)
    assert store.teams.list() == []
    store.close()
