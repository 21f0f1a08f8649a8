"""No test here reads the developer's own AKGENTIC_SKILLS_DIR."""

from __future__ import annotations

import pytest

from akgentic.tool.skill import SKILLS_DIR_ENV


@pytest.fixture(autouse=True)
def _no_skills_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SKILLS_DIR_ENV, raising=False)
