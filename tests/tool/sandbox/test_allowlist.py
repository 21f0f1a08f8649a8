"""The allowlist check, the bounded output buffer and the Popen dance: no sandbox needed."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from akgentic.tool.sandbox import (
    ALLOWED_COMMANDS,
    BoundedOutput,
    CommandRefusedError,
    ExecLimits,
    validate_command,
)
from akgentic.tool.sandbox.backend import MAX_COMMAND_CHARS, Kill, ProcessBackend

from .conftest import running


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("ls -la", ["ls"]),
        ("python3 -m unittest -v test_slug", ["python3"]),
        ("python3 -m unittest 2>&1 | tail -5", ["python3", "tail"]),
        ("mkdir -p out && echo done > out/log.txt", ["mkdir", "echo"]),
        ("grep -rn 'a|b' . ; true", ["grep", "true"]),
        ("PYTHONPATH=src python3 -c 'print(1)'", ["python3"]),
        ("/usr/bin/python3 script.py", ["python3"]),
        ("false || echo recovered", ["false", "echo"]),
    ],
)
def test_allowed_command_lines_name_every_program(command: str, programs: list[str]) -> None:
    assert validate_command(command) == programs


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("curl http://example.com", "'curl' is not on this workspace's command allowlist"),
        ("ls | bash", "'bash' is not on"),
        ("sh -c 'ls'", "'sh' is not on"),
        ("env sh -c id", "'env' is not on"),  # a launcher: the program it starts goes unchecked
        ("ls | xargs sh -c id", "'xargs' is not on"),
        ("echo $(whoami)", "command substitution"),
        ("echo `whoami`", "command substitution"),
        ("diff <(ls) <(ls)", "process substitution"),
        ("sleep 100 &", "background"),
        ("sleep 1 & ls", "background"),
        ("(ls)", "subshells"),
        ("ls |", "ends with an operator"),
        ("&& ls", "no program before it"),
        ("echo 'unbalanced", "cannot be parsed"),
        ("   ", "empty"),
        ("ls\x00", "NUL"),
        ("ls " + "x" * MAX_COMMAND_CHARS, "is 20,003 characters, over the 20,000"),
    ],
)
def test_refused_command_lines_say_why(command: str, says: str) -> None:
    with pytest.raises(CommandRefusedError, match=says):
        validate_command(command)


def test_a_line_at_the_length_limit_is_read_and_a_megabyte_is_refused_unparsed() -> None:
    """Refused before the parse: shlex reads a megabyte in tens of seconds on a busy box."""
    assert validate_command("ls " + "x" * (MAX_COMMAND_CHARS - 3)) == ["ls"]
    with pytest.raises(CommandRefusedError, match="write a long script to a file"):
        validate_command("ls '" + "x" * 1_000_000)


def test_the_refusal_lists_what_is_allowed_and_a_card_may_narrow_the_list() -> None:
    with pytest.raises(CommandRefusedError) as refused:
        validate_command("ls", allowed={"python3"})
    assert "Allowed: python3." in str(refused.value)
    assert "sh" not in ALLOWED_COMMANDS and "bash" not in ALLOWED_COMMANDS


def test_bounded_output_keeps_head_and_tail_and_says_how_much_it_left_out() -> None:
    out = BoundedOutput(1000)
    out.feed(b"HEAD" + b"x" * 10_000)
    out.feed(b"y" * 10_000 + b"TAIL")
    text, omitted = out.text()
    assert text.startswith("HEAD") and text.endswith("TAIL")
    assert omitted == 20_008 - 1000
    assert f"[… {omitted:,} characters of output omitted …]" in text
    assert len(text) < 1100


def test_bounded_output_counts_what_it_left_out_in_characters_not_bytes() -> None:
    out = BoundedOutput(1000)
    out.feed("é".encode() * 3000)  # two bytes each
    text, omitted = out.text()
    assert omitted == 2000
    assert text.count("é") == 1000 and "\ufffd" not in text
    assert "[… 2,000 characters of output omitted …]" in text


def test_bounded_output_says_one_character_in_the_singular() -> None:
    out = BoundedOutput(10)
    out.feed(b"x" * 11)
    assert out.text() == ("xxxx\n[… 1 character of output omitted …]\nxxxxxx", 1)


def test_bounded_output_under_the_cap_is_kept_whole() -> None:
    out = BoundedOutput(1000)
    out.feed("héllo\n".encode())
    assert out.text() == ("héllo\n", 0)


def test_limits_forbid_unknown_fields_and_absurd_values() -> None:
    with pytest.raises(ValueError, match="timeout"):
        ExecLimits(timeout=5)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        ExecLimits(max_processes=1)


class _Plain(ProcessBackend):
    """The Popen dance alone, no isolation: what every local launcher shares."""

    name = "plain"

    def argv(self, tree: Path, command: str, limits: ExecLimits, run_id: str) -> list[str]:
        return ["/bin/sh", "-c", command]


def test_a_started_callback_that_fails_leaves_no_command_running(tmp_path: Path) -> None:
    """``started`` records the run (a file write, which a full disk fails). When it raised,
    the run ended with the error while its command ran on past every budget, unwaited,
    with nothing left to kill it."""
    marker = f"28.{uuid.uuid4().int % 1000:03d}"

    def failing(kill: Kill) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left on device"):
        _Plain().run(tmp_path, f"exec sleep {marker}", ExecLimits(timeout_seconds=60), failing)
    assert not running(f"sleep {marker}")
