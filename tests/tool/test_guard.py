"""The factory's guard: tools the model could not use are refused at wiring time, and a
tool's unexpected exception becomes a retry the model reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelHTTPError,
    ModelRetry,
    ToolFailed,
    UnexpectedModelBehavior,
    UserError,
)

from akgentic.tool import BaseToolParam, RetriableError, ToolCard, ToolFactory, ToolObserverGone
from akgentic.tool.core.guard import check_return, describe_exception, redact
from akgentic.tool.errors import ToolNotWiredError
from akgentic.tool.planning import PlanningTool


class RetryError(Exception):
    """Stands in for pydantic-ai's ModelRetry."""


class Cards(ToolCard):
    """A card whose tools are whatever the test puts in ``tools``."""

    def get_tools(self) -> list[Callable[..., Any]]:
        return list(TOOLS)


TOOLS: list[Callable[..., Any]] = []


def tools_of(*fns: Callable[..., Any], retry: type[Exception] | None = RetryError) -> list[Any]:
    TOOLS[:] = fns
    return ToolFactory([Cards()], retry_exception=retry).get_tools()


def test_a_lambda_is_refused_naming_the_card() -> None:
    with pytest.raises(TypeError, match=r"^Cards.get_tools\(\) returned .*lambda.*named function"):
        tools_of(lambda key: key)


def test_a_tool_without_a_docstring_is_refused_with_the_fix() -> None:
    def lookup(key: str) -> str:
        return key

    with pytest.raises(TypeError) as info:
        tools_of(lookup)
    message = str(info.value)
    assert message.startswith("Cards.get_tools(): tool 'lookup' has no docstring: write one")
    assert "\n" not in message


class Reset(BaseToolParam):
    pass


class Commands(ToolCard):
    """A card whose one command is whatever the test puts in ``COMMAND``."""

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return {Reset: COMMAND[0]}


COMMAND: list[Callable[..., Any]] = []


def test_a_command_without_a_docstring_is_refused_naming_the_card_and_the_fix() -> None:
    """As for a tool: ``/help`` would list a bare name, so the wiring refuses it."""

    def reset(name: str) -> str:
        return name

    COMMAND[:] = [reset]
    factory = ToolFactory([Commands()])
    for hands_out in (factory.get_command_registry, factory.get_commands):
        with pytest.raises(TypeError) as info:
            hands_out()
        message = str(info.value)
        assert message.startswith("Commands.get_commands(): command /reset has no docstring: ")
        assert "write one" in message and "/help" in message and "\n" not in message
    reset.__doc__ = "Reset the tally ``name``."
    assert factory.get_command_registry().names() == ["reset"]


def test_instructions_alone_document_a_tool() -> None:
    class Lookup(BaseToolParam):
        pass

    class Documented(ToolCard):
        lookup: Lookup | bool = Lookup(instructions="Look a key up.")

        def get_tools(self) -> list[Callable[..., Any]]:
            def lookup(key: str) -> str:
                return key

            return [lookup]

    [tool] = ToolFactory([Documented()]).get_tools()
    assert tool.__doc__ == "Look a key up."


def test_a_parameter_without_a_type_hint_is_refused() -> None:
    def lookup(key, limit: int = 3) -> str:  # type: ignore[no-untyped-def]
        """Look a key up."""
        return str(key)

    with pytest.raises(TypeError, match=r"tool 'lookup': parameter 'key' has no type hint"):
        tools_of(lookup)


def test_star_args_are_refused() -> None:
    def lookup(*keys: str) -> str:
        """Look keys up."""
        return ",".join(keys)

    with pytest.raises(TypeError, match=r"tool 'lookup' takes \*keys: give it named parameters"):
        tools_of(lookup)


def test_a_plain_exception_becomes_the_retry_exception() -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        return {"a": "1"}[key]

    [tool] = tools_of(lookup)
    with pytest.raises(RetryError, match=r"^lookup failed \(KeyError: 'zz'\)\. Try again") as info:
        tool("zz")
    assert isinstance(info.value.__cause__, RetriableError)
    [tool] = tools_of(lookup, retry=None)  # no framework: the tool layer's own signal
    with pytest.raises(RetriableError, match=r"^lookup failed \(KeyError"):
        tool("zz")


def test_an_async_tool_is_guarded_the_same_way() -> None:
    async def fetch(url: str) -> str:
        """Fetch a page."""
        raise ConnectionResetError("peer went away")

    [tool] = tools_of(fetch)
    with pytest.raises(RetryError, match=r"^fetch failed \(ConnectionResetError: peer went away"):
        asyncio.run(tool("http://x"))


