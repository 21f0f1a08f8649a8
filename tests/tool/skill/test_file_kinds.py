"""A skill path that is no regular file (a FIFO, a socket, a device, a link to nothing),
or a file too large, is reported in words that say what it is and what to do — never a
wait on a FIFO, a file read whole into memory, or a traceback — and the other skills load.

A load that would wait on a FIFO runs on a thread the test waits for with a timeout: if
the fix regresses, the FIFO is given a writer so the thread ends, and the test fails."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from akgentic.tool.skill import LoadError, SkillFileError, load_skills, parse_skill_file

from .test_loader import SKILL_MD, write

T = TypeVar("T")

NOT_A_FILE = (
    "not a file: a skill is a regular SKILL.md, .md, .yaml or .yml file; name one (or its "
    "folder), or move this out of the skills folder"
)


def unblocked(fifo: Path, load: Callable[[], T]) -> T:
    """``load()``, run on a thread waited for up to 30 s; if it is still running it is
    waiting on ``fifo``: a writer comes and goes so it ends, and the test fails."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(load())
        except BaseException as exc:  # handed to the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(30)
        pytest.fail(f"the load waited on the FIFO {fifo}")
    if failure:
        raise failure[0]
    return outcome[0]


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path, "good/SKILL.md", SKILL_MD)


@pytest.fixture
def a_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.yaml"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        yield path


def test_a_fifo_named_as_a_skill_file_is_said_to_be_one(tmp_path: Path, good: Path) -> None:
    fifo = tmp_path / "named.yaml"
    os.mkfifo(fifo)
    result = unblocked(fifo, lambda: load_skills([fifo, good]))
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [LoadError(path=str(fifo), reason=f"is a FIFO, {NOT_A_FILE}")]


def test_a_fifo_in_a_skills_folder_is_reported_not_skipped_silently(
    tmp_path: Path, good: Path
) -> None:
    fifo = tmp_path / "piped" / "SKILL.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "notes.txt")  # not named as a skill: not looked at
    result = unblocked(fifo, lambda: load_skills([tmp_path]))
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [LoadError(path=str(fifo), reason=f"is a FIFO, {NOT_A_FILE}")]


def test_a_fifo_put_in_place_of_a_checked_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    """``parse_skill_file`` reads what it is given: a FIFO swapped in after the loader
    checked the path is refused by the reader itself."""
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)

    def parse() -> str:
        with pytest.raises(SkillFileError) as refused:
            parse_skill_file(fifo)
        return str(refused.value)

    said = unblocked(fifo, parse)
    assert said == "cannot be read: a FIFO, not a file: name the YAML file itself"


def test_a_socket_or_a_device_named_as_a_skill_is_said_to_be_one(
    a_socket: Path, good: Path
) -> None:
    result = load_skills([a_socket, Path("/dev/null"), good])
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [
        LoadError(path=str(a_socket), reason=f"is a socket, {NOT_A_FILE}"),
        LoadError(path="/dev/null", reason=f"is a character device, {NOT_A_FILE}"),
    ]


def test_a_link_to_nothing_in_a_skills_folder_is_reported(tmp_path: Path, good: Path) -> None:
    link = tmp_path / "gone" / "SKILL.md"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "moved" / "SKILL.md")
    result = load_skills([tmp_path])
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [
        LoadError(
            path=str(link),
            reason=f"is a link to {tmp_path / 'moved' / 'SKILL.md'}, which does not exist: "
            f"fix or remove it",
        )
    ]


def test_a_link_to_a_folder_outside_the_skills_folder_is_reported_not_skipped_unsaid(
    tmp_path: Path,
) -> None:
    """A folder search does not follow a link to a folder (one to ``..`` or ``/`` would
    read far more than the skills folder): one whose target lies outside is said, with
    what to do; one to a folder inside is read through its target, once."""
    skills = tmp_path / "skills"
    write(skills, "inside/SKILL.md", SKILL_MD)
    elsewhere = write(
        tmp_path, "elsewhere/films/SKILL.md", SKILL_MD.replace("refund-policy", "films")
    )
    (skills / "films").symlink_to(elsewhere.parent)
    (skills / "again").symlink_to(skills / "inside")
    (skills / "up").symlink_to(tmp_path)
    result = load_skills([skills])
    assert [s.name for s in result.skills] == ["refund-policy"]
    fix = (
        "a folder search does not follow it: name that folder in the card's folders (or "
        "AKGENTIC_SKILLS_DIR) to load its skills"
    )
    assert result.errors == [
        LoadError(
            path=str(skills / "films"),
            reason=f"is a link to {elsewhere.parent}, a folder outside {skills}; {fix}",
        ),
        LoadError(
            path=str(skills / "up"),
            reason=f"is a link to {tmp_path}, a folder outside {skills}; {fix}",
        ),
    ]


def test_a_skill_file_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, good: Path
) -> None:
    huge = write(tmp_path, "huge/SKILL.md", SKILL_MD.replace("refund-policy", "huge"))
    with huge.open("r+b") as file:
        file.truncate(50 * 1024 * 1024)  # 50 MiB of content (sparse: written in no time)
    result = load_skills([tmp_path])
    assert [s.name for s in result.skills] == ["refund-policy"]
    assert result.errors == [
        LoadError(
            path=str(huge),
            reason="is too large: 52,428,800 bytes (50.0 MiB), over akgentic's 4 MiB limit "
            "for a skill file: make its content shorter, or split it into several skills",
        )
    ]


def test_windows_line_ends_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(SKILL_MD.replace("\n", "\r\n").encode())
    crlf = parse_skill_file(path)
    assert crlf == parse_skill_file(write(tmp_path, "lf/SKILL.md", SKILL_MD))
    yaml_path = tmp_path / "x.yaml"
    yaml_path.write_bytes(b"name: x\r\ndescription: d\r\nbody: |\r\n  a\r\n  b\r\n")
    assert parse_skill_file(yaml_path).content == "a\nb"
