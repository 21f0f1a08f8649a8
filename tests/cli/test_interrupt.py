"""The first Ctrl-C of ``run`` / ``teams resume`` (``interrupt.deferred``) reaches the
session only where it checks, never inside the code the main thread runs: delivered at
chosen points (``signal.raise_signal`` runs the installed handler at once, in this
thread), never on time.

Before, a ``KeyboardInterrupt`` thrown at those points broke the session's own lock: just
after ``Condition.wait`` let go of it, the ``with`` block's exit failed with
``RuntimeError: cannot release un-acquired lock`` (no graceful interrupt: the team's
normal stop then waited for the turn in progress); inside ``Condition.__enter__``, just
after it acquired it, the lock stayed held and the thread following the log blocked
for good.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from akgentic.cli import app, interrupt
from akgentic.cli import run as run_command
from akgentic.cli.keyboard import Keyboard
from akgentic.storage import TeamStatus, open_storage, sqlite_url

from .conftest import RESEARCH, child_env
from .test_watch import ask, watching


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[], None]]:
    """The console script's SIGINT handler, for this test; yields how to press Ctrl-C once
    (a second press would end the process, as it should)."""
    taken = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what install takes over
    previous = {signum: signal.getsignal(signum) for signum in taken}
    interrupt.install()
    try:
        yield lambda: signal.raise_signal(signal.SIGINT)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _CtrlCOnEnter(threading.Condition):
    """A condition whose ``__enter__`` in the main thread gets Ctrl-C just after it
    acquired the lock."""

    def __init__(self, press: Callable[[], None]) -> None:
        super().__init__()
        self.press: Callable[[], None] | None = press

    def __enter__(self) -> bool:
        entered = super().__enter__()
        if self.press is not None and threading.current_thread() is threading.main_thread():
            press, self.press = self.press, None
            press()
        return entered


def _ctrl_c_after_release(cond: threading.Condition, press: Callable[[], None]) -> None:
    """Ctrl-C in ``cond.wait``, just after it let go of the lock (before its ``try``)."""
    release = cond._release_save  # type: ignore[attr-defined]
    pressed: list[bool] = []

    def release_then_press() -> object:
        state = release()
        if not pressed:
            pressed.append(True)
            press()
        return state

    cond._release_save = release_then_press  # type: ignore[attr-defined]


def _lock_is_free(cond: threading.Condition) -> bool:
    """Whether another thread can take ``cond`` (what the log's follower needs)."""
    taken: list[bool] = []

    def take() -> None:
        if cond.acquire(timeout=30):
            taken.append(True)
            cond.release()

    other = threading.Thread(target=take)
    other.start()
    other.join()
    return bool(taken)


@pytest.mark.parametrize("where", ["after the wait let go of the lock", "as the lock is taken"])
def test_ctrl_c_landing_inside_the_reply_wait_interrupts_it_and_leaves_its_lock_whole(
    ctrl_c: Callable[[], None], where: str
) -> None:
    message, asked = ask("hello")
    watch = watching([asked])  # no answer: the wait waits
    if where == "as the lock is taken":
        watch._cond = _CtrlCOnEnter(ctrl_c)
    else:
        _ctrl_c_after_release(watch._cond, ctrl_c)
    try:
        with interrupt.deferred(), pytest.raises(KeyboardInterrupt):
            watch.wait_reply(message.id, "@Boss", timeout=60, idle=60)

        assert interrupt.pressed() == 1
        assert _lock_is_free(watch._cond)
        assert watch.wait_reply(message.id, "@Boss", timeout=0, idle=60).how == "timeout"
    finally:
        watch.close()


def test_ctrl_c_at_the_prompt_interrupts_the_wait_for_a_line_and_loses_no_line(
    ctrl_c: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        keyboard = Keyboard()
        shown: list[str] = []

        def show_then_press(prompt: str) -> None:
            shown.append(prompt)
            ctrl_c()  # while the line is being waited for

        with interrupt.deferred():
            with pytest.raises(KeyboardInterrupt):
                keyboard.line("you> ", show_then_press)
            os.write(write_end, b"typed after\n")
            assert keyboard.line("you> ", shown.append) == "typed after"
        assert shown == ["you> "]  # the prompt waiting was not shown again
        os.close(write_end)
        assert keyboard.line() is None  # end of input


def test_ctrl_c_interrupts_a_wait_for_a_call_aside_and_the_call_goes_on(
    ctrl_c: Callable[[], None],
) -> None:
    release, finished = threading.Event(), threading.Event()

    def stop() -> str:
        os.kill(os.getpid(), signal.SIGINT)  # while the main thread waits for this call
        release.wait(60)
        finished.set()
        return "stopped"

    with interrupt.deferred(), pytest.raises(KeyboardInterrupt):
        interrupt.aside(stop)

    assert not finished.is_set()
    release.set()
    assert finished.wait(60)


def test_a_call_aside_gives_its_result_or_its_exception() -> None:
    assert interrupt.aside(lambda: 42) == 42

    def fail() -> None:
        raise LookupError("no team abc")

    with pytest.raises(LookupError, match="no team abc"):
        interrupt.aside(fail)


def test_a_ctrl_c_no_wait_checked_is_raised_at_the_end_of_the_block_once(
    ctrl_c: Callable[[], None],
) -> None:
    went_on = []
    with pytest.raises(KeyboardInterrupt), interrupt.deferred():
        ctrl_c()
        went_on.append("the block is not cut")
    assert went_on == ["the block is not cut"]


def test_a_ctrl_c_raised_by_a_check_is_not_raised_again(ctrl_c: Callable[[], None]) -> None:
    with interrupt.deferred():
        interrupt.check()  # nothing pending: nothing raised
        ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            interrupt.check()
        interrupt.check()
    assert interrupt.pressed() == 1


def test_without_the_console_script_check_never_raises() -> None:
    """In-process (no handler installed), Python's own Ctrl-C handling stays. Python's
    handler is put in place first: a process started in the background by a shell
    without job control inherits SIGINT ignored, and keeps it so."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with interrupt.deferred():
            interrupt.check()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_ctrl_c_during_the_teams_start_up_stops_it_and_says_how_to_resume(
    ctrl_c: Callable[[], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pressed while the team starts (deferred to the session's first check): the team is
    stopped like one interrupted later, the session says how to resume it, and that the
    message never went out."""
    started = run_command.intro

    def intro_then_ctrl_c(*args: Any, **kwargs: Any) -> None:
        started(*args, **kwargs)
        ctrl_c()

    monkeypatch.setattr(run_command, "intro", intro_then_ctrl_c)
    url = sqlite_url(tmp_path / "cli.db")
    result = CliRunner().invoke(
        app,
        ["run", str(RESEARCH), "-m", "never sent"],
        env={"AKGENTIC_STORAGE": url, "AKGENTIC_MODEL": None},
    )
    assert result.exit_code == interrupt.EXIT_INTERRUPTED, result.output
    storage = open_storage(url)
    [team] = storage.teams.list()
    storage.close()
    assert team.status == TeamStatus.STOPPED
    lines = result.stdout.splitlines()
    assert "the message was not sent: never sent" in lines
    assert f"team research ({str(team.team_id)[:8]}) stopped; resume it with: " in lines[-1]


def test_the_second_ctrl_c_prints_words_made_then_or_the_plain_ones_when_that_fails() -> None:
    """``at_once`` may be a function, called by the second Ctrl-C (what is lost is known
    only then); one that fails still ends the process with the plain words, not a
    traceback, with the first signal's exit code. Empty words (a command whose work is over
    and said: ``serve`` once it stopped) print nothing."""
    script = """
import signal
from akgentic.cli import interrupt
interrupt.install()
interrupt.at_once = lambda: {words}
with interrupt.quietly():
    signal.raise_signal(signal.SIGINT)
    signal.raise_signal(signal.SIGINT)
"""
    cases = (('"made now"', "\nmade now\n"), ("1 / 0", f"\n{interrupt.AT_ONCE}\n"), ('""', ""))
    for words, said in cases:
        ended = subprocess.run(
            [sys.executable, "-c", script.format(words=words)],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (ended.returncode, ended.stderr) == (130, said)