@pytest.mark.parametrize(
    "signal",
    [
        ModelRetry("again"),
        ToolFailed("no such row"),
        CallDeferred(metadata={"job": 7}),
        ApprovalRequired(metadata={"why": "spends money"}),
        ToolObserverGone("gone"),
        ToolNotWiredError("not wired"),
    ],
    ids=[
        "ModelRetry",
        "ToolFailed",
        "CallDeferred",
        "ApprovalRequired",
        "ToolObserverGone",
        "ToolNotWiredError",
    ],
)
def test_framework_signals_pass_through(signal: Exception) -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        raise signal

    [tool] = tools_of(lookup)
    with pytest.raises(type(signal)) as info:
        tool("a")
    assert info.value is signal  # unchanged: same object, metadata and all
    [tool] = tools_of(lookup, retry=ModelRetry)  # as the agent wires it
    with pytest.raises(type(signal)) as info:
        tool("a")
    assert info.value is signal


def test_a_card_used_unwired_propagates_its_error_never_a_retry() -> None:
    """Seed 004: RuntimeError (uninitialised state) — let propagate: a programming error,
    not an LLM error. A factory built without an observer wires nothing."""
    [tool, *_] = ToolFactory([PlanningTool()], retry_exception=RetryError).get_tools()
    with pytest.raises(ToolNotWiredError, match="PlanningTool has no observer"):
        tool(1)
    assert issubclass(ToolNotWiredError, RuntimeError)


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (
            ModelHTTPError(503, "gpt-nested", body={"error": "overloaded"}),
            "ModelHTTPError: status_code: 503, model_name: gpt-nested",
        ),
        (UserError("nested agent misconfigured"), "UserError: nested agent misconfigured"),
        (UnexpectedModelBehavior("empty reply"), "UnexpectedModelBehavior: empty reply"),
    ],
    ids=["ModelHTTPError", "UserError", "UnexpectedModelBehavior"],
)
def test_other_pydantic_ai_errors_are_failures(error: Exception, shown: str) -> None:
    """A tool running a nested agent: its model/usage errors are the tool's failure."""

    def summarise(text: str) -> str:
        """Summarise a text with a nested agent."""
        raise error

    [tool] = tools_of(summarise, retry=ModelRetry)
    with pytest.raises(ModelRetry) as info:
        tool("x")
    assert info.value.message.startswith(f"summarise failed ({shown}")
    assert info.value.__cause__ is not None and info.value.__cause__.__cause__ is error


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise ValueError("my __str__ is broken too")


def test_an_exception_that_cannot_be_printed_still_becomes_the_retry() -> None:
    def lookup(key: str) -> str:
        """Look a key up."""
        raise UnprintableError()

    [tool] = tools_of(lookup)
    with pytest.raises(
        RetryError, match=r"^lookup failed \(UnprintableError \(unprintable\)\)\. Try"
    ):
        tool("a")


def test_what_the_model_reads_carries_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ConnectionError(
            "GET https://api.x.com/v1?api_key=SECRET123 failed; Authorization: Bearer SECRET456"
        )

    [tool] = tools_of(fetch)
    with pytest.raises(RetryError) as info:
        tool("https://api.x.com/v1")
    told = str(info.value)
    assert "SECRET" not in told
    assert "https://api.x.com/…" in told
    assert "SECRET123" in caplog.text and "SECRET456" in caplog.text  # the log has it all


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://u:SECRETpw@db.x.com:5432/app", "https://db.x.com:5432/…"),
        ("token=SECRET1&other=ok", "token=…&other=ok"),
        ('{"api_key": "SECRET2", "apiKey": "SECRET3"}', '{"api_key": "…", "apiKey": "…"}'),
        ("Incorrect key: sk-proj-SECRET4abcdef", "Incorrect key: …"),
        ("x-api-key: SECRET5, retry", "x-api-key: …, retry"),
        ("KeyError in row 'zz'", "KeyError in row 'zz'"),
        ("see https://example.com", "see https://example.com"),
    ],
)
def test_redact(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_describe_exception() -> None:
    assert describe_exception(KeyError("zz")) == "KeyError: 'zz'"
    assert describe_exception(RuntimeError()) == "RuntimeError"
    assert describe_exception(UnprintableError()) == "UnprintableError (unprintable)"
    assert describe_exception(ValueError("v" * 500)).endswith("… (500 characters)")


def test_a_builtin_is_accepted_as_it_is() -> None:
    [tool] = tools_of(len)
    assert tool([1, 2]) == 2


@pytest.mark.parametrize(
    ("returned", "read"),
    [
        ({"caf\ud800": "x"}, {"caf\ufffd": "x"}),
        ([{"d\udce9": 1}, "ok"], [{"d\ufffd": 1}, "ok"]),
    ],
)
def test_a_return_with_a_lone_surrogate_in_a_key_is_made_sound(returned: Any, read: Any) -> None:
    """pydantic's Python-to-JSON mode refuses such a key outright (a UnicodeEncodeError):
    it was raised out of the tool as a bug, not cleaned."""
    assert check_return(returned) == read
