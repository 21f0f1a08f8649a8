"""A tool call held to its bound: past it the caller reads ToolTimeoutError, the turn goes on.

The blocking tools wait on an Event the test sets at the end (no sleeps); the bound is a
small ``tool_timeout``, given to the factory as an agent gives its ``AgentConfig``'s.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from akgentic.core import acting_for, current_actor
from akgentic.tool import RetriableError, ToolCard, ToolFactory
from akgentic.tool.core.time_bound import ToolTimeoutError, on_cancel, tool_timeout_of

BOUND = 0.05


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """What a blocked tool waits for; set when the test ends, so no thread is left."""
    event = threading.Event()
    yield event
    event.set()


def card(*tools: Callable[..., Any]) -> ToolCard:
    def get_tools(self: ToolCard) -> list[Callable[..., Any]]:
        return list(tools)

    made: ToolCard = type("Slow", (ToolCard,), {"get_tools": get_tools})()
    return made


def the_tool(*tools: Callable[..., Any], bound: float | None = BOUND) -> Callable[..., Any]:
    [wrapped] = ToolFactory([card(*tools)], tool_timeout=bound).get_tools()
    return wrapped


def awaited(tool: Callable[..., Any], **args: Any) -> Any:
    """Call a sync tool held to a bound: its wrapper is async (awaited on its thread)."""
    assert asyncio.iscoroutinefunction(tool)
    return asyncio.run(tool(**args))


def test_a_sync_tool_past_its_bound_is_a_retriable_error_and_runs_on(
    release: threading.Event, caplog: pytest.LogCaptureFixture
) -> None:
    finished = threading.Event()

    def hang(label: str) -> str:
        """Work on ``label``."""
        release.wait(60)
        finished.set()
        return label

    with (
        caplog.at_level(logging.WARNING, "akgentic.tool"),
        pytest.raises(ToolTimeoutError) as caught,
    ):
        awaited(the_tool(hang), label="x")
    assert isinstance(caught.value, RetriableError)
    assert str(caught.value) == (
        "hang took longer than 0.05s (it may still finish in the background: check what it "
        "was to do before calling it again); ask for less at a time, or go on another way"
    )
    assert "hang took longer than 0.05s" in caplog.text
    assert "a thread cannot be killed" in caplog.text
    assert not finished.is_set()  # abandoned, not stopped: it ends when let go
    release.set()
    assert finished.wait(60)


def test_a_sync_tool_within_its_bound_answers_as_before() -> None:
    def quick(label: str) -> str:
        """Work on ``label``."""
        return f"worked on {label}"

    def broken(label: str) -> str:
        """Work on ``label``."""
        return {"a": "1"}[label]

    assert awaited(the_tool(quick, bound=60), label="x") == "worked on x"
    with pytest.raises(RetriableError, match=r"broken failed \(KeyError: 'zz'\)"):
        awaited(the_tool(broken, bound=60), label="zz")


def test_a_sync_tool_runs_as_the_calling_actor() -> None:
    """On its own thread, it still acts for the caller's actor (DeadlockError, sends)."""
    seen: list[Any] = []
    actor = object()

    def who() -> str:
        """Say who."""
        seen.append((current_actor(), threading.current_thread().name))
        return "me"

    with acting_for(actor):
        assert awaited(the_tool(who, bound=60)) == "me"
        assert current_actor() is actor
    assert current_actor() is None
    assert seen == [(actor, "akgentic-tool")]


def test_a_cancelled_sync_tool_is_abandoned_and_stops_what_it_started(
    release: threading.Event,
) -> None:
    """A cancel (an agent's turn interrupted) ends the await at once; the thread runs on,
    its result never reaches the caller; what the tool registered with on_cancel is
    called, once, and one registered after the cancel is called at once."""
    stopped: list[str] = []
    started, returned = threading.Event(), threading.Event()

    def work() -> str:
        """Work."""
        with on_cancel(lambda: stopped.append("first")):
            started.set()
            release.wait(60)
        with on_cancel(lambda: stopped.append("late")):
            returned.set()
        return "late result"

    async def cancelled() -> None:
        task = asyncio.ensure_future(the_tool(work, bound=60)())
        await asyncio.to_thread(started.wait, 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert stopped == ["first"]
    assert not returned.is_set()
    release.set()
    assert returned.wait(60)
    assert stopped == ["first", "late"]


def test_on_cancel_outside_a_bounded_call_is_a_no_op() -> None:
    with on_cancel(lambda: pytest.fail("nothing can cancel this")):
        pass


def test_no_bound_calls_a_sync_tool_on_the_callers_thread() -> None:
    seen: list[str] = []

    def where() -> str:
        """Say where."""
        seen.append(threading.current_thread().name)
        return "here"

    assert the_tool(where, bound=None)() == "here"
    assert seen == [threading.current_thread().name]


def test_an_async_tool_past_its_bound_is_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    cancelled: list[bool] = []

    async def never() -> str:
        """Wait for ever."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    with (
        caplog.at_level(logging.WARNING, "akgentic.tool"),
        pytest.raises(ToolTimeoutError) as caught,
    ):
        asyncio.run(the_tool(never)())
    assert str(caught.value) == (
        "never took longer than 0.05s (it was stopped); ask for less at a time, or go on "
        "another way"
    )
    assert cancelled == [True]
    assert "never took longer than 0.05s: cancelled" in caplog.text


def test_an_async_tools_own_timeout_error_is_its_failure_not_the_bound() -> None:
    async def fetch() -> str:
        """Fetch."""
        raise TimeoutError("the service did not answer")

    with pytest.raises(RetriableError) as caught:
        asyncio.run(the_tool(fetch, bound=60)())
    assert not isinstance(caught.value, ToolTimeoutError)
    assert "fetch failed (TimeoutError: the service did not answer)" in str(caught.value)


def test_a_wiring_card_reads_its_observers_bound() -> None:
    class Agent:
        tool_timeout = 12

    assert tool_timeout_of(Agent()) == 12.0
    assert tool_timeout_of(object()) is None
