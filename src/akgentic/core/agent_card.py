"""AgentCard: a serializable profile from which an agent can be hired."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator, model_validator

from akgentic.core.agent_config import BaseConfig
from akgentic.core.excerpt import excerpt
from akgentic.core.serialization import SerializableModel, model_path

__all__ = ["AgentCard", "agent_class_problem"]


def _undefined(path: object) -> str:
    return (
        f"agent_class {excerpt(path)} is not defined in this process: import the module "
        f"that defines it first (a YAML team card lists it under imports)"
    )


def agent_class_problem(path: str) -> str | None:
    """Why no actor class can be found under ``path`` (never imports), or None."""
    from akgentic.core.agent import Akgent, actor_class_for

    try:
        actor_class_for(path)
    except LookupError:
        module, _, name = path.rpartition(".")
        found = getattr(sys.modules.get(module), name, None) if module else None
        if isinstance(found, type) and issubclass(found, Akgent):  # a re-export's path
            return (
                f"agent_class {excerpt(path)} names {found.__name__} by another module's "
                f"path: give the path of the module that defines it, {model_path(found)}"
            )
        if found is not None:  # defined, and not an actor class: importing will not help
            return (
                f"agent_class {excerpt(path)} is not an Akgent class: name a subclass of "
                f"akgentic.core.Akgent (in a team card, akgentic.agent.agent.BaseAgent by "
                f"default)"
            )
        return _undefined(path)
    return None


class AgentCard(SerializableModel):
    """A role the team knows how to staff.

    ``agent_class`` is the import path of an ``Akgent`` subclass (a class may be
    given; it is stored as its path). Resolving it never imports a module: the class
    must have been defined in this process (see :meth:`get_agent_class`).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    role: str = Field(description="The role: what the member does (Manager, Researcher).")
    description: str = Field(default="", description="One line on the role, for the roster.")
    skills: list[str] = Field(default_factory=list, description="Labels for what it is good at.")
    agent_class: str = Field(
        description="Import path of its Akgent class (in a team card: BaseAgent by default)."
    )
    config: BaseConfig = Field(
        default_factory=BaseConfig,
        description="The agent class's config (for BaseAgent: an AgentConfig).",
    )
    routes_to: list[str] = Field(
        default_factory=list, description="Roles it may hand work to, for routing hints."
    )

    @field_validator("agent_class", mode="before")
    @classmethod
    def _class_to_path(cls, value: Any) -> Any:
        if isinstance(value, type):
            return model_path(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _config_of_the_agent_class(cls, data: Any) -> Any:
        """A config given as data is validated by the agent class's own config class.

        An omitted config is that class's defaults, as ``config: {}`` is — when the class
        is defined (a card may name one defined later): left to the field's default, it
        was a plain ``BaseConfig``, which ``BaseAgent`` refused only as the member
        started, after its team was created and stored."""
        if not isinstance(data, dict):
            return data
        omitted = "config" not in data
        if not omitted and not isinstance(data["config"], dict):
            return data
        agent_class = data.get("agent_class")
        path = model_path(agent_class) if isinstance(agent_class, type) else agent_class
        if not isinstance(path, str):
            return data
        from akgentic.core.agent import actor_class_for

        try:
            config_class = actor_class_for(path).config_class
        except LookupError:
            if omitted:  # nothing to read yet: the team card names the missing class
                return data
            # config given as data needs its class to be read: say which class is missing
            # rather than report the fields the base config does not know
            raise ValueError(_undefined(path)) from None
        return {**data, "config": config_class.model_validate(data.get("config", {}))}

    def agent_class_problem(self) -> str | None:
        """Why :meth:`get_agent_class` would fail, or None. A card alone may name a class
        defined later; a team card checks its members and profiles with this."""
        return agent_class_problem(self.agent_class)

    def get_agent_class(self) -> type[Any]:
        """The ``Akgent`` subclass named by ``agent_class``.

        Raises ``LookupError`` when no such actor class has been defined in this
        process.
        """
        from akgentic.core.agent import actor_class_for

        return actor_class_for(self.agent_class)

    def get_config_copy(self) -> BaseConfig:
        """A fresh copy of the config, for one hire."""
        return self.config.model_copy(deep=True)
