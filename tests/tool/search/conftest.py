"""Search fixtures: the shared actor-system fixtures for the agent test."""

from ...core.conftest import system, team  # noqa: F401  (shared fixtures)
