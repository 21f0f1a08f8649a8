"""Shared fixtures for the example tests: an actor system and a bare team."""

from ..agent.conftest import model_key  # noqa: F401  (shared fixtures)
from ..core.conftest import system, team  # noqa: F401
