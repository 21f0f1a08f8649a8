"""Shared fixtures for the example tests: an actor system and a bare team."""

from ..core.conftest import system, team  # noqa: F401  (shared fixtures)
