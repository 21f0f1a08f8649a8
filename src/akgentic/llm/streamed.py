"""A streamed answer is the model's answer only once the provider said it was finished.

A provider ends every streamed response with its finish reason (``stop``, ``tool_calls``,
``length``...). A stream that ends without one was cut: an HTTP/1.0 server or a proxy
closed the connection mid-stream, and the HTTP client, seeing a clean end of the body,
raised nothing. Read as a whole answer, the partial text (or a tool call with half its
arguments) would become the agent's reply. The contract here:

- :class:`FinishedResponses` wraps a model (:meth:`FinishedResponses.around`; each of a
  ``FallbackModel``'s models is wrapped by ``build_model``, so each one's cut is its
  own). Asked plainly (``request``) while a :class:`StreamListener` listens
  (:func:`listening`: the agent publishing text as it arrives), it streams the answer,
  hands each event to the listener, and returns the finished response.
- A stream that breaks off once its answer has begun (a ``ModelConnectionError`` while it
  is read: an OpenAI(-compatible) model is built to raise one for a stream ending without
  its finish reason, ``providers.FINISHED_STREAMS``), or a provider model's (its ``system``
  one of :data:`FINISHING_SYSTEMS`) stream that ends with none, is asked again, up to
  :data:`CUT_OFF_ATTEMPTS` times in all (as the provider's SDK retries a dropped
  connection), the listener told (``restarted``) after each cut attempt (and after any
  other failure once the answer began: a fallback's answer may follow). When every
  attempt was cut, it raises :class:`ResponseCutOffError`, a ``ModelConnectionError``: a
  ``FallbackModel`` moves on to the next of ``fallback_models`` for it as for any failed
  request, and ``describe_model_failure`` says it in one line.
- Offline models (scripted, ``TestModel``, a registered ``FunctionModel``) set no finish
  reason on a stream: they are never checked, nor is a model of another provider.
- Asked to stream (``request_stream``: the stream is the caller's to read), or asked
  plainly with nobody listening, it passes the request through unchanged: a plain
  (non-streamed) answer is a whole JSON body, and one cut short fails to parse.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from pydantic_ai.exceptions import ModelConnectionError
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartStartEvent,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

__all__ = [
    "CUT_OFF_ATTEMPTS",
    "FINISHING_SYSTEMS",
    "FinishedResponses",
    "ResponseCutOffError",
    "StreamListener",
    "can_stream",
    "listening",
    "reaches_listeners",
]

CUT_OFF_ATTEMPTS = 3
"""How many times one model is asked when its streams keep ending without a finish reason."""

FINISHING_SYSTEMS = frozenset({"openai", "anthropic", "google-gla", "google-vertex"})
"""The ``Model.system`` of the providers whose streamed responses always end with a finish
reason: OpenAI's API and every OpenAI-compatible server (Ollama, vLLM, llama.cpp) speak
as ``openai``."""


class StreamListener(Protocol):
    """Who reads a streamed answer as it arrives (the agent's run events)."""

    def model_event(self, event: ModelResponseStreamEvent) -> None:
        """One event of the response being streamed."""

    def restarted(self) -> None:
        """The response streamed so far is no answer (cut off, or failed): whatever
        follows is a new answer (asked again, or a fallback's), not the rest of that one."""


_listener: ContextVar[StreamListener | None] = ContextVar("akgentic_stream_listener", default=None)


@contextmanager
def listening(listener: StreamListener) -> Iterator[None]:
    """Within: a plain request to a :class:`FinishedResponses` streams to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class ResponseCutOffError(ModelConnectionError):
    """A model's streamed responses ended without the provider's finish reason, every
    attempt: the connection was closed mid-stream. A ``ModelConnectionError``, so it is
    fallen back from (``fallback_models``) like any transport failure."""

    @classmethod
    def after(cls, model_name: str, attempts: int) -> ResponseCutOffError:
        return cls(
            model_name,
            f"the streamed response ended without a finish reason, {attempts} time(s) in a row "
            f"(the connection was closed mid-stream, or the server sends none)",
        )


def can_stream(model: Model) -> bool:
    """Whether ``model`` answers streamed requests (a FunctionModel only with a stream
    function: it has the method either way)."""
    if type(model).request_stream is Model.request_stream:
        return False
    return not (isinstance(model, FunctionModel) and model.stream_function is None)


def reaches_listeners(model: Model) -> bool:
    """Whether a plain request to ``model`` streams to the listener (:func:`listening`):
    every model it may end at, through wrappers and fallbacks, is a
    :class:`FinishedResponses`."""
    if isinstance(model, FinishedResponses):
        return True
    if isinstance(model, FallbackModel):
        return all(reaches_listeners(m) for m in model.models)
    if isinstance(model, WrapperModel):
        return reaches_listeners(model.wrapped)
    return False


def _unfinished(response: ModelResponse) -> bool:
    """Whether a streamed ``response`` ended without the provider's finish reason: none
    mapped, none as the provider sent it (an unusual one pydantic-ai does not map is still
    a finish), and not paused by the provider to be continued (``suspended``)."""
    raw = (response.provider_details or {}).get("finish_reason")
    return response.finish_reason is None and not raw and response.state != "suspended"


class FinishedResponses(WrapperModel):
    """``wrapped``, whose streamed answers count only once finished (module docstring)."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self.finishes = wrapped.system in FINISHING_SYSTEMS
        """Its provider ends every stream with a finish reason: one without was cut."""

    @classmethod
    def around(cls, model: Model) -> Model:
        """``model`` if a plain request to it reaches the listener already
        (:func:`reaches_listeners`), else ``model`` wrapped."""
        return model if reaches_listeners(model) else cls(model)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        listener = _listener.get()
        if listener is None:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        attempt = 1
        while True:
            opened: list[bool] = []
            try:
                response = await self._streamed(
                    messages, model_settings, model_request_parameters, listener, opened
                )
            except ModelConnectionError as exc:
                if not opened:  # it broke before its answer began: the SDK retried that
                    raise
                broke: ModelConnectionError | None = exc
            except Exception:
                if opened:  # what it streamed is no answer: a fallback's may follow
                    listener.restarted()
                raise
            else:
                if not self.finishes or not _unfinished(response):
                    return response
                broke = None
            listener.restarted()
            if attempt >= CUT_OFF_ATTEMPTS:
                raise ResponseCutOffError.after(self.wrapped.model_name, attempt) from broke
            attempt += 1

    async def _streamed(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        listener: StreamListener,
        opened: list[bool],
    ) -> ModelResponse:
        """The answer, streamed to ``listener`` event by event, returned once the stream
        ends (``opened`` gets an entry once it began); asked plainly when the model cannot
        stream, its parts going to ``listener`` when it answers."""
        model = self.wrapped
        if not can_stream(model):
            response = await model.request(messages, model_settings, model_request_parameters)
            for index, part in enumerate(response.parts):
                listener.model_event(PartStartEvent(index=index, part=part))
            return response
        async with model.request_stream(
            messages, model_settings, model_request_parameters
        ) as stream:
            opened.append(True)
            events: AsyncIterator[ModelResponseStreamEvent] = aiter(stream)
            async for event in events:
                listener.model_event(event)
            return stream.get()
