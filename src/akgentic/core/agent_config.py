"""Actor configuration."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel

__all__ = ["AgentConfig", "BaseConfig"]


class BaseConfig(SerializableModel):
    """What an actor is created with: its address ``name`` and its ``role``.

    Subclasses add their own fields. Unknown fields are an error naming the field, so
    a misspelt option never vanishes silently. ``createActor`` copies the config per
    instance; an actor never shares a config object with its creator.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = Field(
        default="",
        description="The actor's address name (@Writer); in a team card, empty means @ and "
        "its role.",
    )
    role: str = Field(default="", description="What the actor does in its team (Writer).")


AgentConfig = BaseConfig
"""Alias of :class:`BaseConfig`, the name agent code usually reads."""
