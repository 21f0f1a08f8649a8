"""AgentCard: a serializable profile from which an agent can be hired."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator, model_validator

from akgentic.core.agent_config import BaseConfig
from akgentic.core.serialization import SerializableModel, model_path

__all__ = ["AgentCard"]


class AgentCard(SerializableModel):
    """A role the team knows how to staff.

    ``agent_class`` is the import path of an ``Akgent`` subclass (a class may be
    given; it is stored as its path). Resolving it never imports a module: the class
    must have been defined in this process (see :meth:`get_agent_class`).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    role: str
    description: str = ""
    skills: list[str] = Field(default_factory=list)
    agent_class: str
    config: BaseConfig = Field(default_factory=BaseConfig)
    routes_to: list[str] = Field(default_factory=list)

    @field_validator("agent_class", mode="before")
    @classmethod
    def _class_to_path(cls, value: Any) -> Any:
        if isinstance(value, type):
            return model_path(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _config_of_the_agent_class(cls, data: Any) -> Any:
        """A config given as data is validated by the agent class's own config class."""
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            return data
        agent_class = data.get("agent_class")
        path = model_path(agent_class) if isinstance(agent_class, type) else agent_class
        if not isinstance(path, str):
            return data
        from akgentic.core.agent import actor_class_for

        try:
            config_class = actor_class_for(path).config_class
        except LookupError:
            return data  # reported by get_agent_class() when the card is used
        return {**data, "config": config_class.model_validate(data["config"])}

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
