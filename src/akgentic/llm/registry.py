"""Models registered by name: your own pydantic-ai ``Model`` (a ``FunctionModel``, a
``TestModel``), reached from any config as the roster key ``registered:<name>``.

A config is data — it is stored with the team, sent to other processes, written in YAML —
so it cannot hold a model object. What it holds is a name; this registry maps the name to
the model in the process that runs the team. That is the one way to run an agent on a model
you build in Python: the same key works in an ``AgentConfig`` built in Python, in a YAML
team card, in ``--model``, in ``TeamManager.create_team(model=...)`` and in
``/switch_model``.

The contract:

- :func:`register_model` ``(name, model)`` registers ``model`` under ``name``; registering a
  name again replaces it. ``model`` is either a pydantic-ai ``Model``, used as it is by every
  agent that names it, or a factory ``(role) -> Model`` called with the agent's role each
  time a model is built: when the team is checked at creation or resume, when the agent
  starts, when it switches to this model. A factory gives each agent a model of its own, or
  each role its own answers.
- It returns a :class:`Registration`, which :meth:`~Registration.unregister` s the name — or
  does so on leaving a ``with`` block — unless it has been registered again since.
- Only the name is ever stored: a team that names a registered model is resumed where the
  name is registered again. Otherwise the resume fails before any member starts (a
  ``ResumeError`` naming the member and the registered names) and the stored team is left
  unchanged; resume with ``model=`` (``--model``) to put it on another model instead.
- The registry belongs to this process. A team placed in another process (``--placement
  ray``) sees the names registered there, not here.
- An unknown name is an :class:`UnknownRegisteredModelError`, a ``ValueError`` of one line
  that lists the registered names.
- The ``ModelConfig`` of a registered model takes no ``base_url``, ``api_key_env``,
  ``temperature`` or ``max_tokens``: the model is built whole by you. ``context_length``
  (compaction) and ``fallback_models`` apply as to any model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

from pydantic_ai.models import Model

from akgentic.core.error_pickle import reduce_by_fields

__all__ = [
    "REGISTERED_PROVIDER",
    "ModelFactory",
    "Registration",
    "UnknownRegisteredModelError",
    "register_model",
    "registered_model",
    "registered_models",
]

REGISTERED_PROVIDER = "registered"
"""The provider of a registered model's roster key: ``registered:<name>``."""

ModelFactory = Callable[[str | None], Model]
"""Builds a model for an agent of the given role (``None``: no role)."""

_lock = threading.Lock()
_models: dict[str, tuple[Model | ModelFactory, Registration]] = {}


class UnknownRegisteredModelError(ValueError):
    """No model is registered under a name a config uses; the message lists those that are."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        listing = ", ".join(known) if known else "none"
        super().__init__(
            f"model '{REGISTERED_PROVIDER}:{name}': no model is registered as {name!r} "
            f"(registered: {listing}); call akgentic.llm.register_model({name!r}, model) in "
            f"the process that runs the team"
        )


class Registration:
    """One :func:`register_model` call: ends it with :meth:`unregister` or a ``with`` block."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def key(self) -> str:
        """The roster key that names this model: ``registered:<name>``."""
        return f"{REGISTERED_PROVIDER}:{self.name}"

    def unregister(self) -> None:
        """Forget the name, unless it was registered again since (that one stays)."""
        with _lock:
            entry = _models.get(self.name)
            if entry is not None and entry[1] is self:
                del _models[self.name]

    def __enter__(self) -> Registration:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.unregister()


def register_model(name: str, model: Model | ModelFactory) -> Registration:
    """Register ``model`` (a pydantic-ai ``Model``, or a factory ``(role) -> Model``) as
    ``registered:<name>``; see the module docstring. ``ValueError`` for a name a roster
    key cannot carry, ``TypeError`` for something that is neither a model nor callable."""
    if not name or name != name.strip() or "," in name:
        raise ValueError(
            f"model name {name!r} cannot be a roster key: use a non-empty name without "
            f"surrounding spaces or commas, e.g. 'my-scripted'"
        )
    if not isinstance(model, Model) and not callable(model):
        raise TypeError(
            f"register_model({name!r}, ...) takes a pydantic-ai Model or a factory "
            f"(role) -> Model, not {type(model).__name__}"
        )
    registration = Registration(name)
    with _lock:
        _models[name] = (model, registration)
    return registration


def registered_models() -> list[str]:
    """The registered names, sorted."""
    with _lock:
        return sorted(_models)


def registered_model(name: str, role: str | None = None) -> Model:
    """The model registered as ``name`` for an agent of ``role`` (a factory is called);
    :class:`UnknownRegisteredModelError` when there is none."""
    with _lock:
        entry = _models.get(name)
        known = sorted(_models)
    if entry is None:
        raise UnknownRegisteredModelError(name, known)
    model = entry[0]
    if isinstance(model, Model):
        return model
    built = model(role)
    if not isinstance(built, Model):
        raise TypeError(
            f"the factory registered as {name!r} returned {type(built).__name__}, "
            f"not a pydantic-ai Model"
        )
    return built
