"""ToolArgsAdvice: a tool call whose arguments are not JSON is sent back with what to do.

pydantic-ai sends a tool call whose arguments do not parse back to the model as a
validation error (``json_invalid``: "EOF while parsing an object"), which a model that
cut its arguments short, or a small one that writes them loosely, does not read as an
instruction. This capability sends instead one line saying what happened and what to
do: call the tool again with its arguments as one complete JSON object matching its
parameters. It is a retry like any other (it counts toward the tool's retries), and when
the model keeps failing, the turn's line (``llm.describe_model_failure``) tells the person
to use a model that supports tool calls. Any other validation error goes on unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import RunContext, ToolDefinition

from akgentic.llm import invalid_json

__all__ = ["ToolArgsAdvice"]


class ToolArgsAdvice(AbstractCapability[Any]):
    """Turns a tool call's unparseable arguments into a retry saying what to send."""

    async def on_tool_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: ValidationError | ModelRetry,
    ) -> Any:
        detail = invalid_json(error)
        if detail is None:
            raise error
        raise ModelRetry(
            f"The arguments of your call to {call.tool_name} are not valid JSON ({detail}). "
            f"Call {call.tool_name} again with its arguments as one complete JSON object "
            f"that matches its parameters."
        ) from error

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
